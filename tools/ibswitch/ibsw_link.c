// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire-ibswitch: the switch's external ports and the relay between them.
 *
 * A port's "cable" is the UDP flow to one host's scire_ib port, or to
 * another switch's port. A host attaches by greeting the switch (its
 * scire_ib_peer names the switch's ADDR:PORT): the first HELLO from an
 * address and UDP port no port knows takes the first free port, and the
 * port keeps that peer across link downs, so a host that comes back finds
 * itself where the SM last saw it. A port cabled to another switch at
 * start (ibsw_port_link()) greets that switch itself, as a host greets
 * its switch, so two switches link up whichever starts first. The link
 * is up while the peer's last HELLO is at most three seconds old, as on
 * the kernel side, and the switch greets every live peer once a second.
 *
 * DATA packets are relayed as IBA 18.2.4 has a switch do it: unicast DLIDs
 * out of the LinearForwardingTable's port, multicast DLIDs out of every
 * MulticastForwardingTable member but the ingress port, the switch's own
 * LID (and the permissive DLID on VL15) to port 0's agents, directed-route
 * SMPs along their paths (ibsw_sma.c). What cannot be relayed is dropped
 * and counted where IBA 16.1.3.5 counts it.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <string.h>

#include "ibsw.h"

/**
 * ibsw_init() - a switch with every port down and empty tables.
 * @sw: the switch to set up.
 * @nports: external ports, 1..IBSW_MAX_PORTS.
 * @node_guid: NodeGUID; port 0's GUID and the SystemImageGUID too.
 * @node_desc: NodeDescription (up to 64 bytes are kept).
 * @xmit: how datagrams leave the switch.
 * @priv: kept in sw->priv for @xmit.
 *
 * Return: 0, or -1 if @nports is out of range.
 */
int ibsw_init(struct ibsw *sw, int nports, uint64_t node_guid,
	      const char *node_desc, ibsw_xmit_fn *xmit, void *priv)
{
	if (nports < 1 || nports > IBSW_MAX_PORTS)
		return -1;
	memset(sw, 0, sizeof(*sw));
	sw->nports = nports;
	sw->node_guid = node_guid;
	/* NodeDescription is 64 bytes, not NUL-terminated when full. */
	memcpy(sw->node_desc, node_desc,
	       strnlen(node_desc, sizeof(sw->node_desc)));
	sw->xmit = xmit;
	sw->priv = priv;
	memset(sw->lft, IBSW_PORT_NONE, sizeof(sw->lft));
	sw->default_port = IBSW_PORT_NONE;
	sw->default_mcast_primary = IBSW_PORT_NONE;
	sw->default_mcast_not_primary = IBSW_PORT_NONE;
	sw->tid_next = node_guid << 24 | 1;
	for (int p = 0; p <= nports; p++) {
		struct ibsw_port *port = &sw->port[p];

		/* Port 0 has no link: it is up from the start (IBA 14.2.5.6). */
		port->port_state = p ? PS_DOWN : PS_INIT;
		port->neighbor_mtu = 5;		/* 4096 */
		port->op_vls = 1;		/* VL0 */
		port->link_width_enabled = 3;	/* 1X, 4X */
		port->link_speed_enabled = 7;	/* 2.5, 5, 10 Gb/s */
		port->link_down_default = PHYS_POLLING;
		port->hoq_life = 0x13;
		port->pkeys[0] = 0xffff;	/* the default partition */
	}
	return 0;
}

/* Does @pkey match an entry of @port's P_KeyTable (IBA 10.9.3)? */
static bool pkey_match(const struct ibsw_port *port, uint16_t pkey)
{
	if (!(pkey & 0x7fff))
		return false;
	for (int i = 0; i < IBSW_PKEYS; i++) {
		uint16_t e = port->pkeys[i];

		/* Two limited members do not talk to each other. */
		if ((e & 0x7fff) == (pkey & 0x7fff) && (e | pkey) & 0x8000)
			return true;
	}
	return false;
}

static uint16_t pkt_pkey(const uint8_t *dgram)
{
	const uint8_t *ib = dgram + SIB_HDR_LEN;

	return ibsw_get16(ib + LRH_LEN +
			  ((ib[1] & 3) == LNH_GLOBAL ? GRH_LEN : 0) + 2);
}

/**
 * ibsw_send() - send a packet out of an external port, if the port may
 * carry it.
 * @sw: the switch.
 * @port: 1..N.
 * @buf: a DATA datagram.
 * @len: its length.
 * @mcast: a copy of a multicast packet (for the counters).
 *
 * VL15 goes out of any port whose link is up, other VLs only out of an
 * ACTIVE port (IBA 7.2). Outbound partition enforcement, when the SM
 * turned it on for the port, drops packets whose P_Key the port's table
 * does not match (PortXmitConstraintErrors); VL15 is exempt.
 */
