// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_access -d DEV [-g GIDIDX] [-c CASE] [-v]
 *
 * Remote access checks of the RC responder. For each of RDMA WRITE, RDMA
 * READ, ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD, and each way of being
 * wrong about the target MR:
 *
 *   past-end      the range runs past the MR's last byte
 *   before-start  the range starts before the MR's first byte
 *   no-right      the MR lacks IBV_ACCESS_REMOTE_WRITE / _READ / _ATOMIC
 *   wrong-rkey    the MR's rkey with its key byte (bits 0-7) changed
 *   stale-rkey    the rkey of an MR that was deregistered
 *   other-pd      the rkey of an MR of another PD than the QPs'
 *
 * a fresh pair of RC QPs (requester A, responder B, connected through
 * DEV's own RoCEv2 GID) first completes a valid op of the same kind, then
 * posts the bad WR followed by two valid RDMA WRITEs in one chain. Then
 * (IBA vol 1 ch. 9: the responder answers a bad R_Key, range or access
 * right with a NAK "remote access error"; the requester completes that WR
 * with the error, moves the QP to ERR and flushes what follows):
 *
 *   - the bad WR completes with IBV_WC_REM_ACCESS_ERR;
 *   - the two WRITEs complete with IBV_WC_WR_FLUSH_ERR, in order, and did
 *     not write their (valid) target;
 *   - a WR posted to A afterwards is accepted and flushed too;
 *   - A is in ERR (ibv_query_qp);
 *   - not one byte changed in the target buffer (the MR and the rest of
 *     the pages it lies in), in A's local buffer (READ and atomic results
 *     must not land) or in the flushed WRITEs' target;
 *   - B's CQ holds nothing.
 *
 * B's QP state is printed, not checked: rxe moves its responder to ERR
 * too (it handles a remote access violation as a class C error).
 *
 * -c CASE runs the cases whose name ("WRITE past-end", ...) contains CASE.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <sys/mman.h>

#include "scire_rc.h"

#define TLEN		1024	/* bytes of the target MR */
#define TOFF		64	/* its offset into the target buffer's 2nd page */
#define FOLLOW		2	/* valid WRs posted after the bad one */

enum acc_op { OP_WRITE, OP_READ, OP_CMP_SWP, OP_FETCH_ADD, OP_N };
enum acc_cond { C_PAST_END, C_BEFORE_START, C_NO_RIGHT, C_WRONG_RKEY, C_STALE_RKEY,
		C_OTHER_PD, C_N };

static const char *const op_name[OP_N] = {
	"WRITE", "READ", "CMP_AND_SWP", "FETCH_AND_ADD",
};
static const char *const cond_name[C_N] = {
	"past-end", "before-start", "no-right", "wrong-rkey", "stale-rkey", "other-pd",
};
static const int op_right[OP_N] = {
	IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ,
	IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC,
};

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd_other;
static struct t_path path;
static long page;
static int verbose;

/* Everything one case uses; all of it fresh per case. */
struct acase {
	const char *name;
	enum acc_op op;
	enum acc_cond cond;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	uint8_t *tbuf;		/* 3 pages; the target MR is in the middle one */
	uint8_t *lbuf;		/* A's local buffer, 1 page */
	uint8_t *cbuf;		/* the flushed WRITEs' target, 1 page */
	struct ibv_mr *tmr, *lmr, *cmr;
	uint8_t *snap_t, *snap_l, *snap_c;
};

static int atomic(enum acc_op op)
{
	return op == OP_CMP_SWP || op == OP_FETCH_ADD;
}

static uint8_t *map_pages(int n)
{
	uint8_t *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	if (p == MAP_FAILED)
		t_fatal("mmap %d pages: %s", n, t_errname(errno));
	t_rand_fill(p, n * page);
	return p;
}

static struct ibv_mr *reg(struct ibv_pd *p, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(p, addr, len, access);

	if (!mr)
		t_fatal("reg_mr(%zu bytes, access %#x): %s", len, access, t_errname(errno));
	return mr;
}

/*
 * Fill wr for op against (addr, rkey); local data comes from or goes to
 * A's buffer at loff.
 */
