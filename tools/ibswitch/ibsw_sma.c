// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire-ibswitch: the agents behind switch port 0 - the subnet management
 * agent (IBA 14.2) with directed routes (14.2.2), the performance
 * management agent (16.1) and trap 128 (14.2.5.1).
 *
 * Port 0 is a base switch port 0 (SwitchInfo EnhancedPort0 0): it has the
 * switch's LID and M_Key in its PortInfo, no link of its own, LMC 0, and
 * its PortState is the SM's to move from INIT to ACTIVE. Attribute
 * modifiers name a port where IBA says so for a switch (PortInfo,
 * P_KeyTable, SLtoVLMappingTable); GUIDInfo is port 0's.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <string.h>

#include "ibsw.h"

/* Management classes, methods, attributes and statuses (IBA 13.4, 14, 16). */
#define CLASS_SMP_LID		0x01
#define CLASS_SMP_DR		0x81
#define CLASS_PMA		0x04
#define M_GET			0x01
#define M_SET			0x02
#define M_TRAP			0x05
#define M_TRAP_REPRESS		0x07
#define M_GET_RESP		0x81
#define A_NOTICE		0x0002
#define A_NODE_DESC		0x0010
#define A_NODE_INFO		0x0011
#define A_SWITCH_INFO		0x0012
#define A_GUID_INFO		0x0014
#define A_PORT_INFO		0x0015
#define A_PKEY_TABLE		0x0016
#define A_SL2VL			0x0017
#define A_LFT			0x0019
#define A_MFT			0x001b
#define A_PMA_CPI		0x0001
#define A_PORT_COUNTERS		0x0012
#define A_PORT_COUNTERS_EXT	0x001d
#define ST_BAD_VERSION		0x0004
#define ST_METHOD		0x0008
#define ST_METHOD_ATTR		0x000c
#define ST_INVALID		0x001c
#define DR_D_BIT		0x8000

/* Offsets in the MAD (IBA 13.4.2, 14.2.1.1, 14.2.1.2). */
#define MAD_STATUS		4
#define MAD_HOP_PTR		6
#define MAD_HOP_CNT		7
#define MAD_TID			8
#define MAD_ATTR_ID		16
#define MAD_ATTR_MOD		20
#define SMP_MKEY		24
#define SMP_DR_SLID		32
#define SMP_DR_DLID		34
#define SMP_DATA		64
#define SMP_INITIAL_PATH	128
#define SMP_RETURN_PATH		192
#define PMA_DATA		64
#define SMP_MAX_HOPS		64

/* PortInfo capabilities of every switch port (docs/scire_ib.md). */
#define CAP_IS_TRAP		(1u << 3)
#define CAP_IS_SL_MAPPING	(1u << 6)
#define CAP_IS_SYS_IMAGE_GUID	(1u << 11)
#define WIDTH_SUPPORTED		3	/* 1X, 4X */
#define WIDTH_ACTIVE		2	/* 4X */
#define SPEED_SUPPORTED		7	/* 2.5, 5, 10 Gb/s */
#define SPEED_ACTIVE		4	/* 10 Gb/s: QDR, as the CA ports say */
#define MTU_CAP			5	/* 4096 */
#define VL_CAP			1	/* VL0 */
#define RESP_TIME_VALUE		18

#define TRAP_LINK_STATE		128
#define TRAP_MAX_SENDS		8

/* The answer to a request: a reply to send, or nothing. */
enum { NO_REPLY, REPLY };

static void reply_status(uint8_t *mad, uint16_t status)
{
	ibsw_put16(mad + MAD_STATUS, ibsw_get16(mad + MAD_STATUS) | status);
}

/* --- SMA attributes ------------------------------------------------------- */

static void node_info(const struct ibsw *sw, int in_port, uint8_t *d)
{
	d[0] = 1;			/* BaseVersion */
	d[1] = 1;			/* ClassVersion */
	d[2] = 2;			/* NodeType: switch */
	d[3] = sw->nports;		/* NumPorts */
	ibsw_put64(d + 4, sw->node_guid);	/* SystemImageGUID */
	ibsw_put64(d + 12, sw->node_guid);	/* NodeGUID */
	ibsw_put64(d + 20, sw->node_guid);	/* PortGUID: port 0's */
	ibsw_put16(d + 28, IBSW_PKEYS);		/* PartitionCap */
	ibsw_put16(d + 30, 0x5c1e);		/* DeviceID */
	ibsw_put32(d + 32, 1);			/* Revision */
	/* LocalPortNum and VendorID (0: no OUI of ours) */
	ibsw_put32(d + 36, (uint32_t)in_port << 24);
}

