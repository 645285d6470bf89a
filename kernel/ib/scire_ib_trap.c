// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the traps of a scire_ib port's SMA (IBA 13.4.9, 14.2.5.1).
 *
 * A CA's SMA tells the master SM of changes the SM did not make itself
 * with trap 144, "local changes detected": here a new CapabilityMask
 * (host agents setting IsSM, IsCM, ... through modify_port) and a new
 * NodeDescription (modify_device, /sys/class/infiniband/DEV/node_desc).
 * opensm answers the trap with a TrapRepress and re-reads the
 * NodeDescription, or sweeps for a CapabilityMask change.
 *
 * It tells the SM of a key violation with a security trap: 256 for an
 * SMP with a bad M_Key (IBA 14.2.4.2), 257 for a packet whose P_Key the
 * port's table does not hold (IBA 10.9.3), 258 for a UD packet with the
 * wrong Q_Key (IBA 10.2.4.4); PortInfo's violation counters count each
 * one. A security trap pending stays until repressed or given up, and a
 * new one starts no sooner than a resend interval after the last one
 * did: a flood of bad packets costs the SM a trap per interval at most,
 * and the counters say how many there were.
 *
 * The trap is a Trap(Notice) SMP, LID-routed from QP0 to PortInfo's
 * MasterSMLID at MasterSMSL through a send-only QP0 agent of the kernel's
 * MAD layer. It is sent again every resend interval (4.096 us *
 * 2^SubnetTimeOut, bounded) until a TrapRepress with its TransactionID
 * comes back (scire_process_mad() passes TrapRepress here) or
 * SCIRE_IB_TRAP_TRIES sends went unanswered. One trap of each kind (local
 * changes, security) is pending at a time: a newer change replaces the
 * pending trap 144, with a new TransactionID and the older one's change
 * flags too. Only an ACTIVE port with a MasterSMLID sends;
 * changes made before the port is ACTIVE are read by the SM's sweep that
 * activates it.
 *
 * The agent belongs to an ib_client: the core adds it after the MAD layer
 * has opened the port and removes it before the MAD layer closes it,
 * whichever way the device goes (link delete, netdev gone, module unload).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/random.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>

#include "scire.h"

/* Sends of one trap before it is given up unrepressed. */
#define SCIRE_IB_TRAP_TRIES	8
/* Bounds of the resend interval, whatever SubnetTimeOut says. */
#define SCIRE_IB_TRAP_MIN_MS	100
#define SCIRE_IB_TRAP_MAX_MS	4000

/*
 * The Notice attribute (IBA 14.2.5.1) as a Trap() SMP carries it: the
 * first 64 bytes, without IssuerGID, with trap 144's DataDetails.
 */
struct scire_notice_144 {
	u8 generic_type;	/* IsGeneric (bit 7), Type */
	u8 prod_type_msb;	/* ProducerType, 24 bits */
	__be16 prod_type_lsb;
	__be16 trap_num;
	__be16 issuer_lid;
	__be16 toggle_count;	/* NoticeToggle, NoticeCount: 0 in a trap */
	__be16 reserved1;
	__be16 lid;		/* LIDADDR of the port that changed */
	u8 reserved2;
	u8 local_changes;	/* bit 0: OtherLocalChanges */
	__be32 new_cap_mask;	/* CapabilityMask */
	__be16 change_flags;	/* IB_NOTICE_TRAP_*_CHG */
	__be16 cap_mask2;	/* CapabilityMask2: not supported, 0 */
} __packed;

/*
 * Whether the port may send a trap: o14-3.2.1 asks for an ACTIVE port,
 * and a trap needs the SM's LID to go to.
 */
static bool scire_ib_trap_may_send(const struct scire_dev *sdev)
{
	return sdev->port_state == IB_PORT_ACTIVE && sdev->ib.sm_lid;
}

/* The resend interval: 4.096 us * 2^SubnetTimeOut (IBA 14.2.5.6). */
static unsigned long scire_ib_trap_interval(u8 subnet_timeout)
{
	u64 j = nsecs_to_jiffies64(4096ULL << (subnet_timeout & 0x1f));

	return clamp_t(u64, j, msecs_to_jiffies(SCIRE_IB_TRAP_MIN_MS),
		       msecs_to_jiffies(SCIRE_IB_TRAP_MAX_MS));
}

/* The Trap() SMP's MAD header with TransactionID @tid. */
static void scire_ib_trap_hdr(struct ib_smp *smp, u64 tid)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_TRAP;
	smp->tid = cpu_to_be64(tid);
	smp->attr_id = IB_SMP_ATTR_NOTICE;
	/* M_Key 0 in a trap (o14-1). */
}

