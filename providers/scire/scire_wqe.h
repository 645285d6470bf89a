/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libscire: encoding work requests into scire WQEs (scire-abi.h).
 *
 * Pure functions over a WQE buffer: they neither lock nor touch ring
 * indices, so ibv_post_send(), the ibv_wr_* builders and the unit test
 * (scire_wqe_test.c) share them. The buffer is a ring slot not yet
 * published, i.e. memory only we use; a WQE is written completely before
 * its slot is handed to the kernel, which checks every field again.
 *
 * Errors are the errno values ibv_post_send(3) gives for a bad work
 * request: EINVAL for an opcode, flag, SGE count, length or inline size the
 * QP cannot take.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_WQE_H
#define SCIRE_WQE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/scire-abi.h>

_Static_assert(sizeof(struct scire_sge) == 16, "scire_sge is 16 bytes");
_Static_assert(sizeof(struct scire_send_wqe) == 64, "send WQE header is 64 bytes");
_Static_assert(offsetof(struct scire_send_wqe, data) == 64,
	       "SGEs or inline data follow the 64-byte header");
_Static_assert(sizeof(struct scire_recv_wqe) == 16, "recv WQE header is 16 bytes");
_Static_assert(offsetof(struct scire_recv_wqe, sge) == 16, "recv SGEs follow the header");
/* The same layout as ibv_sge, though we copy field by field anyway. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct scire_sge), "ibv_sge size");

/* A message is 0 to 2^31 bytes (IBA ch. 9, transport layer). */
#define SCIRE_MAX_MSG_SIZE	(1ULL << 31)

/* Atomic operations act on exactly one 8-byte local buffer (IBA 9.4.5). */
#define SCIRE_ATOMIC_SIZE	8

/* What each send WQE opcode carries and where it may be posted. */
enum scire_op_prop {
	SCIRE_OPP_USER		= 1 << 0,	/* user QPs may post it */
	SCIRE_OPP_UC		= 1 << 1,	/* valid on UC as well as RC */
	SCIRE_OPP_GATHER	= 1 << 2,	/* local data goes out: SGEs read, or inline */
	SCIRE_OPP_SCATTER	= 1 << 3,	/* local data comes in: SGEs written */
	SCIRE_OPP_RDMA		= 1 << 4,	/* rdma: remote address and rkey */
	SCIRE_OPP_ATOMIC	= 1 << 5,	/* atomic: address, rkey, operands */
	SCIRE_OPP_IMM		= 1 << 6,	/* imm_data: immediate data */
	SCIRE_OPP_INV		= 1 << 7,	/* imm_data: an rkey to invalidate */
	SCIRE_OPP_BIND		= 1 << 8,	/* bind: a memory window bind */
	SCIRE_OPP_UD		= 1 << 9,	/* valid on UD as well */
	SCIRE_OPP_ATOMIC_WRITE	= 1 << 10,	/* atomic_write: 8 bytes in the WQE */
	SCIRE_OPP_FLUSH		= 1 << 11,	/* flush: range, type and level */
};

struct scire_op_info {
	uint32_t props;			/* enum scire_op_prop */
	uint64_t send_ops_flag;		/* IBV_QP_EX_WITH_* of its ibv_wr_* builder */
};

/*
 * The one table of send opcode properties. UC has no READ, atomics or
 * Send with Invalidate: the BTH has those opcodes for RC only (IBA 9.2).
 * A UD QP posts SEND and SEND with immediate only: a datagram carries no
 * RDMA, atomic or invalidate operation, and windows and local
 * invalidation belong to the connected service types.
 * Returns NULL for an opcode out of range.
 */