static void switch_info(const struct ibsw *sw, uint8_t *d)
{
	ibsw_put16(d + 0, IBSW_LFT_CAP);	/* LinearFDBCap */
	ibsw_put16(d + 2, 0);			/* RandomFDBCap */
	ibsw_put16(d + 4, IBSW_MFT_CAP);	/* MulticastFDBCap */
	ibsw_put16(d + 6, sw->lft_top);		/* LinearFDBTop */
	d[8] = sw->default_port;
	d[9] = sw->default_mcast_primary;
	d[10] = sw->default_mcast_not_primary;
	/* LifeTimeValue, PortStateChange, OptimizedSLtoVLMappingProgramming 0 */
	d[11] = sw->life_time_value << 3 | sw->port_state_change << 2;
	ibsw_put16(d + 12, 0);			/* LIDsPerPort */
	ibsw_put16(d + 14, IBSW_PKEYS);		/* PartitionEnforcementCap */
	/* Inbound and OutboundEnforcementCap; no raw filters; base port 0 */
	d[16] = 0xc0;
	ibsw_put16(d + 18, sw->mft_top);	/* MulticastFDBTop */
}

static int switch_info_set(struct ibsw *sw, const uint8_t *d)
{
	uint16_t top = ibsw_get16(d + 6);

	if (top >= IBSW_LFT_CAP)
		return ST_INVALID;
	sw->lft_top = top;
	sw->default_port = d[8];
	sw->default_mcast_primary = d[9];
	sw->default_mcast_not_primary = d[10];
	sw->life_time_value = d[11] >> 3;
	/* PortStateChange is cleared by writing a one to it. */
	if (d[11] & 4)
		sw->port_state_change = false;
	sw->mft_top = ibsw_get16(d + 18);
	return 0;
}

static uint8_t phys_state(const struct ibsw_port *p, int port)
{
	if (port == 0)
		return PHYS_LINKUP;
	if (p->phys_disabled)
		return PHYS_DISABLED;
	return p->link_up ? PHYS_LINKUP : PHYS_POLLING;
}

/*
 * PortInfo of @port. The switch-wide fields (M_Key, GidPrefix, LID,
 * MasterSMLID, LMC, SubnetTimeOut) are port 0's on every port: IBA
 * leaves them undefined on external ports, and tools that read them
 * there expect the switch's.
 */
static void port_info(const struct ibsw *sw, int port, int in_port,
		      bool show_mkey, uint8_t *d)
{
	const struct ibsw_port *p0 = &sw->port[0], *p = &sw->port[port];

	ibsw_put64(d + 0, show_mkey ? p0->mkey : 0);
	ibsw_put64(d + 8, p0->gid_prefix);
	ibsw_put16(d + 16, p0->lid);
	ibsw_put16(d + 18, p0->master_sm_lid);
	ibsw_put32(d + 20, CAP_IS_TRAP | CAP_IS_SL_MAPPING |
		   CAP_IS_SYS_IMAGE_GUID);
	ibsw_put16(d + 24, 0);				/* DiagCode */
	ibsw_put16(d + 26, p0->mkey_lease_period);
	d[28] = in_port;				/* LocalPortNum */
	d[29] = p->link_width_enabled;
	d[30] = WIDTH_SUPPORTED;
	d[31] = WIDTH_ACTIVE;
	d[32] = SPEED_SUPPORTED << 4 | p->port_state;
	d[33] = phys_state(p, port) << 4 | p->link_down_default;
	d[34] = p0->mkey_protect << 6 | p0->lmc;
	d[35] = SPEED_ACTIVE << 4 | p->link_speed_enabled;
	d[36] = p->neighbor_mtu << 4 | p0->master_sm_sl;
	d[37] = VL_CAP << 4;				/* InitType 0 */
	d[38] = p->vl_high_limit;
	d[39] = 0;					/* VLArbitrationHighCap */
	d[40] = 0;					/* VLArbitrationLowCap */
	d[41] = MTU_CAP;				/* InitTypeReply 0 */
	d[42] = p->hoq_life & 0x1f;			/* VLStallCount 0 */
	d[43] = p->op_vls << 4 | p->pkey_enf_in << 3 | p->pkey_enf_out << 2;
	ibsw_put16(d + 44, p0->mkey_violations);
	ibsw_put16(d + 46, p->pkey_violations);
	ibsw_put16(d + 48, p->qkey_violations);
	d[50] = port == 0 ? 1 : 0;			/* GUIDCap */
	d[51] = p0->subnet_timeout & 0x1f;
	d[52] = RESP_TIME_VALUE;
	d[53] = p->phy_err_threshold_overrun;
}

