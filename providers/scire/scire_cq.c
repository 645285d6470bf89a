// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: completion queues. The kernel produces CQEs into a ring mapped
 * from the uverbs fd; polling and arming are plain memory operations.
 *
 * Ring rule (scire-abi.h): the kernel writes a CQE, then store-releases the
 * producer index; we load-acquire the producer before reading CQEs and
 * store-release the consumer index once we are done with them. The ring is
 * memory another party writes, so every CQE is copied out once and every
 * value in it is range-checked before it becomes an ibv_wc.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scire.h"

/* ---- CQE translation tables --------------------------------------------- */

struct scire_wc_opcode_map {
	enum ibv_wc_opcode opcode;
	bool valid;		/* false: cannot appear on a user CQ */
};

static const struct scire_wc_opcode_map scire_wc_opcode[SCIRE_CQE_OP_MAX] = {
	[SCIRE_CQE_OP_SEND]		= { IBV_WC_SEND, true },
	[SCIRE_CQE_OP_RDMA_WRITE]	= { IBV_WC_RDMA_WRITE, true },
	[SCIRE_CQE_OP_RDMA_READ]	= { IBV_WC_RDMA_READ, true },
	[SCIRE_CQE_OP_COMP_SWAP]	= { IBV_WC_COMP_SWAP, true },
	[SCIRE_CQE_OP_FETCH_ADD]	= { IBV_WC_FETCH_ADD, true },
	[SCIRE_CQE_OP_LOCAL_INV]	= { IBV_WC_LOCAL_INV, true },
	/* Fast registration is a kernel-only work request; ibv_wc has no code for it. */
	[SCIRE_CQE_OP_REG_MR]		= { IBV_WC_SEND, false },
	[SCIRE_CQE_OP_BIND_MW]		= { IBV_WC_BIND_MW, true },
	[SCIRE_CQE_OP_RECV]		= { IBV_WC_RECV, true },
	[SCIRE_CQE_OP_RECV_RDMA_IMM]	= { IBV_WC_RECV_RDMA_WITH_IMM, true },
	[SCIRE_CQE_OP_ATOMIC_WRITE]	= { IBV_WC_ATOMIC_WRITE, true },
#ifdef SCIRE_HAVE_WR_FLUSH
	[SCIRE_CQE_OP_FLUSH]		= { IBV_WC_FLUSH, true },
#else
	/* rdma-core 44 has no ibv_wr_flush(): no FLUSH is posted through it. */
	[SCIRE_CQE_OP_FLUSH]		= { IBV_WC_SEND, false },
#endif
};

static const struct {
	uint32_t cqe_flag;
	unsigned int wc_flag;
} scire_wc_flag[] = {
	{ SCIRE_CQE_F_GRH, IBV_WC_GRH },
	{ SCIRE_CQE_F_IMM, IBV_WC_WITH_IMM },
	{ SCIRE_CQE_F_INV, IBV_WC_WITH_INV },
	/* SCIRE_CQE_F_SOLICITED drives arming only; verbs do not report it. */
};

/* scire numbers CQE status as enum ibv_wc_status does, up to GENERAL_ERR. */
_Static_assert(IBV_WC_GENERAL_ERR + 1 == SCIRE_CQE_STATUS_MAX,
	       "CQE status range differs from ibv_wc_status");

/*
 * A RoCE UD receive reports the packet's L3 header type in sl, since
 * ibv_wc has no network_hdr_type: hns numbers it so, and mlx5 in the low
 * three bits of sl (its CQE's L3 header type). UCX's UD transport (1.11
 * to 1.18; bookworm has 1.13) reads it there while
 * UCX_UD_VERBS_ETH_DGID_CHECK is on, the default: 2 means IPv4, anything
 * else IPv6, and a datagram whose destination GID it then takes from the
 * wrong GRH bytes is dropped. The GRH itself is unchanged: libibverbs'
 * ibv_init_ah_from_wc() reads the IP version from it, not from sl.
 */
enum {
	SCIRE_WC_SL_ROCE_V1	= 0,
	SCIRE_WC_SL_ROCE_V2_IPV6 = 1,
	SCIRE_WC_SL_ROCE_V2_IPV4 = 2,
};

static const struct {
	uint8_t sl;
	bool valid;
} scire_wc_sl_pktype[] = {
	[SCIRE_CQE_NET_ROCE_V1]	= { SCIRE_WC_SL_ROCE_V1, true },
	[SCIRE_CQE_NET_IPV4]	= { SCIRE_WC_SL_ROCE_V2_IPV4, true },
	[SCIRE_CQE_NET_IPV6]	= { SCIRE_WC_SL_ROCE_V2_IPV6, true },
};

