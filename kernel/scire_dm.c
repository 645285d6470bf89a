// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: device memory (ibv_alloc_dm).
 *
 * A software device has no memory of its own; its "device memory" is
 * zeroed kernel memory charged to the caller's memory cgroup, mapped into
 * the process through an rdma_user_mmap_entry. The provider copies to and
 * from it on that mapping (ibv_memcpy_to_dm, ibv_memcpy_from_dm), and MRs
 * over it (scire_reg_dm_mr() in scire_mr.c) are page lists over its pages.
 * All contexts together hold at most SCIRE_MAX_DM_SIZE bytes. Memory
 * freed while a process still maps it (a forked child, or the provider
 * between ibv_free_dm's command and its munmap) still exists, so it keeps
 * counting until no page of it is mapped: scire_dealloc_dm() leaves freed
 * memory on scire_dev.dm_freed, and each allocation first gives back what
 * nobody maps any more.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire.h"

#define UVERBS_MODULE_NAME scire_ib
#include <rdma/uverbs_ioctl.h>

/**
 * struct scire_dm_freed - device memory freed while still mapped.
 * @list:	on scire_dev.dm_freed.
 * @bytes:	what it counts in scire_dev.dm_bytes.
 * @npages:	pages in @pages.
 * @pages:	its pages, each with a reference of ours, so that whether
 *		they are still mapped can be asked after the memory's own
 *		vmalloc area is gone.
 */
struct scire_dm_freed {
	struct list_head list;
	u64 bytes;
	unsigned long npages;
	struct page *pages[];
};

static bool scire_dm_pages_mapped(struct page **pages, unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++)
		if (folio_mapped(page_folio(pages[i])))
			return true;
	return false;
}

/*
 * Give back the memory on sdev->dm_freed that no process maps any more
 * (all of it with @all: the device is going, and the pages, still held by
 * whatever maps them, need our references no longer). Mappings of it can
 * only go: its mmap offset was withdrawn when it was freed.
 */
static void scire_dm_reap(struct scire_dev *sdev, bool all)
{
	struct scire_dm_freed *f, *tmp;
	unsigned long i;

	mutex_lock(&sdev->dm_lock);
	list_for_each_entry_safe(f, tmp, &sdev->dm_freed, list) {
		if (!all && scire_dm_pages_mapped(f->pages, f->npages))
			continue;
		list_del(&f->list);
		for (i = 0; i < f->npages; i++)
			put_page(f->pages[i]);
		atomic64_sub(f->bytes, &sdev->dm_bytes);
		kvfree(f);
	}
	mutex_unlock(&sdev->dm_lock);
}

/**
 * scire_dm_release_freed() - drop what the device keeps of device memory
 * freed while mapped.
 * @sdev: the device, being deallocated: no context is left.
 *
 * Processes that still map such memory keep its pages until they unmap.
 *
 * Context: process context.
 */
void scire_dm_release_freed(struct scire_dev *sdev)
{
	scire_dm_reap(sdev, true);
}

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
 * against SCIRE_MAX_DM_SIZE, with the freed memory a process still maps
 * (memory freed and unmapped since is given back first).
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
	scire_dm_reap(sdev, false);
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
 * The memory stays mapped where a process still maps it, and is freed
 * once the last mapping goes; until then it counts against the device's
 * limit (if the record of it cannot be allocated, it stops counting now).
 *
 * Context: process context.
 * Return: 0.
 */
int scire_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct scire_dm *dm = container_of(ibdm, struct scire_dm, ibdm);
	struct scire_dev *sdev = to_sdev(ibdm->device);
	unsigned long i, npages = dm->size >> PAGE_SHIFT;
	struct scire_dm_freed *f;

	/*
	 * Whether a process maps it is asked at the next allocation, not
	 * here: the caller's provider itself unmaps only after this returns.
	 */
	f = kvzalloc(struct_size(f, pages, npages), GFP_KERNEL);
	if (f) {
		for (i = 0; i < npages; i++) {
			f->pages[i] = vmalloc_to_page(dm->mmap->addr +
						      i * PAGE_SIZE);
			get_page(f->pages[i]);
		}
		f->bytes = dm->size;
		f->npages = npages;
		mutex_lock(&sdev->dm_lock);
		list_add_tail(&f->list, &sdev->dm_freed);
		mutex_unlock(&sdev->dm_lock);
	} else {
		atomic64_sub(dm->size, &sdev->dm_bytes);
	}
	scire_mmap_remove(dm->mmap);
	kfree(dm);
	return 0;
}
