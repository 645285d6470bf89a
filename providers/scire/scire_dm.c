// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire provider: device memory (ibv_alloc_dm(3)).
 *
 * scire's device memory is kernel memory the process maps: ALLOC_DM returns
 * the offset to mmap it at (SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET), and
 * ibv_memcpy_to_dm / ibv_memcpy_from_dm are plain copies on that mapping.
 * As on hardware with device memory, copies are in whole 32-bit words: the
 * offset and the length must be multiples of 4.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma-core/cmd_ioctl.h>

#include "scire.h"

struct scire_dm {
	struct verbs_dm vdm;
	void *addr;		/* the mapping */
	size_t map_len;		/* its bytes: the length, whole pages */
	uint64_t length;	/* bytes asked for: the copy limit */
};

static struct scire_dm *to_scire_dm(struct ibv_dm *ibdm)
{
	return (struct scire_dm *)((char *)ibdm - offsetof(struct scire_dm, vdm.dm));
}

/* 0 if [offset, offset + length) is a word-granular range of the DM. */
static int scire_dm_range(const struct scire_dm *dm, uint64_t offset,
			  size_t length)
{
	if (offset > dm->length || length > dm->length - offset)
		return EFAULT;
	if (offset % 4 || length % 4)
		return EINVAL;
	return 0;
}

static int scire_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			      const void *host_addr, size_t length)
{
	struct scire_dm *dm = to_scire_dm(ibdm);
	int ret = scire_dm_range(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy((char *)dm->addr + dm_offset, host_addr, length);
	return 0;
}

static int scire_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
				uint64_t dm_offset, size_t length)
{
	struct scire_dm *dm = to_scire_dm(ibdm);
	int ret = scire_dm_range(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy(host_addr, (char *)dm->addr + dm_offset, length);
	return 0;
}

struct ibv_dm *scire_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr)
{
	DECLARE_VERBS_CMD(cmd, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, 1);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct scire_dm *dm;
	uint64_t offset = 0;
	int ret;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	/* The kernel judges length and alignment against its limits. */
	fill_attr_out_ptr(cmd, SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &offset);
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, cmd);
	if (ret)
		goto err_free;

	dm->length = attr->length;
	dm->map_len = (attr->length + page - 1) / page * page;
	dm->addr = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			ibctx->cmd_fd, (off_t)offset);
	if (dm->addr == MAP_FAILED) {
		ret = errno;
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	dm->vdm.dm.memcpy_to_dm = scire_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = scire_memcpy_from_dm;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

int scire_free_dm(struct ibv_dm *ibdm)
{
	struct scire_dm *dm = to_scire_dm(ibdm);
	int ret;

	/* EBUSY while an MR covers it: the DM, and its mapping, stay. */
	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->addr, dm->map_len);
	free(dm);
	return 0;
}

struct ibv_mr *scire_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access)
{
	struct scire_dm *dm = to_scire_dm(ibdm);
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	/* Requires IBV_ACCESS_ZERO_BASED; the kernel checks the range. */
	ret = ibv_cmd_reg_dm_mr(pd, &dm->vdm, dm_offset, length, access, vmr,
				NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}
