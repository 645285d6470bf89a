// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_qp_reset -d DEV [-g GIDIDX]
 *
 * A QP's completions leave its CQ when the QP goes to RESET or is
 * destroyed (IBA vol 1 10.3.1: RESET discards the QP's work; mlx5 removes
 * the CQEs too, and rdma-core's pyverbs tests test_mr_rereg_addr/pd rely
 * on it), while another QP's completions on the same CQ stay, in order.
 * RC QPs A and B (connected), C and D (never connected) share one CQ:
 *
 *   reset	receive flushes are made one at a time (arm the CQ, make one,
 *		wait for its event) in the order C1 A1 C2 A2; after A moves
 *		to RESET the CQ holds exactly C1 C2, in that order.
 *   destroy	flushes D1 C3; after D is destroyed the CQ holds exactly C3.
 *   traffic	A and B are connected again (A from RESET): a SEND from A
 *		completes on both sides, byte-exact, and the first CQEs the
 *		CQ returns are those two successes.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>

#include "scire_rc.h"

#define EVENT_S		10.0	/* how long one flush CQE may take */
#define MSG_LEN		64

static struct t_path path;
static struct ibv_context *ctx;
static struct ibv_comp_channel *chan;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void to_state(struct ibv_qp *qp, enum ibv_qp_state state, const char *name)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int ret;

	if (state == IBV_QPS_INIT) {
		a.pkey_index = 0;
		a.port_num = 1;
		a.qp_access_flags = T_RC_ACCESS;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	} else {
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (ret)
		t_fatal("modify QP %s (%#x) to %s: %s", name, qp->qp_num,
			t_qp_state_str(state), t_errname(ret));
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_mr *mr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = MSG_LEN, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(qp, &wr, &bad);
	if (ret)
		t_fatal("post_recv wr_id %#" PRIx64 " on QP %#x: %s", wr_id,
			qp->qp_num, t_errname(ret));
}

static void arm(void)
{
	int ret = ibv_req_notify_cq(cq, 0);

	if (ret)
		t_fatal("req_notify_cq: %s", t_errname(ret));
}