static inline const struct scire_op_info *scire_op_info(unsigned int op)
{
	static const struct scire_op_info info[SCIRE_WQE_OP_MAX] = {
		[SCIRE_WQE_OP_SEND] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_UD |
			SCIRE_OPP_GATHER,
			IBV_QP_EX_WITH_SEND },
		[SCIRE_WQE_OP_SEND_IMM] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_UD |
			SCIRE_OPP_GATHER | SCIRE_OPP_IMM,
			IBV_QP_EX_WITH_SEND_WITH_IMM },
		[SCIRE_WQE_OP_SEND_INV] = {
			SCIRE_OPP_USER | SCIRE_OPP_GATHER | SCIRE_OPP_INV,
			IBV_QP_EX_WITH_SEND_WITH_INV },
		[SCIRE_WQE_OP_RDMA_WRITE] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_GATHER |
			SCIRE_OPP_RDMA,
			IBV_QP_EX_WITH_RDMA_WRITE },
		[SCIRE_WQE_OP_RDMA_WRITE_IMM] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_GATHER |
			SCIRE_OPP_RDMA | SCIRE_OPP_IMM,
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM },
		[SCIRE_WQE_OP_RDMA_READ] = {
			SCIRE_OPP_USER | SCIRE_OPP_SCATTER | SCIRE_OPP_RDMA,
			IBV_QP_EX_WITH_RDMA_READ },
		[SCIRE_WQE_OP_ATOMIC_CMP_SWP] = {
			SCIRE_OPP_USER | SCIRE_OPP_SCATTER | SCIRE_OPP_ATOMIC,
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP },
		[SCIRE_WQE_OP_ATOMIC_FETCH_ADD] = {
			SCIRE_OPP_USER | SCIRE_OPP_SCATTER | SCIRE_OPP_ATOMIC,
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD },
		[SCIRE_WQE_OP_LOCAL_INV] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_INV,
			IBV_QP_EX_WITH_LOCAL_INV },
		[SCIRE_WQE_OP_BIND_MW] = {
			SCIRE_OPP_USER | SCIRE_OPP_UC | SCIRE_OPP_BIND,
			IBV_QP_EX_WITH_BIND_MW },
		/* Fast registration: kernel QPs only (IB_WR_REG_MR). */
		[SCIRE_WQE_OP_REG_MR] = { 0, 0 },
		/* IBA 1.5: RC only, like the other atomics. */
		[SCIRE_WQE_OP_ATOMIC_WRITE] = {
			SCIRE_OPP_USER | SCIRE_OPP_RDMA | SCIRE_OPP_ATOMIC_WRITE,
			IBV_QP_EX_WITH_ATOMIC_WRITE },
#ifdef SCIRE_HAVE_WR_FLUSH
		/* IBA 1.5: RC only; ibv_wr_flush() from rdma-core 45 on. */
		[SCIRE_WQE_OP_FLUSH] = {
			SCIRE_OPP_USER | SCIRE_OPP_FLUSH, IBV_QP_EX_WITH_FLUSH },
#else
		[SCIRE_WQE_OP_FLUSH] = { 0, 0 },
#endif
	};

	return op < SCIRE_WQE_OP_MAX ? &info[op] : NULL;
}

/*
 * ibv_post_send() opcode to scire WQE opcode; -1 for opcodes scire does
 * not carry (TSO, DRIVER1, FLUSH and anything newer).
 */
