// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the wire of a scire_ib port - whole InfiniBand packets (LRH,
 * optional GRH, BTH and the rest, ICRC) in UDP datagrams to one neighbour
 * (docs/scire_ib.md, "The link" and "Encapsulation").
 *
 * Each scire_ib device has a UDP socket of its own, bound to its netdev
 * and to the port ib_udp_port in the netdev's namespace. The neighbour is
 * the IPv4 address written to the port's scire_ib_peer attribute, or, in
 * the "learn" mode a port starts in, the sender of the first HELLO heard
 * while there is no live neighbour (such a port greets the netdev's
 * limited broadcast address until then). The two ends greet each other
 * with a HELLO once a second, and the link is up while the netdev has
 * carrier and the neighbour's last HELLO is at most three seconds old.
 * Datagrams from any other address are dropped: the link is point to
 * point. A neighbour written as ADDR:PORT (a scire-ibswitch, which may
 * share its host with a scire_ib port) is sent to at PORT and heard only
 * from it.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/crc32.h>
#include <linux/inet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_smi.h>
#include <rdma/ib_sysfs.h>

#include "scire.h"
#include "scire_trace.h"

static unsigned short scire_ib_udp_port = 4792;
module_param_named(ib_udp_port, scire_ib_udp_port, ushort, 0444);
MODULE_PARM_DESC(ib_udp_port,
		 "UDP port of the scire_ib encapsulation, in every namespace (default 4792; private to scire, not an IANA assignment)");

#define SCIRE_IB_VERSION	1
#define SCIRE_IB_TYPE_DATA	0
#define SCIRE_IB_TYPE_HELLO	1

#define SCIRE_IB_HELLO_PERIOD	HZ		/* a HELLO a second */
#define SCIRE_IB_HELLO_TIMEOUT	(3 * HZ)	/* link down after three */

#define SCIRE_LRH_LEN		8
#define SCIRE_GRH_LEN		40
#define SCIRE_LNH_LOCAL		2	/* IBA local: BTH follows the LRH */
#define SCIRE_LNH_GLOBAL	3	/* IBA global: GRH, then BTH */
#define SCIRE_GRH_NEXT_HDR	0x1b	/* IBA 8.3.1: an IBA transport header */
#define SCIRE_LID_PERMISSIVE	0xffff
#define SCIRE_VL15		15

/*
 * struct scire_ib_encap - the 4 bytes in front of every scire_ib datagram:
 * version in the high nibble of @ver_type, type in the low one.
 */
struct scire_ib_encap {
	u8 ver_type;
	u8 resv8;
	__be16 resv16;
};

/* struct scire_ib_hello - what a HELLO carries after the header. */
struct scire_ib_hello {
	__be64 port_guid;
	__be64 node_guid;
};

/* struct scire_lrh - the local route header (IBA 7.7). */
struct scire_lrh {
	u8 vl_lver;		/* VL(7:4) LVer(3:0) */
	u8 sl_lnh;		/* SL(7:4) resv(3:2) LNH(1:0) */
	__be16 dlid;
	__be16 pktlen;		/* resv(15:11) PktLen(10:0), 4-byte words */
	__be16 slid;
};

/* The room a packet needs in front of the BTH for the scire_ib headers. */
#define SCIRE_IB_HDR_ROOM	(sizeof(struct scire_ib_encap) + \
				 SCIRE_LRH_LEN + SCIRE_GRH_LEN)

static_assert(sizeof(struct scire_lrh) == SCIRE_LRH_LEN);
static_assert(sizeof(struct ib_grh) == SCIRE_GRH_LEN);

/**
 * scire_ib_headroom() - what a scire_ib packet needs in front of its BTH
 * beyond IP and UDP.
 *
 * Context: any.
 * Return: bytes.
 */
unsigned int scire_ib_headroom(void)
{
	return SCIRE_IB_HDR_ROOM;
}

/*
 * The ICRC of an IB packet (IBA 7.8.1) at @off in @skb: LRH, @grh_len
 * bytes of GRH, then @len - LRH - GRH bytes from the BTH on, linear or in
 * fragments. The variant fields count as ones: LRH VL; GRH TClass,
 * FlowLabel and HopLmt; BTH resv8a.
 */
static u32 scire_ib_icrc(struct sk_buff *skb, u32 off, u32 grh_len, u32 len)
{
	u8 buf[SCIRE_LRH_LEN + SCIRE_GRH_LEN + sizeof(struct scire_bth)];
	u32 hlen = SCIRE_LRH_LEN + grh_len + sizeof(struct scire_bth);
	struct scire_bth *bth;
	u32 crc;

	if (skb_copy_bits(skb, off, buf, hlen))
		return 0;
	buf[0] |= 0xf0;
	if (grh_len) {
		struct ib_grh *grh = (struct ib_grh *)(buf + SCIRE_LRH_LEN);

		grh->version_tclass_flow |= cpu_to_be32(0x0fffffff);
		grh->hop_limit = 0xff;
	}
	bth = (struct scire_bth *)(buf + SCIRE_LRH_LEN + grh_len);
	bth->qpn |= cpu_to_be32(SCIRE_BTH_RESV8A_MASK);
	crc = scire_crc32(~0U, buf, hlen);
	scire_skb_walk(skb, off + hlen, len - hlen, scire_net_crc_piece, &crc);
	return ~crc;
}

/* Is the link to the neighbour up? Caller holds sdev->port_lock. */
static bool scire_ib_neighbour_alive(const struct scire_dev *sdev)
{
	const struct scire_ib_port *ib = &sdev->ib;

	return ib->peer && ib->hello_seen &&
	       time_before(jiffies, ib->hello_seen + SCIRE_IB_HELLO_TIMEOUT);
}

