/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: responder state (IBA 9.7, responder side).
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RESP_H
#define SCIRE_RESP_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct scire_pkt;
struct scire_qp;
struct scire_sgl;
struct scire_recv_wqe;
struct scire_resp_res;

/**
 * enum scire_resp_msg - the multi-packet message in progress.
 * @SCIRE_RESP_MSG_NONE:  none; the next request must be a FIRST or ONLY.
 * @SCIRE_RESP_MSG_SEND:  a SEND_FIRST was accepted; SEND_MIDDLE/LAST follow.
 * @SCIRE_RESP_MSG_WRITE: a WRITE_FIRST was accepted; WRITE_MIDDLE/LAST
 *			  follow.
 */
enum scire_resp_msg {
	SCIRE_RESP_MSG_NONE,
	SCIRE_RESP_MSG_SEND,
	SCIRE_RESP_MSG_WRITE,
};

/**
 * struct scire_resp_read - the READ response being generated.
 * @va:		remote address of the next byte to send.
 * @resid:	bytes still to send.
 * @rkey:	the R_Key of the request, checked again for every packet.
 * @psn:	PSN of the next response packet.
 * @msn:	MSN the AETHs of this response carry.
 * @mtu:	payload bytes per packet, fixed when the request was accepted
 *		(it decided how many PSNs the READ consumes).
 * @first:	the next packet is the first of the response.
 * @replay:	answers a duplicate request: if the memory is no longer
 *		readable, the response just stops (see scire_resp_read_pump()).
 * @local:	the request was a same-host unit: so is the response, with
 *		@mtu SCIRE_LOCAL_MTU. Its payload is in page fragments of
 *		the MR where it can be, as a wire packet's is from
 *		SCIRE_WIRE_ZC_MIN bytes on.
 * @active:	a response is being generated; requests that arrive
 *		meanwhile wait in scire_resp.backlog, so every response
 *		leaves in PSN order.
 * @srqn:	XRC TGT QP: the XRC SRQ the request named; its PD checks
 *		@rkey.
 */
struct scire_resp_read {
	u64 va;
	u32 resid;
	u32 rkey;
	u32 srqn;
	u32 psn;
	u32 msn;
	u32 mtu;
	bool first;
	bool replay;
	bool local;
	bool active;
};

/**
 * struct scire_resp - responder state of one QP. Touched only from the
 * QP's work item, and from modify_qp/destroy_qp while it is stopped.
 * @psn:	ePSN, the PSN of the next new request.
 * @msn:	MSN, messages completed (IBA 9.7.5.1), 24 bits.
 * @nak_sent:	a PSN sequence error or RNR NAK for @psn is outstanding:
 *		later packets are dropped silently until @psn arrives.
 * @failed:	the responder moved the QP to ERR; nothing more is done
 *		until RESET, even before the state change is seen.
 * @ack_pending: an ACKNOWLEDGE for @ack_psn is owed; sent once per batch.
 * @ack_psn:	latest PSN that must be acknowledged.
 * @ack_msn:	MSN to report with @ack_psn.
 * @local:	the last request was a same-host unit: ACKs and NAKs go back
 *		as units too.
 * @msg:	the multi-packet message in progress.
 * @wqe_valid:	@wqe holds a receive WQE taken from the RQ/SRQ and not yet
 *		completed.
 * @wqe:	kernel copy of that receive WQE (SCIRE_RECV_WQE_MAX_SIZE bytes).
 * @sgl:	cursor over @wqe's SGEs; holds no MR between packets.
 * @rcv_len:	bytes of the SEND in progress placed so far.
 * @write_va:	RETH virtual address of the WRITE in progress.
 * @write_rkey:	its R_Key.
 * @write_len:	its RETH DMA length.
 * @write_done:	bytes of it written so far.
 * @read:	the READ response being generated.
 * @backlog:	requests held back while @read is active, in arrival order
 *		(no lock: only the work item touches it).
 * @res:	responder resources: the last SCIRE_MAX_RD_ATOMIC READs and
 *		atomics, for answering duplicates (IBA 9.7.5.1.2).
 * @res_next:	free-running index of the next @res slot to fill.
 * @xsrq:	XRC TGT QP: the XRC SRQ of the request being handled (its
 *		XRCETH), held for the rest of the run (scire_xsrq_get(),
 *		let go in scire_resp_batch_end()); its PD checks R_Keys and
 *		L_Keys, its ring gives the receive WQEs, its CQ takes their
 *		completions. NULL between runs.
 * @wqe_srqn:	XRC TGT QP: the XRC SRQ @wqe was taken from.
 */
struct scire_resp {
	u32 psn;
	u32 msn;
	bool nak_sent;
	bool failed;
	bool ack_pending;
	u32 ack_psn;
	u32 ack_msn;
	bool local;

	enum scire_resp_msg msg;
	bool wqe_valid;
	struct scire_recv_wqe *wqe;
	struct scire_sgl *sgl;
	u32 rcv_len;

	u64 write_va;
	u32 write_rkey;
	u32 write_len;
	u32 write_done;

	struct scire_resp_read read;
	struct sk_buff_head backlog;

	struct scire_resp_res *res;
	u32 res_next;

	struct scire_srq *xsrq;
	u32 wqe_srqn;
};

/**
 * struct scire_resp_in - a SEND or RDMA WRITE request as the responder
 * executes it: read from its packet's headers, or handed over without a
 * packet by a requester of this host (scire_resp_direct()).
 * @pkt:	its BTH fields; @pkt->paylen payload bytes.
 * @skb:	the packet, the payload after its headers; NULL without one.
 * @buf:	without a packet: the payload, in kernel memory.
 * @va:		RETH virtual address (WRITE FIRST or ONLY).
 * @rkey:	RETH R_Key.
 * @len:	RETH DMA length.
 * @imm:	ImmDt, in network order as on the wire.
 * @inv_rkey:	IETH: the R_Key to invalidate.
 */
struct scire_resp_in {
	const struct scire_pkt *pkt;
	struct sk_buff *skb;
	void *buf;
	u64 va;
	u32 rkey;
	u32 len;
	u32 imm;
	u32 inv_rkey;
};

/**
 * enum scire_direct - what became of a direct request (scire_resp_direct()).
 * @SCIRE_DIRECT_NOT:	not taken, nothing changed.
 * @SCIRE_DIRECT_SENT:	handled like its packet, not acknowledged.
 * @SCIRE_DIRECT_ACKED:	executed and acknowledged.
 */
enum scire_direct {
	SCIRE_DIRECT_NOT,
	SCIRE_DIRECT_SENT,
	SCIRE_DIRECT_ACKED,
};

int scire_resp_init(struct scire_qp *qp);
void scire_resp_cleanup(struct scire_qp *qp);
void scire_resp_reset(struct scire_qp *qp);
void scire_resp_start(struct scire_qp *qp);
void scire_resp_rcv(struct scire_qp *qp, struct sk_buff *skb);
void scire_resp_batch_end(struct scire_qp *qp);
void scire_resp_flush(struct scire_qp *qp);
void scire_resp_stop_ack(struct scire_qp *qp);
enum scire_direct scire_resp_direct(struct scire_qp *qp,
				    const struct scire_resp_in *in);

#endif /* SCIRE_RESP_H */
