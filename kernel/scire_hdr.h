/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: RoCEv2 wire format (IBA 1.4 vol. 1 ch. 9, RoCEv2 annex A17).
 *
 * Headers are declared as they appear on the wire, big-endian; accessors
 * convert. What each BTH opcode carries is one table, scire_opcode[].
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_HDR_H
#define SCIRE_HDR_H

#include <linux/types.h>
#include <asm/byteorder.h>

#define SCIRE_ROCE_V2_PORT	4791	/* IANA UDP port of RoCEv2 */
#define SCIRE_PSN_MASK		0xffffff
#define SCIRE_QPN_MASK		0xffffff
#define SCIRE_DEFAULT_PKEY	0xffff
#define SCIRE_ICRC_SIZE		4

/* Base Transport Header, IBA 9.2. */
struct scire_bth {
	u8 opcode;
	u8 flags;		/* SE(7) M(6) PadCnt(5:4) TVer(3:0) */
	__be16 pkey;
	__be32 qpn;		/* FECN(31) BECN(30) resv(29:24) DestQP(23:0) */
	__be32 apsn;		/* AckReq(31) resv(30:24) PSN(23:0) */
};

#define SCIRE_BTH_SE		0x80
#define SCIRE_BTH_MIG		0x40
#define SCIRE_BTH_PAD_SHIFT	4
#define SCIRE_BTH_PAD_MASK	0x30
#define SCIRE_BTH_TVER_MASK	0x0f
#define SCIRE_BTH_ACKREQ	BIT(31)
#define SCIRE_BTH_RESV8A_MASK	0xff000000	/* masked to 1s in the ICRC */

/* RDMA Extended Transport Header, IBA 9.3.3. */
struct scire_reth {
	__be64 va;		/* at BTH + 12: only 4-byte aligned */
	__be32 rkey;
	__be32 len;
} __packed;

/* Atomic Extended Transport Header, IBA 9.3.4. */
struct scire_atmeth {
	__be64 va;
	__be32 rkey;
	__be32 swap_add_hi;	/* 64-bit fields at 4-byte alignment */
	__be32 swap_add_lo;
	__be32 comp_hi;
	__be32 comp_lo;
} __packed;

/* ACK Extended Transport Header, IBA 9.3.5. */
struct scire_aeth {
	__be32 smsn;		/* Syndrome(31:24) MSN(23:0) */
};

/* AETH syndrome, IBA 9.7.5.1, table 43. */
#define SCIRE_AETH_TYPE_MASK	0xe0
#define SCIRE_AETH_ACK		0x00	/* low 5 bits: credit count */
#define SCIRE_AETH_RNR_NAK	0x20	/* low 5 bits: RNR timer code */
#define SCIRE_AETH_NAK		0x60	/* low 5 bits: NAK code */
#define SCIRE_AETH_CREDIT_INVALID 0x1f	/* no end-to-end credits */
#define SCIRE_AETH_ACK_UNLIMITED (SCIRE_AETH_ACK | SCIRE_AETH_CREDIT_INVALID)

enum scire_nak_code {
	SCIRE_NAK_PSN_SEQ_ERR		= 0,
	SCIRE_NAK_INVALID_REQUEST	= 1,
	SCIRE_NAK_REMOTE_ACCESS_ERR	= 2,
	SCIRE_NAK_REMOTE_OP_ERR		= 3,
	SCIRE_NAK_INVALID_RD_REQUEST	= 4,
};

/* Atomic Acknowledge ETH, IBA 9.5.3. */
struct scire_atmack {
	__be32 orig_hi;
	__be32 orig_lo;
};

/* Datagram ETH, IBA 9.3.2. */
struct scire_deth {
	__be32 qkey;
	__be32 sqp;		/* resv(31:24) SrcQP(23:0) */
};

/* XRC Extended Transport Header, IBA 9.3.8 (A19.3): the target XRC SRQ. */
struct scire_xrceth {
	__be32 srqn;		/* resv(31:24) XRCSRQ(23:0) */
};

/* Immediate data and Invalidate ETH, IBA 9.3.6 and 9.3.7. */
struct scire_immdt {
	__be32 imm;
};

struct scire_ieth {
	__be32 rkey;
};

