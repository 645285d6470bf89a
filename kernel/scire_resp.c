// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the responder (IBA 1.4 vol. 1 9.7 responder side, 9.5 atomics,
 * 9.8 UC and UD, 9.9 errors).
 *
 * Requests are handled in the QP's work item, one packet at a time, in
 * arrival order. A new request (PSN == ePSN) is checked - opcode sequence,
 * payload length, QP access, R_Key - and only then executed: every byte
 * goes through scire_sgl_copy(), scire_mr_copy() or scire_mr_atomic() after
 * those checks, so a refused request writes nothing.
 *
 * Responses leave in PSN order. ACKs are coalesced: each batch of packets
 * owes at most one ACKNOWLEDGE, sent by scire_resp_batch_end(). NAKs and
 * atomic responses go out at once. A READ response is produced in bounded
 * slices from scire_resp_batch_end(); requests that arrive meanwhile wait
 * in a backlog, so nothing overtakes the response on the wire.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <rdma/ib_mad.h>

#include "scire.h"
#include "scire_trace.h"

#define SCIRE_RESP_MAX_MSG	BIT(31)	/* the IBA's largest message */
#define SCIRE_RESP_TRANSPORT	0xe0	/* BTH opcode bits 7:5 */
#define SCIRE_RESP_BUDGET	64	/* packets per scire_resp_batch_end() */
#define SCIRE_RESP_BACKLOG_MAX	1024	/* requests held behind a READ */
#define SCIRE_RESP_NUM_RES	SCIRE_MAX_RD_ATOMIC

/* What a responder resource remembers (struct scire_resp_res.type). */
enum scire_resp_res_type {
	SCIRE_RESP_RES_NONE,
	SCIRE_RESP_RES_READ,
	SCIRE_RESP_RES_ATOMIC,
	SCIRE_RESP_RES_ATOMIC_WRITE,
	SCIRE_RESP_RES_FLUSH,
};

/*
 * A READ, atomic or ATOMIC WRITE the responder executed. A duplicate READ
 * is executed again if it asks for (part of) the same data with the same
 * R_Key; a duplicate atomic is answered with the value it returned the
 * first time; a duplicate ATOMIC WRITE is answered again, not executed
 * again (a later WRITE may have changed the word since); so is a duplicate
 * FLUSH (what it made visible stays so).
 */
struct scire_resp_res {
	u32 type;
	u32 first_psn;
	u32 last_psn;
	u32 msn;		/* the MSN once it was accepted */
	u32 rkey;		/* READ */
	u32 len;		/* READ */
	union {
		u64 va;		/* READ */
		u64 orig;	/* ATOMIC: the original value returned */
	};
};

static bool scire_resp_is_rc(const struct scire_qp *qp)
{
	return scire_qp_is_rc(qp);
}

/*
 * The PD that checks R_Keys and the receive WQE's L_Keys: the QP's, or for
 * an XRC TGT QP (which has none) that of the XRC SRQ the request names
 * (annex A19). Every caller handles a request whose SRQ is bound.
 */
static struct scire_pd *scire_resp_pd(struct scire_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return to_spd(qp->resp.xsrq->ibsrq.pd);
	return to_spd(qp->ibqp.pd);
}

/* An XRC TGT QP lets go of the XRC SRQ it used this run. */
static void scire_resp_xsrq_release(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	if (resp->xsrq) {
		scire_xsrq_put(resp->xsrq);
		resp->xsrq = NULL;
	}
}

/*
 * An XRC TGT QP takes up XRC SRQ @srqn of its domain for the rest of the
 * run (scire_xsrq_get()). Return: false if there is none such.
 */
static bool scire_resp_xsrq_bind(struct scire_qp *qp, u32 srqn)
{
	struct scire_resp *resp = &qp->resp;

	if (resp->xsrq && resp->xsrq->srqn == srqn)
		return true;
	scire_resp_xsrq_release(qp);
	resp->xsrq = scire_xsrq_get(qp->sdev, qp->ibqp.xrcd, srqn);
	return resp->xsrq;
}

/* The responder works from RTR until the QP moves to ERR or RESET. */
static bool scire_resp_live(struct scire_qp *qp)
{
	if (qp->resp.failed)
		return false;
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return true;
	default:
		return false;
	}
}

static void *scire_resp_hdr(struct sk_buff *skb, u8 opcode,
			    enum scire_hdr_index h)
{
	return skb->data + scire_opcode[opcode].offset[h];
}

/* Send an ACKNOWLEDGE (ACK, NAK, RNR NAK) or an ATOMIC_ACKNOWLEDGE. */
static void scire_resp_send_ack(struct scire_qp *qp, u8 opcode, u8 syndrome,
				u32 psn, u32 msn, u64 orig)
{
	struct scire_atmack *atmack;
	struct sk_buff *skb;

	skb = scire_pkt_alloc(qp, &qp->av, scire_opcode[opcode].hdr_len,
			      scire_qp_gfp(qp));
	if (!skb)
		return;	/* lost like any packet; the requester times out */
	scire_bth_init((struct scire_bth *)skb->data, opcode, false, 0,
		       scire_qp_bth_pkey(qp, qp->pkey_index), qp->dest_qpn,
		       false, psn);
	scire_aeth_set(scire_resp_hdr(skb, opcode, SCIRE_H_AETH), syndrome,
		       msn);
	if (scire_opcode[opcode].mask & SCIRE_M_ATMACK) {
		atmack = scire_resp_hdr(skb, opcode, SCIRE_H_ATMACK);
		put_unaligned_be32(upper_32_bits(orig), &atmack->orig_hi);
		put_unaligned_be32(lower_32_bits(orig), &atmack->orig_lo);
	}
	scire_pkt(skb)->local = qp->resp.local;
	scire_pkt_send(qp, &qp->av, skb);
}

static void scire_resp_ack_flush(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	if (!resp->ack_pending)
		return;
	resp->ack_pending = false;
	scire_resp_send_ack(qp, scire_qp_transport(qp) | SCIRE_OP_ACKNOWLEDGE,
			    SCIRE_AETH_ACK_UNLIMITED, resp->ack_psn,
			    resp->ack_msn, 0);
}

/*
 * About to answer @psn with something other than the coalesced ACK. An
 * owed ACK for an older PSN goes first, so the requester sees responses in
 * PSN order. One for a newer PSN (we are replaying a duplicate) stays owed
 * and leaves after the replay: sent before it, it would tell the requester
 * that the READ or atomic being replayed had been answered already.
 */
static void scire_resp_ack_before(struct scire_qp *qp, u32 psn)
{
	struct scire_resp *resp = &qp->resp;

	if (resp->ack_pending && scire_psn_cmp(resp->ack_psn, psn) < 0)
		scire_resp_ack_flush(qp);
}

/* Owe an ACK for @psn (coalesced with any older one). */
static void scire_resp_ack_later(struct scire_qp *qp, u32 psn, u32 msn)
{
	struct scire_resp *resp = &qp->resp;

	if (resp->ack_pending && scire_psn_cmp(psn, resp->ack_psn) < 0)
		return;
	resp->ack_pending = true;
	resp->ack_psn = psn;
	resp->ack_msn = msn;
}

/* NAK or RNR NAK (@syndrome) for @psn, at once. RC only. */
static void scire_resp_nak(struct scire_qp *qp, u8 syndrome, u32 psn)
{
	if (!scire_resp_is_rc(qp))
		return;
	trace_scire_nak_send(qp, syndrome, psn);
	scire_resp_ack_before(qp, psn);
	scire_resp_send_ack(qp, scire_qp_transport(qp) | SCIRE_OP_ACKNOWLEDGE,
			    syndrome, psn, qp->resp.msn, 0);
}

/*
 * Complete the receive WQE in hand; it is then no longer ours. An XRC TGT
 * QP completes it on the CQ of the XRC SRQ it came from; if that SRQ is
 * gone, so is the place to report it.
 */
static int scire_resp_post(struct scire_qp *qp, struct scire_cqe *cqe,
			   bool solicited)
{
	struct scire_resp *resp = &qp->resp;
	struct scire_cq *cq = qp->rcq;

	cqe->wr_id = resp->wqe->wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->vlan_id = 0xffff;
	resp->wqe_valid = false;
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		if (!scire_resp_xsrq_bind(qp, resp->wqe_srqn))
			return 0;
		cq = to_scq(resp->xsrq->ibsrq.ext.cq);
	}
	return scire_cq_post(cq, cqe, &qp->ibqp, solicited);
}

static void scire_resp_complete_err(struct scire_qp *qp,
				    enum ib_wc_status status)
{
	struct scire_cqe cqe = {
		.status = status,
		.opcode = SCIRE_CQE_OP_RECV,
		.byte_len = qp->resp.rcv_len,
	};

