// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: scire's ICRC (scire_icrc() in kernel/scire_net.c) against packets
 * that rdma_rxe sent (kunit/scire_icrc_rxe_vectors.h, captured by
 * kunit/capture-rxe-icrc): every RC opcode and UD SEND, over IPv4 and
 * IPv6. RoCEv2's ICRC is IBA annex A17.4's: a CRC-32 over the IP and UDP
 * headers and the BTH with their variant fields set to ones, then the rest
 * of the packet. Included at the end of kernel/scire_net.c when the kernel
 * has KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

#include "../kunit/scire_icrc_rxe_vectors.h"

/* An skb holding @pkt as received: network header at 0, UDP after it. */
static struct sk_buff *scire_test_rxe_skb(struct kunit *test,
					  const struct scire_rxe_pkt *pkt,
					  u32 *bth, u32 *len)
{
	u32 l3len = pkt->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct sk_buff *skb = alloc_skb(pkt->len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, pkt->data, pkt->len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l3len);
	*bth = l3len + sizeof(struct udphdr);
	*len = pkt->len - *bth - SCIRE_ICRC_SIZE;
	return skb;
}

static u32 scire_test_rxe_icrc(const struct scire_rxe_pkt *pkt)
{
	return get_unaligned_le32(pkt->data + pkt->len - SCIRE_ICRC_SIZE);
}

static void scire_rxe_pkt_desc(const struct scire_rxe_pkt *pkt, char *desc)
{
	u32 l3len = pkt->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "IPv%d opcode 0x%02x, %u bytes",
		 pkt->ipv6 ? 6 : 4, pkt->data[l3len + sizeof(struct udphdr)],
		 pkt->len);
}

KUNIT_ARRAY_PARAM(scire_rxe_pkt, scire_rxe_pkts, scire_rxe_pkt_desc);

/* scire computes the ICRC that rxe put on the wire. */
static void scire_icrc_matches_rxe(struct kunit *test)
{
	const struct scire_rxe_pkt *pkt = test->param_value;
	struct sk_buff *skb;
	u32 bth, len;

	skb = scire_test_rxe_skb(test, pkt, &bth, &len);
	KUNIT_EXPECT_EQ(test, scire_icrc(skb, pkt->ipv6, bth, len, false),
			scire_test_rxe_icrc(pkt));
	kfree_skb(skb);
}

/*
 * The same packets with the payload in page fragments, as zero-copy wire
 * packets and GRO'd receives carry it.
 */
static void scire_icrc_rxe_paged(struct kunit *test)
{
	const struct scire_rxe_pkt *pkt = test->param_value;
	u32 l3len = pkt->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 bth = l3len + sizeof(struct udphdr);
	u32 len = pkt->len - bth - SCIRE_ICRC_SIZE;
	u32 head = bth + sizeof(struct scire_bth), rest = len - sizeof(struct scire_bth);
	u32 first = rest / 3, second = rest - first;
	struct sk_buff *skb;
	struct page *page;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	skb = alloc_skb(head, GFP_KERNEL);
	if (!skb)
		__free_page(page);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, pkt->data, head);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l3len);
	/* Two fragments of one page, the second at an odd offset. */
	memcpy(page_address(page), pkt->data + head, first);
	memcpy(page_address(page) + 2049, pkt->data + head + first, second);
	get_page(page);
	skb_add_rx_frag(skb, 0, page, 0, first, PAGE_SIZE / 2);
	skb_add_rx_frag(skb, 1, page, 2049, second, PAGE_SIZE / 2);
	KUNIT_EXPECT_EQ(test, scire_icrc(skb, pkt->ipv6, bth, len, false),
			scire_test_rxe_icrc(pkt));
	kfree_skb(skb);
}

