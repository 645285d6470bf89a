// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Unit test, run by `meson test`: CQE -> ibv_wc translation of scire_cq.c,
 * through ibv_poll_cq() and through the extended CQ readers, on a CQ ring
 * in plain memory. The UD receive fields (GRH flag, src_qp, sl, pkey_index,
 * slid, dlid_path_bits) are what ibv_create_ah_from_wc() and UD
 * applications build replies from; with a GRH, sl is the RoCE packet type
 * (2 IPv4, 1 IPv6) that UCX's UD transport reads.
 *
 * scire_cq.c is included, not linked, to reach its static polling code.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire_cq.c"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "scire_unit.h"

#define CQ_ENTRIES	4

static struct scire_cq_ex cqx;

static void cq_setup(void)
{
	size_t size = sizeof(struct scire_cq_ring) +
		      CQ_ENTRIES * sizeof(struct scire_cqe);
	void *mem;

	free(cqx.cq.map.ring);
	memset(&cqx, 0, sizeof(cqx));
	mem = aligned_alloc(64, size);
	if (!mem) {
		printf("out of memory\n");
		exit(1);
	}
	memset(mem, 0, size);
	cqx.cq.map.ring = mem;
	cqx.cq.map.size = size;
	cqx.cq.map.num_entries = CQ_ENTRIES;
	pthread_spin_init(&cqx.cq.lock, PTHREAD_PROCESS_PRIVATE);
}

/* The kernel's side: write a CQE into the next slot and publish it. */
static void cq_produce(const struct scire_cqe *cqe)
{
	struct scire_cq_ring *ring = cqx.cq.map.ring;

	ring->cqe[ring->producer & (CQ_ENTRIES - 1)] = *cqe;
	ring->producer++;
}

/* A UD SEND_WITH_IMM as it arrives: 40 bytes of GRH, then 100 of payload. */
static const struct scire_cqe ud_recv = {
	.wr_id = 0x1122334455667788ULL,
	.status = IBV_WC_SUCCESS,
	.opcode = SCIRE_CQE_OP_RECV,
	.byte_len = SCIRE_UD_GRH_LEN + 100,
	.qp_num = 0x21,
	.src_qp = 0xabcdef,
	.flags = SCIRE_CQE_F_GRH | SCIRE_CQE_F_IMM | SCIRE_CQE_F_SOLICITED,
	.pkey_index = 3,
	.slid = 0x0102,
	.sl = 5,
	.dlid_path_bits = 0x7f,
	.network_hdr_type = SCIRE_CQE_NET_IPV4,
};

/* A UD receive without GRH or immediate data (as QP1 on IB would see). */
static const struct scire_cqe ud_recv_plain = {
	.wr_id = 9,
	.opcode = SCIRE_CQE_OP_RECV,
	.byte_len = 1,
	.qp_num = 0x21,
	.src_qp = 1,
};

static void test_poll_ud(void)
{
	struct scire_cqe c = ud_recv;
	struct ibv_wc wc[3];

	cq_setup();
	c.imm_data = htonl(0xcafe0001);
	cq_produce(&c);
	cq_produce(&ud_recv_plain);

	memset(wc, 0xa5, sizeof(wc));
	CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 3, wc), 2);
	CHECK_EQ(wc[0].wr_id, 0x1122334455667788ULL);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(wc[0].opcode, IBV_WC_RECV);
	CHECK_EQ(wc[0].byte_len, 140);
	CHECK_EQ(wc[0].imm_data, htonl(0xcafe0001));
	CHECK_EQ(wc[0].qp_num, 0x21);
	CHECK_EQ(wc[0].src_qp, 0xabcdef);
	/* SOLICITED is for arming only; GRH and IMM are reported. */
	CHECK_EQ(wc[0].wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
	CHECK_EQ(wc[0].pkey_index, 3);
	CHECK_EQ(wc[0].slid, 0x0102);
	/* The packet type of an IPv4 GRH replaces the CQE's sl. */
	CHECK_EQ(wc[0].sl, 2);
	CHECK_EQ(wc[0].dlid_path_bits, 0x7f);

	CHECK_EQ(wc[1].wr_id, 9);
	CHECK_EQ(wc[1].wc_flags, 0);
	CHECK_EQ(wc[1].src_qp, 1);
	CHECK_EQ(wc[1].byte_len, 1);
	CHECK_EQ(wc[1].sl, 0);
	CHECK_EQ(wc[1].pkey_index, 0);

	/* Both consumed, and the kernel told so. */
	CHECK_EQ(cqx.cq.map.ring->consumer, 2);
	CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 3, wc), 0);
}

