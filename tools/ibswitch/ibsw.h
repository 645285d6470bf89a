/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire-ibswitch: one emulated InfiniBand switch whose ports are UDP flows
 * to scire_ib ports (docs/scire_ib.md, "The switch"). This header holds the
 * switch's state and the calls between its parts:
 *
 *   ibsw_pkt.c  the scire_ib framing: the 4-byte header, LRH, GRH, BTH,
 *               DETH and the ICRC (IBA 7.7, 7.8.1, 8.3, 9.2)
 *   ibsw_link.c ports: attachment by HELLO, link state, and the forwarding
 *               of DATA packets by the LFT and MFT (IBA 18.2.4)
 *   ibsw_sma.c  the switch's own agents behind port 0: SMA (IBA 14.2)
 *               with directed routes (14.2.2), PMA (16.1), trap 128
 *   scire-ibswitch.c  the program: options, socket, event loop
 *
 * The core (everything but the program) does no I/O of its own: datagrams
 * come in through ibsw_rcv(), time through ibsw_tick(), and go out through
 * the xmit hook, so the unit test drives it without sockets or clocks.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef IBSW_H
#define IBSW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IBSW_DEFAULT_UDP_PORT	4793	/* not 4791 (RoCEv2) or 4792 (scire_ib) */
#define IBSW_MAX_PORTS		36	/* external ports; port 0 besides */

/* The scire_ib header (docs/scire_ib.md, "Encapsulation"). */
#define SIB_HDR_LEN		4
#define SIB_VERSION		1
#define SIB_TYPE_DATA		0
#define SIB_TYPE_HELLO		1
#define SIB_HELLO_LEN		(SIB_HDR_LEN + 16)

#define LRH_LEN			8
#define GRH_LEN			40
#define BTH_LEN			12
#define DETH_LEN		8
#define ICRC_LEN		4
#define MAD_LEN			256
#define LNH_LOCAL		2
#define LNH_GLOBAL		3
#define VL15			15
#define LID_PERMISSIVE		0xffff
#define LID_MCAST_FIRST		0xc000
#define BTH_UD_SEND_ONLY	0x64
#define QP1_QKEY		0x80010000u

/* Link timing, as the kernel side keeps it (scire_ib_net.c). */
#define IBSW_HELLO_PERIOD_MS	1000
#define IBSW_HELLO_TIMEOUT_MS	3000

/* Forwarding tables the switch offers in SwitchInfo. */
#define IBSW_LFT_CAP		0xc000	/* every unicast LID */
#define IBSW_MFT_CAP		1024	/* MLIDs 0xc000..0xc3ff */
#define IBSW_MFT_POSITIONS	3	/* 16 ports a position: 0..47 */
#define IBSW_PKEYS		32	/* one P_KeyTable block a port */
#define IBSW_PORT_NONE		0xff	/* an LFT entry that forwards nowhere */

/* PortState and PortPhysicalState values (IBA 14.2.5.6). */
enum {
	PS_NOP = 0, PS_DOWN = 1, PS_INIT = 2, PS_ARMED = 3, PS_ACTIVE = 4,
};
enum {
	PHYS_SLEEP = 1, PHYS_POLLING = 2, PHYS_DISABLED = 3, PHYS_LINKUP = 5,
};

/**
 * struct ibsw_counters - one port's PortCounters (IBA 16.1.3.5) and the
 * 64-bit data and packet counts of PortCountersExtended (16.1.4.11).
 * Kept at full width here; the PMA saturates them to the field sizes.
 */
struct ibsw_counters {
	uint64_t rcv_errors;		/* PortRcvErrors: malformed, bad ICRC */
	uint64_t rcv_switch_relay_errors; /* no LFT/MFT entry, loop, port 0 */
	uint64_t xmit_discards;		/* the egress port was not up */
	uint64_t xmit_constraint_errors; /* outbound P_Key enforcement */
	uint64_t rcv_constraint_errors;	/* inbound P_Key enforcement */
	uint64_t vl15_dropped;		/* SMPs the SMA or a route refused */
	uint64_t link_downed;		/* LinkDownedCounter */
	uint64_t xmit_data, rcv_data;	/* in 4-byte words, as IBA counts */
	uint64_t xmit_pkts, rcv_pkts;
	uint64_t ucast_xmit_pkts, ucast_rcv_pkts;
	uint64_t mcast_xmit_pkts, mcast_rcv_pkts;
};

/**
 * struct ibsw_port - one switch port. Port 0 is the management port
 * (base switch port 0: no link, the switch's LID, its SMA and PMA); ports
 * 1..N are cabled, each to the one host whose HELLOs claimed it.
 */
struct ibsw_port {
	/* the cable: a host's scire_ib port or another switch's port */
	bool attached;
	bool greets;			/* cabled at start: calls its peer itself */
	uint32_t addr;			/* the peer's IPv4 address, network order */
	uint16_t udp_port;		/* its UDP port, network order */
	uint64_t hello_ms;		/* when its last HELLO came; 0: never */
	uint64_t peer_port_guid, peer_node_guid;
	bool link_up;

