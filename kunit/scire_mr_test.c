// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: memory regions and keys (kernel/scire_mr.c), on a device that is
 * only a key table (struct scire_dev with its mr_xa set up as
 * scire_newlink() does) and MRs made by scire_mr_alloc() and published by
 * scire_mr_publish(), so lookups run the driver's own code end to end.
 *
 * scire_mr: range arithmetic up to the ends of the u64 space, the
 * registration rights rule, scire_mr_lookup()'s decisions (PD, range,
 * rights, state) and scire_mr_copy()/scire_mr_atomic() on a fast-reg MR
 * between guard pages.
 * scire_key: key = index << 8 | key byte, both drawn from a keyed
 * permutation and hash, so that keys do not follow from each other; an
 * index comes back only in the next cycle of 2^24 keys, with another key
 * byte, and the old key no longer resolves; window keys resolve for
 * remote access only. Included at the end of kernel/scire_mr.c when the
 * kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

#define SCIRE_TEST_MAX_OBJ	8

struct scire_test_mr_env {
	struct scire_dev *sdev;
	struct scire_pd *pd;
	struct scire_pd *pd2;
	struct scire_mr *mr[SCIRE_TEST_MAX_OBJ];
	int num_mr;
	struct scire_mw_entry *mw[SCIRE_TEST_MAX_OBJ];
	int num_mw;
	unsigned long pages;	/* 4 pages: guard, 2 MR pages, guard */
};

static int scire_test_mr_init(struct kunit *test)
{
	struct scire_test_mr_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	if (!env)
		return -ENOMEM;
	env->sdev = kunit_kzalloc(test, sizeof(*env->sdev), GFP_KERNEL);
	env->pd = kunit_kzalloc(test, sizeof(*env->pd), GFP_KERNEL);
	env->pd2 = kunit_kzalloc(test, sizeof(*env->pd2), GFP_KERNEL);
	if (!env->sdev || !env->pd || !env->pd2)
		return -ENOMEM;
	xa_init_flags(&env->sdev->mr_xa, XA_FLAGS_ALLOC1);
	get_random_bytes(&env->sdev->key_secret, sizeof(env->sdev->key_secret));
	env->pd->ibpd.device = &env->sdev->ibdev;
	env->pd2->ibpd.device = &env->sdev->ibdev;
	test->priv = env;
	return 0;
}

static void scire_test_mr_exit(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	int i;

	for (i = 0; i < env->num_mw; i++) {
		struct scire_mw_entry *ent = env->mw[i];

		scire_key_remove(env->sdev, ent->rkey);
		if (ent->mr)
			scire_mr_put(ent->mr);
		kfree(ent);
	}
	for (i = 0; i < env->num_mr; i++) {
		struct scire_mr *mr = env->mr[i];

		if (!mr)
			continue;
		/* Every lookup a test made has been put again. */
		KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1);
		scire_key_remove(env->sdev, scire_mr_word_key(atomic64_read(&mr->state)));
		scire_mr_free(mr);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), 0);
	xa_destroy(&env->sdev->mr_xa);
	if (env->pages)
		free_pages(env->pages, 2);
}

/* A published MR of @type on @pd covering [@iova, @iova + @length). */
static struct scire_mr *scire_test_mr(struct kunit *test, struct scire_pd *pd,
				      enum scire_mr_type type, int access,
				      u64 iova, u64 length,
				      enum scire_mr_state state)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;

	KUNIT_ASSERT_LT(test, env->num_mr, SCIRE_TEST_MAX_OBJ);
	mr = scire_mr_alloc(&pd->ibpd, access, type);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr->iova = iova;
	mr->length = length;
	env->mr[env->num_mr++] = mr;
	KUNIT_ASSERT_EQ(test, scire_mr_publish(env->sdev, mr, state), 0);
	return mr;
}

/* Deregister @mr as dereg does: the key goes, then the MR. */
static void scire_test_mr_drop(struct kunit *test, struct scire_mr *mr)
{
	struct scire_test_mr_env *env = test->priv;
	int i;

	for (i = 0; i < env->num_mr; i++)
		if (env->mr[i] == mr)
			env->mr[i] = NULL;
	scire_key_remove(env->sdev, mr->ibmr.lkey);
	scire_mr_free(mr);
}

