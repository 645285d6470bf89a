// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: RoCEv2 packets on UDP port 4791 (IBA 1.4 vol. 1 annex A17).
 *
 * Namespaces. The UDP sockets live in the network namespace of the netdev a
 * device is bound to, not only in init_net, so scire can run in one
 * namespace while rdma_rxe (which binds 4791 in init_net) runs in another.
 * All scire devices of one namespace share one struct scire_ns: an IPv4 and
 * an IPv6-only socket, created by the first device that opens and released
 * by the last one to close. A port already taken in that namespace fails the
 * device's creation with -EADDRINUSE. Kernel sockets do not pin their
 * namespace, so a pernet exit hook releases the sockets of a namespace that
 * is being dismantled; devices still closing there see no socket and drop
 * what they send. Each device's struct scire_net sits on its namespace's
 * RCU list: a packet is delivered to the device whose netdev (or whose
 * netdev under a VLAN) received it, and dropped when there is none.
 *
 * Loopback. A packet whose destination IP is an address of this namespace
 * is never transmitted: the device owning that address must be a scire
 * device (our own netdev in the common case), and the packet, built to the
 * last byte as it would go on the wire (IP ID and checksum, UDP header,
 * ICRC), is handed to the receive function the sockets use, so every check
 * runs on it, with BHs disabled as in a socket's softirq. As there, the
 * target QP is run at once if its execution context is free
 * (scire_qp_rcv()), and its work item is kicked otherwise: on one host as
 * between two, a request and its ACK need no work item.
 *
 * Copyright (c) 2026 The scire authors.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "scire.h"
#include "scire_trace.h"

/*
 * ICRC seed: the CRC-32 of eight 0xff bytes standing for the LRH, which a
 * RoCEv2 packet does not have but the ICRC of IBA 7.8.1 covers, masked.
 */
#define SCIRE_ICRC_SEED		0xdebb20e3

/* Membership bit of a P_Key (IBA 10.9): 0 for a limited member. */
#define SCIRE_PKEY_FULL_MEMBER	0x8000

/*
 * Largest BTH-to-pad length a packet may carry: the IPv4 total length and
 * the UDP length are 16-bit and also count the IP/UDP headers and ICRC.
 */
#define SCIRE_PKT_MAX_LEN	(0xffff - sizeof(struct ipv6hdr) - \
				 sizeof(struct udphdr) - SCIRE_ICRC_SIZE)

/* RFC 1122 forbids sending TTL 0; an AV without a hop limit gets this. */
#define SCIRE_DEFAULT_TTL	64

/**
 * struct scire_ns - the RoCEv2 sockets of one network namespace.
 * @node:	entry in scire_ns_list; unlinked once the namespace is going
 *		away or its last device closed.
 * @net:	the namespace; only compared while linked.
 * @sock4:	the IPv4 socket bound to port 4791, or NULL once released.
 * @sock6:	the IPv6-only socket bound to port 4791, or NULL (released,
 *		or IPv6 disabled in this kernel).
 * @devs:	struct scire_net of each open device of the namespace;
 *		changed under scire_ns_lock, read under RCU.
 */
struct scire_ns {
	struct list_head node;
	struct net *net;
	struct socket __rcu *sock4;
	struct socket __rcu *sock6;
	struct list_head devs;
};

/**
 * struct scire_net - one device's share of its namespace's sockets.
 * @sdev:	the device.
 * @ns:		the namespace state; valid until the device closes.
 * @node:	entry in @ns->devs.
 */
struct scire_net {
	struct scire_dev *sdev;
	struct scire_ns *ns;
	struct list_head node;
};

/* Every struct scire_ns still bound to a live namespace. */
static LIST_HEAD(scire_ns_list);

/*
 * The run set of the QP run sending a wire packet on this CPU, while it is
 * inside ip_local_out() with preemption off (scire_pkt_send()). A packet
 * that comes back to a scire QP of this host in the softirq that call runs
 * (a veth pair between namespaces) puts that QP in the sender's run set:
 * it runs next in the sender's context instead of waking its work item.
 * Only code running on this CPU inside that window (the softirq, on the
 * sender's stack or at an interrupt's exit) can see it set, and the sender
 * does not touch its run set meanwhile.
 */
static DEFINE_PER_CPU(struct scire_runset *, scire_tx_runset);

/* Protects scire_ns_list, each scire_ns's @devs and socket pointers. */
static DEFINE_MUTEX(scire_ns_lock);

/**
 * scire_net_drop() - drop a packet, count it and trace why.
 * @sdev: the device it was received on or sent from.
 * @skb: the packet; freed.
 * @why: the reason; those from SCIRE_DROP_TX_ROUTE on count as send drops.
 *
 * Context: any.
 */
void scire_net_drop(struct scire_dev *sdev, struct sk_buff *skb,
		    enum scire_drop_reason why)
{
	if (why == SCIRE_DROP_ICRC)
		scire_count(sdev, SCIRE_CNT_ICRC_ERRORS, 1);
	else if (why == SCIRE_DROP_GSI_RATE)
		scire_count(sdev, SCIRE_CNT_GSI_RATE_LIMITED, 1);
	else if (why == SCIRE_DROP_ERR_RATE)
		scire_count(sdev, SCIRE_CNT_ERR_RATE_LIMITED, 1);
	else if (why < SCIRE_DROP_TX_ROUTE)
		scire_count(sdev, SCIRE_CNT_RX_DROPS, 1);
	else
		scire_count(sdev, SCIRE_CNT_TX_DROPS, 1);
	trace_scire_drop(sdev, skb, why);
	kfree_skb(skb);
}

/*
 * The "crc32" of the crypto API, when it passed the self-check of
 * scire_crc_init(); else NULL and crc32_le() does all.
 */
static struct crypto_shash *scire_crc_tfm;

/**
 * scire_crc32() - continue a CRC-32 (IEEE 802.3, reflected) over bytes.
 * @crc: the CRC so far (the seed for the first bytes), not inverted.
 * @buf: the bytes.
 * @len: their number.
 *
 * The same result as crc32_le(). On Debian's 6.1 and 6.12 crc32_le() is
 * the generic table walk, and the ICRC (IBA 7.8.1, annex A17) through it
 * was 88% of the wire path's instructions for a 64 KiB READ (make
 * bench-cost, bench/cost.md); the crypto API's "crc32" is the
 * PCLMULQDQ driver where the CPU has it, as rdma_rxe uses. Its running
 * state is the bare CRC in the descriptor's context, checked once by
 * scire_crc_init() before it is relied on.
 *
 * Context: any (the driver falls back to its table itself where the FPU
 * is not usable).
 * Return: the CRC after @buf, not inverted.
 */
u32 scire_crc32(u32 crc, const void *buf, size_t len)
{
	struct crypto_shash *tfm = READ_ONCE(scire_crc_tfm);

	/*
	 * Short runs (the masked headers, a pad) straight to the table walk:
	 * the PCLMULQDQ driver hands anything under 64 bytes to crc32_le()
	 * itself, after the crypto API's indirect calls.
	 */
	if (tfm && len >= 64) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		*(u32 *)shash_desc_ctx(desc) = crc;
		if (!crypto_shash_update(desc, buf, len))
			return *(u32 *)shash_desc_ctx(desc);
	}
	return crc32_le(crc, buf, len);
}

/*
 * Take the crypto API's "crc32" only if its descriptor state is the bare
 * 32-bit CRC and it continues a CRC as crc32_le() does, from a seed set
 * there: two vectors, one across a 3-byte tail.
 */
static void scire_crc_init(void)
{
	static const u8 vec[67] = "scire: the ICRC through the crypto API equals crc32_le()...";
	static const u32 seeds[] = { SCIRE_ICRC_SEED, ~0U };
	struct crypto_shash *tfm;
	bool ok;
	int i;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("no crc32 in the crypto API (%ld): the ICRC uses crc32_le()\n",
			PTR_ERR(tfm));
		return;
	}
	ok = crypto_shash_descsize(tfm) == sizeof(u32);
	for (i = 0; ok && i < ARRAY_SIZE(seeds); i++) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		*(u32 *)shash_desc_ctx(desc) = seeds[i];
		ok = !crypto_shash_update(desc, vec, sizeof(vec)) &&
		     *(u32 *)shash_desc_ctx(desc) == crc32_le(seeds[i], vec, sizeof(vec));
	}
	if (!ok) {
		pr_info("crc32 of the crypto API (%s) does not continue a CRC as crc32_le(): not used\n",
			crypto_shash_driver_name(tfm));
		crypto_free_shash(tfm);
		return;
	}
	WRITE_ONCE(scire_crc_tfm, tfm);
}

/**
 * scire_net_crc_piece() - a scire_skb_walk() callback that feeds a CRC-32.
 * @arg: the u32 CRC state.
 * @buf: the next bytes.
 * @n: their number.
 *
 * Context: any.
 * Return: 0.
 */
int scire_net_crc_piece(void *arg, u8 *buf, u32 n)
{
	u32 *crc = arg;

	*crc = scire_crc32(*crc, buf, n);
	return 0;
}

/*
 * The ICRC of a packet whose IP and UDP headers are at the skb's network
 * and transport headers and whose BTH is at skb->data + @off (linear),
 * followed by @len - BTH bytes of extended headers, payload and pad, in
 * the linear part or in page fragments. Variant fields are hashed as
 * all-ones, as IBA annex A17 requires and rdma_rxe does: IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; BTH byte 4 (FECN, BECN, reserved).
 *
 * With @rxe_flush the CRC then runs once more over the @len bytes from the
 * BTH, unmasked: that is the ICRC rdma_rxe puts on, and expects of, an RC
 * RDMA FLUSH (6.2 to at least 7.3). Its opcode table gives FLUSH no payload
 * offset, so what it takes for the payload starts at the BTH and the
 * headers are hashed twice. scire sends FLUSH that way, so that rxe takes
 * it, and accepts both that and the ICRC of IBA annex A17.
 */