	/* PortInfo (IBA 14.2.5.6) */
	uint8_t port_state;
	uint8_t phys_disabled;		/* the SM set PortPhysicalState Disabled */
	uint16_t lid;			/* port 0 only, with lmc and the rest */
	uint8_t lmc;
	uint16_t master_sm_lid;
	uint8_t master_sm_sl;
	uint64_t mkey;
	uint64_t gid_prefix;
	uint8_t mkey_protect;
	uint16_t mkey_lease_period;
	uint8_t subnet_timeout;
	uint8_t neighbor_mtu;
	uint8_t op_vls;
	uint8_t link_width_enabled;
	uint8_t link_speed_enabled;
	uint8_t vl_high_limit;
	uint8_t hoq_life;
	uint8_t link_down_default;
	uint8_t phy_err_threshold_overrun;
	bool pkey_enf_in, pkey_enf_out;
	uint16_t mkey_violations, pkey_violations, qkey_violations;

	uint16_t pkeys[IBSW_PKEYS];
	struct ibsw_counters cnt;
};

struct ibsw;

/**
 * typedef ibsw_xmit_fn - send one scire_ib datagram out of an external port.
 * @sw: the switch.
 * @port: 1..N; the port is attached (its host's address is in sw->port[]).
 * @buf: the whole datagram, scire_ib header first.
 * @len: its length.
 */
typedef void ibsw_xmit_fn(struct ibsw *sw, int port, const uint8_t *buf,
			  size_t len);

/**
 * struct ibsw_trap - the trap 128 the SMA repeats until the SM represses it.
 */
struct ibsw_trap {
	uint64_t tid;			/* 0: none pending */
	uint64_t next_ms;		/* when to send it (again) */
	int sends;
};

/**
 * struct ibsw - the switch.
 */
struct ibsw {
	int nports;			/* external ports, 1..IBSW_MAX_PORTS */
	uint64_t node_guid;		/* also port 0's GUID and SystemImageGUID */
	char node_desc[64];
	uint64_t now_ms;		/* time of the last ibsw_tick()/ibsw_rcv() */
	ibsw_xmit_fn *xmit;
	void *priv;			/* the caller's */

	struct ibsw_port port[IBSW_MAX_PORTS + 1];

	/* SwitchInfo (IBA 14.2.5.4) */
	uint16_t lft_top;
	uint16_t mft_top;
	uint8_t default_port;
	uint8_t default_mcast_primary, default_mcast_not_primary;
	uint8_t life_time_value;
	bool port_state_change;

	uint8_t lft[IBSW_LFT_CAP];
	uint16_t mft[IBSW_MFT_CAP][IBSW_MFT_POSITIONS];
	uint8_t sl2vl[IBSW_MAX_PORTS + 1][IBSW_MAX_PORTS + 1][8];

	struct ibsw_trap trap;
	uint64_t tid_next;
	uint64_t hello_sent_ms;		/* the last round of HELLOs */
	uint64_t dropped_unattached;	/* datagrams from no cabled host */
	uint64_t refused_hellos;	/* a HELLO with every port taken */
};

/* ibsw_pkt.c */
uint32_t ibsw_icrc(const uint8_t *ib, size_t len, bool grh);
uint16_t ibsw_get16(const uint8_t *p);
uint32_t ibsw_get32(const uint8_t *p);
uint64_t ibsw_get64(const uint8_t *p);
void ibsw_put16(uint8_t *p, uint16_t v);
void ibsw_put32(uint8_t *p, uint32_t v);
void ibsw_put64(uint8_t *p, uint64_t v);

/**
 * struct ibsw_pkt - where the parts of a DATA datagram are, once
 * ibsw_parse() has checked them.
 */
struct ibsw_pkt {
	const uint8_t *ib;		/* the LRH */
	size_t ib_len;			/* LRH to ICRC inclusive */
	uint8_t vl, sl, lnh;
	uint16_t dlid, slid;
	uint8_t opcode;
	uint16_t pkey;
	uint32_t dest_qp;
	size_t bth_off;			/* from ib */
	const uint8_t *mad;		/* a UD SEND_ONLY's payload, if 256 bytes */
	uint32_t src_qp;		/* DETH, with mad */
	uint32_t qkey;
};
int ibsw_parse(const uint8_t *dgram, size_t len, struct ibsw_pkt *pkt);
size_t ibsw_build_mad(uint8_t *dgram, uint8_t vl, uint8_t sl, uint16_t dlid,
		      uint16_t slid, uint16_t pkey, uint32_t dest_qp,
		      uint32_t qkey, uint32_t src_qp, const uint8_t *mad);
void ibsw_reseal(uint8_t *dgram, size_t len);

/* ibsw_link.c */
int ibsw_init(struct ibsw *sw, int nports, uint64_t node_guid,
	      const char *node_desc, ibsw_xmit_fn *xmit, void *priv);
void ibsw_rcv(struct ibsw *sw, uint64_t now_ms, uint32_t saddr,
	      uint16_t sport, const uint8_t *buf, size_t len);
void ibsw_tick(struct ibsw *sw, uint64_t now_ms);
void ibsw_send(struct ibsw *sw, int port, const uint8_t *buf, size_t len,
	       bool mcast);
int ibsw_port_link(struct ibsw *sw, int port, uint32_t addr, uint16_t udp_port);
void ibsw_port_disable(struct ibsw *sw, int port, bool disable);
void ibsw_port_retrain(struct ibsw *sw, int port);

/* ibsw_sma.c */
void ibsw_local_rcv(struct ibsw *sw, int in_port, uint8_t *dgram, size_t len,
		    const struct ibsw_pkt *pkt);
void ibsw_dr_rcv(struct ibsw *sw, int in_port, uint8_t *dgram, size_t len,
		 const struct ibsw_pkt *pkt);
void ibsw_port_changed(struct ibsw *sw);
void ibsw_trap_tick(struct ibsw *sw);

#endif /* IBSW_H */
