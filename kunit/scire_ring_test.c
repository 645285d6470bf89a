// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: ring index arithmetic (kernel/scire_qp.c, scire_cq.c). User space
 * writes the producer index of SQ/RQ/SRQ rings and the consumer index of CQ
 * rings at any time, so every index the kernel reads is hostile: it may be
 * behind, far ahead, or anything across the 2^32 wrap. The kernel must
 * take a WQE only when one is posted, report a corrupt ring instead of
 * reading slots twice or past the ring, and never overwrite an unconsumed
 * CQE. Included at the end of kernel/scire_qp.c when the kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

/* An RQ ring shaped as a kernel RQ is, zeroed. */
static struct scire_wq *scire_test_wq(struct kunit *test, u32 max_wr,
				      u32 max_sge)
{
	struct scire_wq *wq;

	wq = kunit_kzalloc(test, sizeof(*wq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wq);
	scire_rq_shape(wq, max_wr, max_sge);
	wq->ring = kunit_kzalloc(test, scire_wq_ring_size(wq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wq->ring);
	spin_lock_init(&wq->lock);
	return wq;
}

/* User space posting one receive WQE at index @index. */
static void scire_test_post(struct scire_wq *wq, u32 index, u64 wr_id,
			    u32 num_sge)
{
	struct scire_recv_wqe *slot = scire_wq_slot(wq, index);
	u32 i;

	slot->wr_id = wr_id;
	slot->num_sge = num_sge;
	for (i = 0; i < min(num_sge, wq->max_sge); i++) {
		slot->sge[i].addr = wr_id + i;
		slot->sge[i].length = 64;
		slot->sge[i].lkey = 0x100 + i;
	}
}

static struct scire_recv_wqe *scire_test_rwqe(struct kunit *test)
{
	struct scire_recv_wqe *rwqe;

	rwqe = kunit_kzalloc(test, sizeof(*rwqe) +
			     SCIRE_MAX_SGE * sizeof(struct scire_sge), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rwqe);
	return rwqe;
}

static void scire_ring_take_empty(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 left = 77;

	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EAGAIN);
	KUNIT_EXPECT_EQ(test, wq->consumer, 0U);
	KUNIT_EXPECT_EQ(test, wq->ring->consumer, 0U);
	KUNIT_EXPECT_EQ(test, left, 77U);
}

static void scire_ring_take_one(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 left;

	scire_test_post(wq, 0, 0xabcdef, 2);
	wq->ring->producer = 1;
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), 0);
	KUNIT_EXPECT_EQ(test, rwqe->wr_id, 0xabcdefULL);
	KUNIT_EXPECT_EQ(test, rwqe->num_sge, 2U);
	KUNIT_EXPECT_EQ(test, rwqe->sge[1].addr, 0xabcdf0ULL);
	KUNIT_EXPECT_EQ(test, rwqe->sge[1].lkey, 0x101U);
	KUNIT_EXPECT_EQ(test, wq->consumer, 1U);
	KUNIT_EXPECT_EQ(test, wq->ring->consumer, 1U);
	KUNIT_EXPECT_EQ(test, left, 0U);
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EAGAIN);
}

/* A full ring is legal: num_entries posted. */
static void scire_ring_take_full(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 i, left;

	for (i = 0; i < wq->num_entries; i++)
		scire_test_post(wq, i, i, 1);
	wq->ring->producer = wq->num_entries;
	for (i = 0; i < wq->num_entries; i++) {
		KUNIT_ASSERT_EQ(test, scire_wq_take(wq, rwqe, &left), 0);
		KUNIT_EXPECT_EQ(test, rwqe->wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, left, wq->num_entries - 1 - i);
	}
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EAGAIN);
}

/* A producer more than a ring ahead is corrupt: nothing is taken. */
static void scire_ring_producer_ahead(struct kunit *test)
{
	static const u32 ahead[] = { 9, 16, 0x80000000, 0xffffffff };
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 left;
	int i;

	for (i = 0; i < ARRAY_SIZE(ahead); i++) {
		wq->ring->producer = ahead[i];
		KUNIT_EXPECT_EQ_MSG(test, scire_wq_take(wq, rwqe, &left), -EIO,
				    "producer %u", ahead[i]);
		KUNIT_EXPECT_EQ(test, wq->consumer, 0U);
	}
}