/* Flip bit @bit of byte @at of @pkt; does the ICRC change? */
static bool scire_test_icrc_changes(struct kunit *test,
				    const struct scire_rxe_pkt *pkt,
				    u32 at, u8 bit)
{
	struct sk_buff *skb;
	u32 bth, len, crc;

	skb = scire_test_rxe_skb(test, pkt, &bth, &len);
	skb->data[at] ^= bit;
	crc = scire_icrc(skb, pkt->ipv6, bth, len, false);
	kfree_skb(skb);
	return crc != scire_test_rxe_icrc(pkt);
}

static const struct scire_rxe_pkt *scire_test_rxe_first(bool ipv6)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(scire_rxe_pkts); i++)
		if (scire_rxe_pkts[i].ipv6 == ipv6)
			return &scire_rxe_pkts[i];
	return NULL;
}

/*
 * IPv4 TOS, TTL and header checksum, the UDP checksum and BTH byte 4 are
 * variant (A17.4.1): changing them leaves the ICRC alone.
 */
static void scire_icrc_ipv4_variant_fields(struct kunit *test)
{
	const struct scire_rxe_pkt *pkt = scire_test_rxe_first(false);
	u32 udp = sizeof(struct iphdr), bth = udp + sizeof(struct udphdr);
	static const u32 variant[] = { 1, 8, 10, 11 };
	int i;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	for (i = 0; i < ARRAY_SIZE(variant); i++)
		KUNIT_EXPECT_FALSE_MSG(test, scire_test_icrc_changes(test, pkt, variant[i], 0x21),
				       "IPv4 header byte %u", variant[i]);
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, udp + 6, 0x80));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, udp + 7, 0x01));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, bth + 4, 0xc0));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, bth + 4, 0x3f));
}

/* IPv6 traffic class, flow label and hop limit are variant. */
static void scire_icrc_ipv6_variant_fields(struct kunit *test)
{
	const struct scire_rxe_pkt *pkt = scire_test_rxe_first(true);
	u32 udp = sizeof(struct ipv6hdr);

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, 0, 0x0f));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, 1, 0xff));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, 3, 0x5a));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, 7, 0x40));
	KUNIT_EXPECT_FALSE(test, scire_test_icrc_changes(test, pkt, udp + 6, 0xff));
}

/*
 * Everything else is covered: addresses, ports, lengths, the BTH's
 * opcode, P_Key, destination QP and PSN, and every payload byte.
 */
static void scire_icrc_invariant_fields(struct kunit *test)
{
	const struct scire_rxe_pkt *v4 = scire_test_rxe_first(false);
	const struct scire_rxe_pkt *v6 = scire_test_rxe_first(true);
	u32 bth4 = sizeof(struct iphdr) + sizeof(struct udphdr);
	u32 bth6 = sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, v4);
	KUNIT_ASSERT_NOT_NULL(test, v6);
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v4, 12, 0x01));	/* saddr */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v4, 19, 0x80));	/* daddr */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v4, 4, 0x01));	/* id */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v4, 20, 0x01));	/* sport */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v6, 8, 0x01));	/* saddr */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v6, 39, 0x01));	/* daddr */
	KUNIT_EXPECT_TRUE(test, scire_test_icrc_changes(test, v6, 6, 0x01));	/* next header */
	for (i = 0; i < sizeof(struct scire_bth); i++) {
		if (i == 4)
			continue;
		KUNIT_EXPECT_TRUE_MSG(test, scire_test_icrc_changes(test, v4, bth4 + i, 0x01),
				      "BTH byte %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, scire_test_icrc_changes(test, v6, bth6 + i, 0x10),
				      "BTH byte %u", i);
	}
	for (i = bth4 + sizeof(struct scire_bth); i < v4->len - SCIRE_ICRC_SIZE; i += 97)
		KUNIT_EXPECT_TRUE_MSG(test, scire_test_icrc_changes(test, v4, i, 0x04),
				      "byte %u", i);
}

