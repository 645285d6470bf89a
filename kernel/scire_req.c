// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the RC and UC requester (IBA 1.4 vol. 1 9.7 requester side, 9.8).
 *
 * The requester takes SQ WQEs in order: it copies each one once from the
 * shared ring into a kernel shadow, validates the copy, gives it its PSNs
 * and sends its request packets, reading local data through the WQE's SGL
 * (or its inline bytes) every time a packet is built, so a retransmission
 * needs no saved packet. The completer (scire_comp.c) retires WQEs and
 * moves the send cursor back when packets must be sent again. UC (IBA 9.8)
 * uses the same segmentation without acknowledgements: a UC WQE completes
 * once its last packet is sent, and nothing is ever sent again. UD and the
 * GSI QP (IBA 9.8.2) send each WQE as one SEND packet with a DETH to the
 * address handle and QP the WQE names, and complete it once it is sent.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/if_vlan.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "scire.h"
#include "scire_trace.h"

#define RC_OP(op)	(SCIRE_OP_RC | SCIRE_OP_##op)

#define SCIRE_SEND_OPS(l, o) \
	.first = RC_OP(SEND_FIRST), .middle = RC_OP(SEND_MIDDLE), \
	.last = RC_OP(l), .only = RC_OP(o)
#define SCIRE_WRITE_OPS(l, o) \
	.first = RC_OP(WRITE_FIRST), .middle = RC_OP(WRITE_MIDDLE), \
	.last = RC_OP(l), .only = RC_OP(o)

/* SQ WQE opcode -> how it is carried and how it completes. */
const struct scire_wqe_info scire_wqe_info[SCIRE_WQE_OP_MAX] = {
	[SCIRE_WQE_OP_SEND] = {
		.kind = SCIRE_REQ_K_SEND, .cqe_opcode = SCIRE_CQE_OP_SEND,
		SCIRE_SEND_OPS(SEND_LAST, SEND_ONLY),
	},
	[SCIRE_WQE_OP_SEND_IMM] = {
		.kind = SCIRE_REQ_K_SEND, .cqe_opcode = SCIRE_CQE_OP_SEND,
		SCIRE_SEND_OPS(SEND_LAST_IMM, SEND_ONLY_IMM),
	},
	[SCIRE_WQE_OP_SEND_INV] = {
		.kind = SCIRE_REQ_K_SEND, .cqe_opcode = SCIRE_CQE_OP_SEND,
		SCIRE_SEND_OPS(SEND_LAST_INV, SEND_ONLY_INV),
	},
	[SCIRE_WQE_OP_RDMA_WRITE] = {
		.kind = SCIRE_REQ_K_WRITE, .cqe_opcode = SCIRE_CQE_OP_RDMA_WRITE,
		SCIRE_WRITE_OPS(WRITE_LAST, WRITE_ONLY),
	},
	[SCIRE_WQE_OP_RDMA_WRITE_IMM] = {
		.kind = SCIRE_REQ_K_WRITE, .cqe_opcode = SCIRE_CQE_OP_RDMA_WRITE,
		SCIRE_WRITE_OPS(WRITE_LAST_IMM, WRITE_ONLY_IMM),
	},
	[SCIRE_WQE_OP_RDMA_READ] = {
		.kind = SCIRE_REQ_K_READ, .cqe_opcode = SCIRE_CQE_OP_RDMA_READ,
		.only = RC_OP(READ_REQUEST),
	},
	[SCIRE_WQE_OP_ATOMIC_CMP_SWP] = {
		.kind = SCIRE_REQ_K_ATOMIC, .cqe_opcode = SCIRE_CQE_OP_COMP_SWAP,
		.only = RC_OP(COMPARE_SWAP),
	},
	[SCIRE_WQE_OP_ATOMIC_FETCH_ADD] = {
		.kind = SCIRE_REQ_K_ATOMIC, .cqe_opcode = SCIRE_CQE_OP_FETCH_ADD,
		.only = RC_OP(FETCH_ADD),
	},
	[SCIRE_WQE_OP_LOCAL_INV] = {
		.kind = SCIRE_REQ_K_LOCAL, .cqe_opcode = SCIRE_CQE_OP_LOCAL_INV,
		.local_err = IB_WC_LOC_QP_OP_ERR,
	},
	[SCIRE_WQE_OP_BIND_MW] = {
		.kind = SCIRE_REQ_K_LOCAL, .cqe_opcode = SCIRE_CQE_OP_BIND_MW,
		.local_err = IB_WC_MW_BIND_ERR,
	},
	[SCIRE_WQE_OP_REG_MR] = {
		.kind = SCIRE_REQ_K_LOCAL, .cqe_opcode = SCIRE_CQE_OP_REG_MR,
		.local_err = IB_WC_LOC_QP_OP_ERR,
	},
	[SCIRE_WQE_OP_ATOMIC_WRITE] = {
		.kind = SCIRE_REQ_K_ATOMIC_WRITE,
		.cqe_opcode = SCIRE_CQE_OP_ATOMIC_WRITE,
		.only = RC_OP(ATOMIC_WRITE),
	},
	[SCIRE_WQE_OP_FLUSH] = {
		.kind = SCIRE_REQ_K_FLUSH,
		.cqe_opcode = SCIRE_CQE_OP_FLUSH,
		.only = RC_OP(FLUSH),
	},
};

/* Largest message (IBA 9.4.1 and our max_msg_sz). */
#define SCIRE_REQ_MAX_MSG	BIT_ULL(31)

/* What scire_req_begin() found at the SQ position it looked at. */
enum scire_req_next {
	SCIRE_REQ_SEND,		/* a WQE with packets to send at cur */
	SCIRE_REQ_AGAIN,	/* a local operation was executed */
	SCIRE_REQ_WAIT,		/* nothing to start now */
};

/*
 * The SGL cursor of one scire_req_run() call. It only lives for the call,
 * so no MR stays held while the requester waits for the peer (an MR being
 * deregistered waits for its holders).
 */
struct scire_req_tx {
	struct scire_sgl sgl;
	u32 index;
	u32 offset;
	bool valid;
};

/*
 * The retransmit timer fired. A deadline that progress moved later makes it
 * wait again; one that has passed is the requester's to act on
 * (scire_comp_timers()), which also re-arms the timer if what we read here
 * was stale.
 */
static void scire_req_retrans_expired(struct timer_list *t)
{
	struct scire_qp *qp = timer_container_of(qp, t, req.retrans_timer);
	struct scire_req *req = &qp->req;
	unsigned long deadline;

	/* Timer dequeued before the look: pairs with scire_req_arm(). */
	smp_mb();
	if (!READ_ONCE(req->retrans_armed))
		return;
	deadline = READ_ONCE(req->retrans_deadline);
	if (time_before(jiffies, deadline)) {
		if (!READ_ONCE(req->stopped))
			mod_timer(t, deadline);
		return;
	}
	set_bit(SCIRE_QP_P_RETRANSMIT, &qp->pending);
	scire_qp_kick(qp);
}

