// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_rereg -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * ibv_rereg_mr() (IBA 11.2.8.2, Reregister Memory Region) on a user MR,
 * checked from a peer QP with RDMA WRITE and READ. Every check is named and
 * fails saying what differed:
 *
 *   trans       IBV_REREG_MR_CHANGE_TRANSLATION to another buffer: the keys
 *               stay, a WRITE lands in the new buffer and not one byte of the
 *               old one changes, a WRITE at the old address gets a remote
 *               access error, and the MR works as a local SGE on its new
 *               buffer
 *   access      CHANGE_ACCESS dropping REMOTE_WRITE: a WRITE gets a remote
 *               access error and changes nothing, a READ still works;
 *               giving it back makes WRITE work again
 *   access-pin  an MR registered without LOCAL_WRITE (pages pinned
 *               read-only) given LOCAL_WRITE | REMOTE_WRITE: a WRITE lands
 *               in the buffer the process sees
 *   pd          CHANGE_PD to another PD: QPs of the old PD get a remote
 *               access error, QPs of the new one get through; and back
 *   all         translation, PD and access in one call
 *   mw-busy     with a type 1 window bound to the MR, ibv_rereg_mr() fails
 *               and the MR is unchanged; after unbinding it succeeds
 *
 * A remote access error moves the requester to ERR, so every access runs
 * on a fresh pair of connected RC QPs.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <sys/mman.h>

#include "scire_rc.h"

#define BUFLEN	8192

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd_other;
static struct t_path path;
static long page;

/* A buffer and what it should hold. */
struct tbuf {
	uint8_t *p, *snap;
};

static void tbuf_new(struct tbuf *t)
{
	t->p = mmap(NULL, BUFLEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->snap = malloc(BUFLEN);
	if (t->p == MAP_FAILED || !t->snap)
		t_fatal("buffer: %s", t_errname(errno));
	t_rand_fill(t->p, BUFLEN);
	memcpy(t->snap, t->p, BUFLEN);
}

static void tbuf_free(struct tbuf *t)
{
	munmap(t->p, BUFLEN);
	free(t->snap);
}

/* Does the buffer hold what it should? Puts it back if not. */
static void tbuf_check(const char *check, const char *what, struct tbuf *t)
{
	size_t i, first = 0, diff = 0;

	for (i = 0; i < BUFLEN; i++) {
		if (t->p[i] != t->snap[i] && !diff++)
			first = i;
	}
	if (diff)
		t_fail("%s: %s: %zu bytes differ from what they should be, the first at offset %zu",
		       check, what, diff, first);
	memcpy(t->p, t->snap, BUFLEN);
}

/*
 * RDMA WRITE (len random bytes) or READ at addr with rkey, from a fresh
 * pair of QPs of qpd, into or from t (addr must lie in t unless the access
 * is to fail); expect the status. A successful WRITE updates t's snapshot,
 * a READ must return t's bytes. Afterwards t must hold its snapshot.
 */
static void rdma(const char *check, struct ibv_pd *qpd, int write, struct tbuf *t,
		 uint64_t addr, uint32_t rkey, uint32_t len, enum ibv_wc_status expect)
{
	struct t_rc_pair p;

	t_rc_pair_new(&p, qpd, &path);
	t_rand_fill(p.lbuf, page);
	if (t_rc_rdma(&p, check, write, (uintptr_t)p.lbuf, p.lmr->lkey, addr, rkey, len,
		      expect) && expect == IBV_WC_SUCCESS) {
		uint64_t off = addr - (uintptr_t)t->p;

		if (write)
			memcpy(t->snap + off, p.lbuf, len);
		else if (memcmp(p.lbuf, t->p + off, len))
			t_fail("%s: READ at buffer offset %llu returned other bytes than the buffer holds",
			       check, (unsigned long long)off);
	}
	t_rc_pair_free(&p);
	tbuf_check(check, write ? "target buffer after the WRITE" : "buffer after the READ", t);
}

static int rereg(const char *check, struct ibv_mr *mr, int flags, struct ibv_pd *npd, void *addr,
		 size_t len, int access)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, flags, npd, addr, len, access);
	if (ret) {
		t_fail("%s: ibv_rereg_mr(flags %#x, access %#x): %d (errno %s), expected 0", check,
		       flags, access, ret, t_errname(errno));
		return 0;
	}
	if (mr->lkey != lkey || mr->rkey != rkey)
		t_fail("%s: keys after rereg lkey %#x rkey %#x, were %#x %#x: expected them kept",
		       check, mr->lkey, mr->rkey, lkey, rkey);
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (mr->addr != addr || mr->length != len))
		t_fail("%s: mr->addr %p length %zu after rereg, expected %p %zu", check, mr->addr,
		       mr->length, addr, len);
	if ((flags & IBV_REREG_MR_CHANGE_PD) && mr->pd != npd)
		t_fail("%s: mr->pd after rereg is not the new PD", check);
	return 1;
}