/*
 * IBA 14.2.5.6's transitions an SM may ask for: Down from any state
 * (a retrain), Armed from Init or Armed, Active from Armed or Active;
 * and the state the port is in, which changes nothing (an SM writing
 * back what it read).
 */
static bool state_ok(uint8_t from, uint8_t to)
{
	if (to == from)
		return true;
	switch (to) {
	case PS_NOP:
	case PS_DOWN:
		return true;
	case PS_ARMED:
		return from == PS_INIT || from == PS_ARMED;
	case PS_ACTIVE:
		return from == PS_ARMED || from == PS_ACTIVE;
	default:
		return false;
	}
}

static int port_info_set(struct ibsw *sw, int port, const uint8_t *d)
{
	struct ibsw_port *p0 = &sw->port[0], *p = &sw->port[port];
	uint8_t state = d[32] & 0xf, phys = d[33] >> 4;
	uint8_t width = d[29], speed = d[35] & 0xf, mtu = d[36] >> 4;
	uint8_t op_vls = d[43] >> 4;

	/* Port 0 has no link; elsewhere the state read back is a NOP too. */
	if (port == 0 || phys == phys_state(p, port))
		phys = 0;
	/* Validate everything first: an invalid Set changes nothing. */
	if (!state_ok(p->port_state, state) ||
	    (phys && phys != PHYS_POLLING && phys != PHYS_DISABLED) ||
	    (width != 0 && width != 0xff && (width & ~WIDTH_SUPPORTED)) ||
	    (speed != 0 && speed != 0xf && (speed & ~SPEED_SUPPORTED)) ||
	    (port && (mtu < 1 || mtu > MTU_CAP)) || op_vls > VL_CAP)
		return ST_INVALID;
	if (port == 0 && (d[34] & 7))
		return ST_INVALID;	/* base port 0: LMC 0 (IBA 14.2.5.6) */

	if (port == 0) {
		p0->mkey = ibsw_get64(d + 0);
		p0->gid_prefix = ibsw_get64(d + 8);
		p0->lid = ibsw_get16(d + 16);
		p0->master_sm_lid = ibsw_get16(d + 18);
		p0->mkey_lease_period = ibsw_get16(d + 26);
		p0->mkey_protect = d[34] >> 6;
		p0->master_sm_sl = d[36] & 0xf;
		p0->subnet_timeout = d[51] & 0x1f;
		p0->mkey_violations = ibsw_get16(d + 44);
	}
	if (width)
		p->link_width_enabled = width == 0xff ? WIDTH_SUPPORTED : width;
	if (speed)
		p->link_speed_enabled = speed == 0xf ? SPEED_SUPPORTED : speed;
	if (port)
		p->neighbor_mtu = mtu;
	if (op_vls)
		p->op_vls = op_vls;
	p->link_down_default = d[33] & 0xf ? d[33] & 0xf : p->link_down_default;
	p->vl_high_limit = d[38];
	p->hoq_life = d[42] & 0x1f;
	p->pkey_enf_in = d[43] >> 3 & 1;
	p->pkey_enf_out = d[43] >> 2 & 1;
	p->pkey_violations = ibsw_get16(d + 46);
	p->qkey_violations = ibsw_get16(d + 48);
	p->phy_err_threshold_overrun = d[53];
	if (port && phys)
		ibsw_port_disable(sw, port, phys == PHYS_DISABLED);
	if (state == PS_DOWN)
		ibsw_port_retrain(sw, port);
	else if (state && (port == 0 || p->link_up))
		p->port_state = state;
	return 0;
}