/*
 * FLUSH Extended Transport Header (IBA 1.5, RDMA FLUSH): the placement
 * type in bits 3:0 (IB_FLUSH_GLOBAL 1, IB_FLUSH_PERSISTENT 2) and the
 * selectivity level in bits 5:4 (IB_FLUSH_RANGE 0, IB_FLUSH_MR 1); the
 * rest is reserved. It comes between the BTH and the RETH.
 */
struct scire_feth {
	__be32 bits;
};

#define SCIRE_FETH_PLT_MASK	0x0000000f
#define SCIRE_FETH_SEL_MASK	0x00000030
#define SCIRE_FETH_SEL_SHIFT	4
#define SCIRE_FLUSH_GLOBAL	1	/* placement: global visibility */
#define SCIRE_FLUSH_PERSISTENT	2	/* placement: persistence */
#define SCIRE_FLUSH_RANGE	0	/* selectivity: the RETH's range */
#define SCIRE_FLUSH_MR		1	/* selectivity: the whole region */

/* Transport bits of a BTH opcode (IBA 9.2.1 table 38). */
#define SCIRE_OP_TRANSPORT_MASK	0xe0

/* BTH opcodes, IBA 9.2.1 table 38: transport (7:5) | operation (4:0). */
enum scire_bth_opcode {
	SCIRE_OP_RC				= 0x00,
	SCIRE_OP_UC				= 0x20,
	SCIRE_OP_UD				= 0x60,
	SCIRE_OP_XRC				= 0xa0,

	SCIRE_OP_SEND_FIRST			= 0x00,
	SCIRE_OP_SEND_MIDDLE			= 0x01,
	SCIRE_OP_SEND_LAST			= 0x02,
	SCIRE_OP_SEND_LAST_IMM			= 0x03,
	SCIRE_OP_SEND_ONLY			= 0x04,
	SCIRE_OP_SEND_ONLY_IMM			= 0x05,
	SCIRE_OP_WRITE_FIRST			= 0x06,
	SCIRE_OP_WRITE_MIDDLE			= 0x07,
	SCIRE_OP_WRITE_LAST			= 0x08,
	SCIRE_OP_WRITE_LAST_IMM			= 0x09,
	SCIRE_OP_WRITE_ONLY			= 0x0a,
	SCIRE_OP_WRITE_ONLY_IMM			= 0x0b,
	SCIRE_OP_READ_REQUEST			= 0x0c,
	SCIRE_OP_READ_RESPONSE_FIRST		= 0x0d,
	SCIRE_OP_READ_RESPONSE_MIDDLE		= 0x0e,
	SCIRE_OP_READ_RESPONSE_LAST		= 0x0f,
	SCIRE_OP_READ_RESPONSE_ONLY		= 0x10,
	SCIRE_OP_ACKNOWLEDGE			= 0x11,
	SCIRE_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SCIRE_OP_COMPARE_SWAP			= 0x13,
	SCIRE_OP_FETCH_ADD			= 0x14,
	SCIRE_OP_SEND_LAST_INV			= 0x16,
	SCIRE_OP_SEND_ONLY_INV			= 0x17,
	SCIRE_OP_FLUSH				= 0x1c,	/* IBA 1.5 */
	SCIRE_OP_ATOMIC_WRITE			= 0x1d,	/* IBA 1.5 */
};

/* What a BTH opcode is and carries (struct scire_opcode_info.mask). */
enum scire_opcode_mask {
	SCIRE_M_VALID		= BIT(0),	/* defined for its transport */
	SCIRE_M_REQ		= BIT(1),	/* requester -> responder */
	SCIRE_M_RESP		= BIT(2),	/* responder -> requester */
	SCIRE_M_FIRST		= BIT(3),
	SCIRE_M_MIDDLE		= BIT(4),
	SCIRE_M_LAST		= BIT(5),
	SCIRE_M_ONLY		= SCIRE_M_FIRST | SCIRE_M_LAST,
	SCIRE_M_SEND		= BIT(6),
	SCIRE_M_WRITE		= BIT(7),
	SCIRE_M_READ		= BIT(8),	/* READ request or response */
	SCIRE_M_ATOMIC		= BIT(9),	/* atomic request */
	SCIRE_M_ACK		= BIT(10),	/* ACKNOWLEDGE / ATOMIC_ACK */
	SCIRE_M_PAYLOAD		= BIT(11),	/* may carry payload */
	SCIRE_M_RETH		= BIT(12),
	SCIRE_M_ATMETH		= BIT(13),
	SCIRE_M_AETH		= BIT(14),
	SCIRE_M_ATMACK		= BIT(15),
	SCIRE_M_IMMDT		= BIT(16),
	SCIRE_M_IETH		= BIT(17),
	SCIRE_M_DETH		= BIT(18),
	SCIRE_M_COMP		= BIT(19),	/* completes a receive WQE */
	SCIRE_M_ATOMIC_WRITE	= BIT(20),	/* RDMA ATOMIC WRITE request */
	SCIRE_M_FLUSH		= BIT(21),	/* RDMA FLUSH request */
	SCIRE_M_FETH		= BIT(22),
	SCIRE_M_XRCETH		= BIT(23),	/* XRC request */
};