/* A producer behind the kernel's consumer is corrupt as well. */
static void scire_ring_producer_behind(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 left;

	wq->consumer = 5;
	wq->ring->producer = 4;
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EIO);
	KUNIT_EXPECT_EQ(test, wq->consumer, 5U);
	/* Rewriting the consumer copy in the ring does not fool the kernel. */
	wq->ring->consumer = 0;
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EIO);
	wq->ring->producer = 5;
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EAGAIN);
}

/* Indices run free across 2^32; slots follow index mod num_entries. */
static void scire_ring_wrap(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 i, left;

	wq->consumer = 0xfffffffe;
	for (i = 0; i < 3; i++)
		scire_test_post(wq, 0xfffffffe + i, 100 + i, 1);
	wq->ring->producer = 1;		/* three posted, across the wrap */
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, scire_wq_take(wq, rwqe, &left), 0);
		KUNIT_EXPECT_EQ(test, rwqe->wr_id, 100ULL + i);
		KUNIT_EXPECT_EQ(test, left, 2 - i);
	}
	KUNIT_EXPECT_EQ(test, wq->consumer, 1U);
	KUNIT_EXPECT_EQ(test, wq->ring->consumer, 1U);
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EAGAIN);
}

/*
 * A WQE claiming more SGEs than the queue holds is consumed and reported
 * with no SGE copied: no read past the slot.
 */
static void scire_ring_hostile_num_sge(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u32 bad[] = {
		wq->max_sge + 1, wq->max_sge + 2, SCIRE_MAX_SGE + 1,
		0x80000000, 0xffffffff,
	};
	u32 i, left;

	KUNIT_ASSERT_LT(test, wq->max_sge, (u32)SCIRE_MAX_SGE);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		scire_test_post(wq, i, 500 + i, bad[i]);
		wq->ring->producer = i + 1;
		KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), -EINVAL);
		KUNIT_EXPECT_EQ(test, rwqe->num_sge, 0U);
		KUNIT_EXPECT_EQ(test, rwqe->wr_id, 500ULL + i);
		KUNIT_EXPECT_EQ(test, wq->consumer, i + 1);
	}
	scire_test_post(wq, i, 9, wq->max_sge);
	wq->ring->producer = i + 1;
	KUNIT_EXPECT_EQ(test, scire_wq_take(wq, rwqe, &left), 0);
	KUNIT_EXPECT_EQ(test, rwqe->num_sge, wq->max_sge);
}

/* Every index maps inside the ring, the same slot every num_entries. */
static void scire_ring_slot(struct kunit *test)
{
	static const u32 idx[] = { 0, 1, 7, 8, 0x7fffffff, 0xfffffff8, 0xffffffff };
	struct scire_wq *wq = scire_test_wq(test, 8, 2);
	u8 *first = (u8 *)wq->ring + SCIRE_WQ_RING_HDR_SIZE;
	u8 *end = (u8 *)wq->ring + scire_wq_ring_size(wq);
	int i;

	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		u8 *slot = scire_wq_slot(wq, idx[i]);

		KUNIT_EXPECT_TRUE(test, slot >= first && slot + wq->wqe_size <= end);
		KUNIT_EXPECT_PTR_EQ(test, slot, (u8 *)scire_wq_slot(wq, idx[i] + 8));
		KUNIT_EXPECT_EQ(test, (slot - first) % wq->wqe_size, 0);
	}
	KUNIT_EXPECT_PTR_EQ(test, (u8 *)scire_wq_slot(wq, 0xffffffff),
			    first + 7 * wq->wqe_size);
}

