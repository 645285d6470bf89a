// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Unit test, run by `meson test`: the provider's WQE encoder and ring
 * arithmetic produce exactly the bytes scire-abi.h describes. Offsets are
 * written out as numbers here, not taken from the structs, so a change of
 * the ABI structs shows up as well as a change of the encoder.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scire_ring.h"
#include "scire_wqe.h"

#include "scire_unit.h"

/* One SQ slot: header, room for 4 SGEs or 64 inline bytes. */
#define SLOT_SIZE	128

static union {
	struct scire_send_wqe wqe;
	uint8_t b[SLOT_SIZE];
} slot;

static const struct scire_sq_caps rc_caps = { .max_sge = 4, .max_inline = 64 };
static const struct scire_sq_caps uc_caps = { .max_sge = 4, .max_inline = 64, .uc = true };

static uint8_t u8_at(const void *buf, size_t off)
{
	return ((const uint8_t *)buf)[off];
}

static uint32_t u32_at(const void *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)buf + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const void *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)buf + off, sizeof(v));
	return v;
}

/* Encode wr into a slot pre-filled with garbage, so stale bytes show. */
static int encode(const struct scire_sq_caps *caps, const struct ibv_send_wr *wr)
{
	memset(slot.b, 0xa5, sizeof(slot.b));
	return scire_wqe_from_send_wr(&slot.wqe, caps, wr);
}

/* Header bytes no opcode uses must be zero. */
static void check_reserved(void)
{
	CHECK_EQ(u8_at(slot.b, 11), 0);		/* reserved0 */
	CHECK_EQ(u32_at(slot.b, 20), 0);	/* xrc_srqn: not an XRC QP */
}

static void test_send_sges(void)
{
	struct ibv_sge sge[2] = {
		{ .addr = 0x1122334455667788ULL, .length = 100, .lkey = 0xabcd01 },
		{ .addr = 0x1000, .length = 7, .lkey = 0xabcd02 },
	};
	struct ibv_send_wr wr = {
		.wr_id = 0xdeadbeefcafef00dULL, .sg_list = sge, .num_sge = 2,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE,
	};

	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u64_at(slot.b, 0), 0xdeadbeefcafef00dULL);	/* wr_id */
	CHECK_EQ(u8_at(slot.b, 8), 0);				/* SEND */
	CHECK_EQ(u8_at(slot.b, 9), 1 | 2 | 8);			/* SIGNALED|SOLICITED|FENCE */
	CHECK_EQ(u8_at(slot.b, 10), 2);				/* num_sge */
	CHECK_EQ(u32_at(slot.b, 12), 0);			/* inline_len */
	CHECK_EQ(u32_at(slot.b, 16), 0);			/* imm_data */
	check_reserved();
	CHECK_EQ(u64_at(slot.b, 24), 0);			/* union untouched: zero */
	CHECK_EQ(u64_at(slot.b, 56), 0);
	CHECK_EQ(u64_at(slot.b, 64), 0x1122334455667788ULL);	/* sge[0] */
	CHECK_EQ(u32_at(slot.b, 72), 100);
	CHECK_EQ(u32_at(slot.b, 76), 0xabcd01);
	CHECK_EQ(u64_at(slot.b, 80), 0x1000);			/* sge[1] */
	CHECK_EQ(u32_at(slot.b, 88), 7);
	CHECK_EQ(u32_at(slot.b, 92), 0xabcd02);
}

static void test_send_imm_and_inv(void)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM };

	wr.imm_data = htonl(0x01020304);
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 1);
	/* Immediate data stays in network order: bytes 01 02 03 04. */
	CHECK(memcmp(slot.b + 16, "\x01\x02\x03\x04", 4) == 0,
	      "imm bytes %02x %02x %02x %02x", slot.b[16], slot.b[17],
	      slot.b[18], slot.b[19]);
	CHECK_EQ(u8_at(slot.b, 10), 0);

	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0x123456ab;
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 2);
	CHECK_EQ(u32_at(slot.b, 16), 0x123456ab);		/* host order */

	/* UC has no Send with Invalidate. */
	CHECK_EQ(encode(&uc_caps, &wr), EINVAL);
}

