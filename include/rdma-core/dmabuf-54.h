/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: ibv_cmd_reg_dmabuf_mr() as rdma-core 54 and later declare it.
 * Since 54 it takes a driver ioctl attribute chain (driver, may be
 * NULL); libscire passes NULL through scire_cmd_reg_dmabuf_mr(), whose
 * arguments are the same in every release header (release-44.h has the
 * older seven-argument form). Included by the release headers of
 * rdma-core 54 and later only.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_DMABUF_54_H
#define SCIRE_RDMA_CORE_DMABUF_54_H

struct verbs_mr;
struct ibv_command_buffer;
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver);

static inline int scire_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					  size_t length, uint64_t iova, int fd,
					  int access, struct verbs_mr *vmr)
{
	return ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				     NULL);
}

#endif /* SCIRE_RDMA_CORE_DMABUF_54_H */
