#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Generate kunit/scire_icrc_vectors.h: RoCEv2 packets with an ICRC that
# scire's code did not compute, for the scire_icrc KUnit suite.
#
# IPv4 packets are built and their ICRC computed by scapy's RoCE layer
# (scapy.contrib.roce, Debian's python3-scapy). scapy follows IBA annex
# A17.4 as rdma_rxe does: a CRC-32 (zlib's, i.e. the reflected IEEE CRC
# with init and final xor of ones) over eight bytes of ones standing for
# the LRH, the IPv4 header with TOS, TTL and checksum set to ones, the UDP
# header with its checksum set to ones, the BTH with byte 4 (FECN, BECN,
# resv6) set to ones, then the rest of the packet up to the ICRC, which is
# stored least significant byte first. That is rdma_rxe's rxe_icrc_hdr()
# (its CRC seed 0xdebb20e3 is the CRC state after those eight bytes).
#
# scapy 2.5 computes no ICRC for IPv6 (it writes zero). The IPv6 packets
# here therefore get their ICRC from this script's own zlib computation of
# the same A17.4 rule (traffic class, flow label and hop limit set to ones),
# independent of scire's C code; rdma_rxe's own IPv6 frames are in
# scire_icrc_rxe_vectors.h.
#
# Usage: kunit/gen_icrc_vectors.py > kunit/scire_icrc_vectors.h
#
# Copyright (c) 2026 The scire authors.

import struct
import sys
import zlib

from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6

ROCE_PORT = 4791


def payload(n, seed):
    return bytes((seed + 7 * i) & 0xff for i in range(n))


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


def deth(qkey, sqp):
    return struct.pack("!II", qkey, sqp)


def atmeth(va, rkey, swap, comp):
    return struct.pack("!QIQQ", va, rkey, swap, comp)


def aeth(syndrome, msn):
    return struct.pack("!I", syndrome << 24 | msn)


# name, opcode, extended headers, payload bytes, BTH fields
PACKETS = [
    ("RC SEND_ONLY, 1 byte, pad 3", 0x04, b"", 1,
     dict(psn=0x000001, dqpn=0x000011, ackreq=1)),
    ("RC SEND_ONLY, 2 bytes, pad 2", 0x04, b"", 2,
     dict(psn=0xffffff, dqpn=0xabcdef, solicited=1)),
    ("RC SEND_ONLY, 3 bytes, pad 1", 0x04, b"", 3,
     dict(psn=0x800000, dqpn=0x000012, fecn=1, becn=1)),
    ("RC SEND_FIRST, 256 bytes", 0x00, b"", 256,
     dict(psn=0x123456, dqpn=0x000013, migreq=1)),
    ("RC SEND_ONLY_IMM, 0 bytes", 0x05, b"\xde\xad\xbe\xef", 0,
     dict(psn=0x000100, dqpn=0x000014)),
    ("RC RDMA_WRITE_ONLY, 1021 bytes", 0x0a,
     reth(0xfedcba9876543210, 0x00012345, 1021), 1021,
     dict(psn=0x00fffe, dqpn=0x000015, ackreq=1)),
    ("RC RDMA_READ_REQUEST", 0x0c, reth(0x0000000100002000, 0x00abcd01, 4096),
     0, dict(psn=0x000777, dqpn=0x000016)),
    ("RC COMPARE_SWAP", 0x13,
     atmeth(0x7f0000001000, 0x00000201, 0x1111222233334444,
            0x5555666677778888), 0, dict(psn=0x000003, dqpn=0x000017)),
    ("RC ACKNOWLEDGE", 0x11, aeth(0x1f, 0x000042), 0,
     dict(psn=0x000004, dqpn=0x000018)),
    ("RC RDMA_READ_RESPONSE_ONLY, 4093 bytes", 0x10, aeth(0x00, 0xfffffe),
     4093, dict(psn=0x000005, dqpn=0x000019)),
    ("UD SEND_ONLY, 64 bytes", 0x64, deth(0x11111111, 0x00000203), 64,
     dict(psn=0x000006, dqpn=0x00001a)),
]


def bth_bytes(opcode, pad, fields):
    b = BTH(opcode=opcode, padcount=pad, pkey=0xffff, icrc=0, **fields)
    # The BTH alone, without the ICRC scapy would append.
    return raw(b)[:12]