static void test_cq_ex_ud(void)
{
	struct ibv_cq_ex *ex = &cqx.cq.vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};
	struct scire_cqe c = ud_recv;

	cq_setup();
	scire_cq_ex_set_ops(ex, SCIRE_CQ_EX_WC_FLAGS);
	c.imm_data = htonl(0x0badf00d);
	c.timestamp = 1234567890123ULL;
	cq_produce(&c);
	cq_produce(&ud_recv_plain);

	CHECK_EQ(ibv_start_poll(ex, &attr), 0);
	CHECK_EQ(ex->wr_id, 0x1122334455667788ULL);
	CHECK_EQ(ex->status, IBV_WC_SUCCESS);
	CHECK_EQ(ibv_wc_read_opcode(ex), IBV_WC_RECV);
	CHECK_EQ(ibv_wc_read_byte_len(ex), 140);
	CHECK_EQ(ibv_wc_read_imm_data(ex), htonl(0x0badf00d));
	CHECK_EQ(ibv_wc_read_qp_num(ex), 0x21);
	CHECK_EQ(ibv_wc_read_src_qp(ex), 0xabcdef);
	CHECK_EQ(ibv_wc_read_wc_flags(ex), IBV_WC_GRH | IBV_WC_WITH_IMM);
	CHECK_EQ(ibv_wc_read_slid(ex), 0x0102);
	CHECK_EQ(ibv_wc_read_sl(ex), 2);
	CHECK_EQ(ibv_wc_read_dlid_path_bits(ex), 0x7f);
	/* The kernel's CLOCK_MONOTONIC ns are the 1 GHz device clock as is. */
	CHECK_EQ(ibv_wc_read_completion_ts(ex), 1234567890123ULL);

	CHECK_EQ(ibv_next_poll(ex), 0);
	CHECK_EQ(ex->wr_id, 9);
	CHECK_EQ(ibv_wc_read_wc_flags(ex), 0);
	CHECK_EQ(ibv_wc_read_src_qp(ex), 1);
	CHECK_EQ(ibv_next_poll(ex), ENOENT);
	ibv_end_poll(ex);
	CHECK_EQ(cqx.cq.map.ring->consumer, 2);

	/* Readers not asked for stay unset: libibverbs would call NULL. */
	cq_setup();
	scire_cq_ex_set_ops(ex, IBV_WC_EX_WITH_BYTE_LEN);
	CHECK(ex->read_byte_len != NULL, "byte_len reader missing");
	CHECK(ex->read_src_qp == NULL && ex->read_sl == NULL &&
	      ex->read_slid == NULL && ex->read_dlid_path_bits == NULL &&
	      ex->read_completion_ts == NULL && ex->read_completion_wallclock_ns == NULL,
	      "UD or timestamp readers set without being asked for");
}

/*
 * sl of a UD receive is the packet type of its GRH, for each kind the
 * kernel may report, through both polling APIs; without a GRH, or with a
 * network_hdr_type the table does not know, the CQE's sl.
 */
static void test_ud_sl(void)
{
	static const struct {
		uint32_t flags;
		uint8_t network_hdr_type, cqe_sl, sl;
	} cases[] = {
		{ SCIRE_CQE_F_GRH, SCIRE_CQE_NET_IPV4, 0, 2 },
		{ SCIRE_CQE_F_GRH, SCIRE_CQE_NET_IPV6, 0, 1 },
		{ SCIRE_CQE_F_GRH, SCIRE_CQE_NET_ROCE_V1, 3, 0 },
		{ SCIRE_CQE_F_GRH, SCIRE_CQE_NET_IB, 3, 3 },
		{ SCIRE_CQE_F_GRH, 0xff, 4, 4 },
		{ 0, SCIRE_CQE_NET_IPV4, 6, 6 },
	};
	struct ibv_cq_ex *ex = &cqx.cq.vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};
	struct scire_cqe c = ud_recv_plain;
	struct ibv_wc wc;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c.flags = cases[i].flags;
		c.network_hdr_type = cases[i].network_hdr_type;
		c.sl = cases[i].cqe_sl;

		cq_setup();
		cq_produce(&c);
		CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 1, &wc), 1);
		CHECK_EQ(wc.sl, cases[i].sl);
		CHECK_EQ(wc.wc_flags, cases[i].flags ? IBV_WC_GRH : 0);

		cq_setup();
		scire_cq_ex_set_ops(ex, SCIRE_CQ_EX_WC_FLAGS);
		cq_produce(&c);
		CHECK_EQ(ibv_start_poll(ex, &attr), 0);
		CHECK_EQ(ibv_wc_read_sl(ex), cases[i].sl);
		ibv_end_poll(ex);
	}
}

/* An error CQE of a UD QP: status kept, no flags invented. */
static void test_poll_error(void)
{
	const struct scire_cqe c = {
		.wr_id = 5, .status = IBV_WC_LOC_LEN_ERR, .opcode = SCIRE_CQE_OP_RECV,
		.qp_num = 0x21, .vendor_err = 0x99,
	};
	struct ibv_wc wc;

	cq_setup();
	cq_produce(&c);
	CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 1, &wc), 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(wc.vendor_err, 0x99);
	CHECK_EQ(wc.wc_flags, 0);
}

