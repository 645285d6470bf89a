// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_rnr -d DEV [-g GIDIDX]
 *
 * Receiver Not Ready on RC (IBA vol 1 9.7.5.2.8): a SEND that finds no
 * receive WQE posted is answered with an RNR NAK, and the requester sends
 * it again after the RNR timer, as often as rnr_retry allows. For SENDs of
 * 16 bytes (on scire's same-host fast path a direct request) and 40000
 * bytes (two same-host units, or many wire packets), between a fresh pair
 * of RC QPs (requester A, responder B) on DEV:
 *
 *   waits	with rnr_retry 7 (retry for ever), two SENDs are posted while
 *		B has one receive WQE: the first completes on both sides,
 *		the second does not complete within 200 ms. Once a second
 *		receive is posted it completes too, in order, byte-exact.
 *		Both QPs are still in RTS.
 *   exceeded	with rnr_retry 0, a SEND to a B without receives completes
 *		with IBV_WC_RNR_RETRY_EXC_ERR, the SEND posted after it is
 *		flushed, and A is in ERR; B's CQ holds nothing.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire_rc.h"

#define WAIT_S		0.2	/* how long a SEND must stay unanswered */
#define DONE_S		5.0	/* how long a completion may take */
#define MAX_LEN		40000

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct t_path path;

struct rnr_pair {
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	uint8_t *sbuf, *rbuf;	/* 2 messages each */
	struct ibv_mr *smr, *rmr;
};

static void pair_open(struct rnr_pair *p, int rnr_retry)
{
	memset(p, 0, sizeof(*p));
	p->cq_a = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	p->cq_b = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!p->cq_a || !p->cq_b)
		t_fatal("create_cq: %s", t_errname(errno));
	p->qp_a = t_rc_qp(pd, p->cq_a, 4, 4);
	p->qp_b = t_rc_qp(pd, p->cq_b, 4, 4);
	p->sbuf = malloc(2 * MAX_LEN);
	p->rbuf = calloc(2, MAX_LEN);
	if (!p->sbuf || !p->rbuf)
		t_fatal("out of memory");
	t_rand_fill(p->sbuf, 2 * MAX_LEN);
	p->smr = ibv_reg_mr(pd, p->sbuf, 2 * MAX_LEN, IBV_ACCESS_LOCAL_WRITE);
	p->rmr = ibv_reg_mr(pd, p->rbuf, 2 * MAX_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!p->smr || !p->rmr)
		t_fatal("reg_mr: %s", t_errname(errno));
	t_rnr_retry = rnr_retry;
	t_rc_connect_pair(p->qp_a, p->qp_b, &path);
	t_rnr_retry = 7;
}

static void pair_close(struct rnr_pair *p)
{
	int ret;

	if ((ret = ibv_destroy_qp(p->qp_a)) || (ret = ibv_destroy_qp(p->qp_b)) ||
	    (ret = ibv_dereg_mr(p->smr)) || (ret = ibv_dereg_mr(p->rmr)) ||
	    (ret = ibv_destroy_cq(p->cq_a)) || (ret = ibv_destroy_cq(p->cq_b)))
		t_fail("tearing down: %s", t_errname(ret));
	free(p->sbuf);
	free(p->rbuf);
}

/* SEND message i (0 or 1) of len bytes from A. */
static void post_send(struct rnr_pair *p, int i, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(p->sbuf + i * MAX_LEN), len, p->smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 100 + i,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret = ibv_post_send(p->qp_a, &wr, &bad);

	if (ret)
		t_fatal("post_send: %s", t_errname(ret));
}