/*
 * Two RC RDMA FLUSH packets (IPv4, from the IP header to the ICRC) that
 * rdma_rxe of Debian trixie's 6.12.117 sent during selftest 77, captured
 * with an AF_PACKET socket on its veth: a FLUSH of a range and one of a
 * whole region. rxe hashes a FLUSH's headers twice (see scire_icrc()).
 */
static const u8 scire_rxe_flush_range[] = {
	0x45, 0x00, 0x00, 0x40, 0xd6, 0xab, 0x40, 0x00, 0x40, 0x11, 0x4f, 0x65,
	0x0a, 0x4d, 0x00, 0x01, 0x0a, 0x4d, 0x00, 0x02, 0xdc, 0x53, 0x12, 0xb7,
	0x00, 0x2c, 0x00, 0x00, 0x1c, 0x00, 0xff, 0xff, 0x00, 0xe2, 0x6b, 0x17,
	0x80, 0xff, 0xc6, 0xb4, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x1f, 0x0b, 0xe2, 0x00, 0x59, 0x4d, 0xe9, 0x53, 0x00, 0x00, 0x10, 0x00,
	0x83, 0xfe, 0x17, 0xce,
};

static const u8 scire_rxe_flush_region[] = {
	0x45, 0x00, 0x00, 0x40, 0xd6, 0xac, 0x40, 0x00, 0x40, 0x11, 0x4f, 0x64,
	0x0a, 0x4d, 0x00, 0x01, 0x0a, 0x4d, 0x00, 0x02, 0xdc, 0x53, 0x12, 0xb7,
	0x00, 0x2c, 0x00, 0x00, 0x1c, 0x00, 0xff, 0xff, 0x00, 0xe2, 0x6b, 0x17,
	0x80, 0xff, 0xc6, 0xb5, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x59, 0x4d, 0xe9, 0x53, 0x00, 0x00, 0x00, 0x00,
	0xe6, 0x67, 0xe0, 0x33,
};

/* scire computes rxe's ICRC of a FLUSH, and it is not annex A17's. */
static void scire_icrc_rxe_flush_case(struct kunit *test)
{
	static const struct scire_rxe_pkt flush[] = {
		{ .ipv6 = false, .len = sizeof(scire_rxe_flush_range),
		  .data = scire_rxe_flush_range },
		{ .ipv6 = false, .len = sizeof(scire_rxe_flush_region),
		  .data = scire_rxe_flush_region },
	};
	struct sk_buff *skb;
	u32 bth, len;
	int i;

	for (i = 0; i < ARRAY_SIZE(flush); i++) {
		skb = scire_test_rxe_skb(test, &flush[i], &bth, &len);
		KUNIT_EXPECT_TRUE(test, scire_icrc_rxe_flush((void *)skb->data + bth));
		KUNIT_EXPECT_EQ(test, scire_icrc(skb, false, bth, len, true),
				scire_test_rxe_icrc(&flush[i]));
		KUNIT_EXPECT_NE(test, scire_icrc(skb, false, bth, len, false),
				scire_test_rxe_icrc(&flush[i]));
		kfree_skb(skb);
	}
}

static struct kunit_case scire_icrc_rxe_cases[] = {
	KUNIT_CASE_PARAM(scire_icrc_matches_rxe, scire_rxe_pkt_gen_params),
	KUNIT_CASE_PARAM(scire_icrc_rxe_paged, scire_rxe_pkt_gen_params),
	KUNIT_CASE(scire_icrc_ipv4_variant_fields),
	KUNIT_CASE(scire_icrc_ipv6_variant_fields),
	KUNIT_CASE(scire_icrc_invariant_fields),
	KUNIT_CASE(scire_icrc_rxe_flush_case),
	{}
};

static struct kunit_suite scire_icrc_rxe_suite = {
	.name = "scire_icrc_rxe",
	.test_cases = scire_icrc_rxe_cases,
};

kunit_test_suites(&scire_icrc_rxe_suite);
