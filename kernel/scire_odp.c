// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: on-demand paging (ODP) MRs, IB_ACCESS_ON_DEMAND.
 *
 * An ODP MR pins nothing. The core's ib_umem_odp tracks the region with an
 * mmu_interval_notifier and keeps, per page, whether it is mapped and
 * writable; scire looks a page up at each access and, where it is missing,
 * faults it in (ib_umem_odp_map_dma_and_lock(), which walks the owning
 * process's page tables and may sleep). Every access to the pages happens
 * under the umem's umem_mutex, which the invalidation callback takes too:
 * once the mm has invalidated a range (munmap, migration, reclaim), no byte
 * is read from or written to its old pages, and a later access faults the
 * new ones in.
 *
 * An implicit ODP MR (ibv_reg_mr(pd, NULL, SIZE_MAX, ...ON_DEMAND): the
 * whole address space, iova equal to the virtual address) is the core's
 * implicit root umem with a child umem per 2 MiB chunk the data path
 * reaches, made on first use (only over an existing VMA, so that remote
 * input cannot make children for unmapped space) and kept until
 * deregistration; each child is an explicit ODP umem with its notifier.
 *
 * Faulting sleeps, so it needs process context: a QP whose PD has ODP MRs
 * never runs in softirq context (scire_qp_bh_ok()), and its runs happen in
 * the poster's system call or its work item. The same holds for a
 * same-host peer reached directly (scire_qp_direct_lock()).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/highmem.h>
#include <linux/mmu_notifier.h>
#include <rdma/ib_umem_odp.h>

#include "scire.h"

/* Children of an implicit ODP MR cover 2^SCIRE_ODP_CHILD_SHIFT bytes. */
#define SCIRE_ODP_CHILD_SHIFT	21

/**
 * struct scire_odp_implicit - the children of an implicit ODP MR.
 * @lock: serialises making children.
 * @children: chunk index (address >> SCIRE_ODP_CHILD_SHIFT) -> its
 *	      struct ib_umem_odp; entries are only added until the MR goes.
 */
struct scire_odp_implicit {
	struct mutex lock;	/* held while a child is made */
	struct xarray children;
};

static const struct mmu_interval_notifier_ops scire_odp_ops;

/*
 * The page of @odp at user virtual address @va, if it is mapped, and
 * writable when @write. Caller holds umem_mutex.
 */
static struct page *scire_odp_lookup(struct ib_umem_odp *odp, u64 va,
				     bool write)
{
	lockdep_assert_held(&odp->umem_mutex);
	return scire_odp_page(odp, va, write);
}

/* Every page of [@va, @va + @len) of @odp mapped (writable if @write)? */
static bool scire_odp_present(struct ib_umem_odp *odp, u64 va, u64 len,
			      bool write)
{
	u64 addr;

	for (addr = va & PAGE_MASK; addr < va + len; addr += PAGE_SIZE) {
		if (!scire_odp_lookup(odp, addr, write))
			return false;
	}
	return true;
}

/*
 * Make [@va, @va + @len) of @odp present (writable if @write) and return
 * with its umem_mutex held. Pages already there cost one look each;
 * missing ones are faulted in, which sleeps.
 */
static int scire_odp_lock(struct scire_mr *mr, struct ib_umem_odp *odp,
			  u64 va, u64 len, bool write)
{
	int ret;

	might_sleep();
	mutex_lock(&odp->umem_mutex);
	if (scire_odp_present(odp, va, len, write))
		return 0;
	mutex_unlock(&odp->umem_mutex);

	scire_count(to_sdev(mr->ibmr.device), SCIRE_CNT_ODP_FAULTS, 1);
	ret = ib_umem_odp_map_dma_and_lock(odp, va, len,
					   write ? SCIRE_ODP_WRITE :
						   SCIRE_ODP_READ, true);
	if (ret < 0)
		return ret == -EAGAIN || ret == -EBUSY ? -EFAULT : ret;
	/*
	 * Locked with the range mapped, unless an invalidation won a race
	 * after the fault: then say so, as for an unmapped range.
	 */
	if (!scire_odp_present(odp, va, len, write)) {
		mutex_unlock(&odp->umem_mutex);
		return -EFAULT;
	}
	return 0;
}

/*
 * Is there a VMA at @va in the process that owns @root? Children of an
 * implicit MR are made only for mapped address space.
 */
static bool scire_odp_mapped(struct ib_umem_odp *root, u64 va)
{
	struct mm_struct *mm = root->umem.owning_mm;
	bool mapped;

	if (!mmget_not_zero(mm))
		return false;
	mmap_read_lock(mm);
	mapped = vma_lookup(mm, va);
	mmap_read_unlock(mm);
	mmput(mm);
	return mapped;
}

/*
 * The umem of @mr that holds @va, and in *@room the bytes from @va to its
 * end: the MR's own for explicit ODP, else the child of @va's chunk, made
 * now if need be. ERR_PTR(-EFAULT) for an address nothing is mapped at.
 */
static struct ib_umem_odp *scire_odp_umem(struct scire_mr *mr, u64 va,
					  u64 *room)
{
	struct scire_odp_implicit *imp = mr->odp_imp;
	unsigned long idx = va >> SCIRE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	void *old;

	if (!imp) {
		*room = ib_umem_end(mr->odp) - va;
		return mr->odp;
	}
	*room = ((u64)(idx + 1) << SCIRE_ODP_CHILD_SHIFT) - va;
	child = xa_load(&imp->children, idx);
	if (child)
		return child;

	mutex_lock(&imp->lock);
	child = xa_load(&imp->children, idx);
	if (child)
		goto out;
	if (!scire_odp_mapped(mr->odp, va)) {
		child = ERR_PTR(-EFAULT);
		goto out;
	}
	child = ib_umem_odp_alloc_child(mr->odp,
					(u64)idx << SCIRE_ODP_CHILD_SHIFT,
					1UL << SCIRE_ODP_CHILD_SHIFT,
					&scire_odp_ops);
	if (IS_ERR(child))
		goto out;
	old = xa_store(&imp->children, idx, child, GFP_KERNEL);
	if (xa_is_err(old)) {
		ib_umem_odp_release(child);
		child = ERR_PTR(xa_err(old));
	}
out:
	mutex_unlock(&imp->lock);
	return child;
}

/* scire_odp_copy() within one umem. */
static int scire_odp_copy_one(struct scire_mr *mr, struct ib_umem_odp *odp,
			      u64 va, u8 *buf, u32 len, bool to_mr)
{
	int ret;

	ret = scire_odp_lock(mr, odp, va, len, to_mr);
	if (ret)
		return ret;
	while (len) {
		unsigned int in_page = offset_in_page(va);
		u32 n = min_t(u32, len, PAGE_SIZE - in_page);
		struct page *page = scire_odp_lookup(odp, va, to_mr);

		if (WARN_ON_ONCE(!page)) {
			ret = -EFAULT;
			break;
		}
		scire_copy_in_page(page, in_page, buf, n, to_mr);
		va += n;
		buf += n;
		len -= n;
	}
	mutex_unlock(&odp->umem_mutex);
	return ret;
}

/**
 * scire_odp_copy() - copy between a range of an ODP MR and a kernel buffer.
 * @mr: an ODP MR held from scire_mr_lookup(), range and rights checked.
 * @off: byte offset in the region.
 * @buf: kernel buffer of @len bytes.
 * @len: bytes.
 * @to_mr: copy @buf into the MR (else the MR into @buf).
 *
 * Missing pages are faulted in first; the copy runs under umem_mutex, so
 * an invalidation of the range waits for it, and one that came first
 * makes this access fault the new pages in.
 *
 * Context: process context, may sleep (scire_qp_bh_ok() keeps QPs of a
 * PD with ODP MRs out of softirq runs).
 * Return: 0; -EFAULT if the range is not (or no longer) mapped in the
 * owning process, or not writable there for a copy into it; -ENOMEM.
 */
int scire_odp_copy(struct scire_mr *mr, u64 off, u8 *buf, u32 len,
		   bool to_mr)
{
	u64 va = mr->odp_va + off;

	while (len) {
		struct ib_umem_odp *odp;
		u64 room;
		u32 n;
		int ret;

		odp = scire_odp_umem(mr, va, &room);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		n = min_t(u64, len, room);
		ret = scire_odp_copy_one(mr, odp, va, buf, n, to_mr);
		if (ret)
			return ret;
		va += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/**
 * scire_odp_word_get() - the page holding an 8-byte word of an ODP MR,
 * present and writable, with its umem's umem_mutex held.
 * @mr: an ODP MR held from scire_mr_lookup().
 * @off: byte offset of the 8-byte aligned word in the region.
 * @in_page: set to the word's offset in the page.
 * @held: set to the umem whose mutex is held (a child of an implicit MR).
 *
 * For atomics and ATOMIC WRITE: release with scire_odp_word_put().
 *
 * Context: process context, may sleep.
 * Return: the page, or an ERR_PTR as scire_odp_copy() fails.
 */
struct page *scire_odp_word_get(struct scire_mr *mr, u64 off,
				unsigned int *in_page, struct ib_umem_odp **held)
{
	u64 va = mr->odp_va + off, room;
	struct ib_umem_odp *odp;
	struct page *page;
	int ret;

	/* 8-byte aligned: the word lies in one chunk of an implicit MR. */
	odp = scire_odp_umem(mr, va, &room);
	if (IS_ERR(odp))
		return ERR_CAST(odp);
	ret = scire_odp_lock(mr, odp, va, 8, true);
	if (ret)
		return ERR_PTR(ret);
	page = scire_odp_lookup(odp, va, true);
	if (WARN_ON_ONCE(!page)) {
		mutex_unlock(&odp->umem_mutex);
		return ERR_PTR(-EFAULT);
	}
	*in_page = offset_in_page(va);
	*held = odp;
	return page;
}

/**
 * scire_odp_word_put() - release what scire_odp_word_get() took.
 * @held: the umem it returned in *held.
 */
void scire_odp_word_put(struct ib_umem_odp *held)
{
	mutex_unlock(&held->umem_mutex);
}

/*
 * The mm is about to change [range->start, range->end): unmap those pages
 * of the umem under umem_mutex, which waits for an access in progress.
 */
static bool scire_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	scire_count(to_sdev(odp->umem.ibdev), SCIRE_CNT_ODP_INVALIDATIONS, 1);
	return true;
}

static const struct mmu_interval_notifier_ops scire_odp_ops = {
	.invalidate = scire_odp_invalidate,
};

/**
 * scire_odp_reg() - make @mr an ODP MR over user memory (IB_ACCESS_ON_DEMAND).
 * @mr: a new SCIRE_MR_USER MR, not yet published.
 * @start: user virtual address of the region.
 * @length: bytes.
 * @access: IB_ACCESS_* rights, IB_ACCESS_ON_DEMAND among them.
 *
 * Nothing is pinned or faulted in here. The MR's PD counts it, which keeps
 * the PD's QPs out of softirq runs until scire_odp_unreg().
 *
 * Context: process context, may sleep.
 * With IB_ACCESS_HUGETLB the core tracks the region in huge pages (it must
 * be hugetlbfs memory); scire still copies PAGE_SIZE at a time.
 *
 * With @start 0 and @length U64_MAX the MR is implicit: the whole address
 * space, its children made as the data path reaches them.
 *
 * Return: 0; the errors of ib_umem_odp_get() (-EINVAL for
 * IB_ACCESS_HUGETLB over memory that is not hugetlbfs, -EFAULT, -ENOMEM)
 * and of ib_umem_odp_alloc_implicit().
 */
int scire_odp_reg(struct scire_mr *mr, u64 start, u64 length, int access)
{
	struct ib_umem_odp *odp;

	if (!start && length == U64_MAX) {
		/* Implicit: children are made as the data path needs them. */
		mr->odp_imp = kzalloc(sizeof(*mr->odp_imp), GFP_KERNEL);
		if (!mr->odp_imp)
			return -ENOMEM;
		mutex_init(&mr->odp_imp->lock);
		xa_init(&mr->odp_imp->children);
		odp = ib_umem_odp_alloc_implicit(mr->ibmr.device, access);
	} else {
		odp = ib_umem_odp_get(mr->ibmr.device, start, length, access,
				      &scire_odp_ops);
	}
	if (IS_ERR(odp)) {
		kfree(mr->odp_imp);
		mr->odp_imp = NULL;
		return PTR_ERR(odp);
	}
	mr->odp = odp;
	mr->umem = &odp->umem;
	mr->odp_va = start;
	mr->offset = offset_in_page(start);
	if (!mr->odp_imp)
		mr->npages = ib_umem_odp_num_pages(odp);
	atomic_inc(&to_spd(mr->ibmr.pd)->num_odp_mr);
	/*
	 * A softirq run that began before the count can no longer be
	 * running once its grace period ends (BH-off code is an RCU reader):
	 * every run that can reach the MR, whose key is published after
	 * this, sees the count.
	 */
	synchronize_rcu();
	return 0;
}

/**
 * scire_odp_unreg() - release an implicit MR's children and undo
 * scire_odp_reg()'s count on the PD.
 * @mr: an ODP MR no data-path user holds any more (its own umem, the
 *	implicit root for an implicit MR, is released with the MR after
 *	this).
 */
void scire_odp_unreg(struct scire_mr *mr)
{
	struct scire_odp_implicit *imp = mr->odp_imp;

	if (imp) {
		struct ib_umem_odp *child;
		unsigned long idx;

		xa_for_each(&imp->children, idx, child)
			ib_umem_odp_release(child);
		xa_destroy(&imp->children);
		mutex_destroy(&imp->lock);
		kfree(imp);
		mr->odp_imp = NULL;
	}
	atomic_dec(&to_spd(mr->ibmr.pd)->num_odp_mr);
}

/* Fault [@va, @va + @len) of @mr in, a umem (chunk) at a time. */
static int scire_odp_prefetch(struct scire_mr *mr, u64 va, u64 len,
			      bool write)
{
	while (len) {
		struct ib_umem_odp *odp;
		u64 room, n;
		int ret;

		odp = scire_odp_umem(mr, va, &room);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		n = min(len, room);
		ret = scire_odp_lock(mr, odp, va, n, write);
		if (ret)
			return ret;
		mutex_unlock(&odp->umem_mutex);
		va += n;
		len -= n;
	}
	return 0;
}

/**
 * scire_advise_mr() - ibv_advise_mr(3): prefetch ranges of ODP MRs.
 * @ibpd: the PD the lkeys belong to.
 * @advice: PREFETCH (fault in for reading), PREFETCH_WRITE (for writing)
 *	    or PREFETCH_NO_FAULT (nothing).
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before returning. Without
 *	   it the prefetch is a hint; scire does it before returning too.
 * @sg_list: the ranges: lkey, address in the MR, length.
 * @num_sge: entries of @sg_list.
 * @attrs: the method's attributes; scire reads none.
 *
 * Each range must lie in an ODP MR of @ibpd with the rights the advice
 * needs. A range the owning process has not mapped stops the call.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for an unknown advice or flag; -EINVAL for an
 * lkey of no ODP MR of @ibpd or a range outside it; -EFAULT if a range is
 * not mapped (with FLUSH; without it such a range is skipped, as a hint).
 */
int scire_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct scire_pd *pd = to_spd(ibpd);
	bool write;
	u32 i;
	int ret;

	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;
	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		write = false;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		write = true;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		/* Mapping only what is present: nothing for scire to do. */
		return 0;
	default:
		return -EOPNOTSUPP;
	}

	for (i = 0; i < num_sge; i++) {
		struct scire_mr *mr;

		mr = scire_mr_lookup(pd, sg_list[i].lkey, false,
				     sg_list[i].addr, sg_list[i].length,
				     write ? IB_ACCESS_LOCAL_WRITE : 0);
		if (IS_ERR(mr))
			return -EINVAL;
		if (!mr->odp) {
			scire_mr_put(mr);
			return -EINVAL;
		}
		scire_count(to_sdev(ibpd->device), SCIRE_CNT_ODP_PREFETCHES, 1);
		ret = scire_odp_prefetch(mr, mr->odp_va + sg_list[i].addr -
					 mr->iova, sg_list[i].length, write);
		scire_mr_put(mr);
		if (ret && (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
			return ret;
	}
	return 0;
}
