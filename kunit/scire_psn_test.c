// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: 24-bit PSN arithmetic and the BTH/AETH/AtomicETH accessors of
 * kernel/scire_hdr.h. PSNs compare as serial numbers (IBA 9.7.1): a PSN up
 * to 2^23 - 1 ahead is "after", across the wrap from 0xffffff to 0 too.
 * Included at the end of kernel/scire_hdr.c when the kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>
#include <linux/prandom.h>

#include "scire_compat.h"	/* the unaligned accessors, wherever they are */

#define SCIRE_TEST_PSN_HALF	BIT(23)

static void scire_psn_mask(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, scire_psn(0), 0U);
	KUNIT_EXPECT_EQ(test, scire_psn(0xffffff), 0xffffffU);
	KUNIT_EXPECT_EQ(test, scire_psn(0x1000000), 0U);
	KUNIT_EXPECT_EQ(test, scire_psn(0xffffff + 1), 0U);
	KUNIT_EXPECT_EQ(test, scire_psn(0xffffffff), 0xffffffU);
	KUNIT_EXPECT_EQ(test, scire_psn(0xab123456), 0x123456U);
}

static void scire_psn_cmp_equal(struct kunit *test)
{
	static const u32 psns[] = { 0, 1, 0x7fffff, 0x800000, 0xfffffe, 0xffffff };
	int i;

	for (i = 0; i < ARRAY_SIZE(psns); i++) {
		KUNIT_EXPECT_EQ(test, scire_psn_cmp(psns[i], psns[i]), 0);
		/* Bits above the 24 do not take part. */
		KUNIT_EXPECT_EQ(test, scire_psn_cmp(psns[i] | 0x5a000000, psns[i]), 0);
		KUNIT_EXPECT_EQ(test, scire_psn_cmp(psns[i], psns[i] | 0xff000000), 0);
	}
}

static void scire_psn_cmp_order(struct kunit *test)
{
	KUNIT_EXPECT_LT(test, scire_psn_cmp(1, 2), 0);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(2, 1), 0);
	KUNIT_EXPECT_LT(test, scire_psn_cmp(0x100, 0x7fff), 0);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(0x400000, 0x3fffff), 0);
}

/* Across the wrap, 0 comes after 0xffffff. */
static void scire_psn_cmp_wrap(struct kunit *test)
{
	KUNIT_EXPECT_LT(test, scire_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, scire_psn_cmp(0xfffff0, 0x10), 0);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(0x10, 0xfffff0), 0);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(scire_psn(0xffffff + 5), 0xfffffe), 0);
	/* More than half the space ahead is behind. */
	KUNIT_EXPECT_GT(test, scire_psn_cmp(0x000001, 0x800003), 0);
	KUNIT_EXPECT_LT(test, scire_psn_cmp(0x800003, 0x000001), 0);
}

/* Every distance 1 .. 2^23 - 1 ahead is after, from anywhere. */
static void scire_psn_cmp_window(struct kunit *test)
{
	static const u32 bases[] = { 0, 0x7fffff, 0x800000, 0xfffff0, 0xffffff };
	u32 d;
	int i;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		u32 a = bases[i];

		for (d = 1; d < SCIRE_TEST_PSN_HALF; d = d * 3 + 1) {
			u32 b = scire_psn(a + d);

			KUNIT_EXPECT_LT_MSG(test, scire_psn_cmp(a, b), 0,
					    "0x%06x vs 0x%06x", a, b);
			KUNIT_EXPECT_GT_MSG(test, scire_psn_cmp(b, a), 0,
					    "0x%06x vs 0x%06x", b, a);
		}
		KUNIT_EXPECT_LT(test, scire_psn_cmp(a, scire_psn(a + SCIRE_TEST_PSN_HALF - 1)), 0);
		KUNIT_EXPECT_GT(test, scire_psn_cmp(a, scire_psn(a + SCIRE_TEST_PSN_HALF + 1)), 0);
	}
}

