// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire-ibswitch: the scire_ib framing (docs/scire_ib.md, "Encapsulation")
 * and the IB headers the switch reads or writes: LRH (IBA 7.7), GRH (8.3),
 * BTH (9.2), DETH (9.3.3) and the ICRC (7.8.1).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <string.h>

#include "ibsw.h"

uint16_t ibsw_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t ibsw_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

uint64_t ibsw_get64(const uint8_t *p)
{
	return (uint64_t)ibsw_get32(p) << 32 | ibsw_get32(p + 4);
}

void ibsw_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

void ibsw_put32(uint8_t *p, uint32_t v)
{
	ibsw_put16(p, v >> 16);
	ibsw_put16(p + 2, v);
}

void ibsw_put64(uint8_t *p, uint64_t v)
{
	ibsw_put32(p, v >> 32);
	ibsw_put32(p + 4, v);
}

static uint32_t crc_table[256];

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ c >> 1 : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ crc >> 8;
	return crc;
}

/**
 * ibsw_icrc() - the ICRC of an IB packet (IBA 7.8.1).
 * @ib: the packet from its LRH.
 * @len: LRH to the last payload byte (the ICRC itself excluded).
 * @grh: the packet has a GRH (LNH global).
 *
 * The CRC-32 of IEEE 802.3 over the packet with the fields a switch or
 * router may change taken as ones: LRH VL; GRH TClass, FlowLabel and
 * HopLmt; the BTH's reserved byte. The switch never changes them, so a
 * packet it forwards unchanged keeps its ICRC; only a directed-route SMP,
 * whose MAD it rewrites, is sealed again.
 *
 * Return: the ICRC, to be stored little endian as the kernel does.
 */
uint32_t ibsw_icrc(const uint8_t *ib, size_t len, bool grh)
{
	size_t hlen = LRH_LEN + (grh ? GRH_LEN : 0) + BTH_LEN;
	uint8_t h[LRH_LEN + GRH_LEN + BTH_LEN];
	uint32_t crc;

	if (!crc_table[1])
		crc_table_init();
	if (len < hlen)
		hlen = len;
	memcpy(h, ib, hlen);
	h[0] |= 0xf0;
	if (grh && hlen >= LRH_LEN + GRH_LEN) {
		h[LRH_LEN] |= 0x0f;
		h[LRH_LEN + 1] = h[LRH_LEN + 2] = h[LRH_LEN + 3] = 0xff;
		h[LRH_LEN + 7] = 0xff;
	}
	if (hlen == LRH_LEN + (grh ? GRH_LEN : 0) + BTH_LEN)
		h[hlen - BTH_LEN + 4] = 0xff;
	crc = crc32_update(0xffffffffu, h, hlen);
	crc = crc32_update(crc, ib + hlen, len - hlen);
	return ~crc;
}

/**
 * ibsw_parse() - check a DATA datagram and find its headers.
 * @dgram: the datagram, scire_ib header first.
 * @len: its length.
 * @pkt: filled in on success.
 *
 * What a port's receive side checks before anything is forwarded: the
 * scire_ib version and type, LVer 0, LNH local or global (raw packets are
 * not carried), PktLen equal to the datagram's length, a GRH of version 6
 * with an IBA transport next, BTH TVer 0, and the ICRC. A UD SEND_ONLY
 * whose payload is exactly one MAD gets @pkt->mad.
 *
 * Return: 0, or -1 for a packet to drop as a receive error.
 */
