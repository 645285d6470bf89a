// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_mw -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * Type 1 memory windows (IBA 10.6.7.1; ibv_alloc_mw(3), ibv_bind_mw(3)):
 * allocated on a PD, bound with ibv_bind_mw() through a QP's send queue,
 * yet owned by the PD, not the QP. Every check is named and fails saying
 * what differed:
 *
 *   alloc           ibv_alloc_mw(IBV_MW_TYPE_1) gives a type 1 window
 *   bind            ibv_bind_mw() completes IBV_WC_BIND_MW successfully and
 *                   changes the rkey's key byte (bits 0-7) only
 *   write, read     RDMA WRITE and READ through the window, on QPs other than
 *                   the one that bound it (the window is the PD's), land in
 *                   the window's range of the MR and nowhere else
 *   past-window     a WRITE inside the MR but past the window's end: remote
 *                   access error, no byte changed
 *   no-right        a WRITE through a window bound for REMOTE_READ only:
 *                   remote access error
 *   rebind          binding the bound window again gives another new rkey;
 *                   the old rkey gets a remote access error, the new one
 *                   works on the new range
 *   local-inv       LOCAL_INV of the window's rkey completes in error, and the
 *                   window still works (type 1 windows cannot be
 *                   invalidated)
 *   send-inv        SEND_WITH_INV naming it completes in error at the sender,
 *                   and the window still works
 *   dereg-busy      ibv_dereg_mr() of the MR with the window bound fails
 *   unbind          a bind of length 0 completes, changes the rkey, and the
 *                   old rkey gets a remote access error
 *   bind-no-mwbind  binding to an MR without IBV_ACCESS_MW_BIND fails
 *   bind-store      REMOTE_WRITE on an MR without LOCAL_WRITE fails (C10-74)
 *   bind-outside    a range outside the MR fails
 *   bind-zero-based IBV_ACCESS_ZERO_BASED fails
 *   bind-other-pd   binding through a QP of another PD fails
 *   failed-bind     after a failed bind the window keeps its old binding
 *   wrong-type      IBV_WR_BIND_MW with a type 1 window and ibv_bind_mw()
 *                   with a type 2 window are refused at post time
 *   dealloc         after ibv_dealloc_mw() of a bound window its rkey gets a
 *                   remote access error
 *
 * A bind that fails completes with an error and moves its QP to ERR, and a
 * remote access error does the same to the requester, so every bind and
 * every access runs on a fresh pair of connected RC QPs.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <sys/mman.h>

#include "scire_rc.h"

#define TPAGES		3
#define MR_OFF		128	/* the MR starts this far into the buffer */
#define MR_LEN		(8192 - MR_OFF)

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd_other;
static struct t_path path;
static long page;

static uint8_t *tbuf, *snap;	/* the target buffer and what it should hold */
static struct ibv_mr *tmr;	/* LOCAL_WRITE | MW_BIND, no remote right */

/* Wait for one CQE; 0 (and a failure) if none came in 20 s. */
static int cqe(const char *check, struct t_rc_pair *p, struct ibv_wc *wc, const char *what)
{
	if (t_poll_one(p->cq, wc, t_now() + 20))
		return 1;
	t_fail("%s: no CQE for the %s within 20 s", check, what);
	return 0;
}

/*
 * ibv_bind_mw() of mw through a fresh QP of qpd; the completion status, or
 * -errno if the post failed, or -ETIME. On a failed completion the window's
 * rkey is put back, as ibv_bind_mw(3) asks of the caller.
 */
static int bind1(const char *check, struct ibv_mw *mw, struct ibv_pd *qpd, struct ibv_mr *mr,
		 uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 7, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len, .mw_access_flags = access },
	};
	uint32_t old = mw->rkey;
	struct ibv_wc wc;
	struct t_rc_pair p;
	int ret;

	t_rc_pair_new(&p, qpd, &path);
	ret = ibv_bind_mw(p.b, mw, &b);
	if (ret) {
		ret = -ret;
	} else if (!cqe(check, &p, &wc, "bind")) {
		ret = -ETIME;
	} else {
		ret = wc.status;
		if (wc.status == IBV_WC_SUCCESS && (wc.opcode != IBV_WC_BIND_MW || wc.wr_id != 7))
			t_fail("%s: bind CQE opcode %s wr_id %llu, expected %s wr_id 7", check,
			       t_wc_opcode_str(wc.opcode), (unsigned long long)wc.wr_id,
			       t_wc_opcode_str(IBV_WC_BIND_MW));
		if (wc.status != IBV_WC_SUCCESS)
			mw->rkey = old;
	}
	t_rc_pair_free(&p);
	return ret;
}