/*
 * Removing one QP's CQEs (scire_cq_clean(), after a move to RESET): the
 * others stay in order, the consumer index advances by the number removed
 * and is published, a CQE the kernel produces after the walk is kept, and
 * indices that wrap the ring and the 32-bit counter work alike.
 */
static void test_clean(void)
{
	static const uint32_t starts[] = { 0, 3, 0xfffffffeU };
	struct ibv_cq *ibcq = &cqx.cq.vcq.cq;
	struct scire_cqe c = ud_recv_plain;
	struct ibv_wc wc[CQ_ENTRIES];
	size_t i;

	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		uint32_t start = starts[i];

		cq_setup();
		cqx.cq.map.ring->producer = start;
		cqx.cq.map.ring->consumer = start;
		cqx.cq.cons = start;
		/* A1 B1 A2 B2: remove A (qp 0x21), keep B (qp 0x22). */
		c.qp_num = 0x21; c.wr_id = 1; cq_produce(&c);
		c.qp_num = 0x22; c.wr_id = 2; cq_produce(&c);
		c.qp_num = 0x21; c.wr_id = 3; cq_produce(&c);
		c.qp_num = 0x22; c.wr_id = 4; cq_produce(&c);
		CHECK_EQ(scire_cq_clean(ibcq, 0x21), 2);
		CHECK_EQ(cqx.cq.cons, start + 2);
		CHECK_EQ(cqx.cq.map.ring->consumer, start + 2);
		/* The kernel reuses a freed slot for another QP. */
		c.qp_num = 0x23; c.wr_id = 5; cq_produce(&c);
		CHECK_EQ(scire_cq_clean(ibcq, 0x21), 0);
		CHECK_EQ(scire_poll_cq(ibcq, CQ_ENTRIES, wc), 3);
		CHECK_EQ(wc[0].wr_id, 2);
		CHECK_EQ(wc[1].wr_id, 4);
		CHECK_EQ(wc[2].wr_id, 5);
		CHECK_EQ(wc[2].qp_num, 0x23);
	}

	/* Everything removed; then an empty CQ is left alone. */
	cq_setup();
	c.qp_num = 0x21;
	cq_produce(&c);
	cq_produce(&c);
	CHECK_EQ(scire_cq_clean(ibcq, 0x21), 2);
	CHECK_EQ(scire_poll_cq(ibcq, CQ_ENTRIES, wc), 0);
	CHECK_EQ(scire_cq_clean(ibcq, 0x21), 0);
	CHECK_EQ(cqx.cq.map.ring->consumer, 2);

	/* A producer index no ring of ours can have: nothing is touched. */
	cq_setup();
	cqx.cq.map.ring->producer = CQ_ENTRIES + 1;
	CHECK_EQ(scire_cq_clean(ibcq, 0x21), 0);
	CHECK_EQ(cqx.cq.cons, 0);
}

/*
 * A CQ of a parent domain with a TD: polling neither takes nor releases
 * its lock, held here throughout (a poller that took it would spin for
 * ever, meson's timeout failing the test). Without the TD it is free again
 * afterwards.
 */
static void test_single_thread(void)
{
	struct ibv_cq_ex *ex = &cqx.cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc wc;

	cq_setup();
	scire_cq_ex_set_ops(ex, 0);
	cqx.cq.single_thread = true;
	pthread_spin_lock(&cqx.cq.lock);
	cq_produce(&ud_recv_plain);
	cq_produce(&ud_recv_plain);
	CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 1, &wc), 1);
	CHECK_EQ(ex->start_poll(ex, &pa), 0);
	ex->end_poll(ex);
	CHECK_EQ(ex->start_poll(ex, &pa), ENOENT);
	CHECK_EQ(scire_req_notify_cq(&cqx.cq.vcq.cq, 0), 0);
	CHECK_EQ(pthread_spin_trylock(&cqx.cq.lock), EBUSY);
	pthread_spin_unlock(&cqx.cq.lock);

	cq_setup();
	cq_produce(&ud_recv_plain);
	CHECK_EQ(scire_poll_cq(&cqx.cq.vcq.cq, 1, &wc), 1);
	CHECK_EQ(pthread_spin_trylock(&cqx.cq.lock), 0);
	pthread_spin_unlock(&cqx.cq.lock);
}

int main(void)
{
	test_poll_ud();
	test_cq_ex_ud();
	test_ud_sl();
	test_poll_error();
	test_clean();
	test_single_thread();
	free(cqx.cq.map.ring);

	return unit_result("CQE translation");
}