/**
 * scire_ib_link_phys_state() - the PortPhysicalState the link gives.
 * @sdev: a scire_ib device.
 *
 * Disabled while the SM holds the port disabled or the netdev is down;
 * LinkUp while the netdev has carrier and the neighbour answers; Polling
 * otherwise (docs/scire_ib.md, "The link").
 *
 * Context: any; caller holds sdev->port_lock.
 * Return: an IB_PORT_PHYS_STATE_* value.
 */
u8 scire_ib_link_phys_state(const struct scire_dev *sdev)
{
	const struct net_device *ndev = sdev->netdev;

	lockdep_assert_held(&sdev->port_lock);
	if (sdev->ib.sm_disabled || !netif_running(ndev))
		return IB_PORT_PHYS_STATE_DISABLED;
	if (netif_carrier_ok(ndev) && scire_ib_neighbour_alive(sdev))
		return IB_PORT_PHYS_STATE_LINK_UP;
	return IB_PORT_PHYS_STATE_POLLING;
}

/* The device's socket, or NULL once it is closing. Caller holds RCU. */
static struct socket *scire_ib_sock_rcu(struct scire_dev *sdev)
{
	return rcu_dereference(sdev->ib_sock);
}

/*
 * The route to @peer through the device's netdev and its source address,
 * from this CPU's cache when that holds a route to @peer the FIB has not
 * changed since (dst_cache checks that), else looked up and cached, as
 * the tunnel drivers keep theirs: not a FIB lookup for every packet.
 * Caller has bottom halves off (the cache and the address it leads to
 * are this CPU's) and holds RCU. Returns a route holding a reference, or
 * an ERR_PTR.
 */
