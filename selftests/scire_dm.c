// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_dm -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * Device memory (ibv_alloc_dm(3), ibv_reg_dm_mr). Every check is named and
 * fails saying what differed:
 *
 *   limits      max_dm_size is scire's 16 MiB; a zero length, one past
 *               max_dm_size and an alignment beyond a page are refused
 *               (EINVAL), as is more than max_dm_size in total (ENOMEM)
 *   copy        ibv_memcpy_to_dm / _from_dm at several offsets return what
 *               was written and leave the rest of the DM alone; an offset or
 *               length not a multiple of 4 gives EINVAL, a range past the
 *               end EFAULT
 *   reg         ibv_reg_dm_mr without IBV_ACCESS_ZERO_BASED and past the
 *               DM's end are refused (EINVAL); one of 0 bytes is taken
 *               (as on mlx5; pyverbs registers one) and refuses a WRITE
 *   write       RDMA WRITE into a DM MR (zero based, at a DM offset) lands
 *               at that DM offset and nowhere else; past the MR: remote
 *               access error
 *   read        RDMA READ from a DM MR returns the DM's bytes
 *   local-sge   a DM MR as the local SGE of an RDMA WRITE and of a READ
 *   busy        ibv_free_dm while an MR covers the DM: EBUSY, and the DM
 *               still works; after ibv_dereg_mr it frees
 *   mapped      a DM of max_dm_size freed while a forked child still maps
 *               it keeps counting (another alloc_dm: ENOMEM) until the
 *               child's mapping goes
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <sys/wait.h>

#include "scire_rc.h"

#define DMLEN	(64 * 1024)
#define MROFF	4096	/* where in the DM the MR starts */
#define MRLEN	(16 * 1024)
#define RACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct t_path path;
static uint8_t snap[DMLEN];	/* what the DM should hold */

static struct ibv_dm *dm_new(size_t len)
{
	struct ibv_alloc_dm_attr attr = { .length = len };

	return ibv_alloc_dm(ctx, &attr);
}

/* Does the DM hold snap? */
static void dm_check(const char *check, const char *what, struct ibv_dm *dm)
{
	static uint8_t now[DMLEN];
	size_t i, first = 0, diff = 0;
	int ret;

	ret = ibv_memcpy_from_dm(now, dm, 0, DMLEN);
	if (ret) {
		t_fail("%s: memcpy_from_dm of the whole DM: %s", check, t_errname(ret));
		return;
	}
	for (i = 0; i < DMLEN; i++) {
		if (now[i] != snap[i] && !diff++)
			first = i;
	}
	if (diff)
		t_fail("%s: %s: %zu DM bytes differ from what they should be, the first at DM offset %zu",
		       check, what, diff, first);
}

static void dm_fill(struct ibv_dm *dm)
{
	int ret;

	t_rand_fill(snap, DMLEN);
	ret = ibv_memcpy_to_dm(dm, 0, snap, DMLEN);
	if (ret)
		t_fatal("memcpy_to_dm of the whole DM: %s", t_errname(ret));
}

