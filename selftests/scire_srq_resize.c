// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_srq_resize -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * Resizing a shared receive queue (ibv_modify_srq(3) with IBV_SRQ_MAX_WR,
 * IBA 11.2.3.3):
 *
 *   caps	the device claims IBV_DEVICE_SRQ_RESIZE.
 *   grow	an SRQ of 16 WQEs, full (the 17th post gets ENOMEM), grows to
 *		64 with its 16 WQEs still posted; 48 more are posted; 64
 *		SENDs to an RC QP on it complete in posting order, each into
 *		the buffer of its WQE, the first 16 included.
 *   shrink	with 10 WQEs posted in an SRQ of 64: a resize to 8 is refused
 *		(EINVAL) and changes nothing; to 16 works; the 10 WQEs are
 *		taken in order by 10 SENDs.
 *   again	three resizes in a row between sends (32, 128, 32), WQEs
 *		posted in between, every message lands in order.
 *   range	max_wr 0 and beyond max_srq_wr are refused (EINVAL), as is a
 *		size below an armed limit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <inttypes.h>

#include "scire_rc.h"

#define MSG_LEN		32
#define MAX_MSGS	128

static struct t_path path;

struct srq_rig {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;	/* a sends; b receives from the SRQ */
	uint8_t *buf;		/* MAX_MSGS receive slots, then the send buffer */
	struct ibv_mr *mr;
	uint32_t posted;	/* receives posted so far: the next wr_id */
	uint32_t taken;		/* receives completed so far */
};

static uint32_t srq_max_wr(struct srq_rig *r)
{
	struct ibv_srq_attr attr = {};
	int ret = ibv_query_srq(r->srq, &attr);

	if (ret)
		t_fatal("query_srq: %s", t_errname(ret));
	return attr.max_wr;
}

static int srq_resize(struct srq_rig *r, uint32_t max_wr)
{
	struct ibv_srq_attr attr = { .max_wr = max_wr };

	return ibv_modify_srq(r->srq, &attr, IBV_SRQ_MAX_WR);
}

/* Post n receives, wr_id = their order, each into its own slot. */
static int post_recvs(struct srq_rig *r, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = r->posted;
		struct ibv_sge sge = {
			(uintptr_t)r->buf + (id % MAX_MSGS) * MSG_LEN, MSG_LEN,
			r->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;
		int ret = ibv_post_srq_recv(r->srq, &wr, &bad);

		if (ret)
			return ret;
		memset(r->buf + (id % MAX_MSGS) * MSG_LEN, 0xee, MSG_LEN);
		r->posted++;
	}
	return 0;
}

/*
 * Send n messages from a, message k carrying the number of the receive it
 * should land in; check each receive completes in order, into its slot,
 * with its message.
 */
static void send_and_check(struct srq_rig *r, uint32_t n, const char *what)
{
	uint8_t *sbuf = r->buf + MAX_MSGS * MSG_LEN;
	uint32_t sends = 0, recvs = 0;
	double deadline = t_now() + 20;
	struct ibv_wc wc;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t id = r->taken + k;
		struct ibv_sge sge = { (uintptr_t)sbuf, MSG_LEN, r->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = id, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		int ret;

		for (int i = 0; i < MSG_LEN; i++)
			sbuf[i] = (uint8_t)(id * 7 + i);
		ret = ibv_post_send(r->a, &wr, &bad);
		if (ret)
			t_fatal("%s: post_send %u: %s", what, id, t_errname(ret));
		/* One in flight: the send buffer is reused. */
		while (sends <= k || recvs <= k) {
			if (!t_poll_one(r->cq, &wc, deadline))
				t_fatal("%s: message %u: no completion in 20 s (%u sends, %u receives done)",
					what, id, sends, recvs);
			if (wc.status != IBV_WC_SUCCESS)
				t_fatal("%s: wr_id %" PRIu64 " on QP %#x: %s", what,
					wc.wr_id, wc.qp_num, ibv_wc_status_str(wc.status));
			if (wc.qp_num == r->a->qp_num) {
				sends++;
				continue;
			}
			if (wc.wr_id != r->taken + recvs)
				t_fail("%s: receive %u completed as wr_id %" PRIu64,
				       what, r->taken + recvs, wc.wr_id);
			if (wc.byte_len != MSG_LEN)
				t_fail("%s: receive %" PRIu64 ": %u bytes", what,
				       wc.wr_id, wc.byte_len);
			recvs++;
		}
		for (int i = 0; i < MSG_LEN; i++) {
			if (r->buf[(id % MAX_MSGS) * MSG_LEN + i] != (uint8_t)(id * 7 + i)) {
				t_fail("%s: slot of receive %u does not hold message %u (byte %d is %#x)",
				       what, id, id, i, r->buf[(id % MAX_MSGS) * MSG_LEN + i]);
				break;
			}
		}
	}
	r->taken += n;
}

static void rig_new(struct srq_rig *r, struct ibv_context *ctx,
		    struct ibv_pd *pd, uint32_t max_wr)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = max_wr, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	memset(r, 0, sizeof(*r));
	r->pd = pd;
	r->cq = ibv_create_cq(ctx, 2 * MAX_MSGS + 8, NULL, NULL, 0);
	if (!r->cq)
		t_fatal("create_cq: %s", t_errname(errno));
	r->srq = ibv_create_srq(pd, &sa);
	if (!r->srq)
		t_fatal("create_srq: %s", t_errname(errno));
	r->a = t_rc_qp(pd, r->cq, 4, 4);
	qa.send_cq = qa.recv_cq = r->cq;
	qa.srq = r->srq;
	r->b = ibv_create_qp(pd, &qa);
	if (!r->b)
		t_fatal("create RC QP on the SRQ: %s", t_errname(errno));
	t_rc_connect_pair(r->a, r->b, &path);
	r->buf = calloc(MAX_MSGS + 1, MSG_LEN);
	if (!r->buf)
		t_fatal("calloc: %s", t_errname(errno));
	r->mr = ibv_reg_mr(pd, r->buf, (MAX_MSGS + 1) * MSG_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		t_fatal("reg_mr: %s", t_errname(errno));
}