static inline int scire_wqe_opcode(enum ibv_wr_opcode opcode)
{
	/* Entries hold the WQE opcode + 1, so that 0 marks a hole. */
	static const uint8_t map[] = {
		[IBV_WR_RDMA_WRITE]		= SCIRE_WQE_OP_RDMA_WRITE + 1,
		[IBV_WR_RDMA_WRITE_WITH_IMM]	= SCIRE_WQE_OP_RDMA_WRITE_IMM + 1,
		[IBV_WR_SEND]			= SCIRE_WQE_OP_SEND + 1,
		[IBV_WR_SEND_WITH_IMM]		= SCIRE_WQE_OP_SEND_IMM + 1,
		[IBV_WR_RDMA_READ]		= SCIRE_WQE_OP_RDMA_READ + 1,
		[IBV_WR_ATOMIC_CMP_AND_SWP]	= SCIRE_WQE_OP_ATOMIC_CMP_SWP + 1,
		[IBV_WR_ATOMIC_FETCH_AND_ADD]	= SCIRE_WQE_OP_ATOMIC_FETCH_ADD + 1,
		[IBV_WR_LOCAL_INV]		= SCIRE_WQE_OP_LOCAL_INV + 1,
		[IBV_WR_BIND_MW]		= SCIRE_WQE_OP_BIND_MW + 1,
		[IBV_WR_SEND_WITH_INV]		= SCIRE_WQE_OP_SEND_INV + 1,
		[IBV_WR_ATOMIC_WRITE]		= SCIRE_WQE_OP_ATOMIC_WRITE + 1,
	};

	if ((unsigned int)opcode >= sizeof(map) / sizeof(map[0]))
		return -1;
	return (int)map[opcode] - 1;
}

/* What a QP's SQ accepts (from the create response). */
struct scire_sq_caps {
	uint32_t max_sge;	/* SGEs per WQE, <= 255 (num_sge is a byte) */
	uint32_t max_inline;	/* inline bytes per WQE */
	bool uc;		/* a UC QP: RC-only opcodes are refused */
	bool ud;		/* a UD QP: sends only, each with an address */
	bool xrc;		/* an XRC send QP: each WQE names a remote SRQ */
	bool raw;		/* a raw packet QP: SENDs of whole frames only */
};

/* Can a QP with these caps post WQE opcode op at all? */
static inline bool scire_op_allowed(const struct scire_sq_caps *caps,
				    unsigned int op)
{
	const struct scire_op_info *info = scire_op_info(op);

	if (!info || !(info->props & SCIRE_OPP_USER))
		return false;
	/* A frame has nowhere to carry immediate data or an address. */
	if (caps->raw)
		return op == SCIRE_WQE_OP_SEND;
	if (caps->ud)
		return (info->props & SCIRE_OPP_UD) != 0;
	return !caps->uc || (info->props & SCIRE_OPP_UC);
}

/*
 * An address handle as the provider keeps it: a UD WQE names its
 * destination by the kernel's ah_num, not by libibverbs' handle.
 */
struct scire_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;	/* struct scire_create_ah_resp.ah_num */
};

static inline struct scire_ah *to_scire_ah(struct ibv_ah *ibah)
{
	return (struct scire_ah *)((char *)ibah - offsetof(struct scire_ah, ibah));
}

/* QP numbers are 24 bits (BTH DestQP); 0xffffff is the multicast QPN. */
#define SCIRE_QPN_MASK		0xffffffU

/*
 * Address a UD WQE: the AH, the destination QP and its Q_Key. The Q_Key
 * goes as given: one with the high-order bit set asks the kernel for the
 * sending QP's own Q_Key (IBA 10.2.5). EINVAL without an AH or with a QP
 * number wider than 24 bits.
 */
static inline int scire_wqe_set_ud(struct scire_send_wqe *wqe, struct ibv_ah *ah,
				   uint32_t remote_qpn, uint32_t remote_qkey)
{
	if (!ah || (remote_qpn & ~SCIRE_QPN_MASK))
		return EINVAL;
	wqe->ud.ah_num = to_scire_ah(ah)->ah_num;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
	wqe->ud.pkey_index = 0;
	return 0;
}

/*
 * ibv_send_flags to WQE flags. IBV_SEND_INLINE is not translated here: the
 * data setters decide inline-ness. Anything but FENCE, SIGNALED, SOLICITED
 * and INLINE (IP_CSUM is a UD/raw Ethernet offload) is EINVAL.
 */
