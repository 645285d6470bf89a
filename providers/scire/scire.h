/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libscire: user-space provider for the scire software RoCEv2 device.
 * Internal objects shared by the provider's files.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_PROVIDER_H
#define SCIRE_PROVIDER_H

#include <pthread.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include <rdma-core/cmd.h>
#include <rdma-core/driver.h>
#include <rdma/scire-abi.h>

#include "scire_ring.h"
#include "scire_wqe.h"

/* The CQE and ring header layouts the provider was written against. */
_Static_assert(sizeof(struct scire_cqe) == 64, "scire_cqe is 64 bytes");
_Static_assert(offsetof(struct scire_cqe, timestamp) == 56, "scire_cqe.timestamp last");
_Static_assert(sizeof(struct scire_cq_ring) == 3 * SCIRE_RING_LINE,
	       "scire_cq_ring header is three lines");
_Static_assert(offsetof(struct scire_cq_ring, consumer) == SCIRE_RING_LINE,
	       "consumer index on its own line");
_Static_assert(offsetof(struct scire_cq_ring, arm) == 2 * SCIRE_RING_LINE,
	       "arm word on its own line");

/* Core responses followed by scire's UHW payloads. */
VERBS_DRV_RESP(scire_get_context_resp, ib_uverbs_get_context_resp,
	       scire_alloc_ucontext_resp);
VERBS_DRV_RESP(scire_create_cq_cmd_resp, ib_uverbs_create_cq_resp,
	       scire_create_cq_resp);
VERBS_DRV_RESP(scire_create_cq_ex_cmd_resp, ib_uverbs_ex_create_cq_resp,
	       scire_create_cq_resp);
VERBS_DRV_RESP(scire_resize_cq_cmd_resp, ib_uverbs_resize_cq_resp,
	       scire_create_cq_resp);
VERBS_DRV_RESP(scire_create_qp_cmd_resp, ib_uverbs_create_qp_resp,
	       scire_create_qp_resp);
VERBS_DRV_RESP(scire_create_qp_ex_cmd_resp, ib_uverbs_ex_create_qp_resp,
	       scire_create_qp_resp);
VERBS_DRV_RESP(scire_create_srq_cmd_resp, ib_uverbs_create_srq_resp,
	       scire_create_srq_resp);
VERBS_DRV_RESP(scire_create_ah_cmd_resp, ib_uverbs_create_ah_resp,
	       scire_create_ah_resp);
VERBS_DRV_RESP(scire_create_wq_cmd_resp, ib_uverbs_ex_create_wq_resp,
	       scire_create_wq_resp);

struct scire_device {
	struct verbs_device vdev;
};

/*
 * scire is out of tree, so its kernel driver has no rdma_driver_id of its
 * own and reports RDMA_DRIVER_UNKNOWN (0).
 */
enum { SCIRE_DRIVER_ID = 0 };

/*
 * A thread domain (ibv_alloc_td(3)). No kernel object: it is the
 * application's promise that one thread at a time uses the QPs and CQs
 * created with a parent domain that carries it, so those skip their locks.
 * @users: parent domains that carry it (atomic); ibv_dealloc_td() refuses
 *	   with EBUSY while any does.
 */
struct scire_td {
	struct ibv_td ibtd;
	unsigned int users;
};

/* The parent domain allocator of ibv_alloc_parent_domain(3). */
typedef void *(*scire_alloc_fn)(struct ibv_pd *pd, void *pd_context,
				size_t size, size_t alignment,
				uint64_t resource_type);
typedef void (*scire_free_fn)(struct ibv_pd *pd, void *pd_context, void *ptr,
			      uint64_t resource_type);

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain(3))
 * wrapping one. A parent domain has no kernel object: its ibpd.handle is
 * the wrapped PD's, so every command naming it reaches the kernel's PD.
 * @real:	the wrapped PD; NULL for a PD of the kernel.
 * @td:		the parent domain's thread domain, or NULL.
 * @alloc, @free, @pd_context: its allocators, or NULL.
 * @users:	atomic. A PD: parent domains wrapping it. A parent domain: QPs
 *		and CQs created with it (they keep its TD and allocators).
 *		ibv_dealloc_pd() refuses with EBUSY while it is not 0.
 */
struct scire_pd {
	struct ibv_pd ibpd;
	struct scire_pd *real;
	struct scire_td *td;
	scire_alloc_fn alloc;
	scire_free_fn free;
	void *pd_context;
	unsigned int users;
};

/*
 * The resource_type the parent domain allocators are called with: the
 * driver id in the upper 32 bits (0 for scire), and which provider object
 * the memory is for in the lower ones. Only heap memory of the provider
 * goes through them; the rings are the kernel's, mapped from the uverbs fd.
 */
enum scire_res_type {
	SCIRE_RES_QP = 1,	/* struct scire_qp */
	SCIRE_RES_QP_BINDS = 2,	/* the ibv_wr_bind_mw() undo array of a QP */
	SCIRE_RES_CQ = 3,	/* the CQ (struct scire_cq_ex) */
};

