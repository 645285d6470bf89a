// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: the BTH opcode table (kernel/scire_hdr.c). scire_opcode_mask[] is
 * the one statement of what each opcode carries; these tests derive the
 * table from it as scire_hdr_init() does and check it against IBA 1.4
 * vol. 1 table 38 and 9.3 (and IBA 1.5's RDMA ATOMIC WRITE): which
 * opcodes exist per transport, their header
 * lengths (written out here from the spec, not from the code), and the
 * rules the transport relies on (a packet is a request or a response, one
 * kind of operation, one position in its message). Included at the end of
 * kernel/scire_hdr.c when the kernel has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

/* IBA table 38 and 9.3: each valid opcode and BTH + extended headers. */
static const struct scire_test_op {
	u8 opcode;
	u8 hdr_len;
	const char *name;
} scire_test_ops[] = {
	{ 0x00, 12, "RC SEND_FIRST" },
	{ 0x01, 12, "RC SEND_MIDDLE" },
	{ 0x02, 12, "RC SEND_LAST" },
	{ 0x03, 16, "RC SEND_LAST_IMM" },
	{ 0x04, 12, "RC SEND_ONLY" },
	{ 0x05, 16, "RC SEND_ONLY_IMM" },
	{ 0x06, 28, "RC WRITE_FIRST" },
	{ 0x07, 12, "RC WRITE_MIDDLE" },
	{ 0x08, 12, "RC WRITE_LAST" },
	{ 0x09, 16, "RC WRITE_LAST_IMM" },
	{ 0x0a, 28, "RC WRITE_ONLY" },
	{ 0x0b, 32, "RC WRITE_ONLY_IMM" },
	{ 0x0c, 28, "RC READ_REQUEST" },
	{ 0x0d, 16, "RC READ_RESPONSE_FIRST" },
	{ 0x0e, 12, "RC READ_RESPONSE_MIDDLE" },
	{ 0x0f, 16, "RC READ_RESPONSE_LAST" },
	{ 0x10, 16, "RC READ_RESPONSE_ONLY" },
	{ 0x11, 16, "RC ACKNOWLEDGE" },
	{ 0x12, 24, "RC ATOMIC_ACKNOWLEDGE" },
	{ 0x13, 40, "RC COMPARE_SWAP" },
	{ 0x14, 40, "RC FETCH_ADD" },
	{ 0x16, 16, "RC SEND_LAST_INV" },
	{ 0x17, 16, "RC SEND_ONLY_INV" },
	/* IBA 1.5: BTH + FETH + RETH, no payload. */
	{ 0x1c, 32, "RC FLUSH" },
	/* IBA 1.5: BTH + RETH, 8 bytes of payload after them. */
	{ 0x1d, 28, "RC ATOMIC_WRITE" },
	{ 0x20, 12, "UC SEND_FIRST" },
	{ 0x21, 12, "UC SEND_MIDDLE" },
	{ 0x22, 12, "UC SEND_LAST" },
	{ 0x23, 16, "UC SEND_LAST_IMM" },
	{ 0x24, 12, "UC SEND_ONLY" },
	{ 0x25, 16, "UC SEND_ONLY_IMM" },
	{ 0x26, 28, "UC WRITE_FIRST" },
	{ 0x27, 12, "UC WRITE_MIDDLE" },
	{ 0x28, 12, "UC WRITE_LAST" },
	{ 0x29, 16, "UC WRITE_LAST_IMM" },
	{ 0x2a, 28, "UC WRITE_ONLY" },
	{ 0x2b, 32, "UC WRITE_ONLY_IMM" },
	{ 0x64, 20, "UD SEND_ONLY" },
	{ 0x65, 24, "UD SEND_ONLY_IMM" },
	/* XRC (annex A19): RC's operations; requests carry an XRCETH (+4). */
	{ 0xa0, 16, "XRC SEND_FIRST" },
	{ 0xa1, 16, "XRC SEND_MIDDLE" },
	{ 0xa2, 16, "XRC SEND_LAST" },
	{ 0xa3, 20, "XRC SEND_LAST_IMM" },
	{ 0xa4, 16, "XRC SEND_ONLY" },
	{ 0xa5, 20, "XRC SEND_ONLY_IMM" },
	{ 0xa6, 32, "XRC WRITE_FIRST" },
	{ 0xa7, 16, "XRC WRITE_MIDDLE" },
	{ 0xa8, 16, "XRC WRITE_LAST" },
	{ 0xa9, 20, "XRC WRITE_LAST_IMM" },
	{ 0xaa, 32, "XRC WRITE_ONLY" },
	{ 0xab, 36, "XRC WRITE_ONLY_IMM" },
	{ 0xac, 32, "XRC READ_REQUEST" },
	{ 0xad, 16, "XRC READ_RESPONSE_FIRST" },
	{ 0xae, 12, "XRC READ_RESPONSE_MIDDLE" },
	{ 0xaf, 16, "XRC READ_RESPONSE_LAST" },
	{ 0xb0, 16, "XRC READ_RESPONSE_ONLY" },
	{ 0xb1, 16, "XRC ACKNOWLEDGE" },
	{ 0xb2, 24, "XRC ATOMIC_ACKNOWLEDGE" },
	{ 0xb3, 44, "XRC COMPARE_SWAP" },
	{ 0xb4, 44, "XRC FETCH_ADD" },
	{ 0xb6, 20, "XRC SEND_LAST_INV" },
	{ 0xb7, 20, "XRC SEND_ONLY_INV" },
	{ 0xbc, 36, "XRC FLUSH" },
	{ 0xbd, 32, "XRC ATOMIC_WRITE" },
};

/* The table as scire_hdr_init() derives it, in test-owned memory. */
static struct scire_opcode_info *scire_test_optbl(struct kunit *test)
{
	struct scire_opcode_info *tbl;

	tbl = kunit_kcalloc(test, 256, sizeof(*tbl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tbl);
	scire_opcode_fill(tbl);
	return tbl;
}

static void scire_test_op_desc(const struct scire_test_op *op, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "0x%02x %s", op->opcode, op->name);
}

KUNIT_ARRAY_PARAM(scire_test_op, scire_test_ops, scire_test_op_desc);

static bool scire_test_op_listed(u8 opcode)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_test_ops); i++)
		if (scire_test_ops[i].opcode == opcode)
			return true;
	return false;
}