int ibsw_parse(const uint8_t *dgram, size_t len, struct ibsw_pkt *pkt)
{
	const uint8_t *ib = dgram + SIB_HDR_LEN, *bth;
	size_t hdrs, payload;
	uint8_t pad;

	memset(pkt, 0, sizeof(*pkt));
	if (len < SIB_HDR_LEN + LRH_LEN + BTH_LEN + ICRC_LEN ||
	    dgram[0] != (SIB_VERSION << 4 | SIB_TYPE_DATA))
		return -1;
	pkt->ib = ib;
	pkt->ib_len = len - SIB_HDR_LEN;
	pkt->vl = ib[0] >> 4;
	pkt->sl = ib[1] >> 4;
	pkt->lnh = ib[1] & 3;
	pkt->dlid = ibsw_get16(ib + 2);
	pkt->slid = ibsw_get16(ib + 6);
	if ((ib[0] & 0xf) != 0 || pkt->lnh < LNH_LOCAL ||
	    (size_t)(ibsw_get16(ib + 4) & 0x7ff) * 4 != pkt->ib_len)
		return -1;
	hdrs = LRH_LEN + (pkt->lnh == LNH_GLOBAL ? GRH_LEN : 0);
	if (pkt->ib_len < hdrs + BTH_LEN + ICRC_LEN)
		return -1;
	if (pkt->lnh == LNH_GLOBAL &&
	    (ib[LRH_LEN] >> 4 != 6 || ib[LRH_LEN + 6] != 0x1b))
		return -1;
	pkt->bth_off = hdrs;
	bth = ib + hdrs;
	if ((bth[1] & 0xf) != 0)
		return -1;
	pkt->opcode = bth[0];
	pad = (bth[1] >> 4) & 3;
	pkt->pkey = ibsw_get16(bth + 2);
	pkt->dest_qp = ibsw_get32(bth + 4) & 0xffffff;
	if (ibsw_icrc(ib, pkt->ib_len - ICRC_LEN, pkt->lnh == LNH_GLOBAL) !=
	    (uint32_t)(ib[pkt->ib_len - 4] | ib[pkt->ib_len - 3] << 8 |
		       ib[pkt->ib_len - 2] << 16 |
		       (uint32_t)ib[pkt->ib_len - 1] << 24))
		return -1;
	hdrs += BTH_LEN;
	if (pkt->opcode == BTH_UD_SEND_ONLY &&
	    pkt->ib_len >= hdrs + DETH_LEN + ICRC_LEN + pad) {
		payload = pkt->ib_len - hdrs - DETH_LEN - ICRC_LEN - pad;
		if (payload == MAD_LEN) {
			pkt->qkey = ibsw_get32(ib + hdrs);
			pkt->src_qp = ibsw_get32(ib + hdrs + 4) & 0xffffff;
			pkt->mad = ib + hdrs + DETH_LEN;
		}
	}
	return 0;
}

/**
 * ibsw_reseal() - compute a DATA datagram's ICRC again after its
 * invariant part (a directed-route SMP's hop pointer and paths) changed.
 * @dgram: the datagram, already checked by ibsw_parse().
 * @len: its length.
 */
void ibsw_reseal(uint8_t *dgram, size_t len)
{
	uint8_t *ib = dgram + SIB_HDR_LEN;
	size_t ib_len = len - SIB_HDR_LEN;
	uint32_t crc = ibsw_icrc(ib, ib_len - ICRC_LEN,
				 (ib[1] & 3) == LNH_GLOBAL);

	ib[ib_len - 4] = crc;
	ib[ib_len - 3] = crc >> 8;
	ib[ib_len - 2] = crc >> 16;
	ib[ib_len - 1] = crc >> 24;
}

/**
 * ibsw_build_mad() - a UD SEND_ONLY datagram carrying one MAD.
 * @dgram: room for SIB_HDR_LEN + 288 bytes.
 * @vl: VL15 for an SMP, 0 for a GMP.
 * @sl: the LRH's SL.
 * @dlid: LRH DLID.
 * @slid: LRH SLID.
 * @pkey: BTH P_Key.
 * @dest_qp: BTH DestQP (0 or 1).
 * @qkey: DETH Q_Key.
 * @src_qp: DETH SrcQP.
 * @mad: the 256-byte MAD.
 *
 * Return: the datagram's length.
 */
size_t ibsw_build_mad(uint8_t *dgram, uint8_t vl, uint8_t sl, uint16_t dlid,
		      uint16_t slid, uint16_t pkey, uint32_t dest_qp,
		      uint32_t qkey, uint32_t src_qp, const uint8_t *mad)
{
	size_t ib_len = LRH_LEN + BTH_LEN + DETH_LEN + MAD_LEN + ICRC_LEN;
	uint8_t *ib = dgram + SIB_HDR_LEN, *bth = ib + LRH_LEN;

	memset(dgram, 0, SIB_HDR_LEN + ib_len);
	dgram[0] = SIB_VERSION << 4 | SIB_TYPE_DATA;
	ib[0] = vl << 4;
	ib[1] = sl << 4 | LNH_LOCAL;
	ibsw_put16(ib + 2, dlid);
	ibsw_put16(ib + 4, ib_len / 4);
	ibsw_put16(ib + 6, slid);
	bth[0] = BTH_UD_SEND_ONLY;
	ibsw_put16(bth + 2, pkey);
	ibsw_put32(bth + 4, dest_qp & 0xffffff);
	ibsw_put32(bth + BTH_LEN, qkey);
	ibsw_put32(bth + BTH_LEN + 4, src_qp & 0xffffff);
	memcpy(bth + BTH_LEN + DETH_LEN, mad, MAD_LEN);
	ibsw_reseal(dgram, SIB_HDR_LEN + ib_len);
	return SIB_HDR_LEN + ib_len;
}