/* A fast-reg MR over two pages of memory with a guard page either side. */
static struct scire_mr *scire_test_fast_mr(struct kunit *test, int access,
					   u64 iova)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;

	env->pages = __get_free_pages(GFP_KERNEL | __GFP_ZERO, 2);
	KUNIT_ASSERT_NE(test, env->pages, 0UL);
	mr = scire_test_mr(test, env->pd, SCIRE_MR_FAST, access, iova,
			   2 * PAGE_SIZE, SCIRE_MR_VALID);
	mr->page_va = kvcalloc(2, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->page_va);
	mr->page_va[0] = env->pages + PAGE_SIZE;
	mr->page_va[1] = env->pages + 2 * PAGE_SIZE;
	mr->npages = 2;
	mr->max_pages = 2;
	return mr;
}

static bool scire_test_guards_clean(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	u8 *p = (u8 *)env->pages;

	return !memchr_inv(p, 0, PAGE_SIZE) &&
	       !memchr_inv(p + 3 * PAGE_SIZE, 0, PAGE_SIZE);
}

/* --- scire_mr ------------------------------------------------------ */

static void scire_mr_range_inside(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0x1000, 0x1000, 0x1000, 0x1000));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0x1000, 0x1000, 0x1800, 0x800));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0x1000, 0x1000, 0x1fff, 1));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x1fff, 2));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x1000, 0x1001));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0xfff, 1));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x2000, 1));
}

/* Zero bytes may be named at the end of a region but not past it. */
static void scire_mr_range_empty(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0x1000, 0x1000, 0x2000, 0));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x2001, 0));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0xfff, 0));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0x1000, 0, 0x1000, 0));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0, 0x1000, 1));
}

/* A region ending at the top of the u64 space: nothing wraps to 0. */
static void scire_mr_range_top(struct kunit *test)
{
	u64 start = U64_MAX - 0xfff, length = 0x1000;

	KUNIT_EXPECT_TRUE(test, scire_range_ok(start, length, U64_MAX, 1));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(start, length, start, length));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(start, length, U64_MAX, 2));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(start, length, U64_MAX, U64_MAX));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(start, length, 0, 1));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(start, length, start, length + 1));
}

/* iova + len wrapping past 2^64 into the region is refused. */
static void scire_mr_range_wrap(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x1800, U64_MAX));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, 0x1800,
						U64_MAX - 0x7ff));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0x1000, 0x1000, U64_MAX, 0x1002));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0, 0x1000, U64_MAX - 0xf, 0x20));
}

/* The whole u64 space as one region (the DMA MR's shape). */
static void scire_mr_range_whole(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0, U64_MAX, 0, U64_MAX));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0, U64_MAX, U64_MAX, 0));
	KUNIT_EXPECT_TRUE(test, scire_range_ok(0, U64_MAX, U64_MAX - 1, 1));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0, U64_MAX, 1, U64_MAX));
	KUNIT_EXPECT_FALSE(test, scire_range_ok(0, U64_MAX, U64_MAX, 1));
}

/* IBA 10.6: remote write and atomic need local write; unknown bits fail. */
static void scire_mr_access_rules(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, scire_mr_access_ok(0));
	KUNIT_EXPECT_TRUE(test, scire_mr_access_ok(IB_ACCESS_LOCAL_WRITE));
	KUNIT_EXPECT_TRUE(test, scire_mr_access_ok(IB_ACCESS_REMOTE_READ));
	KUNIT_EXPECT_TRUE(test, scire_mr_access_ok(IB_ACCESS_LOCAL_WRITE |
						   IB_ACCESS_REMOTE_WRITE |
						   IB_ACCESS_REMOTE_READ |
						   IB_ACCESS_REMOTE_ATOMIC |
						   IB_ACCESS_MW_BIND));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(IB_ACCESS_REMOTE_ATOMIC));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(IB_ACCESS_REMOTE_READ |
						    IB_ACCESS_REMOTE_ATOMIC));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(IB_ZERO_BASED));
	/* ODP MRs (kernel/scire_odp.c). */
	KUNIT_EXPECT_TRUE(test, scire_mr_access_ok(IB_ACCESS_ON_DEMAND |
						   IB_ACCESS_LOCAL_WRITE));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(IB_ACCESS_ON_DEMAND |
						    IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(BIT(30)));
	KUNIT_EXPECT_FALSE(test, scire_mr_access_ok(-1));
}