	/* An overrun CQ is in error itself; the QP is going to ERR anyway. */
	scire_resp_post(qp, &cqe, true);
}

/* Forget the message in progress and any response still to generate. */
static void scire_resp_abort(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	__skb_queue_purge(&resp->backlog);
	resp->read.active = false;
	resp->msg = SCIRE_RESP_MSG_NONE;
	resp->ack_pending = false;
}

/*
 * A request refused for its R_Key, range or rights: counted, and when the
 * peer is another host counted against its address too
 * (scire_net_av_error(): err_rate).
 */
static void scire_resp_refused(struct scire_qp *qp)
{
	scire_count(qp->sdev, SCIRE_CNT_RESP_REM_ACCESS_ERR, 1);
	scire_net_av_error(qp->sdev, &qp->av);
}

/*
 * A fatal responder error (IBA 9.9, classes A and C; CQ overrun):
 * NAK with @nak at @psn (RC), complete the receive WQE in hand with
 * @status, and move the QP to ERR; the worker flushes the rest.
 */
static void scire_resp_fail(struct scire_qp *qp, enum scire_nak_code nak,
			    u32 psn, enum ib_wc_status status)
{
	struct scire_resp *resp = &qp->resp;

	if (nak == SCIRE_NAK_REMOTE_ACCESS_ERR)
		scire_resp_refused(qp);
	scire_resp_nak(qp, SCIRE_AETH_NAK | nak, psn);
	if (resp->wqe_valid)
		scire_resp_complete_err(qp, status);
	scire_resp_abort(qp);
	resp->failed = true;
	scire_qp_error(qp);
}

/*
 * UC: drop the rest of the message (IBA 9.8, 9.9 class D). A receive WQE
 * already taken was not completed and serves the next message.
 */
static void scire_resp_drop_msg(struct scire_qp *qp)
{
	qp->resp.msg = SCIRE_RESP_MSG_NONE;
}

/*
 * The requester sent a request the responder must refuse (bad opcode
 * sequence, length or R_Key): on RC a NAK and ERR (class C), on UC the
 * message is dropped silently (class D).
 */
static void scire_resp_reject(struct scire_qp *qp, enum scire_nak_code nak,
			      enum ib_wc_status status)
{
	if (scire_resp_is_rc(qp)) {
		scire_resp_fail(qp, nak, qp->resp.psn, status);
		return;
	}
	if (nak == SCIRE_NAK_REMOTE_ACCESS_ERR)
		scire_resp_refused(qp);
	scire_resp_drop_msg(qp);
}

/*
 * Make a receive WQE ready for a new message. Return: 0, -EAGAIN if none
 * is posted (nothing changed), or another errno after the QP was failed.
 */
static int scire_resp_get_wqe(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;
	int ret;

	if (!resp->wqe_valid) {
		ret = scire_rq_take(qp, resp->wqe);
		if (ret == -EAGAIN)
			return ret;
		/* -EINVAL: malformed, but its wr_id is known (class A). */
		if (ret == -EINVAL ||
		    (!ret && resp->wqe->num_sge > SCIRE_MAX_SGE)) {
			resp->wqe_valid = true;
			resp->rcv_len = 0;
			scire_resp_fail(qp, SCIRE_NAK_REMOTE_OP_ERR, resp->psn,
					IB_WC_LOC_QP_OP_ERR);
			return -EINVAL;
		}
		if (ret) {
			scire_resp_fail(qp, SCIRE_NAK_REMOTE_OP_ERR, resp->psn,
					IB_WC_LOC_QP_OP_ERR);
			return ret;
		}
		resp->wqe_valid = true;
		if (resp->xsrq)
			resp->wqe_srqn = resp->xsrq->srqn;
	}
	scire_sgl_init(resp->sgl, scire_resp_pd(qp), resp->wqe->sge,
		       resp->wqe->num_sge);
	resp->rcv_len = 0;
	return 0;
}

/*
 * No receive WQE for a message that needs one. RC: RNR NAK; ePSN stays and
 * the requester retries after its RNR timer, so later packets of the same
 * burst are dropped without a sequence NAK. UC: the message is lost.
 */
static void scire_resp_no_wqe(struct scire_qp *qp, u32 psn)
{
	if (!scire_resp_is_rc(qp)) {
		scire_resp_drop_msg(qp);
		return;
	}
	scire_count(qp->sdev, SCIRE_CNT_RNR_NAK_SENT, 1);
	scire_resp_nak(qp, SCIRE_AETH_RNR_NAK |
			   (qp->min_rnr_timer & ~SCIRE_AETH_TYPE_MASK), psn);
	qp->resp.nak_sent = true;
}

/* @pkt was executed: ePSN moves past it, and it may ask for an ACK. */
static void scire_resp_advance(struct scire_qp *qp,
			       const struct scire_pkt *pkt)
{
	struct scire_resp *resp = &qp->resp;

	resp->psn = scire_psn(pkt->psn + 1);
	if (pkt->ackreq && scire_resp_is_rc(qp))
		scire_resp_ack_later(qp, pkt->psn, resp->msn);
}

static void scire_resp_msg_done(struct scire_qp *qp)
{
	qp->resp.msg = SCIRE_RESP_MSG_NONE;
	qp->resp.msn = scire_psn(qp->resp.msn + 1);
}

/* A request carrying an ImmDt hands it to the receive CQE (IBA 9.3.6). */
static void scire_resp_imm(const struct scire_resp_in *in,
			   struct scire_cqe *cqe)
{
	if (!(in->pkt->mask & SCIRE_M_IMMDT))
		return;
	cqe->flags |= SCIRE_CQE_F_IMM;
	cqe->imm_data = in->imm;
}

/* Scatter a request's payload into the receive WQE in hand (its SGL). */
static int scire_resp_place(struct scire_qp *qp,
			    const struct scire_resp_in *in)
{
	const struct scire_pkt *pkt = in->pkt;

	if (!pkt->paylen)
		return 0;
	if (!in->skb)
		return scire_sgl_copy(qp->resp.sgl, in->buf, pkt->paylen,
				      true);
	return scire_pkt_to_sgl(in->skb, scire_opcode[pkt->opcode].hdr_len,
				pkt->paylen, qp->resp.sgl);
}

/* Copy a WRITE's payload into @mr at @va. */
static int scire_resp_place_mr(const struct scire_resp_in *in,
			       struct scire_mr *mr, u64 va)
{
	const struct scire_pkt *pkt = in->pkt;

	if (!in->skb)
		return scire_mr_copy(mr, va, in->buf, pkt->paylen, true);
	return scire_pkt_to_mr(in->skb, scire_opcode[pkt->opcode].hdr_len,
			       pkt->paylen, mr, va);
}

/* Post a successful receive completion; an overrun CQ fails the QP. */
static bool scire_resp_complete(struct scire_qp *qp, struct scire_cqe *cqe,
				const struct scire_pkt *pkt)
{
	if (pkt->se)
		cqe->flags |= SCIRE_CQE_F_SOLICITED;
	if (!scire_resp_post(qp, cqe, pkt->se))
		return true;
	scire_resp_fail(qp, SCIRE_NAK_REMOTE_OP_ERR, pkt->psn,
			IB_WC_GENERAL_ERR);
	return false;
}

/* SEND_FIRST/MIDDLE/LAST/ONLY, with immediate data or invalidate. */
static void scire_resp_send(struct scire_qp *qp, const struct scire_resp_in *in)
{
	const struct scire_pkt *pkt = in->pkt;
	struct scire_resp *resp = &qp->resp;
	struct scire_cqe cqe = {};
	u32 rkey;
	int ret;

	if (pkt->mask & SCIRE_M_FIRST) {
		ret = scire_resp_get_wqe(qp);
		if (ret == -EAGAIN)
			scire_resp_no_wqe(qp, pkt->psn);
		if (ret)
			return;
	}

	if (pkt->paylen > SCIRE_RESP_MAX_MSG - resp->rcv_len) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (pkt->paylen) {
		ret = scire_resp_place(qp, in);
		/* Hold no MR between packets: dereg must not wait for us. */
		scire_sgl_release(resp->sgl);
		if (ret == -ENOSPC) {
			scire_resp_fail(qp, SCIRE_NAK_INVALID_REQUEST,
					resp->psn, IB_WC_LOC_LEN_ERR);
			return;
		}
		if (ret) {
			scire_resp_fail(qp, SCIRE_NAK_REMOTE_OP_ERR, resp->psn,
					IB_WC_LOC_PROT_ERR);
			return;
		}
		resp->rcv_len += pkt->paylen;
	}

	if (!(pkt->mask & SCIRE_M_LAST)) {
		resp->msg = SCIRE_RESP_MSG_SEND;
		scire_resp_advance(qp, pkt);
		return;
	}

	cqe.opcode = SCIRE_CQE_OP_RECV;
	cqe.byte_len = resp->rcv_len;
	scire_resp_imm(in, &cqe);
	if (pkt->mask & SCIRE_M_IETH) {
		rkey = in->inv_rkey;
		/*
		 * A failed invalidation must reach the requester (IBA
		 * 10.6.7.2.3): a key that does not resolve in this PD is
		 * reported as an access error, any other refusal (a key
		 * that may not be invalidated remotely) as an operational
		 * error.
		 */
		ret = scire_mr_invalidate(scire_resp_pd(qp), rkey, true);
		if (ret == -EINVAL || ret == -EACCES) {
			scire_resp_fail(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
					resp->psn, IB_WC_REM_ACCESS_ERR);
			return;
		}
		if (ret) {
			scire_resp_fail(qp, SCIRE_NAK_REMOTE_OP_ERR, resp->psn,
					IB_WC_REM_OP_ERR);
			return;
		}
		cqe.flags |= SCIRE_CQE_F_INV;
		cqe.imm_data = rkey;
	}
	if (!scire_resp_complete(qp, &cqe, pkt))
		return;
	scire_resp_msg_done(qp);
	scire_resp_advance(qp, pkt);
}

