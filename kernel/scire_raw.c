// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: raw Ethernet QPs (IB_QPT_RAW_PACKET) and the flow steering that
 * feeds them (ibv_create_flow()), on a RoCE device.
 *
 * A raw packet QP sends whole Ethernet frames, as posted, out of the
 * device's netdev, and receives the frames its flows match. The frames
 * reach it through a packet handler on the netdev (ETH_P_ALL, as a packet
 * socket sees them), which is installed while the device has a flow. A
 * NIC's steering takes a matched frame away from the kernel's stack; here
 * the stack still gets its own copy, as a sniffer would leave it.
 *
 * Which flows get a frame, as a NIC's steering table decides it:
 *  - NORMAL flows whose specs all match, those of the best (lowest)
 *    priority that matches; a flow with IB_FLOW_ATTR_FLAGS_DONT_TRAP
 *    lets the next priority match too;
 *  - if no NORMAL flow took it, the ALL_DEFAULT flows, and for a
 *    multicast destination the MC_DEFAULT flows;
 *  - SNIFFER flows, every frame in and out of the port.
 * A QP gets one copy however many of its flows match. A frame a raw QP
 * sends is looped back to the other raw QPs of the device whose flows
 * match, before it leaves (a NIC's internal loopback), but not to the
 * sending QP itself.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "scire.h"

/* QPs one frame is delivered to at most; further matches are dropped. */
#define SCIRE_RAW_FANOUT	16
/*
 * Flows a device may have: each costs a walk step for every frame of the
 * netdev, and kernel memory, whoever holds CAP_NET_RAW.
 */
#define SCIRE_RAW_MAX_FLOWS	1024

/**
 * struct scire_flow - a steering rule of a raw packet QP.
 * @ibflow: the core's flow; the core fills it in after create_flow.
 * @entry: on scire_dev.raw.flows, ordered by @priority.
 * @qp: the QP the matched frames go to; the core holds it (usecnt) for as
 *	long as the flow exists.
 * @type: enum ib_flow_attr_type.
 * @priority: the flow's priority, lower first.
 * @dont_trap: IB_FLOW_ATTR_FLAGS_DONT_TRAP.
 * @num_specs: entries of @specs, all of which must match.
 * @specs: the specs.
 */
struct scire_flow {
	struct ib_flow ibflow;
	struct list_head entry;
	struct scire_qp *qp;
	enum ib_flow_attr_type type;
	u16 priority;
	bool dont_trap;
	u8 num_specs;
	union ib_flow_spec specs[IB_FLOW_SPEC_SUPPORT_LAYERS];
};

static struct scire_flow *to_sflow(struct ib_flow *ibflow)
{
	return container_of(ibflow, struct scire_flow, ibflow);
}

/* (a ^ val) & mask is zero in each of @n bytes. */
static bool scire_raw_masked_eq(const void *a, const void *val,
				const void *mask, size_t n)
{
	const u8 *x = a, *v = val, *m = mask;
	size_t i;

	for (i = 0; i < n; i++)
		if ((x[i] ^ v[i]) & m[i])
			return false;
	return true;
}

/*
 * Parse the headers of the frame in @skb whose Ethernet header is at
 * skb->data + @base (@base is 0, or negative for a received frame whose
 * header was pulled; that header is in the linear part). The VLAN tag is
 * inline or in skb->vlan_tci.
 */
static void scire_raw_parse(const struct sk_buff *skb, int base,
			    struct scire_raw_frame *f)
{
	struct ethhdr ethb;
	const struct ethhdr *eth;
	int off = base + ETH_HLEN;
	__be16 proto;

	memset(f, 0, sizeof(*f));
	eth = skb_header_pointer(skb, base, sizeof(ethb), &ethb);
	if (!eth)
		return;
	ether_addr_copy(f->eth.dst_mac, eth->h_dest);
	ether_addr_copy(f->eth.src_mac, eth->h_source);
	proto = eth->h_proto;
	if (skb_vlan_tag_present(skb)) {
		f->vlan = true;
		f->eth.vlan_tag = htons(skb_vlan_tag_get(skb));
	} else if (eth_type_vlan(proto)) {
		struct vlan_hdr vb;
		const struct vlan_hdr *vh;

		vh = skb_header_pointer(skb, off, sizeof(vb), &vb);
		if (!vh)
			return;
		f->vlan = true;
		f->eth.vlan_tag = vh->h_vlan_TCI;
		proto = vh->h_vlan_encapsulated_proto;
		off += VLAN_HLEN;
	}
	/* As a NIC's steering reads it: the EtherType of the L3 header. */
	f->eth.ether_type = proto;

	if (proto == htons(ETH_P_IP)) {
		struct iphdr ib;
		const struct iphdr *ip;

		ip = skb_header_pointer(skb, off, sizeof(ib), &ib);
		if (!ip || ip->ihl < 5)
			return;
		f->ipv4 = true;
		f->ip4.src_ip = ip->saddr;
		f->ip4.dst_ip = ip->daddr;
		f->ip4.proto = ip->protocol;
		f->ip4.tos = ip->tos;
		f->ip4.ttl = ip->ttl;
		f->ip4.flags = ntohs(ip->frag_off) >> 13;
		/* Only a first fragment carries the L4 ports. */
		if (ip->frag_off & htons(IP_OFFSET))
			return;
		f->l4 = ip->protocol;
		off += ip->ihl * 4;
	} else if (proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr ib;
		const struct ipv6hdr *ip;

		ip = skb_header_pointer(skb, off, sizeof(ib), &ib);
		if (!ip)
			return;
		f->ipv6 = true;
		memcpy(f->ip6.src_ip, &ip->saddr, sizeof(f->ip6.src_ip));
		memcpy(f->ip6.dst_ip, &ip->daddr, sizeof(f->ip6.dst_ip));
		f->ip6.flow_label = ip6_flowlabel(ip);
		f->ip6.next_hdr = ip->nexthdr;
		f->ip6.traffic_class = ip6_tclass(ip6_flowinfo(ip));
		f->ip6.hop_limit = ip->hop_limit;
		/* Extension headers are not walked: the ports of the first. */
		f->l4 = ip->nexthdr;
		off += sizeof(*ip);
	} else {
		return;
	}

	if (f->l4 == IPPROTO_TCP || f->l4 == IPPROTO_UDP) {
		__be16 pb[2];
		const __be16 *p;

		/* Source port first on the wire, in both TCP and UDP. */
		p = skb_header_pointer(skb, off, sizeof(pb), pb);
		if (!p) {
			f->l4 = 0;
			return;
		}
		f->ports.src_port = p[0];
		f->ports.dst_port = p[1];
	} else {
		f->l4 = 0;
	}
}

/* Bytes of a filter that carry fields (not its tail padding). */
#define SCIRE_RAW_ETH_LEN	offsetofend(struct ib_flow_eth_filter, vlan_tag)
#define SCIRE_RAW_IP4_LEN	offsetofend(struct ib_flow_ipv4_filter, flags)
#define SCIRE_RAW_IP6_LEN	offsetofend(struct ib_flow_ipv6_filter, hop_limit)
#define SCIRE_RAW_PORTS_LEN	offsetofend(struct ib_flow_tcp_udp_filter, src_port)

static bool scire_raw_spec_match(const union ib_flow_spec *s,
				 const struct scire_raw_frame *f)
{
	switch (s->type) {
	case IB_FLOW_SPEC_ETH:
		/* A VLAN ID in the mask asks for a tagged frame. */
		if (s->eth.mask.vlan_tag && !f->vlan)
			return false;
		return scire_raw_masked_eq(&f->eth, &s->eth.val, &s->eth.mask,
					   SCIRE_RAW_ETH_LEN);
	case IB_FLOW_SPEC_IPV4:
		return f->ipv4 &&
		       scire_raw_masked_eq(&f->ip4, &s->ipv4.val, &s->ipv4.mask,
					   SCIRE_RAW_IP4_LEN);
	case IB_FLOW_SPEC_IPV6:
		return f->ipv6 &&
		       scire_raw_masked_eq(&f->ip6, &s->ipv6.val, &s->ipv6.mask,
					   SCIRE_RAW_IP6_LEN);
	case IB_FLOW_SPEC_TCP:
	case IB_FLOW_SPEC_UDP:
		if (f->l4 != (s->type == IB_FLOW_SPEC_TCP ? IPPROTO_TCP :
			      IPPROTO_UDP))
			return false;
		return scire_raw_masked_eq(&f->ports, &s->tcp_udp.val,
					   &s->tcp_udp.mask, SCIRE_RAW_PORTS_LEN);
	default:
		return false;
	}
}

static bool scire_raw_flow_match(const struct scire_flow *flow,
				 const struct scire_raw_frame *f)
{
	unsigned int i;

	for (i = 0; i < flow->num_specs; i++)
		if (!scire_raw_spec_match(&flow->specs[i], f))
			return false;
	return true;
}

/* The QPs a frame goes to, each once. */
struct scire_raw_targets {
	struct scire_qp *qp[SCIRE_RAW_FANOUT];
	unsigned int n;
	bool overflow;
};

static void scire_raw_target_add(struct scire_raw_targets *t,
				 struct scire_qp *qp)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->qp[i] == qp)
			return;
	if (t->n == SCIRE_RAW_FANOUT) {
		t->overflow = true;
		return;
	}
	t->qp[t->n++] = qp;
}

