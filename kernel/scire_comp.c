// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the RC completer (IBA 1.4 vol. 1 9.7.5.1, 9.7.6, 9.9, requester
 * side).
 *
 * The completer matches ACKNOWLEDGE, ATOMIC ACKNOWLEDGE and READ RESPONSE
 * packets against the WQEs the requester started, places READ and atomic
 * results into the local SGL, retires WQEs in order with their CQEs, and
 * decides when the requester must send again: on a PSN sequence NAK, an RNR
 * NAK, a response that shows earlier responses were lost, or a timeout.
 *
 * A timeout says nothing about which packets were lost. On a receiver or
 * a link that is only slow, the originals are still queued on the way,
 * and resending a whole window behind them doubles the queue each time,
 * until the retries run out with nothing lost (seen on the debug kernel,
 * and on a veth pair limited to a few Mbit/s). So a timeout resends only
 * the oldest packet: the window shrinks to SCIRE_REQ_LOSS_WINDOW PSNs and
 * grows again by every PSN acknowledged, as TCP's congestion window does
 * after a retransmission timeout (RFC 5681 3.1). If the first ACK after
 * it acknowledges more than that one packet, the originals got through
 * and the timeout was spurious: the window is given back and sending
 * goes on after what had been sent, rather than sending it all again
 * (the idea of F-RTO, RFC 5682). Anything lost among it still shows as a
 * sequence NAK or another timeout. A sequence NAK names its loss and
 * leaves the window as it is.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/jiffies.h>

#include "scire.h"
#include "scire_trace.h"

/* RNR NAK timer field -> delay in microseconds (IBA 9.7.5.2.8, table 45). */
static const u32 scire_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * NAK code -> completion status (IBA 9.7.5.2.4, 11.6.2). A PSN sequence
 * error is retried, not completed; reserved codes are a bad response.
 */
static const u8 scire_nak_status[32] = {
	[SCIRE_NAK_INVALID_REQUEST]	= IB_WC_REM_INV_REQ_ERR,
	[SCIRE_NAK_REMOTE_ACCESS_ERR]	= IB_WC_REM_ACCESS_ERR,
	[SCIRE_NAK_REMOTE_OP_ERR]	= IB_WC_REM_OP_ERR,
	[SCIRE_NAK_INVALID_RD_REQUEST]	= IB_WC_REM_INV_RD_REQ_ERR,
};