/*
 * The RETH of a WRITE_FIRST/ONLY or READ request. It follows the 12-byte
 * BTH, so its 64-bit field is never naturally aligned: read it by offset.
 */
static void scire_resp_reth(struct sk_buff *skb, u64 *va, u32 *rkey, u32 *len)
{
	const u8 *reth = scire_resp_hdr(skb, scire_pkt(skb)->opcode,
					SCIRE_H_RETH);

	*va = get_unaligned_be64(reth + offsetof(struct scire_reth, va));
	*rkey = get_unaligned_be32(reth + offsetof(struct scire_reth, rkey));
	*len = get_unaligned_be32(reth + offsetof(struct scire_reth, len));
}

/*
 * May the peer do @access on [@va, @va + @len) with @rkey? The QP must
 * allow it too (IB_QP_ACCESS_FLAGS). A zero-length request names no memory
 * and needs no key.
 */
static bool scire_resp_rkey_ok(struct scire_qp *qp, u32 rkey, u64 va,
			       u32 len, int access)
{
	struct scire_mr *mr;

	if (!(qp->qp_access & access))
		return false;
	if (!len)
		return true;
	mr = scire_mr_lookup(scire_resp_pd(qp), rkey, true, va, len, access);
	if (IS_ERR(mr))
		return false;
	scire_mr_put(mr);
	return true;
}

/* RDMA WRITE_FIRST/MIDDLE/LAST/ONLY, with immediate data. */
static void scire_resp_write(struct scire_qp *qp,
			     const struct scire_resp_in *in)
{
	const struct scire_pkt *pkt = in->pkt;
	struct scire_resp *resp = &qp->resp;
	u32 left, rkey = in->rkey, len = in->len;
	struct scire_mr *mr;
	u64 va = in->va;
	int ret;

	if (pkt->mask & SCIRE_M_FIRST) {
		if (len > SCIRE_RESP_MAX_MSG) {
			scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
					  IB_WC_REM_INV_REQ_ERR);
			return;
		}
		if (!scire_resp_rkey_ok(qp, rkey, va, len,
					IB_ACCESS_REMOTE_WRITE)) {
			scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
					  IB_WC_REM_ACCESS_ERR);
			return;
		}
		resp->write_va = va;
		resp->write_rkey = rkey;
		resp->write_len = len;
		resp->write_done = 0;
	}

	/* The packets must add up to exactly the RETH DMA length. */
	left = resp->write_len - resp->write_done;
	if (pkt->paylen > left ||
	    ((pkt->mask & SCIRE_M_LAST) && pkt->paylen != left)) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}

	/* With immediate data it needs a receive WQE before any byte moves. */
	if (pkt->mask & SCIRE_M_COMP) {
		ret = scire_resp_get_wqe(qp);
		if (ret == -EAGAIN)
			scire_resp_no_wqe(qp, pkt->psn);
		if (ret)
			return;
	}

	if (pkt->paylen) {
		va = resp->write_va + resp->write_done;
		mr = scire_mr_lookup(scire_resp_pd(qp), resp->write_rkey, true,
				     va, pkt->paylen, IB_ACCESS_REMOTE_WRITE);
		if (IS_ERR(mr)) {
			scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
					  IB_WC_REM_ACCESS_ERR);
			return;
		}
		ret = scire_resp_place_mr(in, mr, va);
		scire_mr_put(mr);
		if (ret) {
			scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
					  IB_WC_REM_ACCESS_ERR);
			return;
		}
		resp->write_done += pkt->paylen;
	}

	if (!(pkt->mask & SCIRE_M_LAST)) {
		resp->msg = SCIRE_RESP_MSG_WRITE;
		scire_resp_advance(qp, pkt);
		return;
	}

	if (pkt->mask & SCIRE_M_COMP) {
		struct scire_cqe cqe = {
			.opcode = SCIRE_CQE_OP_RECV_RDMA_IMM,
			/* ibv_wc.byte_len: the bytes written (as rxe) */
			.byte_len = resp->write_len,
		};

		/* A completing WRITE is one WITH_IMM: the table says so. */
		scire_resp_imm(in, &cqe);
		if (!scire_resp_complete(qp, &cqe, pkt))
			return;
	}
	scire_resp_msg_done(qp);
	scire_resp_advance(qp, pkt);
}

static struct scire_resp_res *scire_resp_res_add(struct scire_qp *qp,
						 u32 type, u32 first_psn,
						 u32 last_psn)
{
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;

	BUILD_BUG_ON(!is_power_of_2(SCIRE_RESP_NUM_RES));
	res = &resp->res[resp->res_next++ & (SCIRE_RESP_NUM_RES - 1)];
	memset(res, 0, sizeof(*res));
	res->type = type;
	res->first_psn = first_psn;
	res->last_psn = last_psn;
	return res;
}

