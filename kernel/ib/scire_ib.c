// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the InfiniBand link type "scire_ib" - the port a subnet manager
 * manages (docs/scire_ib.md).
 *
 * A scire_ib device is a scire device whose port has link layer
 * InfiniBand: the core gives it QP0 and QP1, the SMI and SA clients, and
 * hands every management datagram for it to scire_process_mad()
 * (scire_mad.c), the port's SMA and PMA. This file holds the port: its
 * attributes as the verbs see them, its state machine (IBA 14.2.5.6:
 * DOWN without a link, INIT with one, then ARMED and ACTIVE as the SM
 * says), and the events each change raises.
 *
 * The port's wire, the neighbour and the encapsulation, is in
 * scire_ib_net.c.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/module.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>
#include <rdma/rdma_netlink.h>

#include "scire.h"

MODULE_ALIAS_RDMA_LINK("scire_ib");

/* The default GID prefix, fe80::/64 (IBA 4.1.1), until the SM sets one. */
#define SCIRE_IB_DEFAULT_GID_PREFIX	cpu_to_be64(0xfe80000000000000ULL)

/*
 * Bytes a full scire_ib packet adds to its payload on IPv4: IP (20), UDP
 * (8), scire_ib header (4), LRH (8), GRH (40), BTH (12), RETH + ImmDt
 * (20), ICRC (4). docs/scire_ib.md, "MTU".
 */
#define SCIRE_IB_MAX_OVERHEAD		116

/* CapabilityMask bits that agents on the host set and clear (modify_port). */
#define SCIRE_IB_AGENT_CAPS	(IB_PORT_SM | IB_PORT_SM_DISABLED |	\
				 IB_PORT_CM_SUP | IB_PORT_SNMP_TUNNEL_SUP | \
				 IB_PORT_DEVICE_MGMT_SUP |		\
				 IB_PORT_VENDOR_CLASS_SUP |		\
				 IB_PORT_BOOT_MGMT_SUP)

/**
 * scire_ib_port_guid() - the port GUID of a scire_ib device.
 * @sdev: the device.
 *
 * A CA with one port uses its node GUID, a modified EUI-64 of the
 * netdev's MAC, as the port GUID (docs/scire_ib.md, "The port").
 *
 * Context: any.
 * Return: the GUID, big endian.
 */
__be64 scire_ib_port_guid(const struct scire_dev *sdev)
{
	return sdev->ibdev.node_guid;
}

/**
 * scire_pkey_tbl_len() - the size of a device's P_Key table.
 * @sdev: the device.
 *
 * Context: any.
 * Return: SCIRE_IB_PKEY_TBL_LEN for scire_ib, SCIRE_PKEY_TBL_LEN (the
 * default partition only) for RoCE.
 */
u16 scire_pkey_tbl_len(const struct scire_dev *sdev)
{
	return sdev->link == SCIRE_LINK_IB ? SCIRE_IB_PKEY_TBL_LEN :
					      SCIRE_PKEY_TBL_LEN;
}

/**
 * scire_ib_mtu_cap() - the largest IB MTU a scire_ib packet of which fits
 * the netdev's MTU (PortInfo MTUCap).
 * @sdev: a scire_ib device.
 *
 * Context: any.
 * Return: IB_MTU_256..IB_MTU_4096; IB_MTU_256 also when not even that fits
 * (the port then loses packets: docs/scire_ib.md, "MTU").
 */
enum ib_mtu scire_ib_mtu_cap(const struct scire_dev *sdev)
{
	int payload = READ_ONCE(sdev->netdev->mtu) - SCIRE_IB_MAX_OVERHEAD;
	enum ib_mtu mtu = ib_mtu_int_to_enum(payload);

	return min(mtu, IB_MTU_4096);
}

/**
 * scire_ib_port_init() - the port as it is before any SM has seen it.
 * @sdev: a scire_ib device being created (not yet registered).
 *
 * LID 0, default GID prefix, M_Key 0, the default partition's full key in
 * P_Key entry 0, every SL on VL0, no neighbour yet (learn mode: the first
 * to answer the HELLOs becomes it): DOWN, its physical state Polling (or
 * Disabled with the netdev down) until a neighbour answers
 * (IBA 14.2.5.6; docs/scire_ib.md, "The link", "The port and the subnet
 * management agent").
 *
 * Context: process context, before ib_register_device().
 */
