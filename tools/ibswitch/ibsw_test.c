// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ibsw_test: scire-ibswitch's agents and relay without sockets (`meson
 * test ibswitch`). Three hosts attach by HELLO; an SM's directed-route
 * SMPs read and program the switch (IBA 14.2.2: answered at the end of
 * the path, forwarded through it both ways); data is relayed by the LFT
 * and MFT, unknown DLIDs and P_Key violations are dropped and counted
 * where the PMA shows them; unsupported attributes get IBA's status; a
 * silent host's port goes down and trap 128 goes to the SM until
 * repressed; random datagrams change nothing they should not; two
 * switches cable themselves to each other by address and UDP port.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsw.h"

#define HOST(i)		(0x0a000000u + (i))	/* any distinct addresses */
#define HOST_PORT	4792
#define SW_LID		5

static struct ibsw sw;
static int failures;

/* What the switch sent, in order. */
static struct sent {
	int port;
	size_t len;
	uint8_t buf[SIB_HDR_LEN + 4 * 0x7ff];
} sent[64];
static int nsent;

static void xmit(struct ibsw *s, int port, const uint8_t *buf, size_t len)
{
	if (nsent < (int)(sizeof(sent) / sizeof(sent[0]))) {
		sent[nsent].port = port;
		sent[nsent].len = len;
		memcpy(sent[nsent].buf, buf, len);
	}
	nsent++;
}

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

static uint64_t now = 1000;

static void rcv(int host, const uint8_t *buf, size_t len)
{
	nsent = 0;
	ibsw_rcv(&sw, now, HOST(host), HOST_PORT, buf, len);
}

static void hello(int host)
{
	uint8_t h[SIB_HELLO_LEN] = { SIB_VERSION << 4 | SIB_TYPE_HELLO };

	ibsw_put64(h + 4, 0x1000 + host);
	ibsw_put64(h + 12, 0x1000 + host);
	rcv(host, h, sizeof(h));
}

static const uint8_t *sent_mad(int i)
{
	return sent[i].buf + SIB_HDR_LEN + LRH_LEN + BTH_LEN + DETH_LEN;
}

static bool sent_sealed(int i)
{
	struct ibsw_pkt pkt;

	return ibsw_parse(sent[i].buf, sent[i].len, &pkt) == 0;
}

/* A directed-route SMP from host @host's SM (IBA 14.2.1.2). */
static size_t dr_smp(uint8_t *dgram, uint8_t method, uint16_t attr,
		     uint32_t mod, const uint8_t *path, int hops,
		     const uint8_t *data, size_t dlen)
{
	uint8_t mad[MAD_LEN] = { 1, 0x81, 1, method };

	ibsw_put64(mad + 8, 0x1234);
	ibsw_put16(mad + 16, attr);
	ibsw_put32(mad + 20, mod);
	mad[6] = 1;		/* the SM's port already counted its hop */
	mad[7] = hops;
	ibsw_put16(mad + 32, LID_PERMISSIVE);
	ibsw_put16(mad + 34, LID_PERMISSIVE);
	for (int i = 0; i <= hops; i++)
		mad[128 + i] = path[i];
	if (data)
		memcpy(mad + 64, data, dlen);
	return ibsw_build_mad(dgram, VL15, 0, LID_PERMISSIVE, LID_PERMISSIVE,
			      0xffff, 0, 0, 0, mad);
}

/* One DR SMP to the switch from host 1; returns the reply's status. */
static int sw_smp(uint8_t method, uint16_t attr, uint32_t mod,
		  const uint8_t *data, size_t dlen, uint8_t *reply_data)
{
	static const uint8_t path[] = { 0, 1 };
	uint8_t d[400];
	size_t n = dr_smp(d, method, attr, mod, path, 1, data, dlen);

	rcv(1, d, n);
	if (nsent != 1 || sent[0].port != 1 || !sent_sealed(0)) {
		failures++;
		printf("FAIL: SMP attr 0x%x mod 0x%x: %d replies\n", attr, mod, nsent);
		return -1;
	}
	if (reply_data)
		memcpy(reply_data, sent_mad(0) + 64, 64);
	CHECK(sent_mad(0)[3] == 0x81, "method 0x%x", sent_mad(0)[3]);
	CHECK(ibsw_get16(sent_mad(0) + 4) & 0x8000, "no D bit");
	return ibsw_get16(sent_mad(0) + 4) & 0x7fff;
}

/* A UD packet of @len payload bytes from LID @slid to @dlid. */
static size_t data_pkt(uint8_t *dgram, uint16_t slid, uint16_t dlid,
		       uint16_t pkey)
{
	uint8_t mad[MAD_LEN] = { 0 };
	size_t n = ibsw_build_mad(dgram, 0, 0, dlid, slid, pkey, 0x42,
				  0x11111111, 0x43, mad);
	return n;
}

static void test_attach(void)
{
	for (int h = 1; h <= 3; h++) {
		hello(h);
		CHECK(nsent == 1 && sent[0].port == h, "host %d: %d sends", h, nsent);
		CHECK(sent[0].buf[0] == 0x11 && sent[0].len == SIB_HELLO_LEN,
		      "host %d: no HELLO back", h);
		CHECK(sw.port[h].link_up && sw.port[h].port_state == PS_INIT,
		      "port %d not up in INIT", h);
	}
	hello(2);
	CHECK(nsent == 0 && sw.port[2].addr == HOST(2), "a second HELLO moved host 2");
	CHECK(!sw.port[4].attached, "port 4 attached");
}

static void test_sma(void)
{
	uint8_t d[64], set[64];
	int st;

	st = sw_smp(1, 0x11, 0, NULL, 0, d);
	CHECK(st == 0 && d[2] == 2 && d[3] == 4 && d[36] == 1,
	      "NodeInfo: status 0x%x type %d ports %d local port %d", st, d[2], d[3], d[36]);
	CHECK(ibsw_get64(d + 12) == sw.node_guid, "NodeGUID");
	st = sw_smp(1, 0x10, 0, NULL, 0, d);
	CHECK(st == 0 && !strcmp((char *)d, "test switch"), "NodeDescription '%.64s'", d);
	st = sw_smp(1, 0x12, 0, NULL, 0, d);
	CHECK(st == 0 && ibsw_get16(d) == IBSW_LFT_CAP && ibsw_get16(d + 4) == IBSW_MFT_CAP &&
	      (d[11] & 4), "SwitchInfo: status 0x%x, PortStateChange %d", st, d[11] >> 2 & 1);
	/* PortStateChange is cleared by writing one. */
	memcpy(set, d, 64);
	ibsw_put16(set + 6, 0x40);
	st = sw_smp(2, 0x12, 0, set, 64, d);
	CHECK(st == 0 && !(d[11] & 4) && ibsw_get16(d + 6) == 0x40, "SwitchInfo Set");

	st = sw_smp(1, 0x15, 2, NULL, 0, d);
	CHECK(st == 0 && (d[32] & 0xf) == PS_INIT && d[33] >> 4 == PHYS_LINKUP && d[28] == 1,
	      "PortInfo 2: state %d phys %d local %d", d[32] & 0xf, d[33] >> 4, d[28]);
	CHECK(sw_smp(1, 0x15, 5, NULL, 0, d) == 0x1c, "PortInfo 5 of 4 ports");
	CHECK(sw_smp(1, 0x15, 4, NULL, 0, d) == 0 && (d[32] & 0xf) == PS_DOWN &&
	      d[33] >> 4 == PHYS_POLLING, "PortInfo 4 (no cable)");
	CHECK(sw_smp(1, 0x18, 0, NULL, 0, d) == 0x0c, "VLArbitrationTable");
	CHECK(sw_smp(1, 0x20, 0, NULL, 0, d) == 0x0c, "SMInfo");
	CHECK(sw_smp(1, 0x1a, 0, NULL, 0, d) == 0x0c, "RandomForwardingTable");
	CHECK(sw_smp(1, 0xff00, 0, NULL, 0, d) == 0x0c, "a vendor attribute");
	CHECK(sw_smp(3, 0x11, 0, NULL, 0, d) == 0x08, "method Send");
	CHECK(sw_smp(2, 0x11, 0, NULL, 0, d) == 0x0c, "Set NodeInfo");
	CHECK(sw_smp(1, 0x14, 0, NULL, 0, d) == 0 && ibsw_get64(d) == sw.node_guid, "GUIDInfo");
	CHECK(sw_smp(1, 0x19, IBSW_LFT_CAP / 64, NULL, 0, d) == 0x1c, "LFT block past the cap");
	CHECK(sw_smp(1, 0x1b, 3u << 28, NULL, 0, d) == 0x1c, "MFT position 3");

	/* The SM's sweep: port 0's LID and SM, the LFT, the ports ACTIVE. */
	st = sw_smp(1, 0x15, 0, NULL, 0, set);
	ibsw_put16(set + 16, SW_LID);
	ibsw_put16(set + 18, 1);
	set[51] = 18;
	CHECK(sw_smp(2, 0x15, 0, set, 64, d) == 0 && ibsw_get16(d + 16) == SW_LID, "LID Set");
	memset(set, IBSW_PORT_NONE, 64);
	set[1] = 1;
	set[2] = 2;
	set[3] = 3;
	set[SW_LID] = 0;
	CHECK(sw_smp(2, 0x19, 0, set, 64, d) == 0 && d[3] == 3, "LFT Set");
	for (int p = 0; p <= 3; p++) {
		for (int s = PS_ARMED; s <= PS_ACTIVE; s++) {
			sw_smp(1, 0x15, p, NULL, 0, set);
			set[32] = (set[32] & 0xf0) | s;
			st = sw_smp(2, 0x15, p, set, 64, d);
			CHECK(st == 0 && (d[32] & 0xf) == s, "port %d to state %d: 0x%x", p, s, st);
		}
	}
	sw_smp(1, 0x15, 4, NULL, 0, set);
	set[32] = (set[32] & 0xf0) | PS_ARMED;
	CHECK(sw_smp(2, 0x15, 4, set, 64, d) == 0x1c, "ARMED from DOWN");
	/* The invalid Set changed nothing. */
	CHECK(sw.port[4].port_state == PS_DOWN, "port 4 state %d", sw.port[4].port_state);
	/* MLID 0xc001: ports 1, 2, 3. */
	memset(set, 0, 64);
	ibsw_put16(set + 2, 0x000e);
	CHECK(sw_smp(2, 0x1b, 0, set, 64, d) == 0 && ibsw_get16(d + 2) == 0xe, "MFT Set");
	CHECK(sw_smp(1, 0x1b, 0, NULL, 0, d) == 0 && ibsw_get16(d + 2) == 0xe, "MFT Get");
}

static void test_dr_path(void)
{
	static const uint8_t path[] = { 0, 1, 3 };
	uint8_t d[400], *mad;
	size_t n = dr_smp(d, 1, 0x11, 0, path, 2, NULL, 0);

	/* Outgoing through the switch: on out of port 3, hop pointer 2. */
	rcv(1, d, n);
	CHECK(nsent == 1 && sent[0].port == 3 && sent_sealed(0), "DR through: %d sends", nsent);
	if (nsent != 1)
		return;
	CHECK(sent_mad(0)[6] == 2 && sent_mad(0)[192 + 1] == 1,
	      "hop pointer %d, return path[1] %d", sent_mad(0)[6], sent_mad(0)[193]);
	/* Host 3's answer comes back: out of port 1, hop pointer 1. */
	memcpy(d, sent[0].buf, sent[0].len);
	n = sent[0].len;
	mad = d + SIB_HDR_LEN + LRH_LEN + BTH_LEN + DETH_LEN;
	mad[3] = 0x81;
	ibsw_put16(mad + 4, 0x8000);
	mad[6] = 2;
	mad[192 + 2] = 1;
	ibsw_reseal(d, n);
	rcv(3, d, n);
	CHECK(nsent == 1 && sent[0].port == 1 && sent_mad(0)[6] == 1 && sent_sealed(0),
	      "DR return: %d sends, port %d", nsent, sent[0].port);

	/* Back out of the port it came in on: how a tool reaches its own port. */
	static const uint8_t loop[] = { 0, 1, 1 };

	n = dr_smp(d, 1, 0x11, 0, loop, 2, NULL, 0);
	rcv(1, d, n);
	CHECK(nsent == 1 && sent[0].port == 1 && sent_mad(0)[6] == 2,
	      "DR 0,1,1: %d sends", nsent);

	/* Bad paths: a port past the last, a hop pointer of 0, 64 hops. */
	static const uint8_t bad[] = { 0, 1, 9 };

	n = dr_smp(d, 1, 0x11, 0, bad, 2, NULL, 0);
	rcv(1, d, n);
	CHECK(nsent == 0, "DR to port 9 went out");
	n = dr_smp(d, 1, 0x11, 0, path, 2, NULL, 0);
	d[SIB_HDR_LEN + LRH_LEN + BTH_LEN + DETH_LEN + 6] = 0;
	ibsw_reseal(d, n);
	rcv(1, d, n);
	CHECK(nsent == 0, "DR with hop pointer 0 answered");
	n = dr_smp(d, 1, 0x11, 0, path, 2, NULL, 0);
	d[SIB_HDR_LEN + LRH_LEN + BTH_LEN + DETH_LEN + 7] = 64;
	ibsw_reseal(d, n);
	rcv(1, d, n);
	CHECK(nsent == 0, "DR with 64 hops answered");
}

static uint64_t relay_errors(int port)
{
	return sw.port[port].cnt.rcv_switch_relay_errors;
}

static void test_relay(void)
{
	uint8_t d[400], mad[MAD_LEN] = { 1, 0x04, 1, 1 };
	size_t n;

	n = data_pkt(d, 1, 3, 0xffff);
	rcv(1, d, n);
	CHECK(nsent == 1 && sent[0].port == 3 && !memcmp(sent[0].buf, d, n),
	      "unicast 1 -> 3: %d sends", nsent);
	n = data_pkt(d, 1, 9, 0xffff);
	rcv(1, d, n);
	CHECK(nsent == 0 && relay_errors(1) == 1, "unknown DLID: relay errors %llu",
	      (unsigned long long)relay_errors(1));
	n = data_pkt(d, 1, 1, 0xffff);
	rcv(1, d, n);
	CHECK(nsent == 0 && relay_errors(1) == 2, "DLID back out of its ingress port");
	n = data_pkt(d, 2, 0xc001, 0xffff);
	rcv(2, d, n);
	CHECK(nsent == 2 && sent[0].port == 1 && sent[1].port == 3,
	      "multicast from 2: %d copies", nsent);
	n = data_pkt(d, 2, 0xc002, 0xffff);
	rcv(2, d, n);
	CHECK(nsent == 0 && relay_errors(2) == 1, "MLID without members");
	/* A group whose one member is the sender: nothing to do, no error. */
	sw.mft[3][0] = 1u << 2;
	n = data_pkt(d, 2, 0xc003, 0xffff);
	rcv(2, d, n);
	CHECK(nsent == 0 && relay_errors(2) == 1, "a group of one counted an error");
	/* A wrong ICRC. */
	n = data_pkt(d, 1, 3, 0xffff);
	d[n - 1] ^= 1;
	rcv(1, d, n);
	CHECK(nsent == 0 && sw.port[1].cnt.rcv_errors == 1, "bad ICRC relayed");
	/* QP0 on a data VL. */
	n = data_pkt(d, 1, 3, 0xffff);
	ibsw_put32(d + SIB_HDR_LEN + LRH_LEN + 4, 0);
	ibsw_reseal(d, n);
	rcv(1, d, n);
	CHECK(nsent == 0, "QP0 on VL0 relayed");

	/* Partition enforcement at port 3: only 0x8001 there. */
	memset(sw.port[3].pkeys, 0, sizeof(sw.port[3].pkeys));
	sw.port[3].pkeys[0] = 0x8001;
	sw.port[3].pkey_enf_in = sw.port[3].pkey_enf_out = true;
	n = data_pkt(d, 1, 3, 0xffff);
	rcv(1, d, n);
	CHECK(nsent == 0 && sw.port[3].cnt.xmit_constraint_errors == 1,
	      "outbound P_Key violation relayed");
	n = data_pkt(d, 1, 3, 0x0001);
	rcv(1, d, n);
	CHECK(nsent == 1, "limited member to a full member's port not relayed");
	n = data_pkt(d, 3, 1, 0x8002);
	rcv(3, d, n);
	CHECK(nsent == 0 && sw.port[3].cnt.rcv_constraint_errors == 1 &&
	      sw.port[3].pkey_violations == 2, "inbound P_Key violation relayed");

	/* The PMA by LID: port 1's PortRcvSwitchRelayErrors. */
	ibsw_put64(mad + 8, 77);
	ibsw_put16(mad + 16, 0x12);
	mad[64 + 1] = 1;
	n = ibsw_build_mad(d, 0, 0, SW_LID, 1, 0xffff, 1, QP1_QKEY, 7, mad);
	rcv(1, d, n);
	CHECK(nsent == 1 && sent[0].port == 1 && sent_sealed(0), "PMA: %d replies", nsent);
	if (nsent == 1) {
		const uint8_t *r = sent_mad(0);

		CHECK(r[3] == 0x81 && ibsw_get16(r + 4) == 0 &&
		      ibsw_get16(r + 64 + 12) == 2 && ibsw_get16(r + 64 + 8) == 2,
		      "PortCounters: status 0x%x relay %d rcv errors %d",
		      ibsw_get16(r + 4), ibsw_get16(r + 76), ibsw_get16(r + 72));
		CHECK(ibsw_get16(sent[0].buf + SIB_HDR_LEN + 2) == 1 &&
		      ibsw_get32(sent[0].buf + SIB_HDR_LEN + LRH_LEN + 4) == 7,
		      "reply not to LID 1 QP 7");
	}
	mad[64 + 1] = 9;
	n = ibsw_build_mad(d, 0, 0, SW_LID, 1, 0xffff, 1, QP1_QKEY, 7, mad);
	rcv(1, d, n);
	CHECK(nsent == 1 && ibsw_get16(sent_mad(0) + 4) == 0x1c, "PortSelect 9");

	/* A LID-routed SMP to the switch's LID. */
	memset(mad, 0, sizeof(mad));
	mad[0] = 1;
	mad[1] = 0x01;
	mad[2] = 1;
	mad[3] = 1;
	ibsw_put16(mad + 16, 0x11);
	n = ibsw_build_mad(d, VL15, 0, SW_LID, 1, 0xffff, 0, 0, 0, mad);
	rcv(2, d, n);
	CHECK(nsent == 1 && sent[0].port == 1 && sent_mad(0)[64 + 2] == 2,
	      "LID-routed NodeInfo: %d replies", nsent);
}

static void test_link_down_trap(void)
{
	uint8_t d[400], mad[MAD_LEN] = { 1, 0x01, 1, 0x07 };
	int traps = 0;
	uint64_t tid = 0;
	size_t n;

	/* Hosts 1 and 2 keep greeting; host 3 falls silent. */
	for (int t = 0; t < 40; t++) {
		now += 100;
		hello(1);
		hello(2);
		nsent = 0;
		ibsw_tick(&sw, now);
		for (int i = 0; i < nsent; i++) {
			if (sent[i].buf[0] == 0x10 && sent_mad(i)[3] == 0x05) {
				traps++;
				tid = ibsw_get64(sent_mad(i) + 8);
				CHECK(sent[i].port == 1 && ibsw_get16(sent_mad(i) + 64 + 4) == 128 &&
				      ibsw_get16(sent_mad(i) + 64 + 10) == SW_LID &&
				      ibsw_get16(sent[i].buf + SIB_HDR_LEN + 2) == 1,
				      "trap 128 malformed");
			}
		}
	}
	CHECK(!sw.port[3].link_up && sw.port[3].port_state == PS_DOWN &&
	      sw.port[3].cnt.link_downed == 1, "port 3 still up");
	CHECK(sw.port_state_change, "PortStateChange not set");
	CHECK(traps >= 1, "no trap 128");
	/* Repressed: no more of it. */
	ibsw_put64(mad + 8, tid);
	ibsw_put16(mad + 16, 0x0002);
	n = ibsw_build_mad(d, VL15, 0, SW_LID, 1, 0xffff, 0, 0, 0, mad);
	rcv(1, d, n);
	CHECK(nsent == 0 && sw.trap.tid == 0, "TrapRepress answered or ignored");
	/* Host 3 back: the same port. */
	hello(3);
	CHECK(sw.port[3].link_up && sw.port[3].port_state == PS_INIT, "host 3 not back on port 3");
	/* A fourth host gets port 4, a fifth none. */
	hello(4);
	CHECK(sw.port[4].attached && sw.port[4].addr == HOST(4), "host 4 not on port 4");
	hello(5);
	CHECK(sw.refused_hellos == 1, "host 5 took a live port");
}

static void test_random(void)
{
	uint8_t d[600], base[400], lft[IBSW_LFT_CAP];
	uint32_t seed = 51;
	size_t n;

	memcpy(lft, sw.lft, sizeof(lft));
	n = data_pkt(base, 1, 3, 0xffff);
	for (int i = 0; i < 200000; i++) {
		size_t len;

		seed = seed * 1103515245 + 12345;
		if (seed >> 30) {
			/* a valid packet with a few bytes changed */
			memcpy(d, base, n);
			len = n;
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245 + 12345;
				d[(seed >> 8) % len] = seed >> 20;
			}
			if (seed & 1)
				ibsw_reseal(d, len);
		} else {
			len = (seed >> 8) % sizeof(d);
			for (size_t k = 0; k < len; k++) {
				seed = seed * 1103515245 + 12345;
				d[k] = seed >> 16;
			}
		}
		nsent = 0;
		ibsw_rcv(&sw, now, HOST(1 + seed % 3), HOST_PORT, d, len);
		for (int k = 0; k < nsent && k < 64; k++)
			CHECK(sent[k].buf[0] == 0x11 || sent_sealed(k), "sent an unsealed packet");
	}
	/* Only whole SMPs reach the SMA, and none of these was one. */
	CHECK(!memcmp(lft, sw.lft, sizeof(lft)), "the LFT changed");
	CHECK(sw.port[1].link_up && sw.port[2].link_up, "a link went down");
}

/* Is sent[@i] a HELLO out of port @port? */
static bool sent_hello(int i, int port)
{
	return sent[i].port == port && sent[i].len == SIB_HELLO_LEN &&
	       sent[i].buf[0] == (SIB_VERSION << 4 | SIB_TYPE_HELLO);
}

/*
 * Two switches cabled to each other: switch b's port 1 to switch a, which
 * shares its address with a host; b calls a, a gives b a port of its own
 * by address and UDP port, and both links come up; b keeps calling a
 * while the link is down, and no other peer takes b's cabled port.
 */
static void test_inter_switch(void)
{
	static struct ibsw a, b;
	uint8_t h[SIB_HELLO_LEN], hh[SIB_HELLO_LEN] = { SIB_VERSION << 4 | SIB_TYPE_HELLO };
	uint64_t t = 5000;

	ibsw_init(&a, 4, 0x025c1e0a00000a00ull, "switch a", xmit, NULL);
	ibsw_init(&b, 4, 0x025c1e0a00000b00ull, "switch b", xmit, NULL);
	CHECK(ibsw_port_link(&b, 1, HOST(20), 4793) == 0, "cabling b's port 1");
	CHECK(ibsw_port_link(&b, 1, HOST(22), 4793) == -1, "port 1 cabled twice");
	CHECK(ibsw_port_link(&b, 2, HOST(20), 4793) == -1, "a peer on two ports");
	CHECK(ibsw_port_link(&b, 5, HOST(23), 4793) == -1, "port 5 of 4");
	CHECK(ibsw_port_link(&b, 0, HOST(23), 4793) == -1, "port 0");

	nsent = 0;
	ibsw_tick(&b, t);
	CHECK(nsent == 1 && sent_hello(0, 1), "b did not call a: %d sent", nsent);
	CHECK(!b.port[1].link_up, "b's link up before a answered");
	memcpy(h, sent[0].buf, sizeof(h));

	/* A host at switch b's address, on scire_ib's UDP port, comes first. */
	ibsw_put64(hh + 4, 0x2100);
	ibsw_rcv(&a, t, HOST(21), 4792, hh, sizeof(hh));
	CHECK(a.port[1].attached && a.port[1].link_up, "the host is not on a's port 1");
	nsent = 0;
	ibsw_rcv(&a, t, HOST(21), 4794, h, sizeof(h));
	CHECK(a.port[2].attached && a.port[2].link_up && a.port[2].udp_port == 4794,
	      "switch b (same address, another UDP port) is not on a's port 2");
	CHECK(a.port[2].peer_port_guid == b.node_guid + 1, "a's port 2 peer GUID 0x%llx",
	      (unsigned long long)a.port[2].peer_port_guid);
	CHECK(nsent == 1 && sent_hello(0, 2), "a did not answer b: %d sent", nsent);

	/*
	 * DATA from a QP's own source port: the host's at that address (a's
	 * port 1), not switch b's, which sends from its listen port only.
	 */
	{
		uint8_t junk[12] = { SIB_VERSION << 4 | SIB_TYPE_DATA };
		uint64_t e1 = a.port[1].cnt.rcv_errors, e2 = a.port[2].cnt.rcv_errors;

		ibsw_rcv(&a, t, HOST(21), 49152, junk, sizeof(junk));
		CHECK(a.port[1].cnt.rcv_errors == e1 + 1 && a.port[2].cnt.rcv_errors == e2,
		      "DATA from the host's QP port not counted on its switch port");
		ibsw_rcv(&a, t, HOST(21), 4794, junk, sizeof(junk));
		CHECK(a.port[2].cnt.rcv_errors == e2 + 1, "DATA from switch b not on port 2");
	}

	/* a's answer brings b's port 1 up; a stranger gets port 2 of b. */
	memcpy(h, sent[0].buf, sizeof(h));
	ibsw_rcv(&b, t, HOST(20), 4793, h, sizeof(h));
	CHECK(b.port[1].link_up, "b's link to a did not come up");
	ibsw_rcv(&b, t, HOST(20), 4795, h, sizeof(h));
	CHECK(b.port[2].attached && b.port[1].udp_port == 4793,
	      "a stranger at a's address moved b's cabled port");
	{
		uint8_t junk[12] = { SIB_VERSION << 4 | SIB_TYPE_DATA };
		uint64_t e1 = b.port[1].cnt.rcv_errors;

		ibsw_rcv(&b, t, HOST(20), 4796, junk, sizeof(junk));
		CHECK(b.port[1].cnt.rcv_errors == e1,
		      "DATA from another UDP port of a's address taken as switch a's");
	}

	/* Silence takes b's link down; b goes on calling a. */
	nsent = 0;
	ibsw_tick(&b, t + IBSW_HELLO_TIMEOUT_MS + 1000);
	CHECK(!b.port[1].link_up, "b's link up after a's silence");
	CHECK(nsent >= 1 && sent_hello(0, 1), "b stopped calling a once its link was down");
	b.port[2].hello_ms = 0;
	ibsw_tick(&b, t + 2 * IBSW_HELLO_TIMEOUT_MS + 2000);
	nsent = 0;
	ibsw_rcv(&b, t, HOST(24), 4792, h, sizeof(h));
	CHECK(b.port[1].addr == HOST(20) && b.port[1].udp_port == 4793,
	      "a new host took b's cabled port while its link was down");
}

int main(void)
{
	if (ibsw_init(&sw, 4, 0x025c1e0a00000100ull, "test switch", xmit, NULL)) {
		printf("FAIL: init\n");
		return 1;
	}
	test_attach();
	test_sma();
	test_dr_path();
	test_relay();
	test_link_down_trap();
	test_random();
	test_inter_switch();
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