/* Newest first, so a PSN range reused after wrap-around finds its owner. */
static struct scire_resp_res *scire_resp_res_find(struct scire_qp *qp,
						  u32 type, u32 psn)
{
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	u32 i;

	for (i = 1; i <= SCIRE_RESP_NUM_RES; i++) {
		res = &resp->res[(resp->res_next - i) &
				 (SCIRE_RESP_NUM_RES - 1)];
		if (res->type == type &&
		    scire_psn_cmp(psn, res->first_psn) >= 0 &&
		    scire_psn_cmp(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/*
 * The oldest READ or atomic the responder executed after @psn (and before
 * ePSN), or NULL.
 */
static struct scire_resp_res *scire_resp_res_next(struct scire_qp *qp,
						  u32 psn)
{
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res, *next = NULL;
	u32 i;

	for (i = 0; i < SCIRE_RESP_NUM_RES; i++) {
		res = &resp->res[i];
		if (res->type == SCIRE_RESP_RES_NONE ||
		    scire_psn_cmp(res->first_psn, psn) <= 0 ||
		    scire_psn_cmp(res->first_psn, resp->psn) >= 0)
			continue;
		if (!next || scire_psn_cmp(res->first_psn, next->first_psn) < 0)
			next = res;
	}
	return next;
}

/* Response packets of a READ of @len bytes: at least one. */
static u32 scire_resp_read_pkts(u32 len, u32 mtu)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/* Start generating the response to a READ; see scire_resp_read_pump(). */
static void scire_resp_read_start(struct scire_qp *qp,
				  const struct scire_pkt *pkt, u64 va,
				  u32 len, u32 rkey, u32 psn, u32 msn,
				  bool replay)
{
	struct scire_resp_read *rd = &qp->resp.read;

	scire_resp_ack_before(qp, psn);
	rd->va = va;
	rd->resid = len;
	rd->rkey = rkey;
	rd->srqn = qp->resp.xsrq ? qp->resp.xsrq->srqn : 0;
	rd->psn = psn;
	rd->msn = msn;
	rd->mtu = scire_pkt_mtu(qp, pkt);
	rd->local = pkt->local;
	rd->first = true;
	rd->replay = replay;
	rd->active = true;
}

/* RDMA READ request: accept it at once, answer it in slices. */
static void scire_resp_read_req(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	u32 rkey, len, npkts;
	u64 va;

	/* No responder resources at all: the requester broke its limit. */
	if (!qp->max_dest_rd_atomic) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	scire_resp_reth(skb, &va, &rkey, &len);
	if (len > SCIRE_RESP_MAX_MSG) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (!scire_resp_rkey_ok(qp, rkey, va, len, IB_ACCESS_REMOTE_READ)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}

	npkts = scire_resp_read_pkts(len, scire_pkt_mtu(qp, pkt));
	res = scire_resp_res_add(qp, SCIRE_RESP_RES_READ, pkt->psn,
				 scire_psn(pkt->psn + npkts - 1));
	res->va = va;
	res->len = len;
	res->rkey = rkey;

	/* A READ counts as a completed message once accepted (C9-148). */
	resp->msn = scire_psn(resp->msn + 1);
	res->msn = resp->msn;
	resp->psn = scire_psn(pkt->psn + npkts);
	scire_resp_read_start(qp, pkt, va, len, rkey, pkt->psn, resp->msn,
			      false);
}

/*
 * Send up to @budget packets of the READ response in progress. Return: the
 * number sent. A packet that cannot be allocated in a softirq run (which
 * may not wait for memory) stops the pump with the response still active,
 * for the work item to go on with; in process context it ends the response
 * early: the requester sees a gap and asks again from there (a duplicate
 * READ).
 */
static u32 scire_resp_read_pump(struct scire_qp *qp, u32 budget)
{
	struct scire_resp_read *rd = &qp->resp.read;
	u32 chunk, pad, sent = 0;
	struct scire_mr *mr = NULL;
	struct sk_buff *skb;
	bool last, frags;
	u8 *payload;
	u8 opcode;
	int ret;

	/* An XRC SRQ destroyed meanwhile took the R_Key's PD with it. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT &&
	    !scire_resp_xsrq_bind(qp, rd->srqn)) {
		rd->active = false;
		return 0;
	}
	while (rd->active && sent < budget) {
		chunk = min(rd->resid, rd->mtu);
		last = chunk == rd->resid;
		if (rd->first)
			opcode = last ? SCIRE_OP_READ_RESPONSE_ONLY :
					SCIRE_OP_READ_RESPONSE_FIRST;
		else
			opcode = last ? SCIRE_OP_READ_RESPONSE_LAST :
					SCIRE_OP_READ_RESPONSE_MIDDLE;
		opcode |= scire_qp_transport(qp);
		pad = rd->local ? 0 : -chunk & 3;
		/*
		 * A linear head is zeroed before the copy fills it, and at an
		 * MTU of 4096 it is a kmalloc() of more than a page, zeroed
		 * once more by init_on_alloc: lend the MR's pages instead.
		 */
		frags = scire_pkt_zc(rd->local, chunk);
again:
		skb = scire_pkt_alloc(qp, &qp->av,
				      scire_opcode[opcode].hdr_len +
				      (frags ? 0 : chunk + pad), scire_qp_gfp(qp));
		if (!skb) {
			if (!qp->run_atomic)
				rd->active = false;
			break;
		}
		scire_bth_init((struct scire_bth *)skb->data, opcode, false,
			       pad, scire_qp_bth_pkey(qp, qp->pkey_index),
			       qp->dest_qpn, false, rd->psn);
		if (scire_opcode[opcode].mask & SCIRE_M_AETH)
			scire_aeth_set(scire_resp_hdr(skb, opcode, SCIRE_H_AETH),
				       SCIRE_AETH_ACK_UNLIMITED, rd->msn);
		payload = scire_resp_hdr(skb, opcode, SCIRE_H_PAYLOAD);
		if (chunk && !mr) {
			/*
			 * The key may have been invalidated since the request:
			 * looked up again for each batch, for what is left of
			 * the response, and held through the batch (an
			 * invalidation or deregistration meanwhile takes effect
			 * after it, as it would after the batch's last packet).
			 */
			mr = scire_mr_lookup(scire_resp_pd(qp), rd->rkey, true,
					     rd->va, rd->resid,
					     IB_ACCESS_REMOTE_READ);
		}
		if (chunk) {
			if (IS_ERR(mr))
				ret = PTR_ERR(mr);
			else if (frags)
				ret = scire_mr_frags(mr, rd->va, skb, chunk);
			else
				ret = scire_mr_copy(mr, rd->va, payload, chunk,
						    false);
			if (frags && (ret == -EOPNOTSUPP || ret == -E2BIG)) {
				kfree_skb(skb);
				frags = false;
				goto again;
			}
			if (ret) {
				kfree_skb(skb);
				/* A replay stops like a lost response. */
				if (rd->replay)
					rd->active = false;
				else
					scire_resp_fail(qp,
							SCIRE_NAK_REMOTE_ACCESS_ERR,
							rd->psn,
							IB_WC_REM_ACCESS_ERR);
				break;
			}
		}
		if (!frags)
			memset(payload + chunk, 0, pad);
		scire_pkt(skb)->local = rd->local;
		scire_pkt_send(qp, &qp->av, skb);

		sent++;
		rd->va += chunk;
		rd->resid -= chunk;
		rd->psn = scire_psn(rd->psn + 1);
		rd->first = false;
		if (last)
			rd->active = false;
	}
	if (!IS_ERR_OR_NULL(mr))
		scire_mr_put(mr);
	return sent;
}

/* COMPARE_SWAP and FETCH_ADD (IBA 9.5). */
static void scire_resp_atomic(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	struct scire_atmeth *ath;
	struct scire_mr *mr;
	bool cmp_swp;
	u64 va, orig;
	u32 rkey;
	int ret;

	if (!qp->max_dest_rd_atomic) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	ath = scire_resp_hdr(skb, pkt->opcode, SCIRE_H_ATMETH);
	va = get_unaligned_be64(&ath->va);
	rkey = get_unaligned_be32(&ath->rkey);
	if (va & 7) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (!(qp->qp_access & IB_ACCESS_REMOTE_ATOMIC)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}
	mr = scire_mr_lookup(scire_resp_pd(qp), rkey, true, va, sizeof(u64),
			     IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(mr)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}
	cmp_swp = (pkt->opcode & ~SCIRE_OP_TRANSPORT_MASK) ==
		  SCIRE_OP_COMPARE_SWAP;
	ret = scire_mr_atomic(mr, va, cmp_swp,
			      cmp_swp ? scire_atmeth_comp(ath) :
					scire_atmeth_swap_add(ath),
			      cmp_swp ? scire_atmeth_swap_add(ath) : 0, &orig);
	scire_mr_put(mr);
	if (ret) {
		scire_resp_reject(qp, ret == -EINVAL ?
				  SCIRE_NAK_INVALID_REQUEST :
				  SCIRE_NAK_REMOTE_OP_ERR, IB_WC_REM_OP_ERR);
		return;
	}

	res = scire_resp_res_add(qp, SCIRE_RESP_RES_ATOMIC, pkt->psn,
				 pkt->psn);
	res->orig = orig;
	resp->msn = scire_psn(resp->msn + 1);
	res->msn = resp->msn;
	resp->psn = scire_psn(pkt->psn + 1);
	scire_resp_ack_before(qp, pkt->psn);
	scire_resp_send_ack(qp,
			    scire_qp_transport(qp) | SCIRE_OP_ATOMIC_ACKNOWLEDGE,
			    SCIRE_AETH_ACK_UNLIMITED, pkt->psn, resp->msn, orig);
}

/*
 * The answer to an ATOMIC WRITE or a FLUSH: a READ RESPONSE ONLY without
 * payload.
 */
static void scire_resp_read_ack0(struct scire_qp *qp, u32 psn, u32 msn)
{
	scire_resp_ack_before(qp, psn);
	scire_resp_send_ack(qp,
			    scire_qp_transport(qp) | SCIRE_OP_READ_RESPONSE_ONLY,
			    SCIRE_AETH_ACK_UNLIMITED, psn, msn, 0);
}

/*
 * RDMA ATOMIC WRITE (IBA 1.5): 8 bytes stored at an 8-byte aligned address
 * as one store, atomic against the atomics of this device. It needs remote
 * write access and consumes a responder resource like an atomic; it is
 * answered as rdma_rxe answers it, with a READ RESPONSE ONLY without
 * payload. A misaligned address is an Invalid Request (as rxe's).
 */
static void scire_resp_atomic_write(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	u8 value[sizeof(u64)];
	struct scire_mr *mr;
	u32 rkey, len;
	u64 va;
	int ret;

	if (!qp->max_dest_rd_atomic) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	scire_resp_reth(skb, &va, &rkey, &len);
	if (len != sizeof(value) || pkt->paylen != sizeof(value) ||
	    (va & 7)) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (!(qp->qp_access & IB_ACCESS_REMOTE_WRITE)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}
	mr = scire_mr_lookup(scire_resp_pd(qp), rkey, true, va, sizeof(value),
			     IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}
	ret = skb_copy_bits(skb, scire_opcode[pkt->opcode].hdr_len, value,
			    sizeof(value));
	if (!ret)
		ret = scire_mr_atomic_write(mr, va, value);
	scire_mr_put(mr);
	if (ret) {
		scire_resp_reject(qp, ret == -EINVAL ?
				  SCIRE_NAK_INVALID_REQUEST :
				  SCIRE_NAK_REMOTE_OP_ERR, ret == -EINVAL ?
				  IB_WC_REM_INV_REQ_ERR : IB_WC_REM_OP_ERR);
		return;
	}

	res = scire_resp_res_add(qp, SCIRE_RESP_RES_ATOMIC_WRITE, pkt->psn,
				 pkt->psn);
	resp->msn = scire_psn(resp->msn + 1);
	res->msn = resp->msn;
	resp->psn = scire_psn(pkt->psn + 1);
	scire_resp_read_ack0(qp, pkt->psn, resp->msn);
}

/*
 * RDMA FLUSH (IBA 1.5): make what earlier RDMA WRITEs and ATOMIC WRITEs
 * placed in the range (selectivity level IB_FLUSH_RANGE) or in the whole
 * region the rkey names (IB_FLUSH_MR) visible, globally or persistently
 * (the placement type). The responder places every byte with CPU stores,
 * in PSN order, before it executes the next request, so a write barrier
 * gives global visibility. For persistence the CPU caches over the range
 * (or the whole region) are written back as well (scire_mr_persist()):
 * only an MR over persistent memory grants IB_ACCESS_FLUSH_PERSISTENT
 * (scire_mr_persistent_ok()), so the promise holds wherever the right was
 * granted.
 *
 * Checks, in rxe's order, each fatal for the QP: no responder resources,
 * a FETH with no, or an unknown, placement type or level: NAK Invalid
 * Request; the QP without the FLUSH right of each type asked for: NAK
 * Invalid Request (rxe's answer, as for an opcode the QP does not allow);
 * no MR of the QP's PD granting them over the range, or over the whole
 * region: NAK Remote Access Error. A FLUSH consumes a responder resource
 * and is answered with a READ RESPONSE ONLY without payload, as rdma_rxe
 * answers it.
 */
static void scire_resp_rdma_flush(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	struct scire_feth *feth;
	struct scire_mr *mr;
	u32 rkey, len, bits, plt, sel;
	int access = 0;
	u64 va;

	if (!qp->max_dest_rd_atomic) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	feth = scire_resp_hdr(skb, pkt->opcode, SCIRE_H_FETH);
	bits = get_unaligned_be32(&feth->bits);
	plt = bits & SCIRE_FETH_PLT_MASK;
	sel = (bits & SCIRE_FETH_SEL_MASK) >> SCIRE_FETH_SEL_SHIFT;
	if (!plt || (plt & ~(SCIRE_FLUSH_GLOBAL | SCIRE_FLUSH_PERSISTENT)) ||
	    sel > SCIRE_FLUSH_MR) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (plt & SCIRE_FLUSH_GLOBAL)
		access |= SCIRE_ACCESS_FLUSH_GLOBAL;
	if (plt & SCIRE_FLUSH_PERSISTENT)
		access |= SCIRE_ACCESS_FLUSH_PERSISTENT;
	/* 6.1 defines no FLUSH rights: nothing can grant one there. */
	if (!access || (access & ~qp->qp_access)) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return;
	}
	scire_resp_reth(skb, &va, &rkey, &len);
	if (sel == SCIRE_FLUSH_MR)
		mr = scire_mr_lookup_region(scire_resp_pd(qp), rkey, access);
	else
		mr = scire_mr_lookup(scire_resp_pd(qp), rkey, true, va, len,
				     access);
	if (IS_ERR(mr)) {
		scire_resp_reject(qp, SCIRE_NAK_REMOTE_ACCESS_ERR,
				  IB_WC_REM_ACCESS_ERR);
		return;
	}
	/* Persistence: the caches over the range written back to pmem. */
	if (plt & SCIRE_FLUSH_PERSISTENT) {
		if (sel == SCIRE_FLUSH_MR)
			scire_mr_persist(mr, mr->iova, mr->length);
		else
			scire_mr_persist(mr, va, len);
	}
	/* Every earlier placement is done: order it before the answer. */
	wmb();
	scire_mr_put(mr);

	res = scire_resp_res_add(qp, SCIRE_RESP_RES_FLUSH, pkt->psn, pkt->psn);
	resp->msn = scire_psn(resp->msn + 1);
	res->msn = resp->msn;
	resp->psn = scire_psn(pkt->psn + 1);
	scire_resp_read_ack0(qp, pkt->psn, resp->msn);
}

/*
 * A request older than ePSN (IBA 9.7.5.1.2, 9.9.4.2). SEND and WRITE are
 * not executed again, only acknowledged: up to ePSN - 1, or, when a READ
 * or atomic was executed after them, up to the request before the oldest
 * such one. An ACK naming a READ's or atomic's PSN would say nothing of it
 * to a requester that follows IBA 9.7.5.1.5 (scire's completer takes it as
 * an implied NAK), and rdma_rxe's completer would take it for the
 * response and complete that WQE without data or original value; no ACK
 * at all would stall a requester that resends one packet at a time, as
 * scire's does after a timeout. A READ is executed again from its own RETH
 * if it asks for (part of) what an earlier READ asked for. An atomic, an
 * ATOMIC WRITE or a FLUSH is answered from the resources, never executed
 * again.
 * Anything else is dropped (class D).
 */
static void scire_resp_duplicate(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_res *res;
	u32 rkey, len, npkts;
	u64 va;

	if (pkt->mask & (SCIRE_M_SEND | SCIRE_M_WRITE)) {
		res = scire_resp_res_next(qp, pkt->psn);
		if (res)
			scire_resp_ack_later(qp, scire_psn(res->first_psn - 1),
					     scire_psn(res->msn - 1));
		else
			scire_resp_ack_later(qp, scire_psn(resp->psn - 1),
					     resp->msn);
		return;
	}

	if (pkt->mask & SCIRE_M_READ) {
		res = scire_resp_res_find(qp, SCIRE_RESP_RES_READ, pkt->psn);
		if (!res)
			goto stale;
		scire_resp_reth(skb, &va, &rkey, &len);
		npkts = scire_resp_read_pkts(len, scire_pkt_mtu(qp, pkt));
		if (rkey != res->rkey || va < res->va || len > res->len ||
		    va - res->va > res->len - len ||
		    scire_psn_cmp(scire_psn(pkt->psn + npkts - 1),
				  res->last_psn) > 0)
			goto stale;
		/*
		 * The R_Key was good when the READ was accepted. A duplicate
		 * may be a stale copy of a READ the requester has long
		 * completed, whose memory was invalidated since: it must not
		 * take the connection down. Drop it; a requester that really
		 * still waits times out.
		 */
		if (!scire_resp_rkey_ok(qp, rkey, va, len,
					IB_ACCESS_REMOTE_READ))
			goto stale;
		scire_resp_read_start(qp, pkt, va, len, rkey, pkt->psn,
				      resp->msn, true);
		return;
	}

	if (pkt->mask & SCIRE_M_ATOMIC) {
		res = scire_resp_res_find(qp, SCIRE_RESP_RES_ATOMIC, pkt->psn);
		if (!res)
			goto stale;
		scire_resp_ack_before(qp, pkt->psn);
		scire_resp_send_ack(qp, scire_qp_transport(qp) |
					SCIRE_OP_ATOMIC_ACKNOWLEDGE,
				    SCIRE_AETH_ACK_UNLIMITED, pkt->psn,
				    resp->msn, res->orig);
	}
	if (pkt->mask & SCIRE_M_ATOMIC_WRITE) {
		res = scire_resp_res_find(qp, SCIRE_RESP_RES_ATOMIC_WRITE,
					  pkt->psn);
		if (!res)
			goto stale;
		scire_resp_read_ack0(qp, pkt->psn, resp->msn);
	}
	if (pkt->mask & SCIRE_M_FLUSH) {
		res = scire_resp_res_find(qp, SCIRE_RESP_RES_FLUSH, pkt->psn);
		if (!res)
			goto stale;
		scire_resp_read_ack0(qp, pkt->psn, resp->msn);
	}
	return;

stale:
	/* Not freed here: the caller consumes it. Seen in the trace only. */
	trace_scire_drop(qp->sdev, skb, SCIRE_DROP_STALE);
}

static enum scire_resp_msg scire_resp_msg_kind(u32 mask)
{
	if (mask & SCIRE_M_SEND)
		return SCIRE_RESP_MSG_SEND;
	if (mask & SCIRE_M_WRITE)
		return SCIRE_RESP_MSG_WRITE;
	return SCIRE_RESP_MSG_NONE;
}

/*
 * Opcode sequence (a MIDDLE/LAST continues the message in progress, a
 * FIRST/ONLY starts one) and payload length (FIRST/MIDDLE exactly one PMTU,
 * LAST 1..PMTU, ONLY 0..PMTU; READ and atomic requests carry none).
 * Return: true to execute the packet; false when it was refused (and the
 * refusal handled) or is to be dropped.
 */
static bool scire_resp_check(struct scire_qp *qp, const struct scire_pkt *pkt)
{
	struct scire_resp *resp = &qp->resp;
	bool cont = !(pkt->mask & SCIRE_M_FIRST);
	bool rc = scire_resp_is_rc(qp);

	if (resp->msg != SCIRE_RESP_MSG_NONE) {
		if (!cont || scire_resp_msg_kind(pkt->mask) != resp->msg) {
			/* The message in progress lost its LAST. */
			if (rc) {
				scire_resp_reject(qp,
						  SCIRE_NAK_INVALID_REQUEST,
						  IB_WC_REM_INV_REQ_ERR);
				return false;
			}
			/* UC (class D1): a FIRST/ONLY starts afresh. */
			scire_resp_drop_msg(qp);
			if (cont)
				return false;
		}
	} else if (cont) {
		/* A MIDDLE/LAST without its FIRST. */
		if (rc)
			scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
					  IB_WC_REM_INV_REQ_ERR);
		return false;
	}

	if (!(pkt->mask & SCIRE_M_PAYLOAD) ? pkt->paylen != 0 :
	    !(pkt->mask & SCIRE_M_LAST) ? pkt->paylen != scire_pkt_mtu(qp, pkt) :
	    pkt->paylen > scire_pkt_mtu(qp, pkt) || (cont && !pkt->paylen)) {
		scire_resp_reject(qp, SCIRE_NAK_INVALID_REQUEST,
				  IB_WC_REM_INV_REQ_ERR);
		return false;
	}
	return true;
}

/* What a SEND or WRITE packet's headers say, for scire_resp_send/write(). */
static void scire_resp_in_parse(struct sk_buff *skb, struct scire_resp_in *in)
{
	const struct scire_pkt *pkt = scire_pkt(skb);

	memset(in, 0, sizeof(*in));
	in->pkt = pkt;
	in->skb = skb;
	if (pkt->mask & SCIRE_M_RETH)
		scire_resp_reth(skb, &in->va, &in->rkey, &in->len);
	if (pkt->mask & SCIRE_M_IMMDT) {
		struct scire_immdt *immdt;

		immdt = scire_resp_hdr(skb, pkt->opcode, SCIRE_H_IMMDT);
		/* Kept in network order, as on the wire. */
		in->imm = (__force u32)get_unaligned(&immdt->imm);
	}
	if (pkt->mask & SCIRE_M_IETH) {
		struct scire_ieth *ieth;

		ieth = scire_resp_hdr(skb, pkt->opcode, SCIRE_H_IETH);
		in->inv_rkey = get_unaligned_be32(&ieth->rkey);
	}
}

static void scire_resp_execute(struct scire_qp *qp, struct sk_buff *skb)
{
	u32 mask = scire_pkt(skb)->mask;
	struct scire_resp_in in;

	if (!scire_resp_check(qp, scire_pkt(skb)))
		return;
	if (mask & (SCIRE_M_SEND | SCIRE_M_WRITE))
		scire_resp_in_parse(skb, &in);
	if (mask & SCIRE_M_SEND)
		scire_resp_send(qp, &in);
	else if (mask & SCIRE_M_WRITE)
		scire_resp_write(qp, &in);
	else if (scire_resp_is_rc(qp) && (mask & SCIRE_M_READ))
		scire_resp_read_req(qp, skb);
	else if (scire_resp_is_rc(qp) && (mask & SCIRE_M_ATOMIC))
		scire_resp_atomic(qp, skb);
	else if (scire_resp_is_rc(qp) && (mask & SCIRE_M_ATOMIC_WRITE))
		scire_resp_atomic_write(qp, skb);
	else if (scire_resp_is_rc(qp) && (mask & SCIRE_M_FLUSH))
		scire_resp_rdma_flush(qp, skb);
}

/* RC: PSN check against ePSN (IBA 9.7), then execute. */
static void scire_resp_rc(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	int cmp = scire_psn_cmp(pkt->psn, resp->psn);

	if (cmp > 0) {
		scire_count(qp->sdev, SCIRE_CNT_OOS_REQUEST, 1);
		/* Packets were lost: one NAK until ePSN comes (9.9.3.1.1). */
		if (!resp->nak_sent) {
			scire_count(qp->sdev, SCIRE_CNT_SEQ_NAK_SENT, 1);
			scire_resp_nak(qp, SCIRE_AETH_NAK |
				       SCIRE_NAK_PSN_SEQ_ERR, resp->psn);
			resp->nak_sent = true;
		}
		return;
	}
	if (cmp < 0) {
		scire_count(qp->sdev, SCIRE_CNT_DUP_REQUEST, 1);
		scire_resp_duplicate(qp, skb);
		return;
	}
	resp->nak_sent = false;
	scire_resp_execute(qp, skb);
}

/*
 * The GRH a UD receive buffer starts with (IBA 11.4.1.2, scire-abi.h): the
 * IPv6 header, or for IPv4 20 zero bytes and then the IPv4 header.
 */
static void scire_resp_grh(const struct sk_buff *skb, u8 *grh)
{
	if (skb->protocol == htons(ETH_P_IPV6)) {
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	} else {
		memset(grh, 0, SCIRE_UD_GRH_LEN - sizeof(struct iphdr));
		memcpy(grh + SCIRE_UD_GRH_LEN - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
	}
}

/*
 * UD and GSI (IBA 9.8.2, 10.2.5): each SEND_ONLY is a whole message. One
 * with the wrong Q_Key, or arriving with no receive WQE posted, is dropped
 * silently. One too long for the receive WQE is dropped too and the WQE
 * kept for the next message; from an SRQ the WQE is completed with
 * IB_WC_LOC_LEN_ERR instead, since it cannot be given back. Neither fails
 * the QP: a datagram sender must not be able to kill a receiver. A WQE
 * whose buffers are not writable (class A, local) does fail it.
 */
static void scire_resp_ud(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	struct scire_resp_in in;
	struct scire_deth *deth;
	struct scire_cqe cqe = {};
	u8 grh[SCIRE_UD_GRH_LEN];
	int ret;

	if (!(pkt->mask & SCIRE_M_DETH) || !(pkt->mask & SCIRE_M_SEND))
		return;
	scire_resp_in_parse(skb, &in);
	deth = scire_resp_hdr(skb, pkt->opcode, SCIRE_H_DETH);
	/* QP0 takes no Q_Key (IBA 10.2.4.4, 14.2.2). */
	if (qp->ibqp.qp_type != IB_QPT_SMI &&
	    get_unaligned_be32(&deth->qkey) != qp->qkey) {
		if (pkt->ib)
			scire_ib_qkey_violation(qp, skb,
						get_unaligned_be32(&deth->qkey),
						get_unaligned_be32(&deth->sqp) &
						SCIRE_QPN_MASK);
		scire_count(qp->sdev, SCIRE_CNT_RX_DROPS, 1);
		return;
	}
	/*
	 * A MAD is 256 bytes, always. The MAD layer reads a shorter one in
	 * full from a receive buffer it reuses without clearing, so the
	 * bytes of an earlier MAD (its M_Key among them) would complete it.
	 */
	if ((qp->ibqp.qp_type == IB_QPT_SMI || qp->ibqp.qp_type == IB_QPT_GSI) &&
	    pkt->paylen != IB_MGMT_MAD_SIZE) {
		scire_count(qp->sdev, SCIRE_CNT_RX_DROPS, 1);
		return;
	}
	if (scire_resp_get_wqe(qp))
		return;

	/* A scire_ib packet without a GRH leaves those 40 bytes undefined. */
	if (pkt->ib_grh)
		memcpy(grh, skb_network_header(skb), sizeof(grh));
	else if (pkt->ib)
		memset(grh, 0, sizeof(grh));
	else
		scire_resp_grh(skb, grh);
	ret = scire_sgl_copy(resp->sgl, grh, sizeof(grh), true);
	if (!ret)
		ret = scire_resp_place(qp, &in);
	scire_sgl_release(resp->sgl);
	if (ret == -ENOSPC) {
		if (qp->srq) {
			resp->rcv_len = 0;
			scire_resp_complete_err(qp, IB_WC_LOC_LEN_ERR);
		}
		return;
	}
	if (ret) {
		resp->rcv_len = 0;
		scire_resp_fail(qp, 0, pkt->psn, IB_WC_LOC_PROT_ERR);
		return;
	}

	cqe.opcode = SCIRE_CQE_OP_RECV;
	cqe.byte_len = sizeof(grh) + pkt->paylen;
	cqe.src_qp = get_unaligned_be32(&deth->sqp) & SCIRE_QPN_MASK;
	if (pkt->ib) {
		cqe.slid = pkt->slid;
		cqe.sl = pkt->sl;
		cqe.dlid_path_bits = pkt->dlid_path_bits;
		cqe.pkey_index = pkt->pkey_index;
		cqe.network_hdr_type = SCIRE_CQE_NET_IB;
		if (pkt->ib_grh)
			cqe.flags = SCIRE_CQE_F_GRH;
	} else {
		cqe.flags = SCIRE_CQE_F_GRH;
		cqe.network_hdr_type = skb->protocol == htons(ETH_P_IPV6) ?
				       SCIRE_CQE_NET_IPV6 : SCIRE_CQE_NET_IPV4;
	}
	scire_resp_imm(&in, &cqe);
	scire_resp_complete(qp, &cqe, pkt);
}

/*
 * UC (IBA 9.8): no ACKs, no duplicates. A PSN other than ePSN means packets
 * were lost, and with them the message in progress; a new FIRST/ONLY
 * resynchronises. Each packet consumes its PSN whatever becomes of it.
 */
static void scire_resp_uc(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);

	if (pkt->psn != qp->resp.psn)
		scire_resp_drop_msg(qp);
	qp->resp.psn = scire_psn(pkt->psn + 1);
	scire_resp_execute(qp, skb);
}

/*
 * A READ request with a PSN before ePSN and before the next packet of the
 * response in progress: the requester lost part of a READ response and asks
 * again (IBA 9.7.5.1.5), so what the response in progress still has to send
 * lies beyond a gap the requester will not accept. Such a request replaces
 * that response at once instead of waiting behind it; requests held in the
 * backlog keep their order. A duplicate for a later PSN (the requester
 * asking again for the READs behind the one that broke off) waits its
 * turn, or it would cut short the very response the requester waits for.
 */
static bool scire_resp_read_again(struct scire_qp *qp,
				  const struct scire_pkt *pkt)
{
	const struct scire_resp_read *rd = &qp->resp.read;

	return scire_resp_is_rc(qp) &&
	       (pkt->opcode & ~SCIRE_OP_TRANSPORT_MASK) ==
	       SCIRE_OP_READ_REQUEST &&
	       scire_psn_cmp(pkt->psn, qp->resp.psn) < 0 &&
	       (!rd->active || scire_psn_cmp(pkt->psn, rd->psn) < 0);
}

/*
 * An XRC TGT QP serves the XRC SRQ each request names in its XRCETH
 * (annex A19): it must be an XRC SRQ of the QP's XRC domain, and the one
 * the receive WQE of a message in progress came from. A new request that
 * names another is refused (NAK Invalid Request, class C); a duplicate or
 * out-of-sequence one is dropped. Return: true to go on with @skb.
 */
static bool scire_resp_xrc_srq(struct scire_qp *qp, struct sk_buff *skb)
{
	const struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_resp *resp = &qp->resp;
	u32 srqn;

	srqn = get_unaligned_be32(scire_resp_hdr(skb, pkt->opcode,
						 SCIRE_H_XRCETH)) &
	       SCIRE_QPN_MASK;
	if (scire_resp_xsrq_bind(qp, srqn) &&
	    (!resp->wqe_valid || resp->wqe_srqn == srqn))
		return true;
	if (pkt->psn == resp->psn)
		scire_resp_fail(qp, SCIRE_NAK_INVALID_REQUEST, pkt->psn,
				IB_WC_REM_INV_REQ_ERR);
	return false;
}

/*
 * A raw packet QP: the whole frame goes into the next receive WQE, which
 * completes with its length (scire_raw.c steered it here). As for UD, a
 * frame that finds no WQE, or one too short for it, is dropped and the
 * WQE kept (completed with IB_WC_LOC_LEN_ERR if it came from an SRQ):
 * the sender of a frame must not be able to kill the QP.
 */
static void scire_resp_raw(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_resp *resp = &qp->resp;
	struct scire_cqe cqe = {};
	int ret;

	if (scire_resp_get_wqe(qp)) {
		scire_count(qp->sdev, SCIRE_CNT_RX_DROPS, 1);
		return;
	}
	ret = scire_pkt_to_sgl(skb, 0, skb->len, resp->sgl);
	scire_sgl_release(resp->sgl);
	if (ret == -ENOSPC) {
		scire_count(qp->sdev, SCIRE_CNT_RX_DROPS, 1);
		if (qp->srq) {
			resp->rcv_len = 0;
			scire_resp_complete_err(qp, IB_WC_LOC_LEN_ERR);
		}
		return;
	}
	if (ret) {
		resp->rcv_len = 0;
		scire_resp_fail(qp, 0, 0, IB_WC_LOC_PROT_ERR);
		return;
	}
	cqe.opcode = SCIRE_CQE_OP_RECV;
	cqe.byte_len = skb->len;
	if (scire_resp_post(qp, &cqe, false)) {
		scire_resp_fail(qp, 0, 0, IB_WC_GENERAL_ERR);
		return;
	}
	scire_count(qp->sdev, SCIRE_CNT_RAW_RX_FRAMES, 1);
}

static void scire_resp_process(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_pkt *pkt = scire_pkt(skb);
	u8 transport = pkt->opcode & SCIRE_RESP_TRANSPORT;

	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET) {
		if (!scire_resp_live(qp))
			goto drop;
		scire_resp_raw(qp, skb);
		consume_skb(skb);
		return;
	}
	/*
	 * The receive path validated the packet; check again what a bug
	 * there would turn into a wild read here.
	 */
	if (!scire_resp_live(qp) || !(pkt->mask & SCIRE_M_REQ) ||
	    !pskb_may_pull(skb, scire_opcode[pkt->opcode].hdr_len) ||
	    skb->len < scire_opcode[pkt->opcode].hdr_len + pkt->paylen)
		goto drop;

	qp->resp.local = pkt->local;
	if (qp->ibqp.qp_type == IB_QPT_RC && transport == SCIRE_OP_RC) {
		scire_resp_rc(qp, skb);
	} else if (qp->ibqp.qp_type == IB_QPT_XRC_TGT &&
		   transport == SCIRE_OP_XRC) {
		if (!scire_resp_xrc_srq(qp, skb))
			goto drop;
		scire_resp_rc(qp, skb);
	} else if (qp->ibqp.qp_type == IB_QPT_UC &&
		   transport == SCIRE_OP_UC) {
		scire_resp_uc(qp, skb);
	} else if (scire_qp_is_datagram(qp) && transport == SCIRE_OP_UD) {
		scire_resp_ud(qp, skb);
	} else {
		goto drop;
	}
	consume_skb(skb);
	return;

drop:
	kfree_skb(skb);
}