void scire_ib_port_init(struct scire_dev *sdev)
{
	struct scire_ib_port *ib = &sdev->ib;

	memset(ib, 0, sizeof(*ib));
	scire_ib_net_init(sdev);
	scire_ib_trap_init(sdev);
	ib->gid_prefix = SCIRE_IB_DEFAULT_GID_PREFIX;
	/* IsTrapSupported, IsCapabilityMaskNoticeSupported: trap 144. */
	ib->cap_mask = IB_PORT_CLIENT_REG_SUP | IB_PORT_SYS_IMAGE_GUID_SUP |
		       IB_PORT_TRAP_SUP | IB_PORT_CAP_MASK_NOTICE_SUP;
	ib->link_down_default = 2;	/* Polling */
	ib->neighbor_mtu = scire_ib_mtu_cap(sdev);
	ib->op_vls = 1;			/* VL0 */
	ib->resp_time = 8;		/* 4.096 us * 2^8, about 1 ms */
	ib->subnet_timeout = 0;
	ib->link_width_enabled = SCIRE_IB_WIDTH_SUPPORTED;
	ib->link_speed_enabled = SCIRE_IB_SPEED_SUPPORTED;
	ib->pkeys[0] = IB_DEFAULT_PKEY_FULL;
	ib->learn = true;
	ib->phys_state = netif_running(sdev->netdev) ?
			 IB_PORT_PHYS_STATE_POLLING :
			 IB_PORT_PHYS_STATE_DISABLED;
	sdev->port_state = IB_PORT_DOWN;
}

/**
 * scire_ib_set_port_state() - change the port's logical and physical
 * state, and note the events the change raises.
 * @sdev: a scire_ib device.
 * @state: the new PortState (IB_PORT_DOWN, _INIT, _ARMED or _ACTIVE).
 * @phys_state: the new PortPhysicalState.
 * @events: BIT(enum ib_event_type) of each event to raise is ORed in; the
 *	    caller raises them with scire_ib_dispatch() once it has dropped
 *	    the lock.
 *
 * Leaving ACTIVE raises IB_EVENT_PORT_ERR, entering it IB_EVENT_PORT_ACTIVE
 * (IBA 11.6.3). Entering ACTIVE reports the InitType asked for through
 * modify_port() as InitTypeReply (IBA 14.2.5.6).
 *
 * Context: any; caller holds sdev->port_lock.
 */
void scire_ib_set_port_state(struct scire_dev *sdev,
			     enum ib_port_state state, u8 phys_state,
			     u32 *events)
{
	enum ib_port_state old = sdev->port_state;

	lockdep_assert_held(&sdev->port_lock);
	sdev->port_state = state;
	sdev->ib.phys_state = phys_state;
	if (old == IB_PORT_ACTIVE && state != IB_PORT_ACTIVE)
		*events |= BIT(IB_EVENT_PORT_ERR);
	if (old != IB_PORT_ACTIVE && state == IB_PORT_ACTIVE) {
		sdev->ib.init_type_reply = sdev->ib.init_type;
		*events |= BIT(IB_EVENT_PORT_ACTIVE);
	}
}

/**
 * scire_ib_dispatch() - raise unaffiliated port events.
 * @sdev: a scire_ib device.
 * @events: BIT(enum ib_event_type) of each event to raise.
 *
 * PORT_ERR goes first and PORT_ACTIVE last, so that the core's cache and
 * clients such as IPoIB and the SA see the port's new attributes (LID, SM,
 * P_Keys) in place by the time they are told it is active.
 *
 * Context: any; no spinlock of the port held.
 */
void scire_ib_dispatch(struct scire_dev *sdev, u32 events)
{
	static const enum ib_event_type order[] = {
		IB_EVENT_PORT_ERR, IB_EVENT_LID_CHANGE, IB_EVENT_PKEY_CHANGE,
		IB_EVENT_GID_CHANGE, IB_EVENT_SM_CHANGE,
		IB_EVENT_CLIENT_REREGISTER, IB_EVENT_PORT_ACTIVE,
	};
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		if (!(events & BIT(order[i])))
			continue;
		event.event = order[i];
		ib_dispatch_event(&event);
	}
}

/**
 * scire_ib_port_update() - follow the link: the netdev and the neighbour.
 * @sdev: a registered scire_ib device.
 *
 * Without carrier or a neighbour answering HELLOs (or with the netdev
 * down, or disabled by the SM) the port is DOWN, its physical state
 * Polling (or Disabled); when the link returns it is INIT and waits for
 * the SM (IBA 14.2.5.6: a port whose link comes up starts in INIT). The
 * SM's settings (LID, P_Keys, M_Key) survive, as on a real port.
 *
 * Context: process or atomic context; takes sdev->port_lock.
 */