static struct rtable *scire_ib_route(struct scire_dev *sdev, struct net *net,
				     __be32 peer, __be32 *saddr)
{
	__be32 *daddr = this_cpu_ptr(sdev->ib_route_daddr);
	struct flowi4 fl = {
		.daddr = peer,
		.flowi4_oif = sdev->netdev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;

	if (*daddr == peer) {
		rt = dst_cache_get_ip4(&sdev->ib_route, saddr);
		if (rt)
			return rt;
	}
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return rt;
	dst_cache_set_ip4(&sdev->ib_route, &rt->dst, fl.saddr);
	*daddr = peer;
	*saddr = fl.saddr;
	return rt;
}

/*
 * Put the scire_ib header, UDP and IPv4 in front of @skb (skb->data at the
 * scire_ib header's place) and send it to the neighbour, at @peer_port or,
 * for 0, at ib_udp_port. Consumes @skb.
 */
static int scire_ib_udp_xmit(struct scire_dev *sdev, struct sk_buff *skb,
			     __be32 peer, u16 peer_port, u8 type, u16 src_port)
{
	struct scire_ib_encap *enc;
	struct socket *sock;
	struct rtable *rt;
	__be32 saddr;
	int ret = 0;

	enc = skb_push(skb, sizeof(*enc));
	enc->ver_type = SCIRE_IB_VERSION << 4 | type;
	enc->resv8 = 0;
	enc->resv16 = 0;

	rcu_read_lock();
	sock = scire_ib_sock_rcu(sdev);
	if (!sock) {
		ret = -ENETDOWN;
		goto drop;
	}
	/*
	 * With bottom halves off, as the tunnel drivers call it from their
	 * ndo_start_xmit: newer kernels' iptunnel_xmit() (Debian's 7.3; the
	 * IPv6 twin already in bookworm's 6.12.117) count their depth in
	 * the per-CPU transmit recursion counter, and a caller that migrates
	 * between the increment and the decrement leaves one CPU's count too
	 * high for good. Past 8, every transmit on that CPU through a device
	 * without a queue (veth, lo) is dropped as a "dead loop". The route
	 * cache is per CPU too.
	 */
	local_bh_disable();
	rt = scire_ib_route(sdev, sock_net(sock->sk), peer, &saddr);
	if (IS_ERR(rt)) {
		local_bh_enable();
		ret = PTR_ERR(rt);
		goto drop;
	}
	skb->ignore_df = 0;
	scire_udp_tunnel_xmit_skb(rt, sock->sk, skb, saddr, peer, 0,
				  ip4_dst_hoplimit(&rt->dst), htons(IP_DF),
				  htons(src_port),
				  htons(peer_port ?: scire_ib_udp_port),
				  false, false);
	local_bh_enable();
	rcu_read_unlock();
	return 0;

drop:
	rcu_read_unlock();
	scire_net_drop(sdev, skb, SCIRE_DROP_TX_ROUTE);
	return ret;
}

/**
 * scire_ib_grh_fill() - fill in the GRH of a scire_ib packet (IBA 8.3).
 * @sdev: the sending scire_ib device.
 * @av: an InfiniBand AV with a GRH (av->ib_grh).
 * @grh: the 40 bytes in front of the BTH.
 * @paylen: bytes after the GRH, from the BTH to the end of the ICRC.
 *
 * The SGID is the port's only GID: its subnet prefix and port GUID.
 *
 * Context: any; takes the port lock.
 */
void scire_ib_grh_fill(struct scire_dev *sdev, const struct scire_av *av,
		       struct ib_grh *grh, u32 paylen)
{
	unsigned long flags;

	grh->version_tclass_flow =
		cpu_to_be32(6U << 28 | (u32)av->traffic_class << 20 |
			    av->flow_label);
	grh->paylen = cpu_to_be16(paylen);
	grh->next_hdr = SCIRE_GRH_NEXT_HDR;
	grh->hop_limit = av->hop_limit;
	spin_lock_irqsave(&sdev->port_lock, flags);
	grh->sgid.global.subnet_prefix = sdev->ib.gid_prefix;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	grh->sgid.global.interface_id = scire_ib_port_guid(sdev);
	grh->dgid = av->dgid;
}

/**
 * scire_ib_xmit() - send a packet on a scire_ib port to its neighbour.
 * @qp: the sending QP.
 * @av: an InfiniBand AV (scire_av_init()): DLID, SL, path bits, GRH.
 * @skb: from scire_pkt_alloc(): skb->data is the BTH; linear with its pad,
 *	 or with the payload in fragments and no pad yet. Consumed.
 *
 * Builds the LRH (VL15 for QP0, VL0 otherwise; SLID the port's LID and
 * path bits, or the permissive LID while the port has none or the DLID is
 * permissive), the GRH when
 * the AV has one, pads and appends the ICRC (IBA 7.7, 8.3, 7.8.1), and
 * sends the packet in a UDP datagram to the neighbour. A zero-copy packet
 * is copied into one buffer first.
 *
 * Context: the QP's work item or softirq; no spinlock held.
 * Return: 0 when handed to the IP stack; -ENOLINK without a live
 * neighbour; -ENOMEM; routing errors. The packet is dropped and counted
 * in every error case.
 */
int scire_ib_xmit(struct scire_qp *qp, const struct scire_av *av,
		  struct sk_buff *skb)
{
	struct scire_dev *sdev = qp->sdev;
	u32 grh_len = av->ib_grh ? SCIRE_GRH_LEN : 0;
	bool qp0 = qp->ibqp.qp_type == IB_QPT_SMI;
	bool frags = skb_is_nonlinear(skb);
	struct scire_bth *bth;
	struct scire_lrh *lrh;
	unsigned long flags;
	u32 len, pad, words, icrc;
	int head, tail;
	u16 peer_port;
	__be32 peer;
	bool up;
	u16 lid;
	u8 lmc;

	spin_lock_irqsave(&sdev->port_lock, flags);
	peer = sdev->ib.peer;
	peer_port = sdev->ib.peer_port;
	lid = sdev->ib.lid;
	lmc = sdev->ib.lmc;
	up = sdev->ib.phys_state == IB_PORT_PHYS_STATE_LINK_UP;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (!up || !peer) {
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_NO_LINK);
		return -ENOLINK;
	}

	/* Our own writable copy: the requester may keep a clone to resend. */
	if (skb_linearize(skb))
		goto nomem;
	bth = (struct scire_bth *)skb->data;
	pad = frags ? scire_bth_pad(bth) : 0;
	head = sizeof(struct udphdr) + sizeof(struct iphdr) +
	       LL_RESERVED_SPACE(sdev->netdev) + SCIRE_IB_HDR_ROOM -
	       skb_headroom(skb);
	tail = pad + SCIRE_ICRC_SIZE - skb_tailroom(skb);
	if ((skb_cloned(skb) || head > 0 || tail > 0) &&
	    pskb_expand_head(skb, max(head, 0), max(tail, 0), GFP_ATOMIC))
		goto nomem;
	if (pad)
		skb_put_zero(skb, pad);
	len = skb->len;

	if (grh_len)
		scire_ib_grh_fill(sdev, av, skb_push(skb, SCIRE_GRH_LEN),
				  len + SCIRE_ICRC_SIZE);
	lrh = skb_push(skb, SCIRE_LRH_LEN);
	words = (SCIRE_LRH_LEN + grh_len + len + SCIRE_ICRC_SIZE) / 4;
	lrh->vl_lver = (qp0 ? SCIRE_VL15 : 0) << 4;
	lrh->sl_lnh = (av->sl & 0xf) << 4 |
		      (grh_len ? SCIRE_LNH_GLOBAL : SCIRE_LNH_LOCAL);
	lrh->dlid = cpu_to_be16(av->dlid);
	lrh->pktlen = cpu_to_be16(words & 0x7ff);
	/*
	 * To the permissive DLID (a directed-route SMP) the SLID is
	 * permissive too, as mthca and mlx4 send it: the answer's AV, made from
	 * this SLID, then goes back out the wire along the return path, not
	 * into this port's loopback when the route ends at this very port.
	 */
	lrh->slid = cpu_to_be16(lid && av->dlid != SCIRE_LID_PERMISSIVE ?
				lid | (av->src_path_bits & ((1U << lmc) - 1)) :
				SCIRE_LID_PERMISSIVE);
	icrc = scire_ib_icrc(skb, 0, grh_len, skb->len);
	put_unaligned_le32(icrc, skb_put(skb, SCIRE_ICRC_SIZE));

	scire_count(sdev, SCIRE_CNT_TX_PACKETS, 1);
	scire_count(sdev, SCIRE_CNT_TX_BYTES, len + SCIRE_ICRC_SIZE);
	return scire_ib_udp_xmit(sdev, skb, peer, peer_port, SCIRE_IB_TYPE_DATA,
				 qp->src_port);

nomem:
	scire_net_drop(sdev, skb, SCIRE_DROP_TX_NOMEM);
	return -ENOMEM;
}

/* Send a HELLO to the neighbour. Context: process context. */
static void scire_ib_hello_send(struct scire_dev *sdev, __be32 peer,
				u16 peer_port)
{
	unsigned int room = LL_RESERVED_SPACE(sdev->netdev) +
			    sizeof(struct iphdr) + sizeof(struct udphdr) +
			    sizeof(struct scire_ib_encap);
	struct scire_ib_hello *hello;
	struct sk_buff *skb;

	skb = alloc_skb(room + sizeof(*hello), GFP_KERNEL);
	if (!skb)
		return;
	skb_reserve(skb, room);
	hello = skb_put(skb, sizeof(*hello));
	hello->port_guid = scire_ib_port_guid(sdev);
	hello->node_guid = sdev->ibdev.node_guid;
	scire_ib_udp_xmit(sdev, skb, peer, peer_port, SCIRE_IB_TYPE_HELLO,
			  scire_ib_udp_port);
}

/*
 * Once a second: greet the neighbour, and notice when it stopped
 * answering. Runs only while the device is registered (the reference
 * keeps port events away from a device being torn down).
 */
