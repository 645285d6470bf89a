// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_odp -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * On-demand paging MRs (IBV_ACCESS_ON_DEMAND): nothing pinned, pages
 * faulted in as transfers reach them, and an MR that follows the process's
 * address space. The region is fresh anonymous memory the process has not
 * touched, so the first access of each page is a fault. Every check is
 * named and fails saying what differed:
 *
 *   caps        odp_caps: IBV_ODP_SUPPORT and IMPLICIT; RC SEND, RECV,
 *               WRITE, READ, ATOMIC and SRQ_RECV; UC SEND, RECV, WRITE;
 *               UD SEND, RECV
 *   write       RDMA WRITE into untouched pages lands (read back through
 *               the mapping); odp_page_faults grows
 *   read        RDMA READ of untouched pages returns zeros, of written
 *               ones their bytes
 *   local-sge   the ODP MR as the source of a WRITE and the target of a
 *               READ
 *   send        a SEND into a receive buffer in the ODP MR
 *   atomic      fetch-and-add and compare-and-swap on a word of it
 *   advise      ibv_advise_mr(PREFETCH_WRITE, FLUSH) faults a range in
 *               (odp_prefetches grows), so a WRITE there then needs no
 *               fault; an lkey of an MR that is not ODP: EINVAL
 *   unmap       after munmap() of part of the region (odp_invalidations
 *               grows) a WRITE there fails with a remote access error and
 *               nothing else changes; once memory is mapped there again,
 *               a WRITE lands in the new pages
 *   implicit    an implicit ODP MR (ibv_reg_mr(pd, NULL, SIZE_MAX)): RDMA
 *               WRITE at the address of fresh memory lands there, across a
 *               2 MiB boundary; a READ returns it; an atomic works; at an
 *               address nothing is mapped at: remote access error
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire_rc.h"

#define LEN	(64 * 1024)
#define RACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static const char *dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct t_path path;
static uint8_t *odp;		/* the region */
static struct ibv_mr *mr;

/* A port counter (hw_counters), read after the core's 10 ms cache. */
static uint64_t counter(const char *name)
{
	char p[256];
	unsigned long long v = 0;
	FILE *f;

	usleep(30 * 1000);
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(p, "r");
	if (!f)
		t_fatal("open %s: %s", p, t_errname(errno));
	if (fscanf(f, "%llu", &v) != 1)
		t_fatal("read %s", p);
	fclose(f);
	return v;
}