void scire_ib_port_update(struct scire_dev *sdev)
{
	enum ib_port_state state;
	unsigned long flags;
	u32 events = 0;
	u8 phys;

	spin_lock_irqsave(&sdev->port_lock, flags);
	phys = scire_ib_link_phys_state(sdev);
	state = sdev->port_state;
	if (phys != IB_PORT_PHYS_STATE_LINK_UP)
		state = IB_PORT_DOWN;
	else if (state == IB_PORT_DOWN)
		state = IB_PORT_INIT;
	scire_ib_set_port_state(sdev, state, phys, &events);
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	scire_ib_dispatch(sdev, events);
}

/**
 * scire_ib_query_port() - report a scire_ib port's attributes.
 * @ibdev: the device.
 * @port: port number; the core only passes 1.
 * @attr: filled in; the core zeroed it.
 *
 * Everything the SM set (LID, LMC, SM LID and SL, GID prefix, timeouts,
 * violation counters) as PortInfo reports it. The link is a virtual 4X
 * QDR one: no netdev speed maps onto IB's PortInfo speeds faithfully, and
 * the SMA and the verbs must agree.
 *
 * Context: process context.
 * Return: 0.
 */
static int scire_ib_query_port(struct ib_device *ibdev, u32 port,
			       struct ib_port_attr *attr)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	struct scire_ib_port *ib = &sdev->ib;
	unsigned long flags;

	spin_lock_irqsave(&sdev->port_lock, flags);
	attr->state = sdev->port_state;
	attr->phys_state = ib->phys_state;
	attr->lid = ib->lid;
	attr->lmc = ib->lmc;
	attr->sm_lid = ib->sm_lid;
	attr->sm_sl = ib->sm_sl;
	attr->subnet_prefix = be64_to_cpu(ib->gid_prefix);
	attr->port_cap_flags = ib->cap_mask;
	attr->bad_pkey_cntr = ib->pkey_violations;
	attr->qkey_viol_cntr = ib->qkey_violations;
	attr->subnet_timeout = ib->subnet_timeout;
	attr->init_type_reply = ib->init_type_reply;
	attr->active_mtu = ib->neighbor_mtu;
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	attr->max_mtu = scire_ib_mtu_cap(sdev);
	attr->active_mtu = min(attr->active_mtu, attr->max_mtu);
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = SCIRE_IB_PKEY_TBL_LEN;
	attr->max_msg_sz = 1U << 31;
	attr->max_vl_num = 1;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_QDR;
	return 0;
}

/**
 * scire_ib_query_gid() - read the port's GID table (IBA 4.1.1).
 * @ibdev: the device.
 * @port: port number.
 * @index: table index; GUIDCap is 1, so only 0.
 * @gid: filled in: the GID prefix the SM set, then the port GUID.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an index past the table.
 */
static int scire_ib_query_gid(struct ib_device *ibdev, u32 port, int index,
			      union ib_gid *gid)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	unsigned long flags;

	if (index != 0)
		return -EINVAL;
	spin_lock_irqsave(&sdev->port_lock, flags);
	gid->global.subnet_prefix = sdev->ib.gid_prefix;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	gid->global.interface_id = scire_ib_port_guid(sdev);
	return 0;
}

/**
 * scire_ib_query_pkey() - read the P_Key table the SM wrote.
 * @ibdev: the device.
 * @port: port number.
 * @index: 0..SCIRE_IB_PKEY_TBL_LEN - 1.
 * @pkey: filled in; 0 for an unused (invalid) entry.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an index past the table.
 */
static int scire_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			       u16 *pkey)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	unsigned long flags;

	if (index >= SCIRE_IB_PKEY_TBL_LEN)
		return -EINVAL;
	spin_lock_irqsave(&sdev->port_lock, flags);
	*pkey = sdev->ib.pkeys[index];
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return 0;
}

/**
 * scire_ib_modify_port() - change what host agents own of the port.
 * @ibdev: the device.
 * @port: port number.
 * @mask: IB_PORT_INIT_TYPE and/or IB_PORT_RESET_QKEY_CNTR.
 * @props: set_port_cap_mask and clr_port_cap_mask (bits of
 *	   SCIRE_IB_AGENT_CAPS: IsSM when opensm opens issm, IsCM when ib_cm
 *	   attaches, ...), init_type.
 *
 * Implements the Modify HCA port verb (IBA 11.2.1.3) for the capability
 * bits software on the host owns. A changed CapabilityMask is reported to
 * the SM with trap 144 (IBA 14.2.5.1) while the port is ACTIVE.
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for IB_PORT_SHUTDOWN (the link is the netdev's:
 * take that down instead) or any other mask bit; -EINVAL for a capability
 * bit the port itself owns.
 */