void ibsw_send(struct ibsw *sw, int port, const uint8_t *buf, size_t len,
	       bool mcast)
{
	struct ibsw_port *p = &sw->port[port];
	bool vl15 = buf[SIB_HDR_LEN] >> 4 == VL15;

	if (port < 1 || port > sw->nports)
		return;
	if (!p->attached || !p->link_up ||
	    (!vl15 && p->port_state != PS_ACTIVE)) {
		p->cnt.xmit_discards++;
		return;
	}
	if (!vl15 && p->pkey_enf_out && !pkey_match(p, pkt_pkey(buf))) {
		p->cnt.xmit_constraint_errors++;
		if (p->pkey_violations != 0xffff)
			p->pkey_violations++;
		return;
	}
	p->cnt.xmit_pkts++;
	p->cnt.xmit_data += (len - SIB_HDR_LEN) / 4;
	if (mcast)
		p->cnt.mcast_xmit_pkts++;
	else
		p->cnt.ucast_xmit_pkts++;
	sw->xmit(sw, port, buf, len);
}

static void hello_send(struct ibsw *sw, int port)
{
	uint8_t h[SIB_HELLO_LEN] = { SIB_VERSION << 4 | SIB_TYPE_HELLO };

	/*
	 * A GUID per cable, so that no two of the switch's HELLOs look
	 * alike to a host that checks for its own looped-back ones.
	 */
	ibsw_put64(h + SIB_HDR_LEN, sw->node_guid + port);
	ibsw_put64(h + SIB_HDR_LEN + 8, sw->node_guid);
	sw->xmit(sw, port, h, sizeof(h));
}

static void link_set(struct ibsw *sw, int port, bool up)
{
	struct ibsw_port *p = &sw->port[port];

	if (p->link_up == up)
		return;
	p->link_up = up;
	if (up) {
		p->port_state = PS_INIT;
	} else {
		p->port_state = PS_DOWN;
		p->cnt.link_downed++;
	}
	ibsw_port_changed(sw);
}

/*
 * The port cabled to the peer that sent from @saddr:@sport, or 0. A
 * switch sends everything from the port it listens on, so its address
 * and UDP port name it, and two switches may share an address.
 */
static int port_of(const struct ibsw *sw, uint32_t saddr, uint16_t sport)
{
	for (int p = 1; p <= sw->nports; p++)
		if (sw->port[p].attached && sw->port[p].addr == saddr &&
		    sw->port[p].udp_port == sport)
			return p;
	return 0;
}

/*
 * The port a DATA datagram from @saddr:@sport came in on. A host's
 * scire_ib port greets from its own UDP port but sends DATA from each
 * QP's source port (kernel/ib/scire_ib_net.c): a datagram no port's
 * address and UDP port match is the host's whose address it came from,
 * on the first port of that address this switch did not cable itself
 * (ibsw_port_link() cables switches only).
 */
static int port_of_data(const struct ibsw *sw, uint32_t saddr, uint16_t sport)
{
	int port = port_of(sw, saddr, sport);

	for (int p = 1; !port && p <= sw->nports; p++)
		if (sw->port[p].attached && sw->port[p].addr == saddr &&
		    !sw->port[p].greets)
			port = p;
	return port;
}

/*
 * The port a HELLO from @saddr:@sport claims: its own if it has one, else
 * the first free one, else the one whose host has been silent longest
 * (its link down for three seconds at least). A port cabled at start
 * (ibsw_port_link()) is never taken by another peer.
 */
static int port_claim(struct ibsw *sw, uint32_t saddr, uint16_t sport)
{
	int best = port_of(sw, saddr, sport);

	if (best)
		return best;
	for (int p = 1; p <= sw->nports; p++)
		if (!sw->port[p].attached)
			return p;
	for (int p = 1; p <= sw->nports; p++) {
		const struct ibsw_port *q = &sw->port[p];

		if (!q->link_up && !q->phys_disabled && !q->greets &&
		    (!best || q->hello_ms < sw->port[best].hello_ms))
			best = p;
	}
	return best;
}