/* RQ shapes: powers of two that hold what was asked, within the limits. */
static void scire_ring_rq_shape(struct kunit *test)
{
	static const u32 wr[] = { 0, 1, 5, 8, 1000, SCIRE_MAX_QP_WR };
	static const u32 sge[] = { 0, 1, 2, 3, 17, SCIRE_MAX_SGE };
	struct scire_wq wq;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(wr); i++) {
		for (j = 0; j < ARRAY_SIZE(sge); j++) {
			scire_rq_shape(&wq, wr[i], sge[j]);
			KUNIT_EXPECT_TRUE(test, is_power_of_2(wq.num_entries));
			KUNIT_EXPECT_GE(test, wq.num_entries, max(wr[i], 1U));
			KUNIT_EXPECT_LT(test, wq.num_entries, 2 * max(wr[i], 1U));
			KUNIT_EXPECT_TRUE(test, is_power_of_2(wq.wqe_size));
			KUNIT_EXPECT_GE(test, wq.max_sge, sge[j]);
			KUNIT_EXPECT_LE(test, wq.max_sge, (u32)SCIRE_MAX_SGE);
			KUNIT_EXPECT_LE(test, sizeof(struct scire_recv_wqe) +
					wq.max_sge * sizeof(struct scire_sge),
					(size_t)wq.wqe_size);
			KUNIT_EXPECT_EQ(test, wq.max_inline, 0U);
		}
	}
}

/* SQ shapes: the slot holds max_sge SGEs and max_inline bytes. */
static void scire_ring_sq_shape(struct kunit *test)
{
	static const u32 sge[] = { 0, 1, 4, SCIRE_MAX_SGE };
	static const u32 inl[] = { 0, 1, 64, 200, SCIRE_MAX_INLINE };
	struct scire_wq wq;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(sge); i++) {
		for (j = 0; j < ARRAY_SIZE(inl); j++) {
			scire_sq_shape(&wq, 3, sge[i], inl[j]);
			KUNIT_EXPECT_EQ(test, wq.num_entries, 4U);
			KUNIT_EXPECT_TRUE(test, is_power_of_2(wq.wqe_size));
			KUNIT_EXPECT_GE(test, wq.max_sge, sge[i]);
			KUNIT_EXPECT_GE(test, wq.max_inline, inl[j]);
			KUNIT_EXPECT_LE(test, wq.max_sge, (u32)SCIRE_MAX_SGE);
			KUNIT_EXPECT_LE(test, wq.max_inline, (u32)SCIRE_MAX_INLINE);
			KUNIT_EXPECT_LE(test, sizeof(struct scire_send_wqe) +
					max_t(size_t, wq.max_sge * sizeof(struct scire_sge),
					      wq.max_inline), (size_t)wq.wqe_size);
		}
	}
	/* The largest queue's ring size does not overflow. */
	scire_sq_shape(&wq, SCIRE_MAX_QP_WR, SCIRE_MAX_SGE, SCIRE_MAX_INLINE);
	KUNIT_EXPECT_EQ(test, scire_wq_ring_size(&wq),
			SCIRE_WQ_RING_HDR_SIZE + (size_t)SCIRE_MAX_QP_WR * wq.wqe_size);
}

static void scire_test_srq_event(struct ib_event *ev, void *ctx)
{
	int *count = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		(*count)++;
}

/* An armed SRQ limit fires once when fewer WQEs than it remain. */
static void scire_ring_srq_limit(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_srq *srq;
	struct scire_qp *qp;
	struct scire_wq *wq;
	int events = 0, i;

	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	wq = scire_test_wq(test, 8, 1);
	srq->rq = *wq;
	spin_lock_init(&srq->rq.lock);
	srq->ibsrq.event_handler = scire_test_srq_event;
	srq->ibsrq.srq_context = &events;
	srq->limit = 2;
	qp->srq = srq;
	for (i = 0; i < 4; i++)
		scire_test_post(&srq->rq, i, i, 1);
	srq->rq.ring->producer = 4;
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), 0);	/* 3 left */
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), 0);	/* 2 left */
	KUNIT_EXPECT_EQ(test, events, 0);
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), 0);	/* 1 left */
	KUNIT_EXPECT_EQ(test, events, 1);
	KUNIT_EXPECT_EQ(test, srq->limit, 0U);
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), 0);
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), -EAGAIN);
	KUNIT_EXPECT_EQ(test, events, 1);
	/* A corrupt SRQ producer is reported, not taken from. */
	srq->rq.ring->producer = 100;
	KUNIT_EXPECT_EQ(test, scire_rq_take(qp, rwqe), -EIO);
}

