// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: device memory (ibv_alloc_dm).
 *
 * A software device has no memory of its own; its "device memory" is
 * zeroed kernel memory charged to the caller's memory cgroup, mapped into
 * the process through an rdma_user_mmap_entry. The provider copies to and
 * from it on that mapping (ibv_memcpy_to_dm, ibv_memcpy_from_dm), and MRs
 * over it (scire_reg_dm_mr() in scire_mr.c) are page lists over its pages.
 * All contexts together hold at most SCIRE_MAX_DM_SIZE bytes.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire.h"

#define UVERBS_MODULE_NAME scire_ib
#include <rdma/uverbs_ioctl.h>

/**
 * scire_alloc_dm() - allocate device memory (ibv_alloc_dm(3)).
 * @ibdev: the device.
 * @ibuc: the calling context; the memory is mmap-able from it.
 * @attr: @attr->length in bytes, 1..max_dm_size; @attr->alignment, log2 of
 *	  the alignment asked for, at most PAGE_SHIFT (the memory is page
 *	  aligned).
 * @attrs: the method's attributes: SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET
 *	   receives the offset to mmap(2) the memory at.
 *
 * The length is rounded up to whole pages, and those are what count
 * against SCIRE_MAX_DM_SIZE.
 *
 * Context: process context, may sleep.
 * Return: the DM or an ERR_PTR: -EINVAL for a zero length, an alignment
 * beyond a page or unknown flags; -ENOMEM when the device's device memory
 * would exceed SCIRE_MAX_DM_SIZE or the allocation fails (also at the
 * caller's memory cgroup limit); an error of copying out the offset.
 */
struct ib_dm *scire_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	struct scire_dm *dm;
	u64 offset, size;
	int ret;

	if (!attr->length || attr->length > SCIRE_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT || attr->flags)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(attr->length);
	if (atomic64_add_return(size, &sdev->dm_bytes) > SCIRE_MAX_DM_SIZE) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	dm->size = size;
	dm->mmap = scire_mmap_alloc(ibuc, size);
	if (IS_ERR(dm->mmap)) {
		ret = PTR_ERR(dm->mmap);
		goto err_free;
	}
	offset = rdma_user_mmap_get_offset(&dm->mmap->rdma);
	ret = uverbs_copy_to(attrs, SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (ret)
		goto err_remove;
	return &dm->ibdm;

err_remove:
	scire_mmap_remove(dm->mmap);
err_free:
	kfree(dm);
err_uncharge:
	atomic64_sub(size, &sdev->dm_bytes);
	return ERR_PTR(ret);
}

/**
 * scire_dealloc_dm() - free device memory (ibv_free_dm(3)).
 * @ibdm: the DM; the core has checked that no MR covers it.
 * @attrs: the method's attributes (none).
 *
 * The memory stays mapped where the process still maps it, and is freed
 * once the last mapping goes; it no longer counts against the device's
 * limit from now on.
 *
 * Context: process context.
 * Return: 0.
 */
int scire_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct scire_dm *dm = container_of(ibdm, struct scire_dm, ibdm);

	scire_mmap_remove(dm->mmap);
	atomic64_sub(dm->size, &to_sdev(ibdm->device)->dm_bytes);
	kfree(dm);
	return 0;
}