static void test_rdma(void)
{
	struct ibv_sge sge = { .addr = 0x2000, .length = 4096, .lkey = 5 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.wr.rdma = { .remote_addr = 0xfeedface12345678ULL, .rkey = 0x77 },
	};

	wr.imm_data = htonl(9);
	CHECK_EQ(encode(&uc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 4);
	CHECK_EQ(u64_at(slot.b, 24), 0xfeedface12345678ULL);	/* rdma.remote_addr */
	CHECK_EQ(u32_at(slot.b, 32), 0x77);			/* rdma.rkey */
	CHECK_EQ(u32_at(slot.b, 36), 0);			/* rdma.reserved */
	CHECK_EQ(u32_at(slot.b, 16), htonl(9));

	/* READ ignores IBV_SEND_INLINE: its SGEs are a destination. */
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_INLINE;
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 5);
	CHECK_EQ(u8_at(slot.b, 9), 0);				/* no INLINE flag */
	CHECK_EQ(u8_at(slot.b, 10), 1);
	CHECK_EQ(u64_at(slot.b, 64), 0x2000);
	CHECK_EQ(u32_at(slot.b, 16), 0);			/* READ carries no imm */

	/* UC has no READ. */
	CHECK_EQ(encode(&uc_caps, &wr), EINVAL);
}

static void test_atomics(void)
{
	struct ibv_sge sge = { .addr = 0x3000, .length = 8, .lkey = 6 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x4008, .compare_add = 0x1111,
			       .swap = 0x2222, .rkey = 0x99 },
	};

	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 6);
	CHECK_EQ(u64_at(slot.b, 24), 0x4008);			/* atomic.remote_addr */
	CHECK_EQ(u64_at(slot.b, 32), 0x1111);			/* compare_add */
	CHECK_EQ(u64_at(slot.b, 40), 0x2222);			/* swap */
	CHECK_EQ(u32_at(slot.b, 48), 0x99);			/* rkey */
	CHECK_EQ(u32_at(slot.b, 52), 0);
	CHECK_EQ(u8_at(slot.b, 10), 1);

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 7);
	CHECK_EQ(u64_at(slot.b, 32), 0x1111);			/* add operand */
	CHECK_EQ(u64_at(slot.b, 40), 0);			/* no swap operand */

	/* One 8-byte destination, no more, no less. */
	sge.length = 4;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	sge.length = 8;
	wr.num_sge = 0;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.num_sge = 1;
	CHECK_EQ(encode(&uc_caps, &wr), EINVAL);		/* no atomics on UC */
}

/* IBV_WR_ATOMIC_WRITE: the SGE's 8 bytes go into the WQE at post time. */
static void test_atomic_write(void)
{
	static const uint8_t val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_sge sge = { .addr = (uintptr_t)val, .length = 8, .lkey = 6 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_WRITE,
		.wr.rdma = { .remote_addr = 0x5008, .rkey = 0x77 },
	};

	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 11);				/* SCIRE_WQE_OP_ATOMIC_WRITE */
	CHECK_EQ(u8_at(slot.b, 10), 0);				/* num_sge: none */
	CHECK_EQ(u32_at(slot.b, 12), 0);			/* inline_len */
	CHECK_EQ(u64_at(slot.b, 24), 0x5008);			/* remote_addr */
	CHECK_EQ(u32_at(slot.b, 32), 0x77);			/* rkey */
	CHECK(memcmp(slot.b + 40, val, 8) == 0, "the 8 bytes, in memory order");

	sge.length = 4;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	sge.length = 8;
	wr.num_sge = 0;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.num_sge = 1;
	CHECK_EQ(encode(&uc_caps, &wr), EINVAL);		/* RC only */
	CHECK(scire_op_allowed(&rc_caps, SCIRE_WQE_OP_ATOMIC_WRITE), "RC refuses it");
}

