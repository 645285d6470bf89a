/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: rdma-core's ioctl command buffer (v44.0 libibverbs/cmd_ioctl.h
 * layout, unchanged in 56 and 65) and our own attribute packing helpers,
 * for calling scire's driver methods through the exported execute_ioctl().
 *
 * execute_ioctl() reads the whole struct ibv_command_buffer (link, attribute
 * cursors, UHW indices, the bit-field byte) before issuing RDMA_VERBS_IOCTL
 * on the embedded header, so the layout is ABI even though the helpers are
 * not. It sets hdr.length, hdr.driver_id (the context's, 0 for scire) and
 * the reserved fields, and returns 0 or a positive errno.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_CMD_IOCTL_H
#define SCIRE_RDMA_CORE_CMD_IOCTL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

struct ibv_command_buffer {
	struct ibv_command_buffer *next;	/* linked frames; NULL for us */
	struct ib_uverbs_attr *next_attr;	/* next free attribute slot */
	struct ib_uverbs_attr *last_attr;	/* end of the slots */
	uint8_t uhw_in_idx;			/* VERBS_UHW_NO_INDEX if none */
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;			/* execute_ioctl fails with EINVAL */
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;		/* attrs[] continue past the struct */
};

_Static_assert(offsetof(struct ibv_command_buffer, next_attr) == 8, "cmdb.next_attr");
_Static_assert(offsetof(struct ibv_command_buffer, last_attr) == 16, "cmdb.last_attr");
_Static_assert(offsetof(struct ibv_command_buffer, uhw_in_idx) == 24, "cmdb.uhw_in_idx");
_Static_assert(offsetof(struct ibv_command_buffer, uhw_out_headroom_dwords) == 27,
	       "cmdb.uhw_out_headroom_dwords");
_Static_assert(offsetof(struct ibv_command_buffer, hdr) == 32, "cmdb.hdr");
_Static_assert(sizeof(struct ibv_command_buffer) == 56, "ibv_command_buffer size");
_Static_assert(sizeof(struct ib_uverbs_ioctl_hdr) == 24, "ib_uverbs_ioctl_hdr size");
_Static_assert(sizeof(struct ib_uverbs_attr) == 16, "ib_uverbs_attr size");

enum { VERBS_UHW_NO_INDEX = 0xff };

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);

/* Buffers needed so that hdr.attrs[] has room for n attributes. */
#define VERBS_CMD_BUFFER_ELEMS(n)					\
	((sizeof(struct ibv_command_buffer) +				\
	  sizeof(struct ib_uverbs_attr) * (n) +				\
	  sizeof(struct ibv_command_buffer) - 1) /			\
	 sizeof(struct ibv_command_buffer))

/*
 * A command buffer on the stack for method (obj, method) with room for
 * nattrs attributes. The array only provides contiguous space: attrs[]
 * runs on from the first element's header into the following elements.
 */
#define DECLARE_VERBS_CMD(name, obj, method, nattrs)			\
	struct ibv_command_buffer name[VERBS_CMD_BUFFER_ELEMS(nattrs)] = { { \
		.next_attr = name[0].hdr.attrs,				\
		.last_attr = name[0].hdr.attrs + (nattrs),		\
		.uhw_in_idx = VERBS_UHW_NO_INDEX,			\
		.uhw_out_idx = VERBS_UHW_NO_INDEX,			\
		.hdr = { .object_id = (obj), .method_id = (method) },	\
	} }

static inline struct ib_uverbs_attr *
verbs_cmd_next_attr(struct ibv_command_buffer *cmd, uint16_t attr_id)
{
	struct ib_uverbs_attr *attr;

	/* Sizing is static at every call site: overflowing is a bug. */
	assert(cmd->next_attr < cmd->last_attr);
	attr = cmd->next_attr++;
	memset(attr, 0, sizeof(*attr));
	attr->attr_id = attr_id;
	/* The kernel rejects an unknown mandatory attribute, so default to it. */
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	return attr;
}

static inline struct ib_uverbs_attr *attr_optional(struct ib_uverbs_attr *attr)
{
	attr->flags &= ~UVERBS_ATTR_F_MANDATORY;
	return attr;
}

/* UVERBS_ATTR_TYPE_IDR input: an object handle. */
static inline struct ib_uverbs_attr *
fill_attr_in_obj(struct ibv_command_buffer *cmd, uint16_t attr_id, uint32_t handle)
{
	struct ib_uverbs_attr *attr = verbs_cmd_next_attr(cmd, attr_id);

	attr->data = handle;
	return attr;
}

/* UVERBS_ATTR_TYPE_IDR output: the kernel returns the new handle in data. */
static inline struct ib_uverbs_attr *
fill_attr_out_obj(struct ibv_command_buffer *cmd, uint16_t attr_id)
{
	return fill_attr_in_obj(cmd, attr_id, 0);
}

static inline uint32_t read_attr_obj(const struct ib_uverbs_attr *attr)
{
	return (uint32_t)attr->data;
}

/*
 * UVERBS_ATTR_TYPE_PTR_IN: up to 8 bytes travel inline in data (the kernel
 * requires it), anything larger by pointer.
 */
static inline struct ib_uverbs_attr *
fill_attr_in(struct ibv_command_buffer *cmd, uint16_t attr_id,
	     const void *data, size_t len)
{
	struct ib_uverbs_attr *attr = verbs_cmd_next_attr(cmd, attr_id);

	if (len > UINT16_MAX)
		cmd->buffer_error = 1;
	attr->len = (uint16_t)len;
	if (len <= sizeof(attr->data))
		memcpy(&attr->data, data, len);
	else
		attr->data = (uintptr_t)data;
	return attr;
}

static inline struct ib_uverbs_attr *
fill_attr_in_uint32(struct ibv_command_buffer *cmd, uint16_t attr_id, uint32_t val)
{
	return fill_attr_in(cmd, attr_id, &val, sizeof(val));
}

static inline struct ib_uverbs_attr *
fill_attr_in_uint64(struct ibv_command_buffer *cmd, uint16_t attr_id, uint64_t val)
{
	return fill_attr_in(cmd, attr_id, &val, sizeof(val));
}

/* UVERBS_ATTR_TYPE_PTR_OUT: the kernel copies up to len bytes to data. */
static inline struct ib_uverbs_attr *
fill_attr_out(struct ibv_command_buffer *cmd, uint16_t attr_id, void *data,
	      size_t len)
{
	struct ib_uverbs_attr *attr = verbs_cmd_next_attr(cmd, attr_id);

	if (len > UINT16_MAX)
		cmd->buffer_error = 1;
	attr->len = (uint16_t)len;
	attr->data = (uintptr_t)data;
	return attr;
}

#define fill_attr_in_ptr(cmd, attr_id, ptr)				\
	fill_attr_in(cmd, attr_id, ptr, sizeof(*(ptr)))
#define fill_attr_out_ptr(cmd, attr_id, ptr)				\
	fill_attr_out(cmd, attr_id, ptr, sizeof(*(ptr)))

#endif /* SCIRE_RDMA_CORE_CMD_IOCTL_H */