static void scire_ib_hello_work(struct work_struct *work)
{
	struct scire_dev *sdev = container_of(to_delayed_work(work),
					      struct scire_dev, ib_hello);
	unsigned long flags;
	u16 peer_port;
	__be32 peer;

	if (!ib_device_try_get(&sdev->ibdev))
		return;
	spin_lock_irqsave(&sdev->port_lock, flags);
	peer = sdev->ib.peer;
	peer_port = sdev->ib.peer_port;
	/* Learning with no live neighbour: greet whoever is on the wire. */
	if (sdev->ib.learn && !scire_ib_neighbour_alive(sdev))
		peer = htonl(INADDR_BROADCAST);
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (peer && netif_running(sdev->netdev))
		scire_ib_hello_send(sdev, peer, peer_port);
	scire_ib_port_update(sdev);
	queue_delayed_work(system_wq, &sdev->ib_hello, SCIRE_IB_HELLO_PERIOD);
	ib_device_put(&sdev->ibdev);
}

/*
 * A HELLO from the neighbour, or in learn mode from @saddr while there is
 * no live neighbour: @saddr becomes the neighbour. Our own HELLOs, which
 * the IP stack loops back when they go to the broadcast address, are
 * recognised by the port GUID and ignored.
 */
static void scire_ib_hello_rcv(struct scire_dev *sdev, struct sk_buff *skb,
			       __be32 saddr)
{
	struct scire_ib_hello hello;
	unsigned long flags;
	bool was_alive;

	if (skb_copy_bits(skb, sizeof(struct scire_ib_encap), &hello,
			  sizeof(hello))) {
		scire_net_drop(sdev, skb, SCIRE_DROP_MALFORMED);
		return;
	}
	if (hello.port_guid == scire_ib_port_guid(sdev)) {
		consume_skb(skb);
		return;
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	was_alive = scire_ib_neighbour_alive(sdev);
	if (saddr != sdev->ib.peer) {
		if (!sdev->ib.learn || was_alive) {
			spin_unlock_irqrestore(&sdev->port_lock, flags);
			scire_net_drop(sdev, skb, SCIRE_DROP_NOT_NEIGHBOUR);
			return;
		}
		sdev->ib.peer = saddr;
		sdev->ib.peer_port = 0;
	}
	sdev->ib.hello_seen = jiffies | 1;
	sdev->ib.peer_guid = hello.port_guid;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	consume_skb(skb);
	if (!was_alive && ib_device_try_get(&sdev->ibdev)) {
		scire_ib_port_update(sdev);
		/* Answer at once, so the other end comes up as fast. */
		mod_delayed_work(system_wq, &sdev->ib_hello, 0);
		ib_device_put(&sdev->ibdev);
	}
}

/**
 * scire_ib_pkey_match() - may a packet with P_Key @pkey reach a holder of
 * P_Key @mine (IBA 10.9.3)?
 * @mine: a P_Key table entry; 0 (invalid) matches nothing.
 * @pkey: the BTH's P_Key.
 *
 * The base values (bits 14..0) must be equal, and a limited member (bit
 * 15 clear) only talks to a full member.
 *
 * Context: any.
 * Return: true if they match.
 */
bool scire_ib_pkey_match(u16 mine, u16 pkey)
{
	return (mine & 0x7fff) && (mine & 0x7fff) == (pkey & 0x7fff) &&
	       ((mine | pkey) & 0x8000);
}

/*
 * The index of the port's P_Key table entry @pkey matches (IBA 10.9.3),
 * or -1. Caller holds port_lock.
 */
static int scire_ib_pkey_find(const struct scire_ib_port *ib, u16 pkey)
{
	int i;

	for (i = 0; i < SCIRE_IB_PKEY_TBL_LEN; i++)
		if (scire_ib_pkey_match(ib->pkeys[i], pkey))
			return i;
	return -1;
}

/**
 * scire_qp_bth_pkey() - the P_Key @qp's packets carry in their BTH.
 * @qp: any QP.
 * @pkey_index: the QP's P_Key index, or a GSI send's; below the device's
 *		scire_pkey_tbl_len().
 *
 * On scire_ib, the entry of the port's P_Key table, as the SM set it now;
 * 0 for an invalid entry, which the receiver refuses. QP0 and RoCE (one
 * partition, rxe's wire format) send the default P_Key.
 *
 * Context: any; reads the table without port_lock (a 16-bit entry is
 * read whole).
 */
u16 scire_qp_bth_pkey(const struct scire_qp *qp, u16 pkey_index)
{
	const struct scire_dev *sdev = qp->sdev;

	if (sdev->link != SCIRE_LINK_IB || qp->ibqp.qp_type == IB_QPT_SMI)
		return SCIRE_DEFAULT_PKEY;
	if (pkey_index >= SCIRE_IB_PKEY_TBL_LEN)
		return 0;
	return READ_ONCE(sdev->ib.pkeys[pkey_index]);
}

/*
 * Trap 257 or 258 (IBA 14.2.5.1) for a packet that came with a bad P_Key
 * or Q_Key: its LIDs, the key, its SL and source QP (0 where the packet
 * does not say: only UD's DETH names it), its destination QP and, with a
 * GRH, its GIDs. Caller holds port_lock.
 */
static void scire_ib_key_trap(struct scire_dev *sdev, __be16 trap_num,
			      u16 slid, u16 dlid, u32 key, u8 sl, u32 src_qpn,
			      u32 dest_qpn, const struct ib_grh *grh)
{
	struct ib_mad_notice_attr ntc = {};
	typeof(ntc.details.ntc_257_258) *d = &ntc.details.ntc_257_258;

	ntc.trap_num = trap_num;
	d->lid1 = cpu_to_be16(slid);
	d->lid2 = cpu_to_be16(dlid);
	d->key = cpu_to_be32(key);
	d->sl_qp1 = cpu_to_be32((u32)sl << 28 | (src_qpn & 0xffffff));
	d->qp2 = cpu_to_be32(dest_qpn & 0xffffff);
	if (grh) {
		d->gid1 = grh->sgid;
		d->gid2 = grh->dgid;
	}
	scire_ib_trap_security(sdev, &ntc);
}

/*
 * A data packet whose P_Key the port does not hold: count it in
 * P_KeyViolations and tell the SM. Caller holds port_lock and has pulled
 * the headers through the BTH's extension headers.
 */
static void scire_ib_pkey_violation(struct scire_dev *sdev,
				    const struct scire_lrh *lrh,
				    const struct ib_grh *grh,
				    const struct scire_bth *bth)
{
	const struct scire_opcode_info *info = &scire_opcode[bth->opcode];
	u32 src_qpn = 0;

	if (sdev->ib.pkey_violations != U16_MAX)
		sdev->ib.pkey_violations++;
	if (info->mask & SCIRE_M_DETH) {
		const struct scire_deth *deth =
			(const void *)bth + info->offset[SCIRE_H_DETH];

		src_qpn = be32_to_cpu(deth->sqp);
	}
	scire_ib_key_trap(sdev, IB_NOTICE_TRAP_BAD_PKEY, be16_to_cpu(lrh->slid),
			  be16_to_cpu(lrh->dlid), be16_to_cpu(bth->pkey),
			  lrh->sl_lnh >> 4, src_qpn, scire_bth_qpn(bth), grh);
}

/**
 * scire_ib_qp_pkey_ok() - may a packet the port took reach @qp (IBA
 * 10.9.3)?
 * @qp: the QP the packet is for, of a scire_ib device.
 * @skb: the packet as scire_ib_data_rcv() handed it on: skb->data at the
 *	 BTH, its headers linear, the network header at the GRH when
 *	 scire_pkt()->ib_grh.
 *
 * The port's table held the packet's P_Key. An RC, UC or UD QP takes it
 * only if it also matches the QP's own P_Key; QP0 takes any, QP1 any the
 * table holds. A refusal counts a P_Key violation and tells the SM (trap
 * 257); the caller drops the packet.
 *
 * Context: softirq or process; takes sdev->port_lock on a refusal.
 * Return: true if @qp may take the packet.
 */
bool scire_ib_qp_pkey_ok(struct scire_qp *qp, struct sk_buff *skb)
{
	const struct scire_pkt *pkt = scire_pkt(skb);
	const struct scire_bth *bth = (const struct scire_bth *)skb->data;
	struct scire_dev *sdev = qp->sdev;
	const struct ib_grh *grh = NULL;
	u16 pkey = be16_to_cpu(bth->pkey);
	unsigned long flags;
	u32 src_qpn = 0;

	if (qp->ibqp.qp_type == IB_QPT_SMI || qp->ibqp.qp_type == IB_QPT_GSI ||
	    scire_ib_pkey_match(scire_qp_bth_pkey(qp, qp->pkey_index), pkey))
		return true;

	if (pkt->ib_grh)
		grh = (const struct ib_grh *)skb_network_header(skb);
	if (pkt->mask & SCIRE_M_DETH) {
		const struct scire_deth *deth =
			scire_pkt_hdr(skb, SCIRE_H_DETH);

		src_qpn = be32_to_cpu(deth->sqp);
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	if (sdev->ib.pkey_violations != U16_MAX)
		sdev->ib.pkey_violations++;
	scire_ib_key_trap(sdev, IB_NOTICE_TRAP_BAD_PKEY, pkt->slid,
			  sdev->ib.lid | pkt->dlid_path_bits, pkey, pkt->sl,
			  src_qpn, qp->ibqp.qp_num, grh);
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return false;
}

/**
 * scire_ib_qkey_violation() - a UD packet came to @qp with a Q_Key that is
 * not the QP's (IBA 10.2.4.4).
 * @qp: the UD or GSI QP the packet was for, of a scire_ib device.
 * @skb: the packet, as scire_ib_data_rcv() handed it on (network header
 *	 at the GRH when scire_pkt()->ib_grh).
 * @qkey: the Q_Key of its DETH.
 * @src_qpn: the source QP of its DETH.
 *
 * Counts the violation in PortInfo's Q_KeyViolations and tells the SM with
 * trap 258 (scire_ib_trap_security()). The caller drops the packet.
 *
 * Context: softirq or process; takes sdev->port_lock.
 */
void scire_ib_qkey_violation(struct scire_qp *qp, struct sk_buff *skb,
			     u32 qkey, u32 src_qpn)
{
	const struct scire_pkt *pkt = scire_pkt(skb);
	struct scire_dev *sdev = qp->sdev;
	const struct ib_grh *grh = NULL;
	unsigned long flags;

	if (pkt->ib_grh)
		grh = (const struct ib_grh *)skb_network_header(skb);
	spin_lock_irqsave(&sdev->port_lock, flags);
	if (sdev->ib.qkey_violations != U16_MAX)
		sdev->ib.qkey_violations++;
	scire_ib_key_trap(sdev, IB_NOTICE_TRAP_BAD_QKEY, pkt->slid,
			  sdev->ib.lid | pkt->dlid_path_bits, qkey, pkt->sl,
			  src_qpn, qp->ibqp.qp_num, grh);
	spin_unlock_irqrestore(&sdev->port_lock, flags);
}

/*
 * Receive a DATA datagram from the neighbour: skb->data is the scire_ib
 * header, @len bytes to the end of the ICRC. Checks the LRH (IBA 7.7: LVer
 * 0, the length, VL15 for QP0 only and VL0 the only data VL, a DLID of this
 * port or a multicast LID this port has a member of, the permissive LID in
 * DLID or SLID for QP0 only), the GRH if any, the ICRC, the port state and
 * the P_Key, and hands the packet to its QP, or a multicast one to the
 * group's QPs, with the LRH's SLID, SL and DLID path bits.
 */
static void scire_ib_data_rcv(struct scire_dev *sdev, struct sk_buff *skb,
			      u32 len)
{
	enum scire_drop_reason why = SCIRE_DROP_MALFORMED;
	const struct scire_opcode_info *info;
	u32 grh_len, hdr_len, pad, qpn, events = 0;
	union ib_gid mgid = {};
	struct scire_lrh *lrh;
	struct scire_bth *bth;
	struct scire_pkt *pkt;
	unsigned long flags;
	u16 dlid, slid, lid, mask;
	__le32 icrc_buf;
	const void *icrc;
	bool mine, mcast, mcast_qpn;
	int pkey_index = 0;
	u8 vl;

	__skb_pull(skb, sizeof(struct scire_ib_encap));
	len -= sizeof(struct scire_ib_encap);
	if (len < SCIRE_LRH_LEN + sizeof(*bth) + SCIRE_ICRC_SIZE ||
	    !pskb_may_pull(skb, SCIRE_LRH_LEN))
		goto drop;
	lrh = (struct scire_lrh *)skb->data;
	/* LVer 0 is the only link version there is. */
	if (lrh->vl_lver & 0xf)
		goto drop;
	switch (lrh->sl_lnh & 3) {
	case SCIRE_LNH_LOCAL:
		grh_len = 0;
		break;
	case SCIRE_LNH_GLOBAL:
		grh_len = SCIRE_GRH_LEN;
		break;
	default:
		goto drop;
	}
	if ((be16_to_cpu(lrh->pktlen) & 0x7ff) * 4 != len ||
	    len < SCIRE_LRH_LEN + grh_len + sizeof(*bth) + SCIRE_ICRC_SIZE ||
	    !pskb_may_pull(skb, SCIRE_LRH_LEN + grh_len + sizeof(*bth)))
		goto drop;
	lrh = (struct scire_lrh *)skb->data;
	if (grh_len) {
		struct ib_grh *grh = (struct ib_grh *)(lrh + 1);

		if (be32_to_cpu(grh->version_tclass_flow) >> 28 != 6 ||
		    grh->next_hdr != SCIRE_GRH_NEXT_HDR)
			goto drop;
	}
	bth = (struct scire_bth *)(skb->data + SCIRE_LRH_LEN + grh_len);
	info = &scire_opcode[bth->opcode];
	pad = scire_bth_pad(bth);
	hdr_len = SCIRE_LRH_LEN + grh_len + info->hdr_len;
	if (!(info->mask & SCIRE_M_VALID) ||
	    (bth->flags & SCIRE_BTH_TVER_MASK) ||
	    len < hdr_len + pad + SCIRE_ICRC_SIZE)
		goto drop;
	if (!pskb_may_pull(skb, hdr_len)) {
		why = SCIRE_DROP_NOMEM;
		goto drop;
	}
	lrh = (struct scire_lrh *)skb->data;
	bth = (struct scire_bth *)(skb->data + SCIRE_LRH_LEN + grh_len);

	icrc = skb_header_pointer(skb, len - SCIRE_ICRC_SIZE, SCIRE_ICRC_SIZE,
				  &icrc_buf);
	if (!icrc || scire_ib_icrc(skb, 0, grh_len, len - SCIRE_ICRC_SIZE) !=
	    get_unaligned_le32(icrc)) {
		why = SCIRE_DROP_ICRC;
		goto drop;
	}

	vl = lrh->vl_lver >> 4;
	dlid = be16_to_cpu(lrh->dlid);
	slid = be16_to_cpu(lrh->slid);
	qpn = scire_bth_qpn(bth);
	/* OperationalVLs is 1: VL0 is the only data VL there is. */
	if (vl != 0 && vl != SCIRE_VL15)
		goto drop;
	why = SCIRE_DROP_QPN;
	/*
	 * VL15 carries QP0's SMPs and nothing else (IBA 7.6.5), and the
	 * permissive LID is QP0's alone (IBA 9.6.1.4.1).
	 */
	if (vl == SCIRE_VL15 ? qpn != 0 : qpn == 0)
		goto drop;
	if (qpn != 0 && slid == SCIRE_LID_PERMISSIVE)
		goto drop;
	/*
	 * A multicast LID takes UD packets to the multicast QPN, and that
	 * QPN comes with nothing else (IBA 9.6.1.5.1, 10.5.2.1).
	 */
	mcast = scire_lid_is_mcast(dlid);
	mcast_qpn = qpn == IB_MULTICAST_QPN;
	if (mcast != mcast_qpn ||
	    (mcast && (bth->opcode & SCIRE_OP_TRANSPORT_MASK) != SCIRE_OP_UD))
		goto drop;
	if (grh_len)
		mgid = ((struct ib_grh *)(lrh + 1))->dgid;
	if (mcast)
		mcast = scire_mcast_member(sdev, grh_len ? &mgid : NULL, dlid);

	spin_lock_irqsave(&sdev->port_lock, flags);
	lid = sdev->ib.lid;
	mask = ~((1U << sdev->ib.lmc) - 1);
	mine = mcast || (lid && (dlid & mask) == lid) ||
	       (dlid == SCIRE_LID_PERMISSIVE && qpn == 0);
	why = SCIRE_DROP_DGID;
	if (mine && qpn != 0) {
		/* Data needs ARMED or ACTIVE; its arrival activates ARMED. */
		why = SCIRE_DROP_PORT_STATE;
		mine = sdev->port_state == IB_PORT_ARMED ||
		       sdev->port_state == IB_PORT_ACTIVE;
		pkey_index = mine ? scire_ib_pkey_find(&sdev->ib,
						       be16_to_cpu(bth->pkey)) : 0;
		if (pkey_index < 0) {
			scire_ib_pkey_violation(sdev, lrh, grh_len ?
						(struct ib_grh *)(lrh + 1) :
						NULL, bth);
			why = SCIRE_DROP_PKEY;
			mine = false;
		}
		if (mine && sdev->port_state == IB_PORT_ARMED)
			scire_ib_set_port_state(sdev, IB_PORT_ACTIVE,
						sdev->ib.phys_state, &events);
	}
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (events && ib_device_try_get(&sdev->ibdev)) {
		scire_ib_dispatch(sdev, events);
		ib_device_put(&sdev->ibdev);
	}
	if (!mine)
		goto drop;

	/* A UD receive copies the GRH from here (scire_resp_ud()). */
	skb_set_network_header(skb, SCIRE_LRH_LEN);
	pkt = scire_net_pkt_fill(skb, sdev, bth,
				 len - hdr_len - pad - SCIRE_ICRC_SIZE);
	pkt->ib = true;
	pkt->ib_grh = grh_len != 0;
	pkt->sl = lrh->sl_lnh >> 4;
	pkt->slid = slid;
	pkt->dlid_path_bits = dlid == SCIRE_LID_PERMISSIVE || mcast ? 0 :
			      dlid & ~mask;
	pkt->pkey_index = pkey_index;
	__skb_pull(skb, SCIRE_LRH_LEN + grh_len);
	if (pskb_trim(skb, info->hdr_len + pkt->paylen)) {
		why = SCIRE_DROP_NOMEM;
		goto drop;
	}
	skb_dst_drop(skb);
	scire_count(sdev, SCIRE_CNT_RX_PACKETS, 1);
	/* As scire_ib_xmit() counts them: from the BTH to the ICRC. */
	scire_count(sdev, SCIRE_CNT_RX_BYTES, len - SCIRE_LRH_LEN - grh_len);
	if (mcast)
		scire_mcast_rcv(sdev, skb, grh_len ? &mgid : NULL, dlid);
	else
		scire_net_rcv_qp(sdev, skb);
	return;

drop:
	scire_net_drop(sdev, skb, why);
}

/* encap_rcv of a scire_ib socket: skb->data is the UDP header. */
static int scire_ib_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	const struct scire_ib_encap *enc;
	struct scire_dev *sdev;
	unsigned long flags;
	__be32 peer, saddr;
	u16 peer_port;
	__be16 sport;
	u32 ulen, len;
	bool learn;
	u8 type;

	rcu_read_lock();
	sdev = rcu_dereference_sk_user_data(sk);
	if (!sdev) {
		kfree_skb(skb);
		goto out;
	}
	ulen = pskb_may_pull(skb, sizeof(struct udphdr) + sizeof(*enc)) ?
	       ntohs(udp_hdr(skb)->len) : 0;
	if (ulen < sizeof(struct udphdr) + sizeof(*enc) || ulen > skb->len) {
		scire_net_drop(sdev, skb, SCIRE_DROP_MALFORMED);
		goto out;
	}
	len = ulen - sizeof(struct udphdr);
	sport = udp_hdr(skb)->source;
	__skb_pull(skb, sizeof(struct udphdr));
	if (pskb_trim(skb, len)) {
		scire_net_drop(sdev, skb, SCIRE_DROP_NOMEM);
		goto out;
	}

	/*
	 * Point to point: only the neighbour is heard (from its UDP port too
	 * when one was configured: a switch sends from the one it listens
	 * on, a scire_ib port from any), and in learn mode a HELLO from
	 * anyone (scire_ib_hello_rcv() decides).
	 */
	spin_lock_irqsave(&sdev->port_lock, flags);
	peer = sdev->ib.peer;
	peer_port = sdev->ib.peer_port;
	learn = sdev->ib.learn;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	saddr = ip_hdr(skb)->saddr;
	enc = (const struct scire_ib_encap *)skb->data;
	type = enc->ver_type & 0xf;
	if ((!peer || saddr != peer ||
	     (peer_port && ntohs(sport) != peer_port)) &&
	    !(learn && type == SCIRE_IB_TYPE_HELLO &&
	      !ipv4_is_zeronet(saddr) && !ipv4_is_multicast(saddr) &&
	      !ipv4_is_lbcast(saddr) && !ipv4_is_loopback(saddr))) {
		scire_net_drop(sdev, skb, SCIRE_DROP_NOT_NEIGHBOUR);
		goto out;
	}
	if (enc->ver_type >> 4 != SCIRE_IB_VERSION) {
		scire_net_drop(sdev, skb, SCIRE_DROP_MALFORMED);
		goto out;
	}
	switch (type) {
	case SCIRE_IB_TYPE_HELLO:
		scire_ib_hello_rcv(sdev, skb, saddr);
		break;
	case SCIRE_IB_TYPE_DATA:
		scire_ib_data_rcv(sdev, skb, len);
		break;
	default:
		scire_net_drop(sdev, skb, SCIRE_DROP_MALFORMED);
		break;
	}
out:
	rcu_read_unlock();
	/* Consumed: nothing reaches the socket's queue. */
	return 0;
}

/**
 * scire_ib_net_open() - give a scire_ib device its socket and start the
 * HELLOs.
 * @sdev: a scire_ib device being created, not yet registered.
 *
 * Binds a UDP socket to sdev->netdev and ib_udp_port in the netdev's
 * namespace (IPv4). Binding to the device lets scire_ib ports on several
 * netdevs of one namespace share the port number. Allocates the route
 * cache (per CPU) the sends go through.
 *
 * Context: process context, may sleep.
 * Return: 0; -ENOMEM; -EADDRINUSE if the port is taken on that netdev;
 * other socket creation errors.
 */
int scire_ib_net_open(struct scire_dev *sdev)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.sk_user_data = sdev,
		.encap_type = 1,
		.encap_rcv = scire_ib_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.family = AF_INET,
		.local_udp_port = htons(scire_ib_udp_port),
		.bind_ifindex = sdev->netdev->ifindex,
	};
	struct socket *sock;
	int ret;

	sdev->ib_route_daddr = alloc_percpu(__be32);
	if (!sdev->ib_route_daddr)
		return -ENOMEM;
	ret = dst_cache_init(&sdev->ib_route, GFP_KERNEL);
	if (ret)
		return ret;
	ret = udp_sock_create(dev_net(sdev->netdev), &cfg, &sock);
	if (ret) {
		pr_warn("%s: cannot bind UDP port %u for scire_ib: %d\n",
			sdev->netdev->name, scire_ib_udp_port, ret);
		return ret;
	}
	scire_setup_udp_tunnel_sock(dev_net(sdev->netdev), sock, &tnl_cfg);
	rcu_assign_pointer(sdev->ib_sock, sock);
	return 0;
}