/* --- CQ ring ------------------------------------------------------- */

struct scire_test_cq {
	struct scire_cq *cq;
	int comp_events;
	int err_events;
};

static void scire_test_cq_comp(struct ib_cq *ibcq, void *ctx)
{
	struct scire_test_cq *t = ctx;

	t->comp_events++;
}

static void scire_test_cq_event(struct ib_event *ev, void *ctx)
{
	struct scire_test_cq *t = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		t->err_events++;
}

static struct scire_test_cq *scire_test_cq(struct kunit *test, u32 entries)
{
	struct scire_test_cq *t;
	struct scire_cq *cq;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ring = kunit_kzalloc(test, offsetof(struct scire_cq_ring, cqe) +
				 entries * sizeof(struct scire_cqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq->ring);
	spin_lock_init(&cq->lock);
	cq->num_entries = entries;
	cq->ibcq.comp_handler = scire_test_cq_comp;
	cq->ibcq.event_handler = scire_test_cq_event;
	cq->ibcq.cq_context = t;
	t->cq = cq;
	return t;
}

static int scire_test_cq_post(struct scire_cq *cq, u64 wr_id, bool solicited)
{
	struct scire_cqe cqe = { .wr_id = wr_id };

	return scire_cq_post(cq, &cqe, NULL, solicited);
}

/* Posting fills the slots in order and publishes the producer. */
static void scire_ring_cq_post(struct kunit *test)
{
	struct scire_test_cq *t = scire_test_cq(test, 4);
	u64 i;

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 10 + i, false), 0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[i].wr_id, 10 + i);
	KUNIT_EXPECT_EQ(test, t->cq->ring->producer, 4U);
	KUNIT_EXPECT_EQ(test, t->comp_events, 0);
}

/* A full CQ overruns (IBA C11-32): no CQE is overwritten, error for good. */
static void scire_ring_cq_overrun(struct kunit *test)
{
	struct scire_test_cq *t = scire_test_cq(test, 4);
	u64 i;

	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, scire_test_cq_post(t->cq, i, false), 0);
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 99, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[0].wr_id, 0ULL);
	KUNIT_EXPECT_EQ(test, t->cq->ring->producer, 4U);
	KUNIT_EXPECT_TRUE(test, t->cq->ring->flags & SCIRE_CQ_F_OVERFLOW);
	KUNIT_EXPECT_EQ(test, t->err_events, 1);
	/* Consuming afterwards does not revive it, and no second event. */
	t->cq->ring->consumer = 4;
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 100, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t->err_events, 1);
}

/* A consumer index ahead of the producer is corrupt: overrun, no write. */
static void scire_ring_cq_hostile_consumer(struct kunit *test)
{
	static const u32 bad[] = { 1, 5, 0x80000000, 0xfffffffb };
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct scire_test_cq *t = scire_test_cq(test, 4);

		t->cq->ring->consumer = bad[i];
		KUNIT_EXPECT_EQ_MSG(test, scire_test_cq_post(t->cq, 1, false),
				    -ENOSPC, "consumer %u", bad[i]);
		KUNIT_EXPECT_EQ(test, t->cq->producer, 0U);
		KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[0].wr_id, 0ULL);
		KUNIT_EXPECT_EQ(test, t->err_events, 1);
	}
}

/* Producer and consumer run across 2^32. */
static void scire_ring_cq_wrap(struct kunit *test)
{
	struct scire_test_cq *t = scire_test_cq(test, 4);
	u64 i;

	t->cq->producer = 0xfffffffe;
	t->cq->ring->consumer = 0xfffffffe;
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, scire_test_cq_post(t->cq, 20 + i, false), 0);
	KUNIT_EXPECT_EQ(test, t->cq->ring->producer, 2U);
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[2].wr_id, 20ULL);
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[3].wr_id, 21ULL);
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[0].wr_id, 22ULL);
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[1].wr_id, 23ULL);
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 9, false), -ENOSPC);
}