static bool scire_comp_active(struct scire_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

static bool scire_comp_is_rd_atomic(const struct scire_send_wqe *wqe)
{
	u8 kind;

	if (wqe->opcode >= SCIRE_WQE_OP_MAX)
		return false;
	kind = scire_wqe_info[wqe->opcode].kind;
	return scire_req_kind_rd_atomic(kind);
}

/* Post the send CQE of @wqe if it is signalled or failed (IBA 10.7.3.1). */
static void scire_comp_post(struct scire_qp *qp,
			    const struct scire_send_wqe *wqe, u8 status,
			    u32 byte_len)
{
	bool error = status != IB_WC_SUCCESS;
	struct scire_cqe cqe = {};

	if (!error && !(wqe->flags & SCIRE_WQE_F_SIGNALED) && !qp->sq_sig_all)
		return;
	cqe.wr_id = wqe->wr_id;
	cqe.status = status;
	cqe.opcode = wqe->opcode < SCIRE_WQE_OP_MAX ?
		scire_wqe_info[wqe->opcode].cqe_opcode : SCIRE_CQE_OP_SEND;
	cqe.byte_len = error ? 0 : byte_len;
	cqe.qp_num = qp->ibqp.qp_num;
	/* An overrun leaves the CQ in error and raises its event. */
	scire_cq_post(qp->scq, &cqe, &qp->ibqp, error);
}

/* Retire the SQ head WQE (see scire_comp_retire()). */
static void scire_comp_retire_one(struct scire_qp *qp, u8 status,
				  u32 byte_len)
{
	struct scire_req *req = &qp->req;
	u32 index = qp->sq.consumer;
	const struct scire_send_wqe *wqe = scire_req_shadow(req, index);
	struct scire_req_wqe *w = scire_req_wqe(req, index);

	if (w->state == SCIRE_REQ_WQE_ACTIVE && scire_comp_is_rd_atomic(wqe) &&
	    req->rd_atomic)
		req->rd_atomic--;
	w->state = SCIRE_REQ_WQE_NEW;
	/*
	 * Free the slot before the CQE can be seen: a poster that counts SQ
	 * room by completions (perftest does) posts again as soon as it
	 * polls the CQE and must find the room. The CQE is built from the
	 * kernel's shadow copy, so the slot is not needed any more.
	 */
	WRITE_ONCE(qp->sq.consumer, index + 1);
	/* Pairs with the poster's load-acquire of the consumer index. */
	smp_store_release(&qp->sq.ring->consumer, index + 1);
	scire_comp_post(qp, wqe, status, byte_len);
}

/**
 * scire_comp_retire() - complete the SQ head WQE and hand its slot back.
 * @qp: the QP; the head (qp->sq.consumer) is a shadowed WQE.
 * @status: enum ib_wc_status of the completion.
 * @byte_len: bytes transferred (READ: bytes read; atomics: 8).
 *
 * Publishes the new consumer index, then posts the CQE if the WQE is
 * signalled, the QP signals all, or @status is an error: by the time user
 * space sees a completion, the SQ room it implies is there. WQEs retire
 * strictly in order (IBA 10.8.3.3). A successful completion also retires
 * the local operations right behind it that were executed ahead of their
 * turn (SCIRE_REQ_WQE_DONE); after an error they are left to the flush.
 *
 * Context: the QP's worker (or modify/destroy with the worker stopped).
 */
void scire_comp_retire(struct scire_qp *qp, u8 status, u32 byte_len)
{
	struct scire_req *req = &qp->req;

	scire_comp_retire_one(qp, status, byte_len);
	while (status == IB_WC_SUCCESS && qp->sq.consumer != req->started &&
	       scire_req_wqe(req, qp->sq.consumer)->state == SCIRE_REQ_WQE_DONE)
		scire_comp_retire_one(qp, IB_WC_SUCCESS, 0);
}

/**
 * scire_comp_head_error() - complete a failed WQE that reached the SQ head.
 * @qp: the QP.
 *
 * A WQE that failed locally waits until every earlier one has completed,
 * then completes with its own status (IBA 10.8.3.3: completions stay in
 * order) and moves an RC QP to ERR, a UC, UD or GSI QP to SQE (IBA
 * 10.3.1.5: its receive side is unaffected); either flushes the rest of
 * the SQ.
 *
 * Context: the QP's worker.
 * Return: true if it completed one (the QP is now in ERR or SQE).
 */
bool scire_comp_head_error(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;
	struct scire_req_wqe *w;

	if (qp->sq.consumer == req->started)
		return false;
	w = scire_req_wqe(req, qp->sq.consumer);
	if (w->state != SCIRE_REQ_WQE_ERROR)
		return false;
	/*
	 * The state first: a consumer that polls the error CQE and then
	 * queries the QP must find it in ERR (or SQE) already.
	 */
	if (scire_qp_is_rc(qp))
		scire_qp_error(qp);
	else
		scire_qp_sq_error(qp);
	scire_comp_retire(qp, w->status, 0);
	return true;
}

/* Complete the head WQE with a fatal status and move the QP to ERR. */
static void scire_comp_fail(struct scire_qp *qp, u8 status)
{
	struct scire_req *req = &qp->req;
	struct scire_req_wqe *w;

	/* ERR before the CQE is visible, as in scire_comp_head_error(). */
	scire_qp_error(qp);
	if (qp->sq.consumer != req->started) {
		w = scire_req_wqe(req, qp->sq.consumer);
		if (w->state == SCIRE_REQ_WQE_ERROR)
			status = w->status;
		trace_scire_wqe_fail(qp, req->comp_psn, status);
		scire_comp_retire(qp, status, 0);
	}
}

/*
 * Move comp_psn forward to @psn (distances from @base, the comp_psn the
 * packet was checked against). Forward progress reloads the retry counters
 * (IBA 9.7.6.1.3 counts consecutive failures) and reopens a window a
 * timeout shrank by the PSNs acknowledged.
 */
static void scire_comp_advance(struct scire_qp *qp, u32 base, u32 psn)
{
	struct scire_req *req = &qp->req;

	psn = scire_psn(psn);
	if (scire_psn_dist(base, psn) <= scire_psn_dist(base, req->comp_psn))
		return;
	if (req->cwnd < SCIRE_REQ_WINDOW)
		req->cwnd = min_t(u32, SCIRE_REQ_WINDOW,
				  req->cwnd + scire_psn_dist(req->comp_psn, psn));
	req->comp_psn = psn;
	req->retry_left = READ_ONCE(qp->retry_cnt);
	req->rnr_left = READ_ONCE(qp->rnr_retry);
	req->went_back = false;
}

/*
 * Spend one of retry_cnt's retries on sending again from @psn, or, with
 * none left, complete the oldest WQE with IB_WC_RETRY_EXC_ERR and move the
 * QP to ERR (IBA 9.7.6.1.3). Return: true if the requester went back.
 */
static bool scire_comp_retry(struct scire_qp *qp, u32 psn,
			     enum scire_rewind_reason why)
{
	struct scire_req *req = &qp->req;

	if (!req->retry_left) {
		scire_count(qp->sdev, SCIRE_CNT_RETRY_EXCEEDED, 1);
		scire_comp_fail(qp, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	req->retry_left--;
	req->went_back = true;
	req->back_psn = psn;
	trace_scire_rewind(qp, why, psn, req->retry_left);
	scire_req_rewind(qp, psn);
	return true;
}

/*
 * Send again from @psn after a sequence NAK or lost responses, counting
 * against retry_cnt (IBA 9.7.5.2.1, 9.7.6.1.3). Repeats of the same
 * event (several NAKs or ACKs naming the same point, with no progress in
 * between) go back only once; the timer covers a retransmission lost again.
 */
static void scire_comp_go_back(struct scire_qp *qp, u32 psn,
			       enum scire_rewind_reason why)
{
	struct scire_req *req = &qp->req;

	if (req->went_back && req->back_psn == psn)
		return;
	scire_comp_retry(qp, psn, why);
}

/*
 * The responses of a READ or atomic at the SQ head broke off: ask again
 * from comp_psn (IBA 9.7.5.1.5), once. What the responder sent before the
 * new request reached it keeps arriving with gaps in it; going back for
 * each of those would restart the response again and again, so they are
 * dropped until the new response begins (see scire_comp_read()) or the
 * retransmit timer fires.
 */
static void scire_comp_read_gap(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;

	if (req->read_retry)
		return;
	scire_comp_go_back(qp, req->comp_psn, SCIRE_REWIND_READ_GAP);
	req->read_retry = true;
}

/*
 * Does a PSN @dpsn past @base lie at or after the first PSN of the READ or
 * atomic @w at the SQ head? When some of a READ's responses have been
 * placed, comp_psn (@base) is inside its range and its first PSN lies
 * behind @base: every PSN from @base on then reaches it.
 */
static bool scire_comp_reaches(const struct scire_req_wqe *w, u32 base,
			       u32 dpsn)
{
	if (scire_psn_dist(w->first_psn, base) <=
	    scire_psn_dist(w->first_psn, w->last_psn))
		return true;
	return scire_psn_dist(base, w->first_psn) <= dpsn;
}

/*
 * Retire the WQEs a response with PSN @psn acknowledges: every SEND/WRITE
 * whose last PSN is before @psn, and with @inclusive (a positive ACK, IBA
 * 9.7.5.1.1: coalesced) up to @psn itself. A READ or atomic met on the way
 * has not had its response, yet the responder went past it: its responses
 * were lost, so ask again (IBA 9.7.5.1.5, implicit NAK).
 * Return: true to go on with the packet, false if it is spent.
 */
static bool scire_comp_walk(struct scire_qp *qp, u32 base, u32 psn,
			    bool inclusive)
{
	struct scire_req *req = &qp->req;
	u32 dpsn = scire_psn_dist(base, psn), dlast;
	const struct scire_send_wqe *wqe;
	struct scire_req_wqe *w;

	while (qp->sq.consumer != req->started) {
		w = scire_req_wqe(req, qp->sq.consumer);
		wqe = scire_req_shadow(req, qp->sq.consumer);
		if (w->state != SCIRE_REQ_WQE_ACTIVE)
			break;
		dlast = scire_psn_dist(base, w->last_psn);
		if (scire_comp_is_rd_atomic(wqe)) {
			/*
			 * An ACK past a READ/atomic means its responses were
			 * lost (implied NAK); an ACK naming the PSN just
			 * before it is the normal order and says nothing
			 * about it.
			 */
			if (dlast < dpsn ||
			    (inclusive && scire_comp_reaches(w, base, dpsn))) {
				scire_comp_read_gap(qp);
				return false;
			}
			break;
		}
		if (dlast > dpsn || (dlast == dpsn && !inclusive))
			break;
		scire_comp_advance(qp, base, w->last_psn + 1);
		scire_comp_retire(qp, IB_WC_SUCCESS, w->len);
	}
	return !scire_comp_head_error(qp);
}

/* The head WQE if it is started and of @kind, else NULL. */
static struct scire_req_wqe *scire_comp_head(struct scire_qp *qp, u8 kind)
{
	struct scire_req *req = &qp->req;
	const struct scire_send_wqe *wqe;
	struct scire_req_wqe *w;

	if (qp->sq.consumer == req->started)
		return NULL;
	w = scire_req_wqe(req, qp->sq.consumer);
	wqe = scire_req_shadow(req, qp->sq.consumer);
	if (w->state != SCIRE_REQ_WQE_ACTIVE ||
	    scire_wqe_info[wqe->opcode].kind != kind)
		return NULL;
	return w;
}

/*
 * Write @len bytes at byte @off of the head WQE's SGL (LOCAL_WRITE): the
 * payload of @skb, or without one, @buf.
 */
static int scire_comp_place(struct scire_qp *qp, u64 off,
			    struct sk_buff *skb, void *buf, u32 len)
{
	struct scire_send_wqe *wqe = scire_req_shadow(&qp->req,
						      qp->sq.consumer);
	struct scire_sgl sgl;
	int ret = 0;

	scire_sgl_init(&sgl, to_spd(qp->ibqp.pd),
		       (const struct scire_sge *)wqe->data, wqe->num_sge);
	if (off)
		ret = scire_sgl_seek(&sgl, off);
	if (!ret && skb)
		ret = scire_pkt_to_sgl(skb,
				       scire_opcode[scire_pkt(skb)->opcode].hdr_len,
				       len, &sgl);
	else if (!ret)
		ret = scire_sgl_copy(&sgl, buf, len, true);
	scire_sgl_release(&sgl);
	return ret;
}

static u8 scire_comp_mem_status(int err)
{
	return err == -ENOSPC ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/*
 * The READ RESPONSE ONLY without payload that answers an RDMA ATOMIC
 * WRITE or an RDMA FLUSH (IBA 1.5, as rdma_rxe sends it): the 8 bytes are
 * in place, or the range is flushed.
 */
static void scire_comp_atomic_write(struct scire_qp *qp, struct sk_buff *skb,
				    struct scire_req_wqe *w, u32 base, u32 psn)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_req *req = &qp->req;

	if (psn != w->first_psn)
		return;
	if ((pkt->opcode & ~SCIRE_OP_TRANSPORT_MASK) !=
	    SCIRE_OP_READ_RESPONSE_ONLY || pkt->paylen) {
		scire_comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	/* Asked again after lost responses: this is the new answer. */
	req->read_retry = false;
	scire_comp_advance(qp, base, psn + 1);
	scire_comp_retire(qp, IB_WC_SUCCESS, w->len);
	/* As after a READ: a WQE that failed behind it is the head now. */
	scire_comp_head_error(qp);
}

/*
 * READ RESPONSE FIRST/MIDDLE/LAST/ONLY (IBA 9.7.5.1.2), and the response
 * to an ATOMIC WRITE or a FLUSH.
 */
static void scire_comp_read(struct scire_qp *qp, struct sk_buff *skb,
			    u32 base, u32 psn)
{
	struct scire_req *req = &qp->req;
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_req_wqe *w;
	u32 off, expect;
	bool last;
	int ret;

	if (!scire_comp_walk(qp, base, psn, false))
		return;
	w = scire_comp_head(qp, SCIRE_REQ_K_ATOMIC_WRITE);
	if (!w)
		w = scire_comp_head(qp, SCIRE_REQ_K_FLUSH);
	if (w) {
		scire_comp_atomic_write(qp, skb, w, base, psn);
		return;
	}
	w = scire_comp_head(qp, SCIRE_REQ_K_READ);
	if (!w)
		return;
	if (psn != req->comp_psn) {
		/* Responses come in PSN order; one before this went missing. */
		scire_comp_read_gap(qp);
		return;
	}
	/* The READ asked again answers from here on. */
	if (pkt->mask & (SCIRE_M_FIRST | SCIRE_M_ONLY))
		req->read_retry = false;

	/*
	 * Any of FIRST/MIDDLE may start the data of a READ asked again from
	 * the middle, but the length and where the last packet falls are
	 * fixed by the MTU the PSNs were reserved with.
	 */
	off = scire_psn_dist(w->first_psn, psn) * req->mtu;
	last = psn == w->last_psn;
	expect = last ? w->len - off : req->mtu;
	if (!(pkt->mask & SCIRE_M_LAST) != !last || pkt->paylen != expect) {
		scire_comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	if (expect) {
		ret = scire_comp_place(qp, off, skb, NULL, expect);
		if (ret) {
			scire_comp_fail(qp, scire_comp_mem_status(ret));
			return;
		}
	}
	scire_comp_advance(qp, base, psn + 1);
	if (last) {
		scire_comp_retire(qp, IB_WC_SUCCESS, w->len);
		/*
		 * A WQE that failed while the READ was outstanding is the
		 * head now, and no ACK is coming that would complete it.
		 */
		scire_comp_head_error(qp);
	}
}

/* ATOMIC ACKNOWLEDGE: the original remote value (IBA 9.5.3, 9.7.5.1.3). */
static void scire_comp_atomic(struct scire_qp *qp, struct sk_buff *skb,
			      u32 base, u32 psn)
{
	struct scire_atmack *atm = scire_pkt_hdr(skb, SCIRE_H_ATMACK);
	struct scire_req_wqe *w;
	u64 orig;
	int ret;

	if (!scire_comp_walk(qp, base, psn, false))
		return;
	w = scire_comp_head(qp, SCIRE_REQ_K_ATOMIC);
	if (!w || psn != w->first_psn)
		return;

	/* The local buffer gets the value in host order. */
	orig = (u64)be32_to_cpu(atm->orig_hi) << 32 | be32_to_cpu(atm->orig_lo);
	ret = scire_comp_place(qp, 0, NULL, &orig, sizeof(orig));
	if (ret) {
		scire_comp_fail(qp, scire_comp_mem_status(ret));
		return;
	}
	scire_comp_advance(qp, base, psn + 1);
	scire_comp_retire(qp, IB_WC_SUCCESS, sizeof(orig));
	/* As after a READ: a WQE that failed behind it is the head now. */
	scire_comp_head_error(qp);
}

/* RNR NAK: wait, then send again from @psn (IBA 9.7.5.2.8). */
static void scire_comp_rnr(struct scire_qp *qp, u32 base, u32 psn, u8 code)
{
	struct scire_req *req = &qp->req;

	if (!scire_comp_walk(qp, base, psn, false))
		return;
	scire_comp_advance(qp, base, psn);
	if (req->rnr_wait && req->rnr_psn == psn)
		return;
	if (!req->rnr_left) {
		scire_count(qp->sdev, SCIRE_CNT_RNR_RETRY_EXCEEDED, 1);
		scire_comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	/* rnr_retry 7 means retry forever (IBA 9.7.5.2.8). */
	if (req->rnr_left != 7)
		req->rnr_left--;
	req->rnr_wait = true;
	req->rnr_psn = psn;
	/* A sequence NAK for the same PSN reports the same loss. */
	req->went_back = true;
	req->back_psn = psn;
	trace_scire_rewind(qp, SCIRE_REWIND_RNR_NAK, psn, req->rnr_left);
	scire_req_rewind(qp, psn);
	WRITE_ONCE(req->retrans_armed, false);
	timer_delete(&req->retrans_timer);
	if (!READ_ONCE(req->stopped))
		mod_timer(&req->rnr_timer, jiffies +
			  usecs_to_jiffies(scire_rnr_usecs[code & 0x1f]));
}

/* ACKNOWLEDGE: an ACK, RNR NAK or NAK by its AETH syndrome (IBA 9.7.5.1). */
static void scire_comp_ack(struct scire_qp *qp, struct sk_buff *skb,
			   u32 base, u32 psn)
{
	struct scire_aeth *aeth = scire_pkt_hdr(skb, SCIRE_H_AETH);
	u8 syn = scire_aeth_syndrome(aeth);
	u8 code = syn & ~SCIRE_AETH_TYPE_MASK;
	u8 status;

	switch (syn & SCIRE_AETH_TYPE_MASK) {
	case SCIRE_AETH_ACK:
		if (scire_comp_walk(qp, base, psn, true))
			scire_comp_advance(qp, base, psn + 1);
		break;
	case SCIRE_AETH_RNR_NAK:
		trace_scire_nak_recv(qp, syn, psn);
		scire_count(qp->sdev, SCIRE_CNT_RNR_NAK_RCVD, 1);
		scire_comp_rnr(qp, base, psn, code);
		break;
	case SCIRE_AETH_NAK:
		trace_scire_nak_recv(qp, syn, psn);
		if (!scire_comp_walk(qp, base, psn, false))
			break;
		if (code == SCIRE_NAK_PSN_SEQ_ERR) {
			scire_count(qp->sdev, SCIRE_CNT_SEQ_NAK_RCVD, 1);
			/* All before the responder's expected PSN arrived. */
			scire_comp_advance(qp, base, psn);
			scire_comp_go_back(qp, psn, SCIRE_REWIND_SEQ_NAK);
			break;
		}
		status = scire_nak_status[code];
		scire_comp_fail(qp, status ? status : IB_WC_BAD_RESP_ERR);
		break;
	default:
		/* Reserved syndrome type: ignore the packet. */
		break;
	}
}

/* After a response: follow comp_psn if it moved on from @base. */
static void scire_comp_moved(struct scire_qp *qp, u32 base)
{
	struct scire_req *req = &qp->req;

	if (!scire_comp_active(qp) || req->comp_psn == base)
		return;
	/*
	 * Packets the peer acknowledged while we were rewound need no resend.
	 * Measured from the new comp_psn: a cursor rewound behind the old
	 * one (a timeout, then the late responses arrive) is outside
	 * [comp_psn, tail_psn] as well, and must not stay on a WQE that has
	 * just retired.
	 */
	if (scire_psn_dist(req->comp_psn, req->cur_psn) >
	    scire_psn_dist(req->comp_psn, req->tail_psn))
		scire_req_rewind(qp, req->comp_psn);
	/*
	 * The first progress after a timeout: if this response acknowledged
	 * more than the one packet resent, and is no NAK, what went out
	 * before the timeout is still on its way (see the top of this file).
	 */
	if (req->rto_probe) {
		req->rto_probe = false;
		/*
		 * hi_psn is still what it was at the timeout: since then at
		 * most the oldest packet (or READ request) went out again.
		 */
		if (scire_psn_dist(base, req->comp_psn) > SCIRE_REQ_LOSS_WINDOW &&
		    !req->went_back && !req->rnr_wait) {
			req->cwnd = max(req->cwnd, req->rto_cwnd);
			if (scire_psn_dist(req->comp_psn, req->cur_psn) <
			    scire_psn_dist(req->comp_psn, req->hi_psn))
				scire_req_rewind(qp, req->hi_psn);
		}
	}
	scire_req_arm(qp, true);
}

/**
 * scire_comp_rcv() - process one response packet for the requester.
 * @qp: an RC QP.
 * @skb: ACKNOWLEDGE, ATOMIC ACKNOWLEDGE or READ RESPONSE, parsed into
 *	 scire_pkt(skb) by the receive path; consumed.
 *
 * Only a PSN the requester has sent and not yet seen acknowledged is
 * accepted: older ones are duplicates or stale ACKs, and with nothing
 * outstanding every response is a ghost (IBA 9.7.5.1.1); both are dropped.
 * Completions, retries and errors follow IBA 9.7.5.1, 9.7.5.2 and 9.9; a
 * fatal response completes the WQE in error and moves the QP to ERR.
 *
 * Context: the QP's worker.
 */
void scire_comp_rcv(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_req *req = &qp->req;
	struct scire_pkt *pkt = scire_pkt(skb);
	u32 base = req->comp_psn, psn = scire_psn(pkt->psn);

	/* RC, or an XRC initiator: responses of its own transport. */
	if (!req->shadow || !scire_qp_is_rc(qp) ||
	    (pkt->opcode & SCIRE_OP_TRANSPORT_MASK) != scire_qp_transport(qp) ||
	    !scire_comp_active(qp) ||
	    scire_psn_dist(base, psn) >= scire_psn_dist(base, req->hi_psn)) {
		kfree_skb(skb);
		return;
	}

	switch (pkt->opcode & ~SCIRE_OP_TRANSPORT_MASK) {
	case SCIRE_OP_ACKNOWLEDGE:
		scire_comp_ack(qp, skb, base, psn);
		break;
	case SCIRE_OP_ATOMIC_ACKNOWLEDGE:
		scire_comp_atomic(qp, skb, base, psn);
		break;
	case SCIRE_OP_READ_RESPONSE_FIRST:
	case SCIRE_OP_READ_RESPONSE_MIDDLE:
	case SCIRE_OP_READ_RESPONSE_LAST:
	case SCIRE_OP_READ_RESPONSE_ONLY:
		scire_comp_read(qp, skb, base, psn);
		break;
	default:
		kfree_skb(skb);
		return;
	}
	consume_skb(skb);
	scire_comp_moved(qp, base);
}

/**
 * scire_comp_direct_ack() - a direct request was acknowledged in the call
 * that delivered it (scire_resp_direct() returned SCIRE_DIRECT_ACKED).
 * @qp: an RC QP in RTS or SQD.
 * @psn: the request's PSN; the requester has recorded it as sent.
 *
 * Does what an ACKNOWLEDGE for @psn does (IBA 9.7.5.1.1): retires the WQEs
 * it covers with their CQEs and moves the oldest unacknowledged PSN on.
 *
 * Context: the QP's worker.
 */
void scire_comp_direct_ack(struct scire_qp *qp, u32 psn)
{
	u32 base = qp->req.comp_psn;

	if (scire_comp_walk(qp, base, psn, true))
		scire_comp_advance(qp, base, psn + 1);
	scire_comp_moved(qp, base);
}

/**
 * scire_comp_timers() - act on the retransmit and RNR timers.
 * @qp: the QP.
 *
 * RNR timer: sending resumes from the PSN the RNR NAK named. Retransmit
 * timer (IBA 9.7.6.1): if packets are still unacknowledged, their deadline
 * has passed (progress moves it; a timer that fired before it is re-armed
 * for it), and qp->timeout is not infinite, the requester sends again
 * from the oldest unacknowledged PSN, with a window of
 * SCIRE_REQ_LOSS_WINDOW PSNs (see the top of this file); when retry_cnt
 * is used up the oldest WQE completes with IB_WC_RETRY_EXC_ERR and the
 * QP moves to ERR.
 *
 * Context: the QP's worker.
 */
void scire_comp_timers(struct scire_qp *qp)
{
	struct scire_req *req = &qp->req;

	if (!req->shadow)
		return;
	/* A plain look first: most runs find neither bit set. */
	if (test_bit(SCIRE_QP_P_RNR, &qp->pending) &&
	    test_and_clear_bit(SCIRE_QP_P_RNR, &qp->pending))
		req->rnr_wait = false;
	if (!test_bit(SCIRE_QP_P_RETRANSMIT, &qp->pending) ||
	    !test_and_clear_bit(SCIRE_QP_P_RETRANSMIT, &qp->pending))
		return;
	if (!scire_comp_active(qp) || req->rnr_wait ||
	    !READ_ONCE(qp->timeout) || req->hi_psn == req->comp_psn ||
	    !req->retrans_armed)
		return;
	/* Progress since the timer looked: wait for the new deadline. */
	if (time_before(jiffies, req->retrans_deadline)) {
		if (!timer_pending(&req->retrans_timer))
			mod_timer(&req->retrans_timer, req->retrans_deadline);
		return;
	}
	if (!scire_comp_retry(qp, req->comp_psn, SCIRE_REWIND_TIMEOUT))
		return;
	/* Resend the oldest packet alone (see the top of this file). */
	if (!req->rto_probe)
		req->rto_cwnd = req->cwnd;
	req->cwnd = SCIRE_REQ_LOSS_WINDOW;
	req->rto_probe = true;
	/* A READ asked again: what arrives before its new response is old. */
	req->read_retry = true;
	scire_req_arm(qp, true);
}
