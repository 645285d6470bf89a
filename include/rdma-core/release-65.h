/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: what rdma-core 65 (private ABI 65) lays out differently from the
 * other releases in include/rdma-core/releases, in our own words: the
 * figures of struct verbs_qp (which embeds the public ibv_qp_ex), the
 * context ops table, the name of the registration symbol and the command
 * helpers whose arguments changed. Included by driver.h only, when Meson
 * found libibverbs-dev of rdma-core 65.x. Figures measured against Debian
 * sid's rdma-core 65.0-1.1 source (libibverbs/driver.h) and pinned against
 * the release's public verbs.h by the static assertions below (x86_64,
 * LP64).
 *
 * From rdma-core 57 on the private ABI number follows each break of it
 * (57, 59, 64, 65): libibverbs 65 loads only lib<name>-rdmav65.so and
 * exports verbs_register_driver_65 in IBVERBS_PRIVATE_65.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_RELEASE_H
#define SCIRE_RDMA_CORE_RELEASE_H

/* IBVERBS_PABI_VERSION of rdma-core 65's CMakeLists.txt. */
#define RDMA_CORE_PABI_VERSION	65

/* ---- struct verbs_qp: the embedded public ibv_qp_ex sets the offsets ---- */

/* ibv_qp_ex is still 56's: wr_flush (added in 45) is its last op. */
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex.qp_base");
_Static_assert(sizeof(struct ibv_qp) == 160, "ibv_qp size");
_Static_assert(offsetof(struct ibv_qp_ex, wr_id) == 168, "ibv_qp_ex.wr_id");
_Static_assert(offsetof(struct ibv_qp_ex, wr_start) == 320, "ibv_qp_ex.wr_start");
_Static_assert(offsetof(struct ibv_qp_ex, wr_atomic_write) == 344,
	       "ibv_qp_ex.wr_atomic_write");
_Static_assert(offsetof(struct ibv_qp_ex, wr_flush) == 352, "ibv_qp_ex.wr_flush");
_Static_assert(sizeof(struct ibv_qp_ex) == 360, "ibv_qp_ex size");
_Static_assert(offsetof(struct verbs_qp, qp) == 0, "verbs_qp.qp");
_Static_assert(offsetof(struct verbs_qp, qp_ex) == 0, "verbs_qp.qp_ex");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 360, "verbs_qp.comp_mask");
_Static_assert(offsetof(struct verbs_qp, xrcd) == 368, "verbs_qp.xrcd");
_Static_assert(sizeof(struct verbs_qp) == 376, "verbs_qp size");

/*
 * verbs_context is public (verbs.h); pin what we assume of it anyway. It
 * grows at its front: six more ops (free_buf .. alloc_dmah) than 56 put
 * the ibv_context 48 bytes further in.
 */
_Static_assert(offsetof(struct verbs_context, context) == 368, "verbs_context.context");
_Static_assert(sizeof(struct verbs_context) == 696, "verbs_context size");

/* ---- the context ops table ---------------------------------------------- */