static void test_local_inv(void)
{
	struct ibv_sge sge = { .addr = 1, .length = 1, .lkey = 1 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	};

	wr.invalidate_rkey = 0xabcdef12;
	CHECK_EQ(encode(&uc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 8);
	CHECK_EQ(u8_at(slot.b, 9), 1);				/* SIGNALED only */
	CHECK_EQ(u32_at(slot.b, 16), 0xabcdef12);
	CHECK_EQ(u8_at(slot.b, 10), 0);				/* SGEs ignored */
}

static void test_bind_mw(void)
{
	struct ibv_mr mr = { .lkey = 0x4242 };
	struct ibv_mw mw = { .rkey = 0x00abcd07, .type = IBV_MW_TYPE_2 };
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = &mw, .rkey = ibv_inc_rkey(0x00abcd07),
			.bind_info = { .mr = &mr, .addr = 0x5000, .length = 0x300,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
							  IBV_ACCESS_REMOTE_READ },
		},
	};

	CHECK_EQ(encode(&uc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 9);
	CHECK_EQ(u64_at(slot.b, 24), 0x5000);			/* bind.addr */
	CHECK_EQ(u64_at(slot.b, 32), 0x300);			/* bind.length */
	CHECK_EQ(u32_at(slot.b, 40), 0x00abcd07);		/* mw_rkey: the current key */
	CHECK_EQ(u32_at(slot.b, 44), 0x00abcd08);		/* new_rkey */
	CHECK_EQ(u32_at(slot.b, 48), 0x4242);			/* mr_lkey */
	CHECK_EQ(u32_at(slot.b, 52), 2 | 4);			/* IB_ACCESS_REMOTE_WRITE|READ */
	CHECK_EQ(u8_at(slot.b, 10), 0);
	check_reserved();

	/* The new key may change the low byte only. */
	wr.bind_mw.rkey = 0x00abce08;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.bind_mw.rkey = 0x00abcd08;

	/* A type 2 window is always bound to an MR. */
	wr.bind_mw.bind_info.mr = NULL;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.bind_mw.bind_info.addr = 0;
	wr.bind_mw.bind_info.length = 0;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.bind_mw.bind_info.mr = &mr;

	/* Type 1 windows and missing windows are not bound by a WR. */
	mw.type = IBV_MW_TYPE_1;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.bind_mw.mw = NULL;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
}

/* ibv_bind_mw() of a type 1 window: the flagged WQE, next key byte. */
static void test_bind_mw1(void)
{
	static const struct scire_sq_caps ud_caps = { .max_sge = 4, .ud = true };
	struct ibv_mr mr = { .lkey = 0x4243 };
	struct ibv_mw mw = { .rkey = 0x00abcdff, .type = IBV_MW_TYPE_1 };
	struct ibv_mw_bind b = {
		.wr_id = 5, .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
		.bind_info = { .mr = &mr, .addr = 0x6000, .length = 0x40,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	uint32_t rkey = 0;

	memset(slot.b, 0xa5, sizeof(slot.b));
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &rc_caps, &mw, &b, &rkey), 0);
	CHECK_EQ(rkey, 0x00abcd00);				/* the key byte wraps */
	CHECK_EQ(u64_at(slot.b, 0), 5);
	CHECK_EQ(u8_at(slot.b, 8), 9);				/* BIND_MW */
	CHECK_EQ(u8_at(slot.b, 9), 1 | 8 | 16);			/* SIGNALED|FENCE|MW_TYPE1 */
	CHECK_EQ(u8_at(slot.b, 10), 0);
	CHECK_EQ(u64_at(slot.b, 24), 0x6000);
	CHECK_EQ(u64_at(slot.b, 32), 0x40);
	CHECK_EQ(u32_at(slot.b, 40), 0x00abcdff);
	CHECK_EQ(u32_at(slot.b, 44), 0x00abcd00);
	CHECK_EQ(u32_at(slot.b, 48), 0x4243);
	CHECK_EQ(u32_at(slot.b, 52), 4);			/* IB_ACCESS_REMOTE_READ */
	check_reserved();

	/* Length 0 unbinds: no MR needed, range and rights zero. */
	b.bind_info.mr = NULL;
	b.bind_info.length = 0;
	memset(slot.b, 0xa5, sizeof(slot.b));
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &uc_caps, &mw, &b, &rkey), 0);
	CHECK_EQ(u64_at(slot.b, 24), 0);
	CHECK_EQ(u64_at(slot.b, 32), 0);
	CHECK_EQ(u32_at(slot.b, 48), 0);
	CHECK_EQ(u32_at(slot.b, 52), 0);

	/* A length needs an MR; UD cannot bind; type 2 is not this verb. */
	b.bind_info.length = 1;
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &rc_caps, &mw, &b, &rkey), EINVAL);
	b.bind_info.mr = &mr;
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &ud_caps, &mw, &b, &rkey), EINVAL);
	b.send_flags = IBV_SEND_INLINE;
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &rc_caps, &mw, &b, &rkey), EINVAL);
	b.send_flags = 0;
	mw.type = IBV_MW_TYPE_2;
	CHECK_EQ(scire_wqe_from_bind1(&slot.wqe, &rc_caps, &mw, &b, &rkey), EINVAL);
}