/* Wait for the completion event that the CQE made after arm() raises. */
static void wait_event(const char *what)
{
	struct pollfd pfd = { .fd = chan->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ret;

	ret = poll(&pfd, 1, (int)(EVENT_S * 1000));
	if (ret < 0)
		t_fatal("poll on the completion channel: %s", t_errname(errno));
	if (!ret)
		t_fatal("%s: no completion event within %.0f s", what, EVENT_S);
	if (ibv_get_cq_event(chan, &ev_cq, &ev_ctx))
		t_fatal("%s: get_cq_event: %s", what, t_errname(errno));
	if (ev_cq != cq)
		t_fatal("%s: event for another CQ", what);
	ibv_ack_cq_events(cq, 1);
}

/* The CQ must hold exactly these flushes of qp, in this order. */
static void expect_flushes(const char *what, struct ibv_qp *qp,
			   const uint64_t *wr_ids, int n)
{
	struct ibv_wc wc[8];
	int got, i;

	got = ibv_poll_cq(cq, 8, wc);
	if (got < 0)
		t_fatal("%s: poll_cq returned %d", what, got);
	for (i = 0; i < got && i < n; i++) {
		if (wc[i].qp_num != qp->qp_num || wc[i].wr_id != wr_ids[i] ||
		    wc[i].status != IBV_WC_WR_FLUSH_ERR)
			t_fail("%s: CQE %d is QP %#x wr_id %#" PRIx64 " %s, expected QP %#x wr_id %#" PRIx64 " WR_FLUSH_ERR",
			       what, i, wc[i].qp_num, wc[i].wr_id,
			       ibv_wc_status_str(wc[i].status), qp->qp_num,
			       wr_ids[i]);
	}
	for (; i < got; i++)
		t_fail("%s: unexpected CQE %d: QP %#x wr_id %#" PRIx64 " %s", what,
		       i, wc[i].qp_num, wc[i].wr_id,
		       ibv_wc_status_str(wc[i].status));
	if (got < n)
		t_fail("%s: the CQ held %d CQEs, expected %d", what, got, n);
}

int main(int argc, char **argv)
{
	static const uint64_t c12[] = { 0xc1, 0xc2 }, c3[] = { 0xc3 };
	struct ibv_qp *a, *b, *c, *d;
	struct ibv_mr *mr_a, *mr_b;
	char *buf_a, *buf_b;
	struct t_rc_opts opt;
	int ret, i, seen_send = 0, seen_recv = 0;
	double deadline;

	ctx = t_rc_start("scire_qp_reset", argc, argv, 0, &opt, &path);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	chan = ibv_create_comp_channel(ctx);
	if (!chan)
		t_fatal("create_comp_channel: %s", t_errname(errno));
	if (fcntl(chan->fd, F_SETFL, fcntl(chan->fd, F_GETFL) | O_NONBLOCK))
		t_fatal("completion channel O_NONBLOCK: %s", t_errname(errno));
	cq = ibv_create_cq(ctx, 32, NULL, chan, 0);
	if (!cq)
		t_fatal("create_cq: %s", t_errname(errno));
	buf_a = calloc(1, MSG_LEN);
	buf_b = calloc(1, MSG_LEN);
	if (!buf_a || !buf_b)
		t_fatal("out of memory");
	mr_a = ibv_reg_mr(pd, buf_a, MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	mr_b = ibv_reg_mr(pd, buf_b, MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_a || !mr_b)
		t_fatal("reg_mr: %s", t_errname(errno));

	a = t_rc_qp(pd, cq, 4, 4);
	b = t_rc_qp(pd, cq, 4, 4);
	c = t_rc_qp(pd, cq, 4, 4);
	d = t_rc_qp(pd, cq, 4, 4);
	t_rc_connect_pair(a, b, &path);
	to_state(c, IBV_QPS_INIT, "C");
	to_state(d, IBV_QPS_INIT, "D");

	/* reset: C1 A1 C2 A2, then A to RESET leaves C1 C2. */
	post_recv(a, 0xa1, mr_a);
	post_recv(c, 0xc1, mr_a);
	arm();
	to_state(c, IBV_QPS_ERR, "C");
	wait_event("C1 flush");
	arm();
	to_state(a, IBV_QPS_ERR, "A");
	wait_event("A1 flush");
	arm();
	post_recv(c, 0xc2, mr_a);
	wait_event("C2 flush");
	arm();
	post_recv(a, 0xa2, mr_a);
	wait_event("A2 flush");
	to_state(a, IBV_QPS_RESET, "A");
	expect_flushes("reset: after A went to RESET", c, c12, 2);

	/* destroy: D1 C3, then destroying D leaves C3. */
	post_recv(d, 0xd1, mr_a);
	arm();
	to_state(d, IBV_QPS_ERR, "D");
	wait_event("D1 flush");
	arm();
	post_recv(c, 0xc3, mr_a);
	wait_event("C3 flush");
	ret = ibv_destroy_qp(d);
	if (ret)
		t_fatal("destroy QP D: %s", t_errname(ret));
	expect_flushes("destroy: after D was destroyed", c, c3, 1);

	/* traffic: A (from RESET) and B connected again. */
	t_rc_connect_pair(a, b, &path);
	t_rand_fill(buf_a, MSG_LEN);
	memset(buf_b, 0, MSG_LEN);
	post_recv(b, 0xb1, mr_b);
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf_a, .length = MSG_LEN,
			.lkey = mr_a->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 0xa3, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		ret = ibv_post_send(a, &wr, &bad);
		if (ret)
			t_fatal("post_send on A: %s", t_errname(ret));
	}
	deadline = t_now() + EVENT_S;
	for (i = 0; i < 2; i++) {
		struct ibv_wc wc;

		if (!t_poll_one(cq, &wc, deadline)) {
			t_fail("traffic: CQE %d did not come within %.0f s", i, EVENT_S);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			t_fail("traffic: CQE %d is QP %#x wr_id %#" PRIx64 " %s, expected a success",
			       i, wc.qp_num, wc.wr_id, ibv_wc_status_str(wc.status));
		} else if (wc.qp_num == a->qp_num && wc.wr_id == 0xa3 &&
			   wc.opcode == IBV_WC_SEND) {
			seen_send++;
		} else if (wc.qp_num == b->qp_num && wc.wr_id == 0xb1 &&
			   wc.opcode == IBV_WC_RECV && wc.byte_len == MSG_LEN) {
			seen_recv++;
		} else {
			t_fail("traffic: CQE %d is QP %#x wr_id %#" PRIx64 " opcode %s len %u, expected A's SEND or B's RECV of %d bytes",
			       i, wc.qp_num, wc.wr_id, t_wc_opcode_str(wc.opcode),
			       wc.byte_len, MSG_LEN);
		}
	}
	if (seen_send != 1 || seen_recv != 1)
		t_fail("traffic: %d SEND and %d RECV completions, expected one each",
		       seen_send, seen_recv);
	else if (memcmp(buf_a, buf_b, MSG_LEN))
		t_fail("traffic: B received other bytes than A sent");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(c);
	ibv_dereg_mr(mr_a);
	ibv_dereg_mr(mr_b);
	free(buf_a);
	free(buf_b);
	if ((ret = ibv_destroy_cq(cq)))
		t_fail("destroy_cq: %s", t_errname(ret));
	ibv_destroy_comp_channel(chan);
	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s: reset, destroy, traffic\n", t_name, opt.dev);
	return T_EXIT_PASS;
}
