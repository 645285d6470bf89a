/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: requester and completer state (IBA 9.7, requester side).
 *
 * The requester (scire_req.c) copies SQ WQEs into a kernel shadow and turns
 * them into request packets; the completer (scire_comp.c) matches responses
 * against them, retires them in order and drives retransmission (RC). A UC
 * WQE retires once sent. Both run only in the QP's work item.
 *
 * SQ indices, all free-running u32 counters over the ring:
 *
 *	qp->sq.consumer <= started <= fetched <= ring producer
 *	qp->sq.consumer <= cur <= started
 *
 * [consumer, started) are WQEs the requester has begun and the completer
 * has not retired; [started, fetched) is at most one WQE copied and
 * validated but waiting (fence, READ/atomic limit, local operation);
 * cur is the WQE the requester sends next, before started after a rewind.
 *
 * PSNs: every started WQE owns [first_psn, last_psn]. comp_psn is the
 * oldest PSN not yet acknowledged, hi_psn one past the highest PSN sent,
 * tail_psn the first PSN no WQE owns, cur_psn the next PSN to send:
 *
 *	comp_psn <= cur_psn <= tail_psn, comp_psn <= hi_psn <= tail_psn
 *
 * in the order of distance from comp_psn. That span stays below 2^24
 * (the window plus one message of at most 2^31 bytes at MTU 256), so
 * distances, not serial comparisons, order PSNs here.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_REQ_H
#define SCIRE_REQ_H

#include <linux/timer.h>
#include <linux/types.h>
#include <net/dst_cache.h>
#include <rdma/scire-abi.h>

#include "scire_hdr.h"

struct scire_qp;
struct sk_buff;

/* Packets sent and not yet acknowledged, at most (IBA leaves it open). */
#define SCIRE_REQ_WINDOW	256
/* A long message asks for an ACK at least this often. */
#define SCIRE_REQ_ACK_EVERY	64
/* Packets one scire_req_run() call sends before yielding the worker. */
#define SCIRE_REQ_BUDGET	64
/* Payload bytes a direct same-host request gathers from its SGL, at most. */
#define SCIRE_REQ_DIRECT_MAX	256
/* Packets in flight after a local ACK timeout, from which the window grows. */
#define SCIRE_REQ_LOSS_WINDOW	1
/* Floor of the local ACK timeout, so slow (emulated) hosts do not spin. */
#define SCIRE_REQ_MIN_TIMEOUT_MS 10

/**
 * enum scire_req_kind - how the requester carries a WQE opcode.
 * @SCIRE_REQ_K_SEND:	SEND packets, segmented by the path MTU.
 * @SCIRE_REQ_K_WRITE:	RDMA WRITE packets, RETH on the first.
 * @SCIRE_REQ_K_READ:	one READ request; the responder segments.
 * @SCIRE_REQ_K_ATOMIC:	one atomic request, answered by ATOMIC ACKNOWLEDGE.
 * @SCIRE_REQ_K_LOCAL:	no packet; executed when it reaches the SQ head.
 * @SCIRE_REQ_K_ATOMIC_WRITE: one RDMA ATOMIC WRITE request with its 8
 *			bytes (IBA 1.5), answered by a READ RESPONSE ONLY
 *			without payload; counted with READs and atomics.
 * @SCIRE_REQ_K_FLUSH:	one RDMA FLUSH request, FETH and RETH and no
 *			payload (IBA 1.5), answered and counted as an
 *			ATOMIC WRITE is.
 */
enum scire_req_kind {
	SCIRE_REQ_K_SEND,
	SCIRE_REQ_K_WRITE,
	SCIRE_REQ_K_READ,
	SCIRE_REQ_K_ATOMIC,
	SCIRE_REQ_K_LOCAL,
	SCIRE_REQ_K_ATOMIC_WRITE,
	SCIRE_REQ_K_FLUSH,
};

/*
 * A READ, atomic, ATOMIC WRITE or FLUSH: uses a responder resource (IBA
 * 9.4.4; rdma_rxe keeps one for the IBA 1.5 operations too).
 */
