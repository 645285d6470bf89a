/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: tracepoints for someone debugging a stuck or failing QP.
 *
 * Events (system "scire"): QP state changes, the path a requester takes at
 * RTS (same-host fast path or wire), packets dropped and why, rewinds of
 * the requester (timeout, sequence NAK, RNR NAK, broken READ response),
 * NAKs sent and received, and WQEs the completer fails. All of them are
 * off the per-packet success path, so an enabled tracer sees only the
 * events that explain trouble. Example (docs/testing.md, "Tracing"):
 *
 *   trace-cmd record -e scire ib_write_bw ...
 *   echo 1 > /sys/kernel/tracing/events/scire/enable
 *
 * Copyright (c) 2026 The scire authors.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM scire

#if !defined(_SCIRE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SCIRE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "scire.h"

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define scire_show_qp_state(s)					\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },		\
			 { IB_QPS_INIT, "INIT" },		\
			 { IB_QPS_RTR, "RTR" },			\
			 { IB_QPS_RTS, "RTS" },			\
			 { IB_QPS_SQD, "SQD" },			\
			 { IB_QPS_SQE, "SQE" },			\
			 { IB_QPS_ERR, "ERR" })

TRACE_DEFINE_ENUM(SCIRE_DROP_NOMEM);
TRACE_DEFINE_ENUM(SCIRE_DROP_MALFORMED);
TRACE_DEFINE_ENUM(SCIRE_DROP_PKEY);
TRACE_DEFINE_ENUM(SCIRE_DROP_DGID);
TRACE_DEFINE_ENUM(SCIRE_DROP_ICRC);
TRACE_DEFINE_ENUM(SCIRE_DROP_QPN);
TRACE_DEFINE_ENUM(SCIRE_DROP_NO_QP);
TRACE_DEFINE_ENUM(SCIRE_DROP_QP_TYPE);
TRACE_DEFINE_ENUM(SCIRE_DROP_QP_PATH);
TRACE_DEFINE_ENUM(SCIRE_DROP_NOT_NEIGHBOUR);
TRACE_DEFINE_ENUM(SCIRE_DROP_PORT_STATE);
TRACE_DEFINE_ENUM(SCIRE_DROP_RXQ_FULL);
TRACE_DEFINE_ENUM(SCIRE_DROP_BACKLOG);
TRACE_DEFINE_ENUM(SCIRE_DROP_STALE);
TRACE_DEFINE_ENUM(SCIRE_DROP_GSI_RATE);
TRACE_DEFINE_ENUM(SCIRE_DROP_ERR_RATE);
TRACE_DEFINE_ENUM(SCIRE_DROP_TX_ROUTE);
TRACE_DEFINE_ENUM(SCIRE_DROP_TX_INVALID);
TRACE_DEFINE_ENUM(SCIRE_DROP_TX_NOMEM);
TRACE_DEFINE_ENUM(SCIRE_DROP_TX_NO_LINK);

#define scire_show_drop_reason(r)					\
	__print_symbolic(r, { SCIRE_DROP_NOMEM, "nomem" },		\
			 { SCIRE_DROP_MALFORMED, "malformed" },		\
			 { SCIRE_DROP_PKEY, "pkey" },			\
			 { SCIRE_DROP_DGID, "dgid" },			\
			 { SCIRE_DROP_ICRC, "icrc" },			\
			 { SCIRE_DROP_QPN, "qpn" },			\
			 { SCIRE_DROP_NO_QP, "no_qp" },			\
			 { SCIRE_DROP_QP_TYPE, "qp_type" },		\
			 { SCIRE_DROP_QP_PATH, "qp_path" },		\
			 { SCIRE_DROP_NOT_NEIGHBOUR, "not_neighbour" },	\
			 { SCIRE_DROP_PORT_STATE, "port_state" },	\
			 { SCIRE_DROP_RXQ_FULL, "rxq_full" },		\
			 { SCIRE_DROP_BACKLOG, "backlog" },		\
			 { SCIRE_DROP_STALE, "stale" },		\
			 { SCIRE_DROP_GSI_RATE, "gsi_rate" },	\
			 { SCIRE_DROP_ERR_RATE, "err_rate" },	\
			 { SCIRE_DROP_TX_ROUTE, "tx_route" },		\
			 { SCIRE_DROP_TX_INVALID, "tx_invalid" },	\
			 { SCIRE_DROP_TX_NOMEM, "tx_nomem" },	\
			 { SCIRE_DROP_TX_NO_LINK, "tx_no_link" })

TRACE_DEFINE_ENUM(SCIRE_REWIND_TIMEOUT);
TRACE_DEFINE_ENUM(SCIRE_REWIND_SEQ_NAK);
TRACE_DEFINE_ENUM(SCIRE_REWIND_RNR_NAK);
TRACE_DEFINE_ENUM(SCIRE_REWIND_READ_GAP);

#define scire_show_rewind_reason(r)					\
	__print_symbolic(r, { SCIRE_REWIND_TIMEOUT, "timeout" },	\
			 { SCIRE_REWIND_SEQ_NAK, "seq_nak" },		\
			 { SCIRE_REWIND_RNR_NAK, "rnr_nak" },		\
			 { SCIRE_REWIND_READ_GAP, "read_gap" })

/*
 * AETH syndrome (IBA 9.7.5.1): bits 6:5 the type (1 RNR NAK, 3 NAK), bits
 * 4:0 the RNR timer code or the NAK code.
 */