/* Alignment asked of the parent domain allocators: a cache line. */
#define SCIRE_OBJ_ALIGN 64

/*
 * Where the heap memory of one QP or CQ came from, for scire_obj_free():
 * @pd:		the parent domain whose allocator gave it, or NULL (calloc).
 */
struct scire_obj_mem {
	struct scire_pd *pd;
};

struct scire_context {
	struct verbs_context vctx;
	uint32_t cq_ring_hdr_size;	/* bytes from a CQ mapping to CQE 0 */
	uint32_t max_cqe;
};

/*
 * One mapping of a CQ ring. Everything here is what the kernel told us at
 * create or resize time; nothing is re-read from shared memory.
 */
struct scire_cq_map {
	struct scire_cq_ring *ring;
	size_t size;			/* mmap length */
	uint32_t num_entries;		/* power of two */
};

struct scire_cq {
	struct verbs_cq vcq;
	/* Serialises pollers, and pollers against resize. */
	pthread_spinlock_t lock;
	bool single_thread;		/* a TD: lock is not taken */
	struct scire_cq_map map;
	/* Created with a parent domain (or NULL); its TD means no locking. */
	struct scire_pd *pdom;
	struct scire_obj_mem mem;
	uint32_t cons;			/* our consumer index (the ring's copy is for the kernel) */
	uint32_t cqn;
};

/* A window's rkey before an ibv_wr_bind_mw() of this session changed it. */
struct scire_mw_undo {
	struct ibv_mw *mw;
	uint32_t rkey;
};

/*
 * The ibv_wr_* session of a QP (ibv_wr_start() to ibv_wr_complete() or
 * ibv_wr_abort()), under sq.lock throughout. WQEs are built straight into
 * the slots from start on; sq.prod runs ahead of the published producer
 * and falls back to start if the session is discarded.
 * @start:	sq.prod at ibv_wr_start().
 * @room:	free slots known from the last consumer load.
 * @cur:	the WQE the data setters apply to, or NULL.
 * @cur_addressed: UD: ibv_wr_set_ud_addr() has addressed cur.
 * @err:	first error of the session; ibv_wr_complete() returns it.
 * @nbinds, @binds: windows whose rkey this session changed, to restore on
 *		discard (capacity sq.num_entries; NULL without BIND_MW).
 */
struct scire_wr_session {
	uint32_t start;
	uint32_t room;
	struct scire_send_wqe *cur;
	bool cur_addressed;
	int err;
	uint32_t nbinds;
	struct scire_mw_undo *binds;
};

struct scire_qp {
	struct verbs_qp vqp;		/* must be first: libibverbs casts */
	struct scire_wq sq;
	struct scire_wq rq;		/* no slots when the QP uses an SRQ */
	struct scire_sq_caps sq_caps;
	struct scire_wr_session ex;
	/* Created with a parent domain (or NULL); its TD means no locking. */
	struct scire_pd *pdom;
	struct scire_obj_mem mem;
	struct scire_obj_mem binds_mem;
};

struct scire_srq {
	struct verbs_srq vsrq;		/* must be first: srq is what we hand out */
	struct scire_wq rq;
	uint32_t srqn;
};

/* A receive work queue (ibv_create_wq()): a receive ring of its own. */
struct scire_rwq {
	struct ibv_wq ibwq;		/* must be first: wq is what we hand out */
	struct scire_wq rq;
};

static inline struct scire_context *to_scire_ctx(struct ibv_context *ibctx)
{
	return (struct scire_context *)((char *)ibctx -
					offsetof(struct scire_context, vctx.context));
}

static inline struct scire_pd *to_scire_pd(struct ibv_pd *ibpd)
{
	return (struct scire_pd *)((char *)ibpd - offsetof(struct scire_pd, ibpd));
}

static inline struct scire_td *to_scire_td(struct ibv_td *ibtd)
{
	return (struct scire_td *)((char *)ibtd - offsetof(struct scire_td, ibtd));
}

/* The parent domain behind ibpd, or NULL for a PD of the kernel. */
static inline struct scire_pd *scire_parent_domain(struct ibv_pd *ibpd)
{
	struct scire_pd *pd = to_scire_pd(ibpd);

	return pd->real ? pd : NULL;
}

/*
 * size zeroed bytes for a provider object of type type (enum
 * scire_res_type), aligned to align (a power of two, at least
 * sizeof(void *)): from pdom's allocator if it has one that does not answer
 * IBV_ALLOCATOR_USE_DEFAULT, else from calloc(). mem records which, for
 * scire_obj_free(). NULL with errno ENOMEM if the allocation failed.
 */
static inline void *scire_obj_alloc(struct scire_pd *pdom, size_t size,
				    size_t align, enum scire_res_type type,
				    struct scire_obj_mem *mem)
{
	uint64_t rt = (uint64_t)SCIRE_DRIVER_ID << 32 | type;
	void *p;