static void expect_errno(const char *check, const char *what, int ret, int expect)
{
	if (ret != expect)
		t_fail("%s: %s: %s, expected %s", check, what, ret ? t_errname(ret) : "success",
		       expect ? t_errname(expect) : "success");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx;
	struct t_rc_opts opt;
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	int ret;

	ctx = t_rc_start("scire_dm", argc, argv, 1, &opt, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));

	CHECK("limits") {
		struct ibv_alloc_dm_attr attr = { .length = 4096, .log_align_req = 20 };
		struct ibv_dm *big[3];
		int i, n = 0;

		ret = ibv_query_device_ex(ctx, NULL, &dx);
		if (ret)
			t_fatal("query_device_ex: %s", t_errname(ret));
		if (dx.max_dm_size != 16 << 20)
			t_fail("limits: max_dm_size %llu, expected 16 MiB",
			       (unsigned long long)dx.max_dm_size);
		errno = 0;
		expect_errno("limits", "alloc_dm of 0 bytes", dm_new(0) ? 0 : errno, EINVAL);
		errno = 0;
		expect_errno("limits", "alloc_dm of max_dm_size + 1",
			     dm_new(dx.max_dm_size + 1) ? 0 : errno, EINVAL);
		errno = 0;
		expect_errno("limits", "alloc_dm aligned to 1 MiB",
			     ibv_alloc_dm(ctx, &attr) ? 0 : errno, EINVAL);
		/* Half, half, then one more page: the total is the limit. */
		for (i = 0; i < 2; i++) {
			big[n] = dm_new(dx.max_dm_size / 2);
			if (!big[n])
				t_fail("limits: alloc_dm of half max_dm_size (#%d): %s", i,
				       t_errname(errno));
			else
				n++;
		}
		errno = 0;
		dm = dm_new(4096);
		expect_errno("limits", "alloc_dm past max_dm_size in total", dm ? 0 : errno,
			     ENOMEM);
		if (dm)
			ibv_free_dm(dm);
		while (n--)
			if ((ret = ibv_free_dm(big[n])))
				t_fail("limits: free_dm: %s", t_errname(ret));
		dm = dm_new(4096);
		if (!dm)
			t_fail("limits: alloc_dm after freeing: %s", t_errname(errno));
		else
			ibv_free_dm(dm);
	}

	dm = dm_new(DMLEN);
	if (!dm)
		t_fatal("alloc_dm of %d bytes: %s", DMLEN, t_errname(errno));

	CHECK("copy") {
		static const uint64_t offs[] = { 0, 4, 4092, 8188, DMLEN - 64 };
		uint8_t buf[64];
		size_t i;

		dm_fill(dm);
		dm_check("copy", "after filling", dm);
		for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			t_rand_fill(buf, sizeof(buf));
			ret = ibv_memcpy_to_dm(dm, offs[i], buf, sizeof(buf));
			if (ret) {
				t_fail("copy: memcpy_to_dm at %llu: %s",
				       (unsigned long long)offs[i], t_errname(ret));
				continue;
			}
			memcpy(snap + offs[i], buf, sizeof(buf));
			memset(buf, 0, sizeof(buf));
			ret = ibv_memcpy_from_dm(buf, dm, offs[i], sizeof(buf));
			if (ret || memcmp(buf, snap + offs[i], sizeof(buf)))
				t_fail("copy: memcpy_from_dm at %llu: %s", (unsigned long long)offs[i],
				       ret ? t_errname(ret) : "other bytes than written");
		}
		dm_check("copy", "after the copies", dm);
		expect_errno("copy", "memcpy_to_dm at offset 2",
			     ibv_memcpy_to_dm(dm, 2, buf, 8), EINVAL);
		expect_errno("copy", "memcpy_to_dm of 6 bytes",
			     ibv_memcpy_to_dm(dm, 8, buf, 6), EINVAL);
		expect_errno("copy", "memcpy_from_dm of 1 byte",
			     ibv_memcpy_from_dm(buf, dm, 0, 1), EINVAL);
		expect_errno("copy", "memcpy_to_dm past the end",
			     ibv_memcpy_to_dm(dm, DMLEN - 4, buf, 8), EFAULT);
		expect_errno("copy", "memcpy_from_dm past the end",
			     ibv_memcpy_from_dm(buf, dm, DMLEN, 4), EFAULT);
		dm_check("copy", "after the refused copies", dm);
	}
	CHECK("reg") {
		errno = 0;
		mr = ibv_reg_dm_mr(pd, dm, 0, 4096, RACC & ~IBV_ACCESS_ZERO_BASED);
		expect_errno("reg", "reg_dm_mr without ZERO_BASED", mr ? 0 : errno, EINVAL);
		if (mr)
			ibv_dereg_mr(mr);
		errno = 0;
		mr = ibv_reg_dm_mr(pd, dm, DMLEN - 4096, 8192, RACC);
		expect_errno("reg", "reg_dm_mr past the DM's end", mr ? 0 : errno, EINVAL);
		if (mr)
			ibv_dereg_mr(mr);
		dm_fill(dm);
		mr = ibv_reg_dm_mr(pd, dm, 100, 0, RACC);
		if (!mr) {
			t_fail("reg: reg_dm_mr of 0 bytes: %s, expected success", t_errname(errno));
		} else {
			struct t_rc_pair p;

			t_rc_pair_new(&p, pd, &path);
			t_rc_rdma(&p, "reg", 1, (uintptr_t)p.lbuf, p.lmr->lkey, 0, mr->rkey, 4,
				  IBV_WC_REM_ACCESS_ERR);
			t_rc_pair_free(&p);
			dm_check("reg", "after a WRITE into a 0-byte DM MR", dm);
			if ((ret = ibv_dereg_mr(mr)))
				t_fail("reg: dereg_mr of the 0-byte DM MR: %s", t_errname(ret));
		}
	}

	mr = ibv_reg_dm_mr(pd, dm, MROFF, MRLEN, RACC);
	if (!mr)
		t_fatal("reg_dm_mr of %d bytes at DM offset %d: %s", MRLEN, MROFF, t_errname(errno));

	CHECK("write") {
		struct t_rc_pair p;

		dm_fill(dm);
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, 4096);
		/* Straddles a page of the DM. */
		t_rc_rdma(&p, "write", 1, (uintptr_t)p.lbuf, p.lmr->lkey, 4000, mr->rkey, 3000,
			  IBV_WC_SUCCESS);
		memcpy(snap + MROFF + 4000, p.lbuf, 3000);
		dm_check("write", "after a WRITE at MR offset 4000", dm);
		t_rc_pair_free(&p);
		t_rc_pair_new(&p, pd, &path);
		t_rc_rdma(&p, "write", 1, (uintptr_t)p.lbuf, p.lmr->lkey, MRLEN - 100, mr->rkey, 200,
			  IBV_WC_REM_ACCESS_ERR);
		t_rc_pair_free(&p);
		dm_check("write", "after a WRITE past the MR's end", dm);
	}
	CHECK("read") {
		struct t_rc_pair p;

		dm_fill(dm);
		t_rc_pair_new(&p, pd, &path);
		t_rc_rdma(&p, "read", 0, (uintptr_t)p.lbuf, p.lmr->lkey, 1000, mr->rkey, 4000,
			  IBV_WC_SUCCESS);
		if (memcmp(p.lbuf, snap + MROFF + 1000, 4000))
			t_fail("read: READ from MR offset 1000 returned other bytes than the DM holds");
		t_rc_pair_free(&p);
		dm_check("read", "after the READ", dm);
	}
	CHECK("local-sge") {
		static uint8_t peer[4096];
		struct ibv_mr *pmr;
		struct t_rc_pair p;

		pmr = ibv_reg_mr(pd, peer, sizeof(peer), RACC & ~IBV_ACCESS_ZERO_BASED);
		if (!pmr)
			t_fatal("local-sge: reg_mr of the peer buffer: %s", t_errname(errno));
		dm_fill(dm);
		t_rc_pair_new(&p, pd, &path);
		/* DM MR offset 8000 -> the peer buffer. */
		t_rc_rdma(&p, "local-sge", 1, 8000, mr->lkey, (uintptr_t)peer, pmr->rkey, 2048,
			  IBV_WC_SUCCESS);
		if (memcmp(peer, snap + MROFF + 8000, 2048))
			t_fail("local-sge: the WRITE from DM MR offset 8000 delivered other bytes than the DM holds");
		dm_check("local-sge", "after the WRITE from it", dm);
		/* The peer buffer -> DM MR offset 12000, by READ. */
		t_rand_fill(peer, sizeof(peer));
		t_rc_rdma(&p, "local-sge", 0, 12000, mr->lkey, (uintptr_t)peer, pmr->rkey, 1024,
			  IBV_WC_SUCCESS);
		memcpy(snap + MROFF + 12000, peer, 1024);
		t_rc_pair_free(&p);
		dm_check("local-sge", "after the READ into it", dm);
		if ((ret = ibv_dereg_mr(pmr)))
			t_fail("local-sge: dereg_mr: %s", t_errname(ret));
	}
	CHECK("busy") {
		ret = ibv_free_dm(dm);
		expect_errno("busy", "free_dm while an MR covers it", ret, EBUSY);
		if (!ret)
			t_fatal("busy: the DM is gone under its MR");
		dm_fill(dm);
		dm_check("busy", "after the refused free", dm);
	}

	if ((ret = ibv_dereg_mr(mr)))
		t_fail("dereg_mr: %s", t_errname(ret));
	if ((ret = ibv_free_dm(dm)))
		t_fail("free_dm after dereg_mr: %s", t_errname(ret));

	CHECK("mapped") {
		struct ibv_dm *all;
		int go[2];
		pid_t pid;
		char c;

		ret = ibv_query_device_ex(ctx, NULL, &dx);
		if (ret)
			t_fatal("query_device_ex: %s", t_errname(ret));
		all = dm_new(dx.max_dm_size);
		if (!all)
			t_fatal("mapped: alloc_dm of max_dm_size: %s", t_errname(errno));
		if (pipe(go))
			t_fatal("pipe: %s", t_errname(errno));
		/* The child inherits the provider's mapping of the DM. */
		pid = fork();
		if (pid < 0)
			t_fatal("fork: %s", t_errname(errno));
		if (!pid) {
			close(go[1]);
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(go[0]);
		if ((ret = ibv_free_dm(all)))
			t_fail("mapped: free_dm: %s", t_errname(ret));
		errno = 0;
		dm = dm_new(4096);
		expect_errno("mapped", "alloc_dm while a child maps a freed DM of max_dm_size",
			     dm ? 0 : errno, ENOMEM);
		if (dm)
			ibv_free_dm(dm);
		close(go[1]);
		if (waitpid(pid, NULL, 0) != pid)
			t_fatal("waitpid: %s", t_errname(errno));
		dm = dm_new(dx.max_dm_size);
		if (!dm)
			t_fail("mapped: alloc_dm of max_dm_size once the child is gone: %s",
			       t_errname(errno));
		else
			ibv_free_dm(dm);
	}

	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	return t_checks_done(opt.dev);
}
