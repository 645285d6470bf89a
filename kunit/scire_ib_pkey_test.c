// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: the P_Key rules of a scire_ib port (IBA 10.9.3), included at the
 * end of kernel/ib/scire_ib_net.c.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

/* Base values equal, not both limited members, never an invalid entry. */
static void scire_ib_pkey_match_case(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, scire_ib_pkey_match(0xffff, 0xffff));
	KUNIT_EXPECT_TRUE(test, scire_ib_pkey_match(0xffff, 0x7fff));
	KUNIT_EXPECT_TRUE(test, scire_ib_pkey_match(0x7fff, 0xffff));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0x7fff, 0x7fff));
	KUNIT_EXPECT_TRUE(test, scire_ib_pkey_match(0x8001, 0x8001));
	KUNIT_EXPECT_TRUE(test, scire_ib_pkey_match(0x8001, 0x0001));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0x0001, 0x0001));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0x8001, 0x8002));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0xffff, 0x8001));
	/* An invalid entry matches nothing, not even another invalid key. */
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0, 0));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0x8000, 0x8000));
	KUNIT_EXPECT_FALSE(test, scire_ib_pkey_match(0x8000, 0));
}

/* The first matching entry of a table; -1 when none matches. */
static void scire_ib_pkey_find_case(struct kunit *test)
{
	struct scire_ib_port *ib = kunit_kzalloc(test, sizeof(*ib), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ib);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0xffff), -1);
	ib->pkeys[0] = 0x7fff;
	ib->pkeys[3] = 0x8001;
	ib->pkeys[SCIRE_IB_PKEY_TBL_LEN - 1] = 0x0002;
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0xffff), 0);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0x7fff), -1);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0x0001), 3);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0x8002),
			SCIRE_IB_PKEY_TBL_LEN - 1);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0x0002), -1);
	KUNIT_EXPECT_EQ(test, scire_ib_pkey_find(ib, 0x8003), -1);
}

/*
 * The Notice of traps 257 and 258 as IBA 14.2.5.1 lays out its
 * DataDetails, as the kernel's struct places them: the SM decodes by
 * offset.
 */
static void scire_ib_key_notice_layout_case(struct kunit *test)
{
	struct ib_mad_notice_attr ntc;

	KUNIT_EXPECT_EQ(test, sizeof(ntc), 64U);
	KUNIT_EXPECT_EQ(test, offsetof(struct ib_mad_notice_attr, details), 10U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_257_258), lid1), 2U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_257_258), key), 6U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_257_258), sl_qp1), 10U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_257_258), gid1), 18U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_256), mkey), 14U);
	KUNIT_EXPECT_EQ(test, offsetof(typeof(ntc.details.ntc_256), dr_rtn_path), 24U);
}

static struct kunit_case scire_ib_pkey_cases[] = {
	KUNIT_CASE(scire_ib_pkey_match_case),
	KUNIT_CASE(scire_ib_pkey_find_case),
	KUNIT_CASE(scire_ib_key_notice_layout_case),
	{}
};

static struct kunit_suite scire_ib_pkey_suite = {
	.name = "scire_ib_pkey",
	.test_cases = scire_ib_pkey_cases,
};

kunit_test_suites(&scire_ib_pkey_suite);