static void rig_free(struct srq_rig *r)
{
	int ret;

	if ((ret = ibv_destroy_qp(r->a)) || (ret = ibv_destroy_qp(r->b)) ||
	    (ret = ibv_destroy_srq(r->srq)) || (ret = ibv_destroy_cq(r->cq)) ||
	    (ret = ibv_dereg_mr(r->mr)))
		t_fatal("teardown: %s", t_errname(ret));
	free(r->buf);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct t_rc_opts opt;
	struct ibv_context *ctx;
	struct srq_rig r;
	struct ibv_pd *pd;
	int ret;

	ctx = t_rc_start("scire_srq_resize", argc, argv, 1, &opt, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	if ((ret = ibv_query_device(ctx, &dattr)))
		t_fatal("query_device: %s", t_errname(ret));

	CHECK("caps") {
		if (!(dattr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
			t_fail("caps: IBV_DEVICE_SRQ_RESIZE not claimed (flags %#x)",
			       dattr.device_cap_flags);
	}

	CHECK("grow") {
		rig_new(&r, ctx, pd, 16);
		if (srq_max_wr(&r) != 16)
			t_fail("grow: an SRQ of 16 has max_wr %u", srq_max_wr(&r));
		if ((ret = post_recvs(&r, 16)))
			t_fatal("grow: posting 16: %s", t_errname(ret));
		if ((ret = post_recvs(&r, 1)) != ENOMEM)
			t_fail("grow: a 17th receive into 16 slots: %s, expected ENOMEM",
			       t_errname(ret));
		if ((ret = srq_resize(&r, 64)))
			t_fatal("grow: resize 16 -> 64: %s", t_errname(ret));
		if (srq_max_wr(&r) < 64)
			t_fail("grow: max_wr %u after a resize to 64", srq_max_wr(&r));
		if ((ret = post_recvs(&r, 48)))
			t_fatal("grow: posting 48 after the resize: %s", t_errname(ret));
		send_and_check(&r, 64, "grow");
		rig_free(&r);
	}

	CHECK("shrink") {
		rig_new(&r, ctx, pd, 64);
		if ((ret = post_recvs(&r, 10)))
			t_fatal("shrink: posting 10: %s", t_errname(ret));
		if ((ret = srq_resize(&r, 8)) != EINVAL)
			t_fail("shrink: 64 -> 8 with 10 posted: %s, expected EINVAL",
			       t_errname(ret));
		if (srq_max_wr(&r) != 64)
			t_fail("shrink: a refused resize left max_wr %u", srq_max_wr(&r));
		if ((ret = srq_resize(&r, 16)))
			t_fatal("shrink: 64 -> 16 with 10 posted: %s", t_errname(ret));
		if (srq_max_wr(&r) != 16)
			t_fail("shrink: max_wr %u after a resize to 16", srq_max_wr(&r));
		if ((ret = post_recvs(&r, 6)))
			t_fatal("shrink: filling 16: %s", t_errname(ret));
		if ((ret = post_recvs(&r, 1)) != ENOMEM)
			t_fail("shrink: a 17th receive into 16 slots: %s, expected ENOMEM",
			       t_errname(ret));
		send_and_check(&r, 16, "shrink");
		rig_free(&r);
	}

	CHECK("again") {
		rig_new(&r, ctx, pd, 8);
		if ((ret = post_recvs(&r, 8)))
			t_fatal("again: posting 8: %s", t_errname(ret));
		send_and_check(&r, 3, "again");
		const uint32_t sizes[] = { 32, 128, 32 };
		for (unsigned int i = 0; i < 3; i++) {
			if ((ret = srq_resize(&r, sizes[i])))
				t_fatal("again: resize to %u: %s", sizes[i], t_errname(ret));
			if ((ret = post_recvs(&r, 10)))
				t_fatal("again: posting 10 after a resize to %u: %s",
					sizes[i], t_errname(ret));
			send_and_check(&r, 10, "again");
		}
		send_and_check(&r, r.posted - r.taken, "again");
		rig_free(&r);
	}

	CHECK("range") {
		struct ibv_srq_attr attr = { .srq_limit = 12 };

		rig_new(&r, ctx, pd, 32);
		if ((ret = srq_resize(&r, 0)) != EINVAL)
			t_fail("range: max_wr 0: %s, expected EINVAL", t_errname(ret));
		if ((ret = srq_resize(&r, dattr.max_srq_wr + 1)) != EINVAL)
			t_fail("range: max_wr %d (max_srq_wr + 1): %s, expected EINVAL",
			       dattr.max_srq_wr + 1, t_errname(ret));
		if ((ret = ibv_modify_srq(r.srq, &attr, IBV_SRQ_LIMIT)))
			t_fatal("range: arming limit 12: %s", t_errname(ret));
		if ((ret = srq_resize(&r, 8)) != EINVAL)
			t_fail("range: 32 -> 8 under limit 12: %s, expected EINVAL",
			       t_errname(ret));
		if (srq_max_wr(&r) != 32)
			t_fail("range: refused resizes left max_wr %u", srq_max_wr(&r));
		rig_free(&r);
	}

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return t_checks_done(opt.dev);
}
