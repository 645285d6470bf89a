/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: the legacy command structs that rdma-core's ibv_cmd_* helpers take,
 * and the prototypes of the IBVERBS_PRIVATE_<pabi> helpers libscire calls
 * whose arguments are the same in rdma-core 44, 56 and 65 (the others,
 * get_context, create_cq_ex and create_qp_ex2, are in release-<rdma-core>.h
 * behind the scire_cmd_* shims).
 *
 * Each ibv_cmd_X(..., cmd, cmd_size, resp, resp_size) helper treats
 *   cmd  bytes [sizeof(*cmd), cmd_size)   as the driver's UHW input and
 *   resp bytes [sizeof(*resp), resp_size) as the driver's UHW output.
 * The command struct is an 8-byte write() header followed by the kernel's
 * request struct (rdma-core kern-abi.h DECLARE_CMD); libibverbs fills its
 * core fields itself. Driver responses follow the kernel's core response
 * with no padding in between; VERBS_DRV_RESP() declares and checks that.
 *
 * The core layouts come from the kernel uAPI (<rdma/ib_user_verbs.h>);
 * only the wrapping is ours. As in rdma-core, a kernel struct ending in a
 * flexible driver_data[] array is embedded (a GNU C extension): that array
 * is where the driver payload goes.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_CMD_H
#define SCIRE_RDMA_CORE_CMD_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "driver.h"

/* Header of the extended write() commands (rdma-core kern-abi.h). */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

/*
 * Nesting a struct that ends in a flexible array is the GNU extension noted
 * above; rdma-core relies on it too. Keep clang's default warnings and
 * -Wpedantic quiet about it, here only.
 */
#if defined(__clang__)
#define VERBS_FAM_NESTED_BEGIN						\
	_Pragma("clang diagnostic push")				\
	_Pragma("clang diagnostic ignored \"-Wpedantic\"")		\
	_Pragma("clang diagnostic ignored \"-Wgnu-variable-sized-type-not-at-end\"") \
	_Pragma("clang diagnostic ignored \"-Wflexible-array-extensions\"")
#define VERBS_FAM_NESTED_END _Pragma("clang diagnostic pop")
#else
#define VERBS_FAM_NESTED_BEGIN						\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wpedantic\"")
#define VERBS_FAM_NESTED_END _Pragma("GCC diagnostic pop")
#endif

#define VERBS_LEGACY_CMD(name, kabi)					\
	VERBS_FAM_NESTED_BEGIN						\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct kabi core_payload;				\
	};								\
	VERBS_FAM_NESTED_END						\
	_Static_assert(sizeof(struct name) ==				\
		       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct kabi), \
		       #name " must be header + " #kabi)

#define VERBS_EX_CMD(name, kabi)					\
	VERBS_FAM_NESTED_BEGIN						\
	struct name {							\
		struct ex_hdr hdr;					\
		struct kabi core_payload;				\
	};								\
	VERBS_FAM_NESTED_END						\
	_Static_assert(sizeof(struct name) ==				\
		       sizeof(struct ex_hdr) + sizeof(struct kabi),	\
		       #name " must be ex header + " #kabi)

VERBS_LEGACY_CMD(ibv_get_context, ib_uverbs_get_context);
VERBS_LEGACY_CMD(ibv_query_port, ib_uverbs_query_port);
VERBS_LEGACY_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
VERBS_LEGACY_CMD(ibv_create_cq, ib_uverbs_create_cq);
VERBS_LEGACY_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
VERBS_LEGACY_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
VERBS_LEGACY_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
VERBS_EX_CMD(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
VERBS_LEGACY_CMD(ibv_create_qp, ib_uverbs_create_qp);
VERBS_EX_CMD(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
VERBS_LEGACY_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
VERBS_LEGACY_CMD(ibv_query_qp, ib_uverbs_query_qp);
VERBS_LEGACY_CMD(ibv_create_srq, ib_uverbs_create_srq);
VERBS_LEGACY_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
VERBS_LEGACY_CMD(ibv_query_srq, ib_uverbs_query_srq);
VERBS_LEGACY_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
VERBS_LEGACY_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
VERBS_LEGACY_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
VERBS_LEGACY_CMD(ibv_open_qp, ib_uverbs_open_qp);
VERBS_EX_CMD(ibv_create_wq, ib_uverbs_ex_create_wq);
VERBS_EX_CMD(ibv_modify_wq, ib_uverbs_ex_modify_wq);

/*
 * Sizes as measured against rdma-core v44.0 (reference table, §1.10); they
 * follow from the kernel uAPI alone, and kern-abi.h is the same in 56 and 65.
 */
_Static_assert(sizeof(struct ex_hdr) == 24, "ex_hdr size");
_Static_assert(sizeof(struct ibv_get_context) == 16, "ibv_get_context size");
_Static_assert(sizeof(struct ibv_query_port) == 24, "ibv_query_port size");
_Static_assert(sizeof(struct ibv_alloc_pd) == 16, "ibv_alloc_pd size");
_Static_assert(sizeof(struct ibv_create_cq) == 40, "ibv_create_cq size");
_Static_assert(sizeof(struct ibv_resize_cq) == 24, "ibv_resize_cq size");
_Static_assert(sizeof(struct ibv_reg_mr) == 48, "ibv_reg_mr size");
_Static_assert(sizeof(struct ibv_rereg_mr) == 56, "ibv_rereg_mr size");
_Static_assert(sizeof(struct ibv_create_cq_ex) == 56, "ibv_create_cq_ex size");
_Static_assert(sizeof(struct ibv_create_qp) == 64, "ibv_create_qp size");
_Static_assert(sizeof(struct ibv_create_qp_ex) == 88, "ibv_create_qp_ex size");
_Static_assert(sizeof(struct ibv_modify_qp) == 120, "ibv_modify_qp size");
_Static_assert(sizeof(struct ibv_query_qp) == 24, "ibv_query_qp size");
_Static_assert(sizeof(struct ibv_create_srq) == 40, "ibv_create_srq size");
_Static_assert(sizeof(struct ibv_modify_srq) == 24, "ibv_modify_srq size");
_Static_assert(sizeof(struct ibv_query_srq) == 24, "ibv_query_srq size");
_Static_assert(sizeof(struct ibv_alloc_mw) == 24, "ibv_alloc_mw size");
_Static_assert(sizeof(struct ibv_create_wq) == 64, "ibv_create_wq size");
_Static_assert(sizeof(struct ibv_modify_wq) == 48, "ibv_modify_wq size");
_Static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8, "get_context resp");
_Static_assert(sizeof(struct ib_uverbs_alloc_pd_resp) == 4, "alloc_pd resp");
_Static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8, "create_cq resp");
_Static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16, "ex create_cq resp");
_Static_assert(sizeof(struct ib_uverbs_resize_cq_resp) == 8, "resize_cq resp");
_Static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12, "reg_mr resp");
_Static_assert(sizeof(struct ib_uverbs_rereg_mr_resp) == 8, "rereg_mr resp");
_Static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32, "create_qp resp");
_Static_assert(sizeof(struct ib_uverbs_ex_create_qp_resp) == 40, "ex create_qp resp");
_Static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 16, "create_srq resp");
_Static_assert(sizeof(struct ib_uverbs_alloc_mw_resp) == 8, "alloc_mw resp");
_Static_assert(sizeof(struct ib_uverbs_create_ah_resp) == 4, "create_ah resp");