/*
 * The SMA: one SMP, LID-routed or at the end of its directed route, that
 * arrived on @in_port. The reply is built in @mad in place.
 */
static int sma_process(struct ibsw *sw, int in_port, uint8_t *mad)
{
	struct ibsw_port *p0 = &sw->port[0];
	uint8_t method = mad[3], *d = mad + SMP_DATA;
	uint16_t attr = ibsw_get16(mad + MAD_ATTR_ID);
	uint32_t mod = ibsw_get32(mad + MAD_ATTR_MOD);
	bool set = method == M_SET, mkey_ok;
	int st = 0, port;

	if (method == M_TRAP_REPRESS) {
		if (attr == A_NOTICE && sw->trap.tid &&
		    ibsw_get64(mad + MAD_TID) == sw->trap.tid)
			sw->trap.tid = 0;
		return NO_REPLY;
	}
	/* Responses and traps: the switch has no SM to give them to. */
	if (method & 0x80 || method == M_TRAP)
		return NO_REPLY;

	/* The M_Key check (IBA 14.2.4); a failed one is not answered. */
	mkey_ok = !p0->mkey || ibsw_get64(mad + SMP_MKEY) == p0->mkey;
	if (!mkey_ok && (set || p0->mkey_protect >= 2)) {
		if (p0->mkey_violations != 0xffff)
			p0->mkey_violations++;
		return NO_REPLY;
	}

	if (mad[0] != 1 || mad[2] != 1) {
		st = ST_BAD_VERSION;
		goto out;
	}
	if (method != M_GET && method != M_SET) {
		st = ST_METHOD;
		goto out;
	}
	switch (attr) {
	case A_NODE_DESC:
		if (set)
			st = ST_METHOD_ATTR;
		else
			memcpy(d, sw->node_desc, sizeof(sw->node_desc));
		break;
	case A_NODE_INFO:
		if (set)
			st = ST_METHOD_ATTR;
		else
			node_info(sw, in_port, d);
		break;
	case A_SWITCH_INFO:
		if (set)
			st = switch_info_set(sw, d);
		if (!st)
			switch_info(sw, d);
		break;
	case A_GUID_INFO:
		if (set)
			st = ST_METHOD_ATTR;	/* GUIDCap 1: read only */
		else if (mod != 0)
			st = ST_INVALID;
		else
			ibsw_put64(d, sw->node_guid);
		break;
	case A_PORT_INFO:
		if (mod > (uint32_t)sw->nports) {
			st = ST_INVALID;
			break;
		}
		if (set)
			st = port_info_set(sw, mod, d);
		if (!st)
			port_info(sw, mod, in_port, mkey_ok, d);
		break;
	case A_PKEY_TABLE:
		/* Port in the upper half, block in the lower (IBA 14.2.5.7). */
		port = mod >> 16;
		if (port > sw->nports || (mod & 0xffff) != 0) {
			st = ST_INVALID;
			break;
		}
		for (int i = 0; i < IBSW_PKEYS; i++) {
			if (set)
				sw->port[port].pkeys[i] = ibsw_get16(d + 2 * i);
			ibsw_put16(d + 2 * i, sw->port[port].pkeys[i]);
		}
		break;
	case A_SL2VL: {
		/* Input port in bits 15..8, output port in 7..0 (14.2.5.8). */
		unsigned int in = mod >> 8 & 0xff, out = mod & 0xff;

		if (in > (unsigned int)sw->nports ||
		    out > (unsigned int)sw->nports || mod >> 16) {
			st = ST_INVALID;
			break;
		}
		if (set) {
			/* One data VL: every SL goes to VL0 or VL15 (drop). */
			for (int i = 0; i < 8; i++)
				if (((d[i] >> 4) != 0 && (d[i] >> 4) != VL15) ||
				    ((d[i] & 0xf) != 0 && (d[i] & 0xf) != VL15))
					st = ST_INVALID;
			if (!st)
				memcpy(sw->sl2vl[in][out], d, 8);
		}
		if (!st)
			memcpy(d, sw->sl2vl[in][out], 8);
		break;
	}
	case A_LFT:
		/* 64 ports a block, one byte each (IBA 14.2.5.10). */
		if (mod >= IBSW_LFT_CAP / 64) {
			st = ST_INVALID;
			break;
		}
		if (set)
			memcpy(sw->lft + mod * 64, d, 64);
		memcpy(d, sw->lft + mod * 64, 64);
		break;
	case A_MFT: {
		/* Position in bits 31..28, block in 8..0 (IBA 14.2.5.12). */
		unsigned int pos = mod >> 28, block = mod & 0x1ff;

		if (pos >= IBSW_MFT_POSITIONS || block >= IBSW_MFT_CAP / 32 ||
		    (mod & 0x0ffffe00)) {
			st = ST_INVALID;
			break;
		}
		for (int i = 0; i < 32; i++) {
			uint16_t *e = &sw->mft[block * 32 + i][pos];

			if (set)
				*e = ibsw_get16(d + 2 * i);
			ibsw_put16(d + 2 * i, *e);
		}
		break;
	}
	default:
		/*
		 * Notice, SMInfo (no SM here), VLArbitrationTable (one data
		 * VL), RandomForwardingTable (RandomFDBCap 0), vendor
		 * attributes and everything else.
		 */
		st = ST_METHOD_ATTR;
		break;
	}
out:
	mad[3] = M_GET_RESP;
	reply_status(mad, st);
	return REPLY;
}