static u32 scire_icrc(struct sk_buff *skb, bool ipv6, u32 off, u32 len,
		      bool rxe_flush)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct scire_bth)];
	struct scire_bth *mbth;
	struct udphdr *udph;
	size_t l3len;
	u32 crc;

	if (ipv6) {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)buf;

		l3len = sizeof(*ip6h);
		memcpy(ip6h, ipv6_hdr(skb), l3len);
		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
	} else {
		struct iphdr *iph = (struct iphdr *)buf;

		l3len = sizeof(*iph);
		memcpy(iph, ip_hdr(skb), l3len);
		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = CSUM_MANGLED_0;
	}
	udph = (struct udphdr *)(buf + l3len);
	memcpy(udph, udp_hdr(skb), sizeof(*udph));
	udph->check = CSUM_MANGLED_0;
	mbth = (struct scire_bth *)(udph + 1);
	memcpy(mbth, skb->data + off, sizeof(*mbth));
	mbth->qpn |= cpu_to_be32(SCIRE_BTH_RESV8A_MASK);

	crc = scire_crc32(SCIRE_ICRC_SEED, buf,
			  l3len + sizeof(*udph) + sizeof(*mbth));
	/* The caller checked the length: the walk cannot fail. */
	scire_skb_walk(skb, off + sizeof(*mbth), len - sizeof(*mbth),
		       scire_net_crc_piece, &crc);
	if (rxe_flush)
		scire_skb_walk(skb, off, len, scire_net_crc_piece, &crc);
	return ~crc;
}

/* Whether @bth is an RC RDMA FLUSH, whose ICRC rdma_rxe computes its way. */
static bool scire_icrc_rxe_flush(const struct scire_bth *bth)
{
	return bth->opcode == (SCIRE_OP_RC | SCIRE_OP_FLUSH);
}

/* The scire device receiving on @ndev, directly or through a VLAN on it. */
static struct scire_dev *scire_ns_dev_rcu(struct scire_ns *ns,
					  const struct net_device *ndev)
{
	struct scire_net *snet;

	for (;;) {
		list_for_each_entry_rcu(snet, &ns->devs, node)
			if (snet->sdev->netdev == ndev)
				return snet->sdev;
		if (!is_vlan_dev(ndev))
			return NULL;
		ndev = vlan_dev_real_dev(ndev);
	}
}

/*
 * The headers in front of the UDP header must be exactly one IP header,
 * since the ICRC covers them with fixed sizes (no IPv4 options, no IPv6
 * extension headers; RoCEv2 uses neither).
 */
static bool scire_rcv_l3_ok(const struct sk_buff *skb, bool *ipv6)
{
	int l3len = skb_transport_header(skb) - skb_network_header(skb);

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		*ipv6 = false;
		return l3len == sizeof(*iph) && iph->version == 4 &&
		       iph->ihl == sizeof(*iph) / 4;
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		*ipv6 = true;
		return l3len == sizeof(*ip6h) && ip6h->version == 6 &&
		       ip6h->nexthdr == IPPROTO_UDP;
	}
	return false;
}

/*
 * The destination IP must be a RoCEv2 GID of this device on the interface
 * the packet came in on: the host may accept packets for any of its
 * addresses on any interface, but a QP is only reachable through its own.
 * Context: BHs off (the per-CPU cache is this CPU's alone).
 */
static bool scire_rcv_dgid_ok(struct scire_dev *sdev,
			      const struct sk_buff *skb, bool ipv6,
			      union ib_gid *dgid, bool *mcast)
{
	struct scire_dgid_cache *cache;
	const struct ib_gid_attr *attr;
	u32 gen;

	if (ipv6)
		memcpy(dgid, &ipv6_hdr(skb)->daddr, sizeof(*dgid));
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid);
	/* A group's packets go to the QPs attached to it (scire_mcast.c). */
	*mcast = rdma_is_multicast_addr((struct in6_addr *)dgid);
	if (*mcast)
		return true;

	/*
	 * The table lookup takes its lock and walks the table: remember the
	 * last hit per CPU, until a GID comes or goes. The generation is read
	 * before the lookup, so a GID deleted meanwhile leaves a stale entry.
	 */
	cache = this_cpu_ptr(sdev->dgid_cache);
	gen = atomic_read(&sdev->gid_gen);
	if (cache->valid && cache->gen == gen &&
	    cache->ifindex == skb->dev->ifindex &&
	    !memcmp(&cache->gid, dgid, sizeof(*dgid)))
		return true;
	attr = rdma_find_gid_by_port(&sdev->ibdev, dgid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, skb->dev);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	cache->gid = *dgid;
	cache->ifindex = skb->dev->ifindex;
	cache->gen = gen;
	cache->valid = true;
	return true;
}

static bool scire_rcv_transport_ok(const struct scire_qp *qp, u8 opcode)
{
	u8 transport = opcode & SCIRE_OP_TRANSPORT_MASK;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == SCIRE_OP_RC;
	/* XRC: an initiator hears responses only, a target requests only. */
	case IB_QPT_XRC_INI:
		return transport == SCIRE_OP_XRC &&
		       (scire_opcode[opcode].mask & SCIRE_M_RESP);
	case IB_QPT_XRC_TGT:
		return transport == SCIRE_OP_XRC &&
		       (scire_opcode[opcode].mask & SCIRE_M_REQ);
	case IB_QPT_UC:
		return transport == SCIRE_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
	case IB_QPT_SMI:
		return transport == SCIRE_OP_UD;
	default:
		return false;
	}
}

/*
 * A connected QP hears only its peer: the packet's source IP must be the
 * QP's destination and its destination the QP's source (IBA 9.6, as
 * rdma_rxe checks). qp->av may be rewritten by modify_qp meanwhile; a
 * packet read against a half-written AV is dropped and retransmitted.
 */
static bool scire_rcv_path_ok(const struct scire_qp *qp,
			      struct sk_buff *skb, bool ipv6)
{
	const struct scire_av *av = &qp->av;

	if (!scire_qp_is_rc(qp) && qp->ibqp.qp_type != IB_QPT_UC)
		return true;
	/* scire_ib: the LRH's SLID must be the QP's DLID (IBA 9.6.1.1). */
	if (scire_pkt(skb)->ib)
		return av->network_type == RDMA_NETWORK_IB &&
		       scire_pkt(skb)->slid == av->dlid;
	if (ipv6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		return av->network_type == RDMA_NETWORK_IPV6 &&
		       ipv6_addr_equal(&ip6h->saddr, &av->daddr.in6.sin6_addr) &&
		       ipv6_addr_equal(&ip6h->daddr, &av->saddr.in6.sin6_addr);
	}
	return av->network_type == RDMA_NETWORK_IPV4 &&
	       ip_hdr(skb)->saddr == av->daddr.in4.sin_addr.s_addr &&
	       ip_hdr(skb)->daddr == av->saddr.in4.sin_addr.s_addr;
}

/**
 * scire_net_pkt_fill() - record a received packet's BTH in its control
 * block (struct scire_pkt).
 * @skb: the packet; skb->data is the BTH.
 * @sdev: the device it arrived on.
 * @bth: its BTH.
 * @paylen: payload bytes after the headers, pad and ICRC excluded.
 *
 * Context: any.
 * Return: scire_pkt(@skb), zeroed but for the BTH fields.
 */
struct scire_pkt *scire_net_pkt_fill(struct sk_buff *skb,
				     struct scire_dev *sdev,
				     const struct scire_bth *bth, u32 paylen)
{
	struct scire_pkt *pkt = scire_pkt(skb);

	memset(pkt, 0, sizeof(*pkt));
	pkt->sdev = sdev;
	pkt->mask = scire_opcode[bth->opcode].mask;
	pkt->psn = scire_bth_psn(bth);
	pkt->qpn = scire_bth_qpn(bth);
	pkt->paylen = paylen;
	pkt->opcode = bth->opcode;
	pkt->ackreq = scire_bth_ackreq(bth);
	pkt->se = bth->flags & SCIRE_BTH_SE;
	return pkt;
}

/*
 * scire_rcv_path_ok() for a same-host unit, which has no IP header: the
 * sender's AV stands for it.
 */
static bool scire_unit_path_ok(const struct scire_qp *qp,
			       const struct scire_av *from)
{
	const struct scire_av *av = &qp->av;

	if (!scire_qp_is_rc(qp) && qp->ibqp.qp_type != IB_QPT_UC)
		return false;
	if (av->network_type != from->network_type)
		return false;
	if (av->network_type == RDMA_NETWORK_IPV6)
		return ipv6_addr_equal(&from->saddr.in6.sin6_addr,
				       &av->daddr.in6.sin6_addr) &&
		       ipv6_addr_equal(&from->daddr.in6.sin6_addr,
				       &av->saddr.in6.sin6_addr);
	return from->saddr.in4.sin_addr.s_addr == av->daddr.in4.sin_addr.s_addr &&
	       from->daddr.in4.sin_addr.s_addr == av->saddr.in4.sin_addr.s_addr;
}

/* Bounds of the rate limits' module parameters. */
#define SCIRE_SRC_RATE_MAX	1000000

static unsigned int scire_gsi_rate = 2000;
static unsigned int scire_gsi_burst = 4000;
static unsigned int scire_err_rate = 1000;
static unsigned int scire_err_burst = 2000;

static int scire_src_rate_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SCIRE_SRC_RATE_MAX);
}

static int scire_src_burst_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, SCIRE_SRC_RATE_MAX);
}