/* Every opcode of table 38 is valid, with the spec's header length. */
static void scire_opcode_hdr_len(struct kunit *test)
{
	const struct scire_test_op *op = test->param_value;
	struct scire_opcode_info *tbl = scire_test_optbl(test);

	KUNIT_EXPECT_TRUE(test, tbl[op->opcode].mask & SCIRE_M_VALID);
	KUNIT_EXPECT_EQ(test, tbl[op->opcode].hdr_len, op->hdr_len);
	KUNIT_EXPECT_EQ(test, tbl[op->opcode].offset[SCIRE_H_PAYLOAD],
			op->hdr_len);
}

/* No other opcode is valid, carries anything, or has headers past the BTH. */
static void scire_opcode_others_invalid(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op, valid = 0;

	for (op = 0; op < 256; op++) {
		if (tbl[op].mask & SCIRE_M_VALID)
			valid++;
		if (scire_test_op_listed(op))
			continue;
		KUNIT_EXPECT_EQ_MSG(test, tbl[op].mask, 0U, "opcode 0x%02x", op);
		KUNIT_EXPECT_EQ_MSG(test, tbl[op].hdr_len, 12, "opcode 0x%02x", op);
	}
	KUNIT_EXPECT_EQ(test, valid, (unsigned int)ARRAY_SIZE(scire_test_ops));
}

/* Each valid opcode goes one way: requester to responder or back. */
static void scire_opcode_req_xor_resp(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_test_ops); i++) {
		u32 m = tbl[scire_test_ops[i].opcode].mask;

		KUNIT_EXPECT_EQ_MSG(test, hweight32(m & (SCIRE_M_REQ | SCIRE_M_RESP)),
				    1, "%s", scire_test_ops[i].name);
	}
}

/* ... and is exactly one kind of operation. */
static void scire_opcode_one_kind(struct kunit *test)
{
	const u32 kinds = SCIRE_M_SEND | SCIRE_M_WRITE | SCIRE_M_READ |
			  SCIRE_M_ATOMIC | SCIRE_M_ACK | SCIRE_M_ATOMIC_WRITE |
			  SCIRE_M_FLUSH;
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_test_ops); i++) {
		u32 m = tbl[scire_test_ops[i].opcode].mask;

		KUNIT_EXPECT_EQ_MSG(test, hweight32(m & kinds), 1, "%s",
				    scire_test_ops[i].name);
	}
}

