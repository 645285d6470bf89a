// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: building request headers (scire_req_ext_hdrs() in
 * kernel/scire_req.c) for every request opcode of the table and reading
 * them back at the byte offsets IBA 9.3 gives (written out here, not taken
 * from the table), with the BTH from scire_bth_init(). Included at the end
 * of kernel/scire_req.c when the kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

#define SCIRE_TEST_HDR_FILL	0xa5

/* A packet buffer of @opcode's headers plus 8 payload bytes, all 0xa5. */
static struct sk_buff *scire_test_hdr_build(struct kunit *test, u8 opcode,
					    const struct scire_send_wqe *wqe,
					    u32 len, u32 off)
{
	struct scire_req_wqe w = { .len = len };
	struct scire_qp *qp;
	struct sk_buff *skb;

	if (!scire_opcode)
		scire_hdr_init();	/* suites run before module init */
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->qkey = 0x11223344;
	qp->ibqp.qp_num = 0xab123456;	/* only 24 bits go on the wire */
	skb = alloc_skb(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(skb_put(skb, 48), SCIRE_TEST_HDR_FILL, 48);
	scire_req_ext_hdrs(qp, skb, opcode, wqe, &w, off);
	return skb;
}

static void scire_test_wqe(struct scire_send_wqe *wqe)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->imm_data = (__force u32)cpu_to_be32(0xc0ffee11);
}

/* Bytes [from, to) of @skb are untouched. */
static bool scire_test_hdr_clean(struct sk_buff *skb, u32 from, u32 to)
{
	return !memchr_inv(skb->data + from, SCIRE_TEST_HDR_FILL, to - from);
}

/* WRITE_FIRST/ONLY and READ: the RETH right after the BTH, big-endian. */
static void scire_hdr_reth(struct kunit *test)
{
	static const u8 ops[] = { 0x06, 0x0a, 0x0b, 0x0c, 0x26, 0x2a, 0x2b };
	struct scire_send_wqe wqe;
	int i;

	scire_test_wqe(&wqe);
	wqe.rdma.remote_addr = 0x0102030405060708ULL;
	wqe.rdma.rkey = 0xa1b2c3d4;
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		struct sk_buff *skb = scire_test_hdr_build(test, ops[i], &wqe,
							   0x10000, 0);
		u8 *p = skb->data;

		KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 12), 0x0102030405060708ULL);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(p + 20), 0xa1b2c3d4U);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(p + 24), 0x10000U);
		KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 0, 12));
		if (ops[i] == 0x0b || ops[i] == 0x2b) {
			KUNIT_EXPECT_EQ(test, get_unaligned_be32(p + 28), 0xc0ffee11U);
			KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 32, 48));
		} else {
			KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 28, 48));
		}
		kfree_skb(skb);
	}
}

/* A READ asked again from offset @off covers only the rest. */
static void scire_hdr_reth_retry(struct kunit *test)
{
	struct scire_send_wqe wqe;
	struct sk_buff *skb;

	scire_test_wqe(&wqe);
	wqe.rdma.remote_addr = 0xfffffffffffff000ULL;
	wqe.rdma.rkey = 7;
	skb = scire_test_hdr_build(test, 0x0c, &wqe, 0x1000, 0x800);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(skb->data + 12),
			0xfffffffffffff800ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 24), 0x800U);
	kfree_skb(skb);
}

/* CmpSwap: swap then compare; FetchAdd: the addend, compare zero. */
static void scire_hdr_atomic(struct kunit *test)
{
	struct scire_send_wqe wqe;
	struct sk_buff *skb;
	u8 *p;

	scire_test_wqe(&wqe);
	wqe.atomic.remote_addr = 0x00007f0012345678ULL;
	wqe.atomic.rkey = 0x01020304;
	wqe.atomic.compare_add = 0x1111222233334444ULL;
	wqe.atomic.swap = 0x5555666677778888ULL;
	skb = scire_test_hdr_build(test, 0x13, &wqe, 8, 0);
	p = skb->data;
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 12), 0x00007f0012345678ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(p + 20), 0x01020304U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 24), 0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 32), 0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, scire_atmeth_swap_add((void *)(p + 12)),
			0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, scire_atmeth_comp((void *)(p + 12)),
			0x1111222233334444ULL);
	KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 40, 48));
	kfree_skb(skb);

	skb = scire_test_hdr_build(test, 0x14, &wqe, 8, 0);
	p = skb->data;
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 24), 0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(p + 32), 0ULL);
	kfree_skb(skb);
}