/* A bind that must succeed and change only the rkey's key byte. */
static int bind_ok(const char *check, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr,
		   uint64_t len, unsigned int access)
{
	uint32_t old = mw->rkey;
	int st = bind1(check, mw, pd, mr, addr, len, access);

	if (st) {
		t_fail("%s: ibv_bind_mw(type 1, MR offset %lld, %llu bytes, access %#x): %s, expected success",
		       check, (long long)(addr - (uintptr_t)mr->addr), (unsigned long long)len,
		       access, st < 0 ? t_errname(-st) : ibv_wc_status_str(st));
		return 0;
	}
	if (mw->rkey == old || (mw->rkey ^ old) & ~0xffU) {
		t_fail("%s: rkey %#x after the bind, was %#x: expected a new key byte, same index",
		       check, mw->rkey, old);
		return 0;
	}
	return 1;
}

/* A bind that must fail (at post time or in its completion). */
static void bind_fails(const char *check, struct ibv_mw *mw, struct ibv_pd *qpd,
		       struct ibv_mr *mr, uint64_t addr, uint64_t len, unsigned int access)
{
	uint32_t old = mw->rkey;
	int st = bind1(check, mw, qpd, mr, addr, len, access);

	if (st == IBV_WC_SUCCESS)
		t_fail("%s: ibv_bind_mw(MR lkey %#x, MR offset %lld, %llu bytes, window access %#x) succeeded, expected a failure",
		       check, mr->lkey, (long long)(addr - (uintptr_t)mr->addr),
		       (unsigned long long)len, access);
	else if (t_verbose)
		printf("  %s: refused: %s\n", check, st < 0 ? t_errname(-st) : ibv_wc_status_str(st));
	if (mw->rkey != old)
		t_fail("%s: rkey %#x after the failed bind, expected the old %#x back", check,
		       mw->rkey, old);
}

/*
 * RDMA WRITE (len random bytes) or READ at (addr, rkey) from a fresh pair;
 * check the status, and that the target buffer holds what it should: a
 * WRITE that succeeds updates snap, anything else changes no byte.
 */
static void access_rkey(const char *check, int write, uint64_t addr, uint32_t rkey,
			uint32_t len, enum ibv_wc_status expect)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.wr = { .rdma = { .remote_addr = addr, .rkey = rkey } },
	}, *bad;
	struct ibv_wc wc;
	struct t_rc_pair p;
	size_t i, first = 0, diff = 0;
	int ret;

	t_rc_pair_new(&p, pd, &path);
	t_rand_fill(p.lbuf, page);
	sge = (struct ibv_sge){ (uintptr_t)p.lbuf, len, p.lmr->lkey };
	ret = ibv_post_send(p.a, &wr, &bad);
	if (ret)
		t_fatal("%s: post %s: %s", check, write ? "WRITE" : "READ", t_errname(ret));
	if (!cqe(check, &p, &wc, write ? "WRITE" : "READ"))
		goto out;
	if (wc.status != expect) {
		t_fail("%s: %s of %u bytes at buffer offset %lld, rkey %#x: %s, expected %s", check,
		       write ? "WRITE" : "READ", len, (long long)(addr - (uintptr_t)tbuf), rkey,
		       ibv_wc_status_str(wc.status), ibv_wc_status_str(expect));
		goto out;
	}
	if (expect == IBV_WC_SUCCESS) {
		uint8_t *t = tbuf + (addr - (uintptr_t)tbuf);

		if (write)
			memcpy(snap + (t - tbuf), p.lbuf, len);
		else if (memcmp(p.lbuf, t, len))
			t_fail("%s: READ through rkey %#x returned other bytes than the buffer holds at offset %lld",
			       check, rkey, (long long)(t - tbuf));
	}
	usleep(20 * 1000);
	for (i = 0; i < (size_t)TPAGES * page; i++) {
		if (tbuf[i] != snap[i] && !diff++)
			first = i;
	}
	if (diff)
		t_fail("%s: target buffer: %zu bytes differ from what they should be, the first at offset %zu (MR offset %lld)",
		       check, diff, first, (long long)first - MR_OFF);
	/* Put it back as it should be, so one failure does not cascade. */
	memcpy(tbuf, snap, (size_t)TPAGES * page);
