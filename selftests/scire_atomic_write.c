// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_atomic_write -d DEV [-g GIDIDX] [-D DEV2 [-G GIDIDX2]] [-C] [-s SEED] [-v]
 *
 * IBA 1.5 RDMA ATOMIC WRITE between two RC QPs: requester A on DEV,
 * responder B on DEV (through DEV's own RoCEv2 GID) or, with -D, on DEV2
 * (then A and B meet through each other's GIDs, as across a veth). Each
 * check is named and says what differed:
 *
 *   caps        ibv_create_qp_ex() takes IBV_QP_EX_WITH_ATOMIC_WRITE on
 *               RC; with -C the device reports IB_UVERBS_DEVICE_ATOMIC_WRITE
 *               in device_cap_flags_ex (kernels that define the bit)
 *   land        ATOMIC WRITEs with ibv_wr_atomic_write() and (scire's
 *               provider only: rxe's sends no rkey for it) with
 *               ibv_post_send(IBV_WR_ATOMIC_WRITE) at the first, last and
 *               inner words of a 4 KiB MR complete with IBV_WC_SUCCESS and
 *               opcode IBV_WC_ATOMIC_WRITE; the 8 bytes land as given, in
 *               memory order, and no other byte of the buffer changes
 *   mixed       ATOMIC WRITE, FETCH_AND_ADD and CMP_AND_SWP on one word, in
 *               one chain: each atomic sees the value the write before it
 *               left (the operations are ordered and atomic together)
 *   burst       200 ATOMIC WRITEs posted at once (more than the QPs'
 *               max_rd_atomic) all complete, in order, and all land
 *   bad-rkey, no-right, past-end, misaligned
 *               an ATOMIC WRITE with a wrong rkey, to an MR without
 *               IBV_ACCESS_REMOTE_WRITE, past the MR's end, and to an
 *               address that is not 8-byte aligned completes with
 *               IBV_WC_REM_ACCESS_ERR (the first three) or
 *               IBV_WC_REM_INV_REQ_ERR (misaligned, as rdma_rxe gives it),
 *               changes no byte, and B's CQ stays empty
 *   post-checks ibv_post_send(IBV_WR_ATOMIC_WRITE) with an SGE of 4 bytes,
 *               or on a UC QP, is refused with EINVAL (scire's provider
 *               only: another device's provider is not ours to check)
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <getopt.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "scire_rc.h"

/*
 * IB_UVERBS_DEVICE_ATOMIC_WRITE of the kernel's uapi (6.2 on), reported in
 * device_cap_flags_ex; rdma-core 44's headers do not name it.
 */
#define T_DEVICE_ATOMIC_WRITE	(1ULL << 40)

#define BUF_LEN		4096
#define BURST		200
#define WAIT_S		20.0

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct t_path path;
	bool scire;
};

struct pair {
	struct ibv_qp *a;	/* requester, on side A */
	struct ibv_qp_ex *ax;
	struct ibv_qp *b;	/* responder, on side B */
};

static struct side sa, sb;
static bool same_dev = true;
static int verbose;

/* Target memory on B, and what it must hold. */
static uint8_t *tbuf, *tshadow;
static struct ibv_mr *tmr, *tmr_ro;
/* A's local buffer for atomic results. */
static uint64_t *abuf;
static struct ibv_mr *amr;

static void side_open(struct side *s, const char *name, int gid)
{
	s->ctx = t_open_path(name, gid, &s->path);
	s->scire = !strncmp(ibv_get_device_name(s->ctx->device), "scire", 5);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		t_fatal("%s: ibv_alloc_pd: %s", name, t_errname(errno));
	s->cq = ibv_create_cq(s->ctx, 2 * BURST + 16, NULL, NULL, 0);
	if (!s->cq)
		t_fatal("%s: ibv_create_cq: %s", name, t_errname(errno));
}

static struct ibv_qp *qp_ex(struct side *s, enum ibv_qp_type type, uint64_t ops,
			    int *err)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = BURST + 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	qp = ibv_create_qp_ex(s->ctx, &a);
	*err = qp ? 0 : errno;
	return qp;
}

/* A fresh pair: A with the ibv_wr_* API, connected to B. */
static void pair_new(struct pair *p)
{
	uint32_t ab = t_rand64() & 0xffffff, ba = t_rand64() & 0xffffff;
	struct t_path to_b = sa.path, to_a = sb.path;
	int err;

	p->a = qp_ex(&sa, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE |
		     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_RDMA_WRITE, &err);
	if (!p->a)
		t_fatal("caps: ibv_create_qp_ex(RC, IBV_QP_EX_WITH_ATOMIC_WRITE) on %s: %s",
			ibv_get_device_name(sa.ctx->device), t_errname(err));
	p->ax = ibv_qp_to_qp_ex(p->a);
	p->b = qp_ex(&sb, IBV_QPT_RC, 0, &err);
	if (!p->b)
		t_fatal("create responder QP: %s", t_errname(err));
	/* Each side sends to the other's GID from its own; one path MTU. */
	to_b.gid = sb.path.gid;
	to_a.gid = sa.path.gid;
	if (to_a.mtu < to_b.mtu)
		to_b.mtu = to_a.mtu;
	to_a.mtu = to_b.mtu;
	t_rc_connect(p->a, p->b->qp_num, ba, ab, &to_b);
	t_rc_connect(p->b, p->a->qp_num, ab, ba, &to_a);
}

static void pair_free(struct pair *p)
{
	struct ibv_wc wc;

	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	while (ibv_poll_cq(sa.cq, 1, &wc) > 0)
		;
	while (!same_dev && ibv_poll_cq(sb.cq, 1, &wc) > 0)
		;
}

static uint64_t tva(size_t off)
{
	return (uint64_t)(uintptr_t)tbuf + off;
}

static void wr_aw(struct pair *p, uint64_t wr_id, uint32_t rkey, uint64_t va,
		  const void *val)
{
	ibv_wr_start(p->ax);
	p->ax->wr_id = wr_id;
	p->ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p->ax, rkey, va, val);
	if (ibv_wr_complete(p->ax))
		t_fatal("ibv_wr_complete(ATOMIC_WRITE): %s", t_errname(errno));
}

static int post_aw_legacy(struct ibv_qp *qp, uint64_t wr_id, uint32_t rkey, uint64_t va,
			  void *val, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)val, .length = len, .lkey = amr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Wait for A's CQE wr_id; 0 if it came with status and opcode as expected. */
static int expect_cqe(const char *check, uint64_t wr_id, enum ibv_wc_status status,
		      enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;

	if (!t_poll_one(sa.cq, &wc, t_now() + WAIT_S)) {
		t_fail("%s: no completion for wr_id %llu within %.0f s", check,
		       (unsigned long long)wr_id, WAIT_S);
		return -1;
	}
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == IBV_WC_SUCCESS && wc.opcode != opcode)) {
		t_fail("%s: CQE wr_id %llu %s opcode %s, expected wr_id %llu %s opcode %s",
		       check, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		       t_wc_opcode_str(wc.opcode), (unsigned long long)wr_id,
		       ibv_wc_status_str(status), t_wc_opcode_str(opcode));
		return -1;
	}
	return 0;
}

