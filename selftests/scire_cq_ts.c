// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_cq_ts -d DEV [-g GIDIDX]
 *
 * Completion timestamps (ibv_create_cq_ex(3) IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
 * and _WALLCLOCK, ibv_query_rt_values_ex(3)):
 *
 *   clock	ibv_query_device_ex() reports the completion clock: 1 GHz
 *		(hca_core_clock 1000000 kHz) and a non-zero timestamp mask;
 *		ibv_query_rt_values_ex() reads it between two CLOCK_MONOTONIC
 *		readings taken around the call.
 *   stamps	over a loopback RC pair on a CQ created with both timestamp
 *		flags, each SEND's two completions (send and receive) carry a
 *		timestamp between CLOCK_MONOTONIC read before the post and after
 *		the poll, a wall-clock time between CLOCK_REALTIME read at the
 *		same two points (within 10 ms: the conversion reads two clocks),
 *		and the timestamps never go backwards in CQ order.
 *   flags	a CQ asking for a field scire does not fill (CVLAN) is refused
 *		with EOPNOTSUPP.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <inttypes.h>

#include "scire_rc.h"

#define ROUNDS		16
#define MSG_LEN		64
#define SLACK_NS	10000000ULL	/* wall-clock conversion tolerance */

static struct t_path path;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void check_clock(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr = {};
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t before, raw, after;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	if (ret)
		t_fatal("clock: ibv_query_device_ex: %s", t_errname(ret));
	if (attr.hca_core_clock != 1000000)
		t_fail("clock: hca_core_clock %" PRIu64 " kHz, expected 1000000 (1 GHz)",
		       attr.hca_core_clock);
	if (!attr.completion_timestamp_mask)
		t_fail("clock: completion_timestamp_mask 0: no timestamps");

	before = clock_ns(CLOCK_MONOTONIC);
	ret = ibv_query_rt_values_ex(ctx, &v);
	after = clock_ns(CLOCK_MONOTONIC);
	if (ret)
		t_fatal("clock: ibv_query_rt_values_ex: %s", t_errname(ret));
	if (!(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		t_fail("clock: ibv_query_rt_values_ex filled no RAW_CLOCK (comp_mask %#x)",
		       v.comp_mask);
	raw = (uint64_t)v.raw_clock.tv_sec * 1000000000ULL + v.raw_clock.tv_nsec;
	if (raw < before || raw > after)
		t_fail("clock: raw clock %" PRIu64 " ns outside [%" PRIu64 ", %" PRIu64 "] (CLOCK_MONOTONIC around the call)",
		       raw, before, after);
}

/* Poll until n completions came or 20 s passed; check each one's stamps. */
static void poll_stamps(struct ibv_cq_ex *cq, int round, int n, uint64_t m0, uint64_t r0,
			uint64_t *last)
{
	struct ibv_poll_cq_attr pa = {};
	double deadline = t_now() + 20;
	uint64_t ts[2] = {}, wall[2] = {}, m1, r1;
	int got = 0, ret, i;

	while (got < n) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT) {
			if (t_now() > deadline)
				t_fatal("stamps: round %d: %d of %d completions within 20 s",
					round, got, n);
			continue;
		}
		if (ret)
			t_fatal("stamps: ibv_start_poll: %s", t_errname(ret));
		do {
			if (cq->status != IBV_WC_SUCCESS)
				t_fatal("stamps: round %d: %s completion with status %s",
					round, t_wc_opcode_str(ibv_wc_read_opcode(cq)),
					ibv_wc_status_str(cq->status));
			if (got < 2) {
				ts[got] = ibv_wc_read_completion_ts(cq);
				wall[got] = ibv_wc_read_completion_wallclock_ns(cq);
			}
			got++;
		} while (got < n && !(ret = ibv_next_poll(cq)));
		ibv_end_poll(cq);
		if (ret && ret != ENOENT)
			t_fatal("stamps: ibv_next_poll: %s", t_errname(ret));
	}
	m1 = clock_ns(CLOCK_MONOTONIC);
	r1 = clock_ns(CLOCK_REALTIME);
	for (i = 0; i < n && i < 2; i++) {
		if (ts[i] < m0 || ts[i] > m1)
			t_fail("stamps: round %d, completion %d: timestamp %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "] (CLOCK_MONOTONIC before the post, after the poll)",
			       round, i, ts[i], m0, m1);
		if (ts[i] < *last)
			t_fail("stamps: round %d, completion %d: timestamp %" PRIu64 " before the previous completion's %" PRIu64,
			       round, i, ts[i], *last);
		*last = ts[i];
		if (wall[i] + SLACK_NS < r0 || wall[i] > r1 + SLACK_NS)
			t_fail("stamps: round %d, completion %d: wall clock %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "] by more than 10 ms",
			       round, i, wall[i], r0, r1);
	}
}