/* ... at one position in its message: FIRST, MIDDLE, LAST or ONLY. */
static void scire_opcode_one_position(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_test_ops); i++) {
		u32 m = tbl[scire_test_ops[i].opcode].mask;
		u32 pos = m & (SCIRE_M_FIRST | SCIRE_M_MIDDLE | SCIRE_M_LAST);
		const char *name = scire_test_ops[i].name;

		KUNIT_EXPECT_TRUE_MSG(test, pos == SCIRE_M_FIRST ||
				      pos == SCIRE_M_MIDDLE ||
				      pos == SCIRE_M_LAST || pos == SCIRE_M_ONLY,
				      "%s: position 0x%x", name, pos);
		/* The names say it. */
		if (strstr(name, "_ONLY") || strstr(name, "READ_REQUEST") ||
		    strstr(name, "ACKNOWLEDGE") || strstr(name, "SWAP") ||
		    strstr(name, "FETCH_ADD") || strstr(name, "ATOMIC_WRITE") ||
		    strstr(name, "FLUSH"))
			KUNIT_EXPECT_EQ_MSG(test, pos, (u32)SCIRE_M_ONLY, "%s", name);
		else if (strstr(name, "_FIRST"))
			KUNIT_EXPECT_EQ_MSG(test, pos, (u32)SCIRE_M_FIRST, "%s", name);
		else if (strstr(name, "_MIDDLE"))
			KUNIT_EXPECT_EQ_MSG(test, pos, (u32)SCIRE_M_MIDDLE, "%s", name);
		else
			KUNIT_EXPECT_EQ_MSG(test, pos, (u32)SCIRE_M_LAST, "%s", name);
	}
}

/* Extended headers in wire order; each offset is the previous plus its size. */
static void scire_opcode_offsets(struct kunit *test)
{
	static const u32 hmask[SCIRE_H_PAYLOAD] = {
		SCIRE_M_XRCETH, SCIRE_M_DETH, SCIRE_M_FETH, SCIRE_M_RETH,
		SCIRE_M_ATMETH, SCIRE_M_IMMDT, SCIRE_M_IETH, SCIRE_M_AETH,
		SCIRE_M_ATMACK,
	};
	static const u8 hlen[SCIRE_H_PAYLOAD] = { 4, 8, 4, 16, 28, 4, 4, 4, 8 };
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op, h;

	for (op = 0; op < 256; op++) {
		KUNIT_EXPECT_EQ(test, tbl[op].offset[0], 12);
		for (h = 0; h < SCIRE_H_PAYLOAD; h++)
			KUNIT_EXPECT_EQ_MSG(test, tbl[op].offset[h + 1],
					    tbl[op].offset[h] +
					    ((tbl[op].mask & hmask[h]) ? hlen[h] : 0),
					    "opcode 0x%02x header %u", op, h);
		KUNIT_EXPECT_EQ(test, tbl[op].offset[SCIRE_H_PAYLOAD], tbl[op].hdr_len);
	}
}

/* The largest header stack is an XRC atomic: BTH + XRCETH + AtomicETH. */
static void scire_opcode_max_hdr(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op, max = 0;

	for (op = 0; op < 256; op++)
		max = max_t(unsigned int, max, tbl[op].hdr_len);
	KUNIT_EXPECT_EQ(test, max, 44U);	/* XRC COMPARE_SWAP */
}

/* UC is RC's SEND and WRITE, bit for bit; it has nothing else. */
static void scire_opcode_uc_is_rc_subset(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 32; op++) {
		u32 rc = tbl[SCIRE_OP_RC | op].mask;
		u32 uc = tbl[SCIRE_OP_UC | op].mask;

		if (rc & (SCIRE_M_SEND | SCIRE_M_WRITE)) {
			if (rc & SCIRE_M_IETH)
				KUNIT_EXPECT_EQ_MSG(test, uc, 0U, "op 0x%02x", op);
			else
				KUNIT_EXPECT_EQ_MSG(test, uc, rc, "op 0x%02x", op);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, uc, 0U, "op 0x%02x", op);
		}
	}
}