/* --- PMA ------------------------------------------------------------------- */

static uint64_t sat(uint64_t v, unsigned int bits)
{
	uint64_t max = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;

	return v > max ? max : v;
}

static void counters_sum(const struct ibsw *sw, int sel, struct ibsw_counters *c)
{
	if (sel != 0xff) {
		*c = sw->port[sel].cnt;
		return;
	}
	memset(c, 0, sizeof(*c));
	for (int p = 1; p <= sw->nports; p++) {
		const uint64_t *s = (const uint64_t *)&sw->port[p].cnt;
		uint64_t *t = (uint64_t *)c;

		for (size_t i = 0; i < sizeof(*c) / sizeof(*t); i++)
			t[i] += s[i];
	}
}

static void counters_clear(struct ibsw *sw, int sel, uint16_t mask, bool ext)
{
	for (int p = sel == 0xff ? 1 : sel; p <= (sel == 0xff ? sw->nports : sel); p++) {
		struct ibsw_counters *c = &sw->port[p].cnt;

		if (ext) {
			/* PortCountersExtended's CounterSelect (16.1.4.11) */
			if (mask & 1)
				c->xmit_data = 0;
			if (mask & 2)
				c->rcv_data = 0;
			if (mask & 4)
				c->xmit_pkts = 0;
			if (mask & 8)
				c->rcv_pkts = 0;
			if (mask & 0x10)
				c->ucast_xmit_pkts = 0;
			if (mask & 0x20)
				c->ucast_rcv_pkts = 0;
			if (mask & 0x40)
				c->mcast_xmit_pkts = 0;
			if (mask & 0x80)
				c->mcast_rcv_pkts = 0;
			continue;
		}
		/* PortCounters' CounterSelect (16.1.3.5) */
		if (mask & (1 << 2))
			c->link_downed = 0;
		if (mask & (1 << 3))
			c->rcv_errors = 0;
		if (mask & (1 << 5))
			c->rcv_switch_relay_errors = 0;
		if (mask & (1 << 6))
			c->xmit_discards = 0;
		if (mask & (1 << 7))
			c->xmit_constraint_errors = 0;
		if (mask & (1 << 8))
			c->rcv_constraint_errors = 0;
		if (mask & (1 << 11))
			c->vl15_dropped = 0;
		if (mask & (1 << 12))
			c->xmit_data = 0;
		if (mask & (1 << 13))
			c->rcv_data = 0;
		if (mask & (1 << 14))
			c->xmit_pkts = 0;
		if (mask & (1 << 15))
			c->rcv_pkts = 0;
	}
}