/**
 * scire_resp_rcv() - handle one request packet (IBA 9.7 responder side).
 * @qp: an RC or UC QP.
 * @skb: a request packet for @qp, parsed into scire_pkt(skb); consumed.
 *
 * New requests are checked and executed; duplicates are acknowledged or
 * replayed; out-of-sequence packets get one PSN sequence error NAK. While a
 * READ response is being generated, requests wait in order in a bounded
 * backlog (beyond it they are dropped like lost packets) and are handled by
 * scire_resp_batch_end(). Errors the IBA calls fatal for the QP send a NAK,
 * complete the receive WQE in hand in error and call scire_qp_error().
 *
 * Context: the QP's execution context only: process context, or a softirq
 * run (then nothing sleeps: allocations use scire_qp_gfp()).
 */
void scire_resp_rcv(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_resp *resp = &qp->resp;

	if (resp->read.active || !skb_queue_empty(&resp->backlog)) {
		if (scire_resp_read_again(qp, scire_pkt(skb))) {
			scire_resp_process(qp, skb);
			return;
		}
		if (!scire_resp_live(qp))
			kfree_skb(skb);
		else if (skb_queue_len(&resp->backlog) >= SCIRE_RESP_BACKLOG_MAX)
			scire_net_drop(qp->sdev, skb, SCIRE_DROP_BACKLOG);
		else
			__skb_queue_tail(&resp->backlog, skb);
		return;
	}
	scire_resp_process(qp, skb);
}