static void check_stamps(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	uint64_t last = 0, m0, r0;
	struct ibv_qp *a, *b;
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	char *buf;
	int round, ret;

	cq = ibv_create_cq_ex(ctx, &ca);
	if (!cq)
		t_fatal("stamps: ibv_create_cq_ex with both timestamp flags: %s", t_errname(errno));
	a = t_rc_qp(pd, ibv_cq_ex_to_cq(cq), 4, 4);
	b = t_rc_qp(pd, ibv_cq_ex_to_cq(cq), 4, 4);
	t_rc_connect_pair(a, b, &path);
	buf = calloc(1, 2 * MSG_LEN);
	if (!buf)
		t_fatal("calloc: %s", t_errname(errno));
	mr = ibv_reg_mr(pd, buf, 2 * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		t_fatal("stamps: reg_mr: %s", t_errname(errno));

	for (round = 0; round < ROUNDS; round++) {
		struct ibv_sge rs = { (uintptr_t)buf + MSG_LEN, MSG_LEN, mr->lkey };
		struct ibv_sge ss = { (uintptr_t)buf, MSG_LEN, mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 }, *brw;
		struct ibv_send_wr swr = {
			.wr_id = 1, .sg_list = &ss, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bsw;

		if ((ret = ibv_post_recv(b, &rwr, &brw)))
			t_fatal("stamps: post_recv: %s", t_errname(ret));
		m0 = clock_ns(CLOCK_MONOTONIC);
		r0 = clock_ns(CLOCK_REALTIME);
		if ((ret = ibv_post_send(a, &swr, &bsw)))
			t_fatal("stamps: post_send: %s", t_errname(ret));
		poll_stamps(cq, round, 2, m0, r0, &last);
	}

	if ((ret = ibv_destroy_qp(a)) || (ret = ibv_destroy_qp(b)) ||
	    (ret = ibv_destroy_cq(ibv_cq_ex_to_cq(cq))) || (ret = ibv_dereg_mr(mr)))
		t_fail("stamps: teardown: %s", t_errname(ret));
	free(buf);
}

static void check_flags(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_CVLAN,
	};
	struct ibv_cq_ex *cq;

	cq = ibv_create_cq_ex(ctx, &ca);
	if (cq) {
		t_fail("flags: a CQ with IBV_WC_EX_WITH_CVLAN was created");
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	} else if (errno != EOPNOTSUPP) {
		t_fail("flags: a CQ with IBV_WC_EX_WITH_CVLAN: %s, expected EOPNOTSUPP",
		       t_errname(errno));
	}
}

int main(int argc, char **argv)
{
	struct t_rc_opts opt;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	ctx = t_rc_start("scire_cq_ts", argc, argv, 0, &opt, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));

	check_clock(ctx);
	check_stamps(ctx, pd);
	check_flags(ctx);

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s: clock, %d rounds of stamps, flags\n", t_name, opt.dev, ROUNDS);
	return T_EXIT_PASS;
}