/* Antisymmetric and consistent with subtraction on random pairs. */
static void scire_psn_cmp_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, 0x5c15e);
	for (i = 0; i < 10000; i++) {
		u32 a = prandom_u32_state(&rnd), b = prandom_u32_state(&rnd);
		u32 d = scire_psn(b - a);
		int ab = scire_psn_cmp(a, b), ba = scire_psn_cmp(b, a);

		if (d == 0) {
			KUNIT_EXPECT_EQ(test, ab, 0);
		} else if (d < SCIRE_TEST_PSN_HALF) {
			KUNIT_EXPECT_LT(test, ab, 0);
			KUNIT_EXPECT_GT(test, ba, 0);
		} else if (d > SCIRE_TEST_PSN_HALF) {
			KUNIT_EXPECT_GT(test, ab, 0);
			KUNIT_EXPECT_LT(test, ba, 0);
		}
	}
}

/* Comparisons chain within a window, across the wrap too. */
static void scire_psn_cmp_transitive(struct kunit *test)
{
	u32 a = 0xfffff0, b = scire_psn(a + 0x20), c = scire_psn(a + 0x1000);

	KUNIT_EXPECT_LT(test, scire_psn_cmp(a, b), 0);
	KUNIT_EXPECT_LT(test, scire_psn_cmp(b, c), 0);
	KUNIT_EXPECT_LT(test, scire_psn_cmp(a, c), 0);
}

static void scire_psn_bth_psn(struct kunit *test)
{
	struct scire_bth bth;

	scire_bth_init(&bth, SCIRE_OP_SEND_ONLY, false, 0, 0xffff, 1, true,
		       0x1234567);
	KUNIT_EXPECT_EQ(test, scire_bth_psn(&bth), 0x234567U);
	KUNIT_EXPECT_TRUE(test, scire_bth_ackreq(&bth));
	scire_bth_init(&bth, SCIRE_OP_SEND_ONLY, false, 0, 0xffff, 1, false,
		       0xffffff);
	KUNIT_EXPECT_EQ(test, scire_bth_psn(&bth), 0xffffffU);
	KUNIT_EXPECT_FALSE(test, scire_bth_ackreq(&bth));
	/* AckReq and the reserved bits are not part of the PSN. */
	bth.apsn |= cpu_to_be32(0xff000000);
	KUNIT_EXPECT_EQ(test, scire_bth_psn(&bth), 0xffffffU);
}

static void scire_psn_bth_qpn(struct kunit *test)
{
	struct scire_bth bth;

	scire_bth_init(&bth, 0, false, 0, 0xffff, 0xff123456, false, 0);
	KUNIT_EXPECT_EQ(test, scire_bth_qpn(&bth), 0x123456U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(bth.qpn), 0x123456U);
	/* FECN, BECN and resv6 are not part of the QPN. */
	bth.qpn |= cpu_to_be32(0xff000000);
	KUNIT_EXPECT_EQ(test, scire_bth_qpn(&bth), 0x123456U);
}

/* scire_bth_init() lays the BTH out byte for byte as IBA 9.2 does. */
static void scire_psn_bth_wire(struct kunit *test)
{
	static const u8 want[12] = {
		0x0a, 0x80 | 0x40 | 0x30, 0xab, 0xcd,
		0x00, 0x12, 0x34, 0x56, 0x80, 0xfe, 0xdc, 0xba,
	};
	struct scire_bth bth;

	scire_bth_init(&bth, 0x0a, true, 3, 0xabcd, 0x123456, true, 0xfedcba);
	KUNIT_EXPECT_EQ(test, memcmp(&bth, want, sizeof(want)), 0);
	KUNIT_EXPECT_EQ(test, scire_bth_pad(&bth), 3);
	KUNIT_EXPECT_EQ(test, bth.flags & SCIRE_BTH_TVER_MASK, 0);
}