/*
 * XRC is RC with an XRCETH after the BTH of every request: the same
 * operations, every request header 4 bytes further on, responses as RC's.
 */
static void scire_opcode_xrc(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 32; op++) {
		const struct scire_opcode_info *rc = &tbl[SCIRE_OP_RC | op];
		const struct scire_opcode_info *x = &tbl[SCIRE_OP_XRC | op];

		if (!(rc->mask & SCIRE_M_REQ)) {
			KUNIT_EXPECT_EQ_MSG(test, x->mask, rc->mask, "op 0x%02x", op);
			KUNIT_EXPECT_EQ(test, x->hdr_len, rc->hdr_len);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, x->mask, rc->mask | SCIRE_M_XRCETH,
				    "op 0x%02x", op);
		KUNIT_EXPECT_EQ(test, x->offset[SCIRE_H_XRCETH], 12);
		KUNIT_EXPECT_EQ(test, x->hdr_len, rc->hdr_len + 4);
		KUNIT_EXPECT_EQ(test, x->offset[SCIRE_H_RETH],
				rc->offset[SCIRE_H_RETH] + 4);
	}
	/* Only XRC requests carry an XRCETH. */
	for (op = 0; op < 0xa0; op++)
		KUNIT_EXPECT_FALSE(test, tbl[op].mask & SCIRE_M_XRCETH);
}

/* UD has SEND_ONLY and SEND_ONLY_IMM, both with a DETH right after the BTH. */
static void scire_opcode_ud(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 32; op++) {
		u32 m = tbl[SCIRE_OP_UD | op].mask;

		if (op == SCIRE_OP_SEND_ONLY || op == SCIRE_OP_SEND_ONLY_IMM) {
			KUNIT_EXPECT_TRUE(test, m & SCIRE_M_DETH);
			KUNIT_EXPECT_EQ(test, tbl[SCIRE_OP_UD | op].offset[SCIRE_H_DETH], 12);
			KUNIT_EXPECT_EQ(test, m & SCIRE_M_ONLY, (u32)SCIRE_M_ONLY);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, m, 0U, "UD op 0x%02x", op);
		}
	}
	/* Only UD carries a DETH. */
	for (op = 0; op < 0x60; op++)
		KUNIT_EXPECT_FALSE(test, tbl[op].mask & SCIRE_M_DETH);
}

/* Transports other than RC, UC, UD and XRC (RD, CNP...) are not spoken. */
static void scire_opcode_transports(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u8 t = op & 0xe0;

		if (t != SCIRE_OP_RC && t != SCIRE_OP_UC && t != SCIRE_OP_UD &&
		    t != SCIRE_OP_XRC)
			KUNIT_EXPECT_EQ_MSG(test, tbl[op].mask, 0U, "op 0x%02x", op);
	}
}

/*
 * A RETH on the first packet of a WRITE, on a READ request, on an ATOMIC
 * WRITE and on a FLUSH only; a FETH on a FLUSH only.
 */
static void scire_opcode_reth(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = tbl[op].mask;
		bool want = ((m & SCIRE_M_WRITE) && (m & SCIRE_M_FIRST)) ||
			    ((m & SCIRE_M_READ) && (m & SCIRE_M_REQ)) ||
			    (m & (SCIRE_M_ATOMIC_WRITE | SCIRE_M_FLUSH));

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_RETH), want, "op 0x%02x", op);
		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_FETH), !!(m & SCIRE_M_FLUSH),
				    "op 0x%02x", op);
	}
}

/*
 * An AETH on ACKs and on the READ responses that carry one (first, last,
 * only; IBA 9.3.5), never on a middle one or on a request.
 */
static void scire_opcode_aeth(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = tbl[op].mask;
		bool want = (m & SCIRE_M_RESP) && !(m & SCIRE_M_MIDDLE);

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_AETH), want, "op 0x%02x", op);
	}
	KUNIT_EXPECT_TRUE(test, tbl[0x12].mask & SCIRE_M_ATMACK);
	KUNIT_EXPECT_EQ(test, tbl[0x12].offset[SCIRE_H_ATMACK], 16);
}