static const struct kernel_param_ops scire_src_rate_ops = {
	.set = scire_src_rate_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops scire_src_burst_ops = {
	.set = scire_src_burst_set,
	.get = param_get_uint,
};

module_param_cb(gsi_rate, &scire_src_rate_ops, &scire_gsi_rate, 0644);
MODULE_PARM_DESC(gsi_rate,
		 "RoCE: QP1 (GSI: connection manager) packets a second one source address may send a device, after a burst of gsi_burst; more are dropped and counted in gsi_rate_limited (0: no limit; default 2000, at most 1000000)");
module_param_cb(gsi_burst, &scire_src_burst_ops, &scire_gsi_burst, 0644);
MODULE_PARM_DESC(gsi_burst,
		 "RoCE: QP1 packets one source address may send a device at once before gsi_rate applies (1 to 1000000, default 4000)");
module_param_cb(err_rate, &scire_src_rate_ops, &scire_err_rate, 0644);
MODULE_PARM_DESC(err_rate,
		 "RoCE: refused packets (malformed, bad ICRC, no such QP, bad R_Key...) a second one source address may send a device, after a burst of err_burst; while it is over, its packets are dropped unread and counted in err_rate_limited (0: no limit; default 1000, at most 1000000)");
module_param_cb(err_burst, &scire_src_burst_ops, &scire_err_burst, 0644);
MODULE_PARM_DESC(err_burst,
		 "RoCE: refused packets one source address may send a device at once before err_rate applies (1 to 1000000, default 2000)");

/**
 * scire_src_limit_init() - set up a device's rate limit per source address
 * @lim: the limit, zeroed memory
 *
 * Context: process; the limit is not in use yet.
 */
void scire_src_limit_init(struct scire_src_limit *lim)
{
	spin_lock_init(&lim->lock);
	get_random_bytes(&lim->secret, sizeof(lim->secret));
}

/*
 * The token bucket of @src in @lim, refilled at @rate a second up to
 * @burst (rate > 0, burst > 0). Return: whether it holds a token; with
 * @take, one is taken then.
 *
 * Sources share SCIRE_SRC_SLOTS buckets in sets of SCIRE_SRC_WAYS, the set
 * chosen by siphash under a random key of the limit, so no sender can aim
 * at another's set. A source not in its set takes the way used longest
 * ago, with a full bucket: an eviction only ever gives a sender more, and
 * a host that forges many source addresses gets a burst for each
 * (docs/security.md says so).
 *
 * Context: any; takes @lim->lock with interrupts off (the responder may
 * call it under a lock that has them off).
 */
static bool scire_src_take(struct scire_src_limit *lim,
			   const struct in6_addr *src, unsigned int rate,
			   unsigned int burst, bool take)
{
	u64 full = (u64)burst * HZ, elapsed;
	struct scire_src_bucket *b, *set;
	unsigned long now, flags;
	unsigned int i;
	bool ok;

	set = &lim->slot[(siphash(src, sizeof(*src), &lim->secret) %
			  (SCIRE_SRC_SLOTS / SCIRE_SRC_WAYS)) * SCIRE_SRC_WAYS];
	spin_lock_irqsave(&lim->lock, flags);
	/* Read under the lock: never before another CPU's stamp. */
	now = jiffies;
	b = NULL;
	for (i = 0; i < SCIRE_SRC_WAYS; i++) {
		if (set[i].used && ipv6_addr_equal(&set[i].addr, src)) {
			b = &set[i];
			break;
		}
		if (!b || !set[i].used ||
		    (b->used && time_before(set[i].stamp, b->stamp)))
			b = &set[i];
	}
	if (!b->used || !ipv6_addr_equal(&b->addr, src)) {
		if (!take) {
			/* Only looking: an unknown source is not over. */
			spin_unlock_irqrestore(&lim->lock, flags);
			return true;
		}
		b->addr = *src;
		b->used = true;
		b->tokens = full;
	} else {
		/* Capped, so that elapsed * rate stays far from overflow. */
		elapsed = min_t(u64, now - b->stamp, full);
		b->tokens = min(b->tokens + elapsed * rate, full);
	}
	b->stamp = now;
	ok = b->tokens >= HZ;
	if (ok && take)
		b->tokens -= HZ;
	spin_unlock_irqrestore(&lim->lock, flags);
	return ok;
}

/* The source address of a received RoCE packet, IPv4 as IPv4-mapped. */
static void scire_skb_src(const struct sk_buff *skb, bool ipv6,
			  struct in6_addr *src)
{
	if (ipv6)
		*src = ipv6_hdr(skb)->saddr;
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, src);
}

/**
 * scire_gsi_admit() - may one more QP1 packet from its source be delivered
 * @sdev: the RoCE device it arrived on.
 * @skb: the packet, its IP header at the network header.
 * @ipv6: whether that header is IPv6.
 *
 * QP1, the General Service Interface's QP (IBA chapter 13; kept by RoCEv2,
 * annex A17), carries the communication manager's MADs (IBA chapter 12),
 * and every connection request costs the RDMA core a cm_id, its timers
 * and the consumer's handler before anyone can refuse it. Each source
 * address therefore has a token bucket (scire_src_take()): module
 * parameter gsi_burst packets at once, then gsi_rate a second; beyond
 * that its QP1 packets are dropped here, and the CM of an honest sender
 * that got there sends them again after its response timeout. Other
 * sources' packets, and every packet to the other QPs, go on. gsi_rate 0
 * turns the limit off.
 *
 * Context: BHs disabled (scire_rcv()); takes @sdev's gsi_limit.lock.
 * Return: true if the packet may go on, false if its source is over the
 * rate.
 */
static bool scire_gsi_admit(struct scire_dev *sdev, const struct sk_buff *skb,
			    bool ipv6)
{
	unsigned int rate = READ_ONCE(scire_gsi_rate);
	unsigned int burst = max(READ_ONCE(scire_gsi_burst), 1U);
	struct in6_addr src;

	if (!rate)
		return true;
	scire_skb_src(skb, ipv6, &src);
	if (scire_src_take(&sdev->gsi_limit, &src, rate, burst, true))
		return true;
	if (ipv6)
		net_warn_ratelimited("%s: QP1 packets from %pI6c over gsi_rate (%u a second, burst %u): dropped\n",
				     dev_name(&sdev->ibdev.dev), &src, rate,
				     burst);
	else
		net_warn_ratelimited("%s: QP1 packets from %pI4 over gsi_rate (%u a second, burst %u): dropped\n",
				     dev_name(&sdev->ibdev.dev),
				     &src.s6_addr32[3], rate, burst);
	return false;
}

/**
 * scire_net_src_error() - count a refused packet against its source
 * @sdev: the RoCE device that refused it.
 * @src: the packet's source address (IPv4 as IPv4-mapped), from another
 *	host.
 *
 * A refused packet (malformed, wrong ICRC, P_Key, destination GID or QPN,
 * no such QP, not from the QP's peer, an R_Key or range the responder
 * refuses) costs its receiver the checks that found it out, the ICRC
 * over the whole packet among them, and queues nothing. Each source has a
 * token bucket of refusals (scire_src_take()): module parameter err_burst
 * at once, then err_rate a second. A source that has spent it gets all its
 * packets dropped unread by scire_rcv() (scire_src_over()) until its
 * bucket refills: a flood of bad packets then costs one look-up each,
 * and other sources go on. err_rate 0 turns the limit off.
 *
 * Context: any; takes @sdev's err_limit.lock.
 */
void scire_net_src_error(struct scire_dev *sdev, const struct in6_addr *src)
{
	unsigned int rate = READ_ONCE(scire_err_rate);
	unsigned int burst = max(READ_ONCE(scire_err_burst), 1U);

	if (!rate || scire_src_take(&sdev->err_limit, src, rate, burst, true))
		return;
	WRITE_ONCE(sdev->err_limit_until, jiffies + HZ);
	if (ipv6_addr_v4mapped(src))
		net_warn_ratelimited("%s: refused packets from %pI4 over err_rate (%u a second, burst %u): its packets are dropped while it stays over\n",
				     dev_name(&sdev->ibdev.dev),
				     &src->s6_addr32[3], rate, burst);
	else
		net_warn_ratelimited("%s: refused packets from %pI6c over err_rate (%u a second, burst %u): its packets are dropped while it stays over\n",
				     dev_name(&sdev->ibdev.dev), src, rate,
				     burst);
}

/**
 * scire_net_av_error() - count a refusal against a QP's peer
 * @sdev: the RoCE device whose responder refused a request.
 * @av: the QP's address vector (RC, UC: its packets come from its
 *	destination address).
 *
 * scire_net_src_error() for the peer's address, unless the peer is on
 * this host (the fast path, or the wire path looped back) or the device
 * is scire_ib.
 *
 * Context: any; takes RCU and @sdev's err_limit.lock.
 */
void scire_net_av_error(struct scire_dev *sdev, const struct scire_av *av)
{
	struct in6_addr src;

	if (!READ_ONCE(scire_err_rate))
		return;
	if (av->network_type == RDMA_NETWORK_IPV6)
		src = av->daddr.in6.sin6_addr;
	else if (av->network_type == RDMA_NETWORK_IPV4)
		ipv6_addr_set_v4mapped(av->daddr.in4.sin_addr.s_addr, &src);
	else
		return;
	if (!scire_net_av_local(sdev, av))
		scire_net_src_error(sdev, &src);
}

/*
 * Whether @skb's source is over its refusals: only looked up while some
 * source may be (scire_net_src_error() set err_limit_until), so packets
 * cost one read of it otherwise. Context: BHs disabled.
 */
static bool scire_src_over(struct scire_dev *sdev, const struct sk_buff *skb,
			   bool ipv6)
{
	unsigned long until = READ_ONCE(sdev->err_limit_until);
	unsigned int rate = READ_ONCE(scire_err_rate);
	struct in6_addr src;

	if (!until || !rate || !time_before(jiffies, until))
		return false;
	scire_skb_src(skb, ipv6, &src);
	return !scire_src_take(&sdev->err_limit, &src, rate,
			       max(READ_ONCE(scire_err_burst), 1U), false);
}

/* Drop a packet scire_rcv() refused, counting it against its source. */
static void scire_rcv_refuse(struct scire_dev *sdev, struct sk_buff *skb,
			     bool ipv6, enum scire_drop_reason why)
{
	struct in6_addr src;

	scire_skb_src(skb, ipv6, &src);
	scire_net_src_error(sdev, &src);
	scire_net_drop(sdev, skb, why);
}

/*
 * Hand a parsed packet to its QP if the QP takes its transport and it
 * comes from the QP's peer: by the IP header (@ipv6 says which), or for a
 * same-host unit by the sender's AV @from. Consumes @skb.
 */
static void scire_rcv_qp(struct scire_dev *sdev, struct sk_buff *skb,
			 const struct scire_av *from, bool ipv6,
			 struct scire_runset *rs)
{
	enum scire_drop_reason why = SCIRE_DROP_NO_QP;
	bool deliver = false;
	struct scire_qp *qp;