static void test_inline(void)
{
	uint8_t a[40], b[24];
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)a, .length = sizeof(a), .lkey = 0 },
		{ .addr = (uintptr_t)b, .length = sizeof(b), .lkey = 0 },
	};
	struct ibv_send_wr wr = {
		.sg_list = sge, .num_sge = 2, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_INLINE,
	};
	size_t i;

	for (i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)i;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(0x80 + i);

	/* 40 + 24 = 64 = max_inline exactly. */
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 9), 4);				/* INLINE */
	CHECK_EQ(u8_at(slot.b, 10), 0);				/* INLINE => no SGEs */
	CHECK_EQ(u32_at(slot.b, 12), 64);
	CHECK(memcmp(slot.b + 64, a, sizeof(a)) == 0, "first buffer");
	CHECK(memcmp(slot.b + 64 + sizeof(a), b, sizeof(b)) == 0, "second buffer");

	/* One byte more than max_inline. */
	sge[1].length++;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);

	/* Inline through the setters, as ibv_wr_set_inline_data does. */
	scire_wqe_init(&slot.wqe, SCIRE_WQE_OP_SEND, 0, 1);
	CHECK_EQ(scire_wqe_start_inline(&slot.wqe), 0);
	CHECK_EQ(scire_wqe_add_inline(&slot.wqe, &rc_caps, a, 10), 0);
	CHECK_EQ(scire_wqe_add_inline(&slot.wqe, &rc_caps, b, 5), 0);
	CHECK_EQ(u32_at(slot.b, 12), 15);
	CHECK(memcmp(slot.b + 74, b, 5) == 0, "appended buffer");
	CHECK_EQ(scire_wqe_add_inline(&slot.wqe, &rc_caps, a, 50), EINVAL);

	/* READ and atomics cannot be made inline. */
	scire_wqe_init(&slot.wqe, SCIRE_WQE_OP_RDMA_READ, 0, 1);
	CHECK_EQ(scire_wqe_start_inline(&slot.wqe), EINVAL);
}

static void test_bad_requests(void)
{
	struct ibv_sge sge[5] = {
		{ .addr = 1, .length = 1 << 30 }, { .addr = 2, .length = 1 << 30 },
		{ .addr = 3, .length = 1 },
	};
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 5, .opcode = IBV_WR_SEND };

	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);		/* num_sge > max_sge */
	wr.num_sge = -1;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.num_sge = 2;						/* exactly 2^31 bytes */
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	wr.num_sge = 3;						/* one byte over */
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_IP_CSUM;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.send_flags = 0;
	wr.opcode = IBV_WR_TSO;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.opcode = (enum ibv_wr_opcode)200;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = NULL;
	CHECK_EQ(encode(&rc_caps, &wr), EINVAL);

	/* REG_MR is a kernel-only WQE. */
	CHECK(!scire_op_allowed(&rc_caps, SCIRE_WQE_OP_REG_MR), "REG_MR allowed");
	CHECK(!scire_op_allowed(&rc_caps, SCIRE_WQE_OP_MAX), "opcode MAX allowed");
}

