// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: validation of verbs requests and their UHW (driver-specific)
 * parts (kernel/scire_qp.c and scire_verbs.c): scire_qp_check_init()
 * decides what CREATE_QP may ask for before anything is allocated,
 * scire_udata_in_ok() refuses a UHW request with bytes scire does not
 * define (or cannot read), and the doorbell method refuses unknown flags.
 * Included at the end of kernel/scire_qp.c when the kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

struct scire_test_init {
	struct ib_qp_init_attr init;
	struct ib_cq cq;
	struct ib_srq srq;
	struct ib_udata udata;
};

/* A valid kernel RC QP request at the limits' edge. */
static struct scire_test_init *scire_test_init(struct kunit *test)
{
	struct scire_test_init *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->init.qp_type = IB_QPT_RC;
	t->init.sq_sig_type = IB_SIGNAL_REQ_WR;
	t->init.send_cq = &t->cq;
	t->init.recv_cq = &t->cq;
	t->init.cap.max_send_wr = SCIRE_MAX_QP_WR;
	t->init.cap.max_recv_wr = SCIRE_MAX_QP_WR;
	t->init.cap.max_send_sge = SCIRE_MAX_SGE;
	t->init.cap.max_recv_sge = SCIRE_MAX_SGE;
	t->init.cap.max_inline_data = SCIRE_MAX_INLINE;
	t->srq.srq_type = IB_SRQT_BASIC;
	/* A UHW request with no bytes and room for the response. */
	t->udata.inbuf = (const void __user *)0x1000;
	t->udata.outbuf = (void __user *)0x2000;
	t->udata.outlen = sizeof(struct scire_create_qp_resp);
	return t;
}

static void scire_uhw_qp_valid(struct kunit *test)
{
	static const enum ib_qp_type types[] = { IB_QPT_RC, IB_QPT_UC, IB_QPT_UD };
	struct scire_test_init *t = scire_test_init(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		t->init.qp_type = types[i];
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata), 0);
	}
	t->init.sq_sig_type = IB_SIGNAL_ALL_WR;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
}

/*
 * The GSI and SMI QPs are the kernel's, on port 1 only (scire_create_qp()
 * refuses SMI on a RoCE device, which has no subnet management).
 */
static void scire_uhw_qp_gsi(struct kunit *test)
{
	static const enum ib_qp_type types[] = { IB_QPT_GSI, IB_QPT_SMI };
	struct scire_test_init *t = scire_test_init(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		t->init.qp_type = types[i];
		t->init.port_num = 1;
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata),
				-EINVAL);
		t->init.port_num = 2;
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL),
				-EINVAL);
		t->init.port_num = 0;
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL),
				-EINVAL);
	}
}

static void scire_uhw_qp_types(struct kunit *test)
{
	static const enum ib_qp_type types[] = {
		IB_QPT_RAW_IPV6, IB_QPT_RAW_ETHERTYPE,
		IB_QPT_RAW_PACKET, IB_QPT_DRIVER,
		IB_QPT_MAX, 0x7fff,
	};
	struct scire_test_init *t = scire_test_init(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		t->init.qp_type = types[i];
		KUNIT_EXPECT_EQ_MSG(test, scire_qp_check_init(&t->init, NULL),
				    -EOPNOTSUPP, "type %d", types[i]);
	}
}

/*
 * XRC: an initiator only from user space (a kernel send WR cannot name
 * the remote XRC SRQ), a target only with the domain the core gives it,
 * and without CQs.
 */
static void scire_uhw_qp_xrc(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);

	t->init.qp_type = IB_QPT_XRC_INI;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EOPNOTSUPP);
	t->init.qp_type = IB_QPT_XRC_TGT;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
	t->init.xrcd = (struct ib_xrcd *)&t->cq;
	t->init.send_cq = NULL;
	t->init.recv_cq = NULL;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
}

/*
 * Create flags, indirection tables and XRC domains (but on an XRC target)
 * are not supported.
 */
static void scire_uhw_qp_unsupported(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);
	u32 bit;

	for (bit = 0; bit < 32; bit++) {
		t->init.create_flags = BIT(bit);
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EOPNOTSUPP);
	}
	t->init.create_flags = 0;
	t->init.rwq_ind_tbl = (struct ib_rwq_ind_table *)&t->cq;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EOPNOTSUPP);
	t->init.rwq_ind_tbl = NULL;
	t->init.xrcd = (struct ib_xrcd *)&t->cq;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EOPNOTSUPP);
}

static void scire_uhw_qp_sig_type(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);

	t->init.sq_sig_type = 2;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
	t->init.sq_sig_type = -1;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
}

static void scire_uhw_qp_cqs(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);

	t->init.send_cq = NULL;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
	t->init.send_cq = &t->cq;
	t->init.recv_cq = NULL;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
}