/* A raw packet QP: each WQE one Ethernet frame, as posted (scire_raw.c). */
static bool scire_req_is_raw(const struct scire_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RAW_PACKET;
}

/*
 * UD, GSI and SMI: datagrams, never acknowledged (IBA 9.8.2); and raw
 * packet QPs, whose frames are single unacknowledged sends as well.
 */
static bool scire_req_is_ud(const struct scire_qp *qp)
{
	return scire_qp_is_datagram(qp) || scire_req_is_raw(qp);
}

static void scire_req_rnr_expired(struct timer_list *t)
{
	struct scire_qp *qp = timer_container_of(qp, t, req.rnr_timer);

	set_bit(SCIRE_QP_P_RNR, &qp->pending);
	scire_qp_kick(qp);
}

/**
 * scire_req_init() - allocate the requester's SQ shadow and WQE state.
 * @qp: a QP being created; qp->sq (num_entries, wqe_size) is set up.
 *
 * The shadow holds qp->sq.num_entries * qp->sq.wqe_size bytes: every WQE
 * is copied there once and never read from the shared ring again.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL if the SQ geometry is not powers of two or a slot is
 * smaller than a WQE header; -ENOMEM.
 */
int scire_req_init(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	struct scire_wq *sq = &qp->sq;

	timer_setup(&req->retrans_timer, scire_req_retrans_expired, 0);
	timer_setup(&req->rnr_timer, scire_req_rnr_expired, 0);
	if (dst_cache_init(&req->route, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	if (!sq->num_entries)
		return 0;
	if (!is_power_of_2(sq->num_entries) || !is_power_of_2(sq->wqe_size) ||
	    sq->wqe_size < sizeof(struct scire_send_wqe))
		return -EINVAL;

	/* Both sized by the process's request: charge them to it. */
	req->shadow = kvmalloc_array(sq->num_entries, sq->wqe_size,
				     GFP_KERNEL_ACCOUNT);
	req->wqe = kvcalloc(sq->num_entries, sizeof(*req->wqe),
			    GFP_KERNEL_ACCOUNT);
	req->direct_buf = kmalloc(SCIRE_REQ_DIRECT_MAX, GFP_KERNEL_ACCOUNT);
	if (!req->shadow || !req->wqe || !req->direct_buf) {
		scire_req_cleanup(qp);
		return -ENOMEM;
	}
	req->mask = sq->num_entries - 1;
	req->wqe_size = sq->wqe_size;
	return 0;
}

/**
 * scire_req_cleanup() - free what scire_req_init() allocated.
 * @qp: the QP being destroyed (or whose creation failed after
 *	scire_req_init()); its worker no longer runs.
 *
 * Context: process context, may sleep (waits for running timer callbacks).
 */
void scire_req_cleanup(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;

	if (req->retrans_timer.function) {
		WRITE_ONCE(req->stopped, true);
		timer_delete_sync(&req->retrans_timer);
		timer_delete_sync(&req->rnr_timer);
	}
	kvfree(req->shadow);
	kvfree(req->wqe);
	kfree(req->direct_buf);
	req->shadow = NULL;
	req->wqe = NULL;
	req->direct_buf = NULL;
	dst_cache_destroy(&req->route);
	memset(&req->route, 0, sizeof(req->route));
}

/**
 * scire_req_reset() - forget all requester and completer state (to RESET).
 * @qp: the QP; its worker and timers are stopped (scire_req_stop()).
 *
 * Every SQ index, the kernel's consumer and the ring's published consumer
 * return to 0 (the SQ starts empty again, IBA 10.3.1.2), and the timer
 * bits of qp->pending are cleared.
 *
 * Context: any; not concurrent with the worker.
 */
void scire_req_reset(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;

	clear_bit(SCIRE_QP_P_RETRANSMIT, &qp->pending);
	clear_bit(SCIRE_QP_P_RNR, &qp->pending);
	req->fetched = 0;
	req->started = 0;
	req->cur = 0;
	req->cur_psn = 0;
	req->tail_psn = 0;
	req->comp_psn = 0;
	req->hi_psn = 0;
	req->back_psn = 0;
	req->rnr_psn = 0;
	req->rd_atomic = 0;
	req->noack = 0;
	req->went_back = false;
	req->read_retry = false;
	req->rnr_wait = false;
	req->rto_probe = false;
	req->retrans_armed = false;
	WRITE_ONCE(req->stopped, false);
	WRITE_ONCE(qp->sq.consumer, 0);
	if (!qp->sq.ring)
		return;
	/* Pairs with the poster's load-acquire of the consumer index. */
	smp_store_release(&qp->sq.ring->consumer, 0);
}

/**
 * scire_req_start() - prepare the requester for RTS (RTR->RTS).
 * @qp: the QP; called before RTS is published, so the worker does not run
 *	the requester concurrently.
 *
 * The first WQE gets PSN qp->sq_psn; the retry counters are loaded from
 * qp->retry_cnt and qp->rnr_retry (IBA 9.7.6.1); the path MTU is fixed
 * for the PSN arithmetic of every WQE sent from now on.
 *
 * Context: any; not concurrent with the worker.
 */
void scire_req_start(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	u32 psn = scire_psn(qp->sq_psn);

	req->cur_psn = psn;
	req->tail_psn = psn;
	req->comp_psn = psn;
	req->hi_psn = psn;
	/*
	 * A datagram has no path MTU: it may fill the port's (IBA 9.8.2). A
	 * peer on this host takes units: the PSN arithmetic of both ends
	 * follows the MTU the requests say they use (scire_pkt_mtu()).
	 */
	req->local = false;
	if (scire_req_is_raw(qp)) {
		/* A whole frame: the netdev's MTU and an 802.1Q header. */
		req->mtu = READ_ONCE(qp->sdev->netdev->mtu) + VLAN_ETH_HLEN;
	} else if (scire_req_is_ud(qp)) {
		req->mtu = ib_mtu_enum_to_int(scire_active_mtu(qp->sdev));
	} else if (READ_ONCE(scire_fast_path) &&
		   scire_net_av_local(qp->sdev, &qp->av)) {
		req->local = true;
		req->mtu = SCIRE_LOCAL_MTU;
	} else {
		req->mtu = clamp_t(u32, qp->mtu, 256, 4096);
	}
	trace_scire_req_path(qp, req->local, req->mtu);
	req->retry_left = qp->retry_cnt;
	req->rnr_left = qp->rnr_retry;
	req->cwnd = SCIRE_REQ_WINDOW;
	req->noack = 0;
	req->went_back = false;
	req->read_retry = false;
	req->rnr_wait = false;
	req->rto_probe = false;
	req->retrans_armed = false;
	WRITE_ONCE(req->stopped, false);
}

/**
 * scire_req_stop() - stop the retransmit and RNR timers synchronously.
 * @qp: the QP, before a move to RESET or destroy. Call it once the worker
 *	can no longer run the requester (or the worker may re-arm a timer).
 *
 * Context: process context; waits for a running timer callback.
 */
void scire_req_stop(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;

	WRITE_ONCE(req->stopped, true);
	timer_delete_sync(&req->retrans_timer);
	timer_delete_sync(&req->rnr_timer);
}

/* Local ACK timeout (IBA 11.2.4.2: 4.096 us * 2^code), never below a floor. */
static unsigned long scire_req_timeout(u8 code)
{
	u64 ms = DIV_ROUND_UP_ULL(4096ULL << min_t(u8, code, 31),
				  NSEC_PER_MSEC);

	return msecs_to_jiffies(max_t(u64, ms, SCIRE_REQ_MIN_TIMEOUT_MS));
}

/**
 * scire_req_arm() - keep the retransmit timer in step with what is unacked.
 * @qp: the QP.
 * @restart: forward progress was made: measure the timeout from now.
 *	     Otherwise an already running timer keeps its deadline, so the
 *	     timeout counts from the oldest unacknowledged packet.
 *
 * The timeout runs while packets are unacknowledged, qp->timeout is not 0
 * (0 is infinite, IBA 11.2.4.2) and no RNR NAK delay is pending. Only its
 * deadline moves with each packet and ACK; the timer itself is armed when
 * it is not pending, and when it fires before the deadline it re-arms for
 * it (scire_req_retrans_expired()), so a busy QP touches the timer wheel
 * about once per timeout instead of twice per message.
 *
 * Context: the QP's worker.
 */
void scire_req_arm(struct scire_qp *qp, bool restart)
{
	struct scire_req *req = &qp->req;
	u8 code = READ_ONCE(qp->timeout);

	if (READ_ONCE(req->stopped))
		return;
	if (!code || req->rnr_wait || req->hi_psn == req->comp_psn) {
		/* A pending timer finds nothing armed when it fires. */
		WRITE_ONCE(req->retrans_armed, false);
		return;
	}
	if (!restart && req->retrans_armed)
		return;
	WRITE_ONCE(req->retrans_deadline, jiffies + scire_req_timeout(code));
	WRITE_ONCE(req->retrans_armed, true);
	/* Armed before the look: pairs with scire_req_retrans_expired(). */
	smp_mb();
	/* A pending timer due later: a shorter timeout was set since. */
	if (!timer_pending(&req->retrans_timer) ||
	    time_after(READ_ONCE(req->retrans_timer.expires),
		       req->retrans_deadline))
		mod_timer(&req->retrans_timer, req->retrans_deadline);
}

/**
 * scire_req_rewind() - send again from a PSN (IBA 9.7.6.1.3, 9.7.5.2.x).
 * @qp: the QP.
 * @psn: first PSN to send again; owned by a started WQE, or the first PSN
 *	 no WQE owns yet (nothing to resend).
 *
 * The requester re-reads the data of every packet it sends again from the
 * WQE's SGL; a READ is requested again for the part not yet received.
 *
 * Context: the QP's worker.
 */
void scire_req_rewind(struct scire_qp *qp, u32 psn)
{
	struct scire_req *req = &qp->req;
	struct scire_req_wqe *w;
	u32 i;

	psn = scire_psn(psn);
	for (i = qp->sq.consumer; i != req->started; i++) {
		w = scire_req_wqe(req, i);
		/* A local operation already done owns no PSNs. */
		if (w->state == SCIRE_REQ_WQE_DONE)
			continue;
		if (w->state != SCIRE_REQ_WQE_ACTIVE)
			break;
		if (scire_psn_dist(w->first_psn, psn) <=
		    scire_psn_dist(w->first_psn, w->last_psn))
			break;
	}
	req->cur = i;
	req->cur_psn = i == req->started ? req->tail_psn : psn;
}

/* Completion status of a local memory error from the SGL helpers. */
static u8 scire_req_mem_status(int err)
{
	return err == -ENOSPC ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/*
 * Check a WQE copy against the QP (brief "Ring rules"); on success *len is
 * its message length. Return: IB_WC_SUCCESS or the status to complete the
 * WQE with.
 */
static u8 scire_req_validate(struct scire_qp *qp,
			     const struct scire_send_wqe *wqe, u32 *len)
{
	const struct scire_sge *sge = (const struct scire_sge *)wqe->data;
	u32 room = qp->req.wqe_size - sizeof(*wqe);
	const struct scire_wqe_info *info;
	u64 total;

	*len = 0;
	if (wqe->opcode >= SCIRE_WQE_OP_MAX)
		return IB_WC_LOC_QP_OP_ERR;
	/* reg.mr is a kernel pointer: only a kernel poster may supply one. */
	if (wqe->opcode == SCIRE_WQE_OP_REG_MR &&
	    (qp->ibqp.uobject || !wqe->reg.mr))
		return IB_WC_LOC_QP_OP_ERR;
	info = &scire_wqe_info[wqe->opcode];
	if (info->kind == SCIRE_REQ_K_LOCAL && !scire_req_is_ud(qp))
		return IB_WC_SUCCESS;
	/* UC carries SEND and RDMA WRITE only (IBA 9.8, table 38). */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    (scire_req_kind_rd_atomic(info->kind) ||
	     wqe->opcode == SCIRE_WQE_OP_SEND_INV))
		return IB_WC_LOC_QP_OP_ERR;
	/* UD carries SEND and SEND with immediate only (IBA 9.8.2). */
	if (scire_req_is_ud(qp) && wqe->opcode != SCIRE_WQE_OP_SEND &&
	    wqe->opcode != SCIRE_WQE_OP_SEND_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	/* A frame has nowhere to carry immediate data. */
	if (scire_req_is_raw(qp) && wqe->opcode != SCIRE_WQE_OP_SEND)
		return IB_WC_LOC_QP_OP_ERR;

	if (wqe->num_sge > qp->sq.max_sge ||
	    wqe->num_sge > room / sizeof(*sge) ||
	    wqe->inline_len > qp->sq.max_inline || wqe->inline_len > room)
		return IB_WC_LOC_QP_OP_ERR;

	/*
	 * ATOMIC WRITE carries its 8 bytes in the WQE header. Its address
	 * is the responder's to check, which NAKs a misaligned one as
	 * rdma_rxe does (Invalid Request).
	 */
	if (info->kind == SCIRE_REQ_K_ATOMIC_WRITE) {
		if (wqe->num_sge || (wqe->flags & SCIRE_WQE_F_INLINE))
			return IB_WC_LOC_QP_OP_ERR;
		*len = sizeof(wqe->atomic_write.value);
		return IB_WC_SUCCESS;
	}
	/*
	 * FLUSH carries no data. Its placement type and level must be ones
	 * the FETH can say (IBA 1.5); whether the responder grants them is
	 * the responder's to answer.
	 */
	if (info->kind == SCIRE_REQ_K_FLUSH) {
		if (wqe->num_sge || (wqe->flags & SCIRE_WQE_F_INLINE) ||
		    !wqe->flush.type ||
		    (wqe->flush.type & ~(SCIRE_FLUSH_GLOBAL |
					 SCIRE_FLUSH_PERSISTENT)) ||
		    wqe->flush.level > SCIRE_FLUSH_MR)
			return IB_WC_LOC_QP_OP_ERR;
		*len = 0;
		return IB_WC_SUCCESS;
	}

	if (wqe->flags & SCIRE_WQE_F_INLINE) {
		/* Inline bytes are a source: nothing to receive READ data. */
		if (wqe->num_sge || info->kind == SCIRE_REQ_K_READ ||
		    info->kind == SCIRE_REQ_K_ATOMIC)
			return IB_WC_LOC_QP_OP_ERR;
		if (scire_req_is_ud(qp) && wqe->inline_len > qp->req.mtu)
			return IB_WC_LOC_LEN_ERR;
		if (scire_req_is_raw(qp) && wqe->inline_len < ETH_HLEN)
			return IB_WC_LOC_LEN_ERR;
		*len = wqe->inline_len;
		return IB_WC_SUCCESS;
	}

	total = scire_sgl_length(sge, wqe->num_sge);
	if (total > SCIRE_REQ_MAX_MSG)
		return IB_WC_LOC_LEN_ERR;
	/* A datagram is one packet. */
	if (scire_req_is_ud(qp) && total > qp->req.mtu)
		return IB_WC_LOC_LEN_ERR;
	/* A frame holds at least its Ethernet header. */
	if (scire_req_is_raw(qp) && total < ETH_HLEN)
		return IB_WC_LOC_LEN_ERR;
	if (info->kind == SCIRE_REQ_K_ATOMIC) {
		/* IBA 9.4.5: one naturally aligned 64-bit remote operand. */
		if (wqe->num_sge != 1 || (wqe->atomic.remote_addr & 7))
			return IB_WC_LOC_QP_OP_ERR;
		if (sge[0].length != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
	}
	*len = total;
	return IB_WC_SUCCESS;
}

/*
 * Copy the next WQE from the ring into the shadow, once. Return: 0;
 * -EAGAIN when the ring holds no new WQE; -EIO when its producer index is
 * impossible (the QP is then moved to ERR).
 */
static int scire_req_fetch(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	struct scire_wq *sq = &qp->sq;
	const struct scire_send_wqe *slot;
	struct scire_send_wqe *wqe;
	struct scire_req_wqe *w;
	u32 prod, avail, len, used;

	/* Pairs with the poster's store-release after writing the slot. */
	prod = smp_load_acquire(&sq->ring->producer);
	avail = prod - sq->consumer;
	if (avail > sq->num_entries || req->fetched - sq->consumer > avail) {
		scire_qp_error(qp);
		return -EIO;
	}
	if (prod == req->fetched)
		return -EAGAIN;

	wqe = scire_req_shadow(req, req->fetched);
	slot = scire_wq_slot(sq, req->fetched);
	memcpy(wqe, slot, sizeof(*wqe));
	/*
	 * Then only the part of the slot the copied header says is used (a
	 * slot sized for max_inline is mostly empty); the validation below
	 * reads the copy, so a header changed meanwhile cannot widen it.
	 */
	used = wqe->flags & SCIRE_WQE_F_INLINE ? wqe->inline_len :
	       wqe->num_sge * sizeof(struct scire_sge);
	memcpy(wqe->data, slot->data,
	       min_t(u32, used, req->wqe_size - sizeof(*wqe)));
	w = scire_req_wqe(req, req->fetched);
	w->status = scire_req_validate(qp, wqe, &len);
	w->state = w->status ? SCIRE_REQ_WQE_ERROR : SCIRE_REQ_WQE_NEW;
	w->len = len;
	req->fetched++;
	return 0;
}

/* Mark a started WQE failed; it completes once it is the SQ head. */
static void scire_req_fail(struct scire_qp *qp, u32 index, u8 status)
{
	struct scire_req_wqe *w = scire_req_wqe(&qp->req, index);

	w->state = SCIRE_REQ_WQE_ERROR;
	w->status = status;
	scire_comp_head_error(qp);
}

/* Execute LOCAL_INV, BIND_MW or REG_MR (IBA 10.6.7, 10.6.6, 11.4.1.1). */
static u8 scire_req_local(struct scire_qp *qp,
			  const struct scire_send_wqe *wqe)
{
	struct scire_pd *pd = to_spd(qp->ibqp.pd);
	int ret;

	switch (wqe->opcode) {
	case SCIRE_WQE_OP_LOCAL_INV:
		ret = scire_mr_invalidate(pd, wqe->imm_data, false);
		break;
	case SCIRE_WQE_OP_BIND_MW:
		ret = scire_mw_bind(pd, wqe);
		break;
	case SCIRE_WQE_OP_REG_MR:
		ret = scire_mr_fast_reg(pd,
					(struct scire_mr *)(uintptr_t)wqe->reg.mr,
					wqe->reg.key, wqe->reg.access);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	return ret ? scire_wqe_info[wqe->opcode].local_err : IB_WC_SUCCESS;
}

/*
 * Start the WQE at @started if nothing holds it back: give it its PSNs,
 * or execute it if it is a local operation.
 */
static enum scire_req_next scire_req_begin(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	u32 index = req->started;
	const struct scire_wqe_info *info;
	struct scire_send_wqe *wqe;
	struct scire_req_wqe *w;
	u32 npkts, max_rd;
	u8 status;

	/* SQD: finish what has started, begin nothing new (IBA 10.3.1.4). */
	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return SCIRE_REQ_WAIT;
	if (req->fetched == index && scire_req_fetch(qp))
		return SCIRE_REQ_WAIT;

	w = scire_req_wqe(req, index);
	wqe = scire_req_shadow(req, index);
	if (w->state == SCIRE_REQ_WQE_ERROR) {
		req->started++;
		scire_comp_head_error(qp);
		return SCIRE_REQ_WAIT;
	}
	info = &scire_wqe_info[wqe->opcode];

	if (info->kind == SCIRE_REQ_K_LOCAL) {
		if (qp->sq.consumer == index) {
			req->started++;
			req->cur++;
			status = scire_req_local(qp, wqe);
			/* ERR before its CQE is visible (scire_comp_head_error()). */
			if (status)
				scire_qp_error(qp);
			scire_comp_retire(qp, status, 0);
			return status ? SCIRE_REQ_WAIT : SCIRE_REQ_AGAIN;
		}
		/*
		 * Earlier WQEs are still outstanding. LOCAL_INV waits for
		 * them: go-back-N re-reads what it resends from the WQE's
		 * SGL, and must not find its MR invalidated under it. REG_MR
		 * and BIND_MW take effect now, in SQ order, for the WQEs
		 * after them (IBA 10.8.3.3), and complete when their turn
		 * comes (scire_comp_retire()): what they make valid is a
		 * free MR or a window, which no earlier WQE can be using. A
		 * ULP that registers one MR per I/O before its SEND (nvme-rdma,
		 * iSER, NFS/RDMA) would otherwise have one I/O per round trip
		 * in flight. A fence still waits for earlier READs/atomics.
		 */
		if (wqe->opcode == SCIRE_WQE_OP_LOCAL_INV ||
		    ((wqe->flags & SCIRE_WQE_F_FENCE) && req->rd_atomic))
			return SCIRE_REQ_WAIT;
		req->started++;
		status = scire_req_local(qp, wqe);
		if (status) {
			/* Completes in error at the head; nothing after starts. */
			scire_req_fail(qp, index, status);
			return SCIRE_REQ_WAIT;
		}
		w->state = SCIRE_REQ_WQE_DONE;
		req->cur++;
		return SCIRE_REQ_AGAIN;
	}

	/* IBA 10.8.3.3: a fenced WQE waits for earlier READs and atomics. */
	if ((wqe->flags & SCIRE_WQE_F_FENCE) && req->rd_atomic)
		return SCIRE_REQ_WAIT;
	if (scire_psn_dist(req->comp_psn, req->tail_psn) >= SCIRE_REQ_WINDOW)
		return SCIRE_REQ_WAIT;
	if (scire_req_kind_rd_atomic(info->kind)) {
		max_rd = READ_ONCE(qp->max_rd_atomic);
		if (!max_rd) {
			/* The QP may never have one outstanding. */
			req->started++;
			scire_req_fail(qp, index, IB_WC_LOC_QP_OP_ERR);
			return SCIRE_REQ_WAIT;
		}
		if (req->rd_atomic >= max_rd)
			return SCIRE_REQ_WAIT;
		req->rd_atomic++;
	}

	if (info->kind == SCIRE_REQ_K_ATOMIC ||
	    info->kind == SCIRE_REQ_K_ATOMIC_WRITE ||
	    info->kind == SCIRE_REQ_K_FLUSH)
		npkts = 1;
	else
		npkts = max_t(u32, 1, DIV_ROUND_UP_ULL(w->len, req->mtu));
	w->first_psn = req->tail_psn;
	w->last_psn = scire_psn(req->tail_psn + npkts - 1);
	w->state = SCIRE_REQ_WQE_ACTIVE;
	req->tail_psn = scire_psn(req->tail_psn + npkts);
	req->started++;
	return SCIRE_REQ_SEND;
}

static void scire_req_tx_release(struct scire_req_tx *tx)
{
	if (tx->valid)
		scire_sgl_release(&tx->sgl);
	tx->valid = false;
}

/*
 * Read @len bytes at byte @off of WQE @index's SGL into @buf, or, with
 * @skb, append them to @skb as page fragments (scire_sgl_frags()).
 */
static int scire_req_tx_copy(struct scire_qp *qp, struct scire_req_tx *tx,
			     u32 index, u32 off, void *buf, struct sk_buff *skb,
			     u32 len)
{
	struct scire_send_wqe *wqe = scire_req_shadow(&qp->req, index);
	int ret;

	if (!tx->valid || tx->index != index || tx->offset != off) {
		scire_req_tx_release(tx);
		scire_sgl_init(&tx->sgl, to_spd(qp->ibqp.pd),
			       (const struct scire_sge *)wqe->data,
			       wqe->num_sge);
		tx->valid = true;
		tx->index = index;
		tx->offset = 0;
		if (off) {
			ret = scire_sgl_seek(&tx->sgl, off);
			if (ret)
				goto err;
			tx->offset = off;
		}
	}
	if (skb)
		ret = scire_sgl_frags(&tx->sgl, skb, len);
	else
		ret = scire_sgl_copy(&tx->sgl, buf, len, false);
	if (ret)
		goto err;
	tx->offset += len;
	return 0;

err:
	scire_req_tx_release(tx);
	return ret;
}

/* Fill the extended headers a request opcode carries (IBA 9.3). */
static void scire_req_ext_hdrs(struct scire_qp *qp, struct sk_buff *skb,
			       u8 opcode, const struct scire_send_wqe *wqe,
			       const struct scire_req_wqe *w, u32 off)
{
	const struct scire_opcode_info *oi = &scire_opcode[opcode];
	u32 mask = oi->mask;
	u64 swap_add, comp;

	/* ATOMIC WRITE's and FLUSH's address and key sit where RDMA's do. */
	BUILD_BUG_ON(offsetof(struct scire_send_wqe, atomic_write.remote_addr) !=
		     offsetof(struct scire_send_wqe, rdma.remote_addr) ||
		     offsetof(struct scire_send_wqe, atomic_write.rkey) !=
		     offsetof(struct scire_send_wqe, rdma.rkey) ||
		     offsetof(struct scire_send_wqe, flush.remote_addr) !=
		     offsetof(struct scire_send_wqe, rdma.remote_addr) ||
		     offsetof(struct scire_send_wqe, flush.rkey) !=
		     offsetof(struct scire_send_wqe, rdma.rkey));
	if (mask & SCIRE_M_XRCETH) {
		struct scire_xrceth *xrceth = (void *)skb->data +
					      oi->offset[SCIRE_H_XRCETH];

		xrceth->srqn = cpu_to_be32(wqe->xrc_srqn & SCIRE_QPN_MASK);
	}
	if (mask & SCIRE_M_FETH) {
		struct scire_feth *feth = (void *)skb->data +
					  oi->offset[SCIRE_H_FETH];

		feth->bits = cpu_to_be32((wqe->flush.type & SCIRE_FETH_PLT_MASK) |
					 ((wqe->flush.level << SCIRE_FETH_SEL_SHIFT) &
					  SCIRE_FETH_SEL_MASK));
	}
	if (mask & SCIRE_M_RETH) {
		struct scire_reth *reth = (void *)skb->data +
					  oi->offset[SCIRE_H_RETH];

		/*
		 * A READ asked again covers only what is still missing. The
		 * RETH follows the 12-byte BTH (and a FLUSH's FETH): its
		 * 64-bit VA is unaligned. A FLUSH names its range there and
		 * carries no data.
		 */
		put_unaligned_be64(wqe->rdma.remote_addr + off, &reth->va);
		reth->rkey = cpu_to_be32(wqe->rdma.rkey);
		reth->len = cpu_to_be32(mask & SCIRE_M_FLUSH ? wqe->flush.length :
					w->len - off);
	}
	if (mask & SCIRE_M_ATMETH) {
		struct scire_atmeth *atm = (void *)skb->data +
					   oi->offset[SCIRE_H_ATMETH];

		if ((opcode & ~SCIRE_OP_TRANSPORT_MASK) ==
		    SCIRE_OP_COMPARE_SWAP) {
			swap_add = wqe->atomic.swap;
			comp = wqe->atomic.compare_add;
		} else {
			swap_add = wqe->atomic.compare_add;
			comp = 0;
		}
		atm->va = cpu_to_be64(wqe->atomic.remote_addr);
		atm->rkey = cpu_to_be32(wqe->atomic.rkey);
		atm->swap_add_hi = cpu_to_be32(upper_32_bits(swap_add));
		atm->swap_add_lo = cpu_to_be32(lower_32_bits(swap_add));
		atm->comp_hi = cpu_to_be32(upper_32_bits(comp));
		atm->comp_lo = cpu_to_be32(lower_32_bits(comp));
	}
	if (mask & SCIRE_M_IMMDT) {
		struct scire_immdt *imm = (void *)skb->data +
					  oi->offset[SCIRE_H_IMMDT];

		/* Already in network order in the WQE. */
		imm->imm = (__force __be32)wqe->imm_data;
	}
	if (mask & SCIRE_M_IETH) {
		struct scire_ieth *ieth = (void *)skb->data +
					  oi->offset[SCIRE_H_IETH];

		ieth->rkey = cpu_to_be32(wqe->imm_data);
	}
	if (mask & SCIRE_M_DETH) {
		struct scire_deth *deth = (void *)skb->data +
					  oi->offset[SCIRE_H_DETH];
		u32 qkey = wqe->ud.remote_qkey;

		/* IBA 10.2.5: a controlled Q_Key stands for the QP's own. */
		if (qkey & BIT(31))
			qkey = qp->qkey;
		deth->qkey = cpu_to_be32(qkey);
		deth->sqp = cpu_to_be32(qp->ibqp.qp_num & SCIRE_QPN_MASK);
	}
}

/*
 * Build and send one request packet of WQE @index. Return: 0 (also when
 * the network dropped it: retransmission recovers); -ENOMEM; or a positive
 * ib_wc_status for a local memory error.
 */
static int scire_req_xmit(struct scire_qp *qp, struct scire_req_tx *tx,
			  const struct scire_av *av, u32 dest_qpn,
			  u32 index, u8 opcode, u32 psn, u32 off, u32 paylen,
			  bool ackreq, bool se)
{
	struct scire_req *req = &qp->req;
	const struct scire_send_wqe *wqe = scire_req_shadow(req, index);
	const struct scire_opcode_info *oi = &scire_opcode[opcode];
	/* A unit has no pad: nothing on its way counts in 32-bit words. */
	u32 pad = req->local ? 0 : -paylen & 3;
	bool aw = wqe->opcode == SCIRE_WQE_OP_ATOMIC_WRITE;
	/* Inline data lives in the WQE, not in an MR that could lend pages. */
	bool frags = !(wqe->flags & SCIRE_WQE_F_INLINE) && !aw &&
		     scire_pkt_zc(req->local, paylen);
	struct sk_buff *skb;
	u8 *payload;
	int ret;

again:
	skb = scire_pkt_alloc(qp, av, oi->hdr_len + (frags ? 0 : paylen + pad),
			      scire_qp_gfp(qp));
	if (!skb)
		return -ENOMEM;
	scire_bth_init((struct scire_bth *)skb->data, opcode, se, pad,
		       scire_qp_bth_pkey(qp, qp->ibqp.qp_type == IB_QPT_GSI ?
					 wqe->ud.pkey_index : qp->pkey_index),
		       dest_qpn, ackreq, psn);
	scire_req_ext_hdrs(qp, skb, opcode, wqe, scire_req_wqe(req, index),
			   off);

	payload = skb->data + oi->hdr_len;
	if (frags) {
		ret = scire_req_tx_copy(qp, tx, index, off, NULL, skb, paylen);
		if (ret == -EOPNOTSUPP || ret == -E2BIG) {
			kfree_skb(skb);
			frags = false;
			goto again;
		}
		if (ret) {
			kfree_skb(skb);
			return scire_req_mem_status(ret);
		}
	} else if (aw) {
		/* The 8 bytes go out as posted, in memory order. */
		memcpy(payload, wqe->atomic_write.value, paylen);
	} else if (paylen && (wqe->flags & SCIRE_WQE_F_INLINE)) {
		memcpy(payload, wqe->data + off, paylen);
	} else if (paylen) {
		ret = scire_req_tx_copy(qp, tx, index, off, payload, NULL,
					paylen);
		if (ret) {
			kfree_skb(skb);
			return scire_req_mem_status(ret);
		}
	}
	if (!frags)
		memset(payload + paylen, 0, pad);
	scire_pkt(skb)->local = req->local;
	scire_pkt_send(qp, av, skb);
	return 0;
}

/*
 * Send WQE @index of a raw packet QP: its bytes are the frame. Return: 0
 * (also when the netdev drops it: a NIC completes such a send too),
 * -ENOMEM, or the status of a local memory error.
 */
static int scire_req_raw(struct scire_qp *qp, struct scire_req_tx *tx,
			 u32 index, u32 len)
{
	const struct scire_send_wqe *wqe = scire_req_shadow(&qp->req, index);
	struct net_device *ndev = qp->sdev->netdev;
	struct sk_buff *skb;
	int ret;

	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + len, scire_qp_gfp(qp));
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	if (wqe->flags & SCIRE_WQE_F_INLINE) {
		skb_put_data(skb, wqe->data, len);
	} else {
		ret = scire_req_tx_copy(qp, tx, index, 0, skb_put(skb, len),
					NULL, len);
		if (ret) {
			kfree_skb(skb);
			return scire_req_mem_status(ret);
		}
	}
	scire_raw_send(qp, skb);
	return 0;
}

/*
 * Send the packet at cur_psn of WQE cur and move the cursor past it.
 * Return as scire_req_xmit().
 */
static int scire_req_send_next(struct scire_qp *qp, struct scire_req_tx *tx)
{
	struct scire_req *req = &qp->req;
	u32 index = req->cur, psn = req->cur_psn;
	bool ud = scire_req_is_ud(qp);
	bool uc = qp->ibqp.qp_type == IB_QPT_UC || ud;
	const struct scire_send_wqe *wqe = scire_req_shadow(req, index);
	const struct scire_req_wqe *w = scire_req_wqe(req, index);
	const struct scire_wqe_info *info = &scire_wqe_info[wqe->opcode];
	u32 seg = scire_psn_dist(w->first_psn, psn);
	u32 off = seg * req->mtu, paylen = 0, next;
	bool last = psn == w->last_psn;
	const struct scire_av *av = &qp->av;
	u32 dest_qpn = qp->dest_qpn;
	struct scire_av ud_av;
	bool ackreq, se;
	u8 opcode;
	int ret;

	/* A frame: one send, done when it leaves (as UD's, IBA 9.8.2). */
	if (scire_req_is_raw(qp)) {
		ret = scire_req_raw(qp, tx, index, w->len);
		if (ret)
			return ret;
		next = scire_psn(psn + 1);
		req->cur_psn = next;
		req->comp_psn = next;
		req->hi_psn = next;
		req->cur++;
		if (qp->sq.consumer == index)
			scire_comp_retire(qp, IB_WC_SUCCESS, w->len);
		return 0;
	}

	if (ud) {
		/* Looked up per send: the AH may be gone since the post. */
		if (scire_ah_av(qp, wqe->ud.ah_num, &ud_av))
			return IB_WC_LOC_QP_OP_ERR;
		av = &ud_av;
		dest_qpn = wqe->ud.remote_qpn & SCIRE_QPN_MASK;
	}

	switch (info->kind) {
	case SCIRE_REQ_K_SEND:
	case SCIRE_REQ_K_WRITE:
		paylen = last ? w->len - off : req->mtu;
		if (w->first_psn == w->last_psn)
			opcode = info->only;
		else if (!seg)
			opcode = info->first;
		else
			opcode = last ? info->last : info->middle;
		next = psn + 1;
		break;
	case SCIRE_REQ_K_READ:
		/* One request stands for every response PSN still missing. */
		opcode = info->only;
		next = w->last_psn + 1;
		last = true;
		break;
	case SCIRE_REQ_K_ATOMIC_WRITE:
		paylen = w->len;
		opcode = info->only;
		next = psn + 1;
		last = true;
		break;
	default:
		opcode = info->only;
		next = psn + 1;
		last = true;
		break;
	}
	next = scire_psn(next);
	/*
	 * The table holds RC opcodes (transport bits 0); UC, UD and XRC
	 * differ there.
	 */
	if (ud)
		opcode |= SCIRE_OP_UD;
	else if (uc)
		opcode |= SCIRE_OP_UC;
	else if (scire_qp_is_xrc(qp))
		opcode |= SCIRE_OP_XRC;

	/*
	 * AckReq on the last packet of every message, every
	 * SCIRE_REQ_ACK_EVERY packets of a long one, and on the packet that
	 * fills the window (the shrunk one after a timeout too): a responder
	 * that only answers AckReq (rxe) then always has something to
	 * acknowledge that reopens the window.
	 */
	ackreq = !uc && (last || req->noack + 1 >= SCIRE_REQ_ACK_EVERY ||
			 scire_psn_dist(req->comp_psn, next) >= req->cwnd);
	se = last && (wqe->flags & SCIRE_WQE_F_SOLICITED) &&
	     (scire_opcode[opcode].mask & SCIRE_M_COMP);

	ret = scire_req_xmit(qp, tx, av, dest_qpn, index, opcode, psn, off,
			     paylen, ackreq, se);
	if (ret)
		return ret;

	/* Below hi_psn: this PSN went out before. */
	if (scire_psn_dist(req->comp_psn, psn) <
	    scire_psn_dist(req->comp_psn, req->hi_psn))
		scire_count(qp->sdev, SCIRE_CNT_RETRANSMITS, 1);
	req->noack = ackreq ? 0 : req->noack + 1;
	req->cur_psn = next;
	if (scire_psn_dist(req->comp_psn, next) >
	    scire_psn_dist(req->comp_psn, req->hi_psn))
		req->hi_psn = next;
	if (uc) {
		/* Nothing will acknowledge it: sent is done (IBA 9.8). */
		req->comp_psn = next;
		req->hi_psn = next;
	}
	if (last) {
		req->cur++;
		/* Every earlier UC WQE has retired, so this one is the head. */
		if (uc && qp->sq.consumer == index)
			scire_comp_retire(qp, IB_WC_SUCCESS, w->len);
	}
	return 0;
}

/*
 * Hand the packet at cur_psn to a same-host peer's responder without
 * building it (scire_resp_direct()): only a whole single-packet SEND or
 * WRITE at the SQ head of an RC QP, with nothing unacknowledged or being
 * sent again, whose payload is inline or short enough to gather here.
 * Return: 0 when delivered (recorded as sent, and completed if the
 * responder acknowledged it at once); -EAGAIN when not taken, nothing
 * changed (send it as a unit); or a positive ib_wc_status for a local
 * memory error reading the payload.
 */
static int scire_req_direct(struct scire_qp *qp, struct scire_req_tx *tx)
{
	struct scire_req *req = &qp->req;
	u32 index = req->cur, psn = req->cur_psn;
	const struct scire_send_wqe *wqe = scire_req_shadow(req, index);
	const struct scire_req_wqe *w = scire_req_wqe(req, index);
	const struct scire_wqe_info *info = &scire_wqe_info[wqe->opcode];
	struct scire_resp_in in = {};
	struct scire_pkt pkt = {};
	enum scire_direct res;
	struct scire_qp *peer;
	int ret;

	if (!req->local || qp->ibqp.qp_type != IB_QPT_RC ||
	    (info->kind != SCIRE_REQ_K_SEND && info->kind != SCIRE_REQ_K_WRITE) ||
	    qp->sq.consumer != index || w->first_psn != w->last_psn ||
	    req->comp_psn != psn || req->hi_psn != psn)
		return -EAGAIN;

	if (wqe->flags & SCIRE_WQE_F_INLINE) {
		in.buf = (void *)wqe->data;
	} else if (w->len > SCIRE_REQ_DIRECT_MAX) {
		return -EAGAIN;
	} else if (w->len) {
		ret = scire_req_tx_copy(qp, tx, index, 0, req->direct_buf, NULL,
					w->len);
		if (ret)
			return scire_req_mem_status(ret);
		in.buf = req->direct_buf;
	}

	pkt.opcode = info->only;
	pkt.mask = scire_opcode[pkt.opcode].mask;
	pkt.psn = psn;
	pkt.qpn = qp->dest_qpn & SCIRE_QPN_MASK;
	pkt.paylen = w->len;
	pkt.ackreq = true;
	pkt.se = (wqe->flags & SCIRE_WQE_F_SOLICITED) &&
		 (pkt.mask & SCIRE_M_COMP);
	pkt.local = true;
	in.pkt = &pkt;
	/* What scire_req_ext_hdrs() puts in the packet's headers. */
	if (pkt.mask & SCIRE_M_RETH) {
		in.va = wqe->rdma.remote_addr;
		in.rkey = wqe->rdma.rkey;
		in.len = w->len;
	}
	if (pkt.mask & SCIRE_M_IMMDT)
		in.imm = wqe->imm_data;
	if (pkt.mask & SCIRE_M_IETH)
		in.inv_rkey = wqe->imm_data;

	peer = scire_net_direct_peer(qp);
	if (!peer)
		return -EAGAIN;
	res = SCIRE_DIRECT_NOT;
	/* A softirq run (or a kernel poster's, BHs off) must not sleep. */
	if (scire_qp_direct_lock(peer, qp->run_atomic)) {
		res = scire_resp_direct(peer, &in);
		scire_qp_direct_unlock(peer, qp->run_atomic);
	}
	scire_qp_put(peer);
	if (res == SCIRE_DIRECT_NOT)
		return -EAGAIN;

	scire_count(qp->sdev, SCIRE_CNT_LOCAL_DIRECT, 1);
	/* Sent, as scire_req_send_next() records a last packet. */
	req->noack = 0;
	req->cur_psn = scire_psn(psn + 1);
	req->hi_psn = req->cur_psn;
	req->cur++;
	if (res == SCIRE_DIRECT_ACKED)
		scire_comp_direct_ack(qp, psn);
	return 0;
}

static bool scire_req_sending(struct scire_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

/**
 * scire_req_run() - fetch SQ WQEs and send their request packets.
 * @qp: a QP in RTS or SQD.
 *
 * Sends at most SCIRE_REQ_BUDGET packets, and none beyond req->cwnd
 * unacknowledged PSNs (SCIRE_REQ_WINDOW, less after a local ACK
 * timeout). READs and atomics are limited to qp->max_rd_atomic
 * outstanding; a fenced WQE waits for earlier ones; LOCAL_INV waits
 * until every earlier WQE has completed, REG_MR and BIND_MW take effect
 * when reached and complete in SQ order (IBA 9.7.1, 10.8.3.3). A
 * UC WQE completes when its last packet is sent (IBA 9.8), a UD or GSI
 * WQE when its one packet is (IBA 9.8.2); one naming an AH that is gone
 * completes with IB_WC_LOC_QP_OP_ERR. A WQE that fails validation or a
 * local memory check completes in error in order and moves the QP to ERR
 * (RC) or SQE (UC, UD, GSI). In SQD no new WQE is started, and
 * SQ_DRAINED is reported once nothing is outstanding.
 *
 * Context: the QP's execution context: process context, or a softirq run
 * (allocations use scire_qp_gfp(), so neither sleeps there).
 * Return: true if the budget ran out or memory was short and the worker
 * should call again; false when the requester waits for the peer, a timer
 * or new WQEs (each of which kicks the worker).
 */
bool scire_req_run(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	struct scire_req_tx tx = { .valid = false };
	unsigned int budget = SCIRE_REQ_BUDGET;
	bool more = false, sent = false;
	int ret;

	if (!req->shadow)
		return false;

	while (scire_req_sending(qp) && !req->rnr_wait) {
		if (!budget) {
			more = true;
			break;
		}
		if (req->cur == req->started) {
			enum scire_req_next next = scire_req_begin(qp);

			if (next == SCIRE_REQ_WAIT)
				break;
			if (next == SCIRE_REQ_AGAIN) {
				budget--;
				continue;
			}
		}
		/* A local operation done ahead of its turn sends nothing. */
		if (scire_req_wqe(req, req->cur)->state == SCIRE_REQ_WQE_DONE) {
			req->cur++;
			continue;
		}
		/* A failed WQE stops the queue until it completes at the head. */
		if (scire_req_wqe(req, req->cur)->state != SCIRE_REQ_WQE_ACTIVE)
			break;
		if (scire_psn_dist(req->comp_psn, req->cur_psn) >= req->cwnd)
			break;

		ret = scire_req_direct(qp, &tx);
		if (ret == -EAGAIN)
			ret = scire_req_send_next(qp, &tx);
		if (ret == -ENOMEM) {
			more = true;
			break;
		}
		if (ret > 0) {
			scire_req_fail(qp, req->cur, ret);
			break;
		}
		sent = true;
		budget--;
	}
	scire_req_tx_release(&tx);

	if (!scire_req_sending(qp))
		return false;
	if (sent)
		scire_req_arm(qp, false);
	if (READ_ONCE(qp->state) == IB_QPS_SQD && READ_ONCE(qp->sq_draining) &&
	    qp->sq.consumer == req->started)
		scire_qp_sq_drained(qp);
	return more;
}

/**
 * scire_req_flush() - complete every SQ WQE of a QP in ERR as flushed.
 * @qp: the QP, in ERR.
 *
 * WQEs already copied complete with IB_WC_WR_FLUSH_ERR (one that failed
 * locally and has not completed yet, with its own error), then those still
 * only in the ring, each header copied once; every one is retired in order
 * (IBA 10.3.1.7, 11.4.2.1). Called again whenever user space posts more.
 * A ring whose producer index is impossible is not read at all.
 *
 * Context: the QP's worker.
 */
void scire_req_flush(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	struct scire_wq *sq = &qp->sq;
	struct scire_req_wqe *w;
	u32 prod, n;

	if (!req->shadow)
		return;
	WRITE_ONCE(req->retrans_armed, false);
	timer_delete(&req->retrans_timer);
	timer_delete(&req->rnr_timer);
	req->rnr_wait = false;

	while (sq->consumer != req->fetched) {
		w = scire_req_wqe(req, sq->consumer);
		scire_comp_retire(qp, w->state == SCIRE_REQ_WQE_ERROR ?
				  w->status : IB_WC_WR_FLUSH_ERR, 0);
	}
	req->started = req->fetched;
	req->cur = req->fetched;
	req->rd_atomic = 0;

	/* Pairs with the poster's store-release after writing the slot. */
	prod = smp_load_acquire(&sq->ring->producer);
	n = prod - sq->consumer;
	if (n > sq->num_entries)
		return;
	while (n--) {
		u32 index = sq->consumer;

		memcpy(scire_req_shadow(req, index), scire_wq_slot(sq, index),
		       sizeof(struct scire_send_wqe));
		scire_req_wqe(req, index)->state = SCIRE_REQ_WQE_NEW;
		scire_comp_retire(qp, IB_WC_WR_FLUSH_ERR, 0);
	}
	req->fetched = sq->consumer;
	req->started = sq->consumer;
	req->cur = sq->consumer;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "../kunit/scire_hdr_test.c"
#endif