#define scire_show_aeth_type(syn)					\
	__print_symbolic(((syn) >> 5) & 3, { 0, "ACK" },		\
			 { 1, "RNR_NAK" }, { 2, "reserved" },		\
			 { 3, "NAK" })

/* The device name is copied: a fixed array reads the same on 6.1 and 6.12. */
#define SCIRE_TRACE_DEV(sdev)						\
	strscpy(__entry->dev, dev_name(&(sdev)->ibdev.dev), IB_DEVICE_NAME_MAX)

TRACE_EVENT(scire_qp_state,
	    TP_PROTO(struct scire_qp *qp, enum ib_qp_state old,
		     enum ib_qp_state new),
	    TP_ARGS(qp, old, new),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, old)
			     __field(u32, new)),
	    TP_fast_assign(SCIRE_TRACE_DEV(qp->sdev);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("%s qpn=%u %s -> %s", __entry->dev, __entry->qpn,
		      scire_show_qp_state(__entry->old),
		      scire_show_qp_state(__entry->new))
);

TRACE_EVENT(scire_req_path,
	    TP_PROTO(struct scire_qp *qp, bool local, u32 mtu),
	    TP_ARGS(qp, local, mtu),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, dest_qpn)
			     __field(bool, local)
			     __field(u32, mtu)),
	    TP_fast_assign(SCIRE_TRACE_DEV(qp->sdev);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->dest_qpn = qp->dest_qpn;
			   __entry->local = local;
			   __entry->mtu = mtu;),
	    TP_printk("%s qpn=%u dest_qpn=%u path=%s mtu=%u", __entry->dev,
		      __entry->qpn, __entry->dest_qpn,
		      __entry->local ? "local" : "wire", __entry->mtu)
);

TRACE_EVENT(scire_drop,
	    TP_PROTO(struct scire_dev *sdev, const struct sk_buff *skb,
		     enum scire_drop_reason reason),
	    TP_ARGS(sdev, skb, reason),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, reason)
			     __field(u32, len)),
	    TP_fast_assign(SCIRE_TRACE_DEV(sdev);
			   __entry->reason = reason;
			   __entry->len = skb ? skb->len : 0;),
	    TP_printk("%s reason=%s len=%u", __entry->dev,
		      scire_show_drop_reason(__entry->reason), __entry->len)
);

TRACE_EVENT(scire_rewind,
	    TP_PROTO(struct scire_qp *qp, enum scire_rewind_reason reason,
		     u32 psn, u32 left),
	    TP_ARGS(qp, reason, psn, left),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, reason)
			     __field(u32, psn)
			     __field(u32, left)),
	    TP_fast_assign(SCIRE_TRACE_DEV(qp->sdev);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->reason = reason;
			   __entry->psn = psn;
			   __entry->left = left;),
	    TP_printk("%s qpn=%u reason=%s psn=%u retries_left=%u",
		      __entry->dev, __entry->qpn,
		      scire_show_rewind_reason(__entry->reason), __entry->psn,
		      __entry->left)
);

DECLARE_EVENT_CLASS(scire_nak_class,
		    TP_PROTO(struct scire_qp *qp, u8 syndrome, u32 psn),
		    TP_ARGS(qp, syndrome, psn),
		    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
				     __field(u32, qpn)
				     __field(u8, syndrome)
				     __field(u32, psn)),
		    TP_fast_assign(SCIRE_TRACE_DEV(qp->sdev);
				   __entry->qpn = qp->ibqp.qp_num;
				   __entry->syndrome = syndrome;
				   __entry->psn = psn;),
		    TP_printk("%s qpn=%u %s code=%u psn=%u", __entry->dev,
			      __entry->qpn,
			      scire_show_aeth_type(__entry->syndrome),
			      __entry->syndrome & 0x1f, __entry->psn)
);

/* An RC responder's RNR NAK or NAK (scire_resp_nak()). */
DEFINE_EVENT(scire_nak_class, scire_nak_send,
	     TP_PROTO(struct scire_qp *qp, u8 syndrome, u32 psn),
	     TP_ARGS(qp, syndrome, psn));

/* An RNR NAK or NAK the completer received, before it is checked. */
DEFINE_EVENT(scire_nak_class, scire_nak_recv,
	     TP_PROTO(struct scire_qp *qp, u8 syndrome, u32 psn),
	     TP_ARGS(qp, syndrome, psn));

TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);

#define scire_show_wc_status(st)					\
	__print_symbolic(st, { IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },	\
			 { IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },	\
			 { IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },	\
			 { IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },	\
			 { IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },	\
			 { IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },	\
			 { IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },	\
			 { IB_WC_REM_OP_ERR, "REM_OP_ERR" },		\
			 { IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },	\
			 { IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" })

TRACE_EVENT(scire_wqe_fail,
	    TP_PROTO(struct scire_qp *qp, u32 psn, u8 status),
	    TP_ARGS(qp, psn, status),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, status)),
	    TP_fast_assign(SCIRE_TRACE_DEV(qp->sdev);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->status = status;),
	    TP_printk("%s qpn=%u psn=%u status=%s", __entry->dev, __entry->qpn,
		      __entry->psn, scire_show_wc_status(__entry->status))
);

#endif /* _SCIRE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE scire_trace
#include <trace/define_trace.h>