def build_v4(i, name, opcode, ext, plen, fields):
    pad = -plen % 4
    body = ext + payload(plen, i) + bytes(pad)
    pkt = (IP(src="192.0.2.%d" % (10 + i), dst="198.51.100.%d" % (20 + i),
              tos=0x5c + i, ttl=64 - i, id=0x1000 + i, flags="DF") /
           UDP(sport=0xc000 + i, dport=ROCE_PORT, chksum=0x1234 + i) /
           BTH(opcode=opcode, padcount=pad, **fields) / body)
    data = raw(pkt)
    # scapy's BTH post_build placed the ICRC last; check where it is.
    assert len(data) == 20 + 8 + 12 + len(body) + 4
    return data


def icrc_v6(data):
    m = bytearray(b"\xff" * 8 + data[:40 + 8 + 12])
    ip6 = 8
    m[ip6] |= 0x0f          # traffic class, high nibble
    m[ip6 + 1] = 0xff       # traffic class low nibble, flow label
    m[ip6 + 2] = 0xff
    m[ip6 + 3] = 0xff
    m[ip6 + 7] = 0xff       # hop limit
    udp = ip6 + 40
    m[udp + 6:udp + 8] = b"\xff\xff"
    m[udp + 8 + 4] = 0xff   # BTH byte 4
    crc = zlib.crc32(bytes(m) + data[40 + 8 + 12:])
    return struct.pack("<I", crc)


def build_v6(i, name, opcode, ext, plen, fields):
    pad = -plen % 4
    body = ext + payload(plen, i + 100) + bytes(pad)
    l4 = bth_bytes(opcode, pad, fields) + body
    pkt = (IPv6(src="2001:db8::%x" % (0x10 + i), dst="2001:db8:1::%x" % (0x20 + i),
                tc=0x60 + i, fl=0x12345 + i, hlim=255 - i) /
           UDP(sport=0xd000 + i, dport=ROCE_PORT, chksum=0x4321 + i,
               len=8 + len(l4) + 4) / (l4 + bytes(4)))
    data = raw(pkt)[:-4]
    return data + icrc_v6(data)


def c_bytes(data):
    out = []
    for off in range(0, len(data), 12):
        out.append("\t\t" + " ".join("0x%02x," % b for b in data[off:off + 12]))
    return "\n".join(out)


def main():
    vecs = []
    for i, (name, op, ext, plen, fields) in enumerate(PACKETS):
        vecs.append(("IPv4 " + name + " (scapy ICRC)", False,
                     build_v4(i, name, op, ext, plen, fields)))
    for i, (name, op, ext, plen, fields) in enumerate(PACKETS[:6] + PACKETS[8:]):
        vecs.append(("IPv6 " + name + " (script ICRC)", True,
                     build_v6(i, name, op, ext, plen, fields)))

    w = sys.stdout.write
    w("/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */\n")
    w("/*\n * Generated by kunit/gen_icrc_vectors.py; do not edit.\n")
    w(" * RoCEv2 packets from the IPv4 header to the ICRC (last 4 bytes,\n")
    w(" * little-endian), ICRC computed by scapy's RoCE layer (IPv4) or by\n")
    w(" * the script's own A17.4 computation (IPv6).\n *\n")
    w(" * Copyright (c) 2026 The scire authors.\n */\n")
    w("#ifndef SCIRE_ICRC_VECTORS_H\n#define SCIRE_ICRC_VECTORS_H\n\n")
    w("struct scire_icrc_vec {\n\tconst char *name;\n\tbool ipv6;\n")
    w("\tu32 len;\n\tconst u8 *data;\n};\n\n")
    w("static const struct scire_icrc_vec scire_icrc_vecs[] = {\n")
    for name, v6, data in vecs:
        w("\t{\n\t\t.name = \"%s\",\n\t\t.ipv6 = %s,\n\t\t.len = %d,\n"
          % (name, "true" if v6 else "false", len(data)))
        w("\t\t.data = (const u8[]){\n%s\n\t\t},\n\t},\n" % c_bytes(data))
    w("};\n\n#endif /* SCIRE_ICRC_VECTORS_H */\n")


if __name__ == "__main__":
    main()