/* A lookup inside the region with granted rights returns the MR, held. */
static void scire_mr_lookup_ok(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr, *got;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
			   0x10000, 0x3000, SCIRE_MR_VALID);
	KUNIT_EXPECT_EQ(test, mr->ibmr.lkey, mr->ibmr.rkey);
	got = scire_mr_lookup(env->pd, mr->ibmr.lkey, false, 0x10000, 0x3000,
			      IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 2);
	scire_mr_put(got);
	got = scire_mr_lookup(env->pd, mr->ibmr.rkey, true, 0x12fff, 1,
			      IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	scire_mr_put(got);
}

/* Another PD's QP cannot use the MR, locally or remotely. */
static void scire_mr_lookup_wrong_pd(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
			   0x10000, 0x1000, SCIRE_MR_VALID);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd2, mr->ibmr.lkey,
						      false, 0x10000, 1, 0)),
			-EACCES);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd2, mr->ibmr.rkey, true,
						      0x10000, 1,
						      IB_ACCESS_REMOTE_READ)),
			-EACCES);
}

/* Out of range at either end, and across the top of the u64 space. */
static void scire_mr_lookup_range(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr, *top;
	u32 key;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA, IB_ACCESS_REMOTE_READ,
			   0x10000, 0x1000, SCIRE_MR_VALID);
	key = mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, true, 0xffff, 1,
						      IB_ACCESS_REMOTE_READ)), -ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, true, 0x10fff, 2,
						      IB_ACCESS_REMOTE_READ)), -ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, true, 0x10800,
						      U64_MAX, IB_ACCESS_REMOTE_READ)),
			-ERANGE);

	top = scire_test_mr(test, env->pd, SCIRE_MR_DMA, IB_ACCESS_REMOTE_READ,
			    U64_MAX - 0xfff, 0x1000, SCIRE_MR_VALID);
	key = top->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, true, U64_MAX, 2,
						      IB_ACCESS_REMOTE_READ)), -ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, true, 0, 1,
						      IB_ACCESS_REMOTE_READ)), -ERANGE);
	mr = scire_mr_lookup(env->pd, key, true, U64_MAX, 1, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_PTR_EQ(test, mr, top);
	scire_mr_put(mr);
}

/* Each right must have been granted: remote ones and local write. */
static void scire_mr_lookup_rights(struct kunit *test)
{
	static const int rights[] = {
		IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_READ,
		IB_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_ATOMIC, IB_ACCESS_MW_BIND,
	};
	struct scire_test_mr_env *env = test->priv;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(rights); i++) {
		struct scire_mr *mr;
		int granted = IB_ACCESS_LOCAL_WRITE | rights[i];

		if (env->num_mr)
			scire_test_mr_drop(test, env->mr[env->num_mr - 1]);
		env->num_mr = 0;
		mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA, granted, 0, 0x100,
				   SCIRE_MR_VALID);
		for (j = 0; j < ARRAY_SIZE(rights); j++) {
			struct scire_mr *got;

			got = scire_mr_lookup(env->pd, mr->ibmr.lkey,
					      rights[j] != IB_ACCESS_LOCAL_WRITE &&
					      rights[j] != IB_ACCESS_MW_BIND,
					      0, 8, rights[j]);
			if (granted & rights[j]) {
				KUNIT_EXPECT_PTR_EQ(test, got, mr);
				if (!IS_ERR(got))
					scire_mr_put(got);
			} else {
				KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(got), -EACCES,
						    "granted 0x%x asked 0x%x",
						    granted, rights[j]);
			}
		}
	}
}

/* A fast-reg MR resolves only while VALID (between REG_MR and invalidate). */
static void scire_mr_lookup_state(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr, *got;
	u32 key;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_FAST, IB_ACCESS_LOCAL_WRITE,
			   0x1000, 0x1000, SCIRE_MR_FREE);
	key = mr->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, false, 0x1000, 1, 0)),
			-EINVAL);
	atomic64_set(&mr->state, scire_mr_word(key, SCIRE_MR_BUSY));
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, false, 0x1000, 1, 0)),
			-EINVAL);
	KUNIT_EXPECT_NULL(test, scire_mr_get(env->sdev, key));
	atomic64_set(&mr->state, scire_mr_word(key, SCIRE_MR_VALID));
	got = scire_mr_lookup(env->pd, key, false, 0x1000, 1, 0);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	scire_mr_put(got);
}