static int pma_process(struct ibsw *sw, uint8_t *mad)
{
	uint8_t method = mad[3], *d = mad + PMA_DATA;
	uint16_t attr = ibsw_get16(mad + MAD_ATTR_ID);
	struct ibsw_counters c;
	int st = 0, sel;

	if (method & 0x80)
		return NO_REPLY;
	if (mad[0] != 1 || mad[2] != 1) {
		st = ST_BAD_VERSION;
		goto out;
	}
	if (method != M_GET && method != M_SET) {
		st = ST_METHOD;
		goto out;
	}
	switch (attr) {
	case A_PMA_CPI:
		if (method != M_GET) {
			st = ST_METHOD_ATTR;
			break;
		}
		memset(d, 0, MAD_LEN - PMA_DATA);
		d[0] = 1;				/* BaseVersion */
		d[1] = 1;				/* ClassVersion */
		/* AllPortSelect and PortCountersExtended supported */
		ibsw_put16(d + 2, 0x0300);
		ibsw_put32(d + 4, RESP_TIME_VALUE);
		break;
	case A_PORT_COUNTERS:
	case A_PORT_COUNTERS_EXT:
		sel = d[1];
		if (sel != 0xff && sel > sw->nports) {
			st = ST_INVALID;
			break;
		}
		if (method == M_SET)
			counters_clear(sw, sel, ibsw_get16(d + 2),
				       attr == A_PORT_COUNTERS_EXT);
		counters_sum(sw, sel, &c);
		memset(d + 4, 0, MAD_LEN - PMA_DATA - 4);
		if (attr == A_PORT_COUNTERS_EXT) {
			ibsw_put64(d + 8, c.xmit_data);
			ibsw_put64(d + 16, c.rcv_data);
			ibsw_put64(d + 24, c.xmit_pkts);
			ibsw_put64(d + 32, c.rcv_pkts);
			ibsw_put64(d + 40, c.ucast_xmit_pkts);
			ibsw_put64(d + 48, c.ucast_rcv_pkts);
			ibsw_put64(d + 56, c.mcast_xmit_pkts);
			ibsw_put64(d + 64, c.mcast_rcv_pkts);
			break;
		}
		d[7] = sat(c.link_downed, 8);			/* LinkDownedCounter */
		ibsw_put16(d + 8, sat(c.rcv_errors, 16));	/* PortRcvErrors */
		ibsw_put16(d + 12, sat(c.rcv_switch_relay_errors, 16));
		ibsw_put16(d + 14, sat(c.xmit_discards, 16));
		d[16] = sat(c.xmit_constraint_errors, 8);
		d[17] = sat(c.rcv_constraint_errors, 8);
		ibsw_put16(d + 22, sat(c.vl15_dropped, 16));
		ibsw_put32(d + 24, sat(c.xmit_data, 32));
		ibsw_put32(d + 28, sat(c.rcv_data, 32));
		ibsw_put32(d + 32, sat(c.xmit_pkts, 32));
		ibsw_put32(d + 36, sat(c.rcv_pkts, 32));
		break;
	default:
		st = ST_METHOD_ATTR;
		break;
	}
out:
	mad[3] = M_GET_RESP;
	reply_status(mad, st);
	return REPLY;
}

/* --- routes in and out of port 0 ----------------------------------------- */

/*
 * Where a LID-routed reply to @dlid goes: by the LFT, or back out of the
 * port the request came in on while the LFT has no entry for it (an SM
 * that has not programmed the switch yet).
 */
static int reply_port(const struct ibsw *sw, uint16_t dlid, int in_port)
{
	uint8_t out = dlid < IBSW_LFT_CAP ? sw->lft[dlid] : IBSW_PORT_NONE;

	return out >= 1 && out <= sw->nports ? out : in_port;
}

static uint16_t own_slid(const struct ibsw *sw)
{
	return sw->port[0].lid ? sw->port[0].lid : LID_PERMISSIVE;
}

/**
 * ibsw_local_rcv() - a packet relayed to port 0: a LID-routed SMP for the
 * SMA or a GMP for the PMA. Anything else has no consumer at a switch and
 * is dropped as a relay error.
 * @sw: the switch.
 * @in_port: the port it came in on.
 * @dgram: the datagram.
 * @len: its length.
 * @pkt: its parsed headers.
 */