static inline bool scire_req_kind_rd_atomic(u8 kind)
{
	return kind == SCIRE_REQ_K_READ || kind == SCIRE_REQ_K_ATOMIC ||
	       kind == SCIRE_REQ_K_ATOMIC_WRITE || kind == SCIRE_REQ_K_FLUSH;
}

/**
 * struct scire_wqe_info - what one SQ WQE opcode is (the single table of
 * WQE opcode properties, scire_wqe_info[]).
 * @kind:	enum scire_req_kind.
 * @cqe_opcode:	enum scire_cqe_opcode of its completion.
 * @first:	RC BTH opcode (UC: the same with the UC transport bits) of
 *		the first packet of a multi-packet message.
 * @middle:	... of the packets in between.
 * @last:	... of the last packet.
 * @only:	... of a single-packet message (the request of READ/atomics).
 * @local_err:	enum ib_wc_status when a local operation fails.
 */
struct scire_wqe_info {
	u8 kind;
	u8 cqe_opcode;
	u8 first;
	u8 middle;
	u8 last;
	u8 only;
	u8 local_err;
};

extern const struct scire_wqe_info scire_wqe_info[SCIRE_WQE_OP_MAX];

/**
 * enum scire_req_wqe_state - life of a shadowed WQE.
 * @SCIRE_REQ_WQE_NEW:		copied and valid, not started.
 * @SCIRE_REQ_WQE_ACTIVE:	started: owns its PSNs, awaits completion.
 * @SCIRE_REQ_WQE_ERROR:	failed locally (validation, local memory);
 *				completes with @status once it is the SQ
 *				head, and the QP then enters ERR.
 * @SCIRE_REQ_WQE_DONE:		a local operation (REG_MR, BIND_MW) executed
 *				while earlier WQEs were outstanding; it owns
 *				no PSNs and completes successfully right
 *				after the WQE before it.
 */
enum scire_req_wqe_state {
	SCIRE_REQ_WQE_NEW,
	SCIRE_REQ_WQE_ACTIVE,
	SCIRE_REQ_WQE_ERROR,
	SCIRE_REQ_WQE_DONE,
};

/**
 * struct scire_req_wqe - requester state of one shadowed WQE.
 * @first_psn:	PSN of its first packet (ACTIVE).
 * @last_psn:	PSN of its last packet; READ: of its last response.
 * @len:	message length in bytes (sum of SGEs or inline_len), <= 2^31.
 * @state:	enum scire_req_wqe_state.
 * @status:	enum ib_wc_status to complete an ERROR WQE with.
 */
struct scire_req_wqe {
	u32 first_psn;
	u32 last_psn;
	u32 len;
	u8 state;
	u8 status;
};