/*
 * Pick the flows that take a frame (see the top of the file). @outgoing:
 * a frame the stack sends, which only sniffers see. @sender: a raw QP
 * whose own frame this is; it is not looped back to itself.
 */
static void scire_raw_select(struct scire_dev *sdev,
			     const struct scire_raw_frame *f, bool outgoing,
			     const struct scire_qp *sender,
			     struct scire_raw_targets *t)
{
	struct scire_flow *flow;
	bool taken = false, trapped = false;
	int level = -1;

	list_for_each_entry_rcu(flow, &sdev->raw.flows, entry) {
		if (flow->qp == sender)
			continue;
		switch (flow->type) {
		case IB_FLOW_ATTR_SNIFFER:
			/* Frames of raw QPs reach sniffers as they leave. */
			if (!sender)
				scire_raw_target_add(t, flow->qp);
			continue;
		case IB_FLOW_ATTR_NORMAL:
			break;
		default:
			continue;
		}
		if (outgoing)
			continue;
		/* The list is in priority order: a trapping level ends it. */
		if (trapped && flow->priority != level)
			continue;
		if (!scire_raw_flow_match(flow, f))
			continue;
		level = flow->priority;
		taken = true;
		if (!flow->dont_trap)
			trapped = true;
		scire_raw_target_add(t, flow->qp);
	}
	if (taken || outgoing)
		return;
	list_for_each_entry_rcu(flow, &sdev->raw.flows, entry) {
		if (flow->qp == sender)
			continue;
		if (flow->type == IB_FLOW_ATTR_ALL_DEFAULT ||
		    (flow->type == IB_FLOW_ATTR_MC_DEFAULT &&
		     is_multicast_ether_addr(f->eth.dst_mac)))
			scire_raw_target_add(t, flow->qp);
	}
}