static void make_wr(struct acase *c, struct ibv_send_wr *wr, struct ibv_sge *sge,
		    enum acc_op op, uint64_t addr, uint32_t rkey, uint32_t len, uint32_t loff,
		    uint64_t wr_id)
{
	memset(wr, 0, sizeof(*wr));
	*sge = (struct ibv_sge){ (uintptr_t)(c->lbuf + loff), len, c->lmr->lkey };
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_WRITE:
	case OP_READ:
		wr->opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = addr;
		wr->wr.rdma.rkey = rkey;
		break;
	default:
		wr->opcode = op == OP_CMP_SWP ? IBV_WR_ATOMIC_CMP_AND_SWP :
			     IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = addr;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = t_rand64();
		wr->wr.atomic.swap = t_rand64();
		break;
	}
}

static int wait_cqe(struct ibv_cq *cq, struct ibv_wc *wc, const char *what, struct acase *c)
{
	if (t_poll_one(cq, wc, t_now() + 20))
		return 1;
	t_fail("%s: no CQE for the %s within 20 s (QP A %s)", c->name, what,
	       t_qp_state_str(t_qp_state(c->qp_a)));
	return 0;
}

static void compare(struct acase *c, const char *what, const uint8_t *now,
		    const uint8_t *snap, size_t len, const uint8_t *mr_start)
{
	size_t i, first = 0, bad = 0;

	if (!memcmp(now, snap, len))
		return;
	for (i = 0; i < len; i++) {
		if (now[i] != snap[i]) {
			if (!bad)
				first = i;
			bad++;
		}
	}
	if (mr_start)
		t_fail("%s: %s changed: %zu bytes, the first at MR offset %ld (0x%02x, was 0x%02x)",
		       c->name, what, bad, (long)(now + first - mr_start), now[first], snap[first]);
	else
		t_fail("%s: %s changed: %zu bytes, the first at offset %zu (0x%02x, was 0x%02x)",
		       c->name, what, bad, first, now[first], snap[first]);
}

