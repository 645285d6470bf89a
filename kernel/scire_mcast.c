// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: multicast groups for UD QPs (IBA 10.5, 11.3; RoCEv2 annex A17:
 * a multicast GID is an IP multicast address).
 *
 * The first QP a device attaches to a group makes the device's netdev join
 * the IP group through the namespace's RoCEv2 socket, so the IP stack
 * accepts the group's packets on that netdev (and loops our own sends back
 * to us, as for any member). A packet to a multicast GID carries the
 * multicast QPN (0xffffff) and is handed to every QP attached to the group,
 * each receiving its own clone.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>

#include "scire.h"

/* The group @mgid of @sdev; under RCU or mcg_lock. */
static struct scire_mcg *scire_mcg_find(struct scire_dev *sdev,
					const union ib_gid *mgid)
{
	struct scire_mcg *mcg;

	list_for_each_entry_rcu(mcg, &sdev->mcg_list, node,
				lockdep_is_held(&sdev->mcg_lock))
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

static int scire_mcg_index(const struct scire_mcg *mcg,
			   const struct scire_qp *qp)
{
	u32 i;

	for (i = 0; i < mcg->num_qp; i++)
		if (mcg->qp[i] == qp)
			return i;
	return -1;
}

/* A private copy of @old to change and publish, or NULL. */
static struct scire_mcg *scire_mcg_copy(const struct scire_mcg *old)
{
	return kmemdup(old, sizeof(*old), GFP_KERNEL);
}

/* Publish @new in place of @old (either may be NULL). mcg_lock held. */
static void scire_mcg_replace(struct scire_dev *sdev, struct scire_mcg *old,
			      struct scire_mcg *new)
{
	if (old && new)
		list_replace_rcu(&old->node, &new->node);
	else if (new)
		list_add_tail_rcu(&new->node, &sdev->mcg_list);
	else if (old)
		list_del_rcu(&old->node);
	if (old)
		kfree_rcu(old, rcu);
}

static bool scire_mcast_qp_ok(struct ib_qp *ibqp, union ib_gid *gid)
{
	return ibqp->qp_type == IB_QPT_UD &&
	       rdma_is_multicast_addr((struct in6_addr *)gid);
}

/**
 * scire_attach_mcast() - attach a UD QP to a multicast group (IBA 11.3.1).
 * @ibqp: a UD QP.
 * @gid: the group's GID: an IPv4-mapped IPv4 multicast address or an IPv6
 *	 multicast address (RoCEv2).
 * @lid: ignored (RoCE has no LIDs).
 *
 * The first attachment to a group joins the IP group on the device's
 * netdev.
 *
 * Context: process context, may sleep (takes the RTNL to join).
 * Return: 0; -EINVAL for a QP that is not UD or a GID that is not
 * multicast; -EEXIST if the QP is attached to the group already; -ENOMEM,
 * also past SCIRE_MAX_MCG groups, SCIRE_MAX_MCG_QP QPs in the group or
 * SCIRE_MAX_MCG_ATTACH attachments; errors of joining the IP group.
 */
int scire_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct scire_dev *sdev = to_sdev(ibqp->device);
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_mcg *old, *new;
	int ret;

	if (!scire_mcast_qp_ok(ibqp, gid))
		return -EINVAL;

	mutex_lock(&sdev->mcg_lock);
	old = scire_mcg_find(sdev, gid);
	ret = -EEXIST;
	if (old && scire_mcg_index(old, qp) >= 0)
		goto out;
	ret = -ENOMEM;
	if (sdev->num_mcg_attach >= SCIRE_MAX_MCG_ATTACH ||
	    (old && old->num_qp >= SCIRE_MAX_MCG_QP) ||
	    (!old && sdev->num_mcg >= SCIRE_MAX_MCG))
		goto out;
	new = old ? scire_mcg_copy(old) : kmalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		goto out;
	if (!old) {
		new->mgid = *gid;
		new->num_qp = 0;
		ret = scire_net_mc_join(sdev, gid, true);
		if (ret) {
			kfree(new);
			goto out;
		}
		sdev->num_mcg++;
	}
	new->qp[new->num_qp++] = qp;
	sdev->num_mcg_attach++;
	scire_mcg_replace(sdev, old, new);
	ret = 0;
out:
	mutex_unlock(&sdev->mcg_lock);
	return ret;
}

/**
 * scire_detach_mcast() - detach a UD QP from a multicast group
 * (IBA 11.3.2).
 * @ibqp: the QP.
 * @gid: the group's GID.
 * @lid: ignored.
 *
 * The last detachment leaves the IP group. Packets already handed to the
 * QP may still complete on it.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL if the QP is not attached to the group; -ENOMEM.
 */
int scire_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct scire_dev *sdev = to_sdev(ibqp->device);
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_mcg *old, *new = NULL;
	int ret = -EINVAL;
	int i;

	mutex_lock(&sdev->mcg_lock);
	old = scire_mcg_find(sdev, gid);
	i = old ? scire_mcg_index(old, qp) : -1;
	if (i < 0)
		goto out;
	if (old->num_qp > 1) {
		ret = -ENOMEM;
		new = scire_mcg_copy(old);
		if (!new)
			goto out;
		new->qp[i] = new->qp[--new->num_qp];
	} else {
		/* Nothing to do about a failure to leave: the group is gone. */
		scire_net_mc_join(sdev, gid, false);
		sdev->num_mcg--;
	}
	sdev->num_mcg_attach--;
	scire_mcg_replace(sdev, old, new);
	ret = 0;
out:
	mutex_unlock(&sdev->mcg_lock);
	return ret;
}

/**
 * scire_mcast_rcv() - hand a multicast packet to the QPs attached to its
 * group.
 * @sdev: the receiving device.
 * @skb: a validated UD packet to the multicast QPN, parsed into
 *	 scire_pkt(skb); consumed.
 * @mgid: the packet's destination GID.
 *
 * Each attached QP gets a clone (the receive path only reads the packet).
 * A group this device has not joined gets nothing.
 *
 * Context: softirq or loopback sender, BHs off, under RCU.
 */
void scire_mcast_rcv(struct scire_dev *sdev, struct sk_buff *skb,
		     const union ib_gid *mgid)
{
	struct scire_qp *targets[SCIRE_MAX_MCG_QP];
	struct scire_mcg *mcg;
	struct sk_buff *copy;
	u32 n = 0, i;

	mcg = scire_mcg_find(sdev, mgid);
	if (mcg)
		for (i = 0; i < mcg->num_qp; i++)
			if (refcount_inc_not_zero(&mcg->qp[i]->ref))
				targets[n++] = mcg->qp[i];

	for (i = 0; i < n; i++) {
		copy = i + 1 < n ? skb_clone(skb, GFP_ATOMIC) : skb;
		if (copy)
			scire_qp_rcv(targets[i], copy, NULL);
		scire_qp_put(targets[i]);
	}
	if (!n)
		kfree_skb(skb);
}
