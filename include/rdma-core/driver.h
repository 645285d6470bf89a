/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: the part of rdma-core's private provider ABI that libscire uses.
 *
 * libibverbs loads providers built for its private ABI (IBVERBS_PRIVATE_34
 * for rdma-core 34..56, then a number per break: 57, 59, 64, 65) but does
 * not install the headers that describe it (driver.h, kern-abi.h,
 * cmd_ioctl.h). This file declares, in our own words, the structures that
 * cross between libibverbs and a provider, laid out field for field as in
 * rdma-core's libibverbs/driver.h; what differs between the releases in
 * include/rdma-core/releases (44, 56, 65) is in release-<rdma-core>.h, one
 * declaration per release, picked by Meson (docs/provider-abi.md).
 * Everything in this file has the same layout in all of them (compared in
 * their sources). libibverbs reads and writes these structs directly, so a
 * wrong size or offset corrupts memory silently: every size and offset we
 * rely on is pinned by a static assertion whose figure was measured against
 * each release's headers (x86_64, LP64).
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_DRIVER_H
#define SCIRE_RDMA_CORE_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* SCIRE_RDMA_CORE_RELEASE and SCIRE_RDMA_CORE_PABI, written by Meson. */
#include <scire-rdma-core-release.h>

/*
 * Only LP64 layouts were measured; a 32-bit build would need its own
 * figures, so refuse it rather than guess.
 */
_Static_assert(sizeof(void *) == 8 && sizeof(long) == 8,
	       "rdma-core ABI figures below are for LP64 only");

/* ccan/list.h struct list_node: two pointers, next then prev. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* ---- logging (libibverbs init.c) ---------------------------------------- */

enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

/* Prints only when VERBS_LOG_LEVEL (and VERBS_LOG_FILE) select it. */
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* errno is kept: callers log and then return the errno they set. */
#define verbs_log(ctx, level, fmt, ...)					\
	do {								\
		int verbs_log_errno_ = errno;				\
		__verbs_log(ctx, level, "%s: %s:%d: " fmt,		\
			    (ctx)->context.device->name, __func__,	\
			    __LINE__, ##__VA_ARGS__);			\
		errno = verbs_log_errno_;				\
	} while (0)
#define verbs_err(ctx, fmt, ...)  verbs_log(ctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define verbs_warn(ctx, fmt, ...) verbs_log(ctx, VERBS_LOG_WARN, fmt, ##__VA_ARGS__)
#define verbs_dbg(ctx, fmt, ...)  verbs_log(ctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* ---- object wrappers that ibv_cmd_* fill in ------------------------------ */

/* Written by ibv_cmd_reg_mr into verbs_mr.mr_type. */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

_Static_assert(offsetof(struct verbs_mr, ibv_mr) == 0, "verbs_mr.ibv_mr");
_Static_assert(offsetof(struct verbs_mr, mr_type) == 48, "verbs_mr.mr_type");
_Static_assert(offsetof(struct verbs_mr, access) == 52, "verbs_mr.access");
_Static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr size");

/* ibv_cmd_alloc_dm fills handle, ibv_cmd_reg_dm_mr and ibv_cmd_free_dm read it. */
struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

_Static_assert(offsetof(struct verbs_dm, dm) == 0, "verbs_dm.dm");
_Static_assert(offsetof(struct verbs_dm, handle) == sizeof(struct ibv_dm),
	       "verbs_dm.handle");

/* ibv_cmd_create_cq_ex takes the union; plain CQs use .cq. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

_Static_assert(offsetof(struct verbs_cq, cq) == 0, "verbs_cq.cq");
_Static_assert(offsetof(struct verbs_cq, cq_ex) == 0, "verbs_cq.cq_ex");
_Static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq size");

/* ibv_cmd_create_cq_ex cmd_flags. */
enum create_cq_cmd_flags {
	CREATE_CQ_CMD_FLAGS_TS_IGNORED_EX = 1 << 0,
};

/* An XRC domain (ibv_open_xrcd()); handle is the kernel's. */
enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE = 1 << 0,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

_Static_assert(sizeof(struct verbs_xrcd) == 16, "verbs_xrcd size");

/*
 * An SRQ made by ibv_cmd_create_srq_ex(), which fills the type, domain,
 * CQ and (for XRC) the SRQ number that ibv_get_srq_num() returns.
 */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

_Static_assert(offsetof(struct verbs_srq, srq_num) ==
	       sizeof(struct ibv_srq) + 24, "verbs_srq.srq_num");

/* verbs_qp.comp_mask: ibv_qp_to_qp_ex() returns &qp_ex only with VERBS_QP_EX. */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/*
 * ibv_cmd_create_qp_ex{,2} fill the ibv_qp and zero comp_mask; the provider
 * sets VERBS_QP_EX afterwards when it offers the ibv_wr_* API. Every QP a
 * provider returns must be a verbs_qp, because libibverbs reads comp_mask
 * from any QP handed to ibv_qp_to_qp_ex().
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* Its figures depend on the release: see release-<rdma-core>.h. */

/* ---- device matching and the device object ------------------------------- */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/* One row of a provider's match table; a zeroed row ends the table. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

_Static_assert(offsetof(struct verbs_match_ent, u) == 8, "match_ent.u");
_Static_assert(offsetof(struct verbs_match_ent, vendor) == 16, "match_ent.vendor");
_Static_assert(offsetof(struct verbs_match_ent, device) == 18, "match_ent.device");
_Static_assert(offsetof(struct verbs_match_ent, kind) == 20, "match_ent.kind");
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent size");

/*
 * What libibverbs found out about one RDMA device (netlink or sysfs); handed
 * to match_device and alloc_device.
 */
struct verbs_sysfs_dev {
	struct verbs_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* kernel ib_device name */
	char ibdev_path[IBV_SYSFS_PATH_MAX];	/* /sys/class/infiniband/<ibdev> */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;			/* enum rdma_driver_id */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;			/* ib_device_ops.uverbs_abi_ver */
	struct timespec time_created;
};

_Static_assert(offsetof(struct verbs_sysfs_dev, match) == 24, "sysfs_dev.match");
_Static_assert(offsetof(struct verbs_sysfs_dev, flags) == 32, "sysfs_dev.flags");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36, "sysfs_dev.sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104, "sysfs_dev.sysfs_cdev");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112, "sysfs_dev.ibdev_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "sysfs_dev.ibdev_path");
_Static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432, "sysfs_dev.modalias");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944, "sysfs_dev.node_guid");
_Static_assert(offsetof(struct verbs_sysfs_dev, driver_id) == 952, "sysfs_dev.driver_id");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_type) == 956, "sysfs_dev.node_type");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "sysfs_dev.abi_ver");
_Static_assert(offsetof(struct verbs_sysfs_dev, time_created) == 976, "sysfs_dev.time_created");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev size");

