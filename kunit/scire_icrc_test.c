// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * KUnit: scire's ICRC (scire_icrc() in kernel/scire_net.c) against packets
 * whose ICRC scapy's RoCE layer computed (IPv4) or kunit/gen_icrc_vectors.py
 * computed with zlib (IPv6; scapy has no IPv6 ICRC): every payload length
 * modulo 4, so every pad count, and SEND, WRITE, READ, atomic, ACK and UD
 * headers. Included at the end of kernel/scire_net.c when the kernel has
 * KUnit.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <kunit/test.h>

#include "../kunit/scire_icrc_vectors.h"

static u32 scire_test_vec_l3len(const struct scire_icrc_vec *vec)
{
	return vec->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

/* The ICRC scire computes for @data, a copy of @vec with changes. */
static u32 scire_test_vec_icrc(struct kunit *test,
			       const struct scire_icrc_vec *vec, const u8 *data)
{
	u32 l3len = scire_test_vec_l3len(vec);
	u32 bth = l3len + sizeof(struct udphdr);
	struct sk_buff *skb;
	u32 crc;

	skb = alloc_skb(vec->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, data, vec->len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l3len);
	crc = scire_icrc(skb, vec->ipv6, bth, vec->len - bth - SCIRE_ICRC_SIZE,
			 false);
	kfree_skb(skb);
	return crc;
}

static u32 scire_test_vec_want(const struct scire_icrc_vec *vec)
{
	return get_unaligned_le32(vec->data + vec->len - SCIRE_ICRC_SIZE);
}

static void scire_icrc_vec_desc(const struct scire_icrc_vec *vec, char *desc)
{
	strscpy(desc, vec->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(scire_icrc_vec, scire_icrc_vecs, scire_icrc_vec_desc);

/* scire agrees with scapy (IPv4) and with the generator (IPv6). */
static void scire_icrc_known_good(struct kunit *test)
{
	const struct scire_icrc_vec *vec = test->param_value;

	KUNIT_EXPECT_EQ(test, scire_test_vec_icrc(test, vec, vec->data),
			scire_test_vec_want(vec));
}

/*
 * Any single bit flipped in a field A17.4 covers changes the ICRC: here
 * one bit of every byte from the IP source address to the last pad byte,
 * except the variant fields.
 */
static bool scire_test_variant(const struct scire_icrc_vec *vec, u32 at)
{
	u32 udp = scire_test_vec_l3len(vec), bth = udp + sizeof(struct udphdr);

	if (at >= udp + 6 && at < udp + 8)	/* UDP checksum */
		return true;
	if (at == bth + 4)			/* FECN, BECN, resv6 */
		return true;
	if (vec->ipv6)				/* version/TC, TC/flow label, hop */
		return at < 4 || at == 7;
	return at == 1 || at == 8 || at == 10 || at == 11;
}

static void scire_icrc_bit_flips(struct kunit *test)
{
	const struct scire_icrc_vec *vec = test->param_value;
	u32 want = scire_test_vec_want(vec), at, changed = 0;
	u8 *data;

	data = kunit_kmalloc(test, vec->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memcpy(data, vec->data, vec->len);
	for (at = 0; at < vec->len - SCIRE_ICRC_SIZE; at++) {
		u8 bit = BIT(at % 8);

		if (scire_test_variant(vec, at))
			continue;
		data[at] ^= bit;
		if (scire_test_vec_icrc(test, vec, data) != want)
			changed++;
		else
			KUNIT_FAIL(test, "flipping bit %u of byte %u went unseen",
				   at % 8, at);
		data[at] ^= bit;
	}
	KUNIT_EXPECT_GT(test, changed, 0U);
}

/*
 * The variant fields take any value without changing the ICRC: IPv4 TOS,
 * TTL and header checksum, IPv6 traffic class, flow label and hop limit,
 * the UDP checksum and BTH byte 4 (FECN, BECN, resv6), all at once.
 */
static void scire_icrc_variant_fields(struct kunit *test)
{
	const struct scire_icrc_vec *vec = test->param_value;
	u32 udp = scire_test_vec_l3len(vec), bth = udp + sizeof(struct udphdr);
	u8 *data;

	data = kunit_kmalloc(test, vec->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memcpy(data, vec->data, vec->len);
	if (vec->ipv6) {
		data[0] ^= 0x0f;
		data[1] ^= 0xff;
		data[2] ^= 0x5a;
		data[3] ^= 0xa5;
		data[7] = 1;
	} else {
		data[1] = 0x02;		/* DSCP 0, ECN CE */
		data[8] = 1;
		data[10] ^= 0xff;
		data[11] ^= 0x0f;
	}
	data[udp + 6] = 0;
	data[udp + 7] = 0;
	data[bth + 4] ^= 0xff;
	KUNIT_EXPECT_EQ(test, scire_test_vec_icrc(test, vec, data),
			scire_test_vec_want(vec));
}

/* The BTH reserved byte after AckReq (resv7) is not variant: it is covered. */
static void scire_icrc_resv7_covered(struct kunit *test)
{
	const struct scire_icrc_vec *vec = &scire_icrc_vecs[0];
	u32 bth = scire_test_vec_l3len(vec) + sizeof(struct udphdr);
	u8 *data;

	data = kunit_kmalloc(test, vec->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memcpy(data, vec->data, vec->len);
	data[bth + 8] ^= 0x01;
	KUNIT_EXPECT_NE(test, scire_test_vec_icrc(test, vec, data),
			scire_test_vec_want(vec));
}

/* The ICRC bytes themselves are not input to the ICRC. */
static void scire_icrc_excludes_itself(struct kunit *test)
{
	const struct scire_icrc_vec *vec = &scire_icrc_vecs[1];
	u8 *data;

	data = kunit_kmalloc(test, vec->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memcpy(data, vec->data, vec->len);
	memset(data + vec->len - SCIRE_ICRC_SIZE, 0, SCIRE_ICRC_SIZE);
	KUNIT_EXPECT_EQ(test, scire_test_vec_icrc(test, vec, data),
			scire_test_vec_want(vec));
}

static struct kunit_case scire_icrc_cases[] = {
	KUNIT_CASE_PARAM(scire_icrc_known_good, scire_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(scire_icrc_bit_flips, scire_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(scire_icrc_variant_fields, scire_icrc_vec_gen_params),
	KUNIT_CASE(scire_icrc_resv7_covered),
	KUNIT_CASE(scire_icrc_excludes_itself),
	{}
};

static struct kunit_suite scire_icrc_suite = {
	.name = "scire_icrc",
	.test_cases = scire_icrc_cases,
};

kunit_test_suites(&scire_icrc_suite);