/* Every byte of the target buffer is what the shadow says. */
static void check_target(const char *check)
{
	size_t i;

	for (i = 0; i < BUF_LEN; i++) {
		if (tbuf[i] != tshadow[i]) {
			t_fail("%s: target byte %zu is %#04x, expected %#04x", check, i,
			       tbuf[i], tshadow[i]);
			return;
		}
	}
}

static void check_b_cq_empty(const char *check)
{
	struct ibv_wc wc;

	/* Same device: B's CQEs would be in A's CQ, checked by the caller. */
	if (same_dev)
		return;
	if (ibv_poll_cq(sb.cq, 1, &wc) > 0)
		t_fail("%s: responder CQ has a CQE (wr_id %llu, %s), expected none", check,
		       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

static void check_caps(int want_cap)
{
	struct ibv_device_attr_ex attr = {};
	int ret;

	ret = ibv_query_device_ex(sa.ctx, NULL, &attr);
	if (ret)
		t_fatal("caps: ibv_query_device_ex: %s", t_errname(ret));
	if (verbose)
		printf("caps: device_cap_flags_ex %#llx\n",
		       (unsigned long long)attr.device_cap_flags_ex);
	if (want_cap && !(attr.device_cap_flags_ex & T_DEVICE_ATOMIC_WRITE))
		t_fail("caps: %s does not report IB_UVERBS_DEVICE_ATOMIC_WRITE (device_cap_flags_ex %#llx)",
		       ibv_get_device_name(sa.ctx->device),
		       (unsigned long long)attr.device_cap_flags_ex);
}

static void check_land(void)
{
	static const size_t offs[] = { 0, 8, 2048, 4000, BUF_LEN - 8 };
	struct pair p;
	uint8_t val[8];
	size_t i;
	int legacy;

	pair_new(&p);
	for (legacy = 0; legacy < 2; legacy++) {
		/*
		 * rdma-core's rxe provider (44 to 56 at least) turns an
		 * ibv_post_send(IBV_WR_ATOMIC_WRITE) into a request with no
		 * rkey or address (its convert_send_wr() has no case for
		 * it), which a responder rightly refuses: only our
		 * provider's legacy path is checked.
		 */
		if (legacy && !sa.scire) {
			printf("land: ibv_post_send(IBV_WR_ATOMIC_WRITE) not checked on %s (not scire's provider)\n",
			       ibv_get_device_name(sa.ctx->device));
			break;
		}
		for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			char what[64];
			uint64_t id = 1000 + legacy * 100 + i;

			snprintf(what, sizeof(what), "land (%s, offset %zu)",
				 legacy ? "ibv_post_send" : "ibv_wr_atomic_write", offs[i]);
			t_rand_fill(val, sizeof(val));
			if (legacy) {
				int err;

				memcpy(abuf, val, sizeof(val));
				err = post_aw_legacy(p.a, id, tmr->rkey, tva(offs[i]), abuf, 8);
				if (err)
					t_fatal("%s: ibv_post_send: %s", what, t_errname(err));
				/* The value was taken at the post. */
				memset(abuf, 0x5a, sizeof(val));
			} else {
				wr_aw(&p, id, tmr->rkey, tva(offs[i]), val);
			}
			if (expect_cqe(what, id, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE))
				continue;
			memcpy(tshadow + offs[i], val, sizeof(val));
			check_target(what);
		}
	}
	check_b_cq_empty("land");
	pair_free(&p);
}

static void check_mixed(void)
{
	const size_t off = 512;
	uint64_t x = t_rand64() & ~0xffULL, y = t_rand64(), z = t_rand64(), got;
	struct pair p;

	pair_new(&p);
	abuf[0] = abuf[1] = 0;
	ibv_wr_start(p.ax);
	p.ax->wr_flags = IBV_SEND_SIGNALED;
	p.ax->wr_id = 1;
	ibv_wr_atomic_write(p.ax, tmr->rkey, tva(off), &x);
	p.ax->wr_id = 2;
	ibv_wr_atomic_fetch_add(p.ax, tmr->rkey, tva(off), 3);
	ibv_wr_set_sge(p.ax, amr->lkey, (uintptr_t)&abuf[0], 8);
	p.ax->wr_id = 3;
	ibv_wr_atomic_write(p.ax, tmr->rkey, tva(off), &y);
	p.ax->wr_id = 4;
	ibv_wr_atomic_cmp_swp(p.ax, tmr->rkey, tva(off), y, z);
	ibv_wr_set_sge(p.ax, amr->lkey, (uintptr_t)&abuf[1], 8);
	if (ibv_wr_complete(p.ax))
		t_fatal("mixed: ibv_wr_complete: %s", t_errname(errno));
	if (expect_cqe("mixed: ATOMIC WRITE x", 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE) ||
	    expect_cqe("mixed: FETCH_AND_ADD 3", 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD) ||
	    expect_cqe("mixed: ATOMIC WRITE y", 3, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE) ||
	    expect_cqe("mixed: CMP_AND_SWP y->z", 4, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP)) {
		pair_free(&p);
		return;
	}
	if (abuf[0] != x)
		t_fail("mixed: FETCH_AND_ADD after ATOMIC WRITE %#llx returned %#llx",
		       (unsigned long long)x, (unsigned long long)abuf[0]);
	if (abuf[1] != y)
		t_fail("mixed: CMP_AND_SWP after ATOMIC WRITE %#llx returned %#llx",
		       (unsigned long long)y, (unsigned long long)abuf[1]);
	memcpy(&got, tbuf + off, 8);
	if (got != z)
		t_fail("mixed: the word holds %#llx, expected %#llx (swapped in)",
		       (unsigned long long)got, (unsigned long long)z);
	memcpy(tshadow + off, &z, 8);
	check_target("mixed");
	check_b_cq_empty("mixed");
	pair_free(&p);
}

static void check_burst(void)
{
	static uint8_t vals[BURST][8];
	struct pair p;
	int i;

	pair_new(&p);
	ibv_wr_start(p.ax);
	for (i = 0; i < BURST; i++) {
		t_rand_fill(vals[i], 8);
		p.ax->wr_id = 5000 + i;
		p.ax->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(p.ax, tmr->rkey, tva(8 * (size_t)(i % (BUF_LEN / 8))),
				    vals[i]);
	}
	if (ibv_wr_complete(p.ax))
		t_fatal("burst: ibv_wr_complete(%d ATOMIC WRITEs): %s", BURST, t_errname(errno));
	for (i = 0; i < BURST; i++) {
		if (expect_cqe("burst", 5000 + i, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE))
			break;
		memcpy(tshadow + 8 * (i % (BUF_LEN / 8)), vals[i], 8);
	}
	check_target("burst");
	check_b_cq_empty("burst");
	pair_free(&p);
}

static void check_bad(const char *check, uint32_t rkey, uint64_t va,
		      enum ibv_wc_status status)
{
	uint8_t val[8];
	struct pair p;

	pair_new(&p);
	t_rand_fill(val, sizeof(val));
	wr_aw(&p, 77, rkey, va, val);
	expect_cqe(check, 77, status, IBV_WC_ATOMIC_WRITE);
	if (t_qp_state(p.a) != IBV_QPS_ERR)
		t_fail("%s: requester QP is %s, expected ERR", check,
		       t_qp_state_str(t_qp_state(p.a)));
	check_target(check);
	check_b_cq_empty(check);
	if (verbose)
		printf("%s: responder QP %s\n", check, t_qp_state_str(t_qp_state(p.b)));
	pair_free(&p);
}

static void check_post(void)
{
	struct ibv_qp *uc;
	struct pair p;
	int err;

	if (!sa.scire)
		return;
	pair_new(&p);
	memset(abuf, 0, 8);
	err = post_aw_legacy(p.a, 1, tmr->rkey, tva(0), abuf, 4);
	if (err != EINVAL)
		t_fail("post-checks: ibv_post_send(ATOMIC_WRITE, 4-byte SGE) returned %s, expected EINVAL",
		       t_errname(err));
	pair_free(&p);

	uc = qp_ex(&sa, IBV_QPT_UC, 0, &err);
	if (!uc)
		t_fatal("post-checks: create UC QP: %s", t_errname(err));
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

		if (ibv_modify_qp(uc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
			t_fatal("post-checks: UC QP to INIT: %s", t_errname(errno));
	}
	err = post_aw_legacy(uc, 1, tmr->rkey, tva(0), abuf, 8);
	if (err != EINVAL)
		t_fail("post-checks: ibv_post_send(ATOMIC_WRITE) on a UC QP returned %s, expected EINVAL",
		       t_errname(err));
	ibv_destroy_qp(uc);
	uc = qp_ex(&sa, IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE, &err);
	if (uc) {
		t_fail("post-checks: ibv_create_qp_ex(UC, IBV_QP_EX_WITH_ATOMIC_WRITE) succeeded, expected a refusal");
		ibv_destroy_qp(uc);
	}
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *dev2 = NULL;
	int gid = -1, gid2 = -1, want_cap = 0, opt;
	uint32_t seed = t_fresh_seed();
	uint8_t *page;

	t_name = "scire_atomic_write";
	while ((opt = getopt(argc, argv, "d:g:D:G:Cs:v")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'D': dev2 = optarg; break;
		case 'G': gid2 = atoi(optarg); break;
		case 'C': want_cap = 1; break;
		case 's': seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-g GIDIDX] [-D DEV2 [-G GIDIDX2]] [-C] [-s SEED] [-v]\n",
				argv[0]);
			return T_EXIT_FAIL;
		}
	}
	if (!dev)
		t_fatal("-d DEV is required");
	printf("seed %u\n", seed);
	t_rng_seed(seed);

	side_open(&sa, dev, gid);
	if (dev2) {
		side_open(&sb, dev2, gid2);
		same_dev = false;
	} else {
		sb = sa;
	}
	printf("requester %s, responder %s\n", ibv_get_device_name(sa.ctx->device),
	       ibv_get_device_name(sb.ctx->device));

	/* The target sits in the 2nd of 3 pages, the pages around it guarded. */
	page = mmap(NULL, 3 * BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		t_fatal("mmap: %s", t_errname(errno));
	tbuf = page + BUF_LEN;
	tshadow = malloc(BUF_LEN);
	abuf = aligned_alloc(64, 64);
	if (!tshadow || !abuf)
		t_fatal("out of memory");
	t_rand_fill(tbuf, BUF_LEN);
	memcpy(tshadow, tbuf, BUF_LEN);
	tmr = ibv_reg_mr(sb.pd, tbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	/* Half of it again, readable only. */
	tmr_ro = ibv_reg_mr(sb.pd, tbuf, BUF_LEN / 2, IBV_ACCESS_REMOTE_READ);
	amr = ibv_reg_mr(sa.pd, abuf, 64, IBV_ACCESS_LOCAL_WRITE);
	if (!tmr || !tmr_ro || !amr)
		t_fatal("ibv_reg_mr: %s", t_errname(errno));

	check_caps(want_cap);
	check_land();
	check_mixed();
	check_burst();
	check_bad("bad-rkey", tmr->rkey ^ 0x80, tva(16), IBV_WC_REM_ACCESS_ERR);
	check_bad("no-right", tmr_ro->rkey, tva(16), IBV_WC_REM_ACCESS_ERR);
	check_bad("past-end", tmr->rkey, tva(BUF_LEN),
		  IBV_WC_REM_ACCESS_ERR);
	check_bad("misaligned", tmr->rkey, tva(20), IBV_WC_REM_INV_REQ_ERR);
	check_post();

	if (t_failures) {
		printf("%d check(s) failed (seed %u)\n", t_failures, seed);
		return T_EXIT_FAIL;
	}
	printf("all checks passed\n");
	return T_EXIT_PASS;
}