void ibsw_local_rcv(struct ibsw *sw, int in_port, uint8_t *dgram, size_t len,
		    const struct ibsw_pkt *pkt)
{
	struct ibsw_port *in = &sw->port[in_port];
	uint8_t mad[MAD_LEN], out[SIB_HDR_LEN + 4 * 0x7ff];
	size_t n;

	if (!pkt->mad) {
		in->cnt.rcv_switch_relay_errors++;
		return;
	}
	memcpy(mad, pkt->mad, MAD_LEN);
	if (pkt->vl == VL15 && pkt->dest_qp == 0 && mad[1] == CLASS_SMP_LID) {
		if (sma_process(sw, in_port, mad) != REPLY)
			return;
		n = ibsw_build_mad(out, VL15, 0, pkt->slid, own_slid(sw),
				   0xffff, pkt->src_qp, 0, 0, mad);
		ibsw_send(sw, reply_port(sw, pkt->slid, in_port), out, n,
			  false);
		return;
	}
	if (pkt->vl != VL15 && pkt->dest_qp == 1 && mad[1] == CLASS_PMA &&
	    pkt->qkey == QP1_QKEY) {
		if (pma_process(sw, mad) != REPLY)
			return;
		n = ibsw_build_mad(out, 0, pkt->sl, pkt->slid, own_slid(sw),
				   pkt->pkey, pkt->src_qp, QP1_QKEY, 1, mad);
		ibsw_send(sw, reply_port(sw, pkt->slid, in_port), out, n,
			  false);
		return;
	}
	if (pkt->vl == VL15)
		in->cnt.vl15_dropped++;
	else
		in->cnt.rcv_switch_relay_errors++;
}

/**
 * ibsw_dr_rcv() - a directed-route SMP that came in on @in_port (IBA
 * 14.2.2.2 and 14.2.2.4, the rules for a switch).
 * @sw: the switch.
 * @in_port: 1..N.
 * @dgram: the datagram; its hop pointer and return path are updated and
 *	   it is sealed again before it goes on.
 * @len: its length.
 * @pkt: its parsed headers.
 *
 * Outgoing (D 0): at an intermediate hop the ingress port goes into the
 * return path and the SMP out of the port the initial path names next; at
 * the end of the path the SMA answers it, the reply going back out of the
 * ingress port with D set. Returning (D 1): out of the port the return
 * path names. Routes with a LID-routed part (DrSLID or DrDLID not the
 * permissive LID) are not built: such SMPs are dropped and counted as
 * VL15Dropped, as are SMPs whose hop pointer or path is invalid.
 */
void ibsw_dr_rcv(struct ibsw *sw, int in_port, uint8_t *dgram, size_t len,
		 const struct ibsw_pkt *pkt)
{
	uint8_t *mad = (uint8_t *)pkt->mad, out[SIB_HDR_LEN + 4 * 0x7ff];
	uint8_t reply[MAD_LEN];
	uint8_t hp = mad[MAD_HOP_PTR], hc = mad[MAD_HOP_CNT], next;
	bool returning = ibsw_get16(mad + MAD_STATUS) & DR_D_BIT;
	bool dlid_perm = ibsw_get16(mad + SMP_DR_DLID) == LID_PERMISSIVE;
	bool slid_perm = ibsw_get16(mad + SMP_DR_SLID) == LID_PERMISSIVE;
	struct ibsw_port *in = &sw->port[in_port];
	size_t n;

	if (hc >= SMP_MAX_HOPS || !slid_perm || !dlid_perm)
		goto drop;
	if (!returning) {
		if (hp == 0 || hp > hc)
			goto drop;	/* a local SMP never crosses a cable */
		mad[SMP_RETURN_PATH + hp] = in_port;
		if (hp < hc) {
			/* An intermediate hop: on along the initial path. */
			next = mad[SMP_INITIAL_PATH + hp + 1];
			if (next < 1 || next > sw->nports)
				goto drop;
			mad[MAD_HOP_PTR] = hp + 1;
			ibsw_reseal(dgram, len);
			ibsw_send(sw, next, dgram, len, false);
			return;
		}
		/* The end of the path: the SMA's, answered back out of it. */
		memcpy(reply, mad, MAD_LEN);
		reply[MAD_HOP_PTR] = hp + 1;
		if (sma_process(sw, in_port, reply) != REPLY)
			return;
		ibsw_put16(reply + MAD_STATUS,
			   ibsw_get16(reply + MAD_STATUS) | DR_D_BIT);
		reply[MAD_HOP_PTR] = hc;
		n = ibsw_build_mad(out, VL15, 0, LID_PERMISSIVE, LID_PERMISSIVE,
				   0xffff, pkt->src_qp, 0, 0, reply);
		ibsw_send(sw, in_port, out, n, false);
		return;
	}
	/* Returning: the hop pointer counts down to the requester. */
	if (hp < 2 || hp > hc)
		goto drop;
	next = mad[SMP_RETURN_PATH + hp - 1];
	if (next < 1 || next > sw->nports)
		goto drop;
	mad[MAD_HOP_PTR] = hp - 1;
	ibsw_reseal(dgram, len);
	ibsw_send(sw, next, dgram, len, false);
	return;
drop:
	in->cnt.vl15_dropped++;
}