/* Post receive i (0 or 1) of MAX_LEN bytes on B. */
static void post_recv(struct rnr_pair *p, int i)
{
	struct ibv_sge sge = { (uintptr_t)(p->rbuf + i * MAX_LEN), MAX_LEN, p->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 200 + i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(p->qp_b, &wr, &bad);

	if (ret)
		t_fatal("post_recv: %s", t_errname(ret));
}

/* Expect one CQE on cq within DONE_S: wr_id, status, byte_len (if a RECV). */
static int expect(struct ibv_cq *cq, const char *what, uint64_t wr_id,
		  enum ibv_wc_status status, uint32_t byte_len)
{
	struct ibv_wc wc;

	if (!t_poll_one(cq, &wc, t_now() + DONE_S)) {
		t_fail("%s: no completion within %.0f s", what, DONE_S);
		return -1;
	}
	if (wc.wr_id != wr_id || wc.status != status ||
	    (wc.opcode == IBV_WC_RECV && wc.byte_len != byte_len)) {
		t_fail("%s: got wr_id %llu status %s byte_len %u, expected wr_id %llu status %s%s",
		       what, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		       wc.byte_len, (unsigned long long)wr_id, ibv_wc_status_str(status),
		       status == IBV_WC_SUCCESS && byte_len ? " with the message's length" : "");
		return -1;
	}
	return 0;
}

/* cq must stay empty for WAIT_S. */
static void expect_nothing(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (t_poll_one(cq, &wc, t_now() + WAIT_S))
		t_fail("%s: a completion came (wr_id %llu, %s) with no receive posted",
		       what, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

static void expect_state(struct ibv_qp *qp, const char *who, int state)
{
	int now = t_qp_state(qp);

	if (now != state)
		t_fail("%s is in %s, expected %s", who, t_qp_state_str(now), t_qp_state_str(state));
}

static void case_waits(uint32_t len)
{
	struct rnr_pair p;
	char what[96];
	int i;

	pair_open(&p, 7);
	post_recv(&p, 0);
	post_send(&p, 0, len);
	post_send(&p, 1, len);
	snprintf(what, sizeof(what), "waits %u B: first SEND (A)", len);
	expect(p.cq_a, what, 100, IBV_WC_SUCCESS, 0);
	snprintf(what, sizeof(what), "waits %u B: first RECV (B)", len);
	expect(p.cq_b, what, 200, IBV_WC_SUCCESS, len);
	snprintf(what, sizeof(what), "waits %u B: second SEND (A)", len);
	expect_nothing(p.cq_a, what);
	snprintf(what, sizeof(what), "waits %u B: B", len);
	expect_nothing(p.cq_b, what);

	post_recv(&p, 1);
	snprintf(what, sizeof(what), "waits %u B: second SEND (A) once a receive is posted", len);
	expect(p.cq_a, what, 101, IBV_WC_SUCCESS, 0);
	snprintf(what, sizeof(what), "waits %u B: second RECV (B)", len);
	expect(p.cq_b, what, 201, IBV_WC_SUCCESS, len);
	for (i = 0; i < 2; i++)
		if (memcmp(p.rbuf + i * MAX_LEN, p.sbuf + i * MAX_LEN, len))
			t_fail("waits %u B: message %d arrived with wrong bytes", len, i);
	expect_state(p.qp_a, "waits: A", IBV_QPS_RTS);
	expect_state(p.qp_b, "waits: B", IBV_QPS_RTS);
	pair_close(&p);
}

static void case_exceeded(uint32_t len)
{
	struct rnr_pair p;
	char what[96];

	pair_open(&p, 0);
	post_send(&p, 0, len);
	post_send(&p, 1, len);
	snprintf(what, sizeof(what), "exceeded %u B: SEND (A)", len);
	expect(p.cq_a, what, 100, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	snprintf(what, sizeof(what), "exceeded %u B: the SEND after it (A)", len);
	expect(p.cq_a, what, 101, IBV_WC_WR_FLUSH_ERR, 0);
	expect_state(p.qp_a, "exceeded: A", IBV_QPS_ERR);
	snprintf(what, sizeof(what), "exceeded %u B: B", len);
	expect_nothing(p.cq_b, what);
	pair_close(&p);
}

int main(int argc, char **argv)
{
	static const uint32_t lens[] = { 16, MAX_LEN };
	struct t_rc_opts opt;
	int ret;
	unsigned int i;

	ctx = t_rc_start("scire_rnr", argc, argv, 0, &opt, &path);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		case_waits(lens[i]);
		case_exceeded(lens[i]);
	}

	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s: waits and exceeded, at 16 and %d bytes\n", t_name, opt.dev, MAX_LEN);
	return T_EXIT_PASS;
}
