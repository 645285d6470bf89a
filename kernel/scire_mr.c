// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: memory regions, memory windows and the key table.
 *
 * Every MR and every memory window is found by key in scire_dev.mr_xa: the
 * upper 24 bits of an lkey/rkey are the table index, the low 8 bits a
 * generation byte, so a stale key whose index was reused no longer matches
 * (IBA 10.6.3.2: the "key" portion of an L_Key/R_Key is owned by the
 * consumer, here by the device; fast registration and window binds let the
 * consumer choose it). Entries are tagged pointers: SCIRE_KEY_MR for a
 * struct scire_mr, SCIRE_KEY_MW for a struct scire_mw_entry. lkey and rkey
 * of an MR are equal; a window has an rkey only.
 *
 * scire_mr_lookup() is the one place that decides whether an access is
 * allowed. The data path moves bytes only with scire_mr_copy() and
 * scire_mr_atomic() on an MR that lookup returned.
 *
 * Lifetimes: readers find entries under RCU and hold the MR with a
 * reference; dereg removes the key, then waits for the references, and the
 * memory is freed after a grace period. A bound window holds a reference on
 * its MR, so an MR with windows bound cannot be deregistered: dereg fails
 * with -EBUSY instead of waiting for a window the same process may only
 * release later (ibv_dereg_mr(3) documents that failure).
 *
 * Fast registration keeps two page lists: map_mr_sg fills the staging one,
 * REG_MR swaps it in. A kernel ULP may map the next registration while the
 * previous one is still valid (iSER posts LOCAL_INV and REG_MR after
 * mapping), and peers holding the old rkey must keep seeing the old pages
 * until the invalidation executes.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/dma-buf.h>
#include <linux/highmem.h>
#include <linux/ioport.h>
#include <linux/libnvdimm.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>

#include "scire.h"

/* Access rights an MR may be granted; the optional range is only hints. */
#define SCIRE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB |	  \
			 IB_ACCESS_OPTIONAL | IB_ACCESS_ON_DEMAND | \
			 SCIRE_ACCESS_FLUSH_GLOBAL | SCIRE_ACCESS_FLUSH_PERSISTENT)

#define SCIRE_ACCESS_REMOTE	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/* Remote rights that store into memory: they need writable pinned pages. */
#define SCIRE_ACCESS_STORES	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/*
 * Rights a BIND_MW WQE may ask for. LOCAL_WRITE is accepted (applications
 * pass the MR's flags) and means nothing for a window; ZERO_BASED windows
 * are not supported: the data path addresses every MR by its iova.
 */
#define SCIRE_MW_ACCESS		(SCIRE_ACCESS_REMOTE | IB_ACCESS_LOCAL_WRITE)

/* Tags of key-table entries (xa_tag_pointer). */
enum scire_key_tag {
	SCIRE_KEY_MR = 0,
	SCIRE_KEY_MW = 1,
};

/* The value of scire_mr.state: key in the upper half, state in the lower. */
static inline s64 scire_mr_word(u32 key, enum scire_mr_state state)
{
	return (s64)((u64)key << 32 | state);
}

static inline u32 scire_mr_word_key(s64 word)
{
	return (u64)word >> 32;
}

static inline enum scire_mr_state scire_mr_word_state(s64 word)
{
	return (u32)word;
}

static inline struct scire_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct scire_mw, ibmw);
}

/* Does [iova, iova + len) lie within [start, start + length)? No overflow. */
static bool scire_range_ok(u64 start, u64 length, u64 iova, u64 len)
{
	return iova >= start && iova - start <= length &&
	       len <= length - (iova - start);
}

/* Key indices are 24 bits; index 0 is never used (XA_FLAGS_ALLOC1). */
#define SCIRE_KEY_INDEX_BITS	24
#define SCIRE_KEY_HALF_BITS	(SCIRE_KEY_INDEX_BITS / 2)
#define SCIRE_KEY_HALF_MASK	(BIT(SCIRE_KEY_HALF_BITS) - 1)
/* Occupied indices skipped before giving up; each is at most 1/16 likely. */
#define SCIRE_KEY_TRIES		64

/*
 * scire_key_index() - the key index of the @n-th key of a cycle: a keyed
 * permutation of [0, 2^24), four rounds of a Feistel network on 12-bit
 * halves with SipHash as the round function. Being a permutation, each
 * index comes once per cycle of 2^24 keys; being keyed by a secret, the
 * next index cannot be told from the ones seen.
 */
static u32 scire_key_index(const siphash_key_t *secret, u32 n)
{
	u32 left = (n >> SCIRE_KEY_HALF_BITS) & SCIRE_KEY_HALF_MASK;
	u32 right = n & SCIRE_KEY_HALF_MASK;
	u32 round, next;

	for (round = 0; round < 4; round++) {
		next = left ^ (siphash_2u32(right, round, secret) &
			       SCIRE_KEY_HALF_MASK);
		left = right;
		right = next;
	}
	return left << SCIRE_KEY_HALF_BITS | right;
}

/*
 * scire_key_reserve() - reserve a key-table index and choose the key.
 *
 * The key of an MR or memory window is index << 8 | key byte. The index
 * is the device's next count run through scire_key_index(), so it is
 * spread over the 24-bit space in an order only the device knows, and an
 * index comes back only after 2^24 more keys. The key byte of an index is
 * a keyed hash of it plus the cycle of the count, so it is unpredictable
 * too, and a reused index never gets the byte it had the time before: a
 * stale rkey does not resolve. The entry is stored by scire_key_publish()
 * once the object is ready.
 *
 * Return: 0, -ENOMEM when the device has SCIRE_MAX_MR keys or no free
 * index was found, or the xarray's error.
 */
static noinline int scire_key_reserve(struct scire_dev *sdev, u32 *key)
{
	u32 index, tries;
	u64 count;
	int ret = -ENOMEM;

	if (atomic_inc_return(&sdev->num_mr) > SCIRE_MAX_MR)
		goto out;
	for (tries = 0; tries < SCIRE_KEY_TRIES; tries++) {
		/* The count is serialised by the xarray lock. */
		xa_lock(&sdev->mr_xa);
		count = sdev->key_count++;
		xa_unlock(&sdev->mr_xa);
		index = scire_key_index(&sdev->key_secret,
					lower_32_bits(count) &
					(BIT(SCIRE_KEY_INDEX_BITS) - 1));
		if (!index)
			continue;
		/* A NULL entry reserves the slot; -EBUSY if it is taken. */
		ret = xa_insert(&sdev->mr_xa, index, NULL, GFP_KERNEL);
		if (ret == -EBUSY)
			continue;
		if (ret)
			break;
		*key = index << 8 |
		       (u8)(siphash_2u32(index, 4, &sdev->key_secret) +
			    (count >> SCIRE_KEY_INDEX_BITS));
		return 0;
	}
	if (ret == -EBUSY)
		ret = -ENOMEM;
out:
	atomic_dec(&sdev->num_mr);
	return ret;
}

ALLOW_ERROR_INJECTION(scire_key_reserve, ERRNO);

/* From here on the data path can find @entry; its fields must be set. */
static void scire_key_publish(struct scire_dev *sdev, u32 key, void *entry)
{
	/* The slot is reserved, so the store allocates nothing. */
	xa_store(&sdev->mr_xa, key >> 8, entry, GFP_KERNEL);
}

/* Remove a published key; lookups already under way may still see it. */
static void scire_key_remove(struct scire_dev *sdev, u32 key)
{
	xa_erase(&sdev->mr_xa, key >> 8);
	atomic_dec(&sdev->num_mr);
}

static struct scire_mr *scire_mr_alloc(struct ib_pd *ibpd, int access,
				       enum scire_mr_type type)
{
	struct scire_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* The core sets these too, but only after the key is published. */
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	mr->type = type;
	mr->access = access;
	mr->page_shift = PAGE_SHIFT;
	atomic_set(&mr->num_mw, 0);
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;
}