static inline int scire_wqe_flags(unsigned int send_flags, uint8_t *flags)
{
	const unsigned int known = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				   IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	uint8_t f = 0;

	if (send_flags & ~known)
		return EINVAL;
	if (send_flags & IBV_SEND_FENCE)
		f |= SCIRE_WQE_F_FENCE;
	if (send_flags & IBV_SEND_SIGNALED)
		f |= SCIRE_WQE_F_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		f |= SCIRE_WQE_F_SOLICITED;
	*flags = f;
	return 0;
}

/* Start a WQE: a zeroed header (reserved fields included) with no data. */
static inline void scire_wqe_init(struct scire_send_wqe *wqe, uint8_t opcode,
				  uint8_t flags, uint64_t wr_id)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	wqe->flags = flags;
}

static inline uint32_t scire_wqe_props(const struct scire_send_wqe *wqe)
{
	const struct scire_op_info *info = scire_op_info(wqe->opcode);

	return info ? info->props : 0;
}

/*
 * Attach num_sge SGEs (the data of a SEND/WRITE, the destination of a
 * READ/atomic). EINVAL if the opcode moves no local data, num_sge exceeds
 * max_sge or the total length exceeds a message.
 */
static inline int scire_wqe_set_sge_list(struct scire_send_wqe *wqe,
					 const struct scire_sq_caps *caps,
					 size_t num_sge,
					 const struct ibv_sge *sg_list)
{
	struct scire_sge *sge = (struct scire_sge *)wqe->data;
	uint64_t total = 0;
	size_t i;

	if (!(scire_wqe_props(wqe) & (SCIRE_OPP_GATHER | SCIRE_OPP_SCATTER)))
		return EINVAL;
	if (num_sge > caps->max_sge)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		total += sg_list[i].length;
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
	}
	if (total > SCIRE_MAX_MSG_SIZE)
		return EINVAL;
	wqe->num_sge = (uint8_t)num_sge;
	wqe->inline_len = 0;
	wqe->flags &= (uint8_t)~SCIRE_WQE_F_INLINE;
	return 0;
}

/*
 * Make the WQE carry inline data, none yet: the bytes follow with
 * scire_wqe_add_inline(). Only SEND and RDMA WRITE gather local data, so
 * only they can take it (EINVAL otherwise).
 */
static inline int scire_wqe_start_inline(struct scire_send_wqe *wqe)
{
	if (!(scire_wqe_props(wqe) & SCIRE_OPP_GATHER))
		return EINVAL;
	wqe->flags |= SCIRE_WQE_F_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = 0;
	return 0;
}

/* Append len bytes at addr to the inline data; EINVAL past max_inline. */
static inline int scire_wqe_add_inline(struct scire_send_wqe *wqe,
				       const struct scire_sq_caps *caps,
				       const void *addr, size_t len)
{
	if (len > caps->max_inline - wqe->inline_len)
		return EINVAL;
	if (len)
		memcpy(wqe->data + wqe->inline_len, addr, len);
	wqe->inline_len += (uint32_t)len;
	return 0;
}

/*
 * Fill the bind part of a BIND_MW WQE. mw_rkey names the window as it is
 * now (mw->rkey); new_rkey is the caller's choice, which may change only
 * the 8-bit key (ibv_inc_rkey(); IBA 10.6.7.2). A type 2 window is bound
 * to an MR (it is invalidated, not bound to nothing), so the MR is
 * required; range, access and PD are the kernel's to check. Type 1
 * windows are bound with ibv_bind_mw(), never by a work request. EINVAL
 * otherwise.
 */
static inline int scire_wqe_set_bind(struct scire_send_wqe *wqe,
				     const struct ibv_mw *mw, uint32_t new_rkey,
				     const struct ibv_mw_bind_info *info)
{
	if (!(scire_wqe_props(wqe) & SCIRE_OPP_BIND))
		return EINVAL;
	if (!mw || mw->type != IBV_MW_TYPE_2)
		return EINVAL;
	if ((new_rkey ^ mw->rkey) & ~(uint32_t)0xff)
		return EINVAL;
	if (!info->mr)
		return EINVAL;
	wqe->bind.addr = info->addr;
	wqe->bind.length = info->length;
	wqe->bind.mw_rkey = mw->rkey;
	wqe->bind.new_rkey = new_rkey;
	wqe->bind.mr_lkey = info->mr->lkey;
	/* IBV_ACCESS_* bits 0..5 have the kernel's IB_ACCESS_* values. */
	wqe->bind.access = info->mw_access_flags;
	return 0;
}