struct scire_wc_fields {
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int wc_flags;
	uint8_t sl;
};

/* Turn a CQE (already copied out of the ring) into verbs terms. */
static struct scire_wc_fields scire_cqe_to_wc(const struct scire_cqe *cqe)
{
	struct scire_wc_fields f = { .status = IBV_WC_GENERAL_ERR,
				     .opcode = IBV_WC_SEND };
	size_t i;

	/* An out-of-range value reports a broken completion, never UB. */
	if (cqe->opcode >= SCIRE_CQE_OP_MAX || !scire_wc_opcode[cqe->opcode].valid)
		return f;
	f.opcode = scire_wc_opcode[cqe->opcode].opcode;
	if (cqe->status < SCIRE_CQE_STATUS_MAX)
		f.status = (enum ibv_wc_status)cqe->status;
	for (i = 0; i < sizeof(scire_wc_flag) / sizeof(scire_wc_flag[0]); i++)
		if (cqe->flags & scire_wc_flag[i].cqe_flag)
			f.wc_flags |= scire_wc_flag[i].wc_flag;
	f.sl = cqe->sl;
	if ((cqe->flags & SCIRE_CQE_F_GRH) &&
	    cqe->network_hdr_type <
	    sizeof(scire_wc_sl_pktype) / sizeof(scire_wc_sl_pktype[0]) &&
	    scire_wc_sl_pktype[cqe->network_hdr_type].valid)
		f.sl = scire_wc_sl_pktype[cqe->network_hdr_type].sl;
	return f;
}

/* ---- ring access ---------------------------------------------------------- */

static inline const struct scire_cqe *scire_cq_slot(const struct scire_cq *cq,
						    uint32_t idx)
{
	return &cq->map.ring->cqe[idx & (cq->map.num_entries - 1)];
}

/*
 * CQEs ready to consume. Load-acquire of the producer pairs with the
 * kernel's store-release after it wrote the CQEs: CQE reads that follow
 * cannot see older contents. A count above the ring size means the shared
 * page no longer holds a ring of ours (for example after the device was
 * disassociated and the mapping replaced by a zero page): report -EIO.
 */
