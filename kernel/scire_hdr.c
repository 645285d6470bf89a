// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the BTH opcode table (IBA 1.4 vol. 1 table 38 and 9.3).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/cache.h>
#include <linux/init.h>
#include <linux/kernel.h>

#include "scire_hdr.h"

/* Extended header lengths in wire order (enum scire_hdr_index). */
static const struct {
	u32 mask;
	u8 len;
} scire_ext_hdr[SCIRE_H_PAYLOAD] = {
	[SCIRE_H_XRCETH] = { SCIRE_M_XRCETH, sizeof(struct scire_xrceth) },
	[SCIRE_H_DETH] = { SCIRE_M_DETH, sizeof(struct scire_deth) },
	[SCIRE_H_FETH] = { SCIRE_M_FETH, sizeof(struct scire_feth) },
	[SCIRE_H_RETH] = { SCIRE_M_RETH, sizeof(struct scire_reth) },
	[SCIRE_H_ATMETH] = { SCIRE_M_ATMETH, sizeof(struct scire_atmeth) },
	[SCIRE_H_IMMDT] = { SCIRE_M_IMMDT, sizeof(struct scire_immdt) },
	[SCIRE_H_IETH] = { SCIRE_M_IETH, sizeof(struct scire_ieth) },
	[SCIRE_H_AETH] = { SCIRE_M_AETH, sizeof(struct scire_aeth) },
	[SCIRE_H_ATMACK] = { SCIRE_M_ATMACK, sizeof(struct scire_atmack) },
};

#define SREQ	(SCIRE_M_VALID | SCIRE_M_REQ | SCIRE_M_SEND | SCIRE_M_PAYLOAD)
#define WREQ	(SCIRE_M_VALID | SCIRE_M_REQ | SCIRE_M_WRITE | SCIRE_M_PAYLOAD)
#define RRESP	(SCIRE_M_VALID | SCIRE_M_RESP | SCIRE_M_READ | SCIRE_M_PAYLOAD)
#define REQ1	(SCIRE_M_VALID | SCIRE_M_REQ | SCIRE_M_ONLY)
#define ACK1	(SCIRE_M_VALID | SCIRE_M_RESP | SCIRE_M_ACK | SCIRE_M_ONLY | \
		 SCIRE_M_AETH)
#define LASTC	(SCIRE_M_LAST | SCIRE_M_COMP)
#define ONLYC	(SCIRE_M_ONLY | SCIRE_M_COMP)

/* RC and UC share operation codes; UC lacks READ, atomics and ACKs. */
#define RC(op)	(SCIRE_OP_RC | SCIRE_OP_##op)
#define UC(op)	(SCIRE_OP_UC | SCIRE_OP_##op)
#define UD(op)	(SCIRE_OP_UD | SCIRE_OP_##op)