/*
 * Every op a provider may implement, in 65's (alphabetical) order: 93
 * pointers, 17 more than rdma-core 44..56 (buffers, DMA handles,
 * completion counters, reg_mr_ex, query_port_speed ...), so most ops moved.
 * verbs_set_ops() copies the non-NULL ones; a missing or misplaced entry
 * makes libibverbs call the wrong function. The offset assertions below pin
 * the index of every op libscire sets and a few landmarks in between.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
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
	struct ibv_comp_cntr *(*create_comp_cntr)(struct ibv_context *context,
						  struct ibv_comp_cntr_init_attr *attr);
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
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
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
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
	void (*free_buf)(struct ibv_buf *buf);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t amount);
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
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				  uint64_t *value);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t value);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define SCIRE_OPS_SLOT(field, index)					\
	_Static_assert(offsetof(struct verbs_context_ops, field) ==	\
		       (index) * sizeof(void (*)(void)),			\
		       "verbs_context_ops." #field " is not op " #index)
SCIRE_OPS_SLOT(advise_mr, 0);
SCIRE_OPS_SLOT(alloc_buf, 1);
SCIRE_OPS_SLOT(alloc_mw, 4);
SCIRE_OPS_SLOT(alloc_pd, 7);
SCIRE_OPS_SLOT(async_event, 9);
SCIRE_OPS_SLOT(attach_mcast, 11);
SCIRE_OPS_SLOT(bind_mw, 12);
SCIRE_OPS_SLOT(cq_event, 14);
SCIRE_OPS_SLOT(create_ah, 15);
SCIRE_OPS_SLOT(create_cq, 18);
SCIRE_OPS_SLOT(create_cq_ex, 19);
SCIRE_OPS_SLOT(create_qp, 22);
SCIRE_OPS_SLOT(create_qp_ex, 23);
SCIRE_OPS_SLOT(create_srq, 25);
SCIRE_OPS_SLOT(dealloc_mw, 29);
SCIRE_OPS_SLOT(dealloc_pd, 30);
SCIRE_OPS_SLOT(dereg_mr, 32);
SCIRE_OPS_SLOT(destroy_ah, 33);
SCIRE_OPS_SLOT(destroy_cq, 36);
SCIRE_OPS_SLOT(destroy_qp, 39);
SCIRE_OPS_SLOT(destroy_srq, 41);
SCIRE_OPS_SLOT(detach_mcast, 43);
SCIRE_OPS_SLOT(free_context, 46);
SCIRE_OPS_SLOT(import_mr, 50);
SCIRE_OPS_SLOT(modify_cq, 54);
SCIRE_OPS_SLOT(modify_qp, 56);
SCIRE_OPS_SLOT(modify_srq, 58);
SCIRE_OPS_SLOT(open_xrcd, 61);
SCIRE_OPS_SLOT(poll_cq, 62);
SCIRE_OPS_SLOT(post_recv, 63);
SCIRE_OPS_SLOT(post_send, 64);
SCIRE_OPS_SLOT(post_srq_recv, 66);
SCIRE_OPS_SLOT(query_device_ex, 69);
SCIRE_OPS_SLOT(query_port, 71);
SCIRE_OPS_SLOT(query_port_speed, 72);
SCIRE_OPS_SLOT(query_qp, 73);
SCIRE_OPS_SLOT(query_rt_values, 75);
SCIRE_OPS_SLOT(query_srq, 76);
SCIRE_OPS_SLOT(reg_dmabuf_mr, 81);
SCIRE_OPS_SLOT(reg_mr, 82);
SCIRE_OPS_SLOT(reg_mr_ex, 83);
SCIRE_OPS_SLOT(req_notify_cq, 84);
SCIRE_OPS_SLOT(rereg_mr, 85);
SCIRE_OPS_SLOT(resize_cq, 86);
SCIRE_OPS_SLOT(set_err_comp_cntr, 89);
SCIRE_OPS_SLOT(unimport_pd, 92);
#undef SCIRE_OPS_SLOT
_Static_assert(sizeof(struct verbs_context_ops) == 93 * sizeof(void (*)(void)),
	       "verbs_context_ops must hold exactly 93 ops");
_Static_assert(sizeof(struct verbs_context_ops) == 744, "verbs_context_ops size");

/* ---- IBVERBS_PRIVATE_65 functions whose name or arguments differ ------- */

/* The symbol name carries the private ABI number. */
void verbs_register_driver_65(const struct verbs_device_ops *ops);

static inline void scire_verbs_register_driver(const struct verbs_device_ops *ops)
{
	verbs_register_driver_65(ops);
}

struct ibv_get_context;
struct ibv_create_cq_ex;
struct ibv_create_qp_ex;
struct ibv_command_buffer;
/*
 * Where a provider hands create_cq_ex a CQ buffer of its own (with
 * CREATE_CQ_CMD_FLAGS_WITH_MEM_VA/DMABUF); libscire passes NULL and no such
 * flag, so the layout is not needed here.
 */
struct verbs_create_cq_prov_attr;

/*
 * Since rdma-core 57: get_context takes an array of fds for the kernel
 * (fd_arr, may be NULL), create_cq_ex a provider CQ buffer (prov_attr,
 * NULL unless a flag asks for it) and create_qp_ex2 a driver ioctl
 * attribute chain (driver, may be NULL). libscire passes NULL to each
 * through the scire_cmd_* shims, whose arguments are the same in every
 * release header.
 */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size, struct ibv_command_buffer *driver);

static inline int
scire_cmd_get_context(struct verbs_context *context,
		      struct ibv_get_context *cmd, size_t cmd_size,
		      struct ib_uverbs_get_context_resp *resp, size_t resp_size)
{
	return ibv_cmd_get_context(context, cmd, cmd_size, NULL, resp,
				   resp_size);
}

static inline int
scire_cmd_create_cq_ex(struct ibv_context *context,
		       const struct ibv_cq_init_attr_ex *cq_attr,
		       struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
		       size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
		       size_t resp_size, uint32_t cmd_flags)
{
	return ibv_cmd_create_cq_ex(context, cq_attr, NULL, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
}

static inline int
scire_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			struct ibv_qp_init_attr_ex *qp_attr,
			struct ibv_create_qp_ex *cmd, size_t cmd_size,
			struct ib_uverbs_ex_create_qp_resp *resp,
			size_t resp_size)
{
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size, NULL);
}

#include "dmabuf-54.h"

#endif /* SCIRE_RDMA_CORE_RELEASE_H */