static inline int64_t scire_cq_avail(const struct scire_cq *cq)
{
	uint32_t prod = __atomic_load_n(&cq->map.ring->producer, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - cq->cons;

	if (avail > cq->map.num_entries)
		return -EIO;
	return avail;
}

/*
 * Hand consumed slots back. Store-release pairs with the kernel's
 * load-acquire of the consumer before it reuses slots: our reads of those
 * CQEs are complete before the kernel can overwrite them.
 */
static inline void scire_cq_publish_consumer(struct scire_cq *cq)
{
	__atomic_store_n(&cq->map.ring->consumer, cq->cons, __ATOMIC_RELEASE);
}

/*
 * Check a CREATE_CQ/RESIZE_CQ response and map its ring. Returns 0 or an
 * errno; on success *map describes the new mapping.
 */
static int scire_cq_map_ring(struct scire_context *ctx,
			     const struct scire_create_cq_resp *resp,
			     struct scire_cq_map *map)
{
	uint64_t need;
	void *ring;

	/* Slot arithmetic masks indices, so the size must be a power of two. */
	if (!resp->num_entries || (resp->num_entries & (resp->num_entries - 1)) ||
	    resp->num_entries > ctx->max_cqe) {
		verbs_err(&ctx->vctx, "CQ %u: bad ring size %u\n", resp->cqn,
			  resp->num_entries);
		return EPROTO;
	}
	need = ctx->cq_ring_hdr_size +
	       (uint64_t)resp->num_entries * sizeof(struct scire_cqe);
	if (resp->mmap_size < need) {
		verbs_err(&ctx->vctx, "CQ %u: mapping of %llu bytes, ring needs %llu\n",
			  resp->cqn, (unsigned long long)resp->mmap_size,
			  (unsigned long long)need);
		return EPROTO;
	}

	ring = mmap(NULL, resp->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->vctx.context.cmd_fd, (off_t)resp->mmap_offset);
	if (ring == MAP_FAILED)
		return errno;

	map->ring = ring;
	map->size = resp->mmap_size;
	map->num_entries = resp->num_entries;
	return 0;
}

static void scire_cq_unmap_ring(struct scire_cq_map *map)
{
	if (map->ring)
		munmap(map->ring, map->size);
	map->ring = NULL;
}

/* ---- create / destroy / resize -------------------------------------------- */

/* Common tail of create_cq and create_cq_ex once the kernel CQ exists. */
static int scire_cq_setup(struct scire_context *ctx, struct scire_cq *cq,
			  const struct scire_create_cq_resp *resp)
{
	int ret;

	ret = scire_cq_map_ring(ctx, resp, &cq->map);
	if (ret)
		return ret;
	cq->cqn = resp->cqn;
	/* The kernel initialised its consumer index; continue from there. */
	cq->cons = __atomic_load_n(&cq->map.ring->consumer, __ATOMIC_RELAXED);
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		scire_cq_unmap_ring(&cq->map);
	return ret;
}

/* Give back the memory of a CQ (a struct scire_cq_ex for create_cq_ex). */
static void scire_cq_free(struct scire_cq *cq)
{
	struct scire_obj_mem mem = cq->mem;

	scire_obj_free(cq, SCIRE_RES_CQ, &mem);
}

struct ibv_cq *scire_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_cq_cmd_resp resp = {};
	struct scire_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	/* CREATE_CQ takes no scire request payload: send none. */
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				NULL, 0, &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = scire_cq_setup(ctx, cq, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	scire_cq_free(cq);
	errno = ret;
	return NULL;
}

int scire_destroy_cq(struct ibv_cq *ibcq)
{
	struct scire_cq *cq = to_scire_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;	/* the CQ stays usable */

	scire_cq_unmap_ring(&cq->map);
	pthread_spin_destroy(&cq->lock);
	scire_pd_put(cq->pdom);
	scire_cq_free(cq);
	return 0;
}

int scire_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct scire_context *ctx = to_scire_ctx(ibcq->context);
	struct scire_cq *cq = to_scire_cq(ibcq);
	struct scire_resize_cq_cmd_resp resp = {};
	struct scire_cq_map map = {};
	struct ibv_resize_cq cmd;
	int ret;

	/*
	 * Hold off pollers across the command: the kernel copies the
	 * unconsumed CQEs from the consumer index we last published, and that
	 * index must not move while it does.
	 */
	scire_cq_lock(cq);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	/*
	 * The kernel has switched rings. If the new one cannot be mapped the
	 * CQ is lost to us either way; keep the old mapping so pollers touch
	 * valid memory (it just never fills again).
	 */
	ret = scire_cq_map_ring(ctx, &resp.drv_payload, &map);
	if (ret)
		goto out;

	scire_cq_unmap_ring(&cq->map);
	cq->map = map;
	cq->cqn = resp.drv_payload.cqn;
	/* The new ring starts at the old consumer index, so cq->cons stands. */
out:
	scire_cq_unlock(cq);
	return ret;
}

/* ---- polling ------------------------------------------------------------------ */

static void scire_wc_fill(struct ibv_wc *wc, const struct scire_cqe *cqe)
{
	struct scire_wc_fields f = scire_cqe_to_wc(cqe);

	wc->wr_id = cqe->wr_id;
	wc->status = f.status;
	wc->opcode = f.opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;	/* also invalidated_rkey: same union */
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = f.wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = f.sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int scire_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct scire_cq *cq = to_scire_cq(ibcq);
	struct scire_cqe cqe;
	int64_t avail;
	int n;

	scire_cq_lock(cq);
	avail = scire_cq_avail(cq);
	if (avail < 0) {
		scire_cq_unlock(cq);
		return (int)avail;
	}
	for (n = 0; n < num_entries && n < avail; n++) {
		/* One copy out of shared memory: check and use the same bytes. */
		memcpy(&cqe, scire_cq_slot(cq, cq->cons), sizeof(cqe));
		scire_wc_fill(&wc[n], &cqe);
		cq->cons++;
	}
	if (n)
		scire_cq_publish_consumer(cq);
	scire_cq_unlock(cq);
	return n;
}

/*
 * Drop every unpolled CQE of QP @qpn, keeping the others in order: the QP
 * went to RESET or was destroyed, its work requests are gone, and mlx5
 * (whose behaviour rdma-core's tests expect) removes their CQEs too. Caller
 * holds cq->lock, so no poller or resize runs meanwhile.
 *
 * The kernel keeps producing CQEs of other QPs concurrently. It writes only
 * slots at or past the producer index, and only while they are below our
 * published consumer plus the ring size, so the slots between our consumer
 * and a load-acquire snapshot of the producer are ours alone. Walk them from
 * the newest back, copying each CQE out once and moving those we keep
 * toward the producer end (the destination never lies below the source, so
 * nothing unread is overwritten); the removed ones leave a gap at the
 * consumer end, which we hand back by advancing the consumer index with a
 * store-release: our reads and writes of the ring are complete before the
 * kernel can reuse a freed slot. CQEs produced after the snapshot are
 * untouched (a QP in RESET produces none). Returns the number removed.
 */