/* Copies reach the last byte of the region and never a byte beyond it. */
static void scire_mr_copy_bounds(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	u64 iova = 0x7000000000ULL;
	struct scire_mr *mr;
	u8 buf[16], *mem;

	mr = scire_test_fast_mr(test, IB_ACCESS_LOCAL_WRITE, iova);
	mem = (u8 *)env->pages + PAGE_SIZE;
	memset(buf, 0xa5, sizeof(buf));
	/* Straddling the two pages, then the very end. */
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova + PAGE_SIZE - 8, buf, 16, true), 0);
	KUNIT_EXPECT_EQ(test, mem[PAGE_SIZE - 8], 0xa5);
	KUNIT_EXPECT_EQ(test, mem[PAGE_SIZE + 7], 0xa5);
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova + 2 * PAGE_SIZE - 16, buf, 16,
					    true), 0);
	KUNIT_EXPECT_EQ(test, mem[2 * PAGE_SIZE - 1], 0xa5);
	/* One past either end. */
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova + 2 * PAGE_SIZE - 15, buf, 16,
					    true), -ERANGE);
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova - 1, buf, 16, true), -ERANGE);
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova - 1, buf, 1, false), -ERANGE);
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, U64_MAX, buf, 2, true), -ERANGE);
	KUNIT_EXPECT_TRUE(test, scire_test_guards_clean(test));
	/* Read back what was written. */
	memset(buf, 0, sizeof(buf));
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, iova + PAGE_SIZE - 8, buf, 16, false), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 0xa5, sizeof(buf)));
}

/* Stores need local write; an invalidated fast-reg MR copies nothing. */
static void scire_mr_copy_checks(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;
	u8 buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	u8 *mem;

	mr = scire_test_fast_mr(test, IB_ACCESS_REMOTE_READ, 0x1000);
	mem = (u8 *)env->pages + PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, 0x1000, buf, 8, true), -EACCES);
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, 0x1000, buf, 8, false), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 0, sizeof(buf)));
	mr->access |= IB_ACCESS_LOCAL_WRITE;
	atomic64_set(&mr->state, scire_mr_word(mr->ibmr.lkey, SCIRE_MR_FREE));
	buf[0] = 9;
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, 0x1000, buf, 8, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mem[0], 0);
	/* A page list shorter than the region: -EFAULT, not a wild access. */
	atomic64_set(&mr->state, scire_mr_word(mr->ibmr.lkey, SCIRE_MR_VALID));
	mr->npages = 1;
	KUNIT_EXPECT_EQ(test, scire_mr_copy(mr, 0x1000 + PAGE_SIZE, buf, 8, true),
			-EFAULT);
	KUNIT_EXPECT_TRUE(test, scire_test_guards_clean(test));
}

/* Atomics: aligned only, within the region, with the IBA semantics. */
static void scire_mr_atomics(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	u64 iova = 0x40000, orig = 0, *word;
	struct scire_mr *mr;

	mr = scire_test_fast_mr(test, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC,
				iova);
	word = (u64 *)(env->pages + 3 * PAGE_SIZE - 8);
	*word = 40;
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova + 2 * PAGE_SIZE - 8, false,
					      2, 0, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, 40ULL);
	KUNIT_EXPECT_EQ(test, *word, 42ULL);
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova + 2 * PAGE_SIZE - 8, true,
					      41, 7, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, 42ULL);
	KUNIT_EXPECT_EQ(test, *word, 42ULL);	/* compare failed: unchanged */
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova + 2 * PAGE_SIZE - 8, true,
					      42, 7, &orig), 0);
	KUNIT_EXPECT_EQ(test, *word, 7ULL);
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova + 4, false, 1, 0, &orig),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova + 2 * PAGE_SIZE, false, 1, 0,
					      &orig), -ERANGE);
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, iova - 8, false, 1, 0, &orig),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, scire_mr_atomic(mr, U64_MAX - 7, false, 1, 0, &orig),
			-ERANGE);
	KUNIT_EXPECT_TRUE(test, scire_test_guards_clean(test));
}

/* --- scire_key ----------------------------------------------------- */