static void run_case(enum acc_op op, enum acc_cond cond)
{
	struct ibv_send_wr wr[1 + FOLLOW + 1], *bad_wr;
	struct ibv_sge sge[1 + FOLLOW + 1];
	int access = IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS, state_b, i, ret, fails;
	struct acase cs = { .op = op, .cond = cond }, *c = &cs;
	uint32_t len = atomic(op) ? 8 : 16, rkey, ctl_rkey;
	uint64_t addr, ctl_addr;
	uint8_t *mr_start;
	struct ibv_wc wc;
	char name[64];

	snprintf(name, sizeof(name), "%s %s", op_name[op], cond_name[cond]);
	c->name = name;
	fails = t_failures;

	c->cq_a = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	c->cq_b = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!c->cq_a || !c->cq_b)
		t_fatal("%s: create_cq: %s", name, t_errname(errno));
	c->qp_a = t_rc_qp(pd, c->cq_a, 16, 4);
	c->qp_b = t_rc_qp(pd, c->cq_b, 16, 4);
	t_rc_connect_pair(c->qp_a, c->qp_b, &path);

	c->tbuf = map_pages(3);
	c->lbuf = map_pages(1);
	c->cbuf = map_pages(1);
	mr_start = c->tbuf + page + TOFF;
	if (cond == C_NO_RIGHT)
		access &= ~op_right[op];
	c->tmr = reg(cond == C_OTHER_PD ? pd_other : pd, mr_start, TLEN, access);
	c->lmr = reg(pd, c->lbuf, page, IBV_ACCESS_LOCAL_WRITE);
	c->cmr = reg(pd, c->cbuf, page, IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS);

	/* The bad range and key. */
	addr = (uintptr_t)mr_start;
	rkey = c->tmr->rkey;
	switch (cond) {
	case C_PAST_END:
		/* Atomics: the 8 bytes right after the MR; else straddle its end. */
		addr += atomic(op) ? TLEN : TLEN - len / 2;
		break;
	case C_BEFORE_START:
		addr -= atomic(op) ? 8 : len / 2;
		break;
	case C_WRONG_RKEY:
		rkey ^= 0x80;
		if (rkey == c->lmr->rkey || rkey == c->cmr->rkey)
			t_fatal("%s: rkey %#x ^ 0x80 is another MR's rkey", name, c->tmr->rkey);
		break;
	default:
		break;
	}

	/*
	 * A valid op of the same kind first: the QPs work, and where the
	 * target MR allows it, the right key works on it.
	 */
	if (cond == C_NO_RIGHT || cond == C_OTHER_PD) {
		ctl_addr = (uintptr_t)c->cbuf + 256;
		ctl_rkey = c->cmr->rkey;
	} else {
		ctl_addr = (uintptr_t)mr_start + 64;
		ctl_rkey = c->tmr->rkey;
	}
	make_wr(c, &wr[0], &sge[0], op, ctl_addr, ctl_rkey, len, 512, 1);
	ret = ibv_post_send(c->qp_a, &wr[0], &bad_wr);
	if (ret)
		t_fatal("%s: post of the valid %s: %s", name, op_name[op], t_errname(ret));
	if (!wait_cqe(c->cq_a, &wc, "valid op before the bad one", c))
		goto out;
	if (wc.status != IBV_WC_SUCCESS) {
		t_fail("%s: the valid %s before the bad one (rkey %#x): status %s, expected success",
		       name, op_name[op], ctl_rkey, ibv_wc_status_str(wc.status));
		goto out;
	}

	if (cond == C_STALE_RKEY) {
		ret = ibv_dereg_mr(c->tmr);
		if (ret)
			t_fatal("%s: dereg_mr: %s", name, t_errname(ret));
		c->tmr = NULL;
	}

	c->snap_t = malloc(3 * page);
	c->snap_l = malloc(page);
	c->snap_c = malloc(page);
	if (!c->snap_t || !c->snap_l || !c->snap_c)
		t_fatal("malloc: out of memory");
	memcpy(c->snap_t, c->tbuf, 3 * page);
	memcpy(c->snap_l, c->lbuf, page);
	memcpy(c->snap_c, c->cbuf, page);

	/* The bad WR, then valid WRITEs queued behind it. */
	make_wr(c, &wr[0], &sge[0], op, addr, rkey, len, 0, 100);
	for (i = 1; i <= FOLLOW; i++) {
		make_wr(c, &wr[i], &sge[i], OP_WRITE, (uintptr_t)c->cbuf + 1024 * i,
			c->cmr->rkey, 64, 1024 + 64 * i, 100 + i);
		wr[i - 1].next = &wr[i];
	}
	ret = ibv_post_send(c->qp_a, &wr[0], &bad_wr);
	if (ret)
		t_fatal("%s: post of the bad WR and %d WRITEs: %s", name, FOLLOW, t_errname(ret));

	if (!wait_cqe(c->cq_a, &wc, "bad WR", c))
		goto out;
	if (wc.wr_id != 100)
		t_fail("%s: first CQE is wr_id %llu (status %s), expected the bad WR (wr_id 100)",
		       name, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	else if (wc.status != IBV_WC_REM_ACCESS_ERR)
		t_fail("%s: bad WR (remote address %#llx, %u bytes, rkey %#x; MR [%p, +%d) rkey %s): status %s (vendor_err %#x), expected %s",
		       name, (unsigned long long)addr, len, rkey, mr_start, TLEN,
		       cond == C_STALE_RKEY ? "deregistered" : "valid",
		       ibv_wc_status_str(wc.status), wc.vendor_err,
		       ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	for (i = 1; i <= FOLLOW; i++) {
		if (!wait_cqe(c->cq_a, &wc, "WRITE queued behind the bad WR", c))
			goto out;
		if (wc.wr_id != 100U + i || wc.status != IBV_WC_WR_FLUSH_ERR)
			t_fail("%s: CQE %d: wr_id %llu status %s, expected the WRITE queued %d behind the bad WR (wr_id %d) with %s",
			       name, i + 1, (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status), i, 100 + i,
			       ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	}

	i = t_qp_state(c->qp_a);
	if (i != IBV_QPS_ERR)
		t_fail("%s: requester QP after the error completion is %s, expected ERR", name,
		       t_qp_state_str(i));

	/* A WR posted to the QP in ERR is flushed, too. */
	make_wr(c, &wr[0], &sge[0], OP_WRITE, (uintptr_t)c->cbuf + 3072, c->cmr->rkey, 64, 2048,
		200);
	ret = ibv_post_send(c->qp_a, &wr[0], &bad_wr);
	if (ret) {
		t_fail("%s: ibv_post_send on the QP in ERR: %s, expected 0 and a flushed CQE", name,
		       t_errname(ret));
	} else if (wait_cqe(c->cq_a, &wc, "WRITE posted in ERR", c)) {
		if (wc.wr_id != 200 || wc.status != IBV_WC_WR_FLUSH_ERR)
			t_fail("%s: WR posted in ERR: CQE wr_id %llu status %s, expected wr_id 200 with %s",
			       name, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			       ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	}
	if (ibv_poll_cq(c->cq_a, 1, &wc) > 0)
		t_fail("%s: extra CQE on A: wr_id %llu status %s", name,
		       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));

	/* Nothing moved. */
	usleep(100 * 1000);
	compare(c, "target buffer (MR and the rest of its pages)", c->tbuf, c->snap_t, 3 * page,
		mr_start);
	compare(c, "requester's local buffer", c->lbuf, c->snap_l, page, NULL);
	compare(c, "target of the flushed WRITEs", c->cbuf, c->snap_c, page, NULL);

	state_b = t_qp_state(c->qp_b);
	if (ibv_poll_cq(c->cq_b, 1, &wc) > 0)
		t_fail("%s: unexpected CQE on the responder: wr_id %llu status %s", name,
		       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	if (t_failures == fails)
		printf("ok   %-27s A: %s, %d WRITEs behind it and 1 posted later flushed, A in ERR, nothing written; B %s\n",
		       name, ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), FOLLOW,
		       t_qp_state_str(state_b));
	else
		printf("FAIL %-27s (see above); B %s\n", name, t_qp_state_str(state_b));

out:
	if ((ret = ibv_destroy_qp(c->qp_a)) || (ret = ibv_destroy_qp(c->qp_b)))
		t_fail("%s: destroy_qp: %s", name, t_errname(ret));
	if ((ret = ibv_destroy_cq(c->cq_a)) || (ret = ibv_destroy_cq(c->cq_b)))
		t_fail("%s: destroy_cq: %s", name, t_errname(ret));
	if (c->tmr && (ret = ibv_dereg_mr(c->tmr)))
		t_fail("%s: dereg_mr (target): %s", name, t_errname(ret));
	if ((ret = ibv_dereg_mr(c->lmr)) || (ret = ibv_dereg_mr(c->cmr)))
		t_fail("%s: dereg_mr: %s", name, t_errname(ret));
	munmap(c->tbuf, 3 * page);
	munmap(c->lbuf, page);
	munmap(c->cbuf, page);
	free(c->snap_t);
	free(c->snap_l);
	free(c->snap_c);
}

int main(int argc, char **argv)
{
	struct t_rc_opts opt;
	int op, cond, ran = 0, ret;
	char name[64];

	ctx = t_rc_start("scire_access", argc, argv, 1, &opt, &path);
	verbose = opt.verbose;
	page = sysconf(_SC_PAGESIZE);

	pd = ibv_alloc_pd(ctx);
	pd_other = ibv_alloc_pd(ctx);
	if (!pd || !pd_other)
		t_fatal("alloc_pd: %s", t_errname(errno));

	for (op = 0; op < OP_N; op++) {
		for (cond = 0; cond < C_N; cond++) {
			snprintf(name, sizeof(name), "%s %s", op_name[op], cond_name[cond]);
			if (opt.only && !strstr(name, opt.only))
				continue;
			if (verbose)
				printf("case %s\n", name);
			run_case(op, cond);
			ran++;
		}
	}
	if (!ran)
		t_fatal("no case matches '%s'", opt.only);

	if ((ret = ibv_dealloc_pd(pd)) || (ret = ibv_dealloc_pd(pd_other)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s: %d cases\n", t_name, opt.dev, ran);
	return T_EXIT_PASS;
}