static uint32_t scire_cq_clean_locked(struct scire_cq *cq, uint32_t qpn)
{
	struct scire_cqe cqe;
	uint32_t src, dst, end;
	int64_t avail;

	avail = scire_cq_avail(cq);
	if (avail <= 0)
		return 0;	/* empty, or not a ring of ours any more */
	end = cq->cons + (uint32_t)avail;
	dst = end;
	for (src = end; src != cq->cons;) {
		src--;
		memcpy(&cqe, scire_cq_slot(cq, src), sizeof(cqe));
		if (cqe.qp_num == qpn)
			continue;
		dst--;
		if (dst != src)
			memcpy((void *)scire_cq_slot(cq, dst), &cqe, sizeof(cqe));
	}
	if (dst == cq->cons)
		return 0;
	avail = dst - cq->cons;
	cq->cons = dst;
	scire_cq_publish_consumer(cq);
	return (uint32_t)avail;
}

uint32_t scire_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct scire_cq *cq = to_scire_cq(ibcq);
	uint32_t n;

	scire_cq_lock(cq);
	n = scire_cq_clean_locked(cq, qpn);
	scire_cq_unlock(cq);
	return n;
}

int scire_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct scire_cq *cq = to_scire_cq(ibcq);
	uint32_t arm = solicited_only ? SCIRE_CQ_ARM_SOLICITED : SCIRE_CQ_ARM_NEXT;

	/*
	 * Sequentially consistent: the arm must be visible before this thread
	 * reads the producer again (store->load order), so that the poll
	 * that follows arming cannot miss a CQE whose producer update the
	 * kernel made without seeing the arm. The kernel clears the bits with
	 * an atomic exchange when it raises the event. The lock only keeps a
	 * concurrent resize from unmapping the ring under us.
	 */
	scire_cq_lock(cq);
	__atomic_fetch_or(&cq->map.ring->arm, arm, __ATOMIC_SEQ_CST);
	scire_cq_unlock(cq);
	return 0;
}

/* ---- extended CQ (ibv_cq_ex polling API) ------------------------------------
 * start_poll takes the CQ lock and end_poll drops it; in between the
 * current CQE lives in scire_cq_ex.cur, copied out of the ring.
 */

struct scire_cq_ex {
	struct scire_cq cq;
	struct scire_cqe cur;
	struct scire_wc_fields cur_wc;
	bool cur_loaded;	/* cur sits at cq.cons and is not consumed yet */
};

/* scire_destroy_cq() frees the scire_cq: it must be the allocation's start. */
_Static_assert(offsetof(struct scire_cq_ex, cq) == 0, "scire_cq_ex.cq first");

static inline struct scire_cq_ex *to_scire_cq_ex(struct ibv_cq_ex *ibcq)
{
	return (struct scire_cq_ex *)((char *)ibcq -
				      offsetof(struct scire_cq_ex, cq.vcq.cq_ex));
}

/* Load the CQE at the consumer index, or ENOENT / EIO. Lock held. */
static int scire_cq_ex_load(struct scire_cq_ex *cqx)
{
	int64_t avail = scire_cq_avail(&cqx->cq);

	cqx->cur_loaded = false;
	if (avail < 0)
		return EIO;
	if (!avail)
		return ENOENT;
	memcpy(&cqx->cur, scire_cq_slot(&cqx->cq, cqx->cq.cons), sizeof(cqx->cur));
	cqx->cur_wc = scire_cqe_to_wc(&cqx->cur);
	cqx->cq.vcq.cq_ex.wr_id = cqx->cur.wr_id;
	cqx->cq.vcq.cq_ex.status = cqx->cur_wc.status;
	cqx->cur_loaded = true;
	return 0;
}

static int scire_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct scire_cq_ex *cqx = to_scire_cq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	scire_cq_lock(&cqx->cq);
	ret = scire_cq_ex_load(cqx);
	/* On failure end_poll is not called: release the lock here. */
	if (ret)
		scire_cq_unlock(&cqx->cq);
	return ret;
}

static int scire_next_poll(struct ibv_cq_ex *ibcq)
{
	struct scire_cq_ex *cqx = to_scire_cq_ex(ibcq);

	if (cqx->cur_loaded)
		cqx->cq.cons++;
	return scire_cq_ex_load(cqx);
}

