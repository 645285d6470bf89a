// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: memory regions and the key table.
 *
 * Every MR is found by key in scire_dev.mr_xa: the upper 24 bits of an
 * lkey/rkey are the table index, the low 8 bits a generation byte, so a
 * stale key whose index was reused no longer matches (IBA 10.6.3.2: the
 * "key" portion of an L_Key/R_Key is owned by the consumer, here by the
 * device). lkey and rkey of an MR are equal.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "scire.h"

/* Access rights an MR may be granted; the optional range is only hints. */
#define SCIRE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB |	  \
			 IB_ACCESS_OPTIONAL)

static struct scire_mr *scire_mr_alloc(struct scire_dev *sdev, int access,
				       enum scire_mr_type type)
{
	struct scire_mr *mr;

	if (atomic_inc_return(&sdev->num_mr) > SCIRE_MAX_MR) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->type = type;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;
}

/* Publish @mr in the key table; from here on the data path can find it. */
static int scire_mr_publish(struct scire_dev *sdev, struct scire_mr *mr)
{
	u32 index;
	int ret;

	ret = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, (1U << 24) - 1), &sdev->mr_next,
			      GFP_KERNEL);
	if (ret < 0)
		return ret;
	/* Serialised by the xarray lock, so generations do not repeat. */
	xa_lock(&sdev->mr_xa);
	mr->ibmr.lkey = index << 8 | sdev->key_gen++;
	mr->ibmr.rkey = mr->ibmr.lkey;
	__xa_store(&sdev->mr_xa, index, mr, GFP_ATOMIC);
	xa_unlock(&sdev->mr_xa);
	return 0;
}

static void scire_mr_free(struct scire_dev *sdev, struct scire_mr *mr)
{
	ib_umem_release(mr->umem);
	kvfree(mr->pages);
	/* scire_mr_get() may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
	atomic_dec(&sdev->num_mr);
}

/**
 * scire_mr_get() - look up and hold an MR by lkey or rkey.
 * @sdev: the device.
 * @key: an lkey or rkey as a work request or packet carries it.
 *
 * The caller still checks PD, bounds and access before touching memory.
 *
 * Context: any (RCU and the MR's reference count; no sleeping).
 * Return: the MR, held (release with scire_mr_put()), or NULL if no live MR
 * has this key.
 */
struct scire_mr *scire_mr_get(struct scire_dev *sdev, u32 key)
{
	struct scire_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * scire_mr_put() - release a reference taken by scire_mr_get().
 * @mr: the MR.
 *
 * Context: any.
 */
void scire_mr_put(struct scire_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
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
 * Return: the MR or an ERR_PTR: -EINVAL for unknown access bits, -ENOMEM.
 */
struct ib_mr *scire_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_mr *mr;
	int ret;

	if (access & ~SCIRE_MR_ACCESS)
		return ERR_PTR(-EINVAL);
	mr = scire_mr_alloc(sdev, access, SCIRE_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	ret = scire_mr_publish(sdev, mr);
	if (ret) {
		scire_mr_free(sdev, mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/* Record one struct page per PAGE_SIZE of the pinned region. */
static int scire_mr_fill_pages(struct scire_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter iter;
	unsigned long n = 0;

	mr->npages = ib_umem_num_pages(umem);
	mr->offset = ib_umem_offset(umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(n >= mr->npages))
			return -EFAULT;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	return n == mr->npages ? 0 : -EFAULT;
}

/**
 * scire_reg_user_mr() - register user memory (IBA 11.2.8.1).
 * @ibpd: the PD.
 * @start: user virtual address of the region.
 * @length: bytes, 1..max_mr_size.
 * @iova: the address the region is known by in work requests and packets.
 * @access: IB_ACCESS_* rights (the core has checked that remote write or
 *	    atomic comes with local write).
 * @udata: REG_MR UHW: no fields.
 *
 * The pages are pinned (ib_umem_get) for the life of the MR.
 *
 * Context: process context, may sleep.
 * Return: the MR or an ERR_PTR: -EINVAL for a zero or too large length,
 * an iova range that wraps, unknown access bits or a non-zero UHW request;
 * -EFAULT if the range is not mapped; -ENOMEM.
 */
struct ib_mr *scire_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_mr *mr;
	int ret;

	if (!scire_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);
	if (access & ~SCIRE_MR_ACCESS)
		return ERR_PTR(-EINVAL);
	if (!length || length > SCIRE_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = scire_mr_alloc(sdev, access, SCIRE_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	ret = scire_mr_fill_pages(mr);
	if (ret)
		goto err_free;

	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	ret = scire_mr_publish(sdev, mr);
	if (ret)
		goto err_free;
	return &mr->ibmr;

err_free:
	scire_mr_free(sdev, mr);
	return ERR_PTR(ret);
}

/**
 * scire_dereg_mr() - deregister an MR.
 * @ibmr: the MR.
 * @udata: unused.
 *
 * The key stops resolving at once; the call then waits until no data-path
 * user still holds the MR, so no byte moves to or from its pages after it
 * returns.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int scire_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibmr->device);
	struct scire_mr *mr = to_smr(ibmr);

	xa_erase(&sdev->mr_xa, ibmr->lkey >> 8);
	scire_mr_put(mr);
	wait_for_completion(&mr->released);
	scire_mr_free(sdev, mr);
	return 0;
}