/**
 * scire_ib_net_init() - prepare a scire_ib device's HELLO work.
 * @sdev: a scire_ib device just allocated.
 *
 * Done first, so that scire_ib_net_close() may run on any failure path.
 *
 * Context: any.
 */
void scire_ib_net_init(struct scire_dev *sdev)
{
	INIT_DELAYED_WORK(&sdev->ib_hello, scire_ib_hello_work);
}

/**
 * scire_ib_net_start() - start greeting the neighbour.
 * @sdev: a scire_ib device, just registered.
 *
 * Context: process context.
 */
void scire_ib_net_start(struct scire_dev *sdev)
{
	queue_delayed_work(system_wq, &sdev->ib_hello, 0);
}

/**
 * scire_ib_net_close() - stop the HELLOs and release the socket.
 * @sdev: a scire_ib device being destroyed (unregistered, no QP left);
 *	  scire_ib_net_init() done, scire_ib_net_open() perhaps not.
 *
 * Context: process context; sleeps (RCU grace period, work flush).
 */
void scire_ib_net_close(struct scire_dev *sdev)
{
	struct socket *sock = rcu_replace_pointer(sdev->ib_sock, NULL, true);

	cancel_delayed_work_sync(&sdev->ib_hello);
	/*
	 * Waits for receivers and senders (an RCU grace period): none
	 * touches @sdev afterwards.
	 */
	if (sock)
		scire_udp_tunnel_sock_release(sock);
	dst_cache_destroy(&sdev->ib_route);
	free_percpu(sdev->ib_route_daddr);
	sdev->ib_route_daddr = NULL;
}