/**
 * scire_resp_direct() - execute a request of a same-host requester without
 * a packet (the fast path's direct requests).
 * @qp: an RC QP, held; the caller holds its execution context
 *	(scire_qp_direct_lock()), so no run of its own is in progress.
 * @in: a SEND or RDMA WRITE ONLY request (any variant), with the PSN, SE
 *	and AckReq its packet would carry, pkt->local set, and the payload
 *	(at most SCIRE_LOCAL_MTU bytes) in @in->buf; @in->skb is NULL.
 *
 * Only an idle responder takes the request: live, its ePSN the request's
 * PSN, no multi-packet message, READ response, held-back request, owed
 * ACK or NAK outstanding, and no packet waiting for it. The request is
 * then checked and executed exactly as its packet would be (IBA 9.7.4,
 * 9.7.5), including its refusals: a NAK or RNR NAK goes back to the
 * requester as a same-host unit, as for a unit request.
 *
 * Context: the requester's run (scire_req_run()): process context, or
 * BHs off with @qp->run_atomic set (allocations do not sleep); may send a
 * NAK unit.
 * Return: SCIRE_DIRECT_ACKED: executed; this return stands for the ACK
 * (the requester completes the WQE). SCIRE_DIRECT_SENT: handled as its
 * packet would have been, but not acknowledged (a NAK was sent, or the
 * QP failed): the requester treats the request as sent. SCIRE_DIRECT_NOT:
 * the responder is busy or not idle and nothing changed: send a unit.
 */