/* The provider's entry points; libibverbs keeps a pointer to it for good. */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

_Static_assert(offsetof(struct verbs_device_ops, match_min_abi_version) == 8, "ops.min_abi");
_Static_assert(offsetof(struct verbs_device_ops, match_table) == 16, "ops.match_table");
_Static_assert(offsetof(struct verbs_device_ops, match_device) == 32, "ops.match_device");
_Static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40, "ops.alloc_context");
_Static_assert(offsetof(struct verbs_device_ops, import_context) == 48, "ops.import_context");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56, "ops.alloc_device");
_Static_assert(offsetof(struct verbs_device_ops, uninit_device) == 64, "ops.uninit_device");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops size");

/*
 * Allocated by the provider in alloc_device (embedded first in its own
 * device struct); libibverbs fills ops, refcount, sysfs and the ibv_device.
 */
struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;		/* IB_UVERBS_CORE_SUPPORT_* */
};

_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device size");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct verbs_device, refcount) == 672, "verbs_device.refcount");
_Static_assert(offsetof(struct verbs_device, entry) == 680, "verbs_device.entry");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device.sysfs");
_Static_assert(offsetof(struct verbs_device, core_support) == 704, "verbs_device.core_support");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device size");

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((char *)dev - offsetof(struct verbs_device, device));
}

/* ---- what differs between releases -------------------------------------- */

/*
 * Meson writes scire-rdma-core-release.h from the libibverbs-dev it found
 * (include/rdma-core/releases): SCIRE_RDMA_CORE_RELEASE, the rdma-core
 * major, and SCIRE_RDMA_CORE_PABI, its private ABI. Each release header
 * holds that release's verbs_qp figures, context ops table, registration
 * symbol and the command helpers whose arguments changed.
 */
#if SCIRE_RDMA_CORE_RELEASE == 44
#include "release-44.h"
#elif SCIRE_RDMA_CORE_RELEASE == 56
#include "release-56.h"
#elif SCIRE_RDMA_CORE_RELEASE == 65
#include "release-65.h"
#else
#error "no declaration of rdma-core's private provider ABI for this release: see include/rdma-core/releases"
#endif

_Static_assert(RDMA_CORE_PABI_VERSION == SCIRE_RDMA_CORE_PABI,
	       "include/rdma-core/releases and release-<rdma-core>.h disagree on the private ABI");

/* ---- exported IBVERBS_PRIVATE_<pabi> functions, the same in every release */

/*
 * Allocates alloc_size zeroed bytes holding a verbs_context at
 * context_offset and initialises it on cmd_fd. On failure it closes cmd_fd.
 * Undo with verbs_uninit_context() (which also closes cmd_fd) and free().
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* Reads <ibdev_path>/<fnfmt...>; returns its length (newline stripped) or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Set when RDMAV_ALLOW_DISASSOC_DESTROY is in the environment. */
extern bool verbs_allow_disassociate_destroy;

#endif /* SCIRE_RDMA_CORE_DRIVER_H */