	mem->pd = NULL;
	if (pdom && pdom->alloc) {
		p = pdom->alloc(&pdom->ibpd, pdom->pd_context, size, align, rt);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!p) {
				errno = ENOMEM;
				return NULL;
			}
			/* The callback should have zeroed it; be sure. */
			memset(p, 0, size);
			mem->pd = pdom;
			return p;
		}
	}
	p = calloc(1, size);
	if (!p)
		errno = ENOMEM;
	return p;
}

/* Give back what scire_obj_alloc() returned (p may be NULL). */
static inline void scire_obj_free(void *p, enum scire_res_type type,
				  const struct scire_obj_mem *mem)
{
	struct scire_pd *pdom = mem->pd;

	if (!p)
		return;
	if (pdom)
		pdom->free(&pdom->ibpd, pdom->pd_context, p,
			   (uint64_t)SCIRE_DRIVER_ID << 32 | type);
	else
		free(p);
}

static inline void scire_pd_get(struct scire_pd *pdom)
{
	if (pdom)
		__atomic_add_fetch(&pdom->users, 1, __ATOMIC_RELAXED);
}

static inline void scire_pd_put(struct scire_pd *pdom)
{
	if (pdom)
		__atomic_sub_fetch(&pdom->users, 1, __ATOMIC_RELAXED);
}

/* The lock of a CQ, unless its parent domain's TD says one thread uses it. */
static inline void scire_cq_lock(struct scire_cq *cq)
{
	if (!cq->single_thread)
		pthread_spin_lock(&cq->lock);
}

static inline void scire_cq_unlock(struct scire_cq *cq)
{
	if (!cq->single_thread)
		pthread_spin_unlock(&cq->lock);
}

static inline struct scire_cq *to_scire_cq(struct ibv_cq *ibcq)
{
	return (struct scire_cq *)((char *)ibcq - offsetof(struct scire_cq, vcq.cq));
}

static inline struct scire_qp *to_scire_qp(struct ibv_qp *ibqp)
{
	return (struct scire_qp *)((char *)ibqp - offsetof(struct scire_qp, vqp.qp));
}

static inline struct scire_qp *to_scire_qp_ex(struct ibv_qp_ex *ibqpx)
{
	return (struct scire_qp *)((char *)ibqpx -
				   offsetof(struct scire_qp, vqp.qp_ex));
}

static inline struct scire_srq *to_scire_srq(struct ibv_srq *ibsrq)
{
	return (struct scire_srq *)((char *)ibsrq -
				    offsetof(struct scire_srq, vsrq.srq));
}

/* scire_pd.c */
struct ibv_pd *scire_alloc_pd(struct ibv_context *ibctx);
int scire_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_pd *scire_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr);
struct ibv_td *scire_alloc_td(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr);
int scire_dealloc_td(struct ibv_td *ibtd);

/* scire_cq.c */
struct ibv_cq *scire_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *scire_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int scire_destroy_cq(struct ibv_cq *ibcq);
int scire_resize_cq(struct ibv_cq *ibcq, int cqe);
int scire_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int scire_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
uint32_t scire_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

/* scire_qp.c */
int scire_wq_setup(struct scire_context *ctx, struct scire_wq *wq,
		   const char *what, uint64_t mmap_offset, uint64_t mmap_size,
		   uint32_t num_entries, uint32_t wqe_size, uint64_t min_wqe_size);
void scire_wq_teardown(struct scire_wq *wq);
int scire_wq_post_recv(struct scire_wq *rq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, uint32_t *posted);
struct ibv_qp *scire_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *scire_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
int scire_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask);
int scire_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int scire_destroy_qp(struct ibv_qp *ibqp);
int scire_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int scire_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
struct ibv_flow *scire_create_flow(struct ibv_qp *ibqp,
				   struct ibv_flow_attr *attr);
int scire_destroy_flow(struct ibv_flow *flow);

/* scire_rwq.c */
struct ibv_wq *scire_create_wq(struct ibv_context *ibctx,
			       struct ibv_wq_init_attr *attr);
int scire_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr);
int scire_destroy_wq(struct ibv_wq *ibwq);
struct ibv_rwq_ind_table *
scire_create_rwq_ind_table(struct ibv_context *ibctx,
			   struct ibv_rwq_ind_table_init_attr *attr);
int scire_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);

/* scire_srq.c */
struct ibv_srq *scire_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int scire_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int scire_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int scire_destroy_srq(struct ibv_srq *ibsrq);
struct ibv_srq *scire_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int scire_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_xrcd *scire_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr);
int scire_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_qp *scire_open_qp(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr);
int scire_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* scire_ah.c */
struct ibv_ah *scire_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int scire_destroy_ah(struct ibv_ah *ibah);
int scire_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		       uint16_t lid);
int scire_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		       uint16_t lid);

/* scire_dm.c */
struct ibv_dm *scire_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr);
int scire_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *scire_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access);

/* scire_mw.c */
struct ibv_mw *scire_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int scire_dealloc_mw(struct ibv_mw *mw);
int scire_post_bind_mw1(struct ibv_qp *ibqp, struct ibv_mw *mw,
			const struct ibv_mw_bind *bind);
int scire_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);

#endif /* SCIRE_PROVIDER_H */