/*
 * Hand a copy of the frame in @skb, whose Ethernet header is @hdr bytes
 * before skb->data, to each raw QP the flows pick. @skb itself is left as
 * it is: it may be shared with other packet handlers. Context: RCU read
 * side held by the caller; @bh: BHs are disabled (see scire_qp_rcv()).
 */
static void scire_raw_deliver(struct scire_dev *sdev, struct sk_buff *skb,
			      int hdr, bool outgoing,
			      const struct scire_qp *sender, bool bh)
{
	struct scire_raw_targets t = { .n = 0 };
	struct scire_raw_frame f;
	unsigned int i;

	scire_raw_parse(skb, -hdr, &f);
	scire_raw_select(sdev, &f, outgoing, sender, &t);
	if (t.overflow)
		scire_count(sdev, SCIRE_CNT_RX_DROPS, 1);
	for (i = 0; i < t.n; i++) {
		struct scire_qp *qp = t.qp[i];
		struct sk_buff *copy;

		if (!refcount_inc_not_zero(&qp->ref->count))
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		if (copy)
			__skb_push(copy, hdr);
		/* The receive WQE gets the tag where the wire had it. */
		if (copy && skb_vlan_tag_present(copy))
			copy = __vlan_hwaccel_push_inside(copy);
		if (!copy) {
			scire_count(sdev, SCIRE_CNT_RX_DROPS, 1);
			scire_qp_put(qp);
			continue;
		}
		memset(scire_pkt(copy), 0, sizeof(struct scire_pkt));
		scire_pkt(copy)->sdev = sdev;
		scire_pkt(copy)->paylen = copy->len;
		/* An RSS QP spreads its frames over its table's WQs. */
		if (qp->rss)
			scire_rss_deliver(qp, copy, &f);
		else
			scire_qp_rcv(qp, copy, NULL, bh);
		scire_qp_put(qp);
	}
}