/* Keys are index << 8 | key byte, the index in [1, 2^24), one per key. */
static void scire_key_layout(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *a, *b;

	a = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 1, SCIRE_MR_VALID);
	b = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 1, SCIRE_MR_VALID);
	KUNIT_EXPECT_NE(test, a->ibmr.lkey >> 8, 0U);
	KUNIT_EXPECT_NE(test, b->ibmr.lkey >> 8, 0U);
	KUNIT_EXPECT_NE(test, a->ibmr.lkey >> 8, b->ibmr.lkey >> 8);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&env->sdev->mr_xa, a->ibmr.lkey >> 8),
			    xa_tag_pointer(a, SCIRE_KEY_MR));
	KUNIT_EXPECT_EQ(test, scire_mr_word_key(atomic64_read(&a->state)),
			a->ibmr.lkey);
	KUNIT_EXPECT_EQ(test, scire_mr_word_state(atomic64_read(&a->state)),
			SCIRE_MR_VALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), 2);
}

/*
 * Keys handed out in a row do not follow from each other: the indices of
 * 256 keys are distinct and almost never adjacent (a counter's always
 * are), their key bytes take many values, and a device with another
 * secret hands out other keys.
 */
static void scire_key_unpredictable(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	DECLARE_BITMAP(bytes, 256);
	u32 keys[256], other, i, j, adjacent = 0;
	siphash_key_t secret = env->sdev->key_secret;

	bitmap_zero(bytes, 256);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		KUNIT_ASSERT_EQ(test, scire_key_reserve(env->sdev, &keys[i]), 0);
		set_bit(keys[i] & 0xff, bytes);
		if (i && abs((s32)(keys[i] >> 8) - (s32)(keys[i - 1] >> 8)) == 1)
			adjacent++;
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, keys[i] >> 8, keys[j] >> 8);
	}
	/* 256 of 2^24 indices: adjacent pairs are ~2^-15 likely each. */
	KUNIT_EXPECT_LT(test, adjacent, 4U);
	/* 256 bytes drawn: ~162 distinct on average, below 120 ~never. */
	KUNIT_EXPECT_GT(test, bitmap_weight(bytes, 256), 120U);
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		scire_key_remove(env->sdev, keys[i]);

	/* The same count under another secret: another first key. */
	env->sdev->key_count = 0;
	get_random_bytes(&env->sdev->key_secret, sizeof(env->sdev->key_secret));
	KUNIT_ASSERT_EQ(test, scire_key_reserve(env->sdev, &other), 0);
	if (memcmp(&secret, &env->sdev->key_secret, sizeof(secret)))
		KUNIT_EXPECT_NE(test, other, keys[0]);
	scire_key_remove(env->sdev, other);
}

/*
 * A deregistered MR's index is reused by a new MR: the new key differs in
 * its generation byte, the old key finds the new MR but is rejected.
 */
static void scire_key_stale_rejected(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *old, *new, *got;
	u32 old_key;
	u64 count = env->sdev->key_count;

	old = scire_test_mr(test, env->pd, SCIRE_MR_DMA, IB_ACCESS_REMOTE_READ, 0,
			    0x100, SCIRE_MR_VALID);
	old_key = old->ibmr.rkey;
	scire_test_mr_drop(test, old);
	/* The same place in the next cycle: the allocator reuses the index. */
	env->sdev->key_count = count + BIT_ULL(SCIRE_KEY_INDEX_BITS);
	new = scire_test_mr(test, env->pd, SCIRE_MR_DMA, IB_ACCESS_REMOTE_READ, 0,
			    0x100, SCIRE_MR_VALID);
	KUNIT_ASSERT_EQ(test, new->ibmr.rkey >> 8, old_key >> 8);
	KUNIT_EXPECT_EQ(test, (u8)(new->ibmr.rkey - old_key), 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, old_key, true, 0, 8,
						      IB_ACCESS_REMOTE_READ)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, old_key, false, 0, 8,
						      0)), -EINVAL);
	KUNIT_EXPECT_NULL(test, scire_mr_get(env->sdev, old_key));
	got = scire_mr_lookup(env->pd, new->ibmr.rkey, true, 0, 8,
			      IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_PTR_EQ(test, got, new);
	if (!IS_ERR(got))
		scire_mr_put(got);
}

/* Every other generation of a live MR's index is rejected. */
static void scire_key_wrong_generation(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;
	u32 key, g;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 0x100, SCIRE_MR_VALID);
	key = mr->ibmr.lkey;
	for (g = 0; g < 256; g++) {
		u32 k = (key & ~0xffU) | g;
		struct scire_mr *got = scire_mr_lookup(env->pd, k, false, 0, 1, 0);

		if (k == key) {
			KUNIT_EXPECT_PTR_EQ(test, got, mr);
			if (!IS_ERR(got))
				scire_mr_put(got);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(got), -EINVAL, "key 0x%x", k);
		}
	}
}