/* Trap(Notice) 144 with TransactionID @tid, as the port stands now. */
static void scire_ib_trap_fill_local(struct scire_dev *sdev,
				     struct ib_smp *smp, u64 tid)
{
	struct scire_notice_144 *ntc = (struct scire_notice_144 *)smp->data;
	struct scire_ib_trap *trap = &sdev->ib_trap;

	BUILD_BUG_ON(sizeof(*ntc) > IB_SMP_DATA_SIZE);
	lockdep_assert_held(&sdev->port_lock);
	scire_ib_trap_hdr(smp, tid);
	ntc->generic_type = IB_NOTICE_TYPE_INFO;
	ntc->prod_type_lsb = IB_NOTICE_PROD_CA;
	ntc->trap_num = IB_NOTICE_TRAP_CAP_MASK_CHG;
	ntc->issuer_lid = cpu_to_be16(sdev->ib.lid);
	ntc->lid = ntc->issuer_lid;
	/* Set when a change flag says what else changed; opensm needs it. */
	ntc->local_changes = trap->change_flags ? 1 : 0;
	ntc->new_cap_mask = cpu_to_be32(sdev->ib.cap_mask);
	ntc->change_flags = cpu_to_be16(trap->change_flags);
}

/*
 * The pending security trap with TransactionID @tid: the Notice the
 * violation filled, issued by the port's LID of now.
 */
static void scire_ib_trap_fill_security(struct scire_dev *sdev,
					struct ib_smp *smp, u64 tid)
{
	struct ib_mad_notice_attr *ntc = (struct ib_mad_notice_attr *)smp->data;

	BUILD_BUG_ON(sizeof(*ntc) > IB_SMP_DATA_SIZE);
	lockdep_assert_held(&sdev->port_lock);
	scire_ib_trap_hdr(smp, tid);
	*ntc = sdev->ib_trap.security;
	ntc->issuer_lid = cpu_to_be16(sdev->ib.lid);
}

/*
 * Send the pending trap of @kind once more, or give it up; schedule the
 * next send while it is still pending.
 */
static void scire_ib_trap_send(struct scire_dev *sdev,
			       enum scire_ib_trap_kind kind)
{
	struct scire_ib_trap *trap = &sdev->ib_trap;
	struct scire_ib_trap_slot *slot = &trap->slot[kind];
	struct rdma_ah_attr ah_attr = {};
	struct ib_mad_send_buf *msg;
	struct ib_mad_agent *agent;
	unsigned long flags;
	bool send = false;
	struct ib_ah *ah;

	/*
	 * Teardown clears @agent, then waits for this work, and only then
	 * unregisters the agent: it stays valid while we run.
	 */
	spin_lock_irqsave(&sdev->port_lock, flags);
	agent = trap->agent;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (!agent)
		return;
	msg = ib_create_send_mad(agent, 0, 0, 0, IB_MGMT_MAD_HDR,
				 IB_MGMT_MAD_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);

	spin_lock_irqsave(&sdev->port_lock, flags);
	if (!slot->tid || !trap->agent)
		goto unlock;
	if (!scire_ib_trap_may_send(sdev)) {
		slot->tid = 0;
		goto unlock;
	}
	if (slot->tries >= SCIRE_IB_TRAP_TRIES) {
		slot->tid = 0;
		scire_count(sdev, SCIRE_CNT_TRAPS_ABANDONED, 1);
		goto unlock;
	}
	/* A send that fails below counts as a try, and is tried again. */
	slot->tries++;
	queue_delayed_work(system_wq, &slot->work,
			   scire_ib_trap_interval(sdev->ib.subnet_timeout));
	if (!IS_ERR(msg)) {
		if (kind == SCIRE_IB_TRAP_LOCAL)
			scire_ib_trap_fill_local(sdev, msg->mad, slot->tid);
		else
			scire_ib_trap_fill_security(sdev, msg->mad, slot->tid);
		ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_dlid(&ah_attr, sdev->ib.sm_lid);
		rdma_ah_set_sl(&ah_attr, sdev->ib.sm_sl);
		rdma_ah_set_port_num(&ah_attr, 1);
		send = true;
	}
unlock:
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (IS_ERR(msg))
		return;
	if (!send)
		goto free;