/* The netdev's packet handler, installed while the device has a flow. */
static int scire_raw_tap(struct sk_buff *skb, struct net_device *ndev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct scire_dev *sdev = container_of(pt, struct scire_dev, raw.tap);
	bool outgoing = skb->pkt_type == PACKET_OUTGOING;
	int hdr = 0;

	/*
	 * A received frame's Ethernet header was pulled; an outgoing one
	 * starts at skb->data (as packet sockets read them). The copies
	 * start at the header.
	 */
	if (!outgoing) {
		if (!skb_mac_header_was_set(skb))
			goto out;
		hdr = skb->data - skb_mac_header(skb);
	}
	if (hdr >= 0 && hdr <= skb_headroom(skb) &&
	    skb->len + hdr >= ETH_HLEN) {
		rcu_read_lock();
		scire_raw_deliver(sdev, skb, hdr, outgoing, NULL, true);
		rcu_read_unlock();
	}
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/*
 * Check one spec of a new flow and keep it in @s. The core built it from
 * the user's (kern_spec_to_ib_spec()), in its own layout for the type.
 */
static int scire_raw_spec_take(const union ib_flow_spec *ib,
			       union ib_flow_spec *s)
{
	switch (ib->type) {
	case IB_FLOW_SPEC_ETH:
		s->eth = ib->eth;
		return 0;
	case IB_FLOW_SPEC_IPV4:
		s->ipv4 = ib->ipv4;
		return 0;
	case IB_FLOW_SPEC_IPV6:
		s->ipv6 = ib->ipv6;
		return 0;
	case IB_FLOW_SPEC_TCP:
	case IB_FLOW_SPEC_UDP:
		s->tcp_udp = ib->tcp_udp;
		return 0;
	default:
		/* Tunnels, inner headers, ESP, MPLS, actions: not offered. */
		return -EOPNOTSUPP;
	}
}

/* Insert @flow after every flow of its priority or better. */
static void scire_raw_flow_link(struct scire_dev *sdev,
				struct scire_flow *flow)
{
	struct scire_flow *pos;

	list_for_each_entry(pos, &sdev->raw.flows, entry) {
		if (pos->priority > flow->priority) {
			list_add_tail_rcu(&flow->entry, &pos->entry);
			return;
		}
	}
	list_add_tail_rcu(&flow->entry, &sdev->raw.flows);
}

/**
 * scire_create_flow() - steer received frames to a raw packet QP
 * (ibv_create_flow()).
 * @ibqp: a raw packet QP of a RoCE device.
 * @attr: the flow; the core has checked the caller's CAP_NET_RAW, the
 *	  port, the flag bits and the size of each spec.
 * @udata: nothing is passed either way.
 *
 * Specs: ETH (destination and source MAC, EtherType of the L3 header,
 * VLAN tag), IPV4 (addresses, protocol, TOS, TTL, flags), IPV6 (addresses,
 * flow label, next header, traffic class, hop limit), TCP and UDP (ports);
 * each compared under its mask, all of a flow's specs together. Types
 * NORMAL, ALL_DEFAULT, MC_DEFAULT (no specs) and SNIFFER (no specs);
 * DONT_TRAP on NORMAL flows.
 *
 * Context: process context; takes the device's raw.lock, and on the
 * first flow installs the netdev's packet handler.
 * Return: the flow; ERR_PTR(-EOPNOTSUPP) for a QP that is not raw packet,
 * an InfiniBand port, an egress flow or a spec type not offered;
 * -EINVAL for specs on a default or sniffer flow, or a non-empty @udata;
 * -ENOMEM, also when the device has SCIRE_RAW_MAX_FLOWS flows.
 */
struct ib_flow *scire_create_flow(struct ib_qp *ibqp,
				  struct ib_flow_attr *attr,
				  struct ib_udata *udata)
{
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_dev *sdev = qp->sdev;
	const union ib_flow_spec *ib = attr->flows;
	struct scire_flow *flow;
	unsigned int i;
	int ret;

	if (ibqp->qp_type != IB_QPT_RAW_PACKET || sdev->link != SCIRE_LINK_ROCE ||
	    (attr->flags & IB_FLOW_ATTR_FLAGS_EGRESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (!scire_udata_in_ok(udata) ||
	    attr->num_of_specs > IB_FLOW_SPEC_SUPPORT_LAYERS)
		return ERR_PTR(-EINVAL);
	switch (attr->type) {
	case IB_FLOW_ATTR_NORMAL:
		break;
	case IB_FLOW_ATTR_ALL_DEFAULT:
	case IB_FLOW_ATTR_MC_DEFAULT:
	case IB_FLOW_ATTR_SNIFFER:
		if (attr->num_of_specs)
			return ERR_PTR(-EINVAL);
		break;
	default:
		return ERR_PTR(-EOPNOTSUPP);
	}

	flow = kzalloc(sizeof(*flow), GFP_KERNEL);
	if (!flow)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < attr->num_of_specs; i++) {
		ret = scire_raw_spec_take(ib, &flow->specs[i]);
		if (ret)
			goto err;
		ib = (const void *)ib + ib->size;
	}
	flow->num_specs = attr->num_of_specs;
	flow->qp = qp;
	flow->type = attr->type;
	flow->priority = attr->priority;
	flow->dont_trap = attr->flags & IB_FLOW_ATTR_FLAGS_DONT_TRAP;

	mutex_lock(&sdev->raw.lock);
	if (sdev->raw.num_flows >= SCIRE_RAW_MAX_FLOWS) {
		mutex_unlock(&sdev->raw.lock);
		ret = -ENOMEM;
		goto err;
	}
	if (!sdev->raw.num_flows) {
		sdev->raw.tap.type = htons(ETH_P_ALL);
		sdev->raw.tap.dev = sdev->netdev;
		sdev->raw.tap.func = scire_raw_tap;
		dev_add_pack(&sdev->raw.tap);
	}
	sdev->raw.num_flows++;
	scire_raw_flow_link(sdev, flow);
	mutex_unlock(&sdev->raw.lock);
	return &flow->ibflow;

err:
	kfree(flow);
	return ERR_PTR(ret);
}

/**
 * scire_destroy_flow() - remove a flow (ibv_destroy_flow()).
 * @ibflow: a flow of scire_create_flow().
 *
 * Frames already steered to the QP stay there. Returns only when no
 * packet handler or raw send can still be looking at the flow: the core
 * lets the QP be destroyed once its flows are gone. With the device's
 * last flow the packet handler goes.
 *
 * Context: process context; takes the device's raw.lock.
 * Return: 0.
 */
int scire_destroy_flow(struct ib_flow *ibflow)
{
	struct scire_flow *flow = to_sflow(ibflow);
	struct scire_dev *sdev = flow->qp->sdev;

	mutex_lock(&sdev->raw.lock);
	list_del_rcu(&flow->entry);
	if (!--sdev->raw.num_flows)
		dev_remove_pack(&sdev->raw.tap);
	mutex_unlock(&sdev->raw.lock);
	/* After this, a reader that found the flow holds a QP reference. */
	synchronize_net();
	kfree(flow);
	return 0;
}

/**
 * scire_raw_send() - send a frame a raw packet QP posted.
 * @qp: the raw packet QP.
 * @skb: the frame, skb->data at its Ethernet header (at least ETH_HLEN
 *	 bytes, the VLAN tag inline if any); consumed.
 *
 * The frame goes first to the other raw QPs of the device whose flows
 * match, then out of the netdev as posted: no header is added or checked.
 *
 * Context: the QP's execution context (process context, or a softirq run
 * with BHs off).
 * Return: 0 when handed to the netdev (which may still drop it: counted
 * in tx_drops); -ENETDOWN when the netdev is down.
 */
int scire_raw_send(struct scire_qp *qp, struct sk_buff *skb)
{
	struct scire_dev *sdev = qp->sdev;
	struct net_device *ndev = sdev->netdev;
	u32 len = skb->len;

	if (!(ndev->flags & IFF_UP)) {
		kfree_skb(skb);
		scire_count(sdev, SCIRE_CNT_TX_DROPS, 1);
		return -ENETDOWN;
	}
	skb->dev = ndev;
	skb_reset_mac_header(skb);
	skb->protocol = eth_hdr(skb)->h_proto;
	/* Within the frame even when a short one claims a tag. */
	skb_set_network_header(skb, min_t(u32, len,
					  eth_type_vlan(skb->protocol) ?
					  VLAN_ETH_HLEN : ETH_HLEN));
	if (READ_ONCE(sdev->raw.num_flows)) {
		rcu_read_lock();
		scire_raw_deliver(sdev, skb, 0, false, qp, in_softirq());
		rcu_read_unlock();
	}
	if (dev_queue_xmit(skb) != NET_XMIT_SUCCESS) {
		scire_count(sdev, SCIRE_CNT_TX_DROPS, 1);
		return 0;
	}
	scire_count(sdev, SCIRE_CNT_RAW_TX_FRAMES, 1);
	scire_count(sdev, SCIRE_CNT_TX_BYTES, len);
	return 0;
}

/**
 * scire_raw_init() - prepare a device's flow list.
 * @sdev: the device, before registration.
 */
void scire_raw_init(struct scire_dev *sdev)
{
	mutex_init(&sdev->raw.lock);
	INIT_LIST_HEAD(&sdev->raw.flows);
}

/**
 * scire_raw_cleanup() - check a device's flows are gone.
 * @sdev: the device, after unregistration (the core destroyed the flows).
 */
void scire_raw_cleanup(struct scire_dev *sdev)
{
	WARN_ON(!list_empty(&sdev->raw.flows));
	mutex_destroy(&sdev->raw.lock);
}