static void hello_rcv(struct ibsw *sw, uint32_t saddr, uint16_t sport,
		      const uint8_t *buf, size_t len)
{
	struct ibsw_port *p;
	int port;

	if (len < SIB_HELLO_LEN) {
		port = port_of(sw, saddr, sport);
		if (port)
			sw->port[port].cnt.rcv_errors++;
		else
			sw->dropped_unattached++;
		return;
	}
	port = port_claim(sw, saddr, sport);
	if (!port) {
		sw->refused_hellos++;
		return;
	}
	p = &sw->port[port];
	if (!p->attached || p->addr != saddr || p->udp_port != sport) {
		p->attached = true;
		p->addr = saddr;
		p->udp_port = sport;
		p->link_up = false;
	}
	p->peer_port_guid = ibsw_get64(buf + SIB_HDR_LEN);
	p->peer_node_guid = ibsw_get64(buf + SIB_HDR_LEN + 8);
	p->hello_ms = sw->now_ms;
	if (!p->link_up && !p->phys_disabled) {
		link_set(sw, port, true);
		/* Answer at once, so that the host's link comes up as fast. */
		hello_send(sw, port);
	}
}

static bool own_lid(const struct ibsw *sw, uint16_t lid)
{
	const struct ibsw_port *p0 = &sw->port[0];

	return p0->lid && (lid & ~((1u << p0->lmc) - 1)) == p0->lid;
}

static void relay_error(struct ibsw_port *in, bool vl15)
{
	in->cnt.rcv_switch_relay_errors++;
	if (vl15)
		in->cnt.vl15_dropped++;
}

static void data_rcv(struct ibsw *sw, int in, uint8_t *buf, size_t len)
{
	struct ibsw_port *p = &sw->port[in];
	struct ibsw_pkt pkt;
	bool vl15;
	int out;

	if (!p->link_up) {
		p->cnt.rcv_errors++;
		return;
	}
	if (ibsw_parse(buf, len, &pkt)) {
		p->cnt.rcv_errors++;
		return;
	}
	vl15 = pkt.vl == VL15;
	p->cnt.rcv_pkts++;
	p->cnt.rcv_data += pkt.ib_len / 4;
	if (pkt.dlid >= LID_MCAST_FIRST && pkt.dlid != LID_PERMISSIVE)
		p->cnt.mcast_rcv_pkts++;
	else
		p->cnt.ucast_rcv_pkts++;

	if (vl15) {
		/* Management packets only: QP0, one whole MAD (IBA 9.6.1.4). */
		if (!pkt.mad || pkt.dest_qp != 0) {
			p->cnt.vl15_dropped++;
			return;
		}
		if (pkt.mad[1] == 0x81) {
			ibsw_dr_rcv(sw, in, buf, len, &pkt);
			return;
		}
		if (pkt.dlid == LID_PERMISSIVE) {
			ibsw_local_rcv(sw, in, buf, len, &pkt);
			return;
		}
		if (pkt.dlid >= LID_MCAST_FIRST) {
			relay_error(p, true);
			return;
		}
	} else {
		/* Data waits for ACTIVE; the first packet activates ARMED. */
		if (p->port_state == PS_ARMED)
			p->port_state = PS_ACTIVE;
		if (p->port_state != PS_ACTIVE || pkt.dest_qp == 0) {
			p->cnt.rcv_errors++;
			return;
		}
		if (p->pkey_enf_in && !pkey_match(p, pkt.pkey)) {
			p->cnt.rcv_constraint_errors++;
			if (p->pkey_violations != 0xffff)
				p->pkey_violations++;
			return;
		}
	}

	if (pkt.dlid >= LID_MCAST_FIRST) {
		unsigned int idx = pkt.dlid - LID_MCAST_FIRST;

		/*
		 * An MLID with no member port is a relay error; one whose only
		 * member is the sender's port is not (a group of one host).
		 */
		if (pkt.dlid == LID_PERMISSIVE || idx >= IBSW_MFT_CAP ||
		    !(sw->mft[idx][0] | sw->mft[idx][1] | sw->mft[idx][2])) {
			relay_error(p, false);
			return;
		}
		for (out = 1; out <= sw->nports; out++)
			if (out != in &&
			    sw->mft[idx][out / 16] & (1u << (out % 16)))
				ibsw_send(sw, out, buf, len, true);
		return;
	}
	if (pkt.dlid == 0) {
		relay_error(p, vl15);
		return;
	}
	out = own_lid(sw, pkt.dlid) ? 0 : sw->lft[pkt.dlid];
	if (out == 0) {
		ibsw_local_rcv(sw, in, buf, len, &pkt);
		return;
	}
	if (out > sw->nports || out == in) {
		relay_error(p, vl15);
		return;
	}
	ibsw_send(sw, out, buf, len, false);
}