	qp = scire_qp_get(sdev, scire_pkt(skb)->qpn);
	if (!qp)
		why = SCIRE_DROP_NO_QP;
	else if (!scire_rcv_transport_ok(qp, scire_pkt(skb)->opcode))
		why = SCIRE_DROP_QP_TYPE;
	else if (from ? !scire_unit_path_ok(qp, from) :
			!scire_rcv_path_ok(qp, skb, ipv6))
		why = SCIRE_DROP_QP_PATH;
	else if (scire_pkt(skb)->ib && !scire_ib_qp_pkey_ok(qp, skb))
		why = SCIRE_DROP_PKEY;
	else
		deliver = true;
	if (deliver) {
		/*
		 * A wire packet comes in a softirq or the loopback, BHs off; a
		 * unit from a process-context run (no BHs off: its work item
		 * or run set takes it) or from a softirq run (BHs off: it runs
		 * here, nesting bounded, as a wire packet's QP does).
		 */
		scire_qp_rcv(qp, skb, rs, !from || in_softirq());
		scire_qp_put(qp);
		return;
	}
	if (qp)
		scire_qp_put(qp);
	if (scire_pkt(skb)->wire)
		scire_rcv_refuse(sdev, skb, ipv6, why);
	else
		scire_net_drop(sdev, skb, why);
}

/*
 * Validate a RoCEv2 packet (IBA 9.6 header checks, annex A17 ICRC) and pass
 * it to its QP. skb->data is the UDP header, the IP header is at the network
 * header and skb->dev is the interface it arrived on. @local: it comes from a
 * device of this host (scire_pkt_send()), whose QP1 packets are not limited
 * per source. Consumes @skb.
 *
 * Context: BHs disabled (softirq from the socket, or loopback), under RCU,
 * which keeps @sdev alive (scire_net_dev_close() waits for it).
 */
static void scire_rcv(struct scire_dev *sdev, struct sk_buff *skb,
		      struct scire_runset *rs, bool local)
{
	const struct scire_opcode_info *info;
	enum scire_drop_reason why;
	struct scire_bth *bth;
	struct scire_pkt *pkt;
	union ib_gid dgid;
	u32 ulen, len, pad;
	__le32 icrc_buf;
	const void *icrc;
	bool ipv6, mcast, mcast_qpn;
	u16 pkey;
	u32 qpn;

	/*
	 * Headers are read from the linear part; the payload may stay in
	 * page fragments (a zero-copy sender): the transport reads it with
	 * scire_skb_walk().
	 */
	why = SCIRE_DROP_MALFORMED;
	if (skb_transport_header(skb) != skb->data ||
	    !pskb_may_pull(skb, sizeof(struct udphdr)) ||
	    !scire_rcv_l3_ok(skb, &ipv6)) {
		scire_net_drop(sdev, skb, why);
		return;
	}
	if (!local && scire_src_over(sdev, skb, ipv6)) {
		scire_net_drop(sdev, skb, SCIRE_DROP_ERR_RATE);
		return;
	}
	ulen = ntohs(udp_hdr(skb)->len);
	if (ulen < sizeof(struct udphdr) || ulen > skb->len)
		goto drop;
	len = ulen - sizeof(struct udphdr);
	if (len < sizeof(*bth) + SCIRE_ICRC_SIZE)
		goto drop;
	__skb_pull(skb, sizeof(struct udphdr));
	if (pskb_trim(skb, len) || !pskb_may_pull(skb, sizeof(*bth))) {
		why = SCIRE_DROP_NOMEM;
		goto drop;
	}

	bth = (struct scire_bth *)skb->data;
	info = &scire_opcode[bth->opcode];
	if (!(info->mask & SCIRE_M_VALID) ||
	    (bth->flags & SCIRE_BTH_TVER_MASK))
		goto drop;
	pad = scire_bth_pad(bth);
	if (len < info->hdr_len + pad + SCIRE_ICRC_SIZE)
		goto drop;
	if (!pskb_may_pull(skb, info->hdr_len)) {
		why = SCIRE_DROP_NOMEM;
		goto drop;
	}
	bth = (struct scire_bth *)skb->data;

	/* Only the default partition exists; limited members may send too. */
	pkey = be16_to_cpu(bth->pkey) | SCIRE_PKEY_FULL_MEMBER;
	if (pkey != SCIRE_DEFAULT_PKEY) {
		why = SCIRE_DROP_PKEY;
		goto drop;
	}

	if (!scire_rcv_dgid_ok(sdev, skb, ipv6, &dgid, &mcast)) {
		why = SCIRE_DROP_DGID;
		goto drop;
	}

	icrc = skb_header_pointer(skb, len - SCIRE_ICRC_SIZE, SCIRE_ICRC_SIZE,
				  &icrc_buf);
	if (!icrc ||
	    (scire_icrc(skb, ipv6, 0, len - SCIRE_ICRC_SIZE, false) !=
	     get_unaligned_le32(icrc) &&
	     (!scire_icrc_rxe_flush(bth) ||
	      scire_icrc(skb, ipv6, 0, len - SCIRE_ICRC_SIZE, true) !=
	      get_unaligned_le32(icrc)))) {
		why = SCIRE_DROP_ICRC;
		goto drop;
	}

	/*
	 * RoCE has no QP0 (no subnet management). The multicast QPN goes
	 * with a multicast GID and nothing else does (IBA 9.6.1.5.1).
	 */
	qpn = scire_bth_qpn(bth);
	mcast_qpn = qpn == IB_MULTICAST_QPN;
	if (!qpn || mcast != mcast_qpn ||
	    (mcast && (bth->opcode & SCIRE_OP_TRANSPORT_MASK) != SCIRE_OP_UD)) {
		why = SCIRE_DROP_QPN;
		goto drop;
	}
	if (qpn == 1 && !local && !scire_gsi_admit(sdev, skb, ipv6)) {
		scire_net_drop(sdev, skb, SCIRE_DROP_GSI_RATE);
		return;
	}

	pkt = scire_net_pkt_fill(skb, sdev, bth,
				 len - info->hdr_len - pad - SCIRE_ICRC_SIZE);
	pkt->wire = !local;
	if (pskb_trim(skb, info->hdr_len + pkt->paylen)) {
		why = SCIRE_DROP_NOMEM;
		goto drop;
	}
	/* A queued packet has no use for its route. */
	skb_dst_drop(skb);
	scire_count(sdev, SCIRE_CNT_RX_PACKETS, 1);
	scire_count(sdev, SCIRE_CNT_RX_BYTES, len);

	if (mcast) {
		scire_mcast_rcv(sdev, skb, &dgid, 0);
		return;
	}
	scire_rcv_qp(sdev, skb, NULL, ipv6, rs);
	return;

drop:
	if (!local && why != SCIRE_DROP_NOMEM)
		scire_rcv_refuse(sdev, skb, ipv6, why);
	else
		scire_net_drop(sdev, skb, why);
}

/**
 * scire_net_rcv_qp() - hand a parsed scire_ib packet to its QP.
 * @sdev: the device.
 * @skb: skb->data at the BTH, scire_pkt() filled; consumed.
 *
 * Drops it if there is no such QP, the QP's type does not take the
 * opcode's transport, or (RC, UC) it is not from the QP's peer.
 *
 * Context: BHs disabled, under RCU.
 */
void scire_net_rcv_qp(struct scire_dev *sdev, struct sk_buff *skb)
{
	scire_rcv_qp(sdev, skb, NULL, false, NULL);
}

/*
 * Receive a same-host unit (scire_pkt(skb)->local) sent with @from: the
 * checks of scire_rcv() that still mean something without a wire. skb->data
 * is the BTH, the headers are linear, the payload (no pad, no ICRC) may be
 * in page fragments. Only RC and UC QPs exchange units. Consumes @skb.
 *
 * Context: a QP's run in process context, or a softirq run (BHs off, as
 * after a kernel QP's post_send), under RCU (keeps @sdev alive).
 */
static void scire_rcv_unit(struct scire_dev *sdev, struct sk_buff *skb,
			   const struct scire_av *from,
			   struct scire_runset *rs)
{
	const struct scire_opcode_info *info;
	enum scire_drop_reason why;
	struct scire_bth *bth;
	u32 qpn;

	why = SCIRE_DROP_MALFORMED;
	if (skb_headlen(skb) < sizeof(*bth))
		goto drop;
	bth = (struct scire_bth *)skb->data;
	info = &scire_opcode[bth->opcode];
	if (!(info->mask & SCIRE_M_VALID) || scire_bth_pad(bth) ||
	    skb_headlen(skb) < info->hdr_len)
		goto drop;
	qpn = scire_bth_qpn(bth);
	if (qpn < 2 || qpn == IB_MULTICAST_QPN) {
		why = SCIRE_DROP_QPN;
		goto drop;
	}

	scire_net_pkt_fill(skb, sdev, bth, skb->len - info->hdr_len)->local = true;
	scire_rcv_qp(sdev, skb, from, false, rs);
	return;

drop:
	scire_net_drop(sdev, skb, why);
}

/* encap_rcv of both sockets: skb->data is the UDP header. */
static int scire_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct scire_dev *sdev = NULL;
	struct scire_ns *ns;

	rcu_read_lock();
	ns = rcu_dereference_sk_user_data(sk);
	if (ns && skb->dev)
		sdev = scire_ns_dev_rcu(ns, skb->dev);
	if (sdev)
		scire_rcv(sdev, skb, this_cpu_read(scire_tx_runset), false);
	else
		kfree_skb(skb);
	rcu_read_unlock();
	/* Consumed: never hand RoCEv2 packets to the UDP socket queue. */
	return 0;
}

static struct socket *scire_sock_create(struct net *net, struct scire_ns *ns,
					bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.sk_user_data = ns,
		.encap_type = 1,
		.encap_rcv = scire_udp_encap_rcv,
	};
	/*
	 * use_udp6_rx_checksums stays false: rdma_rxe sends IPv6 with a zero
	 * UDP checksum (RFC 6935), the ICRC protecting the packet instead.
	 */
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(SCIRE_ROCE_V2_PORT),
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	scire_setup_udp_tunnel_sock(net, sock, &tnl_cfg);
	/*
	 * setup_udp_tunnel_sock() turns IPv4 multicast loopback off; QPs of
	 * this host attached to a group must hear what is sent to it.
	 */
	scire_sk_set_mc_loop(sock->sk);
	return sock;
}