out:
	t_rc_pair_free(&p);
}

static uint64_t mr_at(uint64_t off)
{
	return (uintptr_t)tbuf + MR_OFF + off;
}

/* Post LOCAL_INV (or, with send_inv, SEND_WITH_INV to the peer) of rkey. */
static void invalidate(const char *check, uint32_t rkey, int send_inv)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
		.opcode = send_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_LOCAL_INV,
		.invalidate_rkey = rkey,
	}, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 12, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;
	struct t_rc_pair p;
	int ret;

	t_rc_pair_new(&p, pd, &path);
	sge = (struct ibv_sge){ (uintptr_t)p.lbuf, 64, p.lmr->lkey };
	if (send_inv && (ret = ibv_post_recv(p.b, &rwr, &rbad)))
		t_fatal("%s: post_recv: %s", check, t_errname(ret));
	ret = ibv_post_send(send_inv ? p.a : p.b, &wr, &bad);
	if (ret) {
		t_fail("%s: post %s: %s, expected it posted and completed in error", check,
		       send_inv ? "SEND_WITH_INV" : "LOCAL_INV", t_errname(ret));
	} else {
		/* The sender's CQE; the receiver's (same CQ) may come first. */
		while (cqe(check, &p, &wc, send_inv ? "SEND_WITH_INV" : "LOCAL_INV")) {
			if (wc.wr_id == 12) {
				if (wc.status == IBV_WC_SUCCESS)
					t_fail("%s: the receiver completed the SEND_WITH_INV of type 1 window rkey %#x successfully (flags %#x)",
					       check, rkey, wc.wc_flags);
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS)
				t_fail("%s: %s of type 1 window rkey %#x succeeded, expected an error completion",
				       check, send_inv ? "SEND_WITH_INV" : "LOCAL_INV", rkey);
			else if (t_verbose)
				printf("  %s: %s\n", check, ibv_wc_status_str(wc.status));
			break;
		}
	}
	t_rc_pair_free(&p);
}