/* Immediate data goes out byte for byte; the IETH carries the rkey. */
static void scire_hdr_imm_ieth(struct kunit *test)
{
	static const u8 imm_ops[] = { 0x03, 0x05, 0x09, 0x23, 0x25, 0x29 };
	struct scire_send_wqe wqe;
	struct sk_buff *skb;
	int i;

	scire_test_wqe(&wqe);
	for (i = 0; i < ARRAY_SIZE(imm_ops); i++) {
		skb = scire_test_hdr_build(test, imm_ops[i], &wqe, 8, 0);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 12), 0xc0ffee11U);
		KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 16, 48));
		kfree_skb(skb);
	}
	wqe.imm_data = 0x00abcd42;	/* SEND_INV: the rkey, CPU order */
	for (i = 0x16; i <= 0x17; i++) {
		skb = scire_test_hdr_build(test, i, &wqe, 8, 0);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 12), 0x00abcd42U);
		KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 16, 48));
		kfree_skb(skb);
	}
}

/* UD: DETH after the BTH; a controlled Q_Key stands for the QP's own. */
static void scire_hdr_deth(struct kunit *test)
{
	struct scire_send_wqe wqe;
	struct sk_buff *skb;

	scire_test_wqe(&wqe);
	wqe.ud.remote_qkey = 0x0000beef;
	skb = scire_test_hdr_build(test, 0x64, &wqe, 8, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 12), 0x0000beefU);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 16), 0x00123456U);
	KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 20, 48));
	kfree_skb(skb);

	wqe.ud.remote_qkey = 0x80000001;
	skb = scire_test_hdr_build(test, 0x65, &wqe, 8, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 12), 0x11223344U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(skb->data + 20), 0xc0ffee11U);
	KUNIT_EXPECT_TRUE(test, scire_test_hdr_clean(skb, 24, 48));
	kfree_skb(skb);
}

/*
 * Every valid opcode: headers written exactly where the table says and
 * nowhere else; opcodes without request headers write nothing.
 */
static void scire_hdr_every_opcode(struct kunit *test)
{
	struct scire_send_wqe wqe;
	unsigned int op;

	scire_test_wqe(&wqe);
	wqe.rdma.remote_addr = 1;
	for (op = 0; op < 256; op++) {
		const struct scire_opcode_info *oi;
		struct sk_buff *skb;
		u32 written;

		skb = scire_test_hdr_build(test, op, &wqe, 8, 0);
		oi = &scire_opcode[op];
		written = oi->mask & (SCIRE_M_RETH | SCIRE_M_ATMETH | SCIRE_M_IMMDT |
				      SCIRE_M_IETH | SCIRE_M_DETH |
				      SCIRE_M_XRCETH) ?
			  oi->hdr_len : sizeof(struct scire_bth);
		if (!(oi->mask & SCIRE_M_REQ))
			KUNIT_EXPECT_EQ_MSG(test, written, 12U, "op 0x%02x", op);
		KUNIT_EXPECT_TRUE_MSG(test, scire_test_hdr_clean(skb, 0, 12),
				      "op 0x%02x wrote into the BTH", op);
		KUNIT_EXPECT_TRUE_MSG(test, scire_test_hdr_clean(skb, written, 48),
				      "op 0x%02x wrote past its headers", op);
		kfree_skb(skb);
	}
}

static struct kunit_case scire_hdr_cases[] = {
	KUNIT_CASE(scire_hdr_reth),
	KUNIT_CASE(scire_hdr_reth_retry),
	KUNIT_CASE(scire_hdr_atomic),
	KUNIT_CASE(scire_hdr_imm_ieth),
	KUNIT_CASE(scire_hdr_deth),
	KUNIT_CASE(scire_hdr_every_opcode),
	{}
};

static struct kunit_suite scire_hdr_suite = {
	.name = "scire_hdr",
	.test_cases = scire_hdr_cases,
};

kunit_test_suites(&scire_hdr_suite);
