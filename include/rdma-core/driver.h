/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: the part of rdma-core's private provider ABI that libscire uses.
 *
 * libibverbs 44 (Debian bookworm) loads providers built for private ABI 34
 * but does not install the headers that describe it (driver.h, kern-abi.h,
 * cmd_ioctl.h). This file declares, in our own words, the structures that
 * cross between libibverbs and a provider, laid out field for field as in
 * rdma-core v44.0 libibverbs/driver.h. libibverbs reads and writes these
 * structs directly, so a wrong size or offset corrupts memory silently:
 * every size and offset we rely on is pinned by a static assertion whose
 * figure was measured against the v44.0 headers (x86_64, LP64).
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

/* The private ABI these declarations describe (IBVERBS_PRIVATE_34). */
#define RDMA_CORE_PABI_VERSION	34

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

/* Only pointed to from verbs_qp; libscire creates no XRC domains. */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

_Static_assert(sizeof(struct verbs_xrcd) == 16, "verbs_xrcd size");

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

_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex.qp_base");
_Static_assert(sizeof(struct ibv_qp) == 160, "ibv_qp size");
_Static_assert(offsetof(struct ibv_qp_ex, wr_id) == 168, "ibv_qp_ex.wr_id");
_Static_assert(offsetof(struct ibv_qp_ex, wr_start) == 320, "ibv_qp_ex.wr_start");
_Static_assert(sizeof(struct ibv_qp_ex) == 352, "ibv_qp_ex size");
_Static_assert(offsetof(struct verbs_qp, qp) == 0, "verbs_qp.qp");
_Static_assert(offsetof(struct verbs_qp, qp_ex) == 0, "verbs_qp.qp_ex");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 352, "verbs_qp.comp_mask");
_Static_assert(offsetof(struct verbs_qp, xrcd) == 360, "verbs_qp.xrcd");
_Static_assert(sizeof(struct verbs_qp) == 368, "verbs_qp size");

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

/* verbs_context is public (verbs.h); pin what we assume of it anyway. */
_Static_assert(offsetof(struct verbs_context, context) == 320, "verbs_context.context");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context size");

/* ---- the context ops table ---------------------------------------------- */

/*
 * Every op a provider may implement, in v44.0's (alphabetical) order:
 * 76 pointers. verbs_set_ops() copies the non-NULL ones; a missing or
 * misplaced entry makes libibverbs call the wrong function. The offset
 * assertions below pin the index of every op libscire sets and a few
 * landmarks in between.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define VERBS_OPS_SLOT(field, index)					\
	_Static_assert(offsetof(struct verbs_context_ops, field) ==	\
		       (index) * sizeof(void (*)(void)),			\
		       "verbs_context_ops." #field " is not op " #index)
VERBS_OPS_SLOT(advise_mr, 0);
VERBS_OPS_SLOT(alloc_mw, 2);
VERBS_OPS_SLOT(alloc_pd, 5);
VERBS_OPS_SLOT(async_event, 7);
VERBS_OPS_SLOT(attach_mcast, 9);
VERBS_OPS_SLOT(bind_mw, 10);
VERBS_OPS_SLOT(cq_event, 12);
VERBS_OPS_SLOT(create_ah, 13);
VERBS_OPS_SLOT(create_cq, 15);
VERBS_OPS_SLOT(create_cq_ex, 16);
VERBS_OPS_SLOT(create_qp, 19);
VERBS_OPS_SLOT(create_qp_ex, 20);
VERBS_OPS_SLOT(create_srq, 22);
VERBS_OPS_SLOT(dealloc_mw, 25);
VERBS_OPS_SLOT(dealloc_pd, 26);
VERBS_OPS_SLOT(dereg_mr, 28);
VERBS_OPS_SLOT(destroy_ah, 29);
VERBS_OPS_SLOT(destroy_cq, 31);
VERBS_OPS_SLOT(destroy_qp, 34);
VERBS_OPS_SLOT(destroy_srq, 36);
VERBS_OPS_SLOT(detach_mcast, 38);
VERBS_OPS_SLOT(free_context, 39);
VERBS_OPS_SLOT(import_mr, 43);
VERBS_OPS_SLOT(modify_cq, 45);
VERBS_OPS_SLOT(modify_qp, 47);
VERBS_OPS_SLOT(modify_srq, 49);
VERBS_OPS_SLOT(open_xrcd, 52);
VERBS_OPS_SLOT(poll_cq, 53);
VERBS_OPS_SLOT(post_recv, 54);
VERBS_OPS_SLOT(post_send, 55);
VERBS_OPS_SLOT(post_srq_recv, 57);
VERBS_OPS_SLOT(query_device_ex, 58);
VERBS_OPS_SLOT(query_port, 60);
VERBS_OPS_SLOT(query_qp, 61);
VERBS_OPS_SLOT(query_srq, 64);
VERBS_OPS_SLOT(reg_dmabuf_mr, 67);
VERBS_OPS_SLOT(reg_mr, 68);
VERBS_OPS_SLOT(req_notify_cq, 69);
VERBS_OPS_SLOT(rereg_mr, 70);
VERBS_OPS_SLOT(resize_cq, 71);
VERBS_OPS_SLOT(unimport_pd, 75);
#undef VERBS_OPS_SLOT
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void (*)(void)),
	       "verbs_context_ops must hold exactly 76 ops");
_Static_assert(sizeof(struct verbs_context_ops) == 608, "verbs_context_ops size");

/* ---- exported IBVERBS_PRIVATE_34 functions --------------------------------- */

/* The symbol name carries the private ABI number (34). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

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