/* What each opcode carries: the one source; lengths are derived from it. */
static const u32 scire_opcode_mask[256] = {
	[RC(SEND_FIRST)] = SREQ | SCIRE_M_FIRST,
	[RC(SEND_MIDDLE)] = SREQ | SCIRE_M_MIDDLE,
	[RC(SEND_LAST)] = SREQ | LASTC,
	[RC(SEND_LAST_IMM)] = SREQ | LASTC | SCIRE_M_IMMDT,
	[RC(SEND_ONLY)] = SREQ | ONLYC,
	[RC(SEND_ONLY_IMM)] = SREQ | ONLYC | SCIRE_M_IMMDT,
	[RC(SEND_LAST_INV)] = SREQ | LASTC | SCIRE_M_IETH,
	[RC(SEND_ONLY_INV)] = SREQ | ONLYC | SCIRE_M_IETH,
	[RC(WRITE_FIRST)] = WREQ | SCIRE_M_FIRST | SCIRE_M_RETH,
	[RC(WRITE_MIDDLE)] = WREQ | SCIRE_M_MIDDLE,
	[RC(WRITE_LAST)] = WREQ | SCIRE_M_LAST,
	[RC(WRITE_LAST_IMM)] = WREQ | LASTC | SCIRE_M_IMMDT,
	[RC(WRITE_ONLY)] = WREQ | SCIRE_M_ONLY | SCIRE_M_RETH,
	[RC(WRITE_ONLY_IMM)] = WREQ | ONLYC | SCIRE_M_RETH | SCIRE_M_IMMDT,
	[RC(READ_REQUEST)] = REQ1 | SCIRE_M_READ | SCIRE_M_RETH,
	[RC(READ_RESPONSE_FIRST)] = RRESP | SCIRE_M_FIRST | SCIRE_M_AETH,
	[RC(READ_RESPONSE_MIDDLE)] = RRESP | SCIRE_M_MIDDLE,
	[RC(READ_RESPONSE_LAST)] = RRESP | SCIRE_M_LAST | SCIRE_M_AETH,
	[RC(READ_RESPONSE_ONLY)] = RRESP | SCIRE_M_ONLY | SCIRE_M_AETH,
	[RC(ACKNOWLEDGE)] = ACK1,
	[RC(ATOMIC_ACKNOWLEDGE)] = ACK1 | SCIRE_M_ATMACK,
	[RC(COMPARE_SWAP)] = REQ1 | SCIRE_M_ATOMIC | SCIRE_M_ATMETH,
	[RC(FETCH_ADD)] = REQ1 | SCIRE_M_ATOMIC | SCIRE_M_ATMETH,
	/* IBA 1.5: RETH and 8 bytes of payload, answered like a READ. */
	[RC(ATOMIC_WRITE)] = REQ1 | SCIRE_M_ATOMIC_WRITE | SCIRE_M_RETH |
			     SCIRE_M_PAYLOAD,
	/* IBA 1.5: FETH and RETH, no payload, answered like ATOMIC WRITE. */
	[RC(FLUSH)] = REQ1 | SCIRE_M_FLUSH | SCIRE_M_FETH | SCIRE_M_RETH,

	[UC(SEND_FIRST)] = SREQ | SCIRE_M_FIRST,
	[UC(SEND_MIDDLE)] = SREQ | SCIRE_M_MIDDLE,
	[UC(SEND_LAST)] = SREQ | LASTC,
	[UC(SEND_LAST_IMM)] = SREQ | LASTC | SCIRE_M_IMMDT,
	[UC(SEND_ONLY)] = SREQ | ONLYC,
	[UC(SEND_ONLY_IMM)] = SREQ | ONLYC | SCIRE_M_IMMDT,
	[UC(WRITE_FIRST)] = WREQ | SCIRE_M_FIRST | SCIRE_M_RETH,
	[UC(WRITE_MIDDLE)] = WREQ | SCIRE_M_MIDDLE,
	[UC(WRITE_LAST)] = WREQ | SCIRE_M_LAST,
	[UC(WRITE_LAST_IMM)] = WREQ | LASTC | SCIRE_M_IMMDT,
	[UC(WRITE_ONLY)] = WREQ | SCIRE_M_ONLY | SCIRE_M_RETH,
	[UC(WRITE_ONLY_IMM)] = WREQ | ONLYC | SCIRE_M_RETH | SCIRE_M_IMMDT,

	[UD(SEND_ONLY)] = SREQ | ONLYC | SCIRE_M_DETH,
	[UD(SEND_ONLY_IMM)] = SREQ | ONLYC | SCIRE_M_DETH | SCIRE_M_IMMDT,
};

const struct scire_opcode_info *scire_opcode __read_mostly;
static struct scire_opcode_info scire_opcode_tbl[256] __ro_after_init;

/*
 * XRC (IBA 1.2 annex A19, in 9.2.1 table 38 since) has every RC opcode at
 * transport 0xa0; each request carries an XRCETH right after the BTH,
 * responses do not.
 */
static u32 scire_opcode_mask_of(unsigned int op)
{
	u32 rc;

	if ((op & SCIRE_OP_TRANSPORT_MASK) != SCIRE_OP_XRC)
		return scire_opcode_mask[op];
	rc = scire_opcode_mask[op & ~SCIRE_OP_TRANSPORT_MASK];
	return (rc & SCIRE_M_REQ) ? rc | SCIRE_M_XRCETH : rc;
}

/* Derive each opcode's header lengths and offsets from its mask. */
static void scire_opcode_fill(struct scire_opcode_info *tbl)
{
	unsigned int op, h;

	for (op = 0; op < ARRAY_SIZE(scire_opcode_mask); op++) {
		struct scire_opcode_info *info = &tbl[op];
		u8 len = sizeof(struct scire_bth);

		info->mask = scire_opcode_mask_of(op);
		for (h = 0; h < SCIRE_H_PAYLOAD; h++) {
			info->offset[h] = len;
			if (info->mask & scire_ext_hdr[h].mask)
				len += scire_ext_hdr[h].len;
		}
		info->offset[SCIRE_H_PAYLOAD] = len;
		info->hdr_len = len;
	}
}

/**
 * scire_hdr_init() - derive each opcode's header lengths and offsets.
 *
 * Fills the table behind scire_opcode from scire_opcode_mask[], so what an
 * opcode carries is stated once. Called once at module init, before any
 * device exists. Not __init: the 6.1 kernel runs a module's KUnit suites
 * before its init function, and the suites that use the table set it up
 * first with this.
 */
void scire_hdr_init(void)
{
	scire_opcode_fill(scire_opcode_tbl);
	scire_opcode = scire_opcode_tbl;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "../kunit/scire_opcode_test.c"
#include "../kunit/scire_psn_test.c"
#endif