	ah = rdma_create_ah(agent->qp->pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		goto free;
	msg->ah = ah;
	if (ib_post_send_mad(msg, NULL)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		goto free;
	}
	scire_count(sdev, SCIRE_CNT_TRAPS_SENT, 1);
	return;
free:
	ib_free_send_mad(msg);
}

static void scire_ib_trap_local_work(struct work_struct *work)
{
	struct scire_dev *sdev =
		container_of(to_delayed_work(work), struct scire_dev,
			     ib_trap.slot[SCIRE_IB_TRAP_LOCAL].work);

	scire_ib_trap_send(sdev, SCIRE_IB_TRAP_LOCAL);
}

static void scire_ib_trap_security_work(struct work_struct *work)
{
	struct scire_dev *sdev =
		container_of(to_delayed_work(work), struct scire_dev,
			     ib_trap.slot[SCIRE_IB_TRAP_SECURITY].work);

	scire_ib_trap_send(sdev, SCIRE_IB_TRAP_SECURITY);
}

/* A new TransactionID for a trap: never 0, which means none pending. */
static u64 scire_ib_trap_new_tid(struct scire_ib_trap *trap)
{
	do {
		++trap->last_tid;
	} while (!trap->last_tid);
	return trap->last_tid;
}

/* A trap left the port (or was flushed): free it and its AH. */
static void scire_ib_trap_send_handler(struct ib_mad_agent *agent,
				       struct ib_mad_send_wc *wc)
{
	/* Not sleepable: the MAD layer's contexts are not ours to judge. */
	rdma_destroy_ah(wc->send_buf->ah, 0);
	ib_free_send_mad(wc->send_buf);
}

/**
 * scire_ib_trap_init() - prepare a scire_ib device's traps.
 * @sdev: a scire_ib device just allocated, before registration.
 *
 * No trap is sent before the MAD layer has the port and the port is
 * ACTIVE.
 *
 * Context: any.
 */
void scire_ib_trap_init(struct scire_dev *sdev)
{
	struct scire_ib_trap *trap = &sdev->ib_trap;

	memset(trap, 0, sizeof(*trap));
	INIT_DELAYED_WORK(&trap->slot[SCIRE_IB_TRAP_LOCAL].work,
			  scire_ib_trap_local_work);
	INIT_DELAYED_WORK(&trap->slot[SCIRE_IB_TRAP_SECURITY].work,
			  scire_ib_trap_security_work);
	trap->last_tid = get_random_u64();
}

/**
 * scire_ib_trap_local_changes() - tell the SM of a local change with trap
 * 144 (IBA 14.2.5.1).
 * @sdev: a scire_ib device.
 * @change_flags: IB_NOTICE_TRAP_NODE_DESC_CHG for a new NodeDescription
 *		  (also IB_NOTICE_TRAP_LWE_CHG, IB_NOTICE_TRAP_LSE_CHG); 0 for
 *		  a CapabilityMask change alone. The trap always carries the
 *		  current CapabilityMask.
 *
 * Starts a new trap with a new TransactionID, which replaces a pending
 * one and reports its changes too, and sends it at once from a work item.
 * Nothing is sent unless the port is ACTIVE with a MasterSMLID.
 *
 * Context: any; caller holds sdev->port_lock, and made the change under
 * it.
 */
void scire_ib_trap_local_changes(struct scire_dev *sdev, u16 change_flags)
{
	struct scire_ib_trap *trap = &sdev->ib_trap;
	struct scire_ib_trap_slot *slot = &trap->slot[SCIRE_IB_TRAP_LOCAL];

	lockdep_assert_held(&sdev->port_lock);
	if (!trap->agent || !scire_ib_trap_may_send(sdev))
		return;
	if (!slot->tid)
		trap->change_flags = 0;
	trap->change_flags |= change_flags;
	slot->tid = scire_ib_trap_new_tid(trap);
	slot->tries = 0;
	mod_delayed_work(system_wq, &slot->work, 0);
}

/**
 * scire_ib_trap_security() - tell the SM of a key violation with trap 256,
 * 257 or 258 (IBA 14.2.5.1).
 * @sdev: a scire_ib device.
 * @ntc: the Notice: TrapNumber and DataDetails filled in by the caller
 *	 (ntc_256 or ntc_257_258 of struct ib_mad_notice_attr), the rest
 *	 filled in here: IsGeneric, Type security, ProducerType CA, and the
 *	 IssuerLID when it is sent.
 *
 * Starts the trap, with a new TransactionID, unless a security trap is
 * still pending or the last one started less than a resend interval ago;
 * then the violation is only counted, by the caller, in PortInfo. Nothing
 * is sent unless the port is ACTIVE with a MasterSMLID.
 *
 * Context: any, the receive path included; caller holds sdev->port_lock
 * and counted the violation under it.
 */
void scire_ib_trap_security(struct scire_dev *sdev,
			    struct ib_mad_notice_attr *ntc)
{
	struct scire_ib_trap *trap = &sdev->ib_trap;
	struct scire_ib_trap_slot *slot = &trap->slot[SCIRE_IB_TRAP_SECURITY];