/*
 * A core response followed directly by a driver's UHW response. The kernel
 * writes the driver part at exactly sizeof(core), so padding between the two
 * would shift every driver field.
 */
#define VERBS_DRV_RESP(name, kabi_resp, drv_resp)			\
	VERBS_FAM_NESTED_BEGIN						\
	struct name {							\
		struct kabi_resp ibv_resp;				\
		struct drv_resp drv_payload;				\
	};								\
	VERBS_FAM_NESTED_END						\
	_Static_assert(offsetof(struct name, drv_payload) ==		\
		       sizeof(struct kabi_resp),			\
		       #name ": padding before the driver payload");	\
	_Static_assert(sizeof(struct name) ==				\
		       sizeof(struct kabi_resp) + sizeof(struct drv_resp), \
		       #name ": padding after the driver payload")

/* ---- IBVERBS_PRIVATE_<pabi> command helpers -------------------------------
 * Each returns 0 or a positive errno value (and, mostly, also sets errno).
 */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
struct ibv_command_buffer;
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/*
 * QPs. create_qp and create_qp_ex2 (scire_cmd_create_qp_ex2) go through
 * the ioctl method when the kernel has it (then only the driver part of
 * resp is written: read handle and qp_num from the ibv_qp) and fill the
 * ibv_qp/verbs_qp, including state RESET and, for verbs_qp, comp_mask 0. cmd may be NULL with cmd_size 0 when
 * there is no driver input. modify_qp and query_qp write the core fields of
 * cmd, which must be at least sizeof(*cmd); neither takes IBV_QP_RATE_LIMIT
 * (EOPNOTSUPP). destroy_qp waits for the QP's reported async events.
 */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/* SRQs: as for QPs; create_srq returns the granted max_wr/max_sge in attr. */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* XRC SRQs (and basic ones): fills the verbs_srq, srq_num for XRC. */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);

/* XRC domains, shared through a file, and handles to XRC TGT QPs. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

/*
 * Receive work queues and their indirection tables (RSS). create_wq fills
 * the ibv_wq's context, handle, wq_num and the caller's attr (max_wr,
 * max_sge); the table calls fill the ibv_rwq_ind_table.
 */
int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);

/*
 * Flow steering: create_flow translates flow_attr's specs into the
 * kernel's and fills flow_id's context and handle; no driver data here.
 */
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd,
			size_t ucmd_size);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);

/*
 * Memory windows: alloc_mw writes cmd's core fields (cmd must not be NULL)
 * and fills context, pd, rkey, handle and type of mw.
 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/*
 * Address handles. create_ah sends attr as the core's CREATE_AH request
 * (no driver input: the kernel judges every field), and fills handle and
 * context of ah; libibverbs' ibv_create_ah() sets ah->pd afterwards.
 * resp bytes past sizeof(struct ib_uverbs_create_ah_resp) take the
 * driver's UHW output.
 */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* Multicast group membership of a UD QP; no driver payload either way. */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

#endif /* SCIRE_RDMA_CORE_CMD_H */
