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
#include <stdint.h>

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

struct scire_device {
	struct verbs_device vdev;
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
	struct scire_cq_map map;
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
};

struct scire_srq {
	struct ibv_srq ibsrq;
	struct scire_wq rq;
	uint32_t srqn;
};

static inline struct scire_context *to_scire_ctx(struct ibv_context *ibctx)
{
	return (struct scire_context *)((char *)ibctx -
					offsetof(struct scire_context, vctx.context));
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
	return (struct scire_srq *)((char *)ibsrq - offsetof(struct scire_srq, ibsrq));
}

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

/* scire_srq.c */
struct ibv_srq *scire_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int scire_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int scire_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int scire_destroy_srq(struct ibv_srq *ibsrq);
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