/* Atomic requests carry an AtomicETH and no payload; nothing else has one. */
static void scire_opcode_atomic(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = tbl[op].mask;

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_ATMETH),
				    !!(m & SCIRE_M_ATOMIC), "op 0x%02x", op);
		if (m & SCIRE_M_ATOMIC)
			KUNIT_EXPECT_FALSE(test, m & SCIRE_M_PAYLOAD);
	}
}

/* Immediate data on exactly the _IMM opcodes, invalidate on the _INV ones. */
static void scire_opcode_imm_inv(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_test_ops); i++) {
		u32 m = tbl[scire_test_ops[i].opcode].mask;
		const char *name = scire_test_ops[i].name;

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_IMMDT),
				    !!strstr(name, "_IMM"), "%s", name);
		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_IETH),
				    !!strstr(name, "_INV"), "%s", name);
	}
}

/*
 * Payload may come with SENDs, WRITEs, READ responses and ATOMIC WRITEs
 * (its 8 bytes); never with a READ request, an ACK or an atomic.
 */
static void scire_opcode_payload(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = tbl[op].mask;
		bool want = (m & (SCIRE_M_SEND | SCIRE_M_WRITE |
				  SCIRE_M_ATOMIC_WRITE)) ||
			    ((m & SCIRE_M_READ) && (m & SCIRE_M_RESP));

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_PAYLOAD), want, "op 0x%02x", op);
	}
}

/*
 * A receive WQE completes on the last packet of a SEND and of a WRITE
 * with immediate; a plain WRITE consumes none (IBA 9.4.4).
 */
static void scire_opcode_comp(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = tbl[op].mask;
		bool last = m & SCIRE_M_LAST;
		bool want = last && ((m & SCIRE_M_SEND) ||
				     ((m & SCIRE_M_WRITE) && (m & SCIRE_M_IMMDT)));

		KUNIT_EXPECT_EQ_MSG(test, !!(m & SCIRE_M_COMP), want, "op 0x%02x", op);
	}
}

/* The live table (once set up) is exactly what the masks derive. */
static void scire_opcode_live_table(struct kunit *test)
{
	struct scire_opcode_info *tbl = scire_test_optbl(test);
	unsigned int op;

	if (!scire_opcode)
		scire_hdr_init();
	KUNIT_ASSERT_NOT_NULL(test, scire_opcode);
	for (op = 0; op < 256; op++) {
		KUNIT_EXPECT_EQ(test, scire_opcode[op].mask, scire_opcode_mask_of(op));
		KUNIT_EXPECT_EQ(test, scire_opcode[op].hdr_len, tbl[op].hdr_len);
		KUNIT_EXPECT_EQ(test, memcmp(scire_opcode[op].offset, tbl[op].offset,
					     sizeof(tbl[op].offset)), 0);
	}
}

/* The wire structs have their IBA sizes. */
static void scire_opcode_struct_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_bth), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_reth), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_atmeth), 28);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_aeth), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_atmack), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_deth), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_immdt), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct scire_ieth), 4);
}

static struct kunit_case scire_opcode_cases[] = {
	KUNIT_CASE_PARAM(scire_opcode_hdr_len, scire_test_op_gen_params),
	KUNIT_CASE(scire_opcode_others_invalid),
	KUNIT_CASE(scire_opcode_req_xor_resp),
	KUNIT_CASE(scire_opcode_one_kind),
	KUNIT_CASE(scire_opcode_one_position),
	KUNIT_CASE(scire_opcode_offsets),
	KUNIT_CASE(scire_opcode_max_hdr),
	KUNIT_CASE(scire_opcode_uc_is_rc_subset),
	KUNIT_CASE(scire_opcode_ud),
	KUNIT_CASE(scire_opcode_xrc),
	KUNIT_CASE(scire_opcode_transports),
	KUNIT_CASE(scire_opcode_reth),
	KUNIT_CASE(scire_opcode_aeth),
	KUNIT_CASE(scire_opcode_atomic),
	KUNIT_CASE(scire_opcode_imm_inv),
	KUNIT_CASE(scire_opcode_payload),
	KUNIT_CASE(scire_opcode_comp),
	KUNIT_CASE(scire_opcode_live_table),
	KUNIT_CASE(scire_opcode_struct_sizes),
	{}
};

static struct kunit_suite scire_opcode_suite = {
	.name = "scire_opcode",
	.test_cases = scire_opcode_cases,
};

kunit_test_suites(&scire_opcode_suite);