static void scire_psn_bth_pad(struct kunit *test)
{
	struct scire_bth bth;
	u8 pad;

	for (pad = 0; pad < 4; pad++) {
		scire_bth_init(&bth, 0x04, pad & 1, pad, 0xffff, 2, false, pad);
		KUNIT_EXPECT_EQ(test, scire_bth_pad(&bth), pad);
		KUNIT_EXPECT_EQ(test, !!(bth.flags & SCIRE_BTH_SE), pad & 1);
		KUNIT_EXPECT_TRUE(test, bth.flags & SCIRE_BTH_MIG);
	}
}

static void scire_psn_aeth(struct kunit *test)
{
	struct scire_aeth aeth;

	scire_aeth_set(&aeth, SCIRE_AETH_NAK | SCIRE_NAK_REMOTE_ACCESS_ERR,
		       0x1abcdef);
	KUNIT_EXPECT_EQ(test, scire_aeth_syndrome(&aeth), 0x62);
	KUNIT_EXPECT_EQ(test, scire_aeth_msn(&aeth), 0xabcdefU);
	KUNIT_EXPECT_EQ(test, ((u8 *)&aeth)[0], 0x62);
	KUNIT_EXPECT_EQ(test, ((u8 *)&aeth)[3], 0xef);
	scire_aeth_set(&aeth, SCIRE_AETH_ACK_UNLIMITED, 0xffffff);
	KUNIT_EXPECT_EQ(test, scire_aeth_syndrome(&aeth), 0x1f);
	KUNIT_EXPECT_EQ(test, scire_aeth_syndrome(&aeth) & SCIRE_AETH_TYPE_MASK,
			SCIRE_AETH_ACK);
	KUNIT_EXPECT_EQ(test, scire_aeth_msn(&aeth), 0xffffffU);
}

/* AtomicETH 64-bit operands from their two big-endian halves. */
static void scire_psn_atmeth(struct kunit *test)
{
	static const u8 wire[28] = {
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x02, 0x01,
		0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,
		0x55, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88,
	};
	const struct scire_atmeth *a = (const void *)wire;

	KUNIT_EXPECT_EQ(test, scire_atmeth_swap_add(a), 0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, scire_atmeth_comp(a), 0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(&a->va), 0x7f0000001000ULL);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(a->rkey), 0x201U);
}

/* Stepping one PSN at a time through the wrap, each is after the last. */
static void scire_psn_step_wrap(struct kunit *test)
{
	u32 psn = 0xffffe0, i;

	for (i = 0; i < 64; i++) {
		u32 next = scire_psn(psn + 1);

		KUNIT_EXPECT_GT(test, scire_psn_cmp(next, psn), 0);
		KUNIT_EXPECT_LT(test, scire_psn_cmp(psn, next), 0);
		KUNIT_EXPECT_LE(test, next, 0xffffffU);
		psn = next;
	}
	KUNIT_EXPECT_EQ(test, psn, 0x20U);
	KUNIT_EXPECT_GT(test, scire_psn_cmp(psn, 0xffffe0), 0);
}

static struct kunit_case scire_psn_cases[] = {
	KUNIT_CASE(scire_psn_mask),
	KUNIT_CASE(scire_psn_cmp_equal),
	KUNIT_CASE(scire_psn_cmp_order),
	KUNIT_CASE(scire_psn_cmp_wrap),
	KUNIT_CASE(scire_psn_cmp_window),
	KUNIT_CASE(scire_psn_cmp_random),
	KUNIT_CASE(scire_psn_cmp_transitive),
	KUNIT_CASE(scire_psn_step_wrap),
	KUNIT_CASE(scire_psn_bth_psn),
	KUNIT_CASE(scire_psn_bth_qpn),
	KUNIT_CASE(scire_psn_bth_wire),
	KUNIT_CASE(scire_psn_bth_pad),
	KUNIT_CASE(scire_psn_aeth),
	KUNIT_CASE(scire_psn_atmeth),
	{}
};

static struct kunit_suite scire_psn_suite = {
	.name = "scire_psn",
	.test_cases = scire_psn_cases,
};

kunit_test_suites(&scire_psn_suite);