enum scire_direct scire_resp_direct(struct scire_qp *qp,
				    const struct scire_resp_in *in)
{
	const struct scire_pkt *pkt = in->pkt;
	struct scire_resp *resp = &qp->resp;

	if (qp->ibqp.qp_type != IB_QPT_RC || !scire_resp_live(qp) ||
	    pkt->psn != resp->psn || resp->nak_sent || resp->ack_pending ||
	    resp->msg != SCIRE_RESP_MSG_NONE || resp->read.active ||
	    !skb_queue_empty(&resp->backlog) ||
	    !skb_queue_empty_lockless(&qp->rxq) ||
	    !(pkt->mask & (SCIRE_M_SEND | SCIRE_M_WRITE)) ||
	    (pkt->mask & SCIRE_M_ONLY) != SCIRE_M_ONLY)
		return SCIRE_DIRECT_NOT;

	resp->local = true;
	if (scire_resp_check(qp, pkt)) {
		if (pkt->mask & SCIRE_M_SEND)
			scire_resp_send(qp, in);
		else
			scire_resp_write(qp, in);
	}
	if (!resp->ack_pending || resp->failed || resp->ack_psn != pkt->psn)
		return SCIRE_DIRECT_SENT;
	/* The requester's completer does not read an ACK's MSN. */
	resp->ack_pending = false;
	return SCIRE_DIRECT_ACKED;
}

