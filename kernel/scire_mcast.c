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
 * On a scire_ib port a group is an MGID and the multicast LID the SA gave
 * it (IBA 10.5, 15.2.5.17); there is no IP group to join. A packet to a
 * multicast LID goes to the link's neighbour and is looped back to this
 * port's members too (scire_pkt_send()); one received is matched by its
 * GRH's MGID, or by the MLID alone when it has no GRH.
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
		if (mcg->qp[i] == qp->ref)
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

/*
 * The group of @sdev that takes a packet to @mgid and @mlid: the one of
 * that MGID (and, on scire_ib, that MLID); without @mgid (scire_ib, no
 * GRH) the first one of that MLID after @from (NULL: the first).
 * Under RCU or mcg_lock.
 */
static struct scire_mcg *scire_mcg_match(struct scire_dev *sdev,
					 const union ib_gid *mgid, u16 mlid,
					 struct scire_mcg *from)
{
	struct scire_mcg *mcg;

	if (mgid) {
		mcg = from ? NULL : scire_mcg_find(sdev, mgid);
		return mcg && (!mlid || mcg->mlid == mlid) ? mcg : NULL;
	}
	/* Without @from, continue from the list head itself. */
	mcg = from ? from : container_of(&sdev->mcg_list, struct scire_mcg,
					 node);
	list_for_each_entry_continue_rcu(mcg, &sdev->mcg_list, node)
		if (mcg->mlid == mlid)
			return mcg;
	return NULL;
}

/*
 * A group's address: a multicast GID (RoCEv2: an IP multicast address);
 * on scire_ib also a multicast LID.
 */
static bool scire_mcast_qp_ok(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	if (ibqp->qp_type != IB_QPT_UD)
		return false;
	if (to_sdev(ibqp->device)->link == SCIRE_LINK_IB)
		return gid->raw[0] == 0xff && scire_lid_is_mcast(lid);
	return rdma_is_multicast_addr((struct in6_addr *)gid);
}

/**
 * scire_attach_mcast() - attach a UD QP to a multicast group (IBA 11.3.1).
 * @ibqp: a UD QP.
 * @gid: the group's GID: an IPv4-mapped IPv4 multicast address or an IPv6
 *	 multicast address (RoCEv2); on scire_ib an MGID (first byte 0xff).
 * @lid: scire_ib: the group's multicast LID (0xc000 to 0xfffe); ignored on
 *	 RoCE, which has no LIDs.
 *
 * The first attachment to a group joins the IP group on the device's
 * netdev (RoCE).
 *
 * Context: process context, may sleep (takes the RTNL to join).
 * Return: 0; -EINVAL for a QP that is not UD, a GID that is not multicast,
 * or on scire_ib a LID that is not multicast or not the one the group's
 * other QPs were attached with; -EEXIST if the QP is attached to the group
 * already; -ENOMEM,
 * also past SCIRE_MAX_MCG groups, SCIRE_MAX_MCG_QP QPs in the group or
 * SCIRE_MAX_MCG_ATTACH attachments; errors of joining the IP group.
 */
int scire_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct scire_dev *sdev = to_sdev(ibqp->device);
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_mcg *old, *new;
	bool ib = sdev->link == SCIRE_LINK_IB;
	int ret;

	if (!scire_mcast_qp_ok(ibqp, gid, lid))
		return -EINVAL;

	mutex_lock(&sdev->mcg_lock);
	old = scire_mcg_find(sdev, gid);
	ret = -EINVAL;
	if (old && ib && old->mlid != lid)
		goto out;
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
		new->mlid = ib ? lid : 0;
		new->num_qp = 0;
		ret = ib ? 0 : scire_net_mc_join(sdev, gid, true);
		if (ret) {
			kfree(new);
			goto out;
		}
		sdev->num_mcg++;
	}
	new->qp[new->num_qp++] = qp->ref;
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
 * @lid: ignored (a group is found by its GID).
 *
 * The last detachment leaves the IP group (RoCE). Packets already handed to the
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
		if (sdev->link != SCIRE_LINK_IB)
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
 * scire_mcast_member() - does a packet to a group reach a QP of this device?
 * @sdev: the device.
 * @mgid: the packet's MGID, or NULL (scire_ib without a GRH).
 * @mlid: scire_ib: the packet's multicast LID; 0 on RoCE.
 *
 * Context: any; takes RCU.
 * Return: true if a QP of @sdev is attached to a matching group.
 */
bool scire_mcast_member(struct scire_dev *sdev, const union ib_gid *mgid,
			u16 mlid)
{
	bool member;

	rcu_read_lock();
	member = !!scire_mcg_match(sdev, mgid, mlid, NULL);
	rcu_read_unlock();
	return member;
}

/*
 * A scire_ib multicast packet reaches only the group's QPs of its
 * partition (IBA 10.9.3): IPoIB's groups are per P_Key anyway, so a
 * mismatch is not counted as a violation. RoCE has one partition.
 */
static bool scire_mcast_pkey_ok(const struct scire_qp *qp,
				struct sk_buff *skb)
{
	const struct scire_bth *bth = (const struct scire_bth *)skb->data;

	if (!scire_pkt(skb)->ib)
		return true;
	return scire_ib_pkey_match(scire_qp_bth_pkey(qp, qp->pkey_index),
				   be16_to_cpu(bth->pkey));
}

/**
 * scire_mcast_rcv() - hand a multicast packet to the QPs attached to its
 * group.
 * @sdev: the receiving device.
 * @skb: a validated UD packet to the multicast QPN, parsed into
 *	 scire_pkt(skb); consumed.
 * @mgid: the packet's destination GID; NULL for a scire_ib packet without
 *	  a GRH, which goes to every group of @mlid.
 * @mlid: scire_ib: the packet's DLID, a multicast LID; 0 on RoCE.
 *
 * Each attached QP gets a clone (the receive path only reads the packet),
 * a QP attached to several matching groups one. A group this device has
 * not joined gets nothing; on scire_ib, a QP of another partition neither.
 *
 * Context: softirq or loopback sender, BHs off, under RCU.
 */
void scire_mcast_rcv(struct scire_dev *sdev, struct sk_buff *skb,
		     const union ib_gid *mgid, u16 mlid)
{
	struct scire_qp *targets[SCIRE_MAX_MCG_QP];
	struct scire_mcg *mcg = NULL;
	struct sk_buff *copy;
	u32 n = 0, i, j;

	while (n < ARRAY_SIZE(targets) &&
	       (mcg = scire_mcg_match(sdev, mgid, mlid, mcg))) {
		for (i = 0; i < mcg->num_qp && n < ARRAY_SIZE(targets); i++) {
			struct scire_qp_ref *ref = mcg->qp[i];

			/* A QP of several matching groups gets one copy. */
			for (j = 0; j < n && targets[j]->ref != ref; j++)
				;
			if (j < n || !refcount_inc_not_zero(&ref->count))
				continue;
			if (scire_mcast_pkey_ok(ref->qp, skb))
				targets[n++] = ref->qp;
			else
				scire_qp_put(ref->qp);
		}
	}

	for (i = 0; i < n; i++) {
		copy = i + 1 < n ? skb_clone(skb, GFP_ATOMIC) : skb;
		if (copy)
			scire_qp_rcv(targets[i], copy, NULL, false);
		scire_qp_put(targets[i]);
	}
	if (!n)
		kfree_skb(skb);
}
