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

/* The CQE and ring header layouts the provider was written against. */
_Static_assert(sizeof(struct scire_cqe) == 64, "scire_cqe is 64 bytes");
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

static inline struct scire_context *to_scire_ctx(struct ibv_context *ibctx)
{
	return (struct scire_context *)((char *)ibctx -
					offsetof(struct scire_context, vctx.context));
}

static inline struct scire_cq *to_scire_cq(struct ibv_cq *ibcq)
{
	return (struct scire_cq *)((char *)ibcq - offsetof(struct scire_cq, vcq.cq));
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

#endif /* SCIRE_PROVIDER_H */