static void test_ud(void)
{
	static const struct scire_sq_caps ud_caps = { .max_sge = 4, .max_inline = 64,
						      .ud = true };
	struct scire_ah ah = { .ah_num = 0x1234 };
	uint8_t data[16];
	struct ibv_sge sge = { .addr = 0x6000, .length = 1024, .lkey = 0x31 };
	struct ibv_send_wr wr = {
		.wr_id = 0x55, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = &ah.ibah, .remote_qpn = 0xabcdef,
			   .remote_qkey = 0x11223344 },
	};
	static const enum ibv_wr_opcode not_ud[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
	};
	size_t i;

	CHECK_EQ(encode(&ud_caps, &wr), 0);
	CHECK_EQ(u64_at(slot.b, 0), 0x55);
	CHECK_EQ(u8_at(slot.b, 8), 0);				/* SEND */
	CHECK_EQ(u8_at(slot.b, 9), 1);				/* SIGNALED */
	CHECK_EQ(u8_at(slot.b, 10), 1);
	CHECK_EQ(u32_at(slot.b, 24), 0x1234);			/* ud.ah_num */
	CHECK_EQ(u32_at(slot.b, 28), 0xabcdef);			/* ud.remote_qpn */
	CHECK_EQ(u32_at(slot.b, 32), 0x11223344);		/* ud.remote_qkey */
	CHECK_EQ(u32_at(slot.b, 36), 0);			/* ud.reserved */
	CHECK_EQ(u64_at(slot.b, 40), 0);			/* rest of the union */
	CHECK_EQ(u64_at(slot.b, 48), 0);
	CHECK_EQ(u64_at(slot.b, 56), 0);
	CHECK_EQ(u64_at(slot.b, 64), 0x6000);
	check_reserved();

	/* Immediate data, the multicast QPN, a "use my own Q_Key" Q_Key. */
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0xa1b2c3d4);
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = 0x80000000;
	CHECK_EQ(encode(&ud_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 1);				/* SEND_IMM */
	CHECK_EQ(u32_at(slot.b, 16), htonl(0xa1b2c3d4));
	CHECK_EQ(u32_at(slot.b, 28), 0xffffff);
	CHECK_EQ(u32_at(slot.b, 32), 0x80000000);		/* passed on as given */

	/* Inline data, as on RC. */
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0x40 + i);
	sge = (struct ibv_sge){ .addr = (uintptr_t)data, .length = sizeof(data) };
	wr.send_flags = IBV_SEND_INLINE;
	CHECK_EQ(encode(&ud_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 9), 4);				/* INLINE */
	CHECK_EQ(u32_at(slot.b, 12), sizeof(data));
	CHECK_EQ(u32_at(slot.b, 24), 0x1234);
	CHECK(memcmp(slot.b + 64, data, sizeof(data)) == 0, "UD inline bytes");
	wr.send_flags = 0;

	/* No AH, or a QP number wider than 24 bits. */
	wr.wr.ud.ah = NULL;
	CHECK_EQ(encode(&ud_caps, &wr), EINVAL);
	wr.wr.ud.ah = &ah.ibah;
	wr.wr.ud.remote_qpn = 0x1000000;
	CHECK_EQ(encode(&ud_caps, &wr), EINVAL);
	wr.wr.ud.remote_qpn = 2;

	/* A datagram carries sends only. */
	for (i = 0; i < sizeof(not_ud) / sizeof(not_ud[0]); i++) {
		wr.opcode = not_ud[i];
		CHECK(encode(&ud_caps, &wr) == EINVAL, "opcode %d accepted on UD",
		      not_ud[i]);
	}
	CHECK(scire_op_allowed(&ud_caps, SCIRE_WQE_OP_SEND), "UD SEND refused");
	CHECK(scire_op_allowed(&ud_caps, SCIRE_WQE_OP_SEND_IMM), "UD SEND_IMM refused");
	CHECK(!scire_op_allowed(&ud_caps, SCIRE_WQE_OP_RDMA_WRITE), "UD WRITE allowed");

	/* RC ignores wr.ud: the union stays zero for a SEND. */
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(encode(&rc_caps, &wr), 0);
	CHECK_EQ(u64_at(slot.b, 24), 0);
	CHECK_EQ(u64_at(slot.b, 32), 0);
}