/* Each capacity at its limit passes, one above (or wrapped) fails. */
static void scire_uhw_qp_caps(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);
	struct ib_qp_cap *cap = &t->init.cap;
	u32 *fields[] = {
		&cap->max_send_wr, &cap->max_recv_wr, &cap->max_send_sge,
		&cap->max_recv_sge, &cap->max_inline_data,
	};
	static const u32 over[] = { 1, 2, 0x80000000, 0xffffffff };
	int i, j;

	KUNIT_ASSERT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		u32 limit = *fields[i];

		for (j = 0; j < ARRAY_SIZE(over); j++) {
			*fields[i] = limit + over[j];
			if (*fields[i] <= limit)	/* wrapped: in range */
				continue;
			KUNIT_EXPECT_EQ_MSG(test, scire_qp_check_init(&t->init, NULL),
					    -EINVAL, "field %d = %u", i, *fields[i]);
		}
		*fields[i] = 0;
		KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
		*fields[i] = limit;
	}
}

/* With an SRQ the RQ capacities are not looked at; the SRQ must be basic. */
static void scire_uhw_qp_srq(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);

	t->init.srq = &t->srq;
	t->init.cap.max_recv_wr = U32_MAX;
	t->init.cap.max_recv_sge = U32_MAX;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), 0);
	t->srq.srq_type = IB_SRQT_XRC;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
	t->srq.srq_type = IB_SRQT_TM;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, NULL), -EINVAL);
}

/* The response must fit: any shorter buffer is refused before allocation. */
static void scire_uhw_qp_resp_len(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);
	size_t len = sizeof(struct scire_create_qp_resp);

	t->udata.outlen = len - 1;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata), -EINVAL);
	t->udata.outlen = 0;
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata), -EINVAL);
	t->udata.outlen = len + 64;	/* a newer provider's larger struct */
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata), 0);
}

/*
 * A UHW request is empty or all zeroes; bytes the kernel cannot read are
 * refused, not ignored.
 */
static void scire_uhw_request(struct kunit *test)
{
	struct scire_test_init *t = scire_test_init(test);

	KUNIT_EXPECT_TRUE(test, scire_udata_in_ok(NULL));
	t->udata.inlen = 0;
	KUNIT_EXPECT_TRUE(test, scire_udata_in_ok(&t->udata));
	t->udata.inlen = 8;	/* unmapped in this kernel thread */
	KUNIT_EXPECT_FALSE(test, scire_udata_in_ok(&t->udata));
	KUNIT_EXPECT_EQ(test, scire_qp_check_init(&t->init, &t->udata), -EINVAL);
	t->udata.inlen = 0x10000;	/* larger than ib_is_udata_cleared reads */
	KUNIT_EXPECT_FALSE(test, scire_udata_in_ok(&t->udata));
}

/* The doorbell method takes the SQ and RQ bits only; RQ not with an SRQ. */
static void scire_uhw_doorbell_flags(struct kunit *test)
{
	struct scire_qp *qp;
	u32 bit;

	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	for (bit = 0; bit < 32; bit++) {
		u32 flag = BIT(bit);

		if (flag == SCIRE_DOORBELL_SQ || flag == SCIRE_DOORBELL_RQ)
			continue;
		KUNIT_EXPECT_EQ(test, scire_qp_doorbell(qp, flag), -EINVAL);
		KUNIT_EXPECT_EQ(test, scire_qp_doorbell(qp, flag | SCIRE_DOORBELL_SQ),
				-EINVAL);
	}
	KUNIT_EXPECT_EQ(test, scire_qp_doorbell(qp, 0), 0);
	qp->srq = kunit_kzalloc(test, sizeof(*qp->srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->srq);
	KUNIT_EXPECT_EQ(test, scire_qp_doorbell(qp, SCIRE_DOORBELL_RQ), -EINVAL);
	KUNIT_EXPECT_EQ(test, scire_qp_doorbell(qp, SCIRE_DOORBELL_RQ |
						SCIRE_DOORBELL_SQ), -EINVAL);
}

static struct kunit_case scire_uhw_cases[] = {
	KUNIT_CASE(scire_uhw_qp_valid),
	KUNIT_CASE(scire_uhw_qp_gsi),
	KUNIT_CASE(scire_uhw_qp_types),
	KUNIT_CASE(scire_uhw_qp_xrc),
	KUNIT_CASE(scire_uhw_qp_unsupported),
	KUNIT_CASE(scire_uhw_qp_sig_type),
	KUNIT_CASE(scire_uhw_qp_cqs),
	KUNIT_CASE(scire_uhw_qp_caps),
	KUNIT_CASE(scire_uhw_qp_srq),
	KUNIT_CASE(scire_uhw_qp_resp_len),
	KUNIT_CASE(scire_uhw_request),
	KUNIT_CASE(scire_uhw_doorbell_flags),
	{}
};

static struct kunit_suite scire_uhw_suite = {
	.name = "scire_uhw",
	.test_cases = scire_uhw_cases,
};

kunit_test_suites(&scire_uhw_suite);