static ssize_t scire_ib_peer_show(struct ib_device *ibdev, u32 port,
				  struct ib_port_attribute *attr, char *buf)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	unsigned long flags;
	u16 peer_port;
	__be32 peer;
	bool learn;

	spin_lock_irqsave(&sdev->port_lock, flags);
	peer = sdev->ib.peer;
	peer_port = sdev->ib.peer_port;
	learn = sdev->ib.learn;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (peer && peer_port)
		return sysfs_emit(buf, "%pI4:%u\n", &peer, peer_port);
	if (peer)
		return sysfs_emit(buf, "%pI4\n", &peer);
	return sysfs_emit(buf, learn ? "learn\n" : "none\n");
}

/*
 * Writing an IPv4 address makes it the neighbour (the link comes up when
 * it answers a HELLO), at ib_udp_port; ADDR:PORT (a scire-ibswitch) at
 * PORT, 1..65535; "learn" takes the sender of the first HELLO heard
 * while there is no live neighbour (the mode a port starts in); "none"
 * forgets the neighbour and takes the link down.
 */
static ssize_t scire_ib_peer_store(struct ib_device *ibdev, u32 port,
				   struct ib_port_attribute *attr,
				   const char *buf, size_t count)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	bool learn = sysfs_streq(buf, "learn");
	unsigned long flags;
	const char *colon = strnchr(buf, count, ':');
	size_t alen = colon ? colon - buf : count;
	u16 peer_port = 0;
	__be32 peer = 0;

	if (!learn && !sysfs_streq(buf, "none")) {
		if (!in4_pton(buf, alen, (u8 *)&peer, colon ? 0 : '\n', NULL) ||
		    ipv4_is_zeronet(peer) || ipv4_is_multicast(peer) ||
		    ipv4_is_lbcast(peer) || ipv4_is_loopback(peer))
			return -EINVAL;
		/* kstrtou16() takes the one trailing newline sysfs writes. */
		if (colon && (kstrtou16(colon + 1, 10, &peer_port) || !peer_port))
			return -EINVAL;
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	sdev->ib.learn = learn;
	if (sdev->ib.peer != peer || sdev->ib.peer_port != peer_port) {
		sdev->ib.peer = peer;
		sdev->ib.peer_port = peer_port;
		sdev->ib.hello_seen = 0;
		sdev->ib.peer_guid = 0;
	}
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	scire_ib_port_update(sdev);
	mod_delayed_work(system_wq, &sdev->ib_hello, 0);
	return count;
}

static struct ib_port_attribute scire_ib_attr_peer =
	__ATTR(scire_ib_peer, 0644, scire_ib_peer_show, scire_ib_peer_store);

static struct attribute *scire_ib_port_attrs[] = {
	&scire_ib_attr_peer.attr,
	NULL,
};

static const struct attribute_group scire_ib_port_group = {
	.attrs = scire_ib_port_attrs,
};

/* The port attributes of a scire_ib device (ports/1/scire_ib_peer). */
const struct attribute_group *scire_ib_port_groups[] = {
	&scire_ib_port_group,
	NULL,
};

#if IS_ENABLED(CONFIG_KUNIT)
#include "../../kunit/scire_ib_pkey_test.c"
#endif