static int scire_ib_modify_port(struct ib_device *ibdev, u32 port, int mask,
				struct ib_port_modify *props)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	struct scire_ib_port *ib = &sdev->ib;
	unsigned long flags;
	u32 old_caps;

	if (mask & ~(IB_PORT_INIT_TYPE | IB_PORT_RESET_QKEY_CNTR))
		return -EOPNOTSUPP;
	if ((props->set_port_cap_mask | props->clr_port_cap_mask) &
	    ~SCIRE_IB_AGENT_CAPS)
		return -EINVAL;

	spin_lock_irqsave(&sdev->port_lock, flags);
	old_caps = ib->cap_mask;
	ib->cap_mask |= props->set_port_cap_mask;
	ib->cap_mask &= ~props->clr_port_cap_mask;
	if (ib->cap_mask != old_caps)
		scire_ib_trap_local_changes(sdev, 0);
	if (mask & IB_PORT_INIT_TYPE)
		ib->init_type = props->init_type & 0xf;
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		ib->qkey_violations = 0;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return 0;
}

/**
 * scire_ib_modify_device() - set the NodeDescription.
 * @ibdev: the device.
 * @mask: IB_DEVICE_MODIFY_NODE_DESC.
 * @props: node_desc, IB_DEVICE_NODE_DESC_MAX bytes, not necessarily
 *	   NUL-terminated (what was written to the node_desc sysfs file).
 *
 * Implements Modify HCA Attributes (IBA 11.2.1.3) for the NodeDescription
 * the SMA reports (IBA 14.2.5.2); a change is reported to the SM with
 * trap 144 (IBA 14.2.5.1) while the port is ACTIVE, so that it re-reads
 * it without a sweep.
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for any other mask bit (the SystemImageGUID is
 * the node GUID and fixed).
 */
static int scire_ib_modify_device(struct ib_device *ibdev, int mask,
				  struct ib_device_modify *props)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	unsigned long flags;

	if (mask & ~IB_DEVICE_MODIFY_NODE_DESC)
		return -EOPNOTSUPP;
	if (!mask)
		return 0;

	/* The SMA reads it under port_lock (scire_mad.c). */
	spin_lock_irqsave(&sdev->port_lock, flags);
	if (memcmp(ibdev->node_desc, props->node_desc,
		   IB_DEVICE_NODE_DESC_MAX)) {
		memcpy(ibdev->node_desc, props->node_desc,
		       IB_DEVICE_NODE_DESC_MAX);
		scire_ib_trap_local_changes(sdev, IB_NOTICE_TRAP_NODE_DESC_CHG);
	}
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return 0;
}

/**
 * scire_ib_get_port_immutable() - port properties fixed for the device's
 * life: an InfiniBand port with SMI, GSI, CM and SA (IBA chapters 13-16).
 * @ibdev: the device.
 * @port: port number.
 * @immutable: filled in.
 *
 * Return: 0.
 */
static int scire_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				       struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->pkey_tbl_len = SCIRE_IB_PKEY_TBL_LEN;
	immutable->gid_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer scire_ib_get_link_layer(struct ib_device *ibdev,
						    u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

/*
 * Applied before the common scire_dev_ops (ib_set_device_ops() never
 * overwrites an op already set), so these win for a scire_ib device.
 */
const struct ib_device_ops scire_ib_dev_ops = {
	.get_link_layer = scire_ib_get_link_layer,
	.get_port_immutable = scire_ib_get_port_immutable,
	.modify_device = scire_ib_modify_device,
	.modify_port = scire_ib_modify_port,
	.port_groups = scire_ib_port_groups,
	.process_mad = scire_process_mad,
	.query_gid = scire_ib_query_gid,
	.query_pkey = scire_ib_query_pkey,
	.query_port = scire_ib_query_port,
};

static int scire_ib_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return scire_dev_add(ibdev_name, ndev, SCIRE_LINK_IB);
}

static struct rdma_link_ops scire_ib_link_ops = {
	.type = "scire_ib",
	.newlink = scire_ib_newlink,
};

/**
 * scire_ib_register_link() - make "rdma link add ... type scire_ib" work.
 *
 * Context: module init.
 * Return: 0.
 */
int scire_ib_register_link(void)
{
	rdma_link_register(&scire_ib_link_ops);
	return 0;
}

/**
 * scire_ib_unregister_link() - undo scire_ib_register_link().
 *
 * Context: module exit, before the devices are unregistered.
 */
void scire_ib_unregister_link(void)
{
	rdma_link_unregister(&scire_ib_link_ops);
}