/*
 * Build the BIND_MW WQE of ibv_bind_mw() on a type 1 window (IBA 10.6.7.1):
 * flagged SCIRE_WQE_F_MW_TYPE1, so the kernel binds only a type 1 window
 * with it. The new rkey is the window's with the next key byte
 * (ibv_inc_rkey()): every bind, an unbinding one included, makes the old
 * rkey stale. Length 0 unbinds, and then the MR may be absent. Range,
 * rights and PDs are the kernel's to check. EINVAL for a QP that cannot
 * bind (UD), a window of another type, unknown send flags, or a non-zero
 * length without an MR.
 */
static inline int scire_wqe_from_bind1(struct scire_send_wqe *wqe,
				       const struct scire_sq_caps *caps,
				       const struct ibv_mw *mw,
				       const struct ibv_mw_bind *bind,
				       uint32_t *new_rkey)
{
	const struct ibv_mw_bind_info *info = &bind->bind_info;
	uint8_t flags;

	if (!scire_op_allowed(caps, SCIRE_WQE_OP_BIND_MW))
		return EINVAL;
	if (!mw || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	if ((bind->send_flags & IBV_SEND_INLINE) ||
	    scire_wqe_flags(bind->send_flags, &flags))
		return EINVAL;
	if (info->length && !info->mr)
		return EINVAL;
	scire_wqe_init(wqe, SCIRE_WQE_OP_BIND_MW, flags | SCIRE_WQE_F_MW_TYPE1,
		       bind->wr_id);
	*new_rkey = ibv_inc_rkey(mw->rkey);
	wqe->bind.mw_rkey = mw->rkey;
	wqe->bind.new_rkey = *new_rkey;
	if (info->length) {
		wqe->bind.addr = info->addr;
		wqe->bind.length = info->length;
		wqe->bind.mr_lkey = info->mr->lkey;
		/* IBV_ACCESS_* bits 0..5 have the kernel's IB_ACCESS_* values. */
		wqe->bind.access = info->mw_access_flags;
	}
	return 0;
}

/*
 * Last check of a finished WQE, once its data setters have run: an atomic
 * needs its one 8-byte destination buffer.
 */
static inline int scire_wqe_check(const struct scire_send_wqe *wqe)
{
	const struct scire_sge *sge = (const struct scire_sge *)wqe->data;

	if (scire_wqe_props(wqe) & SCIRE_OPP_ATOMIC) {
		if (wqe->num_sge != 1 || sge[0].length != SCIRE_ATOMIC_SIZE)
			return EINVAL;
	}
	/* A FLUSH moves no data: no SGE, no inline bytes. */
	if ((scire_wqe_props(wqe) & SCIRE_OPP_FLUSH) &&
	    (wqe->num_sge || (wqe->flags & SCIRE_WQE_F_INLINE)))
		return EINVAL;
	return 0;
}

/*
 * Encode one ibv_post_send() work request into wqe (a slot of at least
 * 64 + max(16 * max_sge, max_inline) bytes). IBV_SEND_INLINE applies to
 * SEND and RDMA WRITE, the opcodes that gather local data; other opcodes
 * ignore it, as the flag only says how to fetch data they do not have.
 * Returns 0 or EINVAL.
 */
static inline int scire_wqe_from_send_wr(struct scire_send_wqe *wqe,
					 const struct scire_sq_caps *caps,
					 const struct ibv_send_wr *wr)
{
	int op = scire_wqe_opcode(wr->opcode);
	uint32_t props;
	uint8_t flags;
	int ret, i;

	if (op < 0 || !scire_op_allowed(caps, (unsigned int)op))
		return EINVAL;
	if (scire_wqe_flags(wr->send_flags, &flags))
		return EINVAL;
	props = scire_op_info((unsigned int)op)->props;

	scire_wqe_init(wqe, (uint8_t)op, flags, wr->wr_id);
	if (props & SCIRE_OPP_IMM)
		wqe->imm_data = wr->imm_data;		/* network order, as given */
	if (props & SCIRE_OPP_INV)
		wqe->imm_data = wr->invalidate_rkey;	/* host order */
	if (props & SCIRE_OPP_RDMA) {
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
	}
	if (props & SCIRE_OPP_ATOMIC) {
		wqe->atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->atomic.compare_add = wr->wr.atomic.compare_add;
		/* FETCH_ADD has no swap operand; keep the field zero. */
		if (op == SCIRE_WQE_OP_ATOMIC_CMP_SWP)
			wqe->atomic.swap = wr->wr.atomic.swap;
		wqe->atomic.rkey = wr->wr.atomic.rkey;
	}
	if (props & SCIRE_OPP_BIND) {
		ret = scire_wqe_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
					 &wr->bind_mw.bind_info);
		if (ret)
			return ret;
	}
	if (props & SCIRE_OPP_ATOMIC_WRITE) {
		/*
		 * The 64 bits to write are the one 8-byte SGE's, read now, as
		 * ibv_wr_atomic_write() takes them from its pointer: the WQE
		 * carries the value, not the buffer.
		 */
		if (wr->num_sge != 1 || !wr->sg_list ||
		    wr->sg_list[0].length != SCIRE_ATOMIC_SIZE)
			return EINVAL;
		memcpy(wqe->atomic_write.value,
		       (const void *)(uintptr_t)wr->sg_list[0].addr,
		       SCIRE_ATOMIC_SIZE);
	}
	if (caps->ud) {
		ret = scire_wqe_set_ud(wqe, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				       wr->wr.ud.remote_qkey);
		if (ret)
			return ret;
	}
	/* XRC: the XRC SRQ at the target, 24 bits (annex A19, XRCETH). */
	if (caps->xrc) {
		if (wr->qp_type.xrc.remote_srqn > 0xffffff)
			return EINVAL;
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	}

	if (props & (SCIRE_OPP_GATHER | SCIRE_OPP_SCATTER)) {
		if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
			return EINVAL;
		if ((props & SCIRE_OPP_GATHER) && (wr->send_flags & IBV_SEND_INLINE)) {
			/* Cannot fail: SEND and WRITE gather. */
			(void)scire_wqe_start_inline(wqe);
			for (i = 0; i < wr->num_sge; i++) {
				ret = scire_wqe_add_inline(
					wqe, caps,
					(const void *)(uintptr_t)wr->sg_list[i].addr,
					wr->sg_list[i].length);
				if (ret)
					return ret;
			}
		} else {
			ret = scire_wqe_set_sge_list(wqe, caps,
						     (size_t)wr->num_sge,
						     wr->sg_list);
			if (ret)
				return ret;
		}
	}
	return scire_wqe_check(wqe);
}

/*
 * Encode one receive work request into an RQ or SRQ slot of at least
 * 16 + 16 * max_sge bytes. EINVAL for a bad SGE count or length.
 */
static inline int scire_wqe_from_recv_wr(struct scire_recv_wqe *wqe,
					 uint32_t max_sge,
					 const struct ibv_recv_wr *wr)
{
	uint64_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = (uint32_t)wr->num_sge;
	wqe->reserved = 0;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	if (total > SCIRE_MAX_MSG_SIZE)
		return EINVAL;
	return 0;
}

#endif /* SCIRE_WQE_H */