/* Called with scire_ns_lock held. */
static void scire_ns_release_socks(struct scire_ns *ns)
{
	struct socket *sock4, *sock6;

	sock4 = rcu_replace_pointer(ns->sock4, NULL,
				    lockdep_is_held(&scire_ns_lock));
	sock6 = rcu_replace_pointer(ns->sock6, NULL,
				    lockdep_is_held(&scire_ns_lock));
	/* Each waits for RCU readers: receivers and senders are done. */
	if (sock6)
		scire_udp_tunnel_sock_release(sock6);
	if (sock4)
		scire_udp_tunnel_sock_release(sock4);
}

/* Find or create the sockets of @net. Called with scire_ns_lock held. */
static struct scire_ns *scire_ns_get(struct net *net,
				     const struct net_device *ndev)
{
	struct socket *sock;
	struct scire_ns *ns;

	list_for_each_entry(ns, &scire_ns_list, node)
		if (ns->net == net)
			return ns;

	ns = kzalloc(sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return ERR_PTR(-ENOMEM);
	ns->net = net;
	INIT_LIST_HEAD(&ns->devs);

	sock = scire_sock_create(net, ns, false);
	if (IS_ERR(sock))
		goto err;
	rcu_assign_pointer(ns->sock4, sock);

	sock = scire_sock_create(net, ns, true);
	if (IS_ERR(sock)) {
		/* A kernel without IPv6 (ipv6.disable=1) still speaks IPv4. */
		if (PTR_ERR(sock) != -EAFNOSUPPORT &&
		    PTR_ERR(sock) != -EPFNOSUPPORT)
			goto err;
		sock = NULL;
	}
	rcu_assign_pointer(ns->sock6, sock);

	list_add_tail(&ns->node, &scire_ns_list);
	return ns;

err:
	if (PTR_ERR(sock) == -EADDRINUSE)
		pr_warn("%s: UDP port %d is already bound in network namespace %u (rdma_rxe loaded there?); put %s in another namespace\n",
			ndev->name, SCIRE_ROCE_V2_PORT, net->ns.inum,
			ndev->name);
	else
		pr_warn("%s: cannot create the RoCEv2 UDP socket in network namespace %u: %pe\n",
			ndev->name, net->ns.inum, sock);
	scire_ns_release_socks(ns);
	kfree(ns);
	return ERR_CAST(sock);
}

/**
 * scire_net_dev_open() - attach a device to its namespace's RoCEv2 sockets.
 * @sdev: a device being created; sdev->netdev is set and held.
 *
 * Joins (or creates, for the first scire device there) the UDP port 4791
 * sockets of the network namespace sdev->netdev is in, and makes the device
 * reachable for packets arriving on its netdev (RoCEv2, IBA annex A17).
 * Must succeed before the device is registered.
 *
 * Context: process context; may sleep. Takes scire_ns_lock.
 * Return: 0; -ENOMEM; -ENODEV if the namespace is being dismantled;
 * -EADDRINUSE if port 4791 is taken in that namespace (for instance by
 * rdma_rxe), or another socket creation error.
 */
int scire_net_dev_open(struct scire_dev *sdev)
{
	struct net *net = dev_net(sdev->netdev);
	struct scire_net *snet;
	struct scire_ns *ns;
	int ret = 0;

	if (WARN_ON_ONCE(sdev->net))
		return -EBUSY;
	snet = kzalloc(sizeof(*snet), GFP_KERNEL);
	if (!snet)
		return -ENOMEM;
	snet->sdev = sdev;

	/*
	 * Our pernet exit hook may already have run for a namespace whose
	 * count reached zero; a socket created now would never be released.
	 */
	if (!maybe_get_net(net)) {
		kfree(snet);
		return -ENODEV;
	}

	mutex_lock(&scire_ns_lock);
	ns = scire_ns_get(net, sdev->netdev);
	if (IS_ERR(ns)) {
		ret = PTR_ERR(ns);
		kfree(snet);
	} else {
		snet->ns = ns;
		list_add_tail_rcu(&snet->node, &ns->devs);
		sdev->net = snet;
	}
	mutex_unlock(&scire_ns_lock);

	put_net(net);
	return ret;
}

/**
 * scire_net_dev_close() - detach a device from its namespace's sockets.
 * @sdev: a device being destroyed, with no QP left; scire_net_dev_open()
 *	  may not have been called or may have failed (sdev->net NULL).
 *
 * After this returns no receiver or loopback sender uses @sdev any more.
 * The last device of a namespace releases its sockets.
 *
 * Context: process context; sleeps (RCU grace periods). Takes scire_ns_lock.
 */
void scire_net_dev_close(struct scire_dev *sdev)
{
	struct scire_net *snet = sdev->net;
	struct scire_ns *ns;
	bool last;

	if (!snet)
		return;
	ns = snet->ns;

	mutex_lock(&scire_ns_lock);
	list_del_rcu(&snet->node);
	last = list_empty(&ns->devs);
	if (last && !list_empty(&ns->node)) {
		list_del_init(&ns->node);
		scire_ns_release_socks(ns);
	}
	mutex_unlock(&scire_ns_lock);

	/* Packets that found @sdev on the list are finished. */
	synchronize_net();
	sdev->net = NULL;
	kfree(snet);
	if (last)
		kfree(ns);
}

/*
 * A namespace is going away. Its netdevs are already gone or moved, but the
 * scire devices on them unregister asynchronously and may still hold
 * @ns: release the sockets now, while @net is valid, and leave the rest to
 * the last scire_net_dev_close().
 */
static void __net_exit scire_net_ns_exit(struct net *net)
{
	struct scire_ns *ns;

	mutex_lock(&scire_ns_lock);
	list_for_each_entry(ns, &scire_ns_list, node) {
		if (ns->net != net)
			continue;
		/* A listed ns has devices: the last to close frees it. */
		list_del_init(&ns->node);
		ns->net = NULL;
		scire_ns_release_socks(ns);
		break;
	}
	mutex_unlock(&scire_ns_lock);
}

static struct pernet_operations scire_net_ops = {
	.exit = scire_net_ns_exit,
};

/**
 * scire_net_init() - module init of the networking part: the CRC-32 the
 * ICRC is computed with (scire_crc32()) and the per-namespace sockets.
 *
 * Context: module init.
 * Return: 0 or the error of register_pernet_subsys().
 */
int scire_net_init(void)
{
	int ret;

	scire_crc_init();
	ret = register_pernet_subsys(&scire_net_ops);
	if (ret && scire_crc_tfm) {
		crypto_free_shash(scire_crc_tfm);
		scire_crc_tfm = NULL;
	}
	return ret;
}

/**
 * scire_net_exit() - module exit of the networking part.
 *
 * Context: module exit, after every device has closed (so every socket is
 * released; the exit hook, run here for each namespace, would find none).
 */
void scire_net_exit(void)
{
	unregister_pernet_subsys(&scire_net_ops);
	if (scire_crc_tfm) {
		crypto_free_shash(scire_crc_tfm);
		scire_crc_tfm = NULL;
	}
}

/**
 * scire_net_mc_join() - join or leave an IP multicast group on a device's
 * netdev.
 * @sdev: the device; the group is joined on sdev->netdev.
 * @mgid: a multicast GID: IPv4-mapped for an IPv4 group, else IPv6.
 * @join: true to join, false to leave.
 *
 * The membership belongs to the namespace's RoCEv2 socket of the group's
 * IP version, so it ends at the latest when that socket is released.
 *
 * Context: process context, may sleep; takes scire_ns_lock, then the RTNL
 * (socket release takes the RTNL under scire_ns_lock too).
 * Return: 0; -ENETDOWN if the device has no socket of that IP version (its
 * namespace is going away, or IPv6 is disabled); errors of
 * ip_mc_join_group() or ipv6_sock_mc_join() (-EADDRINUSE when joined
 * already, -ENOBUFS past the socket's membership limit) and of leaving.
 */
int scire_net_mc_join(struct scire_dev *sdev, const union ib_gid *mgid,
		      bool join)
{
	const struct in6_addr *addr = (const struct in6_addr *)mgid;
	bool ipv4 = ipv6_addr_v4mapped(addr);
	struct scire_net *snet = sdev->net;
	struct socket *sock;
	int ret = -ENETDOWN;

	if (!snet)
		return ret;
	mutex_lock(&scire_ns_lock);
	sock = rcu_dereference_protected(ipv4 ? snet->ns->sock4 :
						snet->ns->sock6,
					 lockdep_is_held(&scire_ns_lock));
	if (!sock)
		goto out;

	rtnl_lock();
	lock_sock(sock->sk);
	if (ipv4) {
		struct ip_mreqn mreq = {
			.imr_multiaddr.s_addr = addr->s6_addr32[3],
			.imr_ifindex = sdev->netdev->ifindex,
		};

		ret = join ? ip_mc_join_group(sock->sk, &mreq) :
			     ip_mc_leave_group(sock->sk, &mreq);
	} else if (join) {
		ret = scire_ipv6_mc_join(sock->sk, sdev->netdev->ifindex,
					 addr);
	} else {
		ret = scire_ipv6_mc_drop(sock->sk, sdev->netdev->ifindex,
					 addr);
	}
	release_sock(sock->sk);
	rtnl_unlock();
out:
	mutex_unlock(&scire_ns_lock);
	return ret;
}

/*
 * An InfiniBand address vector (IBA 10.2.2.1): DLID, SL and source path
 * bits, and a GRH when the AH has one. Multicast and the permissive LID
 * are destinations too (UD multicast, directed-route SMPs).
 */
static int scire_av_init_ib(struct scire_dev *sdev, struct scire_av *av,
			    const struct rdma_ah_attr *attr)
{
	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->network_type = RDMA_NETWORK_IB;
	av->dlid = rdma_ah_get_dlid(attr);
	av->sl = rdma_ah_get_sl(attr);
	av->src_path_bits = rdma_ah_get_path_bits(attr);
	if (rdma_ah_get_ah_flags(attr) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(attr);

		av->ib_grh = true;
		av->dgid = grh->dgid;
		av->sgid_index = grh->sgid_index;
		av->traffic_class = grh->traffic_class;
		av->hop_limit = grh->hop_limit;
		av->flow_label = grh->flow_label & 0xfffff;
		if (grh->sgid_attr)
			av->sgid = grh->sgid_attr->gid;
	}
	return 0;
}

/**
 * scire_av_init() - resolve a RoCEv2 address vector.
 * @sdev: the device the AV is for.
 * @av: filled in.
 * @attr: a RoCE AH attribute with a GRH whose sgid_attr is held by the
 *	  caller; attr->roce.dmac already resolved by the core.
 *
 * Takes the source and destination IP addresses from the GIDs (IPv4-mapped
 * GIDs give IPv4, RoCEv2 annex A17), VLAN and source MAC from the source
 * GID's netdev, and traffic class, hop limit, flow label and SL from the
 * GRH and AH (IBA 8.3 GRH fields carried in the IP header).
 *
 * On a scire_ib device the AH is an InfiniBand one instead (LID, SL, an
 * optional GRH; IBA 10.2.2.1), kept for the LRH and GRH.
 *
 * Context: process context.
 * Return: 0; -EINVAL without a GRH, for a GID that is not RoCEv2 (RoCE v1,
 * IB) or of another device, or when source and destination are not of the
 * same IP version (on scire_ib: for an AH that is not of type IB); -ENODEV
 * if the source GID's netdev is gone.
 */
int scire_av_init(struct scire_dev *sdev, struct scire_av *av,
		  const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	enum rdma_network_type type;
	int ret;

	if (sdev->link == SCIRE_LINK_IB)
		return scire_av_init_ib(sdev, av, attr);
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->device != &sdev->ibdev ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	type = rdma_gid_attr_network_type(sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->network_type = type;
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	rdma_gid2ip((struct sockaddr *)&av->saddr, &av->sgid);
	rdma_gid2ip((struct sockaddr *)&av->daddr, &av->dgid);
	if (av->daddr.in4.sin_family != av->saddr.in4.sin_family)
		return -EINVAL;

	ret = rdma_read_gid_l2_fields(sgid_attr, &av->vlan_id, av->smac);
	if (ret)
		return ret;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	av->traffic_class = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label & 0xfffff;
	av->sl = rdma_ah_get_sl(attr);
	av->sgid_index = grh->sgid_index;
	return 0;
}

static unsigned int scire_l3_len(const struct scire_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV6 ?
	       sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

/*
 * Headroom for IP + UDP and the link layer, with a VLAN tag; on scire_ib
 * also for its header, LRH and GRH.
 */
static unsigned int scire_headroom(const struct scire_dev *sdev,
				   const struct scire_av *av)
{
	return LL_RESERVED_SPACE(sdev->netdev) + VLAN_HLEN +
	       scire_l3_len(av) + sizeof(struct udphdr) +
	       (sdev->link == SCIRE_LINK_IB ? scire_ib_headroom() : 0);
}

/**
 * scire_pkt_alloc() - allocate a RoCEv2 packet to be sent on a QP.
 * @qp: the sending QP.
 * @av: the address vector the packet will be sent with (IPv4 or IPv6).
 * @len: bytes from the BTH to the end of the pad (IBA 9.2: BTH, extended
 *	 headers, payload, 0..3 pad bytes); at most 65479.
 * @gfp: GFP_KERNEL in the QP's work item, GFP_ATOMIC in atomic context.
 *
 * The skb is linear, skb->data is the BTH, @len zeroed bytes are put, and
 * there is room for the ICRC behind and for UDP, IP and link-layer headers
 * in front, so scire_pkt_send() adds them without reallocating.
 *
 * A head that fits in a page is carved from the per-CPU page fragment
 * cache (netdev_alloc_frag() + build_skb()), as NIC drivers do for
 * received packets: most packets are headers only (ACKs, and units whose
 * payload travels as page fragments), and a kmalloc()ed head is zeroed
 * whole on every allocation when init_on_alloc is on (Debian's default),
 * although only the @len bytes put here need it. A fragment is allocated
 * atomically; if that fails, a kmalloc()ed head with @gfp is the fallback.
 *
 * Context: any; may sleep only if @gfp allows.
 * Return: the skb, owned by the caller until scire_pkt_send() or
 * kfree_skb(); NULL if out of memory or @len is too large.
 */
struct sk_buff *scire_pkt_alloc(struct scire_qp *qp, const struct scire_av *av,
				u32 len, gfp_t gfp)
{
	unsigned int headroom = scire_headroom(qp->sdev, av);
	unsigned int size = headroom + len + SCIRE_ICRC_SIZE;
	unsigned int truesize = SKB_DATA_ALIGN(size) +
				SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (len > SCIRE_PKT_MAX_LEN)
		return NULL;
	if (truesize <= PAGE_SIZE) {
		data = netdev_alloc_frag(truesize);
		if (data) {
			skb = build_skb(data, truesize);
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(size, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, headroom);
	skb_put_zero(skb, len);
	return skb;
}

/*
 * Give the unshared @skb a private head with room for the headers in
 * front and, if it is linear, the ICRC behind (a zero-copy packet gets its
 * pad and ICRC in a tail fragment instead, see scire_build()). A caller
 * may keep a clone for retransmission: writing the headers into a shared
 * buffer would corrupt that copy.
 */
static int scire_tx_room(const struct scire_dev *sdev,
			 const struct scire_av *av, struct sk_buff *skb)
{
	int head, tail = 0;

	head = scire_headroom(sdev, av) - skb_headroom(skb);
	if (!skb_is_nonlinear(skb))
		tail = SCIRE_ICRC_SIZE - skb_tailroom(skb);
	if (skb_cloned(skb) || head > 0 || tail > 0)
		return pskb_expand_head(skb, max(head, 0), max(tail, 0),
					GFP_ATOMIC);
	return 0;
}

/*
 * The netdev the packet leaves by: the VLAN device of the source GID, or
 * our own netdev. NULL if that VLAN device is gone.
 */
static struct net_device *scire_tx_netdev_rcu(struct scire_dev *sdev,
					      const struct scire_av *av)
{
	if (av->vlan_id < VLAN_N_VID)
		return __vlan_find_dev_deep_rcu(sdev->netdev,
						htons(ETH_P_8021Q),
						av->vlan_id);
	return sdev->netdev;
}

/*
 * If the destination is an address of this namespace, the scire device that
 * must receive the packet (and in *@ndevp the netdev owning the address);
 * NULL if the packet goes on the wire; ERR_PTR(-EHOSTUNREACH) for a local
 * address on a netdev without a scire device, where nothing could receive
 * it. Multicast always goes on the wire.
 */
static struct scire_dev *scire_tx_local_rcu(struct scire_ns *ns,
					    struct net *net,
					    struct scire_dev *sdev,
					    const struct scire_av *av,
					    struct net_device **ndevp)
{
	struct net_device *ndev;
	struct scire_dev *target;

	if (av->network_type == RDMA_NETWORK_IPV6) {
		const struct in6_addr *daddr = &av->daddr.in6.sin6_addr;

		if (ipv6_addr_is_multicast(daddr))
			return NULL;
		/* A link-local address may exist on several netdevs. */
		ndev = scire_ipv6_dev_find(net, daddr, sdev->netdev);
		if (!ndev)
			ndev = scire_ipv6_dev_find(net, daddr, NULL);
	} else {
		__be32 daddr = av->daddr.in4.sin_addr.s_addr;

		if (ipv4_is_multicast(daddr) || ipv4_is_lbcast(daddr))
			return NULL;
		ndev = __ip_dev_find(net, daddr, false);
	}
	if (!ndev)
		return NULL;
	target = scire_ns_dev_rcu(ns, ndev);
	if (!target)
		return ERR_PTR(-EHOSTUNREACH);
	*ndevp = ndev;
	return target;
}

static u8 scire_tx_ttl(const struct scire_av *av)
{
	return av->hop_limit ?: SCIRE_DEFAULT_TTL;
}

/* IPv4 header with DF (RoCEv2 packets are never fragmented). */
static void scire_push_ip4(struct net *net, struct sk_buff *skb,
			   const struct scire_av *av)
{
	struct iphdr *iph;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = scire_tx_ttl(av);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr.in4.sin_addr.s_addr;
	iph->daddr = av->daddr.in4.sin_addr.s_addr;
	/* The ICRC covers the ID: it must be final before the ICRC is. */
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void scire_push_ip6(struct sk_buff *skb, const struct scire_av *av)
{
	struct ipv6hdr *ip6h;

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class,
		     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = scire_tx_ttl(av);
	ip6h->saddr = av->saddr.in6.sin6_addr;
	ip6h->daddr = av->daddr.in6.sin6_addr;
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * Where the ICRC of @skb goes. A linear packet holds its pad already and
 * takes the ICRC at its tail. A zero-copy one (payload in fragments of MR
 * pages) ends with its payload: pad and ICRC go in a small fragment of
 * their own. NULL if that cannot be allocated.
 */
static u8 *scire_tx_tail(struct sk_buff *skb)
{
	unsigned int pad = scire_bth_pad((struct scire_bth *)skb->data);
	unsigned int n = pad + SCIRE_ICRC_SIZE;
	struct page *page;
	u8 *tail;

	if (!skb_is_nonlinear(skb))
		return skb_put(skb, SCIRE_ICRC_SIZE);
	/* scire_mr_frags() keeps a slot free for this. */
	if (skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS)
		return NULL;
	tail = netdev_alloc_frag(n);
	if (!tail)
		return NULL;
	memset(tail, 0, pad);
	page = virt_to_head_page(tail);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page,
			tail - (u8 *)page_address(page), n, SKB_DATA_ALIGN(n));
	return tail + pad;
}

/*
 * Complete the packet in front of the BTH at skb->data: pad and ICRC slot
 * (scire_tx_tail()), UDP and IP headers, then the ICRC over all of them.
 * skb->data ends at the IP header. Return: 0 or -ENOMEM.
 */
static int scire_build(struct net *net, struct scire_qp *qp,
		       const struct scire_av *av, struct sk_buff *skb)
{
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	u8 *icrc = scire_tx_tail(skb);
	struct udphdr *udph;
	u8 *bth = skb->data;
	u32 len;

	if (!icrc)
		return -ENOMEM;
	len = skb->len - SCIRE_ICRC_SIZE;
	udph = skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph->source = htons(qp->src_port);
	udph->dest = htons(SCIRE_ROCE_V2_PORT);
	udph->len = htons(skb->len);
	/* Zero, as rdma_rxe sends it: the ICRC covers the packet. */
	udph->check = 0;

	if (ipv6)
		scire_push_ip6(skb, av);
	else
		scire_push_ip4(net, skb, av);
	put_unaligned_le32(scire_icrc(skb, ipv6, bth - skb->data, len,
				      scire_icrc_rxe_flush((struct scire_bth *)bth)),
			   icrc);
	return 0;
}

static struct dst_entry *scire_route_rcu(struct net *net, struct sock *sk,
					 struct scire_qp *qp,
					 const struct scire_av *av,
					 struct net_device *ndev)
{
	struct dst_entry *dst;

	if (av->network_type == RDMA_NETWORK_IPV6) {
		struct flowi6 fl6 = {
			.flowi6_oif = ndev->ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = av->daddr.in6.sin6_addr,
			.saddr = av->saddr.in6.sin6_addr,
			.flowlabel = ip6_make_flowinfo(av->traffic_class,
					cpu_to_be32(av->flow_label) &
					IPV6_FLOWLABEL_MASK),
			.fl6_sport = htons(qp->src_port),
			.fl6_dport = htons(SCIRE_ROCE_V2_PORT),
		};

		dst = scire_ip6_dst_lookup_flow(net, sk, &fl6, NULL);
		if (!IS_ERR(dst) && dst->error) {
			int ret = dst->error;

			dst_release(dst);
			dst = ERR_PTR(ret);
		}
	} else {
		struct flowi4 fl4 = {
			.flowi4_oif = ndev->ifindex,
			.flowi4_proto = IPPROTO_UDP,
			.daddr = av->daddr.in4.sin_addr.s_addr,
			.saddr = av->saddr.in4.sin_addr.s_addr,
			.fl4_sport = htons(qp->src_port),
			.fl4_dport = htons(SCIRE_ROCE_V2_PORT),
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		dst = IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
	}
	return dst;
}

/*
 * scire_route_rcu() through the QP's route cache when @av is the QP's own
 * (a connected QP): the cache drops a route the FIB has since changed.
 */
static struct dst_entry *scire_route_cached(struct net *net, struct sock *sk,
					    struct scire_qp *qp,
					    const struct scire_av *av,
					    struct net_device *ndev)
{
	struct dst_cache *cache = &qp->req.route;
	union {
		__be32 in4;
		struct in6_addr in6;
	} saddr;
	struct dst_entry *dst;
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;

	if (av != &qp->av || !cache->cache)
		return scire_route_rcu(net, sk, qp, av, ndev);
	if (ipv6) {
		dst = dst_cache_get_ip6(cache, &saddr.in6);
	} else {
		struct rtable *rt = dst_cache_get_ip4(cache, &saddr.in4);

		dst = rt ? &rt->dst : NULL;
	}
	if (dst)
		return dst;
	dst = scire_route_rcu(net, sk, qp, av, ndev);
	if (IS_ERR(dst))
		return dst;
	if (ipv6)
		dst_cache_set_ip6(cache, dst, &av->saddr.in6.sin6_addr);
	else
		dst_cache_set_ip4(cache, dst, av->saddr.in4.sin_addr.s_addr);
	return dst;
}

/*
 * The scire device of this host that packets to @av would be looped back
 * to, in @sdev's namespace, or NULL. Caller holds RCU, which keeps the
 * device alive.
 */
static struct scire_dev *scire_av_target_rcu(struct scire_dev *sdev,
					     const struct scire_av *av)
{
	struct scire_net *snet = sdev->net;
	struct net_device *ndev = NULL;
	struct scire_dev *target;
	struct socket *sock;

	if (!snet || (av->network_type != RDMA_NETWORK_IPV4 &&
		      av->network_type != RDMA_NETWORK_IPV6))
		return NULL;
	if (av->network_type == RDMA_NETWORK_IPV6)
		sock = rcu_dereference(snet->ns->sock6);
	else
		sock = rcu_dereference(snet->ns->sock4);
	if (!sock)
		return NULL;
	target = scire_tx_local_rcu(snet->ns, sock_net(sock->sk), sdev, av,
				    &ndev);
	return IS_ERR(target) ? NULL : target;
}

/**
 * scire_net_av_local() - is the destination of an AV a scire device of
 * this host, in the device's network namespace?
 * @sdev: the sending device.
 * @av: the destination.
 *
 * Decides whether a connected QP exchanges same-host units with its peer
 * (scire_req_start()). The answer holds until addresses move.
 *
 * Context: process context or softirq; takes RCU.
 * Return: true if packets to @av would be looped back to a scire device.
 */
bool scire_net_av_local(struct scire_dev *sdev, const struct scire_av *av)
{
	bool local;

	rcu_read_lock();
	local = !!scire_av_target_rcu(sdev, av);
	rcu_read_unlock();
	return local;
}

/**
 * scire_net_direct_peer() - the same-host QP a connected QP's requests
 * reach, for a direct request (scire_resp_direct()).
 * @qp: an RC QP whose requester sends same-host units (qp->req.local).
 *
 * Applies the checks a same-host unit from @qp passes on its way to its
 * QP (scire_rcv_unit(), scire_rcv_qp()): the destination QP number exists
 * on the device qp->av leads to, that QP is RC, and its own AV names
 * @qp's address pair the other way round.
 *
 * Context: process context or softirq; takes RCU.
 * Return: the peer QP, held (release with scire_qp_put()), or NULL.
 */
struct scire_qp *scire_net_direct_peer(struct scire_qp *qp)
{
	u32 qpn = qp->dest_qpn & SCIRE_QPN_MASK;
	struct scire_qp *peer = NULL;
	struct scire_dev *target;

	if (qpn < 2 || qpn == IB_MULTICAST_QPN || !scire_port_up(qp->sdev))
		return NULL;
	rcu_read_lock();
	target = scire_av_target_rcu(qp->sdev, &qp->av);
	if (target && scire_port_up(target))
		peer = scire_qp_get(target, qpn);
	rcu_read_unlock();
	if (peer && (peer->ibqp.qp_type != IB_QPT_RC ||
		     !scire_unit_path_ok(peer, &qp->av))) {
		scire_qp_put(peer);
		peer = NULL;
	}
	return peer;
}

/*
 * May a datagram to @av be looped back on a scire_ib port? Its DLID must be
 * one of the port's 2^LMC LIDs, and the port must be ACTIVE, or for QP0
 * (whose SMPs also run a port in INIT or ARMED) have a link (IBA 7.2).
 */
static bool scire_ib_loopback_ok(struct scire_qp *qp,
				 const struct scire_av *av)
{
	struct scire_dev *sdev = qp->sdev;
	const struct scire_ib_port *ib = &sdev->ib;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&sdev->port_lock, flags);
	ok = ib->lid && (av->dlid & ~((1U << ib->lmc) - 1)) == ib->lid &&
	     (sdev->port_state == IB_PORT_ACTIVE ||
	      (qp->ibqp.qp_type == IB_QPT_SMI &&
	       sdev->port_state != IB_PORT_DOWN));
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	return ok;
}

/*
 * Loop a datagram back to a QP of its own scire_ib port, as an HCA does
 * with a packet whose DLID is its own, or to the port's members of a
 * multicast group (@mcast): the receiver sees the LRH fields (SLID, SL,
 * DLID path bits) and the GRH the packet would have carried. skb->data is
 * the BTH, as scire_pkt_alloc() left it. Consumes @skb.
 * Return: 0, or -EINVAL for a malformed packet (dropped and counted).
 */
static int scire_ib_loopback(struct scire_qp *qp, const struct scire_av *av,
			     struct sk_buff *skb, bool mcast)
{
	struct scire_dev *sdev = qp->sdev;
	const struct scire_opcode_info *info;
	struct scire_bth *bth;
	struct scire_pkt *pkt;
	unsigned long flags;
	u32 len, paylen;
	u16 lid;
	u8 lmc;

	/* The receiver trims and queues it: it must be ours alone. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb) {
		scire_count(sdev, SCIRE_CNT_TX_DROPS, 1);
		return -ENOMEM;
	}
	len = skb->len;
	bth = (struct scire_bth *)skb->data;
	info = &scire_opcode[bth->opcode];
	/* A linear packet holds its pad; one with fragments does not yet. */
	paylen = len - info->hdr_len;
	if (!skb_is_nonlinear(skb))
		paylen -= scire_bth_pad(bth);
	if (!(info->mask & SCIRE_M_VALID) || skb_headlen(skb) < info->hdr_len ||
	    paylen > len || pskb_trim(skb, info->hdr_len + paylen)) {
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_INVALID);
		return -EINVAL;
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	lid = sdev->ib.lid;
	lmc = sdev->ib.lmc;
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	scire_count(sdev, SCIRE_CNT_TX_PACKETS, 1);
	scire_count(sdev, SCIRE_CNT_TX_BYTES, len);
	if (av->ib_grh) {
		/* The UD receiver copies it from the network header. */
		if (skb_cow_head(skb, sizeof(struct ib_grh))) {
			scire_net_drop(sdev, skb, SCIRE_DROP_TX_NOMEM);
			return -ENOMEM;
		}
		bth = (struct scire_bth *)skb->data;
		scire_ib_grh_fill(sdev, av, skb_push(skb, sizeof(struct ib_grh)),
				  info->hdr_len + ALIGN(paylen, 4) +
				  SCIRE_ICRC_SIZE);
		skb_reset_network_header(skb);
		__skb_pull(skb, sizeof(struct ib_grh));
	}
	pkt = scire_net_pkt_fill(skb, sdev, bth, paylen);
	pkt->ib = true;
	pkt->ib_grh = av->ib_grh;
	pkt->sl = av->sl;
	pkt->slid = lid | (av->src_path_bits & ((1U << lmc) - 1));
	pkt->dlid_path_bits = mcast ? 0 : av->dlid & ((1U << lmc) - 1);
	skb->protocol = 0;
	scire_count(sdev, SCIRE_CNT_RX_PACKETS, 1);
	scire_count(sdev, SCIRE_CNT_RX_BYTES, len);

	rcu_read_lock();
	local_bh_disable();
	if (mcast)
		scire_mcast_rcv(sdev, skb, av->ib_grh ? &av->dgid : NULL,
				av->dlid);
	else
		scire_rcv_qp(sdev, skb, NULL, false, NULL);
	local_bh_enable();
	rcu_read_unlock();
	return 0;
}

/*
 * Send a datagram to a multicast LID (IBA 10.5): to the neighbour, which
 * hands it to its own members, and a copy to this port's members, as an
 * HCA loops its multicast sends back (the sender, too, if attached: IPoIB
 * recognises its own). Only UD QPs send to a group. Consumes @skb.
 * Return: scire_ib_xmit()'s result; -EINVAL for a QP that is not UD.
 */
static int scire_ib_mcast_send(struct scire_qp *qp, const struct scire_av *av,
			       struct sk_buff *skb)
{
	struct scire_dev *sdev = qp->sdev;
	struct sk_buff *copy = NULL;
	unsigned long flags;
	bool active;
	int ret;

	if (qp->ibqp.qp_type != IB_QPT_UD) {
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_INVALID);
		return -EINVAL;
	}
	spin_lock_irqsave(&sdev->port_lock, flags);
	active = sdev->port_state == IB_PORT_ACTIVE;
	spin_unlock_irqrestore(&sdev->port_lock, flags);
	if (active && scire_mcast_member(sdev, av->ib_grh ? &av->dgid : NULL,
					 av->dlid)) {
		copy = skb_clone(skb, GFP_ATOMIC);
		if (!copy)
			scire_count(sdev, SCIRE_CNT_TX_DROPS, 1);
	}
	ret = scire_ib_xmit(qp, av, skb);
	if (copy)
		scire_ib_loopback(qp, av, copy, true);
	return ret;
}

/**
 * scire_pkt_send() - complete a RoCEv2 packet and send or loop it back.
 * @qp: the sending QP; qp->src_port is the UDP source port.
 * @av: the destination (normally &qp->av).
 * @skb: from scire_pkt_alloc(): skb->data is the BTH and every byte up to
 *	 the end of the pad is filled in; or, with the payload in page
 *	 fragments (scire_mr_frags()), every byte up to the end of the
 *	 payload, the pad then being added here. Consumed in every case.
 *
 * Appends the ICRC (IBA 7.8.1, RoCEv2 annex A17) and puts UDP (destination
 * port 4791) and IP headers in front: IPv4 with DF, the AV's traffic class
 * as TOS and its hop limit as TTL; or IPv6 with the traffic class, flow
 * label and hop limit. A hop limit of 0 is sent as 64. If the destination
 * is an address of this namespace on a scire device, the packet goes to that
 * device's receive path (loopback); otherwise it is routed out of the
 * device's netdev (or of the source GID's VLAN device on it) and the IP
 * stack adds the Ethernet header.
 *
 * Context: the QP's work item or softirq, with interrupts enabled and no
 * spinlock held: loopback runs the receive path, which takes the target
 * QP's locks.
 * Return: 0 when the packet was handed to the IP stack or to a receiver
 * (either may still drop it); -EHOSTUNREACH, -ENETUNREACH or another
 * routing error when there is no way to the destination; -ENETDOWN when
 * the namespace's socket is gone; -ENOLINK on a scire_ib port without a
 * live neighbour (scire_ib_xmit(); datagrams to the port's own LIDs are
 * looped back, and those to a multicast LID also to the port's members);
 * -EAFNOSUPPORT for IPv6 without IPv6; -ENOBUFS or -ENOMEM when the stack
 * or allocation dropped it; -EINVAL or -EMSGSIZE for a malformed AV or
 * packet.
 *
 * A RoCE port that is not ACTIVE sends nothing, and a scire device of this
 * host whose port is not ACTIVE is sent nothing (-ENETDOWN): looped back
 * in the driver, a packet or unit would otherwise reach it as if the link
 * were up, and a ULP whose path lost its carrier would never notice.
 *
 * A same-host unit (scire_pkt(skb)->local, see scire_req_start()) gets none
 * of this: it goes straight to the receiving device's QP, and if its
 * destination is not on this host any more it is dropped with -EMSGSIZE
 * (a unit is larger than any wire MTU). When the sender is being run with
 * a run set (scire_qp_run_all()), the receiving QP joins it.
 */
int scire_pkt_send(struct scire_qp *qp, const struct scire_av *av,
		   struct sk_buff *skb)
{
	struct scire_runset *rs = READ_ONCE(qp->run_task) == current ?
				  qp->runset : NULL;
	bool unit = scire_pkt(skb)->local;
	struct scire_dev *sdev = qp->sdev;
	struct scire_net *snet = sdev->net;
	struct net_device *ndev = NULL;
	struct scire_dev *target;
	struct dst_entry *dst;
	struct socket *sock;
	struct net *net;
	bool ipv6;
	int ret;

	if (sdev->link == SCIRE_LINK_IB) {
		if (unit) {
			scire_net_drop(sdev, skb, SCIRE_DROP_TX_INVALID);
			return -EMSGSIZE;
		}
		if (scire_lid_is_mcast(av->dlid))
			return scire_ib_mcast_send(qp, av, skb);
		if (scire_qp_is_datagram(qp) && scire_ib_loopback_ok(qp, av))
			return scire_ib_loopback(qp, av, skb, false);
		return scire_ib_xmit(qp, av, skb);
	}
	if (!scire_port_up(sdev)) {
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_NO_LINK);
		return -ENETDOWN;
	}
	if (av->network_type != RDMA_NETWORK_IPV4 &&
	    av->network_type != RDMA_NETWORK_IPV6) {
		ret = -EINVAL;
		goto drop_invalid;
	}
	ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	if (skb->len < sizeof(struct scire_bth) ||
	    skb->len > SCIRE_PKT_MAX_LEN) {
		ret = -EMSGSIZE;
		goto drop_invalid;
	}
	if (!snet) {
		ret = -ENETDOWN;
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_ROUTE);
		return ret;
	}
	/* Also a caller still holding a reference gets its bytes intact. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb || (!unit && scire_tx_room(sdev, av, skb))) {
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_NOMEM);
		return -ENOMEM;
	}
	/* The caller's cb (if any) must not be read as IP control block. */
	memset(skb->cb, 0, sizeof(skb->cb));

	rcu_read_lock();
	if (ipv6)
		sock = rcu_dereference(snet->ns->sock6);
	else
		sock = rcu_dereference(snet->ns->sock4);
	if (!sock) {
		ret = ipv6 && rcu_access_pointer(snet->ns->sock4) ?
		      -EAFNOSUPPORT : -ENETDOWN;
		goto drop_route;
	}
	net = sock_net(sock->sk);

	target = scire_tx_local_rcu(snet->ns, net, sdev, av, &ndev);
	if (IS_ERR(target)) {
		ret = PTR_ERR(target);
		goto drop_route;
	}
	if (target && !scire_port_up(target)) {
		rcu_read_unlock();
		scire_net_drop(sdev, skb, SCIRE_DROP_TX_NO_LINK);
		return -ENETDOWN;
	}
	if (unit) {
		if (!target) {
			ret = -EMSGSIZE;
			goto drop_route;
		}
		scire_count(sdev, SCIRE_CNT_LOCAL_UNITS, 1);
		scire_count(sdev, SCIRE_CNT_LOCAL_BYTES, skb->len);
		scire_rcv_unit(target, skb, av, rs);
		rcu_read_unlock();
		return 0;
	}
	if (target) {
		if (scire_build(net, qp, av, skb))
			goto drop_nomem;
		scire_count(sdev, SCIRE_CNT_TX_PACKETS, 1);
		scire_count(sdev, SCIRE_CNT_TX_BYTES,
			    skb->len - skb_transport_offset(skb) -
			    sizeof(struct udphdr));
		/* Arrive as from the wire: skb->data at the UDP header. */
		__skb_pull(skb, skb_transport_offset(skb));
		skb->dev = ndev;
		skb->pkt_type = PACKET_HOST;
		local_bh_disable();
		scire_rcv(target, skb, rs, true);
		local_bh_enable();
		rcu_read_unlock();
		return 0;
	}

	ndev = scire_tx_netdev_rcu(sdev, av);
	if (!ndev) {
		ret = -ENETUNREACH;
		goto drop_route;
	}
	dst = scire_route_cached(net, sock->sk, qp, av, ndev);
	if (IS_ERR(dst)) {
		ret = PTR_ERR(dst);
		goto drop_route;
	}
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	if (scire_build(net, qp, av, skb))
		goto drop_nomem;
	scire_count(sdev, SCIRE_CNT_TX_PACKETS, 1);
	scire_count(sdev, SCIRE_CNT_TX_BYTES,
		    skb->len - skb_transport_offset(skb) -
		    sizeof(struct udphdr));
	if (rs) {
		preempt_disable();
		this_cpu_write(scire_tx_runset, rs);
	}
	if (ipv6)
		ret = ip6_local_out(net, sock->sk, skb);
	else
		ret = ip_local_out(net, sock->sk, skb);
	if (rs) {
		this_cpu_write(scire_tx_runset, NULL);
		preempt_enable();
	}
	rcu_read_unlock();

	/* Congestion notification is not a loss; a qdisc drop is. */
	ret = net_xmit_eval(ret);
	return ret > 0 ? -ENOBUFS : ret;

drop_route:
	rcu_read_unlock();
	scire_net_drop(sdev, skb, SCIRE_DROP_TX_ROUTE);
	return ret;

drop_nomem:
	rcu_read_unlock();
	scire_net_drop(sdev, skb, SCIRE_DROP_TX_NOMEM);
	return -ENOMEM;

drop_invalid:
	scire_net_drop(sdev, skb, SCIRE_DROP_TX_INVALID);
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "../kunit/scire_icrc_rxe_test.c"
#include "../kunit/scire_icrc_test.c"
#endif