/* Room comes back as the consumer advances. */
static void scire_ring_cq_consume(struct kunit *test)
{
	struct scire_test_cq *t = scire_test_cq(test, 2);
	u32 i;

	for (i = 0; i < 100; i++) {
		KUNIT_ASSERT_EQ(test, scire_test_cq_post(t->cq, i, false), 0);
		t->cq->ring->consumer = i + 1;
	}
	KUNIT_EXPECT_EQ(test, t->cq->ring->cqe[99 & 1].wr_id, 99ULL);
	KUNIT_EXPECT_FALSE(test, t->cq->overflowed);
}

/* ARM_NEXT fires on any CQE, ARM_SOLICITED only on a solicited one; once. */
static void scire_ring_cq_arm(struct kunit *test)
{
	struct scire_test_cq *t = scire_test_cq(test, 8);

	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 1, true), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 0);
	t->cq->ring->arm = SCIRE_CQ_ARM_NEXT;
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 2, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);
	KUNIT_EXPECT_EQ(test, t->cq->ring->arm, 0U);
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 3, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);
	t->cq->ring->arm = SCIRE_CQ_ARM_SOLICITED;
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 4, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);
	KUNIT_EXPECT_EQ(test, t->cq->ring->arm, (u32)SCIRE_CQ_ARM_SOLICITED);
	KUNIT_EXPECT_EQ(test, scire_test_cq_post(t->cq, 5, true), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 2);
	KUNIT_EXPECT_EQ(test, t->cq->ring->arm, 0U);
}

/* The WQE is copied once: user space rewriting the slot later changes nothing. */
static void scire_ring_take_copy(struct kunit *test)
{
	struct scire_recv_wqe *rwqe = scire_test_rwqe(test);
	struct scire_wq *wq = scire_test_wq(test, 4, 1);
	struct scire_recv_wqe *slot;
	u32 left;

	scire_test_post(wq, 0, 0x1234, 1);
	wq->ring->producer = 1;
	KUNIT_ASSERT_EQ(test, scire_wq_take(wq, rwqe, &left), 0);
	slot = scire_wq_slot(wq, 0);
	slot->num_sge = 0xffffffff;
	slot->sge[0].length = 0xffffffff;
	slot->wr_id = 0;
	KUNIT_EXPECT_EQ(test, rwqe->wr_id, 0x1234ULL);
	KUNIT_EXPECT_EQ(test, rwqe->num_sge, 1U);
	KUNIT_EXPECT_EQ(test, rwqe->sge[0].length, 64U);
}

static struct kunit_case scire_ring_cases[] = {
	KUNIT_CASE(scire_ring_take_empty),
	KUNIT_CASE(scire_ring_take_one),
	KUNIT_CASE(scire_ring_take_copy),
	KUNIT_CASE(scire_ring_take_full),
	KUNIT_CASE(scire_ring_producer_ahead),
	KUNIT_CASE(scire_ring_producer_behind),
	KUNIT_CASE(scire_ring_wrap),
	KUNIT_CASE(scire_ring_hostile_num_sge),
	KUNIT_CASE(scire_ring_slot),
	KUNIT_CASE(scire_ring_rq_shape),
	KUNIT_CASE(scire_ring_sq_shape),
	KUNIT_CASE(scire_ring_srq_limit),
	KUNIT_CASE(scire_ring_cq_post),
	KUNIT_CASE(scire_ring_cq_overrun),
	KUNIT_CASE(scire_ring_cq_hostile_consumer),
	KUNIT_CASE(scire_ring_cq_wrap),
	KUNIT_CASE(scire_ring_cq_consume),
	KUNIT_CASE(scire_ring_cq_arm),
	{}
};

static struct kunit_suite scire_ring_suite = {
	.name = "scire_ring",
	.test_cases = scire_ring_cases,
};

kunit_test_suites(&scire_ring_suite);