/**
 * ibsw_rcv() - a datagram that came to the switch's socket.
 * @sw: the switch.
 * @now_ms: a monotonic time in milliseconds.
 * @saddr: the sender's IPv4 address, network order.
 * @sport: the sender's UDP port, network order.
 * @buf: the datagram; DATA packets may be rewritten in place (the
 *	 hop pointer and return path of a directed-route SMP).
 * @len: its length.
 *
 * A datagram from an address no port is cabled to, other than a HELLO
 * that claims a port, is dropped (sw->dropped_unattached). Malformed
 * datagrams from a cabled host count as its port's PortRcvErrors.
 */
void ibsw_rcv(struct ibsw *sw, uint64_t now_ms, uint32_t saddr,
	      uint16_t sport, const uint8_t *buf, size_t len)
{
	uint8_t copy[SIB_HDR_LEN + 4 * 0x7ff];
	int port;

	sw->now_ms = now_ms;
	if (len >= SIB_HDR_LEN && buf[0] == (SIB_VERSION << 4 | SIB_TYPE_HELLO)) {
		hello_rcv(sw, saddr, sport, buf, len);
		return;
	}
	port = port_of_data(sw, saddr, sport);
	if (!port) {
		sw->dropped_unattached++;
		return;
	}
	if (len > sizeof(copy)) {
		sw->port[port].cnt.rcv_errors++;
		return;
	}
	memcpy(copy, buf, len);
	data_rcv(sw, port, copy, len);
}

/**
 * ibsw_tick() - the switch's timers: HELLOs once a second to every live
 * host, links down after three seconds of silence, the trap's resends.
 * @sw: the switch.
 * @now_ms: a monotonic time in milliseconds.
 *
 * Call it at least every 100 ms or so; the switch needs no call at any
 * exact time.
 */
void ibsw_tick(struct ibsw *sw, uint64_t now_ms)
{
	bool greet = now_ms - sw->hello_sent_ms >= IBSW_HELLO_PERIOD_MS;

	sw->now_ms = now_ms;
	if (greet)
		sw->hello_sent_ms = now_ms;
	for (int port = 1; port <= sw->nports; port++) {
		struct ibsw_port *p = &sw->port[port];

		if (!p->attached)
			continue;
		if (p->link_up &&
		    now_ms - p->hello_ms > IBSW_HELLO_TIMEOUT_MS)
			link_set(sw, port, false);
		/* A port cabled at start calls its peer until it answers. */
		if (greet && (p->link_up || (p->greets && !p->phys_disabled)))
			hello_send(sw, port);
	}
	ibsw_trap_tick(sw);
}

/**
 * ibsw_port_link() - cable an external port to another switch at start
 * (an inter-switch link).
 * @sw: the switch.
 * @port: 1..N, not yet attached.
 * @addr: the other switch's IPv4 address, network order.
 * @udp_port: the UDP port it listens on, network order.
 *
 * For switches only: a host's DATA comes from other UDP ports than its
 * HELLOs, and a cabled port takes datagrams from its peer's address and
 * UDP port alone (port_of_data()). Hosts attach themselves.
 *
 * The port greets the peer once a second from then on, link up or not,
 * so that of two switches cabled to each other either may start first;
 * its link comes up at the peer's first HELLO. No other peer's HELLO
 * takes the port.
 *
 * Return: 0, or -1 if @port is out of range, already cabled, or the
 * peer is already on another port.
 */
int ibsw_port_link(struct ibsw *sw, int port, uint32_t addr, uint16_t udp_port)
{
	struct ibsw_port *p;

	if (port < 1 || port > sw->nports || sw->port[port].attached ||
	    port_of(sw, addr, udp_port))
		return -1;
	p = &sw->port[port];
	p->attached = true;
	p->greets = true;
	p->addr = addr;
	p->udp_port = udp_port;
	p->link_up = false;
	return 0;
}

/**
 * ibsw_port_disable() - what the SM's PortPhysicalState Set does to a
 * port's link: Disabled (@disable) takes it down and keeps it down, any
 * other value lets the host's HELLOs bring it up again.
 * @sw: the switch.
 * @port: 1..N.
 * @disable: Disabled, or Polling.
 */
void ibsw_port_disable(struct ibsw *sw, int port, bool disable)
{
	sw->port[port].phys_disabled = disable;
	if (disable)
		link_set(sw, port, false);
}

/**
 * ibsw_port_retrain() - the SM set PortState Down: the port goes down and,
 * its host being alive, straight back to INIT, as the kernel side does.
 * @sw: the switch.
 * @port: 0..N.
 */
void ibsw_port_retrain(struct ibsw *sw, int port)
{
	struct ibsw_port *p = &sw->port[port];

	if (port == 0 || p->link_up)
		p->port_state = PS_INIT;
	else
		p->port_state = PS_DOWN;
}