/**
 * struct scire_req - requester and completer state of one QP. Touched only
 * from the QP's work item, and from modify_qp/destroy_qp while the work
 * item is stopped (the timers are the exception: their callbacks only set
 * a bit in qp->pending and kick the worker).
 * @shadow:	kernel copy of the SQ, wqe_size bytes per slot.
 * @wqe:	per-slot state, indexed like @shadow.
 * @direct_buf:	SCIRE_REQ_DIRECT_MAX bytes that gather the payload of a
 *		direct request (scire_resp_direct()). Not on the stack: the
 *		kernel may be built to zero every stack array on entry.
 * @mask:	SQ slots - 1.
 * @wqe_size:	bytes per slot.
 * @fetched:	WQEs copied from the ring.
 * @started:	WQEs begun.
 * @cur:	WQE the requester sends from next.
 * @cur_psn:	next PSN to send.
 * @tail_psn:	first PSN no WQE owns yet.
 * @comp_psn:	oldest PSN not acknowledged.
 * @hi_psn:	one past the highest PSN ever sent.
 * @back_psn:	PSN the last go-back (NAK, lost response) resent from.
 * @rnr_psn:	PSN the last RNR NAK named.
 * @mtu:	path MTU in bytes, fixed at RTS so PSN ranges stay valid;
 *		SCIRE_LOCAL_MTU if @local.
 * @cwnd:	PSNs that may be sent and unacknowledged, at most: from
 *		SCIRE_REQ_LOSS_WINDOW after a local ACK timeout, growing by
 *		each PSN acknowledged up to SCIRE_REQ_WINDOW.
 * @rto_cwnd:	@cwnd before that timeout shrank it.
 * @rd_atomic:	READ/atomic WQEs started and not completed.
 * @noack:	packets sent since the last one with AckReq.
 * @retry_left:	retries left on timeout or sequence error (IBA 9.7.6.1).
 * @rnr_left:	RNR retries left (qp->rnr_retry 7: not counted).
 * @went_back:	@back_psn is valid: a go-back to it happened and no ACK
 *		moved @comp_psn since, so a repeat of it is ignored.
 * @read_retry: a READ was asked again from where its responses broke off;
 *		until the new response begins (a FIRST or ONLY at comp_psn),
 *		responses after a gap are still those of the old one and are
 *		dropped without going back again.
 * @rnr_wait:	an RNR NAK paused sending until @rnr_timer.
 * @rto_probe:	a local ACK timeout resent the oldest packet and nothing
 *		was acknowledged since: the next ACK tells whether the
 *		timeout was spurious.
 * @stopped:	timers are being stopped; do not re-arm them.
 * @local:	the peer is a scire QP of this host and the fast path was on
 *		at RTS: requests are same-host units (struct scire_pkt).
 * @route:	the route to qp->av, so a connected QP's packets skip the
 *		FIB lookup (reset when modify_qp changes the AV).
 * @retrans_armed: packets are unacknowledged and @retrans_deadline is
 *		when the local ACK timeout expires for them.
 * @retrans_deadline: that moment, in jiffies. Progress moves it without
 *		touching @retrans_timer, which may fire early: it then only
 *		re-arms itself (scire_req_arm()).
 * @retrans_timer: local ACK timeout (IBA 9.7.6.1.2); pending whenever
 *		@retrans_armed is set (and possibly for a while after).
 * @rnr_timer:	RNR NAK delay (IBA 9.7.5.2.8).
 */
struct scire_req {
	void *shadow;
	struct scire_req_wqe *wqe;
	void *direct_buf;
	u32 mask;
	u32 wqe_size;

	u32 fetched;
	u32 started;
	u32 cur;

	u32 cur_psn;
	u32 tail_psn;
	u32 comp_psn;
	u32 hi_psn;
	u32 back_psn;
	u32 rnr_psn;
	u32 mtu;
	u32 cwnd;
	u32 rto_cwnd;

	u32 rd_atomic;
	u32 noack;
	u8 retry_left;
	u8 rnr_left;
	bool went_back;
	bool read_retry;
	bool rnr_wait;
	bool rto_probe;
	bool stopped;
	bool local;
	bool retrans_armed;
	unsigned long retrans_deadline;

	struct dst_cache route;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
};

static inline struct scire_send_wqe *scire_req_shadow(struct scire_req *req,
						      u32 index)
{
	return req->shadow + (size_t)(index & req->mask) * req->wqe_size;
}

static inline struct scire_req_wqe *scire_req_wqe(struct scire_req *req,
						  u32 index)
{
	return &req->wqe[index & req->mask];
}

/* PSN distance from @from forward to @to, 0..2^24-1. */
static inline u32 scire_psn_dist(u32 from, u32 to)
{
	return (to - from) & SCIRE_PSN_MASK;
}

/* scire_req.c */
int scire_req_init(struct scire_qp *qp);
void scire_req_cleanup(struct scire_qp *qp);
void scire_req_reset(struct scire_qp *qp);
void scire_req_start(struct scire_qp *qp);
bool scire_req_run(struct scire_qp *qp);
void scire_req_flush(struct scire_qp *qp);
void scire_req_stop(struct scire_qp *qp);
void scire_req_rewind(struct scire_qp *qp, u32 psn);
void scire_req_arm(struct scire_qp *qp, bool restart);

/* scire_comp.c */
void scire_comp_rcv(struct scire_qp *qp, struct sk_buff *skb);
void scire_comp_timers(struct scire_qp *qp);
void scire_comp_retire(struct scire_qp *qp, u8 status, u32 byte_len);
bool scire_comp_head_error(struct scire_qp *qp);
void scire_comp_direct_ack(struct scire_qp *qp, u32 psn);

#endif /* SCIRE_REQ_H */