int main(int argc, char **argv)
{
	struct t_rc_opts opt;
	int ret;
	struct ibv_mr *mr_nobind, *mr_ro, *big;
	struct ibv_mw *mw, *mw2;
	uint32_t rk1, rk2;
	uint8_t *other;

	ctx = t_rc_start("scire_mw", argc, argv, 1, &opt, &path);
	page = sysconf(_SC_PAGESIZE);
	pd = ibv_alloc_pd(ctx);
	pd_other = ibv_alloc_pd(ctx);
	if (!pd || !pd_other)
		t_fatal("alloc_pd: %s", t_errname(errno));

	tbuf = mmap(NULL, TPAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	other = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	snap = malloc(TPAGES * page);
	if (tbuf == MAP_FAILED || other == MAP_FAILED || !snap)
		t_fatal("buffers: %s", t_errname(errno));
	t_rand_fill(tbuf, TPAGES * page);
	memcpy(snap, tbuf, TPAGES * page);
	/* No remote right of its own: whatever gets in, gets in through a window. */
	tmr = ibv_reg_mr(pd, tbuf + MR_OFF, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mr_nobind = ibv_reg_mr(pd, other, page, IBV_ACCESS_LOCAL_WRITE);
	mr_ro = ibv_reg_mr(pd, other, page, IBV_ACCESS_MW_BIND);
	if (!tmr || !mr_nobind || !mr_ro)
		t_fatal("reg_mr: %s", t_errname(errno));

	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw)
		t_fatal("alloc: ibv_alloc_mw(IBV_MW_TYPE_1): %s, expected a window", t_errname(errno));
	CHECK("alloc") {
		if (mw->type != IBV_MW_TYPE_1 || mw->pd != pd)
			t_fail("alloc: window type %d pd %p, expected type 1 on pd %p", mw->type,
			       (void *)mw->pd, (void *)pd);
	}

	CHECK("bind") bind_ok("bind", mw, tmr, mr_at(1024), 2048,
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	rk1 = mw->rkey;
	CHECK("write") {
		access_rkey("write", 1, mr_at(1024), rk1, 2048, IBV_WC_SUCCESS);
		access_rkey("write", 1, mr_at(1024 + 100), rk1, 300, IBV_WC_SUCCESS);
	}
	CHECK("read") access_rkey("read", 0, mr_at(1024 + 512), rk1, 1024, IBV_WC_SUCCESS);
	CHECK("past-window") {
		access_rkey("past-window", 1, mr_at(1024 + 2048 - 8), rk1, 16, IBV_WC_REM_ACCESS_ERR);
		access_rkey("past-window", 0, mr_at(1024 - 8), rk1, 16, IBV_WC_REM_ACCESS_ERR);
	}
	CHECK("no-right") {
		if (bind_ok("no-right", mw, tmr, mr_at(0), 512, IBV_ACCESS_REMOTE_READ)) {
			access_rkey("no-right", 1, mr_at(0), mw->rkey, 64, IBV_WC_REM_ACCESS_ERR);
			access_rkey("no-right", 0, mr_at(0), mw->rkey, 64, IBV_WC_SUCCESS);
		}
	}
	CHECK("rebind") {
		rk1 = mw->rkey;
		if (bind_ok("rebind", mw, tmr, mr_at(4096), 1024,
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)) {
			rk2 = mw->rkey;
			access_rkey("rebind", 0, mr_at(0), rk1, 64, IBV_WC_REM_ACCESS_ERR);
			access_rkey("rebind", 1, mr_at(4096), rk1, 64, IBV_WC_REM_ACCESS_ERR);
			access_rkey("rebind", 1, mr_at(4096), rk2, 1024, IBV_WC_SUCCESS);
			/* The old range is outside the new binding. */
			access_rkey("rebind", 0, mr_at(0), rk2, 64, IBV_WC_REM_ACCESS_ERR);
		}
	}
	CHECK("local-inv") {
		invalidate("local-inv", mw->rkey, 0);
		access_rkey("local-inv", 1, mr_at(4096 + 8), mw->rkey, 64, IBV_WC_SUCCESS);
	}
	CHECK("send-inv") {
		invalidate("send-inv", mw->rkey, 1);
		access_rkey("send-inv", 1, mr_at(4096 + 16), mw->rkey, 64, IBV_WC_SUCCESS);
	}
	CHECK("dereg-busy") {
		big = ibv_reg_mr(pd, other, page, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		if (!big)
			t_fatal("reg_mr: %s", t_errname(errno));
		mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		if (!mw2)
			t_fatal("alloc_mw: %s", t_errname(errno));
		if (bind_ok("dereg-busy", mw2, big, (uintptr_t)other, 64, IBV_ACCESS_REMOTE_READ)) {
			ret = ibv_dereg_mr(big);
			if (!ret)
				t_fatal("dereg-busy: ibv_dereg_mr of an MR with a type 1 window bound succeeded, expected EBUSY");
			if (ret != EBUSY)
				t_fail("dereg-busy: ibv_dereg_mr with a window bound: %s, expected EBUSY",
				       t_errname(ret));
			/* Unbound, the MR may go. */
			if (bind_ok("dereg-busy", mw2, big, 0, 0, 0) && (ret = ibv_dereg_mr(big)))
				t_fail("dereg-busy: ibv_dereg_mr after the zero-length bind: %s, expected 0",
				       t_errname(ret));
		}
		if ((ret = ibv_dealloc_mw(mw2)))
			t_fail("dereg-busy: dealloc_mw: %s", t_errname(ret));
	}
	CHECK("bind-no-mwbind") bind_fails("bind-no-mwbind", mw, pd, mr_nobind, (uintptr_t)other, 64,
					   IBV_ACCESS_REMOTE_READ);
	CHECK("bind-store") {
		bind_fails("bind-store", mw, pd, mr_ro, (uintptr_t)other, 64, IBV_ACCESS_REMOTE_WRITE);
		bind_fails("bind-store", mw, pd, mr_ro, (uintptr_t)other, 64, IBV_ACCESS_REMOTE_ATOMIC);
	}
	CHECK("bind-outside") {
		bind_fails("bind-outside", mw, pd, tmr, mr_at(MR_LEN - 32), 64, IBV_ACCESS_REMOTE_READ);
		bind_fails("bind-outside", mw, pd, tmr, mr_at(0) - 8, 64, IBV_ACCESS_REMOTE_READ);
	}
	CHECK("bind-zero-based") bind_fails("bind-zero-based", mw, pd, tmr, 0, 64,
					    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
	CHECK("bind-other-pd") bind_fails("bind-other-pd", mw, pd_other, tmr, mr_at(0), 64,
					  IBV_ACCESS_REMOTE_READ);
	CHECK("failed-bind") {
		/* After all those refusals the window is still bound as rebind left it. */
		access_rkey("failed-bind", 0, mr_at(4096), mw->rkey, 1024, IBV_WC_SUCCESS);
	}
	CHECK("wrong-type") {
		struct ibv_mw *mw_t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		struct ibv_mw_bind b = { .bind_info = { tmr, mr_at(0), 64, IBV_ACCESS_REMOTE_READ } };
		struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad;
		struct t_rc_pair p;
		uint32_t before = mw->rkey;

		if (!mw_t2)
			t_fatal("wrong-type: alloc_mw(type 2): %s", t_errname(errno));
		t_rc_pair_new(&p, pd, &path);
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info = b.bind_info;
		ret = ibv_post_send(p.b, &wr, &bad);
		if (ret != EINVAL)
			t_fail("wrong-type: IBV_WR_BIND_MW of a type 1 window: post returned %s, expected EINVAL",
			       ret ? t_errname(ret) : "0");
		if (!ret)
			mw->rkey = before;
		ret = ibv_bind_mw(p.b, mw_t2, &b);
		if (ret != EINVAL)
			t_fail("wrong-type: ibv_bind_mw() of a type 2 window returned %s, expected EINVAL",
			       ret ? t_errname(ret) : "0");
		t_rc_pair_free(&p);
		if ((ret = ibv_dealloc_mw(mw_t2)))
			t_fail("wrong-type: dealloc_mw: %s", t_errname(ret));
	}
	CHECK("unbind") {
		rk1 = mw->rkey;
		if (bind_ok("unbind", mw, tmr, mr_at(4096), 0, 0)) {
			access_rkey("unbind", 0, mr_at(4096), rk1, 64, IBV_WC_REM_ACCESS_ERR);
			access_rkey("unbind", 0, mr_at(4096), mw->rkey, 64, IBV_WC_REM_ACCESS_ERR);
			/* And it binds again. */
			if (bind_ok("unbind", mw, tmr, mr_at(256), 256, IBV_ACCESS_REMOTE_WRITE))
				access_rkey("unbind", 1, mr_at(256), mw->rkey, 256, IBV_WC_SUCCESS);
		}
	}
	CHECK("dealloc") {
		rk1 = mw->rkey;
		if ((ret = ibv_dealloc_mw(mw)))
			t_fail("dealloc: ibv_dealloc_mw of a bound window: %s", t_errname(ret));
		access_rkey("dealloc", 1, mr_at(256), rk1, 64, IBV_WC_REM_ACCESS_ERR);
		mw = NULL;
	}
	if (mw && (ret = ibv_dealloc_mw(mw)))
		t_fail("dealloc_mw: %s", t_errname(ret));
	if ((ret = ibv_dereg_mr(tmr)) || (ret = ibv_dereg_mr(mr_nobind)) ||
	    (ret = ibv_dereg_mr(mr_ro)))
		t_fail("dereg_mr: %s", t_errname(ret));
	if ((ret = ibv_dealloc_pd(pd)) || (ret = ibv_dealloc_pd(pd_other)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	return t_checks_done(opt.dev);
}