/* Keys of unused indices, index 0 included, resolve to nothing. */
static void scire_key_unknown(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	static const u32 keys[] = { 0, 0xff, 0x100, 0x12345678, 0xffffffff };
	int i;

	scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 0x100, SCIRE_MR_VALID);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if ((keys[i] >> 8) == 1)
			continue;
		KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, keys[i], false,
							      0, 1, 0)), -EINVAL);
		KUNIT_EXPECT_NULL(test, scire_mr_get(env->sdev, keys[i]));
	}
}

/* The per-device MR limit holds and a refused reservation leaves no trace. */
static void scire_key_limit(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	u32 key = 0;

	atomic_set(&env->sdev->num_mr, SCIRE_MAX_MR);
	KUNIT_EXPECT_EQ(test, scire_key_reserve(env->sdev, &key), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), SCIRE_MAX_MR);
	KUNIT_EXPECT_TRUE(test, xa_empty(&env->sdev->mr_xa));
	atomic_set(&env->sdev->num_mr, SCIRE_MAX_MR - 1);
	KUNIT_EXPECT_EQ(test, scire_key_reserve(env->sdev, &key), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), SCIRE_MAX_MR);
	scire_key_remove(env->sdev, key);
	atomic_set(&env->sdev->num_mr, 0);
}

/* A freed index is not handed out again at once (cyclic allocation). */
static void scire_key_cyclic(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *a, *b;
	u32 first;

	a = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 1, SCIRE_MR_VALID);
	first = a->ibmr.lkey >> 8;
	scire_test_mr_drop(test, a);
	b = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 1, SCIRE_MR_VALID);
	KUNIT_EXPECT_NE(test, b->ibmr.lkey >> 8, first);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), 1);
}

/* A bound window over [@addr, @addr + @length) of @mr, with its own key. */
static struct scire_mw_entry *scire_test_mw(struct kunit *test,
					    struct scire_mr *mr, u64 addr,
					    u64 length, int access)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mw_entry *ent;

	KUNIT_ASSERT_LT(test, env->num_mw, SCIRE_TEST_MAX_OBJ);
	ent = kzalloc(sizeof(*ent), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ent);
	KUNIT_ASSERT_EQ(test, scire_key_reserve(env->sdev, &ent->rkey), 0);
	env->mw[env->num_mw++] = ent;
	spin_lock_init(&ent->lock);
	ent->state = SCIRE_MW_BOUND;
	ent->pd = env->pd;
	ent->mr = mr;
	refcount_inc(&mr->ref);
	ent->addr = addr;
	ent->length = length;
	ent->access = access;
	scire_key_publish(env->sdev, ent->rkey, xa_tag_pointer(ent, SCIRE_KEY_MW));
	return ent;
}

/* A window key resolves for remote access within the window only. */
static void scire_key_window(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mw_entry *ent;
	struct scire_mr *mr, *got;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			   IB_ACCESS_MW_BIND, 0x10000, 0x10000, SCIRE_MR_VALID);
	ent = scire_test_mw(test, mr, 0x14000, 0x1000, IB_ACCESS_REMOTE_WRITE);
	got = scire_mr_lookup(env->pd, ent->rkey, true, 0x14000, 0x1000,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	scire_mr_put(got);
	/* Inside the MR but outside the window. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, true,
						      0x13fff, 2,
						      IB_ACCESS_REMOTE_WRITE)), -ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, true,
						      0x14fff, 2,
						      IB_ACCESS_REMOTE_WRITE)), -ERANGE);
	/* A right the MR has but the window does not grant. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, true,
						      0x14000, 8,
						      IB_ACCESS_REMOTE_READ)), -EACCES);
	/* Another PD, another generation, local use: refused. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd2, ent->rkey, true,
						      0x14000, 8,
						      IB_ACCESS_REMOTE_WRITE)), -EACCES);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey ^ 1, true,
						      0x14000, 8,
						      IB_ACCESS_REMOTE_WRITE)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, false,
						      0x14000, 8, 0)), -EINVAL);
	KUNIT_EXPECT_NULL(test, scire_mr_get(env->sdev, ent->rkey));
}

/* An unbound window, or one over an invalidated MR, grants nothing. */
static void scire_key_window_state(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mw_entry *ent;
	struct scire_mr *mr;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_FAST,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ, 0,
			   0x1000, SCIRE_MR_VALID);
	ent = scire_test_mw(test, mr, 0, 0x1000, IB_ACCESS_REMOTE_READ);
	atomic64_set(&mr->state, scire_mr_word(mr->ibmr.lkey, SCIRE_MR_FREE));
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, true, 0, 8,
						      IB_ACCESS_REMOTE_READ)), -EINVAL);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 2);
	atomic64_set(&mr->state, scire_mr_word(mr->ibmr.lkey, SCIRE_MR_VALID));
	ent->state = SCIRE_MW_FREE;
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, ent->rkey, true, 0, 8,
						      IB_ACCESS_REMOTE_READ)), -EINVAL);
}

