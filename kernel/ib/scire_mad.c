// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the subnet management agent (SMA) and performance management
 * agent (PMA) of a scire_ib port, as the device's process_mad op.
 *
 * The MAD layer hands the driver every management datagram for the port
 * first: SMPs of both routing kinds (IBA 14.2), after the core's SMI code
 * has dealt with directed-route hop pointers, and performance management
 * GMPs (IBA 16.1). Those the agents here answer get a reply; everything
 * else (SMInfo, responses to the port's own SM, other classes) goes on to
 * the agents registered in user space or in the kernel.
 *
 * The attributes live in struct scire_ib_port under scire_dev.port_lock;
 * each SMP is handled whole under that lock, and the events it causes are
 * raised after it is dropped (scire_ib_dispatch()).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "scire.h"

/* PortInfo capabilities of the virtual link (docs/scire_ib.md). */
#define SCIRE_IB_VL_CAP			1	/* VL0 */
#define SCIRE_IB_VL15			15
#define SCIRE_SMP_CLASS_VERSION		1	/* IBA 13.4.2 */

#define SCIRE_MAD_STATUS(s)		cpu_to_be16(IB_MGMT_MAD_STATUS_##s)

/* A reply: the request turned into its GetResp (IBA 13.4.5, 14.2.1.1). */
static int scire_mad_reply(struct ib_mad_hdr *hdr)
{
	hdr->method = IB_MGMT_METHOD_GET_RESP;
	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		hdr->status |= IB_SMP_DIRECTION;
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

static int scire_mad_error(struct ib_mad_hdr *hdr, __be16 status)
{
	hdr->status |= status;
	return scire_mad_reply(hdr);
}

static void scire_inc16(u16 *counter)
{
	if (*counter != U16_MAX)
		(*counter)++;
}

/*
 * The M_Key check of IBA 14.2.4: true if the SMP may be processed. A
 * mismatched key fails every Set, and a Get once the protect bits are 2 or
 * 3; a failure counts an M_Key violation and starts the lease timer, whose
 * expiry clears the protect bits. A matching key stops the timer. The
 * timer is kept as an expiry time checked on every SMP, which gives the
 * same answers as a running timer would.
 */
static bool scire_sma_mkey_ok(struct scire_ib_port *ib,
			      const struct ib_smp *smp, int mad_flags)
{
	if (ib->mkey_lease_end && time_after_eq(jiffies, ib->mkey_lease_end)) {
		ib->mkey_protect = 0;
		ib->mkey_lease_end = 0;
	}
	if (mad_flags & IB_MAD_IGNORE_MKEY)
		return true;
	if (!ib->mkey || smp->mkey == ib->mkey) {
		if (ib->mkey)
			ib->mkey_lease_end = 0;
		return true;
	}
	if (smp->method == IB_MGMT_METHOD_GET && ib->mkey_protect < 2)
		return true;

	scire_inc16(&ib->mkey_violations);
	if (ib->mkey_lease_period && !ib->mkey_lease_end)
		ib->mkey_lease_end = (jiffies + ib->mkey_lease_period * HZ) | 1;
	return false;
}

/*
 * Trap 256, Bad M_Key (IBA 14.2.5.1): the SMP that failed the check, and
 * for a directed route its DrSLID and return path (the 30 bytes the
 * Notice has room for, DRPathTruncated when it has more). Caller holds
 * port_lock.
 */
static void scire_sma_mkey_trap(struct scire_dev *sdev,
				const struct ib_smp *smp)
{
	struct ib_mad_notice_attr ntc = {};
	typeof(ntc.details.ntc_256) *d = &ntc.details.ntc_256;

	ntc.trap_num = IB_NOTICE_TRAP_BAD_MKEY;
	d->lid = cpu_to_be16(sdev->ib.lid);
	d->method = smp->method;
	d->attr_id = smp->attr_id;
	d->attr_mod = smp->attr_mod;
	d->mkey = smp->mkey;
	if (smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		u8 hops = smp->hop_cnt & 0x3f;
		u8 n = min_t(u8, hops + 1, sizeof(d->dr_rtn_path));

		d->dr_slid = smp->dr_slid;
		d->dr_trunc_hop = IB_NOTICE_TRAP_DR_NOTICE | hops;
		if (n < hops + 1)
			d->dr_trunc_hop |= IB_NOTICE_TRAP_DR_TRUNC;
		memcpy(d->dr_rtn_path, smp->return_path, n);
	}
	scire_ib_trap_security(sdev, &ntc);
}

/* The port number an attribute modifier names on a CA: 0 (this) or 1. */
static bool scire_sma_port_ok(const struct ib_smp *smp)
{
	return be32_to_cpu(smp->attr_mod) <= 1;
}

static int scire_sma_node_desc(struct scire_dev *sdev, struct ib_smp *smp)
{
	if (smp->method != IB_MGMT_METHOD_GET)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(UNSUPPORTED_METHOD_ATTRIB));
	if (smp->attr_mod)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	memcpy(smp->data, sdev->ibdev.node_desc, IB_DEVICE_NODE_DESC_MAX);
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

static int scire_sma_node_info(struct scire_dev *sdev, struct ib_smp *smp)
{
	struct ib_node_info *ni = (struct ib_node_info *)smp->data;

	if (smp->method != IB_MGMT_METHOD_GET)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(UNSUPPORTED_METHOD_ATTRIB));
	if (smp->attr_mod)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = SCIRE_SMP_CLASS_VERSION;
	ni->node_type = RDMA_NODE_IB_CA;
	ni->num_ports = 1;
	ni->sys_guid = sdev->ibdev.node_guid;
	ni->node_guid = sdev->ibdev.node_guid;
	ni->port_guid = scire_ib_port_guid(sdev);
	ni->partition_cap = cpu_to_be16(SCIRE_IB_PKEY_TBL_LEN);
	ni->device_id = 0;
	ni->revision = cpu_to_be32(SCIRE_UVERBS_ABI_VERSION);
	ni->local_port_num = 1;
	ni->vendor_id[0] = (SCIRE_VENDOR_ID >> 16) & 0xff;
	ni->vendor_id[1] = (SCIRE_VENDOR_ID >> 8) & 0xff;
	ni->vendor_id[2] = SCIRE_VENDOR_ID & 0xff;
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

/* GUIDInfo (IBA 14.2.5.5): GUIDCap is 1, so block 0 holds the port GUID. */
static int scire_sma_guid_info(struct scire_dev *sdev, struct ib_smp *smp)
{
	__be64 *guids = (__be64 *)smp->data;

	if (smp->attr_mod)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	/* A Set can change nothing: entry 0 is the read-only port GUID. */
	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	guids[0] = scire_ib_port_guid(sdev);
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

/* PortInfo as the SMA reports it (IBA 14.2.5.6, table 146). */
static void scire_sma_port_info_get(struct scire_dev *sdev, struct ib_smp *smp)
{
	struct ib_port_info *pi = (struct ib_port_info *)smp->data;
	struct scire_ib_port *ib = &sdev->ib;
	bool hide_mkey;

	/* Protect bits 1: a Get with the wrong M_Key reads the key as 0. */
	hide_mkey = smp->method == IB_MGMT_METHOD_GET && ib->mkey_protect == 1 &&
		    smp->mkey != ib->mkey;

	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	pi->mkey = hide_mkey ? 0 : ib->mkey;
	pi->gid_prefix = ib->gid_prefix;
	pi->lid = cpu_to_be16(ib->lid);
	pi->sm_lid = cpu_to_be16(ib->sm_lid);
	pi->cap_mask = cpu_to_be32(ib->cap_mask);
	pi->mkey_lease_period = cpu_to_be16(ib->mkey_lease_period);
	pi->local_port_num = 1;
	pi->link_width_enabled = ib->link_width_enabled;
	pi->link_width_supported = SCIRE_IB_WIDTH_SUPPORTED;
	pi->link_width_active = IB_WIDTH_4X;
	pi->linkspeed_portstate = SCIRE_IB_SPEED_SUPPORTED << 4 |
				  sdev->port_state;
	pi->portphysstate_linkdown = ib->phys_state << 4 |
				     ib->link_down_default;
	pi->mkeyprot_resv_lmc = ib->mkey_protect << 6 | ib->lmc;
	pi->linkspeedactive_enabled = IB_SPEED_QDR << 4 |
				      ib->link_speed_enabled;
	pi->neighbormtu_mastersmsl = ib->neighbor_mtu << 4 | ib->sm_sl;
	pi->vlcap_inittype = SCIRE_IB_VL_CAP << 4;
	pi->vl_high_limit = ib->vl_high_limit;
	pi->inittypereply_mtucap = ib->init_type_reply << 4 |
				   scire_ib_mtu_cap(sdev);
	pi->vlstallcnt_hoqlife = ib->hoq_life;
	pi->operationalvl_pei_peo_fpi_fpo = ib->op_vls << 4;
	pi->mkey_violations = cpu_to_be16(ib->mkey_violations);
	pi->pkey_violations = cpu_to_be16(ib->pkey_violations);
	pi->qkey_violations = cpu_to_be16(ib->qkey_violations);
	pi->guid_cap = 1;
	pi->clientrereg_resv_subnetto = ib->subnet_timeout;
	pi->resv_resptimevalue = ib->resp_time;
	pi->localphyerrors_overrunerrors = ib->phy_err_threshold << 4 |
					   ib->overrun_threshold;
}

/* A unicast LID (IBA 4.1.3): 1..0xBFFF. */
static bool scire_lid_unicast(u16 lid)
{
	return lid && lid < be16_to_cpu(IB_MULTICAST_LID_BASE);
}

/*
 * The PortState transition a Set asks for (IBA 14.2.5.6, table 148), from
 * @cur: NOP keeps it; DOWN retrains the link, which on this virtual link
 * comes straight back in INIT; ARMED only from INIT or ARMED; ACTIVE only
 * from ARMED or ACTIVE. Returns the new state, or -1 for an invalid one.
 */
static int scire_sma_next_state(enum ib_port_state cur, u8 req)
{
	switch (req) {
	case IB_PORT_NOP:
		return cur;
	case IB_PORT_DOWN:
		return cur == IB_PORT_DOWN ? IB_PORT_DOWN : IB_PORT_INIT;
	case IB_PORT_ARMED:
		return cur == IB_PORT_INIT || cur == IB_PORT_ARMED ?
		       IB_PORT_ARMED : -1;
	case IB_PORT_ACTIVE:
		return cur == IB_PORT_ARMED || cur == IB_PORT_ACTIVE ?
		       IB_PORT_ACTIVE : -1;
	default:
		return -1;
	}
}

/*
 * Set(PortInfo): every field is checked before any is applied, so an
 * invalid request changes nothing (IBA 14.2.5.6) and is answered with
 * INVALID_ATTRIB_VALUE and the attribute as it stands.
 */
static bool scire_sma_port_info_set(struct scire_dev *sdev,
				    const struct ib_port_info *pi,
				    u32 *events)
{
	struct scire_ib_port *ib = &sdev->ib;
	u16 lid = be16_to_cpu(pi->lid), sm_lid = be16_to_cpu(pi->sm_lid);
	u8 lmc = pi->mkeyprot_resv_lmc & 7;
	u8 phys = pi->portphysstate_linkdown >> 4;
	u8 link_down = pi->portphysstate_linkdown & 0xf;
	u8 width = pi->link_width_enabled;
	u8 speed = pi->linkspeedactive_enabled & 0xf;
	u8 mtu = pi->neighbormtu_mastersmsl >> 4;
	u8 sm_sl = pi->neighbormtu_mastersmsl & 0xf;
	u8 op_vls = pi->operationalvl_pei_peo_fpi_fpo >> 4;
	enum ib_port_state state = sdev->port_state;
	u8 phys_state = ib->phys_state;
	int next;

	if (!scire_lid_unicast(lid) || !scire_lid_unicast(sm_lid))
		return false;
	if (width == 0xff)
		width = SCIRE_IB_WIDTH_SUPPORTED;
	else if (width & ~SCIRE_IB_WIDTH_SUPPORTED)
		return false;
	if (speed == 0xf)
		speed = SCIRE_IB_SPEED_SUPPORTED;
	else if (speed & ~SCIRE_IB_SPEED_SUPPORTED)
		return false;
	if (mtu < IB_MTU_256 || mtu > scire_ib_mtu_cap(sdev))
		return false;
	if (op_vls > SCIRE_IB_VL_CAP)
		return false;
	if (link_down > 2)
		return false;

	/* PortPhysicalState: 0 (no change), Polling or Disabled. */
	switch (phys) {
	case 0:
		break;
	case IB_PORT_PHYS_STATE_POLLING:
	case IB_PORT_PHYS_STATE_DISABLED:
		break;
	default:
		return false;
	}
	/*
	 * Disabled holds the port DOWN; Polling lifts that and retrains the
	 * link, which is up at once if the netdev and the neighbour are.
	 */
	if (phys) {
		bool was_disabled = ib->sm_disabled;

		ib->sm_disabled = phys == IB_PORT_PHYS_STATE_DISABLED;
		phys_state = scire_ib_link_phys_state(sdev);
		ib->sm_disabled = was_disabled;
		state = phys_state == IB_PORT_PHYS_STATE_LINK_UP ?
			IB_PORT_INIT : IB_PORT_DOWN;
	}
	next = scire_sma_next_state(state, pi->linkspeed_portstate & 0xf);
	if (next < 0)
		return false;
	/* The SM cannot bring up a port whose link is down. */
	if (phys_state != IB_PORT_PHYS_STATE_LINK_UP && next != IB_PORT_DOWN)
		return false;

	if (lid != ib->lid || lmc != ib->lmc)
		*events |= BIT(IB_EVENT_LID_CHANGE);
	if (sm_lid != ib->sm_lid || sm_sl != ib->sm_sl)
		*events |= BIT(IB_EVENT_SM_CHANGE);
	if (pi->gid_prefix != ib->gid_prefix)
		*events |= BIT(IB_EVENT_GID_CHANGE);
	if ((pi->clientrereg_resv_subnetto & 0x80) &&
	    (ib->cap_mask & IB_PORT_CLIENT_REG_SUP))
		*events |= BIT(IB_EVENT_CLIENT_REREGISTER);

	ib->mkey = pi->mkey;
	ib->gid_prefix = pi->gid_prefix;
	ib->lid = lid;
	ib->sm_lid = sm_lid;
	ib->lmc = lmc;
	ib->sm_sl = sm_sl;
	ib->mkey_protect = pi->mkeyprot_resv_lmc >> 6;
	ib->mkey_lease_period = be16_to_cpu(pi->mkey_lease_period);
	if (link_down)
		ib->link_down_default = link_down;
	if (width)
		ib->link_width_enabled = width;
	if (speed)
		ib->link_speed_enabled = speed;
	ib->neighbor_mtu = mtu;
	if (op_vls)
		ib->op_vls = op_vls;
	ib->vl_high_limit = pi->vl_high_limit;
	ib->hoq_life = pi->vlstallcnt_hoqlife & 0x1f;
	ib->mkey_violations = be16_to_cpu(pi->mkey_violations);
	ib->pkey_violations = be16_to_cpu(pi->pkey_violations);
	ib->qkey_violations = be16_to_cpu(pi->qkey_violations);
	ib->subnet_timeout = pi->clientrereg_resv_subnetto & 0x1f;
	if (phys)
		ib->sm_disabled = phys == IB_PORT_PHYS_STATE_DISABLED;
	ib->phy_err_threshold = pi->localphyerrors_overrunerrors >> 4;
	ib->overrun_threshold = pi->localphyerrors_overrunerrors & 0xf;
	scire_ib_set_port_state(sdev, next, phys_state, events);
	return true;
}

static int scire_sma_port_info(struct scire_dev *sdev, struct ib_smp *smp,
			       u32 *events)
{
	bool ok = true;

	if (!scire_sma_port_ok(smp)) {
		ok = false;
	} else if (smp->method == IB_MGMT_METHOD_SET) {
		ok = scire_sma_port_info_set(sdev,
					     (struct ib_port_info *)smp->data,
					     events);
	}
	scire_sma_port_info_get(sdev, smp);
	if (!ok)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

/*
 * P_KeyTable (IBA 14.2.5.7): blocks of 32 entries; PartitionCap 16 means
 * one block, whose entries 16..31 read as 0 and cannot be set.
 */
static int scire_sma_pkey_table(struct scire_dev *sdev, struct ib_smp *smp,
				u32 *events)
{
	__be16 *pkeys = (__be16 *)smp->data;
	struct scire_ib_port *ib = &sdev->ib;
	bool changed = false;
	int i;

	if (be32_to_cpu(smp->attr_mod) & 0xffff)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	if (smp->method == IB_MGMT_METHOD_SET) {
		for (i = SCIRE_IB_PKEY_TBL_LEN; i < 32; i++) {
			if (pkeys[i])
				return scire_mad_error((struct ib_mad_hdr *)smp,
						       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
		}
		for (i = 0; i < SCIRE_IB_PKEY_TBL_LEN; i++) {
			u16 pkey = be16_to_cpu(pkeys[i]);

			changed |= ib->pkeys[i] != pkey;
			/* Senders read it without port_lock. */
			WRITE_ONCE(ib->pkeys[i], pkey);
		}
		if (changed)
			*events |= BIT(IB_EVENT_PKEY_CHANGE);
	}
	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	for (i = 0; i < SCIRE_IB_PKEY_TBL_LEN; i++)
		pkeys[i] = cpu_to_be16(ib->pkeys[i]);
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

/*
 * SLtoVLMappingTable (IBA 14.2.5.8): 16 SLs of 4 bits each. With one data
 * VL every SL maps to VL0, or to VL15 (the packet is dropped).
 */
static int scire_sma_sl_to_vl(struct scire_dev *sdev, struct ib_smp *smp)
{
	struct scire_ib_port *ib = &sdev->ib;
	int i;

	if (smp->attr_mod)
		return scire_mad_error((struct ib_mad_hdr *)smp,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	if (smp->method == IB_MGMT_METHOD_SET) {
		for (i = 0; i < 16; i++) {
			u8 vl = (smp->data[i / 2] >> (i & 1 ? 0 : 4)) & 0xf;

			if (vl >= ib->op_vls && vl != SCIRE_IB_VL15)
				return scire_mad_error((struct ib_mad_hdr *)smp,
						       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
		}
		memcpy(ib->sl2vl, smp->data, sizeof(ib->sl2vl));
	}
	memset(smp->data, 0, IB_SMP_DATA_SIZE);
	memcpy(smp->data, ib->sl2vl, sizeof(ib->sl2vl));
	return scire_mad_reply((struct ib_mad_hdr *)smp);
}

/* The SMA (IBA 14.2): @smp is the reply being built, a copy of the request. */
static int scire_sma(struct scire_dev *sdev, int mad_flags, struct ib_smp *smp)
{
	struct ib_mad_hdr *hdr = (struct ib_mad_hdr *)smp;
	unsigned long flags;
	u32 events = 0;
	int ret;

	/* Responses are for the SM on this port, as are SMInfo and traps. */
	if (smp->method & IB_MGMT_METHOD_RESP ||
	    smp->method == IB_MGMT_METHOD_TRAP ||
	    smp->attr_id == IB_SMP_ATTR_SM_INFO)
		return IB_MAD_RESULT_SUCCESS;
	/* Ends the SMA's own trap if it names it; never answered. */
	if (smp->method == IB_MGMT_METHOD_TRAP_REPRESS) {
		scire_ib_trap_repress(sdev, smp);
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	}
	if (smp->method != IB_MGMT_METHOD_GET &&
	    smp->method != IB_MGMT_METHOD_SET)
		return scire_mad_error(hdr, SCIRE_MAD_STATUS(UNSUPPORTED_METHOD));

	spin_lock_irqsave(&sdev->port_lock, flags);
	if (!scire_sma_mkey_ok(&sdev->ib, smp, mad_flags)) {
		/* IBA 14.2.4.3: a failed M_Key check gets no reply. */
		scire_sma_mkey_trap(sdev, smp);
		spin_unlock_irqrestore(&sdev->port_lock, flags);
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	}
	if (smp->class_version != SCIRE_SMP_CLASS_VERSION) {
		ret = scire_mad_error(hdr, SCIRE_MAD_STATUS(BAD_VERSION));
		goto out;
	}

	switch (smp->attr_id) {
	case IB_SMP_ATTR_NODE_DESC:
		ret = scire_sma_node_desc(sdev, smp);
		break;
	case IB_SMP_ATTR_NODE_INFO:
		ret = scire_sma_node_info(sdev, smp);
		break;
	case IB_SMP_ATTR_GUID_INFO:
		ret = scire_sma_guid_info(sdev, smp);
		break;
	case IB_SMP_ATTR_PORT_INFO:
		ret = scire_sma_port_info(sdev, smp, &events);
		break;
	case IB_SMP_ATTR_PKEY_TABLE:
		ret = scire_sma_pkey_table(sdev, smp, &events);
		break;
	case IB_SMP_ATTR_SL_TO_VL_TABLE:
		ret = scire_sma_sl_to_vl(sdev, smp);
		break;
	default:
		/* VLArbitrationTable too: VLArbHigh/LowCap are 0. */
		ret = scire_mad_error(hdr,
				      SCIRE_MAD_STATUS(UNSUPPORTED_METHOD_ATTRIB));
		break;
	}
out:
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	scire_ib_dispatch(sdev, events);
	return ret;
}

/* @v, saturated to @max (the PMA's counters stop at their all-ones value). */
static u64 scire_sat(u64 v, u64 max)
{
	return min(v, max);
}

/* A CounterSelect bit of PortCounters or PortCountersExtended. */
struct scire_pma_sel {
	__be16 bit;
	enum scire_pma_counter cnt;
};

static const struct scire_pma_sel scire_pma_sel[] = {
	{ IB_PMA_SEL_PORT_XMIT_DATA, SCIRE_PMA_XMIT_DATA },
	{ IB_PMA_SEL_PORT_RCV_DATA, SCIRE_PMA_RCV_DATA },
	{ IB_PMA_SEL_PORT_XMIT_PACKETS, SCIRE_PMA_XMIT_PKTS },
	{ IB_PMA_SEL_PORT_RCV_PACKETS, SCIRE_PMA_RCV_PKTS },
	{ IB_PMA_SEL_PORT_RCV_ERRORS, SCIRE_PMA_RCV_ERRORS },
	{ IB_PMA_SEL_PORT_XMIT_DISCARDS, SCIRE_PMA_XMIT_DISCARDS },
	{}
};

static const struct scire_pma_sel scire_pma_selx[] = {
	{ IB_PMA_SELX_PORT_XMIT_DATA, SCIRE_PMA_XMIT_DATA },
	{ IB_PMA_SELX_PORT_RCV_DATA, SCIRE_PMA_RCV_DATA },
	{ IB_PMA_SELX_PORT_XMIT_PACKETS, SCIRE_PMA_XMIT_PKTS },
	{ IB_PMA_SELX_PORT_RCV_PACKETS, SCIRE_PMA_RCV_PKTS },
	{}
};

/*
 * The PMA's counters, less the baselines the last clears left: data in
 * 4-byte words from the BTH on, errors as the receive and send drops. A
 * Set first clears the counters @sel names in @map (IBA 16.1.3.5); both
 * attributes share the baselines.
 */
static void scire_pma_sample(struct scire_dev *sdev, bool set, __be16 sel,
			     const struct scire_pma_sel *map, u64 *v)
{
	u64 *base = sdev->ib_pma.cnt, cnt[SCIRE_CNT_MAX] = {};
	u64 now[SCIRE_PMA_NUM];
	unsigned long flags;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		const struct scire_stats *s = per_cpu_ptr(sdev->stats, cpu);

		for (i = 0; i < SCIRE_CNT_MAX; i++)
			cnt[i] += READ_ONCE(s->cnt[i]);
	}
	now[SCIRE_PMA_XMIT_DATA] = cnt[SCIRE_CNT_TX_BYTES] / 4;
	now[SCIRE_PMA_RCV_DATA] = cnt[SCIRE_CNT_RX_BYTES] / 4;
	now[SCIRE_PMA_XMIT_PKTS] = cnt[SCIRE_CNT_TX_PACKETS];
	now[SCIRE_PMA_RCV_PKTS] = cnt[SCIRE_CNT_RX_PACKETS];
	now[SCIRE_PMA_RCV_ERRORS] = cnt[SCIRE_CNT_ICRC_ERRORS] +
				    cnt[SCIRE_CNT_RX_DROPS];
	now[SCIRE_PMA_XMIT_DISCARDS] = cnt[SCIRE_CNT_TX_DROPS];

	spin_lock_irqsave(&sdev->port_lock, flags);
	for (; set && map->bit; map++)
		if (sel & map->bit)
			base[map->cnt] = now[map->cnt];
	for (i = 0; i < SCIRE_PMA_NUM; i++)
		v[i] = now[i] - base[i];
	spin_unlock_irqrestore(&sdev->port_lock, flags);
}

/* The PMA's PortSelect on a one-port CA: 1, or 0 for "this port". */
static bool scire_pma_port_ok(u8 port_select)
{
	return port_select <= 1;
}

static int scire_pma_class_port_info(struct ib_pma_mad *pmp)
{
	struct ib_class_port_info *cpi = (struct ib_class_port_info *)pmp->data;

	if (pmp->mad_hdr.method != IB_MGMT_METHOD_GET)
		return scire_mad_error(&pmp->mad_hdr,
				       SCIRE_MAD_STATUS(UNSUPPORTED_METHOD_ATTRIB));
	memset(pmp->data, 0, sizeof(pmp->data));
	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	/* 64-bit data counters, but no unicast/multicast split. */
	cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH_NOIETF;
	cpi->cap_mask2_resp_time = cpu_to_be32(18);
	return scire_mad_reply(&pmp->mad_hdr);
}

/*
 * PortCounters (IBA 16.1.3.5): 32-bit data and packet counters and 16-bit
 * error counters, all saturating; a Set clears those CounterSelect names.
 */
static int scire_pma_port_counters(struct scire_dev *sdev,
				   struct ib_pma_mad *pmp)
{
	struct ib_pma_portcounters *p = (struct ib_pma_portcounters *)pmp->data;
	__be16 sel = p->counter_select;
	u8 port = p->port_select;
	u64 v[SCIRE_PMA_NUM];

	if (!scire_pma_port_ok(port))
		return scire_mad_error(&pmp->mad_hdr,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	scire_pma_sample(sdev, pmp->mad_hdr.method == IB_MGMT_METHOD_SET, sel,
			 scire_pma_sel, v);
	memset(pmp->data, 0, sizeof(pmp->data));
	p->port_select = port;
	p->counter_select = sel;
	p->port_rcv_errors =
		cpu_to_be16(scire_sat(v[SCIRE_PMA_RCV_ERRORS], U16_MAX));
	p->port_xmit_discards =
		cpu_to_be16(scire_sat(v[SCIRE_PMA_XMIT_DISCARDS], U16_MAX));
	p->port_xmit_data =
		cpu_to_be32(scire_sat(v[SCIRE_PMA_XMIT_DATA], U32_MAX));
	p->port_rcv_data = cpu_to_be32(scire_sat(v[SCIRE_PMA_RCV_DATA], U32_MAX));
	p->port_xmit_packets =
		cpu_to_be32(scire_sat(v[SCIRE_PMA_XMIT_PKTS], U32_MAX));
	p->port_rcv_packets =
		cpu_to_be32(scire_sat(v[SCIRE_PMA_RCV_PKTS], U32_MAX));
	return scire_mad_reply(&pmp->mad_hdr);
}

/* PortCountersExtended (IBA 16.1.4.11): the 64-bit data and packet counters. */
static int scire_pma_port_counters_ext(struct scire_dev *sdev,
				       struct ib_pma_mad *pmp)
{
	struct ib_pma_portcounters_ext *p =
		(struct ib_pma_portcounters_ext *)pmp->data;
	__be16 sel = p->counter_select;
	u8 port = p->port_select;
	u64 v[SCIRE_PMA_NUM];

	if (!scire_pma_port_ok(port))
		return scire_mad_error(&pmp->mad_hdr,
				       SCIRE_MAD_STATUS(INVALID_ATTRIB_VALUE));
	scire_pma_sample(sdev, pmp->mad_hdr.method == IB_MGMT_METHOD_SET, sel,
			 scire_pma_selx, v);
	memset(pmp->data, 0, sizeof(pmp->data));
	p->port_select = port;
	p->counter_select = sel;
	p->port_xmit_data = cpu_to_be64(v[SCIRE_PMA_XMIT_DATA]);
	p->port_rcv_data = cpu_to_be64(v[SCIRE_PMA_RCV_DATA]);
	p->port_xmit_packets = cpu_to_be64(v[SCIRE_PMA_XMIT_PKTS]);
	p->port_rcv_packets = cpu_to_be64(v[SCIRE_PMA_RCV_PKTS]);
	return scire_mad_reply(&pmp->mad_hdr);
}

/* The PMA (IBA 16.1): @pmp is the reply being built, a copy of the request. */
static int scire_pma(struct scire_dev *sdev, struct ib_pma_mad *pmp)
{
	struct ib_mad_hdr *hdr = &pmp->mad_hdr;

	if (hdr->method & IB_MGMT_METHOD_RESP)
		return IB_MAD_RESULT_SUCCESS;
	if (hdr->method != IB_MGMT_METHOD_GET &&
	    hdr->method != IB_MGMT_METHOD_SET)
		return scire_mad_error(hdr, SCIRE_MAD_STATUS(UNSUPPORTED_METHOD));
	if (hdr->class_version != 1)
		return scire_mad_error(hdr, SCIRE_MAD_STATUS(BAD_VERSION));

	switch (hdr->attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		return scire_pma_class_port_info(pmp);
	case IB_PMA_PORT_COUNTERS:
		return scire_pma_port_counters(sdev, pmp);
	case IB_PMA_PORT_COUNTERS_EXT:
		return scire_pma_port_counters_ext(sdev, pmp);
	default:
		return scire_mad_error(hdr,
				       SCIRE_MAD_STATUS(UNSUPPORTED_METHOD_ATTRIB));
	}
}

/**
 * scire_process_mad() - the SMA and PMA of a scire_ib port.
 * @ibdev: a scire_ib device.
 * @mad_flags: IB_MAD_IGNORE_MKEY for the core's own queries (sysfs).
 * @port: port number (1).
 * @in_wc: how the MAD arrived; NULL for the core's own queries. Unused:
 *	   the MAD layer has already checked the QP and P_Key.
 * @in_grh: its GRH if any; unused.
 * @in: the MAD, IB_MGMT_MAD_SIZE bytes.
 * @out: the reply, when there is one; IB_MGMT_MAD_SIZE bytes.
 * @out_mad_size: the size of @out; left as it is (an IB MAD).
 * @out_mad_pkey_index: unused (OPA only).
 *
 * Answers SMPs (LID-routed and directed-route; IBA 14.2.5: NodeInfo,
 * NodeDescription, GUIDInfo, PortInfo, P_KeyTable, SLtoVLMappingTable,
 * with M_Key checking per IBA 14.2.4) and performance management GMPs
 * (IBA 16.1: ClassPortInfo, PortCounters, PortCountersExtended).
 * Unsupported attributes and methods, bad attribute modifiers and invalid
 * Set values get the MAD status IBA names and change nothing.
 *
 * Context: any; the MAD layer may call it in atomic context. Takes
 * scire_dev.port_lock.
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with @out filled in;
 * IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED for an SMP that failed
 * its M_Key check (dropped, no reply) or a TrapRepress (which ends the
 * SMA's trap of its TransactionID, scire_ib_trap_repress()); or
 * IB_MAD_RESULT_SUCCESS for a MAD the agents of the host should get
 * (SMInfo, traps and responses for an SM on this port, other classes).
 */
int scire_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct scire_dev *sdev = to_sdev(ibdev);

	if (in->mad_hdr.base_version != IB_MGMT_BASE_VERSION)
		return IB_MAD_RESULT_SUCCESS;

	switch (in->mad_hdr.mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		memcpy(out, in, sizeof(*out));
		return scire_sma(sdev, mad_flags, (struct ib_smp *)out);
	case IB_MGMT_CLASS_PERF_MGMT:
		memcpy(out, in, sizeof(*out));
		return scire_pma(sdev, (struct ib_pma_mad *)out);
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
}