/* --- trap 128 ------------------------------------------------------------- */

/**
 * ibsw_port_changed() - a port's link went up or down: set SwitchInfo's
 * PortStateChange and have the SMA send trap 128 (IBA 14.2.5.1) to the
 * master SM, replacing any trap still pending.
 * @sw: the switch.
 */
void ibsw_port_changed(struct ibsw *sw)
{
	sw->port_state_change = true;
	sw->trap.tid = sw->tid_next++;
	sw->trap.next_ms = sw->now_ms;
	sw->trap.sends = 0;
}

/* The resend interval: 4.096 us * 2^SubnetTimeOut, within 0.1..4 s. */
static uint64_t trap_interval_ms(const struct ibsw *sw)
{
	uint64_t us = 4096ull << sw->port[0].subnet_timeout;
	uint64_t ms = us / 1000000;

	return ms < 100 ? 100 : ms > 4000 ? 4000 : ms;
}

/**
 * ibsw_trap_tick() - send the pending trap 128 when it is due: a Trap()
 * SMP of a generic Notice, LID-routed on VL15 to PortInfo's MasterSMLID,
 * repeated with the same TransactionID until a TrapRepress names it, and
 * given up after eight sends. Only a switch with a LID and a MasterSMLID
 * traps; before that the SM's sweep reads every port anyway. Port 0's
 * state is not required: an SM may leave a base port 0 in INIT.
 * @sw: the switch.
 */
void ibsw_trap_tick(struct ibsw *sw)
{
	const struct ibsw_port *p0 = &sw->port[0];
	uint8_t mad[MAD_LEN] = { 1, CLASS_SMP_LID, 1, M_TRAP };
	uint8_t out[SIB_HDR_LEN + 4 * 0x7ff], *n = mad + SMP_DATA;
	uint8_t port;
	size_t len;

	if (!sw->trap.tid || sw->now_ms < sw->trap.next_ms)
		return;
	if (!p0->lid || !p0->master_sm_lid ||
	    sw->trap.sends >= TRAP_MAX_SENDS) {
		sw->trap.tid = 0;
		return;
	}
	port = p0->master_sm_lid < IBSW_LFT_CAP ? sw->lft[p0->master_sm_lid] :
						    IBSW_PORT_NONE;
	sw->trap.sends++;
	sw->trap.next_ms = sw->now_ms + trap_interval_ms(sw);
	if (port < 1 || port > sw->nports)
		return;
	ibsw_put64(mad + MAD_TID, sw->trap.tid);
	ibsw_put16(mad + MAD_ATTR_ID, A_NOTICE);
	n[0] = 0x80 | 1;			/* IsGeneric, Type urgent */
	n[3] = 2;				/* ProducerType: switch */
	ibsw_put16(n + 4, TRAP_LINK_STATE);	/* TrapNumber */
	ibsw_put16(n + 6, p0->lid);		/* IssuerLID */
	ibsw_put16(n + 10, p0->lid);		/* DataDetails: LIDADDR */
	len = ibsw_build_mad(out, VL15, p0->master_sm_sl, p0->master_sm_lid,
			     p0->lid, 0xffff, 0, 0, 0, mad);
	ibsw_send(sw, port, out, len, false);
}