#define RACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* A local WRITE from the MR (as SGE, at its address + 100) to a peer MR on to. */
static void local_sge(const char *check, struct ibv_mr *mr, struct tbuf *to, struct ibv_mr *tomr)
{
	uint8_t *src = (uint8_t *)mr->addr + 100;
	struct ibv_sge sge = { (uintptr_t)src, 256, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr = { .rdma = { .remote_addr = (uintptr_t)to->p + 1000, .rkey = tomr->rkey } },
	}, *bad;
	struct ibv_wc wc;
	struct t_rc_pair p;
	int ret;

	t_rc_pair_new(&p, pd, &path);
	ret = ibv_post_send(p.a, &wr, &bad);
	if (ret)
		t_fatal("%s: post: %s", check, t_errname(ret));
	if (!t_poll_one(p.cq, &wc, t_now() + 20))
		t_fail("%s: no CQE for the WRITE from the reregistered MR within 20 s", check);
	else if (wc.status != IBV_WC_SUCCESS)
		t_fail("%s: WRITE with the reregistered MR's lkey %#x as SGE: %s, expected success",
		       check, mr->lkey, ibv_wc_status_str(wc.status));
	else
		memcpy(to->snap + 1000, src, 256);
	t_rc_pair_free(&p);
	tbuf_check(check, "target of the WRITE from the reregistered MR", to);
}