static void scire_mr_free(struct scire_mr *mr)
{
	/*
	 * An implicit ODP MR's children go before its root; an ODP umem's
	 * release waits for an invalidation in progress.
	 */
	if (mr->odp)
		scire_odp_unreg(mr);
	ib_umem_release(mr->umem);
	if (mr->dm)
		rdma_user_mmap_entry_put(&mr->dm->rdma);
	if (mr->dmabuf) {
		if (!iosys_map_is_null(&mr->dmabuf_map)) {
			scire_dma_buf_vunmap(mr->dmabuf, &mr->dmabuf_map);
			dma_buf_end_cpu_access(mr->dmabuf, DMA_BIDIRECTIONAL);
		}
		dma_buf_put(mr->dmabuf);
	}
	kvfree(mr->pages);
	kvfree(mr->page_va);
	kvfree(mr->map_va);
	/* Key-table readers may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
}

static int scire_mr_publish(struct scire_dev *sdev, struct scire_mr *mr,
			    enum scire_mr_state state)
{
	u32 key;
	int ret;

	ret = scire_key_reserve(sdev, &key);
	if (ret)
		return ret;
	atomic64_set(&mr->state, scire_mr_word(key, state));
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	scire_key_publish(sdev, key, xa_tag_pointer(mr, SCIRE_KEY_MR));
	return 0;
}

/*
 * Registration-time check of requested rights: remote write and atomic
 * store into the pages, which are pinned writable only with local write
 * (IBA 10.6: remote write or atomic access requires local write).
 */
static bool scire_mr_access_ok(int access)
{
	if (access & ~SCIRE_MR_ACCESS)
		return false;
	return !(access & SCIRE_ACCESS_STORES) ||
	       (access & IB_ACCESS_LOCAL_WRITE);
}

/*
 * Rights of a kernel MR (the DMA MR, a fast-registration MR): never
 * IB_ACCESS_FLUSH_PERSISTENT, which only a page-list MR over persistent
 * memory grants (scire_mr_persistent_ok()).
 */
static bool scire_mr_kernel_access_ok(int access)
{
	return scire_mr_access_ok(access) &&
	       !(access & SCIRE_ACCESS_FLUSH_PERSISTENT);
}

/*
 * Whether a page-list MR may grant IB_ACCESS_FLUSH_PERSISTENT: every page
 * of @pages (@npages, NULL for an ODP MR, whose pages are not known) is
 * memory the platform describes as persistent (an NVDIMM region of the
 * ACPI NFIT, a DAX device over it, or legacy E820 persistent memory), so
 * that writing the CPU caches back (scire_mr_persist()) makes a FLUSH's
 * range persistent (IBA 1.5, RDMA FLUSH placement type "persistence").
 */
static bool scire_mr_persistent_ok(struct page **pages, unsigned long npages)
{
	unsigned long i;

	if (!pages)
		return false;
	for (i = 0; i < npages; i++) {
		resource_size_t addr = page_to_phys(pages[i]);

		if (region_intersects(addr, PAGE_SIZE, IORESOURCE_MEM,
				      IORES_DESC_PERSISTENT_MEMORY) != REGION_INTERSECTS &&
		    region_intersects(addr, PAGE_SIZE, IORESOURCE_MEM,
				      IORES_DESC_PERSISTENT_MEMORY_LEGACY) != REGION_INTERSECTS)
			return false;
		cond_resched();
	}
	return true;
}

/**
 * scire_mr_get() - look up and hold a valid MR by lkey or rkey.
 * @sdev: the device.
 * @key: an lkey or rkey as a work request or packet carries it.
 *
 * Memory window keys never resolve here. The caller still checks PD,
 * bounds and access before touching memory; the data path uses
 * scire_mr_lookup(), which does all of that.
 *
 * Context: any (RCU and the MR's reference count; no sleeping).
 * Return: the MR, held (release with scire_mr_put()), or NULL if no valid
 * MR has exactly this key.
 */
struct scire_mr *scire_mr_get(struct scire_dev *sdev, u32 key)
{
	struct scire_mr *mr = NULL;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&sdev->mr_xa, key >> 8);
	if (entry && xa_pointer_tag(entry) == SCIRE_KEY_MR) {
		mr = xa_untag_pointer(entry);
		if (!refcount_inc_not_zero(&mr->ref))
			mr = NULL;
	}
	rcu_read_unlock();
	if (mr && atomic64_read_acquire(&mr->state) !=
		  scire_mr_word(key, SCIRE_MR_VALID)) {
		scire_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/**
 * scire_mr_put() - release a held MR.
 * @mr: the MR, held by scire_mr_get() or scire_mr_lookup().
 *
 * Context: any.
 */
void scire_mr_put(struct scire_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/* Checks of scire_mr_lookup() on a held MR, in its documented order. */
static int scire_mr_check(struct scire_mr *mr, struct scire_pd *pd, u32 key,
			  u64 iova, u64 len, int access)
{
	if (atomic64_read_acquire(&mr->state) !=
	    scire_mr_word(key, SCIRE_MR_VALID))
		return -EINVAL;
	if (mr->ibmr.pd != &pd->ibpd)
		return -EACCES;
	if (!scire_range_ok(READ_ONCE(mr->iova), READ_ONCE(mr->length),
			    iova, len))
		return -ERANGE;
	if (access & ~READ_ONCE(mr->access))
		return -EACCES;
	return 0;
}

/* Remote access through a window; called under RCU. */
static struct scire_mr *scire_mw_resolve(struct scire_mw_entry *ent,
					 struct scire_pd *pd, u32 rkey,
					 u64 iova, u64 len, int access)
{
	struct scire_mr *mr = NULL;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&ent->lock, flags);
	if (ent->state != SCIRE_MW_BOUND || ent->rkey != rkey)
		ret = -EINVAL;
	else if (ent->pd != pd)
		ret = -EACCES;
	else if (!scire_range_ok(ent->addr, ent->length, iova, len))
		ret = -ERANGE;
	else if (access & ~ent->access)
		ret = -EACCES;
	else
		mr = ent->mr;
	/* The window's own reference keeps the count above zero. */
	if (mr)
		refcount_inc(&mr->ref);
	spin_unlock_irqrestore(&ent->lock, flags);
	if (ret)
		return ERR_PTR(ret);

	if (scire_mr_word_state(atomic64_read_acquire(&mr->state)) !=
	    SCIRE_MR_VALID) {
		scire_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return mr;
}

/*
 * What @key's index names, under rcu_read_lock(): an MR, held (its count
 * taken before RCU is left), in *@mr; or a window, in *@ent, which the
 * caller resolves before it leaves RCU. Return: 0, or -EINVAL for a free
 * index or an MR being freed.
 */
static int scire_key_entry(struct scire_dev *sdev, u32 key,
			   struct scire_mr **mr, struct scire_mw_entry **ent)
{
	void *entry = xa_load(&sdev->mr_xa, key >> 8);

	*mr = NULL;
	*ent = NULL;
	if (!entry)
		return -EINVAL;
	if (xa_pointer_tag(entry) == SCIRE_KEY_MW) {
		*ent = xa_untag_pointer(entry);
		return 0;
	}
	*mr = xa_untag_pointer(entry);
	return refcount_inc_not_zero(&(*mr)->ref) ? 0 : -EINVAL;
}

/* scire_mr_check() on a held MR: the MR, or ERR_PTR with it let go. */
static struct scire_mr *scire_mr_checked(struct scire_mr *mr,
					 struct scire_pd *pd, u32 key,
					 u64 iova, u64 len, int access)
{
	int ret = scire_mr_check(mr, pd, key, iova, len, access);

	if (ret) {
		scire_mr_put(mr);
		return ERR_PTR(ret);
	}
	return mr;
}

/**
 * scire_mr_lookup() - decide whether an access is allowed, and hold the MR.
 * @pd: the PD of the QP making (local) or receiving (remote) the access.
 * @key: lkey from an SGE (@remote false) or rkey from a RETH/AtomicETH
 *	 (@remote true).
 * @remote: the access comes from the wire (rkey) rather than a local SGE.
 * @iova: first byte accessed, in the MR's (or window's) address space.
 * @len: bytes accessed; 0 is allowed and checks @iova only.
 * @access: rights needed: 0 for a local read, IB_ACCESS_LOCAL_WRITE for a
 *	    local write, IB_ACCESS_REMOTE_READ / _WRITE / _ATOMIC for remote
 *	    accesses, IB_ACCESS_FLUSH_* for an RDMA FLUSH, IB_ACCESS_MW_BIND
 *	    for a bind.
 *
 * The key must match exactly (generation byte included): an MR's lkey for
 * local access; for remote access an MR's rkey or the rkey of a bound memory
 * window (IBA 10.6.7), whose range and rights then bound the access
 * and whose MR is returned. Window keys never resolve for local access. The
 * MR must be valid (a fast-reg MR is only between REG_MR and its
 * invalidation), belong to @pd (for a window: the window belongs to @pd),
 * contain [@iova, @iova + @len), and grant @access (IBA 10.6: local
 * write, remote read/write/atomic rights).
 *
 * Context: any; no sleeping (RCU, a window's spinlock, irqsave).
 * Return: the MR, held: release with scire_mr_put(). Else ERR_PTR:
 * -EINVAL no such key, stale key, window key used as lkey, MR or window
 * not valid; -EACCES PD mismatch or a right not granted; -ERANGE the range
 * is not inside the MR or window.
 */
struct scire_mr *scire_mr_lookup(struct scire_pd *pd, u32 key, bool remote,
				 u64 iova, u64 len, int access)
{
	struct scire_dev *sdev = to_sdev(pd->ibpd.device);
	struct scire_mw_entry *ent;
	struct scire_mr *mr;
	int ret;

	rcu_read_lock();
	ret = scire_key_entry(sdev, key, &mr, &ent);
	if (!ret && ent)
		mr = remote ? scire_mw_resolve(ent, pd, key, iova, len, access) :
			      ERR_PTR(-EINVAL);
	rcu_read_unlock();
	if (ret)
		return ERR_PTR(ret);
	if (ent)
		return mr;
	return scire_mr_checked(mr, pd, key, iova, len, access);
}

/**
 * scire_mr_lookup_region() - hold the MR an rkey names, for an access to
 * all of it.
 * @pd: the PD of the QP receiving the access.
 * @rkey: the rkey from the RETH.
 * @access: rights needed (the RDMA FLUSH rights, IB_ACCESS_FLUSH_*).
 *
 * An RDMA FLUSH at selectivity level "memory region" (IBA 1.5) names a
 * region by its rkey alone; its RETH address and length are not checked.
 * The rkey must be an MR's, valid, of @pd and granting @access, as in
 * scire_mr_lookup(). A memory window's rkey is refused: a window grants
 * remote read, write and atomic rights only.
 *
 * Context: any; no sleeping (RCU).
 * Return: the MR, held: release with scire_mr_put(). Else ERR_PTR:
 * -EINVAL no such key, stale key, not valid; -EACCES a window's key, PD
 * mismatch or a right not granted.
 */
struct scire_mr *scire_mr_lookup_region(struct scire_pd *pd, u32 rkey,
					int access)
{
	struct scire_dev *sdev = to_sdev(pd->ibpd.device);
	struct scire_mw_entry *ent;
	struct scire_mr *mr;
	int ret;

	rcu_read_lock();
	ret = scire_key_entry(sdev, rkey, &mr, &ent);
	rcu_read_unlock();
	if (ret)
		return ERR_PTR(ret);
	if (ent)
		return ERR_PTR(-EACCES);
	return scire_mr_checked(mr, pd, rkey, READ_ONCE(mr->iova), 0, access);
}

/*
 * Kernel virtual address of byte @off (from the region's iova) of a
 * fast-reg MR, with the bytes left in its page in @room; NULL if past the
 * live list. The list may be swapped by a concurrent re-registration (a ULP
 * reusing an MR it still accesses): every index is checked against the
 * allocation, so the worst case is a byte of a page the ULP mapped.
 */
static void *scire_fast_va(struct scire_mr *mr, u64 off, u64 *room)
{
	unsigned int shift = READ_ONCE(mr->page_shift);
	unsigned long npages = min_t(unsigned long, READ_ONCE(mr->npages),
				     mr->max_pages);
	u64 *page_va = READ_ONCE(mr->page_va);
	u64 mask = (1ULL << shift) - 1;
	u64 index;

	off += READ_ONCE(mr->offset);
	index = off >> shift;
	if (index >= npages)
		return NULL;
	*room = mask + 1 - (off & mask);
	return (void *)(uintptr_t)(READ_ONCE(page_va[index]) + (off & mask));
}

/* The page holding byte @off of a user MR and the offset in it. */
static struct page *scire_user_page(struct scire_mr *mr, u64 off,
				    unsigned int *in_page)
{
	u64 index;

	off += mr->offset;
	index = off >> PAGE_SHIFT;
	/* The bounds check before this makes it impossible. */
	if (WARN_ON_ONCE(index >= mr->npages))
		return NULL;
	*in_page = offset_in_page(off);
	return mr->pages[index];
}

/**
 * scire_mr_persist() - write the CPU caches back over part of an MR that
 * grants IB_ACCESS_FLUSH_PERSISTENT (RDMA FLUSH, placement type
 * persistence, IBA 1.5).
 * @mr: a user MR, held, granting that right: all its pages are persistent
 *	memory (checked when it was registered).
 * @iova: first byte, in the MR's iova space.
 * @len: bytes; the range has been checked against the MR.
 *
 * Every cache line of the range is written back to the memory
 * (arch_wb_cache_pmem()), then ordered before what the caller sends next.
 *
 * Context: any.
 */
void scire_mr_persist(struct scire_mr *mr, u64 iova, u64 len)
{
	u64 off = iova - mr->iova;

	if (WARN_ON_ONCE(!(mr->access & SCIRE_ACCESS_FLUSH_PERSISTENT) ||
			 !mr->pages))
		return;
	while (len) {
		unsigned int in_page, n;
		struct page *page;
		void *va;

		page = scire_user_page(mr, off, &in_page);
		if (!page)
			break;
		n = min_t(u64, len, PAGE_SIZE - in_page);
		va = kmap_local_page(page);
		arch_wb_cache_pmem(va + in_page, n);
		kunmap_local(va);
		off += n;
		len -= n;
	}
	pmem_wmb();
}

/**
 * scire_copy_in_page() - copy between part of one MR page and a buffer.
 * @page: the MR's page.
 * @in_page: byte offset in @page, below PAGE_SIZE.
 * @buf: kernel buffer of @n bytes.
 * @n: bytes, at most PAGE_SIZE - @in_page.
 * @to_mr: copy @buf into the page (else the page into @buf).
 *
 * A whole page against a page-aligned buffer (a page of a same-host unit)
 * goes through copy_page(), the architecture's page copy (on x86-64 with
 * ERMS not the byte-granular rep movsb that memcpy() is); anything else
 * through memcpy_to_page()/memcpy_from_page().
 *
 * Context: any; @page must stay valid for the call (pinned, or under the
 * ODP umem_mutex).
 */
void scire_copy_in_page(struct page *page, unsigned int in_page, u8 *buf,
			unsigned int n, bool to_mr)
{
	void *va;

	if (n == PAGE_SIZE && PAGE_ALIGNED(buf)) {
		va = kmap_local_page(page);
		if (to_mr)
			copy_page(va, buf);
		else
			copy_page(buf, va);
		kunmap_local(va);
	} else if (to_mr) {
		memcpy_to_page(page, in_page, buf, n);
	} else {
		memcpy_from_page(buf, page, in_page, n);
	}
}

static int scire_copy_user(struct scire_mr *mr, u64 off, u8 *buf, u32 len,
			   bool to_mr)
{
	while (len) {
		unsigned int in_page, n;
		struct page *page;

		page = scire_user_page(mr, off, &in_page);
		if (!page)
			return -EFAULT;
		n = min_t(u32, len, PAGE_SIZE - in_page);
		scire_copy_in_page(page, in_page, buf, n, to_mr);
		off += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * Copy @n bytes between MR memory at @va and @buf, in the direction asked:
 * whole pages with copy_page() where both sides are page aligned (a SCIF
 * window's pages against a same-host unit's, a ULP's page-aligned
 * buffers), as scire_copy_in_page() does for user MRs; the rest, and
 * anything unaligned, with memcpy().
 */
static void scire_copy_va(void *va, u8 *buf, u32 n, bool to_mr)
{
	while (n >= PAGE_SIZE && PAGE_ALIGNED(va) && PAGE_ALIGNED(buf)) {
		if (to_mr)
			copy_page(va, buf);
		else
			copy_page(buf, va);
		va += PAGE_SIZE;
		buf += PAGE_SIZE;
		n -= PAGE_SIZE;
	}
	if (!n)
		return;
	if (to_mr)
		memcpy(va, buf, n);
	else
		memcpy(buf, va, n);
}

/*
 * The DMA MR: @addr is a kernel virtual address. It comes from a kernel
 * ULP's SGE or, with an unsafe global rkey the ULP asked for, from the
 * wire; refuse anything that is not direct-mapped memory rather than
 * fault on it.
 */
static int scire_copy_kva(u64 addr, u8 *buf, u32 len, bool to_mr)
{
	while (len) {
		void *va = (void *)(uintptr_t)addr;
		u32 n = min_t(u64, len, PAGE_SIZE - offset_in_page(addr));

		if (!virt_addr_valid(va))
			return -EFAULT;
		scire_copy_va(va, buf, n, to_mr);
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

static int scire_copy_fast(struct scire_mr *mr, u64 off, u8 *buf, u32 len,
			   bool to_mr)
{
	while (len) {
		u64 room;
		void *va;
		u32 n;

		va = scire_fast_va(mr, off, &room);
		if (!va)
			return -EFAULT;
		n = min_t(u64, len, room);
		scire_copy_va(va, buf, n, to_mr);
		off += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* What scire_mr_copy() and scire_mr_atomic() check again before copying. */
static int scire_mr_io_check(struct scire_mr *mr, u64 start, u64 iova,
			     u64 len, bool store)
{
	if (mr->type == SCIRE_MR_FAST &&
	    scire_mr_word_state(atomic64_read_acquire(&mr->state)) !=
	    SCIRE_MR_VALID)
		return -EINVAL;
	if (!scire_range_ok(start, READ_ONCE(mr->length), iova, len))
		return -ERANGE;
	/* Every store right implies it, and only then are pages writable. */
	if (store && !(READ_ONCE(mr->access) & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	return 0;
}

/**
 * scire_mr_copy() - copy between a range of an MR and a kernel buffer.
 * @mr: an MR held from scire_mr_lookup(), which checked the range and
 *	rights.
 * @iova: first byte in the MR's address space (for the DMA MR: a kernel
 *	  virtual address).
 * @buf: kernel buffer of @len bytes.
 * @len: bytes to copy, any value.
 * @to_mr: copy @buf into the MR (else the MR into @buf).
 *
 * Never touches a byte outside the region: the range is checked again, and
 * every page index against the page list. A fast-reg MR invalidated since
 * the lookup no longer copies (IBA 10.6: an invalidated key grants nothing).
 * An ODP MR's missing pages are faulted in (scire_odp_copy()).
 *
 * Context: any, no sleeping; for an ODP MR process context, may sleep
 * (the only context its PD's QPs run in).
 * Return: 0; -EINVAL if a fast-reg MR was invalidated; -ERANGE if the range
 * is outside the MR; -EACCES for a copy into an MR without local write;
 * -EFAULT for a DMA MR address that is not kernel memory or a page list
 * shorter than the region (a fast-reg MR re-registered under the caller),
 * or an ODP range the owning process has not mapped (writable).
 */
int scire_mr_copy(struct scire_mr *mr, u64 iova, void *buf, u32 len,
		  bool to_mr)
{
	u64 start = READ_ONCE(mr->iova);
	int ret;

	ret = scire_mr_io_check(mr, start, iova, len, to_mr);
	if (ret)
		return ret;

	switch (mr->type) {
	case SCIRE_MR_USER:
		if (mr->odp)
			return scire_odp_copy(mr, iova - start, buf, len, to_mr);
		return scire_copy_user(mr, iova - start, buf, len, to_mr);
	case SCIRE_MR_DMA:
		return scire_copy_kva(iova, buf, len, to_mr);
	case SCIRE_MR_FAST:
		return scire_copy_fast(mr, iova - start, buf, len, to_mr);
	}
	return -EINVAL;
}

/*
 * The 8-byte aligned word at @iova of @mr, mapped: *@map, *@page and
 * *@held (an ODP umem whose mutex is held) are what scire_mr_word_put()
 * undoes. Return: 0 or the errno of
 * scire_mr_atomic().
 */
static int scire_mr_word_get(struct scire_mr *mr, u64 iova, u64 **word,
			     struct page **page, void **map,
			     struct ib_umem_odp **held)
{
	u64 start = READ_ONCE(mr->iova);
	unsigned int in_page;
	u64 *p, room;
	int ret;

	*page = NULL;
	*map = NULL;
	*held = NULL;
	if (!IS_ALIGNED(iova, 8))
		return -EINVAL;
	ret = scire_mr_io_check(mr, start, iova, 8, true);
	if (ret)
		return ret;

	switch (mr->type) {
	case SCIRE_MR_USER:
		if (mr->odp) {
			/* Held until scire_mr_word_put(): umem_mutex. */
			*page = scire_odp_word_get(mr, iova - start, &in_page,
						   held);
			if (IS_ERR(*page)) {
				ret = PTR_ERR(*page);
				*page = NULL;
				return ret;
			}
		} else {
			*page = scire_user_page(mr, iova - start, &in_page);
		}
		if (!*page)
			return -EFAULT;
		*map = kmap_local_page(*page);
		p = *map + in_page;
		break;
	case SCIRE_MR_DMA:
		p = (u64 *)(uintptr_t)iova;
		if (!virt_addr_valid(p))
			return -EFAULT;
		break;
	case SCIRE_MR_FAST:
		p = scire_fast_va(mr, iova - start, &room);
		if (!p)
			return -EFAULT;
		break;
	default:
		return -EINVAL;
	}

	/* Aligned, the word cannot straddle a page. */
	if (!IS_ALIGNED((uintptr_t)p, 8)) {
		if (*map)
			kunmap_local(*map);
		if (*held)
			scire_odp_word_put(*held);
		*held = NULL;
		*map = NULL;
		*page = NULL;
		return -EINVAL;
	}
	*word = p;
	return 0;
}

static void scire_mr_word_put(struct page *page, void *map,
			      struct ib_umem_odp *held)
{
	if (page)
		flush_dcache_page(page);
	if (map)
		kunmap_local(map);
	if (held)
		scire_odp_word_put(held);
}

/**
 * scire_mr_atomic() - 8-byte atomic operation on an MR (IBA 9.4, atomics).
 * @mr: an MR held from scire_mr_lookup() with IB_ACCESS_REMOTE_ATOMIC.
 * @iova: the 8-byte aligned address in the MR's address space.
 * @cmp_swp: CmpSwap (else FetchAdd).
 * @compare_add: CmpSwap: the compare operand; FetchAdd: the addend.
 * @swap: CmpSwap: the value stored if memory equals @compare_add.
 * @orig: filled with the value memory held before the operation.
 *
 * Operands and @orig are CPU-order values; the memory is read and written
 * as a CPU-order 64-bit word (the transport converts from and to the wire's
 * big-endian AtomicETH and AtomicAckETH). The operation is one CPU atomic
 * instruction on the memory itself, so it is atomic against the CPU, other
 * scire atomics, and the process the memory belongs to.
 *
 * Context: any, no sleeping; for an ODP MR process context, may sleep.
 * Return: 0; -EINVAL if @iova is not 8-byte aligned, or the memory behind
 * it is not (a user MR registered at an iova not congruent mod 8 with its
 * address), or a fast-reg MR was invalidated; -ERANGE if the 8 bytes are
 * outside the MR; -EACCES if the MR lacks local write; -EFAULT for a DMA MR
 * address that is not kernel memory or a page list shorter than the region.
 */
int scire_mr_atomic(struct scire_mr *mr, u64 iova, bool cmp_swp,
		    u64 compare_add, u64 swap, u64 *orig)
{
	struct ib_umem_odp *held;
	struct page *page;
	void *map;
	u64 *p, old;
	int ret;

	ret = scire_mr_word_get(mr, iova, &p, &page, &map, &held);
	if (ret)
		return ret;
	if (cmp_swp) {
		old = cmpxchg64(p, compare_add, swap);
	} else {
		old = READ_ONCE(*p);
		do {
		} while (!try_cmpxchg64(p, &old, old + compare_add));
	}
	*orig = old;
	scire_mr_word_put(page, map, held);
	return 0;
}

/**
 * scire_mr_atomic_write() - store 8 bytes at once (IBA 1.5 RDMA ATOMIC WRITE).
 * @mr: an MR held from scire_mr_lookup() with IB_ACCESS_REMOTE_WRITE.
 * @iova: the 8-byte aligned address in the MR's address space.
 * @value: the 8 bytes, in memory order (the payload as it came).
 *
 * One aligned 64-bit store with release ordering: no reader sees part of
 * it, it is atomic against scire_mr_atomic() on the same word (which is a
 * CPU atomic instruction), and what this QP placed before it is visible no
 * later than it is.
 *
 * Context: any, no sleeping; for an ODP MR process context, may sleep.
 * Return: 0, or the errors of scire_mr_atomic().
 */
int scire_mr_atomic_write(struct scire_mr *mr, u64 iova, const u8 *value)
{
	struct ib_umem_odp *held;
	struct page *page;
	void *map;
	u64 *p, v;
	int ret;

	ret = scire_mr_word_get(mr, iova, &p, &page, &map, &held);
	if (ret)
		return ret;
	memcpy(&v, value, sizeof(v));
	/* Release: what this QP wrote before is seen no later than v. */
	smp_store_release(p, v);
	scire_mr_word_put(page, map, held);
	return 0;
}

/**
 * scire_get_dma_mr() - the DMA MR: all of memory, by kernel virtual address.
 * @ibpd: the PD.
 * @access: IB_ACCESS_* rights.
 *
 * Kernel consumers only (the core never offers it to user space). With
 * virtual DMA, the addresses in SGEs against this MR are kernel virtual
 * addresses.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EINVAL for unknown access bits, remote
 * write/atomic without local write, or IB_ACCESS_FLUSH_PERSISTENT; -ENOMEM.
 */
struct ib_mr *scire_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_mr *mr;
	int ret;

	if (!scire_mr_kernel_access_ok(access))
		return ERR_PTR(-EINVAL);
	mr = scire_mr_alloc(ibpd, access, SCIRE_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	ret = scire_mr_publish(sdev, mr, SCIRE_MR_VALID);
	if (ret) {
		scire_mr_free(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/*
 * Record one struct page per PAGE_SIZE of a pinned region in a new array
 * (*@pagesp, @npages entries); nothing is allocated on failure.
 */
static noinline int scire_mr_fill_pages(struct ib_umem *umem,
					struct page ***pagesp,
					unsigned long npages)
{
	struct sg_page_iter iter;
	struct page **pages;
	unsigned long n = 0;

	pages = kvcalloc(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(n >= npages))
			break;
		pages[n++] = sg_page_iter_page(&iter);
	}
	if (n != npages) {
		kvfree(pages);
		return -EFAULT;
	}
	*pagesp = pages;
	return 0;
}

ALLOW_ERROR_INJECTION(scire_mr_fill_pages, ERRNO);

/*
 * The last step of registering a page-list MR for user space (a user MR,
 * a DM MR): its IOVA and length, the core's view included, then its keys
 * published. Frees the MR on failure.
 */
static struct ib_mr *scire_mr_finish_user(struct scire_dev *sdev,
					  struct scire_mr *mr, u64 iova,
					  u64 length)
{
	int ret;

	if ((mr->access & SCIRE_ACCESS_FLUSH_PERSISTENT) &&
	    !scire_mr_persistent_ok(mr->pages, mr->npages)) {
		scire_mr_free(mr);
		return ERR_PTR(-EOPNOTSUPP);
	}
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	ret = scire_mr_publish(sdev, mr, SCIRE_MR_VALID);
	if (ret) {
		scire_mr_free(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/**
 * scire_reg_user_mr() - register user memory (IBA 11.2.8.1).
 * @ibpd: the PD.
 * @start: user virtual address of the region.
 * @length: bytes, 1..max_mr_size.
 * @iova: the address the region is known by in work requests and packets.
 *	  Atomics need it congruent with @start modulo 8.
 * @access: IB_ACCESS_* rights.
 * @udata: REG_MR UHW: no fields.
 *
 * The pages are pinned (ib_umem_get) for the life of the MR; with
 * IB_ACCESS_ON_DEMAND nothing is pinned, and pages are faulted in as the
 * data path reaches them (scire_odp_reg(), kernel/scire_odp.c); @start 0
 * and @length U64_MAX then register the whole address space (implicit
 * ODP), @iova being 0.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EINVAL for a zero or too large length,
 * an iova range that wraps, unknown access bits, remote write or atomic
 * without local write, or a non-zero UHW request; -EOPNOTSUPP for
 * IB_ACCESS_FLUSH_PERSISTENT over memory that is not persistent memory
 * (always with ODP); -EFAULT if the range is not mapped (not checked for
 * ODP); -ENOMEM.
 */
struct ib_mr *scire_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_mr *mr;
	bool implicit;
	int ret;

	if (!scire_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);
	if (!scire_mr_access_ok(access))
		return ERR_PTR(-EINVAL);
	/* Implicit ODP: the whole address space (scire_odp_reg()). */
	implicit = (access & IB_ACCESS_ON_DEMAND) && !start &&
		   length == U64_MAX;
	if (!length || (length > SCIRE_MAX_MR_SIZE && !implicit) ||
	    iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = scire_mr_alloc(ibpd, access, SCIRE_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	if (access & IB_ACCESS_ON_DEMAND) {
		ret = scire_odp_reg(mr, start, length, access);
		if (ret)
			goto err_free;
		return scire_mr_finish_user(sdev, mr, iova, length);
	}
	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->offset = ib_umem_offset(mr->umem);
	ret = scire_mr_fill_pages(mr->umem, &mr->pages, mr->npages);
	if (ret)
		goto err_free;

	return scire_mr_finish_user(sdev, mr, iova, length);

err_free:
	scire_mr_free(mr);
	return ERR_PTR(ret);
}

/**
 * scire_reg_dm_mr() - register device memory (ibv_reg_dm_mr(3)).
 * @ibpd: the PD.
 * @ibdm: the DM, from scire_alloc_dm().
 * @attr: @attr->offset and @attr->length (bytes, the core has checked them
 *	  against the DM's length; a length of 0 gives an MR through which
 *	  nothing but zero-length accesses pass, as on hardware) and
 *	  @attr->access_flags, which the core has checked include IB_ZERO_BASED.
 * @attrs: the method's attributes; scire reads none.
 *
 * The MR is zero based: iova 0 is byte @attr->offset of the DM. It is a
 * page list over the DM's pages, so the data path treats it as a user MR;
 * it holds a reference on the DM's mmap entry, and the core refuses to
 * free the DM (EBUSY) while the MR exists.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EINVAL for a range past the DM, unknown
 * access bits or remote write or atomic without local write; -EOPNOTSUPP
 * for IB_ACCESS_FLUSH_PERSISTENT (device memory is not persistent); -ENOMEM.
 */
struct ib_mr *scire_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_dm *dm = container_of(ibdm, struct scire_dm, ibdm);
	int access = attr->access_flags & ~IB_ZERO_BASED;
	struct rdma_user_mmap_entry *rdma;
	unsigned long first, i;
	struct scire_mr *mr;
	u64 pgoff;
	int ret;

	if (!scire_mr_access_ok(access) ||
	    attr->offset + attr->length > dm->size)
		return ERR_PTR(-EINVAL);
	mr = scire_mr_alloc(ibpd, access, SCIRE_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* Removed only by dealloc_dm, which the core holds off meanwhile. */
	pgoff = rdma_user_mmap_get_offset(&dm->mmap->rdma) >> PAGE_SHIFT;
	rdma = rdma_user_mmap_entry_get_pgoff(ibdm->uobject->context, pgoff);
	if (!rdma) {
		ret = -EINVAL;
		goto err_free;
	}
	mr->dm = container_of(rdma, struct scire_mmap_entry, rdma);
	first = attr->offset >> PAGE_SHIFT;
	mr->offset = offset_in_page(attr->offset);
	mr->npages = DIV_ROUND_UP(mr->offset + attr->length, PAGE_SIZE);
	mr->pages = kvcalloc(max(mr->npages, 1UL), sizeof(*mr->pages),
			     GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < mr->npages; i++)
		mr->pages[i] = vmalloc_to_page(mr->dm->addr +
					       (first + i) * PAGE_SIZE);

	return scire_mr_finish_user(sdev, mr, 0, attr->length);

err_free:
	scire_mr_free(mr);
	return ERR_PTR(ret);
}

/*
 * The struct page behind a byte of a dma-buf's kernel mapping: exporters
 * map system memory either with vmap() (udmabuf, the DRM shmem helpers,
 * the system heap) or through the linear map (contiguous allocations).
 */
static struct page *scire_dmabuf_page(void *va)
{
	if (is_vmalloc_addr(va))
		return vmalloc_to_page(va);
	if (virt_addr_valid(va))
		return virt_to_page(va);
	return NULL;
}

/**
 * scire_reg_dmabuf_mr() - register a dma-buf (ibv_reg_dmabuf_mr(3)).
 * @ibpd: the PD.
 * @offset: bytes into the dma-buf where the region starts.
 * @length: bytes, 1..max_mr_size, within the dma-buf from @offset.
 * @iova: the address the region is known by in work requests and packets
 *	  (the core has checked it lies at @offset's offset in its page).
 * @fd: the dma-buf's file descriptor in the calling process.
 * @access: IB_ACCESS_* rights.
 * @udata: UHW of the method: no fields.
 *
 * scire moves data with the CPU and has no DMA device (virtual DMA), so
 * it does not attach to the buffer as a DMA importer (ib_umem_dmabuf,
 * which dma_buf_attach()es the ib_device's DMA device); it is a CPU
 * importer: the buffer is mapped into the kernel (dma_buf_vmap, which
 * makes the exporter keep it in place: a pinned import, as
 * ib_umem_dmabuf_get_pinned() gives hardware), CPU access is begun for
 * the MR's life, and the mapping's pages form the MR's page list, so the
 * data path treats it as a user MR. The MR holds a reference on the
 * dma-buf: closing @fd does not end it; deregistration does.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EBADF if @fd is not open, -EINVAL if it
 * is no dma-buf, for a zero, too large or wrapping range or one past the
 * buffer's end, unknown access bits, remote write or atomic without local
 * write, or a non-zero UHW request; -EOPNOTSUPP for an exporter that
 * gives no kernel mapping (no vmap: 6.1's udmabuf) or a buffer in I/O
 * memory (device memory without struct pages, which the CPU copies of a
 * software device cannot address as pages), or for
 * IB_ACCESS_FLUSH_PERSISTENT over a buffer that is not persistent memory;
 * the exporter's error from
 * mapping it; -ENOMEM.
 */
struct ib_mr *scire_reg_dmabuf_mr(struct ib_pd *ibpd, u64 offset, u64 length,
				  u64 iova, int fd, int access,
				  struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	unsigned long first, i;
	struct dma_buf *dmabuf;
	struct scire_mr *mr;
	int ret;

	if (!scire_udata_in_ok(udata) || !scire_mr_access_ok(access))
		return ERR_PTR(-EINVAL);
	if (!length || length > SCIRE_MAX_MR_SIZE || iova + length < iova ||
	    offset + length < offset)
		return ERR_PTR(-EINVAL);

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	if (offset + length > dmabuf->size) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	/* An exporter that gives no kernel mapping (6.1's udmabuf). */
	if (!dmabuf->ops->vmap) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EOPNOTSUPP);
	}
	mr = scire_mr_alloc(ibpd, access, SCIRE_MR_USER);
	if (IS_ERR(mr)) {
		dma_buf_put(dmabuf);
		return ERR_CAST(mr);
	}
	mr->dmabuf = dmabuf;

	ret = dma_buf_begin_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	if (ret)
		goto err_free;
	ret = scire_dma_buf_vmap(dmabuf, &mr->dmabuf_map);
	if (ret) {
		dma_buf_end_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
		iosys_map_clear(&mr->dmabuf_map);
		goto err_free;
	}
	if (mr->dmabuf_map.is_iomem) {
		ret = -EOPNOTSUPP;
		goto err_free;
	}

	first = offset >> PAGE_SHIFT;
	mr->offset = offset_in_page(offset);
	mr->npages = DIV_ROUND_UP(mr->offset + length, PAGE_SIZE);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < mr->npages; i++) {
		mr->pages[i] = scire_dmabuf_page(mr->dmabuf_map.vaddr +
						 (first + i) * PAGE_SIZE);
		if (!mr->pages[i]) {
			ret = -EOPNOTSUPP;
			goto err_free;
		}
	}

	return scire_mr_finish_user(sdev, mr, iova, length);

err_free:
	scire_mr_free(mr);
	return ERR_PTR(ret);
}

/**
 * scire_rereg_user_mr() - reregister a user MR in place (IBA 11.2.8.2,
 * Reregister Memory Region; ibv_rereg_mr(3)).
 * @ibmr: the MR, from scire_reg_user_mr().
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS, any
 *	   combination (the core drops IB_MR_REREG_PD when @ibpd is the MR's).
 * @start: IB_MR_REREG_TRANS: user virtual address of the new region.
 * @length: IB_MR_REREG_TRANS: its bytes, 1..max_mr_size.
 * @iova: IB_MR_REREG_TRANS: the address it is known by (the core has
 *	  checked it lies at @start's offset in its page).
 * @access: IB_MR_REREG_ACCESS: the new IB_ACCESS_* rights.
 * @ibpd: the MR's PD from now on (its current one without IB_MR_REREG_PD).
 * @udata: REREG_MR UHW: no fields.
 *
 * The lkey and rkey stay the same, so the core's response and rdma-core
 * report the keys the MR already had; ibmr itself is kept (NULL return),
 * and the core then records the new PD, iova and length in it. A new
 * translation is pinned (ib_umem_get, as at registration) before anything
 * changes; so is the old range again, writable, when new rights need local
 * write and the pages were pinned read-only. Refused while memory windows
 * are bound to the MR (binds are held off meanwhile). Then the key stops
 * resolving, the call waits until no data-path user holds the MR any more
 * (as dereg does), swaps translation, rights and PD, and makes the key
 * valid again: a transfer that resolved the key before finishes on the
 * old pages, which are unpinned only after it, and one that resolves it
 * after sees only the new ones. Accesses that arrive in between fail as
 * for an invalid key. On failure the MR is unchanged.
 *
 * Context: process context, may sleep; the core holds the MR's uobject
 * for writing.
 * Return: NULL (reregistered in place) or an ERR_PTR: -EINVAL for a
 * non-user, device memory, dma-buf or ODP MR (or ODP asked for), a zero,
 * too large or wrapping range,
 * unknown access bits, remote write or atomic without local write, or a non-zero UHW request;
 * -EOPNOTSUPP for unknown flags, or for IB_ACCESS_FLUSH_PERSISTENT over
 * memory that is not persistent memory; -EBUSY if windows are bound to it;
 * -EFAULT if the range is not mapped; -ENOMEM.
 */
struct ib_mr *scire_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct scire_mr *mr = to_smr(ibmr);
	int new_access = flags & IB_MR_REREG_ACCESS ? access : mr->access;
	struct ib_umem *umem = NULL, *old_umem = NULL;
	struct page **pages = NULL, **old_pages = NULL;
	unsigned long npages = 0;
	bool pin;
	u32 key;
	int ret;

	if (!scire_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);
	if (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD | IB_MR_REREG_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (mr->type != SCIRE_MR_USER || mr->dm || mr->dmabuf || mr->odp ||
	    (new_access & IB_ACCESS_ON_DEMAND) ||
	    !scire_mr_access_ok(new_access))
		return ERR_PTR(-EINVAL);
	if (flags & IB_MR_REREG_TRANS) {
		if (!length || length > SCIRE_MAX_MR_SIZE || iova + length < iova)
			return ERR_PTR(-EINVAL);
		pin = true;
	} else {
		/* Stores need the pages pinned writable. */
		pin = (new_access & IB_ACCESS_LOCAL_WRITE) && !mr->umem->writable;
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}

	if (pin) {
		umem = ib_umem_get_va(ibmr->device, start, length, new_access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		npages = ib_umem_num_pages(umem);
		ret = scire_mr_fill_pages(umem, &pages, npages);
		if (ret)
			goto err_release;
	}

	if ((new_access & SCIRE_ACCESS_FLUSH_PERSISTENT) &&
	    !(pin ? scire_mr_persistent_ok(pages, npages) :
		    scire_mr_persistent_ok(mr->pages, mr->npages))) {
		ret = -EOPNOTSUPP;
		goto err_release;
	}

	/* As dereg: -1 also holds off binds until the MR is valid again. */
	if (atomic_cmpxchg(&mr->num_mw, 0, -1) != 0) {
		ret = -EBUSY;
		goto err_release;
	}
	key = scire_mr_word_key(atomic64_read(&mr->state));
	atomic64_set(&mr->state, scire_mr_word(key, SCIRE_MR_BUSY));
	/* Give up the key table's reference and wait for every other. */
	scire_mr_put(mr);
	wait_for_completion(&mr->released);

	if (pin) {
		old_umem = mr->umem;
		old_pages = mr->pages;
		mr->umem = umem;
		mr->pages = pages;
		mr->npages = npages;
		mr->offset = ib_umem_offset(umem);
		mr->iova = iova;
		mr->length = length;
		mr->ibmr.iova = iova;
		mr->ibmr.length = length;
	}
	mr->access = new_access;
	/* The core stores it too, after this returns; lookups need it now. */
	WRITE_ONCE(mr->ibmr.pd, ibpd);

	reinit_completion(&mr->released);
	refcount_set(&mr->ref, 1);
	atomic64_set_release(&mr->state, scire_mr_word(key, SCIRE_MR_VALID));
	atomic_set(&mr->num_mw, 0);

	ib_umem_release(old_umem);
	kvfree(old_pages);
	return NULL;

err_release:
	kvfree(pages);
	if (umem)
		ib_umem_release(umem);
	return ERR_PTR(ret);
}

/**
 * scire_alloc_mr() - allocate a fast-registration MR (IBA 10.6 memory
 * management: allocate an L_Key now, Fast Register it with a REG_MR WQE).
 * @ibpd: the PD.
 * @type: IB_MR_TYPE_MEM_REG only.
 * @max_num_sg: largest page list a registration may use,
 *		1..SCIRE_MAX_MR_PAGES.
 *
 * The MR starts free: its key resolves to nothing until a REG_MR WQE
 * (scire_mr_fast_reg()) registers the pages map_mr_sg staged.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EINVAL for another type or a page list
 * size out of range, -ENOMEM.
 */
struct ib_mr *scire_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SCIRE_MAX_MR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = scire_mr_alloc(ibpd, 0, SCIRE_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* Fixed by the first map_mr_sg. */
	mr->page_shift = 0;
	mr->max_pages = max_num_sg;
	mr->page_va = kvcalloc(max_num_sg, sizeof(*mr->page_va), GFP_KERNEL);
	mr->map_va = kvcalloc(max_num_sg, sizeof(*mr->map_va), GFP_KERNEL);
	if (!mr->page_va || !mr->map_va) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = scire_mr_publish(sdev, mr, SCIRE_MR_FREE);
	if (ret)
		goto err_free;
	return &mr->ibmr;

err_free:
	scire_mr_free(mr);
	return ERR_PTR(ret);
}

static int scire_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct scire_mr *mr = to_smr(ibmr);

	if (mr->map_npages >= mr->max_pages)
		return -ENOMEM;
	/* A stale reader of an old registration may read the slot. */
	WRITE_ONCE(mr->map_va[mr->map_npages], addr);
	mr->map_npages++;
	return 0;
}

/**
 * scire_map_mr_sg() - stage a fast-reg MR's page list (ib_map_mr_sg()).
 * @ibmr: an MR from scire_alloc_mr().
 * @sg: DMA-mapped scatterlist; with virtual DMA its DMA addresses are
 *	kernel virtual addresses.
 * @sg_nents: entries in @sg.
 * @sg_offset: in: byte offset into @sg[0]; out: see ib_sg_to_pages().
 *
 * ib_map_mr_sg() has set ibmr->page_size (the ULP's choice) and
 * ib_sg_to_pages() sets ibmr->iova and ibmr->length. The staged list goes
 * live only when a REG_MR WQE executes, so a registration still valid is
 * not disturbed. The page size must be a power of two of at least 4 KiB
 * and stays the same for the MR's life (every in-tree ULP passes a
 * constant); keeping it fixed is what lets a stale reader of an old list
 * never combine it with another page size.
 *
 * Context: any; no sleeping. The ULP serialises calls on one MR.
 * Return: the number of @sg entries mapped (as ib_sg_to_pages()), or
 * -EINVAL for an MR that is not a fast-reg MR or a bad or changed page
 * size.
 */
int scire_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct scire_mr *mr = to_smr(ibmr);
	unsigned int shift;
	int n;

	if (mr->type != SCIRE_MR_FAST)
		return -EINVAL;
	if (ibmr->page_size < SZ_4K || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	shift = ilog2(ibmr->page_size);
	if (!mr->page_shift)
		WRITE_ONCE(mr->page_shift, shift);
	else if (mr->page_shift != shift)
		return -EINVAL;

	mr->map_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, scire_mr_set_page);
	mr->map_offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/**
 * scire_mr_fast_reg() - execute an IB_WR_REG_MR (Fast Register, IBA 10.6).
 * @pd: the PD of the QP the WQE was posted to.
 * @mr: the MR named by the WQE (a kernel ULP's pointer).
 * @key: the new lkey and rkey; its index bits (key >> 8) must be the MR's,
 *	 the low 8 bits are the ULP's (ib_update_fast_reg_key()).
 * @access: IB_ACCESS_* rights of the registration.
 *
 * Registers the page list map_mr_sg staged, at the iova and length the
 * ULP's ib_mr holds now (a ULP may rewrite the iova after mapping, as
 * xprtrdma does). @mr is trusted only if the key table maps the index of
 * @key to it, so a stale pointer in a WQE is refused, not dereferenced.
 *
 * Context: the QP's work item (any context; no sleeping).
 * Return: 0; -EINVAL if @mr is not the fast-reg MR of that key index, is
 * not free (valid registrations must be invalidated first), has unknown
 * access bits or remote write/atomic without local write, or its staged
 * list does not cover the length; -EACCES if it belongs to another PD.
 */
int scire_mr_fast_reg(struct scire_pd *pd, struct scire_mr *mr, u32 key,
		      int access)
{
	struct scire_dev *sdev = to_sdev(pd->ibpd.device);
	u64 iova, length, room;
	s64 free_word;
	u64 *live;
	int ret = 0;
	u32 i;

	rcu_read_lock();
	if (xa_load(&sdev->mr_xa, key >> 8) != xa_tag_pointer(mr, SCIRE_KEY_MR) ||
	    !refcount_inc_not_zero(&mr->ref)) {
		rcu_read_unlock();
		return -EINVAL;
	}
	rcu_read_unlock();

	if (mr->type != SCIRE_MR_FAST || !scire_mr_kernel_access_ok(access)) {
		ret = -EINVAL;
		goto out;
	}
	if (mr->ibmr.pd != &pd->ibpd) {
		ret = -EACCES;
		goto out;
	}
	/* Claim it, so a racing REG_MR or lookup sees neither registration. */
	free_word = atomic64_read(&mr->state);
	if (scire_mr_word_state(free_word) != SCIRE_MR_FREE ||
	    !atomic64_try_cmpxchg(&mr->state, &free_word,
				  scire_mr_word(scire_mr_word_key(free_word),
						SCIRE_MR_BUSY))) {
		ret = -EINVAL;
		goto out;
	}

	iova = READ_ONCE(mr->ibmr.iova);
	length = READ_ONCE(mr->ibmr.length);
	room = (u64)mr->map_npages << mr->page_shift;
	if (iova + length < iova || mr->map_offset > room ||
	    length > room - mr->map_offset) {
		atomic64_set(&mr->state, free_word);
		ret = -EINVAL;
		goto out;
	}

	live = mr->page_va;
	WRITE_ONCE(mr->page_va, mr->map_va);
	mr->map_va = live;
	/*
	 * The mapping stays staged, as a device's page list does: a ULP may
	 * post REG_MR again (after ib_update_fast_reg_key()) without a new
	 * map_mr_sg, and must get the same pages, not the retired list.
	 * Stale readers of that list may still read its slots.
	 */
	for (i = 0; i < mr->map_npages; i++)
		WRITE_ONCE(mr->map_va[i], mr->page_va[i]);
	WRITE_ONCE(mr->npages, mr->map_npages);
	WRITE_ONCE(mr->offset, mr->map_offset);
	WRITE_ONCE(mr->iova, iova);
	WRITE_ONCE(mr->length, length);
	WRITE_ONCE(mr->access, access);
	atomic64_set_release(&mr->state, scire_mr_word(key, SCIRE_MR_VALID));
out:
	scire_mr_put(mr);
	return ret;
}

/* Drop what a bound window held on its MR. */
static void scire_mw_release_mr(struct scire_mr *mr)
{
	atomic_dec(&mr->num_mw);
	scire_mr_put(mr);
}

/*
 * LOCAL_INV / SEND_WITH_INV of a window; called under RCU. A type 1 window
 * is unbound only by a zero-length bind or its deallocation (IBA 10.6.7.1;
 * ibv_alloc_mw(3)): naming its rkey here is refused with -EPERM, and the
 * window stays bound.
 */
static int scire_mw_invalidate(struct scire_mw_entry *ent,
			       struct scire_pd *pd, u32 rkey)
{
	struct scire_mr *mr = NULL;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&ent->lock, flags);
	if (ent->state != SCIRE_MW_BOUND || ent->rkey != rkey) {
		ret = -EINVAL;
	} else if (ent->type != IB_MW_TYPE_2) {
		ret = -EPERM;
	} else if (ent->pd != pd) {
		ret = -EACCES;
	} else {
		mr = ent->mr;
		ent->mr = NULL;
		ent->access = 0;
		ent->addr = 0;
		ent->length = 0;
		ent->state = SCIRE_MW_FREE;
	}
	spin_unlock_irqrestore(&ent->lock, flags);
	if (mr)
		scire_mw_release_mr(mr);
	return ret;
}

/* LOCAL_INV / SEND_WITH_INV of a fast-reg MR; called under RCU. */
static int scire_fast_mr_invalidate(struct scire_mr *mr, struct scire_pd *pd,
				    u32 key, bool remote)
{
	s64 valid = scire_mr_word(key, SCIRE_MR_VALID);

	if (mr->type != SCIRE_MR_FAST)
		return -EINVAL;
	if (atomic64_read(&mr->state) != valid)
		return -EINVAL;
	/* Without remote rights the key is no rkey a peer may name. */
	if (remote && !(READ_ONCE(mr->access) & SCIRE_ACCESS_REMOTE))
		return -EINVAL;
	if (mr->ibmr.pd != &pd->ibpd)
		return -EACCES;
	/* Key and state in one step: a newer registration is left alone. */
	if (!atomic64_try_cmpxchg(&mr->state, &valid,
				  scire_mr_word(key, SCIRE_MR_FREE)))
		return -EINVAL;
	return 0;
}

/**
 * scire_mr_invalidate() - execute a LOCAL_INV, or the invalidation of a
 * received SEND_WITH_INV (IBA 10.6: Local Invalidate, Send with
 * Invalidate; 10.6.7.2 for type 2 windows).
 * @pd: the PD of the QP executing it.
 * @key: the key to invalidate: a fast-reg MR's key or a type 2 window's
 *	 rkey, exactly (generation byte included).
 * @remote: it came in a SEND_WITH_INV's IETH (then an MR must have been
 *	    registered with some remote right).
 *
 * Afterwards the key resolves to nothing until the MR is registered again
 * (REG_MR) or the window bound again (BIND_MW). A window releases its MR.
 * Type 1 windows cannot be invalidated this way (IBA 10.6.7.1: only a
 * zero-length bind or deallocation unbinds them).
 * Data-path users already holding the MR finish their current copy; their
 * next scire_mr_copy() on a fast-reg MR fails.
 *
 * Context: any; no sleeping.
 * Return: 0; -EINVAL for an unknown or stale key, a key that is not valid
 * (already invalidated, never registered or bound), a user-registered or
 * DMA MR (these cannot be invalidated), or a remote invalidation of an MR
 * without remote rights; -EACCES if the MR or window belongs to another PD;
 * -EPERM for the rkey of a bound type 1 window (left bound).
 */
int scire_mr_invalidate(struct scire_pd *pd, u32 key, bool remote)
{
	struct scire_dev *sdev = to_sdev(pd->ibpd.device);
	void *entry;
	int ret;

	rcu_read_lock();
	entry = xa_load(&sdev->mr_xa, key >> 8);
	if (!entry)
		ret = -EINVAL;
	else if (xa_pointer_tag(entry) == SCIRE_KEY_MW)
		ret = scire_mw_invalidate(xa_untag_pointer(entry), pd, key);
	else
		ret = scire_fast_mr_invalidate(xa_untag_pointer(entry), pd,
					       key, remote);
	rcu_read_unlock();
	return ret;
}

/**
 * scire_dereg_mr() - deregister an MR (IBA 11.2.8, Deregister Memory Region).
 * @ibmr: the MR.
 * @udata: unused.
 *
 * Fails while memory windows are bound to the MR: they hold it, and the
 * process must invalidate or deallocate them first (uverbs retries the
 * destruction after the windows when a process exits). Otherwise the key
 * stops resolving at once; the call then waits until no data-path user
 * still holds the MR, so no byte moves to or from its pages after it
 * returns.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EBUSY if windows are bound to it.
 */
int scire_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibmr->device);
	struct scire_mr *mr = to_smr(ibmr);

	/* -1 also stops binds racing with this one. */
	if (atomic_cmpxchg(&mr->num_mw, 0, -1) != 0)
		return -EBUSY;
	scire_key_remove(sdev, scire_mr_word_key(atomic64_read(&mr->state)));
	scire_mr_put(mr);
	wait_for_completion(&mr->released);
	scire_mr_free(mr);
	return 0;
}

/**
 * scire_alloc_mw() - allocate a memory window of type 1 or 2 (IBA 10.6.7.1,
 * 10.6.7.2).
 * @ibmw: the core-allocated MW; its type and PD are set.
 * @udata: ALLOC_MW UHW: no fields.
 *
 * The window starts free (unbound), with an rkey from the MR key space
 * (reported to user space in ibmw->rkey); a BIND_MW WQE binds it
 * (scire_mw_bind()): for type 1 one that the Bind Memory Window verb
 * (ibv_bind_mw()) posts, for type 2 a bind work request. Either type
 * belongs to the PD; scire's type 2 windows are not tied to the QP that
 * bound them. Windows count against the same bound as MRs (SCIRE_MAX_MR
 * keys).
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for another type; -EINVAL for a non-zero UHW
 * request; -ENOMEM.
 */
int scire_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibmw->device);
	struct scire_mw_entry *ent;
	u32 rkey;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EOPNOTSUPP;
	if (!scire_udata_in_ok(udata))
		return -EINVAL;

	ent = kzalloc(sizeof(*ent), GFP_KERNEL);
	if (!ent)
		return -ENOMEM;
	spin_lock_init(&ent->lock);
	ent->state = SCIRE_MW_FREE;
	ent->type = ibmw->type;
	ent->pd = to_spd(ibmw->pd);
	ret = scire_key_reserve(sdev, &rkey);
	if (ret) {
		kfree(ent);
		return ret;
	}
	ent->rkey = rkey;
	ibmw->rkey = rkey;
	to_smw(ibmw)->entry = ent;
	scire_key_publish(sdev, rkey, xa_tag_pointer(ent, SCIRE_KEY_MW));
	return 0;
}

/**
 * scire_dealloc_mw() - deallocate a memory window.
 * @ibmw: the MW; the core frees it when this returns.
 *
 * Unbinds the window (releasing its MR) and removes its rkey; lookups
 * already under way see it dead. Its key-table entry is freed after an RCU
 * grace period.
 *
 * Context: process context.
 * Return: 0.
 */
int scire_dealloc_mw(struct ib_mw *ibmw)
{
	struct scire_dev *sdev = to_sdev(ibmw->device);
	struct scire_mw_entry *ent = to_smw(ibmw)->entry;
	struct scire_mr *mr;
	unsigned long flags;
	u32 rkey;

	spin_lock_irqsave(&ent->lock, flags);
	rkey = ent->rkey;
	mr = ent->mr;
	ent->mr = NULL;
	ent->state = SCIRE_MW_DEAD;
	spin_unlock_irqrestore(&ent->lock, flags);

	scire_key_remove(sdev, rkey);
	if (mr)
		scire_mw_release_mr(mr);
	kfree_rcu(ent, rcu);
	return 0;
}

/**
 * scire_mw_bind() - execute a BIND_MW WQE (IBA 10.6.7.1 type 1: the Bind
 * Memory Window verb; 10.6.7.2 type 2: the bind work request).
 * @pd: the PD of the QP the WQE was posted to.
 * @wqe: the requester's kernel copy of the WQE; uses wqe->bind and the
 *	 SCIRE_WQE_F_MW_TYPE1 flag, which must match the window's type.
 *
 * wqe->bind.mw_rkey must be the window's current rkey; new_rkey must keep
 * its index bits (only the low 8 bits are the consumer's) and becomes the
 * window's rkey, so the previous rkey stops resolving. A type 2 window
 * must be free (o10-37.2.30: a bound one is invalidated, not rebound) and
 * length must not be 0 (o10-37.2.40). A type 1 window may be free or
 * bound: a bind replaces the binding, and a bind of length 0 unbinds it
 * (mr_lkey is then ignored). The window and the MR named by mr_lkey must
 * belong to @pd (C10-72); the MR must be valid, grant IB_ACCESS_MW_BIND
 * (C10-73) and contain [addr, addr + length) (C10-75). access may ask for
 * remote read, write and atomic; write and atomic need the MR's local
 * write (C10-74, IBA 10.6.7.2.1); the MR's own remote rights do not limit
 * the window. Local write is ignored; zero-based windows (never allowed
 * for type 1, o10-36.2.2; not supported for type 2) and any other bit are
 * refused. A bound window holds a reference on its MR until it is
 * unbound, invalidated, bound elsewhere or deallocated. A failed bind
 * changes nothing.
 *
 * Context: the QP's work item (any context; no sleeping).
 * Return: 0; -EINVAL for an unknown or stale window rkey, a type other
 * than the flag says, a type 2 window not free, a new_rkey with other
 * index bits, zero length on a type 2 window, unsupported access bits, an
 * unknown, stale or invalid MR lkey (or one being deregistered); -EACCES
 * for a PD mismatch, an MR without MW_BIND, or write/atomic on an MR
 * without local write; -ERANGE if the range is not inside the MR.
 */
int scire_mw_bind(struct scire_pd *pd, const struct scire_send_wqe *wqe)
{
	struct scire_dev *sdev = to_sdev(pd->ibpd.device);
	bool type1 = wqe->flags & SCIRE_WQE_F_MW_TYPE1;
	u32 mw_rkey = wqe->bind.mw_rkey;
	u32 new_rkey = wqe->bind.new_rkey;
	u64 addr = wqe->bind.addr;
	u64 length = wqe->bind.length;
	u32 access = wqe->bind.access;
	struct scire_mr *mr = NULL, *old = NULL;
	struct scire_mw_entry *ent;
	unsigned long flags;
	void *entry;
	int ret;

	if (new_rkey >> 8 != mw_rkey >> 8 || (!length && !type1) ||
	    (access & ~SCIRE_MW_ACCESS))
		return -EINVAL;
	access &= SCIRE_ACCESS_REMOTE;

	if (length) {
		mr = scire_mr_lookup(pd, wqe->bind.mr_lkey, false, addr, length,
				     IB_ACCESS_MW_BIND);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		if ((access & SCIRE_ACCESS_STORES) &&
		    !(READ_ONCE(mr->access) & IB_ACCESS_LOCAL_WRITE)) {
			ret = -EACCES;
			goto err_put;
		}
		/* Negative once dereg has begun: it must not find a window later. */
		if (!atomic_inc_unless_negative(&mr->num_mw)) {
			ret = -EINVAL;
			goto err_put;
		}
	} else {
		addr = 0;
		access = 0;
	}

	rcu_read_lock();
	entry = xa_load(&sdev->mr_xa, mw_rkey >> 8);
	if (!entry || xa_pointer_tag(entry) != SCIRE_KEY_MW) {
		rcu_read_unlock();
		ret = -EINVAL;
		goto err_unbind;
	}
	ent = xa_untag_pointer(entry);
	spin_lock_irqsave(&ent->lock, flags);
	if (ent->rkey != mw_rkey || ent->state == SCIRE_MW_DEAD ||
	    ent->type != (type1 ? IB_MW_TYPE_1 : IB_MW_TYPE_2) ||
	    (!type1 && ent->state != SCIRE_MW_FREE)) {
		ret = -EINVAL;
	} else if (ent->pd != pd) {
		ret = -EACCES;
	} else {
		old = ent->mr;
		ent->rkey = new_rkey;
		ent->mr = mr;
		ent->addr = addr;
		ent->length = length;
		ent->access = access;
		ent->state = mr ? SCIRE_MW_BOUND : SCIRE_MW_FREE;
		ret = 0;
	}
	spin_unlock_irqrestore(&ent->lock, flags);
	rcu_read_unlock();
	if (!ret) {
		/* The window keeps the new MR's reference, drops the old one's. */
		if (old)
			scire_mw_release_mr(old);
		return 0;
	}

err_unbind:
	if (mr)
		atomic_dec(&mr->num_mw);
err_put:
	if (mr)
		scire_mr_put(mr);
	return ret;
}

/**
 * scire_sgl_init() - start a cursor at the first byte of an SGE list.
 * @sgl: the cursor.
 * @pd: the PD every lkey must belong to (the QP's).
 * @sge: the SGEs, in kernel memory that outlives the cursor.
 * @num_sge: entries in @sge.
 *
 * Nothing is looked up yet. Every initialised cursor must be released
 * with scire_sgl_release().
 *
 * Context: any.
 */
void scire_sgl_init(struct scire_sgl *sgl, struct scire_pd *pd,
		    const struct scire_sge *sge, u32 num_sge)
{
	sgl->pd = pd;
	sgl->sge = sge;
	sgl->num_sge = num_sge;
	sgl->index = 0;
	sgl->offset = 0;
	sgl->mr = NULL;
	sgl->mr_write = false;
}

static void scire_sgl_drop(struct scire_sgl *sgl)
{
	if (sgl->mr) {
		scire_mr_put(sgl->mr);
		sgl->mr = NULL;
	}
}

/*
 * Move the cursor past used-up (and zero-length) SGEs to the one holding
 * its next byte, and hold that SGE's MR, resolved for its whole range with
 * IB_ACCESS_LOCAL_WRITE if @write (an MR held for reading only is looked
 * up again). Return: that SGE; ERR_PTR(-ENOSPC) past the last one; or the
 * error of scire_mr_lookup().
 */
static const struct scire_sge *scire_sgl_cur(struct scire_sgl *sgl,
					     bool write)
{
	const struct scire_sge *sge;
	struct scire_mr *mr;

	for (;;) {
		if (sgl->index >= sgl->num_sge)
			return ERR_PTR(-ENOSPC);
		sge = &sgl->sge[sgl->index];
		if (sgl->offset < sge->length)
			break;
		scire_sgl_drop(sgl);
		sgl->index++;
		sgl->offset = 0;
	}
	if (sgl->mr && write && !sgl->mr_write)
		scire_sgl_drop(sgl);
	if (!sgl->mr) {
		mr = scire_mr_lookup(sgl->pd, sge->lkey, false, sge->addr,
				     sge->length,
				     write ? IB_ACCESS_LOCAL_WRITE : 0);
		if (IS_ERR(mr))
			return ERR_CAST(mr);
		sgl->mr = mr;
		sgl->mr_write = write;
	}
	return sge;
}

/**
 * scire_sgl_copy() - copy between the cursor's position and a buffer, and
 * advance it.
 * @sgl: the cursor.
 * @buf: kernel buffer of @len bytes.
 * @len: bytes to copy.
 * @to_sgl: copy @buf into the SGEs' memory (a receive, a READ response),
 *	    else out of it (a send, a WRITE).
 *
 * Zero-length SGEs are skipped without looking at their lkey. Each SGE's
 * lkey is resolved once, for the SGE's whole range, with scire_mr_lookup()
 * (IB_ACCESS_LOCAL_WRITE when @to_sgl), and held until the cursor moves
 * past it or is released. On error the bytes before the failing SGE have
 * been copied and the cursor stays at the failing SGE.
 *
 * Context: any; no sleeping.
 * Return: 0; -ENOSPC if the list ends before @len bytes; else the error of
 * scire_mr_lookup() (-EINVAL, -EACCES, -ERANGE: a local protection error)
 * or of scire_mr_copy().
 */
int scire_sgl_copy(struct scire_sgl *sgl, void *buf, u32 len, bool to_sgl)
{
	u8 *p = buf;

	while (len) {
		const struct scire_sge *sge = scire_sgl_cur(sgl, to_sgl);
		u32 n;
		int ret;

		if (IS_ERR(sge))
			return PTR_ERR(sge);
		n = min(len, sge->length - sgl->offset);
		ret = scire_mr_copy(sgl->mr, sge->addr + sgl->offset, p, n,
				    to_sgl);
		if (ret)
			return ret;
		p += n;
		len -= n;
		sgl->offset += n;
	}
	return 0;
}

/**
 * scire_sgl_seek() - move a cursor to a byte offset from the list's start.
 * @sgl: the cursor.
 * @offset: bytes from the first byte of the first SGE, 0..the list's
 *	    length (scire_sgl_length()).
 *
 * Releases the held MR; the next copy resolves the lkey of the SGE it
 * lands in. Used to restart a message at a PSN (retransmission, a READ
 * response resumed after a duplicate request).
 *
 * Context: any.
 * Return: 0, or -ENOSPC if @offset is past the end (the cursor is then at
 * the end).
 */
int scire_sgl_seek(struct scire_sgl *sgl, u64 offset)
{
	u32 i;

	scire_sgl_drop(sgl);
	for (i = 0; i < sgl->num_sge; i++) {
		if (offset < sgl->sge[i].length)
			break;
		offset -= sgl->sge[i].length;
	}
	sgl->index = i;
	if (i == sgl->num_sge) {
		sgl->offset = 0;
		return offset ? -ENOSPC : 0;
	}
	sgl->offset = offset;
	return 0;
}

/**
 * scire_sgl_release() - drop the MR a cursor holds.
 * @sgl: the cursor; it may be used again (the next copy looks up again).
 *
 * Call before the cursor is forgotten, and before the worker waits for
 * anything (an ACK, a timer): a held MR blocks its deregistration.
 *
 * Context: any.
 */
void scire_sgl_release(struct scire_sgl *sgl)
{
	scire_sgl_drop(sgl);
}

/**
 * scire_sgl_length() - total bytes of an SGE list.
 * @sge: the SGEs.
 * @num_sge: entries in @sge.
 *
 * Context: any.
 * Return: the sum of the lengths; a u64, so it cannot overflow.
 */
u64 scire_sgl_length(const struct scire_sge *sge, u32 num_sge)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		sum += sge[i].length;
	return sum;
}

/*
 * The page behind kernel virtual address @va of a DMA or fast-reg MR, if
 * it may be referenced from an skb: in the linear map, not slab, not free
 * (sendpage_ok(), the test nvme-tcp makes before it sends pages without
 * copying them). NULL otherwise: the caller copies.
 */
static struct page *scire_kva_page(const void *va)
{
	struct page *page;

	if (!virt_addr_valid(va))
		return NULL;
	page = virt_to_page(va);
	return sendpage_ok(page) ? page : NULL;
}

/**
 * scire_mr_frags() - append a range of an MR to an skb as page fragments,
 * without copying it.
 * @mr: an MR held from scire_mr_lookup(), which checked the range and
 *	rights for reading.
 * @iova: first byte in the MR's address space.
 * @skb: the skb; each fragment takes a page reference, so the bytes stay
 *	 readable until the skb is freed, even if the MR is deregistered.
 * @len: bytes to append.
 *
 * A user MR's pages are pinned. The pages of a DMA or fast-reg MR (kernel
 * memory: a ULP's buffer, pages a SCIF window pinned) are taken only where
 * they are whole pages of the linear map; slab memory (kmalloc'd buffers)
 * or vmalloc memory anywhere in the range makes the call fail, and the
 * caller copies the bytes instead.
 *
 * Context: any; no sleeping.
 * Return: 0; -EOPNOTSUPP for kernel memory that cannot be referenced so;
 * -E2BIG when the skb runs out of fragment slots (all but one of
 * MAX_SKB_FRAGS: the last is kept for the pad and ICRC of a wire packet);
 * an error of the range check as scire_mr_copy(). On error the skb may
 * hold some of the range: the caller drops it.
 */
int scire_mr_frags(struct scire_mr *mr, u64 iova, struct sk_buff *skb,
		   u32 len)
{
	u64 start = READ_ONCE(mr->iova), off = iova - start;
	int ret;

	ret = scire_mr_io_check(mr, start, iova, len, false);
	if (ret)
		return ret;

	while (len) {
		unsigned int in_page, n, i = skb_shinfo(skb)->nr_frags;
		struct page *page;
		u64 room = U64_MAX;
		void *va;

		switch (mr->type) {
		case SCIRE_MR_USER:
			/*
			 * An ODP MR's pages may be invalidated once the skb
			 * holds them: the caller copies instead.
			 */
			if (mr->odp)
				return -EOPNOTSUPP;
			page = scire_user_page(mr, off, &in_page);
			if (!page)
				return -EFAULT;
			break;
		case SCIRE_MR_DMA:
		case SCIRE_MR_FAST:
			/* A DMA MR's addresses are kernel virtual ones. */
			va = mr->type == SCIRE_MR_DMA ?
			     (void *)(uintptr_t)(start + off) :
			     scire_fast_va(mr, off, &room);
			if (!va)
				return -EFAULT;
			page = scire_kva_page(va);
			if (!page)
				return -EOPNOTSUPP;
			in_page = offset_in_page(va);
			break;
		default:
			return -EINVAL;
		}
		n = min_t(u64, min_t(u32, len, PAGE_SIZE - in_page), room);
		if (i && skb_can_coalesce(skb, i, page, in_page)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], n);
			skb->len += n;
			skb->data_len += n;
		} else {
			/* One slot stays free for a wire packet's tail. */
			if (i >= MAX_SKB_FRAGS - 1)
				return -E2BIG;
			get_page(page);
			skb_add_rx_frag(skb, i, page, in_page, n, n);
		}
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * scire_sgl_frags() - append the next @len bytes of a cursor's SGEs to an
 * skb as page fragments (scire_mr_frags()) and advance the cursor.
 * @sgl: the cursor.
 * @skb: the skb.
 * @len: bytes.
 *
 * lkeys are resolved for reading as scire_sgl_copy() does.
 *
 * Context: any; no sleeping.
 * Return: 0; -ENOSPC if the list ends first; an error of scire_mr_lookup()
 * (a local protection error); -EOPNOTSUPP or -E2BIG when the bytes cannot
 * be referenced (the caller copies them instead, after scire_sgl_seek()).
 */
int scire_sgl_frags(struct scire_sgl *sgl, struct sk_buff *skb, u32 len)
{
	while (len) {
		const struct scire_sge *sge = scire_sgl_cur(sgl, false);
		u32 n;
		int ret;

		if (IS_ERR(sge))
			return PTR_ERR(sge);
		n = min(len, sge->length - sgl->offset);
		ret = scire_mr_frags(sgl->mr, sge->addr + sgl->offset, skb, n);
		if (ret)
			return ret;
		len -= n;
		sgl->offset += n;
	}
	return 0;
}

/* scire_skb_walk() of an skb with a frag_list: skb_seq_read() walks it all. */
static int scire_skb_walk_seq(struct sk_buff *skb, u32 off, u32 len,
			      int (*fn)(void *arg, u8 *buf, u32 n), void *arg)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 consumed = 0;
	int ret = 0;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (consumed < len) {
		u32 n = skb_seq_read(consumed, &data, &st);

		if (!n) {
			ret = -EINVAL;
			break;
		}
		n = min(n, len - consumed);
		/* The source is never written: the cast only fits @fn. */
		ret = fn(arg, (u8 *)data, n);
		if (ret)
			break;
		consumed += n;
	}
	skb_abort_seq_read(&st);
	return ret;
}

/**
 * scire_skb_walk() - hand bytes of an skb to a function in contiguous
 * pieces.
 * @skb: the skb: linear, or with page fragments (a same-host unit, a
 *	 zero-copy packet).
 * @off: first byte, from skb->data.
 * @len: bytes.
 * @fn: called for each piece in order, with @arg, the piece and its length;
 *	a non-zero return stops the walk. A piece in a fragment is mapped
 *	for the call only; @fn must not sleep (scire_skb_walk_sleepable()
 *	is for one that does). The bytes must not be written.
 * @arg: passed to @fn.
 *
 * Context: any.
 * Return: 0; -EINVAL if the skb has fewer than @off + @len bytes; else the
 * first non-zero return of @fn.
 */
int scire_skb_walk(struct sk_buff *skb, u32 off, u32 len,
		   int (*fn)(void *arg, u8 *buf, u32 n), void *arg)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	u32 headlen = skb_headlen(skb);
	int ret = 0;
	int i;

	if ((u64)off + len > skb->len)
		return -EINVAL;
	/* A linear payload (any packet from the wire) needs no walk. */
	if (off + len <= headlen)
		return len ? fn(arg, skb->data + off, len) : 0;
	if (skb_has_frag_list(skb))
		return scire_skb_walk_seq(skb, off, len, fn, arg);

	if (off < headlen) {
		ret = fn(arg, skb->data + off, headlen - off);
		if (ret)
			return ret;
		len -= headlen - off;
		off = 0;
	} else {
		off -= headlen;
	}
	/*
	 * The page fragments directly: a piece a page (one a fragment where
	 * there is no high memory), mapped with kmap_local_page() (no more
	 * than page_address() on 64-bit). skb_seq_read() did the same at about
	 * twice the instructions per fragment (make bench-cost).
	 */
	for (i = 0; len && i < shinfo->nr_frags; i++) {
		const skb_frag_t *frag = &shinfo->frags[i];
		u32 fsize = skb_frag_size(frag);
		u32 p_off, p_len, done, flen;
		struct page *p;

		if (off >= fsize) {
			off -= fsize;
			continue;
		}
		flen = min(fsize - off, len);
		skb_frag_foreach_page(frag, skb_frag_off(frag) + off, flen,
				      p, p_off, p_len, done) {
			u8 *va = kmap_local_page(p);

			/* The source is never written: the cast only fits @fn. */
			ret = fn(arg, va + p_off, p_len);
			kunmap_local(va);
			if (ret)
				return ret;
		}
		len -= flen;
		off = 0;
	}
	/* skb->len covered it: a shortfall is a malformed skb. */
	return len ? -EINVAL : 0;
}

/*
 * scire_skb_walk() for a @fn that may sleep (it copies into an ODP MR):
 * a payload in fragments goes through a bounce buffer (skb_copy_bits()),
 * since scire_skb_walk() maps fragments atomically. Process context.
 */
static int scire_skb_walk_sleepable(struct sk_buff *skb, u32 off, u32 len,
				    int (*fn)(void *arg, u8 *buf, u32 n),
				    void *arg)
{
	u8 *bounce;
	int ret = 0;

	if ((u64)off + len > skb->len)
		return -EINVAL;
	if (off + len <= skb_headlen(skb))
		return len ? fn(arg, skb->data + off, len) : 0;

	bounce = kmalloc(min_t(u32, len, PAGE_SIZE), GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (len && !ret) {
		u32 n = min_t(u32, len, PAGE_SIZE);

		ret = skb_copy_bits(skb, off, bounce, n);
		if (!ret)
			ret = fn(arg, bounce, n);
		off += n;
		len -= n;
	}
	kfree(bounce);
	return ret;
}

static int scire_pkt_sgl_piece(void *arg, u8 *buf, u32 n)
{
	return scire_sgl_copy(arg, buf, n, true);
}

/**
 * scire_pkt_to_sgl() - scatter payload bytes of a packet into a cursor's
 * SGEs (a receive WQE, a READ's local buffers).
 * @skb: the packet; its payload may be linear or in page fragments.
 * @off: first byte, from skb->data.
 * @len: bytes.
 * @sgl: the cursor; advanced as scire_sgl_copy() advances it.
 *
 * Context: any; no sleeping (fragments are mapped atomically).
 * Return: 0; -EINVAL if the packet is shorter; else the error of
 * scire_sgl_copy().
 */
int scire_pkt_to_sgl(struct sk_buff *skb, u32 off, u32 len,
		     struct scire_sgl *sgl)
{
	/* The SGEs may be ODP MRs of the PD, whose copies may sleep. */
	if (atomic_read(&sgl->pd->num_odp_mr))
		return scire_skb_walk_sleepable(skb, off, len,
						scire_pkt_sgl_piece, sgl);
	return scire_skb_walk(skb, off, len, scire_pkt_sgl_piece, sgl);
}

struct scire_pkt_mr_arg {
	struct scire_mr *mr;
	u64 iova;
};

static int scire_pkt_mr_piece(void *arg, u8 *buf, u32 n)
{
	struct scire_pkt_mr_arg *a = arg;
	int ret;

	ret = scire_mr_copy(a->mr, a->iova, buf, n, true);
	a->iova += n;
	return ret;
}

/**
 * scire_pkt_to_mr() - copy payload bytes of a packet into an MR range (an
 * RDMA WRITE).
 * @skb: the packet; its payload may be linear or in page fragments.
 * @off: first byte, from skb->data.
 * @len: bytes.
 * @mr: an MR held from scire_mr_lookup(), which checked the range and
 *	rights.
 * @iova: where the first byte goes, in the MR's address space.
 *
 * Context: any; no sleeping.
 * Return: 0; -EINVAL if the packet is shorter; else the error of
 * scire_mr_copy().
 */
int scire_pkt_to_mr(struct sk_buff *skb, u32 off, u32 len,
		    struct scire_mr *mr, u64 iova)
{
	struct scire_pkt_mr_arg a = { .mr = mr, .iova = iova };

	if (mr->odp)
		return scire_skb_walk_sleepable(skb, off, len,
						scire_pkt_mr_piece, &a);
	return scire_skb_walk(skb, off, len, scire_pkt_mr_piece, &a);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "../kunit/scire_mr_test.c"
#endif