/**
 * scire_resp_batch_end() - finish a batch of received packets.
 * @qp: the QP.
 *
 * Continues the READ response in progress and the requests held behind it,
 * SCIRE_RESP_BUDGET packets at a time (kicking the worker again when work
 * remains), then sends the one ACKNOWLEDGE the batch owes, for the latest
 * PSN that needs it (ACK coalescing, IBA 9.7.5.1). The ACK waits while a
 * READ response is still going out, so it never overtakes one. Must be
 * called after every batch in RTR, RTS, SQD and SQE, even an empty one.
 * A softirq run short of memory for the READ response leaves the rest to
 * the work item.
 *
 * Context: the QP's execution context only (scire_resp_rcv()).
 */
void scire_resp_batch_end(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;
	u32 budget = SCIRE_RESP_BUDGET;
	struct sk_buff *skb;
	u32 sent;

	while (budget && scire_resp_live(qp)) {
		if (resp->read.active) {
			sent = scire_resp_read_pump(qp, budget);
			/* Short of memory in a softirq run: kicked below. */
			if (!sent && resp->read.active)
				break;
			budget -= sent;
			continue;
		}
		skb = __skb_dequeue(&resp->backlog);
		if (!skb)
			break;
		scire_resp_process(qp, skb);
		budget--;
	}
	/* A run holds an XRC SRQ no longer than it lasts. */
	scire_resp_xsrq_release(qp);
	if (!scire_resp_live(qp))
		return;
	if (!resp->read.active)
		scire_resp_ack_flush(qp);
	if (resp->read.active || !skb_queue_empty(&resp->backlog))
		scire_qp_kick(qp);
}

/**
 * scire_resp_stop_ack() - send the ACK a stopped QP still owes.
 * @qp: an RC QP just taken out of RTR, RTS, SQD or SQE by destroy_qp or a
 *	modify to RESET, with no run in progress or to come.
 *
 * An HCA acknowledges a message no later than it completes the receive,
 * so a consumer that saw the completion and then destroys the QP does not
 * take the ACK with it. scire completes receives during a batch and
 * sends the batch's one coalesced ACK at its end (scire_resp_batch_end()),
 * which a QP stopped meanwhile skips: without this the requester would
 * retry into a QP that is gone and fail the last message it sent (as
 * ibv_rc_pingpong's server does, its client done). Not while a READ
 * response is unfinished: the ACK must not overtake it, and the requester
 * has more to wait for anyway.
 *
 * Context: process context, qp->work_mutex and the execution context held.
 */
void scire_resp_stop_ack(struct scire_qp *qp)
{
	lockdep_assert_held(&qp->work_mutex);
	if (!qp->resp.read.active)
		scire_resp_ack_flush(qp);
}

/**
 * scire_resp_flush() - drop the responder's work when the QP is in ERR.
 * @qp: the QP.
 *
 * Completes a receive WQE taken for a message that did not finish with
 * IB_WC_WR_FLUSH_ERR (before scire_rq_flush() flushes the posted ones, so
 * completions stay in order), forgets the message in progress, the READ
 * response being generated, the backlog and any owed ACK. Idempotent.
 *
 * Context: the QP's work item only.
 */
void scire_resp_flush(struct scire_qp *qp)
{
	scire_resp_abort(qp);
	if (qp->resp.wqe_valid)
		scire_resp_complete_err(qp, IB_WC_WR_FLUSH_ERR);
	scire_resp_xsrq_release(qp);
}

/* Everything but the buffers and the PSN/MSN back to the start. */
static void scire_resp_clear(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	scire_resp_abort(qp);
	scire_resp_xsrq_release(qp);
	resp->nak_sent = false;
	resp->failed = false;
	resp->wqe_valid = false;
	resp->rcv_len = 0;
	resp->write_va = 0;
	resp->write_rkey = 0;
	resp->write_len = 0;
	resp->write_done = 0;
	memset(&resp->read, 0, sizeof(resp->read));
}

/**
 * scire_resp_reset() - forget all responder state (the QP moved to RESET).
 * @qp: the QP; its worker is stopped.
 *
 * A receive WQE in hand is dropped without a completion (work requests
 * are discarded on the transition to RESET); the resources that
 * answer duplicates are cleared; ePSN and MSN become 0.
 *
 * Context: process context, from modify_qp/create_qp.
 */
void scire_resp_reset(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	scire_resp_clear(qp);
	resp->psn = 0;
	resp->msn = 0;
	if (resp->res)
		memset(resp->res, 0, SCIRE_RESP_NUM_RES * sizeof(*resp->res));
	resp->res_next = 0;
}

/**
 * scire_resp_start() - arm the responder on INIT->RTR.
 * @qp: the QP; qp->rq_psn holds the starting ePSN (IB_QP_RQ_PSN).
 *
 * ePSN = qp->rq_psn, MSN = 0. Called before RTR is
 * published, so the worker sees the new values once it handles packets.
 *
 * Context: process context, from modify_qp.
 */
void scire_resp_start(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	scire_resp_clear(qp);
	resp->psn = scire_psn(qp->rq_psn);
	resp->msn = 0;
}

/**
 * scire_resp_init() - allocate the responder's state for a new QP.
 * @qp: the QP being created.
 *
 * Allocates the receive WQE copy (SCIRE_RECV_WQE_MAX_SIZE bytes) with its SGL
 * cursor, and SCIRE_MAX_RD_ATOMIC responder resources (enough for any
 * max_dest_rd_atomic modify_qp may set later).
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int scire_resp_init(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	__skb_queue_head_init(&resp->backlog);
	/* The WQE copy follows the cursor; both are 8-byte aligned. */
	resp->sgl = kzalloc(sizeof(*resp->sgl) + SCIRE_RECV_WQE_MAX_SIZE,
			    GFP_KERNEL);
	if (!resp->sgl)
		return -ENOMEM;
	resp->wqe = (struct scire_recv_wqe *)(resp->sgl + 1);
	resp->res = kcalloc(SCIRE_RESP_NUM_RES, sizeof(*resp->res),
			    GFP_KERNEL);
	if (!resp->res) {
		kfree(resp->sgl);
		resp->sgl = NULL;
		resp->wqe = NULL;
		return -ENOMEM;
	}
	scire_resp_reset(qp);
	return 0;
}

/**
 * scire_resp_cleanup() - free the responder's state at QP destruction.
 * @qp: the QP; its worker is stopped and will not run again.
 *
 * Frees held-back packets and the buffers of scire_resp_init(). Safe after
 * a failed scire_resp_init().
 *
 * Context: process context.
 */
void scire_resp_cleanup(struct scire_qp *qp)
{
	struct scire_resp *resp = &qp->resp;

	/* The SGL cursor holds no MR between packets: nothing to release. */
	if (resp->sgl)
		__skb_queue_purge(&resp->backlog);
	scire_resp_xsrq_release(qp);
	kfree(resp->sgl);
	kfree(resp->res);
	resp->sgl = NULL;
	resp->wqe = NULL;
	resp->res = NULL;
}