/* Offsets of extended headers after the BTH, in wire order. */
enum scire_hdr_index {
	SCIRE_H_XRCETH,
	SCIRE_H_DETH,
	SCIRE_H_FETH,
	SCIRE_H_RETH,
	SCIRE_H_ATMETH,
	SCIRE_H_IMMDT,
	SCIRE_H_IETH,
	SCIRE_H_AETH,
	SCIRE_H_ATMACK,
	SCIRE_H_PAYLOAD,
	SCIRE_H_NUM,
};

/**
 * struct scire_opcode_info - one BTH opcode.
 * @mask:	enum scire_opcode_mask.
 * @hdr_len:	bytes of BTH plus extended headers.
 * @offset:	offset of each present header from the BTH start;
 *		offset[SCIRE_H_PAYLOAD] == hdr_len.
 */
struct scire_opcode_info {
	u32 mask;
	u8 hdr_len;
	u8 offset[SCIRE_H_NUM];
};

/* Indexed by BTH opcode (256 entries); set up by scire_hdr_init(). */
extern const struct scire_opcode_info *scire_opcode;
void scire_hdr_init(void);

static inline u32 scire_psn(u32 psn)
{
	return psn & SCIRE_PSN_MASK;
}

/*
 * Serial-number comparison of 24-bit PSNs (IBA 9.7.1): negative if @a is
 * before @b, 0 if equal, positive if after.
 */
static inline int scire_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

static inline u8 scire_bth_pad(const struct scire_bth *bth)
{
	return (bth->flags & SCIRE_BTH_PAD_MASK) >> SCIRE_BTH_PAD_SHIFT;
}

static inline u32 scire_bth_qpn(const struct scire_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SCIRE_QPN_MASK;
}

static inline u32 scire_bth_psn(const struct scire_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SCIRE_PSN_MASK;
}

static inline bool scire_bth_ackreq(const struct scire_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SCIRE_BTH_ACKREQ;
}

static inline void scire_bth_init(struct scire_bth *bth, u8 opcode, bool se,
				  u8 pad, u16 pkey, u32 qpn, bool ackreq,
				  u32 psn)
{
	bth->opcode = opcode;
	bth->flags = (se ? SCIRE_BTH_SE : 0) | SCIRE_BTH_MIG |
		     (pad << SCIRE_BTH_PAD_SHIFT);
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = cpu_to_be32(qpn & SCIRE_QPN_MASK);
	bth->apsn = cpu_to_be32((ackreq ? SCIRE_BTH_ACKREQ : 0) |
				(psn & SCIRE_PSN_MASK));
}

static inline u8 scire_aeth_syndrome(const struct scire_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 scire_aeth_msn(const struct scire_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & SCIRE_PSN_MASK;
}

static inline void scire_aeth_set(struct scire_aeth *aeth, u8 syndrome,
				  u32 msn)
{
	aeth->smsn = cpu_to_be32((u32)syndrome << 24 | (msn & SCIRE_PSN_MASK));
}

static inline u64 scire_atmeth_swap_add(const struct scire_atmeth *a)
{
	return (u64)be32_to_cpu(a->swap_add_hi) << 32 |
	       be32_to_cpu(a->swap_add_lo);
}

static inline u64 scire_atmeth_comp(const struct scire_atmeth *a)
{
	return (u64)be32_to_cpu(a->comp_hi) << 32 | be32_to_cpu(a->comp_lo);
}

#endif /* SCIRE_HDR_H */