static void scire_end_poll(struct ibv_cq_ex *ibcq)
{
	struct scire_cq_ex *cqx = to_scire_cq_ex(ibcq);

	/*
	 * The CQE start_poll/next_poll returned last is consumed too; after
	 * next_poll said ENOENT there is none.
	 */
	if (cqx->cur_loaded)
		cqx->cq.cons++;
	cqx->cur_loaded = false;
	scire_cq_publish_consumer(&cqx->cq);
	scire_cq_unlock(&cqx->cq);
}

static enum ibv_wc_opcode scire_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur_wc.opcode;
}

static uint32_t scire_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.vendor_err;
}

static unsigned int scire_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur_wc.wc_flags;
}

static uint32_t scire_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.byte_len;
}

static __be32 scire_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.imm_data;
}

static uint32_t scire_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.qp_num;
}

static uint32_t scire_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.src_qp;
}

static uint32_t scire_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.slid;
}

static uint8_t scire_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur_wc.sl;
}

static uint8_t scire_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.dlid_path_bits;
}

/*
 * Completion timestamps: the kernel writes CLOCK_MONOTONIC nanoseconds
 * into each CQE of a CQ created for them, which is the device's 1 GHz
 * completion clock (hca_core_clock) as it is.
 */
static uint64_t scire_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_scire_cq_ex(ibcq)->cur.timestamp;
}

/*
 * The same instant on CLOCK_REALTIME: shifted by the distance between the
 * two clocks now (both read through the vDSO), so a step of the wall
 * clock since the completion moves the result with it, as it would on a
 * device that timestamps in its own clock.
 */
static uint64_t scire_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return to_scire_cq_ex(ibcq)->cur.timestamp +
	       ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000LL +
	       ((int64_t)real.tv_nsec - mono.tv_nsec);
}

#define SCIRE_CQ_EX_WC_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |			\
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |			\
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
	 IBV_WC_EX_WITH_DLID_PATH_BITS |					\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |				\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/*
 * The polling API and the readers of the fields asked for (wc_flags,
 * checked against SCIRE_CQ_EX_WC_FLAGS). UD receives fill src_qp, slid,
 * sl and dlid_path_bits; other completions leave them 0.
 */
static void scire_cq_ex_set_ops(struct ibv_cq_ex *ex, uint64_t wc_flags)
{
	ex->start_poll = scire_start_poll;
	ex->next_poll = scire_next_poll;
	ex->end_poll = scire_end_poll;
	ex->read_opcode = scire_read_opcode;
	ex->read_vendor_err = scire_read_vendor_err;
	ex->read_wc_flags = scire_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = scire_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = scire_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = scire_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = scire_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = scire_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = scire_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = scire_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = scire_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		ex->read_completion_wallclock_ns = scire_read_completion_wallclock_ns;
}

struct ibv_cq_ex *scire_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_cq_ex_cmd_resp resp = {};
	struct scire_pd *pdom = NULL;
	struct scire_obj_mem mem;
	struct scire_cq_ex *cqx;
	struct ibv_cq_ex *ex;
	int ret;

	/* No VLAN, flow tag or tag matching in scire CQEs. */
	if (attr->wc_flags & ~(uint64_t)SCIRE_CQ_EX_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	/* The PD of a CQ can only be a parent domain (ibv_create_cq_ex(3)). */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		if (!attr->parent_domain ||
		    attr->parent_domain->context != ibctx ||
		    !scire_parent_domain(attr->parent_domain)) {
			errno = EINVAL;
			return NULL;
		}
		pdom = scire_parent_domain(attr->parent_domain);
	}

	cqx = scire_obj_alloc(pdom, sizeof(*cqx), SCIRE_OBJ_ALIGN, SCIRE_RES_CQ,
			      &mem);
	if (!cqx)
		return NULL;
	cqx->cq.mem = mem;

	ret = scire_cmd_create_cq_ex(ibctx, attr, &cqx->cq.vcq, NULL, 0,
				     &resp.ibv_resp, sizeof(resp), 0);
	if (ret)
		goto err_free;

	ret = scire_cq_setup(ctx, &cqx->cq, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	/* libibverbs runs verbs_init_cq() on the result itself. */
	ex = &cqx->cq.vcq.cq_ex;
	scire_cq_ex_set_ops(ex, attr->wc_flags);
	/* One thread polls a CQ of a TD; its parent domain stays. */
	cqx->cq.pdom = pdom;
	cqx->cq.single_thread = pdom && pdom->td;
	scire_pd_get(pdom);
	return ex;

err_destroy:
	ibv_cmd_destroy_cq(ibv_cq_ex_to_cq(&cqx->cq.vcq.cq_ex));
err_free:
	scire_cq_free(&cqx->cq);
	errno = ret;
	return NULL;
}