/* One atomic on p's requester at raddr of mr; the old value, or fails. */
static uint64_t atomic_op(struct t_rc_pair *p, const char *check, int cas, uint64_t raddr,
			  uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)p->lbuf, 8, p->lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD,
		.wr = { .atomic = { .remote_addr = raddr, .compare_add = cmp_add,
				    .swap = swap, .rkey = mr->rkey } },
	}, *bad;
	struct ibv_wc wc;
	uint64_t old;

	if (ibv_post_send(p->a, &wr, &bad))
		t_fatal("%s: post atomic: %s", check, t_errname(errno));
	if (!t_poll_one(p->cq, &wc, t_now() + 20))
		t_fail("%s: no CQE for the atomic within 20 s", check);
	else if (wc.status != IBV_WC_SUCCESS)
		t_fail("%s: atomic: %s", check, ibv_wc_status_str(wc.status));
	memcpy(&old, p->lbuf, 8);
	return old;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct t_rc_opts opt;
	uint64_t iova;
	int ret;

	ctx = t_rc_start("scire_odp", argc, argv, 1, &opt, &path);
	dev = opt.dev;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));

	CHECK("caps") {
		struct ibv_device_attr_ex dx;
		struct ibv_mr *imr;
		uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			      IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
			      IBV_ODP_SUPPORT_SRQ_RECV;
		uint32_t uc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE;
		uint32_t ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;

		ret = ibv_query_device_ex(ctx, NULL, &dx);
		if (ret)
			t_fatal("query_device_ex: %s", t_errname(ret));
		if (!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
		    !(dx.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT))
			t_fail("caps: general_caps %#llx, expected IBV_ODP_SUPPORT and IMPLICIT",
			       (unsigned long long)dx.odp_caps.general_caps);
		if ((dx.odp_caps.per_transport_caps.rc_odp_caps & rc) != rc ||
		    (dx.odp_caps.per_transport_caps.uc_odp_caps & uc) != uc ||
		    (dx.odp_caps.per_transport_caps.ud_odp_caps & ud) != ud)
			t_fail("caps: rc %#x uc %#x ud %#x, expected at least %#x %#x %#x",
			       dx.odp_caps.per_transport_caps.rc_odp_caps,
			       dx.odp_caps.per_transport_caps.uc_odp_caps,
			       dx.odp_caps.per_transport_caps.ud_odp_caps, rc, uc, ud);
		imr = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_WRITE);
		if (imr) {
			t_fail("caps: implicit ODP with remote write but no local write registered");
			ibv_dereg_mr(imr);
		}
	}

	odp = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (odp == MAP_FAILED)
		t_fatal("mmap: %s", t_errname(errno));
	mr = ibv_reg_mr(pd, odp, LEN, RACC | IBV_ACCESS_ON_DEMAND);
	if (!mr)
		t_fatal("reg_mr of %d bytes with IBV_ACCESS_ON_DEMAND: %s", LEN, t_errname(errno));
	iova = (uintptr_t)odp;

	CHECK("write") {
		uint64_t faults = counter("odp_page_faults");
		struct t_rc_pair p;

		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, page);
		/* Straddles pages 0 and 1, neither touched yet. */
		t_rc_rdma(&p, "write", 1, (uintptr_t)p.lbuf, p.lmr->lkey, iova + page - 1000,
			  mr->rkey, 3000, IBV_WC_SUCCESS);
		if (memcmp(odp + page - 1000, p.lbuf, 3000))
			t_fail("write: the bytes in the mapping are not those written");
		if (counter("odp_page_faults") <= faults)
			t_fail("write: odp_page_faults did not grow (%llu)",
			       (unsigned long long)faults);
		t_rc_pair_free(&p);
	}
	CHECK("read") {
		struct t_rc_pair p;
		uint8_t zero[2048] = { 0 };

		t_rc_pair_new(&p, pd, &path);
		memset(p.lbuf, 0xa5, 2048);
		t_rc_rdma(&p, "read", 0, (uintptr_t)p.lbuf, p.lmr->lkey, iova + 4 * page, mr->rkey,
			  2048, IBV_WC_SUCCESS);
		if (memcmp(p.lbuf, zero, 2048))
			t_fail("read: READ of untouched pages did not return zeros");
		t_rand_fill(odp + 5 * page, 2048);
		t_rc_rdma(&p, "read", 0, (uintptr_t)p.lbuf, p.lmr->lkey, iova + 5 * page, mr->rkey,
			  2048, IBV_WC_SUCCESS);
		if (memcmp(p.lbuf, odp + 5 * page, 2048))
			t_fail("read: READ returned other bytes than the mapping holds");
		t_rc_pair_free(&p);
	}
	CHECK("local-sge") {
		static uint8_t peer[4096];
		struct ibv_mr *pmr;
		struct t_rc_pair p;

		pmr = t_reg_mr(pd, peer, sizeof(peer), RACC, "local-sge");
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(odp + 6 * page, 2048);
		t_rc_rdma(&p, "local-sge", 1, iova + 6 * page, mr->lkey, (uintptr_t)peer,
			  pmr->rkey, 2048, IBV_WC_SUCCESS);
		if (memcmp(peer, odp + 6 * page, 2048))
			t_fail("local-sge: the WRITE from the ODP MR delivered other bytes");
		t_rand_fill(peer, sizeof(peer));
		t_rc_rdma(&p, "local-sge", 0, iova + 7 * page + 100, mr->lkey, (uintptr_t)peer,
			  pmr->rkey, 4096, IBV_WC_SUCCESS);
		if (memcmp(odp + 7 * page + 100, peer, 4096))
			t_fail("local-sge: the READ into the ODP MR left other bytes");
		t_rc_pair_free(&p);
		if ((ret = ibv_dereg_mr(pmr)))
			t_fatal("local-sge: dereg_mr: %s", t_errname(ret));
	}
	CHECK("send") {
		struct ibv_sge rsge = { iova + 9 * page - 500, 1500, mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 11, .sg_list = &rsge, .num_sge = 1 }, *rbad;
		struct ibv_sge ssge;
		struct ibv_send_wr swr = {
			.wr_id = 12, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		}, *sbad;
		struct ibv_wc wc;
		struct t_rc_pair p;
		int i;

		t_rc_pair_new(&p, pd, &path);
		ssge = (struct ibv_sge){ (uintptr_t)p.lbuf, 1500, p.lmr->lkey };
		t_rand_fill(p.lbuf, 1500);
		if (ibv_post_recv(p.b, &rwr, &rbad) || ibv_post_send(p.a, &swr, &sbad))
			t_fatal("send: post: %s", t_errname(errno));
		for (i = 0; i < 2; i++) {
			if (!t_poll_one(p.cq, &wc, t_now() + 20)) {
				t_fail("send: %d of 2 CQEs within 20 s", i);
				break;
			}
			if (wc.status != IBV_WC_SUCCESS)
				t_fail("send: CQE of wr_id %llu: %s", (unsigned long long)wc.wr_id,
				       ibv_wc_status_str(wc.status));
		}
		if (memcmp(odp + 9 * page - 500, p.lbuf, 1500))
			t_fail("send: the receive buffer in the ODP MR holds other bytes");
		t_rc_pair_free(&p);
	}
	CHECK("atomic") {
		struct t_rc_pair p;
		uint64_t *w = (uint64_t *)(odp + 10 * page + 64), old;

		t_rc_pair_new(&p, pd, &path);
		old = atomic_op(&p, "atomic", 0, (uintptr_t)w, 5, 0);
		if (old != 0 || *w != 5)
			t_fail("atomic: fetch-and-add 5 on an untouched word: old %llu, now %llu",
			       (unsigned long long)old, (unsigned long long)*w);
		old = atomic_op(&p, "atomic", 1, (uintptr_t)w, 5, 77);
		if (old != 5 || *w != 77)
			t_fail("atomic: compare-and-swap 5 -> 77: old %llu, now %llu",
			       (unsigned long long)old, (unsigned long long)*w);
		t_rc_pair_free(&p);
	}
	CHECK("advise") {
		struct ibv_sge sge = { iova + 12 * page, 2 * page, mr->lkey };
		uint64_t faults, pre = counter("odp_prefetches");
		static uint8_t plain[4096];
		struct ibv_mr *pmr;
		struct t_rc_pair p;

		ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (ret)
			t_fail("advise: PREFETCH_WRITE with FLUSH: %s", t_errname(ret));
		if (counter("odp_prefetches") <= pre)
			t_fail("advise: odp_prefetches did not grow");
		faults = counter("odp_page_faults");
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, page);
		t_rc_rdma(&p, "advise", 1, (uintptr_t)p.lbuf, p.lmr->lkey, iova + 12 * page + 10,
			  mr->rkey, 3000, IBV_WC_SUCCESS);
		if (counter("odp_page_faults") != faults)
			t_fail("advise: a WRITE into the prefetched range faulted (%llu -> %llu)",
			       (unsigned long long)faults,
			       (unsigned long long)counter("odp_page_faults"));
		if (memcmp(odp + 12 * page + 10, p.lbuf, 3000))
			t_fail("advise: the WRITE into the prefetched range did not land");
		t_rc_pair_free(&p);
		pmr = t_reg_mr(pd, plain, sizeof(plain), IBV_ACCESS_LOCAL_WRITE, "advise");
		sge = (struct ibv_sge){ (uintptr_t)plain, sizeof(plain), pmr->lkey };
		ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
				    &sge, 1);
		if (ret != EINVAL)
			t_fail("advise: an MR without ON_DEMAND: %s, expected EINVAL",
			       ret ? t_errname(ret) : "success");
		ibv_dereg_mr(pmr);
	}
	CHECK("unmap") {
		uint64_t inval = counter("odp_invalidations");
		uint8_t before[LEN];
		struct t_rc_pair p;
		void *again;

		/*
		 * Pages 14 and 15 go; the rest must not change. The pair comes
		 * first: its buffer's mmap() could take the hole.
		 */
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, page);
		memset(odp + 14 * page, 0x11, 2 * page);
		if (munmap(odp + 14 * page, 2 * page))
			t_fatal("unmap: munmap: %s", t_errname(errno));
		if (counter("odp_invalidations") <= inval)
			t_fail("unmap: odp_invalidations did not grow");
		memcpy(before, odp, 14 * page);
		t_rc_rdma(&p, "unmap", 1, (uintptr_t)p.lbuf, p.lmr->lkey, iova + 14 * page + 8,
			  mr->rkey, 100, IBV_WC_REM_ACCESS_ERR);
		t_rc_pair_free(&p);
		if (memcmp(before, odp, 14 * page))
			t_fail("unmap: a WRITE into the unmapped pages changed the mapped ones");
		again = mmap(odp + 14 * page, 2 * page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (again != odp + 14 * page)
			t_fatal("unmap: mmap again at the hole: %s", t_errname(errno));
		t_rc_pair_new(&p, pd, &path);
		t_rc_rdma(&p, "unmap", 1, (uintptr_t)p.lbuf, p.lmr->lkey, iova + 14 * page + 8,
			  mr->rkey, 100, IBV_WC_SUCCESS);
		if (memcmp(odp + 14 * page + 8, p.lbuf, 100))
			t_fail("unmap: the WRITE after mapping again did not land in the new pages");
		t_rc_pair_free(&p);
	}

	CHECK("implicit") {
		size_t big = 4 << 20;
		struct ibv_mr *imr;
		struct t_rc_pair p;
		uint8_t *mem, *at;
		uint64_t *w;

		/* 4 MiB of fresh memory; the WRITE straddles a 2 MiB boundary. */
		mem = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			t_fatal("implicit: mmap: %s", t_errname(errno));
		at = (uint8_t *)(((uintptr_t)mem + (2 << 20)) & ~(uintptr_t)((2 << 20) - 1)) - 1000;
		imr = ibv_reg_mr(pd, NULL, SIZE_MAX, RACC | IBV_ACCESS_ON_DEMAND);
		if (!imr)
			t_fatal("implicit: reg_mr(NULL, SIZE_MAX, ON_DEMAND): %s", t_errname(errno));
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, page);
		t_rc_rdma(&p, "implicit", 1, (uintptr_t)p.lbuf, p.lmr->lkey, (uintptr_t)at,
			  imr->rkey, 3000, IBV_WC_SUCCESS);
		if (memcmp(at, p.lbuf, 3000))
			t_fail("implicit: the WRITE across the 2 MiB boundary did not land");
		memset(p.lbuf, 0, page);
		t_rc_rdma(&p, "implicit", 0, (uintptr_t)p.lbuf, p.lmr->lkey, (uintptr_t)at,
			  imr->rkey, 3000, IBV_WC_SUCCESS);
		if (memcmp(at, p.lbuf, 3000))
			t_fail("implicit: the READ returned other bytes than memory holds");
		t_rc_pair_free(&p);
		t_rc_pair_new(&p, pd, &path);
		{
			struct ibv_mr *save = mr;

			mr = imr;
			w = (uint64_t *)(mem + 3 * page);
			if (atomic_op(&p, "implicit", 0, (uintptr_t)w, 9, 0) != 0 || *w != 9)
				t_fail("implicit: fetch-and-add 9 on a fresh word: now %llu",
				       (unsigned long long)*w);
			mr = save;
		}
		t_rc_pair_free(&p);
		/*
		 * The last 1 MiB goes; a WRITE there finds nothing mapped. The
		 * pair first: its buffer's mmap() could take the hole.
		 */
		t_rc_pair_new(&p, pd, &path);
		if (munmap(mem + big - (1 << 20), 1 << 20))
			t_fatal("implicit: munmap: %s", t_errname(errno));
		t_rc_rdma(&p, "implicit", 1, (uintptr_t)p.lbuf, p.lmr->lkey,
			  (uintptr_t)mem + big - 4096, imr->rkey, 64, IBV_WC_REM_ACCESS_ERR);
		t_rc_pair_free(&p);
		if ((ret = ibv_dereg_mr(imr)))
			t_fail("implicit: dereg_mr: %s", t_errname(ret));
		munmap(mem, big - (1 << 20));
	}

	if ((ret = ibv_dereg_mr(mr)))
		t_fail("dereg_mr of the ODP MR: %s", t_errname(ret));
	munmap(odp, LEN);
	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	ibv_close_device(ctx);
	return t_checks_done(opt.dev);
}