int main(int argc, char **argv)
{
	struct t_rc_opts opt;
	int ret;
	struct tbuf b1, b2, b3;
	struct ibv_mr *mr, *peer;
	struct ibv_mw *mw;

	ctx = t_rc_start("scire_rereg", argc, argv, 1, &opt, &path);
	page = sysconf(_SC_PAGESIZE);
	pd = ibv_alloc_pd(ctx);
	pd_other = ibv_alloc_pd(ctx);
	if (!pd || !pd_other)
		t_fatal("alloc_pd: %s", t_errname(errno));
	tbuf_new(&b1);
	tbuf_new(&b2);
	tbuf_new(&b3);
	peer = ibv_reg_mr(pd, b3.p, BUFLEN, RACC);
	if (!peer)
		t_fatal("reg_mr: %s", t_errname(errno));

	CHECK("trans") {
		mr = ibv_reg_mr(pd, b1.p, BUFLEN, RACC);
		if (!mr)
			t_fatal("reg_mr: %s", t_errname(errno));
		rdma("trans", pd, 1, &b1, (uintptr_t)b1.p + 64, mr->rkey, 512, IBV_WC_SUCCESS);
		if (rereg("trans", mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2.p + 512, 4096, 0)) {
			rdma("trans", pd, 1, &b2, (uintptr_t)b2.p + 512, mr->rkey, 4096, IBV_WC_SUCCESS);
			rdma("trans", pd, 0, &b2, (uintptr_t)b2.p + 1024, mr->rkey, 512, IBV_WC_SUCCESS);
			/* Outside the new range (before and after it). */
			rdma("trans", pd, 1, &b2, (uintptr_t)b2.p + 256, mr->rkey, 512,
			     IBV_WC_REM_ACCESS_ERR);
			rdma("trans", pd, 1, &b2, (uintptr_t)b2.p + 4096, mr->rkey, 1024,
			     IBV_WC_REM_ACCESS_ERR);
			/* The old buffer: its address is not in the MR any more. */
			rdma("trans", pd, 1, &b1, (uintptr_t)b1.p + 64, mr->rkey, 512,
			     IBV_WC_REM_ACCESS_ERR);
			local_sge("trans", mr, &b3, peer);
			tbuf_check("trans", "old buffer after everything", &b1);
			tbuf_check("trans", "new buffer after everything", &b2);
		}
		if ((ret = ibv_dereg_mr(mr)))
			t_fail("trans: dereg_mr: %s", t_errname(ret));
	}
	CHECK("access") {
		mr = ibv_reg_mr(pd, b1.p, BUFLEN, RACC);
		if (!mr)
			t_fatal("reg_mr: %s", t_errname(errno));
		if (rereg("access", mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)) {
			rdma("access", pd, 1, &b1, (uintptr_t)b1.p + 128, mr->rkey, 256,
			     IBV_WC_REM_ACCESS_ERR);
			rdma("access", pd, 0, &b1, (uintptr_t)b1.p + 128, mr->rkey, 256,
			     IBV_WC_SUCCESS);
			if (rereg("access", mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RACC))
				rdma("access", pd, 1, &b1, (uintptr_t)b1.p + 128, mr->rkey, 256,
				     IBV_WC_SUCCESS);
		}
		if ((ret = ibv_dereg_mr(mr)))
			t_fail("access: dereg_mr: %s", t_errname(ret));
	}
	CHECK("access-pin") {
		mr = ibv_reg_mr(pd, b1.p, BUFLEN, IBV_ACCESS_REMOTE_READ);
		if (!mr)
			t_fatal("reg_mr: %s", t_errname(errno));
		rdma("access-pin", pd, 1, &b1, (uintptr_t)b1.p, mr->rkey, 64, IBV_WC_REM_ACCESS_ERR);
		if (rereg("access-pin", mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RACC))
			rdma("access-pin", pd, 1, &b1, (uintptr_t)b1.p + 4000, mr->rkey, 1000,
			     IBV_WC_SUCCESS);
		if ((ret = ibv_dereg_mr(mr)))
			t_fail("access-pin: dereg_mr: %s", t_errname(ret));
	}
	CHECK("pd") {
		mr = ibv_reg_mr(pd, b1.p, BUFLEN, RACC);
		if (!mr)
			t_fatal("reg_mr: %s", t_errname(errno));
		if (rereg("pd", mr, IBV_REREG_MR_CHANGE_PD, pd_other, NULL, 0, 0)) {
			rdma("pd", pd, 1, &b1, (uintptr_t)b1.p + 8, mr->rkey, 64, IBV_WC_REM_ACCESS_ERR);
			rdma("pd", pd_other, 1, &b1, (uintptr_t)b1.p + 8, mr->rkey, 64, IBV_WC_SUCCESS);
			if (rereg("pd", mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0)) {
				rdma("pd", pd_other, 0, &b1, (uintptr_t)b1.p, mr->rkey, 64,
				     IBV_WC_REM_ACCESS_ERR);
				rdma("pd", pd, 0, &b1, (uintptr_t)b1.p, mr->rkey, 64, IBV_WC_SUCCESS);
			}
		}
		if ((ret = ibv_dereg_mr(mr)))
			t_fail("pd: dereg_mr: %s", t_errname(ret));
	}
	CHECK("all") {
		mr = ibv_reg_mr(pd, b1.p, BUFLEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!mr)
			t_fatal("reg_mr: %s", t_errname(errno));
		if (rereg("all", mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			  IBV_REREG_MR_CHANGE_ACCESS, pd_other, b2.p, BUFLEN,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) {
			rdma("all", pd_other, 1, &b2, (uintptr_t)b2.p + 2000, mr->rkey, 2000,
			     IBV_WC_SUCCESS);
			rdma("all", pd_other, 0, &b2, (uintptr_t)b2.p, mr->rkey, 64,
			     IBV_WC_REM_ACCESS_ERR);
			rdma("all", pd, 1, &b2, (uintptr_t)b2.p, mr->rkey, 64, IBV_WC_REM_ACCESS_ERR);
			tbuf_check("all", "old buffer", &b1);
		}
		if ((ret = ibv_dereg_mr(mr)))
			t_fail("all: dereg_mr: %s", t_errname(ret));
	}
	CHECK("mw-busy") {
		struct ibv_mw_bind bind = {
			.send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .addr = 0, .length = 256,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
		};
		struct ibv_wc wc;
		struct t_rc_pair p;

		mr = ibv_reg_mr(pd, b1.p, BUFLEN, RACC | IBV_ACCESS_MW_BIND);
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		if (!mr || !mw)
			t_fatal("mw-busy: reg_mr/alloc_mw: %s", t_errname(errno));
		bind.bind_info.mr = mr;
		bind.bind_info.addr = (uintptr_t)b1.p;
		t_rc_pair_new(&p, pd, &path);
		ret = ibv_bind_mw(p.b, mw, &bind);
		if (ret || !t_poll_one(p.cq, &wc, t_now() + 20) || wc.status != IBV_WC_SUCCESS)
			t_fatal("mw-busy: bind of a type 1 window failed: %s",
				ret ? t_errname(ret) : "error or no completion");
		errno = 0;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   IBV_ACCESS_LOCAL_WRITE);
		if (!ret)
			t_fail("mw-busy: ibv_rereg_mr of an MR with a window bound succeeded, expected a failure");
		else if (t_verbose)
			printf("  mw-busy: refused: %d, errno %s\n", ret, t_errname(errno));
		/* Unchanged: its own rkey and the window still write. */
		rdma("mw-busy", pd, 1, &b1, (uintptr_t)b1.p + 1024, mr->rkey, 64, IBV_WC_SUCCESS);
		rdma("mw-busy", pd, 1, &b1, (uintptr_t)b1.p, mw->rkey, 64, IBV_WC_SUCCESS);
		bind.bind_info.length = 0;
		ret = ibv_bind_mw(p.b, mw, &bind);
		if (ret || !t_poll_one(p.cq, &wc, t_now() + 20) || wc.status != IBV_WC_SUCCESS)
			t_fatal("mw-busy: zero-length bind failed: %s",
				ret ? t_errname(ret) : "error or no completion");
		t_rc_pair_free(&p);
		if (rereg("mw-busy", mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ))
			rdma("mw-busy", pd, 1, &b1, (uintptr_t)b1.p + 1024, mr->rkey, 64,
			     IBV_WC_REM_ACCESS_ERR);
		if ((ret = ibv_dealloc_mw(mw)) || (ret = ibv_dereg_mr(mr)))
			t_fail("mw-busy: dealloc_mw/dereg_mr: %s", t_errname(ret));
	}

	if ((ret = ibv_dereg_mr(peer)))
		t_fail("dereg_mr: %s", t_errname(ret));
	tbuf_free(&b1);
	tbuf_free(&b2);
	tbuf_free(&b3);
	if ((ret = ibv_dealloc_pd(pd)) || (ret = ibv_dealloc_pd(pd_other)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	return t_checks_done(opt.dev);
}