	lockdep_assert_held(&sdev->port_lock);
	if (!trap->agent || !scire_ib_trap_may_send(sdev) || slot->tid ||
	    (trap->security_next &&
	     time_before(jiffies, trap->security_next)))
		return;
	ntc->generic_type = IB_NOTICE_TYPE_SECURITY;
	ntc->prod_type_msb = 0;
	ntc->prod_type_lsb = IB_NOTICE_PROD_CA;
	ntc->toggle_count = 0;
	trap->security = *ntc;
	trap->security_next =
		(jiffies + scire_ib_trap_interval(sdev->ib.subnet_timeout)) | 1;
	slot->tid = scire_ib_trap_new_tid(trap);
	slot->tries = 0;
	mod_delayed_work(system_wq, &slot->work, 0);
}

/**
 * scire_ib_trap_repress() - the SM's TrapRepress (IBA 13.4.9).
 * @sdev: a scire_ib device.
 * @smp: the TrapRepress SMP received.
 *
 * A TrapRepress of Notice with a pending trap's TransactionID ends its
 * repetition; any other is ignored. Neither gets a reply.
 *
 * Context: any, the MAD layer's receive path included; takes
 * sdev->port_lock.
 */
void scire_ib_trap_repress(struct scire_dev *sdev, const struct ib_smp *smp)
{
	struct scire_ib_trap *trap = &sdev->ib_trap;
	struct scire_ib_trap_slot *slot;
	unsigned long flags;

	if (smp->attr_id != IB_SMP_ATTR_NOTICE)
		return;
	spin_lock_irqsave(&sdev->port_lock, flags);
	for (slot = trap->slot; slot < trap->slot + SCIRE_IB_TRAP_KINDS;
	     slot++) {
		if (slot->tid && smp->tid == cpu_to_be64(slot->tid)) {
			slot->tid = 0;
			cancel_delayed_work(&slot->work);
			scire_count(sdev, SCIRE_CNT_TRAPS_REPRESSED, 1);
		}
	}
	spin_unlock_irqrestore(&sdev->port_lock, flags);
}

/* The MAD layer has opened the port: register the QP0 send agent. */
static int scire_ib_trap_add(struct ib_device *ibdev)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	struct ib_mad_agent *agent;
	unsigned long flags;

	/* Only scire_ib devices answer SMPs with scire_process_mad(). */
	if (ibdev->ops.process_mad != scire_process_mad)
		return -EOPNOTSUPP;
	agent = ib_register_mad_agent(ibdev, 1, IB_QPT_SMI, NULL, 0,
				      scire_ib_trap_send_handler, NULL, NULL,
				      0);
	if (IS_ERR(agent)) {
		ibdev_warn(ibdev, "no QP0 agent, the SMA sends no traps: %ld\n",
			   PTR_ERR(agent));
		return PTR_ERR(agent);
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	sdev->ib_trap.agent = agent;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return 0;
}

/*
 * Before the MAD layer closes the port: stop the traps, then unregister
 * the agent, which flushes what it still holds through the send handler.
 */
static void scire_ib_trap_remove(struct ib_device *ibdev, void *client_data)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	struct scire_ib_trap *trap = &sdev->ib_trap;
	struct ib_mad_agent *agent;
	unsigned long flags;
	int i;

	spin_lock_irqsave(&sdev->port_lock, flags);
	agent = trap->agent;
	trap->agent = NULL;
	for (i = 0; i < SCIRE_IB_TRAP_KINDS; i++)
		trap->slot[i].tid = 0;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	for (i = 0; i < SCIRE_IB_TRAP_KINDS; i++)
		cancel_delayed_work_sync(&trap->slot[i].work);
	if (agent)
		ib_unregister_mad_agent(agent);
}

/*
 * Registered after ib_core's MAD client, so the core adds it to a device
 * after the MAD layer and removes it before (clients go in LIFO order).
 */
static struct ib_client scire_ib_trap_client = {
	.name = "scire_ib_trap",
	.add = scire_ib_trap_add,
	.remove = scire_ib_trap_remove,
};

/**
 * scire_ib_trap_register() - let scire_ib ports send traps.
 *
 * Context: module init, before any scire device exists.
 * Return: 0, or the error of ib_register_client().
 */
int scire_ib_trap_register(void)
{
	return ib_register_client(&scire_ib_trap_client);
}

/**
 * scire_ib_trap_unregister() - undo scire_ib_trap_register().
 *
 * Context: module exit, after every scire device is unregistered; sleeps.
 */
void scire_ib_trap_unregister(void)
{
	ib_unregister_client(&scire_ib_trap_client);
}