/* A raw packet QP: a SEND of the frame's bytes, nothing else, no address. */
static void test_raw(void)
{
	static const struct scire_sq_caps raw_caps = { .max_sge = 4, .raw = true };
	struct ibv_sge sge = { .addr = 0x7000, .length = 60, .lkey = 0x41 };
	struct ibv_send_wr wr = {
		.wr_id = 0x66, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	static const enum ibv_wr_opcode not_raw[] = {
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV,
	};
	size_t i;

	CHECK_EQ(encode(&raw_caps, &wr), 0);
	CHECK_EQ(u8_at(slot.b, 8), 0);				/* SEND */
	CHECK_EQ(u64_at(slot.b, 24), 0);			/* no UD address */
	CHECK_EQ(u64_at(slot.b, 32), 0);
	CHECK_EQ(u64_at(slot.b, 64), 0x7000);
	check_reserved();
	for (i = 0; i < sizeof(not_raw) / sizeof(not_raw[0]); i++) {
		wr.opcode = not_raw[i];
		CHECK(encode(&raw_caps, &wr) == EINVAL,
		      "opcode %d accepted on a raw packet QP", not_raw[i]);
	}
	CHECK(scire_op_allowed(&raw_caps, SCIRE_WQE_OP_SEND), "raw SEND refused");
	CHECK(!scire_op_allowed(&raw_caps, SCIRE_WQE_OP_SEND_IMM),
	      "raw SEND_IMM allowed");
}

static void test_recv(void)
{
	union {
		struct scire_recv_wqe wqe;
		uint8_t b[64];
	} r;
	struct ibv_sge sge[2] = {
		{ .addr = 0xa000, .length = 512, .lkey = 0x11 },
		{ .addr = 0xb000, .length = 256, .lkey = 0x12 },
	};
	struct ibv_recv_wr wr = { .wr_id = 0x77, .sg_list = sge, .num_sge = 2 };

	memset(r.b, 0xa5, sizeof(r.b));
	CHECK_EQ(scire_wqe_from_recv_wr(&r.wqe, 3, &wr), 0);
	CHECK_EQ(u64_at(r.b, 0), 0x77);
	CHECK_EQ(u32_at(r.b, 8), 2);				/* num_sge */
	CHECK_EQ(u32_at(r.b, 12), 0);				/* reserved */
	CHECK_EQ(u64_at(r.b, 16), 0xa000);
	CHECK_EQ(u32_at(r.b, 24), 512);
	CHECK_EQ(u32_at(r.b, 28), 0x11);
	CHECK_EQ(u64_at(r.b, 32), 0xb000);
	CHECK_EQ(u32_at(r.b, 40), 256);
	CHECK_EQ(u32_at(r.b, 44), 0x12);

	CHECK_EQ(scire_wqe_from_recv_wr(&r.wqe, 1, &wr), EINVAL);
	wr.num_sge = 0;						/* a zero-length receive */
	CHECK_EQ(scire_wqe_from_recv_wr(&r.wqe, 1, &wr), 0);
	CHECK_EQ(u32_at(r.b, 8), 0);
}

static void test_ring(void)
{
	const uint32_t entries = 4, wqe_size = 128;
	struct scire_wq wq = { .num_entries = entries, .wqe_size = wqe_size };
	size_t size = SCIRE_WQ_RING_HDR_SIZE + entries * wqe_size;
	uint8_t *mem = aligned_alloc(64, size);

	if (!mem) {
		CHECK(mem, "out of memory");
		return;
	}
	memset(mem, 0, size);
	wq.ring = (struct scire_wq_ring *)mem;

	/* Header: producer at 0, consumer at 64, flags at 128, slot 0 at 192. */
	CHECK_EQ((uint8_t *)scire_wq_slot(&wq, 0) - mem, 192);
	CHECK_EQ((uint8_t *)scire_wq_slot(&wq, 5) - mem, 192 + 128);
	CHECK_EQ((uint8_t *)scire_wq_slot(&wq, 0xffffffffU) - mem, 192 + 3 * 128);

	CHECK_EQ(scire_wq_room(&wq, 0), 4);
	CHECK_EQ(scire_wq_room(&wq, 4), 0);			/* full */
	memcpy(mem + 64, &(uint32_t){ 2 }, 4);			/* kernel retired 2 */
	CHECK_EQ(scire_wq_room(&wq, 4), 2);
	CHECK_EQ(scire_wq_room(&wq, 1), -1);			/* consumer ahead of us */
	memcpy(mem + 64, &(uint32_t){ 0xfffffffeU }, 4);	/* across the wrap */
	CHECK_EQ(scire_wq_room(&wq, 1), 1);
	CHECK_EQ(scire_wq_room(&wq, 3), -1);			/* 5 in use of 4 */

	scire_wq_publish(&wq, 0x12345678);
	CHECK_EQ(u32_at(mem, 0), 0x12345678);

	CHECK(!scire_wq_in_error(&wq), "error flag seen in a clean ring");
	memcpy(mem + 128, &(uint32_t){ SCIRE_WQ_F_ERROR }, 4);
	CHECK(scire_wq_in_error(&wq), "error flag at offset 128 not seen");

	wq.prod = 9;
	scire_wq_reset(&wq);
	CHECK_EQ(wq.prod, 0);
	CHECK_EQ(u32_at(mem, 0), 0);

	/* A queue without slots has no room and no mapping to touch. */
	wq.num_entries = 0;
	wq.ring = NULL;
	CHECK_EQ(scire_wq_room(&wq, 0), 0);
	free(mem);
}

int main(void)
{
	test_send_sges();
	test_send_imm_and_inv();
	test_rdma();
	test_atomics();
	test_atomic_write();
	test_local_inv();
	test_bind_mw();
	test_bind_mw1();
	test_inline();
	test_bad_requests();
	test_ud();
	test_raw();
	test_recv();
	test_ring();

	return unit_result("WQE encoding and ring");
}