/* A zero-length access names a byte of the region, or its end. */
static void scire_mr_lookup_zero_len(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr, *got;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA, IB_ACCESS_REMOTE_WRITE |
			   IB_ACCESS_LOCAL_WRITE, 0x10000, 0x1000, SCIRE_MR_VALID);
	got = scire_mr_lookup(env->pd, mr->ibmr.rkey, true, 0x11000, 0,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	scire_mr_put(got);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, mr->ibmr.rkey, true,
						      0x11001, 0,
						      IB_ACCESS_REMOTE_WRITE)), -ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, mr->ibmr.rkey, true,
						      0xffff, 0,
						      IB_ACCESS_REMOTE_WRITE)), -ERANGE);
}

static struct kunit_case scire_mr_cases[] = {
	KUNIT_CASE(scire_mr_range_inside),
	KUNIT_CASE(scire_mr_range_empty),
	KUNIT_CASE(scire_mr_range_top),
	KUNIT_CASE(scire_mr_range_wrap),
	KUNIT_CASE(scire_mr_range_whole),
	KUNIT_CASE(scire_mr_access_rules),
	KUNIT_CASE(scire_mr_lookup_ok),
	KUNIT_CASE(scire_mr_lookup_wrong_pd),
	KUNIT_CASE(scire_mr_lookup_range),
	KUNIT_CASE(scire_mr_lookup_rights),
	KUNIT_CASE(scire_mr_lookup_state),
	KUNIT_CASE(scire_mr_lookup_zero_len),
	KUNIT_CASE(scire_mr_copy_bounds),
	KUNIT_CASE(scire_mr_copy_checks),
	KUNIT_CASE(scire_mr_atomics),
	{}
};

static struct kunit_suite scire_mr_suite = {
	.name = "scire_mr",
	.init = scire_test_mr_init,
	.exit = scire_test_mr_exit,
	.test_cases = scire_mr_cases,
};

/* A removed key resolves no more and gives its count back. */
static void scire_key_removed(struct kunit *test)
{
	struct scire_test_mr_env *env = test->priv;
	struct scire_mr *mr;
	u32 key;

	mr = scire_test_mr(test, env->pd, SCIRE_MR_DMA, 0, 0, 0x100, SCIRE_MR_VALID);
	key = mr->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), 1);
	scire_test_mr_drop(test, mr);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->sdev->num_mr), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(scire_mr_lookup(env->pd, key, false, 0, 1, 0)),
			-EINVAL);
	KUNIT_EXPECT_NULL(test, scire_mr_get(env->sdev, key));
	KUNIT_EXPECT_NULL(test, xa_load(&env->sdev->mr_xa, key >> 8));
}

static struct kunit_case scire_key_cases[] = {
	KUNIT_CASE(scire_key_layout),
	KUNIT_CASE(scire_key_unpredictable),
	KUNIT_CASE(scire_key_stale_rejected),
	KUNIT_CASE(scire_key_wrong_generation),
	KUNIT_CASE(scire_key_unknown),
	KUNIT_CASE(scire_key_limit),
	KUNIT_CASE(scire_key_cyclic),
	KUNIT_CASE(scire_key_removed),
	KUNIT_CASE(scire_key_window),
	KUNIT_CASE(scire_key_window_state),
	{}
};

static struct kunit_suite scire_key_suite = {
	.name = "scire_key",
	.init = scire_test_mr_init,
	.exit = scire_test_mr_exit,
	.test_cases = scire_key_cases,
};

kunit_test_suites(&scire_mr_suite, &scire_key_suite);
