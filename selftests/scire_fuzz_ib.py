#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""scire_fuzz_ib: forged and malformed scire_ib datagrams (docs/scire_ib.md)
sent to a scire_ib port by a program that stands in for its neighbour.

Run in the neighbour's network namespace, from the neighbour's address
(--local), while the neighbour's own scire_ib device is being deleted:
the program greets the victim (--peer) with HELLOs twice a second from
the start, so the victim's link never drops, then binds the UDP port
4792 of --local as soon as it is free (the moment the neighbour's
device is gone) to receive what the victim sends back. From then on it
is the victim's neighbour.

Known answers first, each with a reply or its absence checked:
- DATA packets the link layer must drop (IBA 7.7, 7.8.1, 8.3; the
  scire_ib header of docs/scire_ib.md): each carries a valid Get(NodeInfo)
  SMP, so a reply would show that it got through: bad scire_ib versions
  and types, LVer 1, VL0 for QP0, VL15 for QP1, a data VL above VL0,
  LNH 0 and 1, DLIDs not the port's (another, 0, multicast), PktLen off
  by one either way, a datagram cut short or with bytes after the ICRC,
  a wrong ICRC, a GRH of version 4 or another next header, BTH TVer 1,
  an invalid opcode, the permissive SLID or DLID on QP1;
- SMPs to QP0 (IBA 14.2): the M_Key check (a Get and a would-be valid
  Set with the wrong key get no reply and change nothing), bad attribute
  modifiers and attributes (0x1c, 0x0c), unsupported methods (0x08), a
  class version of 2 (0x04), Set(PortInfo) with one invalid field each
  (0x1c and the attribute as it stands), Set(P_KeyTable) and
  Set(SLtoVLMappingTable) with invalid entries, a valid Set(PortInfo)
  that changes nothing (status 0: the control for the invalid ones);
  directed routes (IBA 14.2.2): one and two hops are answered with the D
  bit set, bad hop pointers and counts and returning SMPs are not;
  MADs shorter or longer than 256 bytes (dropped: the core would complete
  a short one from a receive buffer it reuses, so a 4-byte SMP sent after
  640 others must get no reply either);
- GMPs to QP1 (IBA 16.1): PortCounters with a bad PortSelect (0x1c), a
  bad class version, an unknown attribute, the wrong Q_Key and a P_Key
  not in the table (no reply).

Then a seeded random stream for --seconds: LRH fields at random and at
their boundaries, GRHs, every BTH opcode to QP0, QP1 and random QPNs,
truncation, wrong ICRCs, bad scire_ib headers, HELLOs with garbage,
and SMPs and GMPs with random attributes, methods, modifiers, M_Keys,
hop pointers and paths. Most packets carry a correct ICRC. A Set with
the right M_Key always has an invalid field, so that nothing in the
stream may change the port. Every datagram the victim sends back must be
well formed (scire_ib header, LRH, PktLen, ICRC), and the victim must
still answer a Get(NodeInfo) afterwards with its PortInfo unchanged.

Afterwards the program keeps sending HELLOs, so that the caller can
inspect the port with the link up, until it gets SIGTERM; its exit
status is then 0 if every check passed, 1 otherwise. It also writes that
status to --done once the checks are over.

Standard library only. Replay a run with --seed (printed).

Copyright (c) 2026 The scire authors.
"""

import argparse
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
import zlib

PORT = 4792
VERSION = 1
T_DATA, T_HELLO = 0, 1
LID_PERMISSIVE = 0xFFFF
GSI_QKEY = 0x80010000
UD_SEND_ONLY = 0x64

CLASS_SMP_LID, CLASS_SMP_DR, CLASS_PMA = 0x01, 0x81, 0x04
GET, SET, SEND, TRAP, GET_RESP, TRAP_REPRESS = 0x01, 0x02, 0x03, 0x05, 0x81, 0x07
A_NODE_DESC, A_NODE_INFO, A_GUID_INFO, A_PORT_INFO = 0x10, 0x11, 0x14, 0x15
A_PKEY_TABLE, A_SL2VL, A_VLARB, A_SM_INFO = 0x16, 0x17, 0x18, 0x20
A_PMA_CPI, A_PORT_COUNTERS, A_PORT_COUNTERS_EXT = 0x01, 0x12, 0x1D
S_OK, S_BAD_VERSION, S_METHOD, S_METHOD_ATTR, S_INVALID = 0x0, 0x4, 0x8, 0xC, 0x1C
D_BIT = 0x8000

# The SMP's data field and NodeInfo's PortGUID in it (IBA 14.2.5).
SMP_DATA = 64
NODE_INFO_PORT_GUID = SMP_DATA + 20
PI_LID, PI_SM_LID = 16, 18
PI_MKEY_VIOL, PI_PKEY_VIOL, PI_QKEY_VIOL = 44, 46, 48

KA_TID = 0x5C1E000000000000  # known-answer TIDs; the random ones avoid them


class VictimSilent(Exception):
    """The victim stopped answering: the checks after it would only time out."""


def log(*args):
    print(*args, flush=True)


# --- packets -----------------------------------------------------------------

# BTH opcodes (IBA 9.2, table 38) and the bytes of extended headers each
# has: RC, UC (no RDMA READ, atomics, ACKs) and UD; everything else invalid.
EXT_LEN = {}
for base, reliable in ((0x00, True), (0x20, False)):
    for op, ext in ((0x00, 0), (0x01, 0), (0x02, 0), (0x03, 4), (0x04, 0),
                    (0x05, 4), (0x06, 16), (0x07, 0), (0x08, 0), (0x09, 4),
                    (0x0A, 16), (0x0B, 20)):
        EXT_LEN[base + op] = ext
    if reliable:
        for op, ext in ((0x0C, 16), (0x0D, 4), (0x0E, 0), (0x0F, 4),
                        (0x10, 4), (0x11, 4), (0x12, 12), (0x13, 28),
                        (0x14, 28), (0x16, 4), (0x17, 4)):
            EXT_LEN[base + op] = ext
EXT_LEN[0x64] = 8
EXT_LEN[0x65] = 12


def icrc(ib, grh_len):
    """The ICRC (IBA 7.8.1) of ib, LRH to payload: CRC-32 with the variant
    fields as ones (LRH VL; GRH TClass, FlowLabel, HopLmt; BTH resv8a)."""
    h = bytearray(ib[:8 + grh_len + 12])
    if h:
        h[0] |= 0xF0
    if grh_len and len(h) >= 8 + grh_len:
        h[8] |= 0x0F
        h[9] = h[10] = h[11] = 0xFF
        h[15] = 0xFF
    if len(h) > 8 + grh_len + 4:
        h[8 + grh_len + 4] = 0xFF
    return zlib.crc32(bytes(h) + ib[len(h):]) & 0xFFFFFFFF


class Pkt:
    """A scire_ib DATA datagram with every field under control. wire()
    fills in what is left as None (PktLen, pad, ICRC) correctly."""

    def __init__(self, **kw):
        self.ver, self.type, self.enc_resv = VERSION, T_DATA, 0
        self.vl, self.lver, self.sl, self.lrh_resv, self.lnh = 15, 0, 0, 0, 2
        self.dlid, self.slid, self.pktlen, self.pktlen_resv = 0, 0, None, 0
        self.grh = None
        self.opcode, self.se, self.mig, self.pad, self.tver = UD_SEND_ONLY, 0, 0, None, 0
        self.pkey, self.resv8a, self.qpn, self.ackreq, self.psn = 0xFFFF, 0, 0, 0, 0
        self.ext = b''
        self.payload = b''
        self.icrc_xor = 0
        self.cut = None      # keep this many bytes of the sealed datagram
        self.extra = b''     # bytes after the ICRC
        for k, v in kw.items():
            if not hasattr(self, k):
                raise AttributeError(k)
            setattr(self, k, v)

    def wire(self):
        # pad None: the pad count the payload needs, and its zero bytes;
        # a number: only the BTH's claim (the payload's last bytes).
        pad = (-len(self.payload)) % 4 if self.pad is None else self.pad
        fill = bytes(pad & 3) if self.pad is None else b''
        grh = self.grh or b''
        bth = struct.pack('>BBHII', self.opcode,
                          self.se << 7 | self.mig << 6 | (pad & 3) << 4 | self.tver,
                          self.pkey, self.resv8a << 24 | (self.qpn & 0xFFFFFF),
                          self.ackreq << 31 | (self.psn & 0xFFFFFF))
        body = grh + bth + self.ext + self.payload + fill
        words = (8 + len(body) + 4) // 4 if self.pktlen is None else self.pktlen
        lrh = struct.pack('>BBHHH', self.vl << 4 | self.lver,
                          self.sl << 4 | self.lrh_resv << 2 | self.lnh,
                          self.dlid, self.pktlen_resv << 11 | (words & 0x7FF),
                          self.slid)
        ib = lrh + body
        crc = icrc(ib, len(grh)) ^ self.icrc_xor
        d = (bytes([self.ver << 4 | self.type, self.enc_resv, 0, 0]) + ib +
             struct.pack('<I', crc) + self.extra)
        return d if self.cut is None else d[:self.cut]


def deth(qkey, sqp):
    return struct.pack('>II', qkey, sqp & 0xFFFFFF)


def grh_bytes(version=6, tclass=0, flow=0, paylen=0, next_hdr=0x1B, hop=64,
              sgid=bytes(16), dgid=bytes(16)):
    return (struct.pack('>IHBB', version << 28 | tclass << 20 | flow, paylen,
                        next_hdr, hop) + sgid + dgid)


def mad(mclass, method, attr, mod, tid, status=0, cspec=0, base=1, cver=1,
        body=b''):
    """A 256-byte MAD: the common header (IBA 13.4.2), then body."""
    h = struct.pack('>BBBBHHQHHI', base, mclass, cver, method, status, cspec,
                    tid, attr, 0, mod)
    return (h + body + bytes(256))[:256]


def smp(method, attr, mod, tid, mkey, data=b'', dr=None, cver=1, status=0,
        base=1):
    """An SMP (IBA 14.2.1): LID-routed, or directed-route when dr is a dict
    (hop_ptr, hop_cnt, d, slid, dlid, init, ret: the path bytes)."""
    data = (data + bytes(64))[:64]
    if dr is None:
        body = struct.pack('>Q', mkey) + bytes(32) + data
        return mad(CLASS_SMP_LID, method, attr, mod, tid, status=status,
                   base=base, cver=cver, body=body)
    init = (bytes(dr.get('init', b'')) + bytes(64))[:64]
    ret = (bytes(dr.get('ret', b'')) + bytes(64))[:64]
    body = (struct.pack('>QHH', mkey, dr.get('slid', LID_PERMISSIVE),
                        dr.get('dlid', LID_PERMISSIVE)) + bytes(28) + data +
            init + ret)
    st = status | (D_BIT if dr.get('d') else 0)
    return mad(CLASS_SMP_DR, method, attr, mod, tid, status=st,
               cspec=dr.get('hop_ptr', 0) << 8 | dr.get('hop_cnt', 0),
               base=base, cver=cver, body=body)


def pma(method, attr, tid, port_select=1, cver=1, counter_select=0):
    data = struct.pack('>BBH', 0, port_select, counter_select)
    return mad(CLASS_PMA, method, attr, 0, tid, cver=cver,
               body=bytes(40) + data)


# --- the fuzzer ----------------------------------------------------------------

class Fuzzer:
    def __init__(self, a):
        self.a = a
        self.peer = (a.peer, PORT)
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tx.bind((a.local, 0))
        self.rx = None
        self.replies = {}        # TID -> parsed reply
        self.n_rx = self.n_rx_hello = self.n_rx_to_qp0 = 0
        self.bad_rx = []         # what was wrong with malformed replies
        self.failures = []
        self.hello_stop = threading.Event()
        self.hello_payload = struct.pack('>QQ', a.neigh_port_guid,
                                         a.neigh_node_guid)
        self.n_sent = 0
        self.ka_tid = KA_TID
        self.no_reply = set()    # known-answer TIDs that must get none
        self.silent = 0          # requests unanswered in a row

    # -- the link --

    def hello_loop(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((self.a.local, 0))
        hello = bytes([VERSION << 4 | T_HELLO, 0, 0, 0]) + self.hello_payload
        while not self.hello_stop.is_set():
            try:
                s.sendto(hello, self.peer)
            except OSError as e:
                log(f'# HELLO not sent: {e}')
            self.hello_stop.wait(0.5)

    def take_over(self, ready):
        """Start the HELLOs, say so in file ready, and bind the UDP port
        the neighbour's device holds as soon as it is free."""
        threading.Thread(target=self.hello_loop, daemon=True).start()
        with open(ready, 'w') as f:
            f.write('hellos\n')
        end = time.monotonic() + 60
        while True:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.bind((self.a.local, PORT))
                self.rx = s
                return True
            except OSError:
                s.close()
                if time.monotonic() > end:
                    return False
                time.sleep(0.05)

    # -- sending and receiving --

    def send(self, d):
        try:
            self.tx.sendto(d, self.peer)
            self.n_sent += 1
        except OSError as e:
            # A datagram too large for the route, say: not the victim's.
            if self.a.verbose:
                log(f'# not sent ({len(d)} bytes): {e}')

    def parse(self, d):
        """Check a datagram from the victim; return the reply as a dict for
        a MAD, None for a HELLO, or record what is wrong with it."""
        if len(d) < 4 or d[0] >> 4 != VERSION:
            return self.bad(d, 'bad scire_ib header')
        if d[0] & 0xF == T_HELLO:
            self.n_rx_hello += 1
            if len(d) != 4 + 16:
                return self.bad(d, 'HELLO of the wrong length')
            return None
        if d[0] & 0xF != T_DATA:
            return self.bad(d, 'unknown scire_ib type')
        ib = d[4:]
        if len(ib) < 8 + 12 + 4:
            return self.bad(d, 'too short for LRH, BTH and ICRC')
        vl, lver = ib[0] >> 4, ib[0] & 0xF
        lnh = ib[1] & 3
        dlid, words, slid = struct.unpack('>HHH', ib[2:8])
        if lver or lnh not in (2, 3) or (words & 0x7FF) * 4 != len(ib):
            return self.bad(d, f'LRH: LVer {lver} LNH {lnh} PktLen {words & 0x7ff} '
                               f'for {len(ib)} bytes')
        grh_len = 40 if lnh == 3 else 0
        if struct.unpack('<I', ib[-4:])[0] != icrc(ib[:-4], grh_len):
            return self.bad(d, 'wrong ICRC')
        bth = ib[8 + grh_len:8 + grh_len + 12]
        opcode = bth[0]
        dqp = struct.unpack('>I', bth[4:8])[0] & 0xFFFFFF
        self.n_rx += 1
        if opcode != UD_SEND_ONLY:
            return {'opcode': opcode, 'tid': None}
        sqp = struct.unpack('>I', ib[8 + grh_len + 16:8 + grh_len + 20])[0] & 0xFFFFFF
        m = ib[8 + grh_len + 12 + 8:-4]
        m = m[:len(m) - (bth[1] >> 4 & 3)]
        if len(m) != 256:
            return self.bad(d, f'a MAD of {len(m)} bytes')
        # VL15 is QP0's (IBA 7.6.5). A GMP that claimed to come from QP0
        # is answered to QP0, on VL0: the forger's business.
        if (sqp == 0) != (vl == 15):
            return self.bad(d, f'from QP{sqp} on VL{vl}')
        if dqp == 0 and sqp != 0:
            self.n_rx_to_qp0 += 1
        r = {'opcode': opcode, 'vl': vl, 'dlid': dlid, 'slid': slid,
             'dqp': dqp, 'mad': m, 'method': m[3],
             'status': struct.unpack('>H', m[4:6])[0],
             'tid': struct.unpack('>Q', m[8:16])[0]}
        return r

    def bad(self, d, why):
        self.bad_rx.append(f'{why}: {d[:64].hex()}')
        return None

    def drain(self, timeout=0.0):
        """Read what the victim sent until nothing came for timeout s."""
        while True:
            r, _, _ = select.select([self.rx], [], [], timeout)
            if not r:
                return
            d, src = self.rx.recvfrom(65536)
            if src[0] != self.a.peer:
                continue
            rep = self.parse(d)
            if rep and rep['tid'] is not None:
                self.replies[rep['tid']] = rep

    def wait_reply(self, tid, secs):
        end = time.monotonic() + secs
        while tid not in self.replies:
            left = end - time.monotonic()
            if left <= 0:
                self.silent += 1
                if self.silent >= 3:
                    raise VictimSilent(f'{self.silent} requests in a row unanswered')
                return None
            self.drain(min(left, 0.2))
        self.silent = 0
        return self.replies[tid]

    # -- packets to the victim --

    def to_qp0(self, m, **kw):
        a = self.a
        f = dict(vl=15, dlid=a.lid, slid=a.slid, qpn=0, ext=deth(0, 0), payload=m)
        f.update(kw)
        return Pkt(**f)

    def to_qp1(self, m, **kw):
        a = self.a
        f = dict(vl=0, dlid=a.lid, slid=a.slid, qpn=1, ext=deth(GSI_QKEY, 1),
                 payload=m)
        f.update(kw)
        return Pkt(**f)

    def get_node_info(self, tid, **kw):
        return self.to_qp0(smp(GET, A_NODE_INFO, 0, tid, self.a.mkey), **kw)

    def probe(self, what, secs=10):
        """A Get(NodeInfo) that must be answered with the victim's GUID."""
        self.ka_tid += 1
        tid = self.ka_tid
        self.send(self.get_node_info(tid).wire())
        r = self.wait_reply(tid, secs)
        if not r:
            return self.fail(f'{what}: no reply to a Get(NodeInfo) in {secs} s')
        guid = struct.unpack('>Q', r['mad'][NODE_INFO_PORT_GUID:NODE_INFO_PORT_GUID + 8])[0]
        if r['status'] or guid != self.a.port_guid:
            return self.fail(f'{what}: Get(NodeInfo) answered status {r["status"]:#x}, '
                             f'PortGUID {guid:#x}, want 0, {self.a.port_guid:#x}')
        return r

    def fail(self, msg):
        log(f'FAIL: {msg}')
        self.failures.append(msg)
        return None

    # -- known answers --

    def case(self, name, pkts, want, check=None):
        """Send pkts (a Pkt, or a list: the last one is answered) with the
        next TID and expect status want (with the D bit for a directed
        route), or no reply when want is None. Without a reply expected,
        a probe that is answered shows the case had its turn."""
        self.ka_tid += 1
        tid = self.ka_tid
        if not isinstance(pkts, list):
            pkts = [pkts]
        for p in pkts:
            p = p(tid) if callable(p) else p
            self.send(p.wire())
        if want is None:
            self.no_reply.add(tid)
            if not self.probe(f'{name} (the probe after it)'):
                return None
            self.drain(0.05)
            r = self.replies.get(tid)
            if r:
                self.no_reply.discard(tid)
                return self.fail(f'{name}: answered (status {r["status"]:#06x}), want no reply')
            log(f'ok: {name}: no reply')
            return True
        r = self.wait_reply(tid, 10)
        if not r:
            return self.fail(f'{name}: no reply in 10 s, want status {want:#06x}')
        if r['status'] != want:
            return self.fail(f'{name}: status {r["status"]:#06x}, want {want:#06x}')
        if check:
            msg = check(r)
            if msg:
                return self.fail(f'{name}: {msg}')
        log(f'ok: {name}: status {want:#06x}')
        return r

    def port_info(self):
        """The victim's PortInfo (Get with the M_Key), for the Sets."""
        r = self.case('Get(PortInfo) with the M_Key',
                      lambda t: self.to_qp0(smp(GET, A_PORT_INFO, 0, t, self.a.mkey)),
                      S_OK)
        return bytearray(r['mad'][SMP_DATA:SMP_DATA + 64]) if r else None

    def violations(self):
        """PortInfo's M_Key, P_Key and Q_Key violation counters."""
        pi = self.port_info()
        if pi is None:
            return None
        return struct.unpack('>HHH', pi[PI_MKEY_VIOL:PI_QKEY_VIOL + 2])

    def pi_unchanged(self, r):
        pi = r['mad'][SMP_DATA:SMP_DATA + 64]
        lid, sm_lid = struct.unpack('>HH', pi[PI_LID:PI_LID + 4])
        state = pi[32] & 0xF
        if (lid, sm_lid, state) != (self.a.lid, self.a.sm_lid, 4):
            return (f'PortInfo in the reply: LID {lid}, SM LID {sm_lid}, '
                    f'PortState {state}; want {self.a.lid}, {self.a.sm_lid}, 4 (Active)')
        return None

    def known_answers(self):
        a = self.a
        mkey = a.mkey
        q0 = self.to_qp0
        q1 = self.to_qp1

        def ni(**kw):
            return lambda t: self.get_node_info(t, **kw)

        def set_pi(pi, mod=0, key=mkey):
            return lambda t: q0(smp(SET, A_PORT_INFO, mod, t, key, data=bytes(pi)))

        if not self.probe('first Get(NodeInfo) over the link'):
            return
        log('ok: the victim answers a Get(NodeInfo) across the link, ICRC and all')

        # The link layer: every one of these carries a valid Get(NodeInfo).
        self.case('scire_ib version 0', ni(ver=0), None)
        self.case('scire_ib version 2', ni(ver=2), None)
        self.case('scire_ib type 2', ni(type=2), None)
        self.case('scire_ib type 15', ni(type=15), None)
        self.case('LRH LVer 1', ni(lver=1), None)
        self.case('LRH LVer 15', ni(lver=15), None)
        self.case('QP0 on VL0', ni(vl=0), None)
        self.case('QP0 on VL7', ni(vl=7), None)
        self.case('LNH 0 (raw)', ni(lnh=0), None)
        self.case('LNH 1 (raw IPv6)', ni(lnh=1), None)
        other = 0x0BAD if a.lid != 0x0BAD else 0x0BAE
        self.case(f'DLID {other:#x} (not the port)', ni(dlid=other), None)
        self.case('DLID 0', ni(dlid=0), None)
        self.case('DLID 0xc001 (multicast)', ni(dlid=0xC001), None)
        good = self.get_node_info(0).wire()
        words = (len(good) - 4) // 4
        self.case('PktLen one word short', ni(pktlen=words - 1), None)
        self.case('PktLen one word long', ni(pktlen=words + 1), None)
        self.case('PktLen 0', ni(pktlen=0), None)
        self.case('PktLen 0x7ff', ni(pktlen=0x7FF), None)
        self.case('4 bytes after the ICRC', ni(extra=bytes(4)), None)
        self.case('cut inside the MAD', ni(cut=4 + 8 + 12 + 8 + 100), None)
        for n in (0, 1, 3, 4, 5, 12, 24, 35, len(good) - 1):
            self.case(f'datagram cut to {n} bytes', ni(cut=n), None)
        self.case('wrong ICRC (one bit)', ni(icrc_xor=1 << 17), None)
        self.case('GRH version 4', ni(lnh=3, grh=grh_bytes(version=4)), None)
        self.case('GRH next header 0x1c', ni(lnh=3, grh=grh_bytes(next_hdr=0x1C)), None)
        self.case('BTH TVer 1', ni(tver=1), None)
        self.case('BTH opcode 0x1f (reserved)', ni(opcode=0x1F), None)
        self.case('BTH opcode 0x66 (reserved UD)', ni(opcode=0x66), None)
        self.case('QP1 on VL15',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t), vl=15), None)
        self.case('QP1 on VL3 (beyond OperationalVLs)',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t), vl=3), None)
        self.case('QP1 to the permissive DLID',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t), dlid=LID_PERMISSIVE), None)
        self.case('QP1 from the permissive SLID',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t), slid=LID_PERMISSIVE), None)

        # The SMA (IBA 14.2.4, 14.2.5): LID-routed SMPs.
        pi = self.port_info()
        if pi is None:
            return
        lid, sm_lid = struct.unpack('>HH', pi[PI_LID:PI_LID + 4])
        if (lid, sm_lid) != (a.lid, a.sm_lid) or pi[32] & 0xF != 4:
            self.fail(f'PortInfo before the cases: LID {lid}, SM LID {sm_lid}, '
                      f'PortState {pi[32] & 0xf}; want {a.lid}, {a.sm_lid}, 4')
        if struct.unpack('>Q', pi[0:8])[0] != mkey or pi[34] >> 6 != 2:
            self.fail(f'PortInfo M_Key {pi[0:8].hex()} protect bits {pi[34] >> 6}, '
                      f'want {mkey:#x} and 2')
        # A valid Set from the current values: PortState NOP, physical
        # state "no change".
        base = bytearray(pi)
        base[32] &= 0xF0
        base[33] &= 0x0F

        self.case('Get(NodeInfo) with the wrong M_Key',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey ^ 1)), None)
        self.case('Get(PortInfo) with M_Key 0',
                  lambda t: q0(smp(GET, A_PORT_INFO, 0, t, 0)), None)
        moved = bytearray(base)
        struct.pack_into('>H', moved, PI_LID, (a.lid + 7) % 0xBFFF + 1)
        self.case('Set(PortInfo) to a new LID with the wrong M_Key',
                  set_pi(moved, key=mkey ^ 0x100), None)
        self.case('Set(PortInfo) to a new LID with M_Key 0', set_pi(moved, key=0), None)
        self.case('Get(PortInfo) of port 2',
                  lambda t: q0(smp(GET, A_PORT_INFO, 2, t, mkey)), S_INVALID)
        self.case('Get(PortInfo) of port 0xffffffff',
                  lambda t: q0(smp(GET, A_PORT_INFO, 0xFFFFFFFF, t, mkey)), S_INVALID)
        self.case('Get(P_KeyTable) block 1',
                  lambda t: q0(smp(GET, A_PKEY_TABLE, 1, t, mkey)), S_INVALID)
        self.case('Get(P_KeyTable) block 0xffff',
                  lambda t: q0(smp(GET, A_PKEY_TABLE, 0xFFFF, t, mkey)), S_INVALID)

        def pkeys_match(r):
            got = struct.unpack('>16H', r['mad'][SMP_DATA:SMP_DATA + 32])
            want = tuple((a.pkeys + [0] * 16)[:16])
            return None if got == want else f'P_KeyTable {got}, sysfs says {want}'
        self.case('Get(P_KeyTable) block 0',
                  lambda t: q0(smp(GET, A_PKEY_TABLE, 0, t, mkey)), S_OK, pkeys_match)
        self.case('Get(NodeDescription) modifier 1',
                  lambda t: q0(smp(GET, A_NODE_DESC, 1, t, mkey)), S_INVALID)
        self.case('Get(GUIDInfo) block 1',
                  lambda t: q0(smp(GET, A_GUID_INFO, 1, t, mkey)), S_INVALID)
        self.case('Get(SLtoVLMappingTable) modifier 0x101',
                  lambda t: q0(smp(GET, A_SL2VL, 0x101, t, mkey)), S_INVALID)
        self.case('Get of attribute 0x99',
                  lambda t: q0(smp(GET, 0x99, 0, t, mkey)), S_METHOD_ATTR)
        self.case('Get(VLArbitrationTable) (VLArbCap 0)',
                  lambda t: q0(smp(GET, A_VLARB, 1, t, mkey)), S_METHOD_ATTR)
        self.case('Set(NodeInfo)',
                  lambda t: q0(smp(SET, A_NODE_INFO, 0, t, mkey)), S_METHOD_ATTR)
        self.case('Set(NodeDescription)',
                  lambda t: q0(smp(SET, A_NODE_DESC, 0, t, mkey, data=b'x' * 64)),
                  S_METHOD_ATTR)
        self.case('method Send (0x03)',
                  lambda t: q0(smp(SEND, A_NODE_INFO, 0, t, mkey)), S_METHOD)
        self.case('method 0x7f',
                  lambda t: q0(smp(0x7F, A_PORT_INFO, 0, t, mkey)), S_METHOD)
        self.case('TrapRepress (consumed)',
                  lambda t: q0(smp(TRAP_REPRESS, 0x02, 0, t, mkey)), None)
        self.case('a GetResp (for an SM; there is none)',
                  lambda t: q0(smp(GET_RESP, A_NODE_INFO, 0, t, mkey)), None)
        self.case('class version 2',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey, cver=2)), S_BAD_VERSION)
        self.case('base version 2 (not a MAD the core takes)',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey, base=2)), None)
        self.case('an SMP to QP1 (GSI takes no SMPs)',
                  lambda t: q1(smp(GET, A_NODE_INFO, 0, t, mkey)), None)
        self.case('a PMA GMP to QP0',
                  lambda t: q0(pma(GET, A_PORT_COUNTERS, t)), None)

        # Set(PortInfo): the control, then one invalid field at a time.
        self.case('Set(PortInfo) of the values it has (a valid no-op)',
                  set_pi(base), S_OK, self.pi_unchanged)
        bad = []

        def field(name, off, val, mask=0xFF):
            p = bytearray(base)
            p[off] = (p[off] & ~mask & 0xFF) | val
            bad.append((name, p))

        def lid_field(name, off, val):
            p = bytearray(base)
            struct.pack_into('>H', p, off, val)
            bad.append((name, p))
        lid_field('LID 0', PI_LID, 0)
        lid_field('LID 0xc000 (multicast)', PI_LID, 0xC000)
        lid_field('LID 0xffff', PI_LID, 0xFFFF)
        lid_field('MasterSMLID 0', PI_SM_LID, 0)
        lid_field('MasterSMLID 0xfffe', PI_SM_LID, 0xFFFE)
        field('LinkWidthEnabled 8X', 29, 0x04)
        field('LinkWidthEnabled 0x80', 29, 0x80)
        field('PortState 5 (reserved)', 32, 5, 0x0F)
        field('PortState 15', 32, 15, 0x0F)
        field('PortState Init from Active', 32, 2, 0x0F)
        field('PortPhysicalState Sleep', 33, 1 << 4, 0xF0)
        field('PortPhysicalState LinkUp', 33, 5 << 4, 0xF0)
        field('PortPhysicalState 15', 33, 15 << 4, 0xF0)
        field('LinkDownDefaultState 3', 33, 3, 0x0F)
        field('LinkSpeedEnabled 8 (unsupported)', 35, 8, 0x0F)
        field('NeighborMTU 0', 36, 0, 0xF0)
        field('NeighborMTU 6', 36, 6 << 4, 0xF0)
        field('NeighborMTU 15', 36, 15 << 4, 0xF0)
        field('OperationalVLs 2 (VLCap 1)', 43, 2 << 4, 0xF0)
        field('OperationalVLs 15', 43, 15 << 4, 0xF0)
        for name, p in bad:
            self.case(f'Set(PortInfo) with {name}', set_pi(p), S_INVALID, self.pi_unchanged)
        self.case('Set(PortInfo) of its own values to port 2', set_pi(base, mod=2),
                  S_INVALID, self.pi_unchanged)

        # Set(P_KeyTable): entries beyond PartitionCap 16, block 1.
        table = struct.pack('>16H', *(a.pkeys + [0] * 16)[:16])
        self.case('Set(P_KeyTable) with entry 20 set',
                  lambda t: q0(smp(SET, A_PKEY_TABLE, 0, t, mkey,
                                   data=table + bytes(8) + b'\x80\x01')),
                  S_INVALID)
        self.case('Set(P_KeyTable) block 1',
                  lambda t: q0(smp(SET, A_PKEY_TABLE, 1, t, mkey, data=b'\xff\xff')),
                  S_INVALID)
        self.case('Set(SLtoVLMappingTable) with SL1 on VL3',
                  lambda t: q0(smp(SET, A_SL2VL, 0, t, mkey, data=b'\x03')), S_INVALID)

        # Directed routes (IBA 14.2.2; the core's smi.c): the SM one or two
        # hops away, then bad hop pointers and counts, returning SMPs.
        def dr(name, want, method=GET, attr=A_NODE_INFO, mod=0, data=b'', key=mkey,
               **route):
            route.setdefault('init', b'\x00\x01\x01')
            route.setdefault('ret', b'\x00\x01\x01')
            self.case(f'directed route {name}',
                      lambda t: q0(smp(method, attr, mod, t, key, data=data, dr=route),
                                   dlid=LID_PERMISSIVE, slid=LID_PERMISSIVE),
                      want if want is None else want | D_BIT)
        dr('of one hop (hop pointer 1, count 1)', S_OK, hop_ptr=1, hop_cnt=1)
        dr('of two hops (hop pointer 2, count 2)', S_OK, hop_ptr=2, hop_cnt=2)
        dr('of one hop, Get(PortInfo) of port 2', S_INVALID, attr=A_PORT_INFO, mod=2,
           hop_ptr=1, hop_cnt=1)
        dr('of one hop, Set(PortInfo) with LID 0', S_INVALID, method=SET,
           attr=A_PORT_INFO, data=bytes(bad[0][1]), hop_ptr=1, hop_cnt=1)
        dr('hop pointer 0, count 1 (C14-9:1)', None, hop_ptr=0, hop_cnt=1)
        dr('hop pointer 3, count 1 (C14-9:5)', None, hop_ptr=3, hop_cnt=1)
        dr('hop pointer 255, count 1', None, hop_ptr=255, hop_cnt=1)
        dr('hop pointer 1, count 2 (a CA is no intermediate hop)', None,
           hop_ptr=1, hop_cnt=2)
        dr('hop count 64 (C14-6)', None, hop_ptr=64, hop_cnt=64)
        dr('hop count 255', None, hop_ptr=0, hop_cnt=255)
        dr('hop count 0 from the wire', None, hop_ptr=0, hop_cnt=0)
        dr('end of the path at a CA without the permissive DrDLID', None,
           hop_ptr=1, hop_cnt=1, dlid=a.lid)
        dr('returning (D bit), hop pointer 0', None, d=1, hop_ptr=0, hop_cnt=1)
        dr('returning (D bit), hop pointer 2, count 1', None, d=1, hop_ptr=2,
           hop_cnt=1)
        dr('returning (D bit), hop pointer 9, count 1', None, d=1, hop_ptr=9,
           hop_cnt=1)
        dr('returning Set(PortInfo) to a new LID, wrong M_Key', None, method=SET,
           attr=A_PORT_INFO, data=bytes(moved), key=mkey ^ 1, d=1, hop_ptr=0,
           hop_cnt=0)
        dr('of one hop, Set(PortInfo) to a new LID, wrong M_Key', None, method=SET,
           attr=A_PORT_INFO, data=bytes(moved), key=mkey ^ 1, hop_ptr=1, hop_cnt=1)

        # Truncated and oversized MADs: a MAD is 256 bytes, and the port
        # drops any other size (the core would read a short one in full
        # from a reused receive buffer: see stale_mad()).
        self.case('a MAD cut after its M_Key (Get(NodeInfo))',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey)[:32]), None)
        self.case('a MAD cut after its M_Key (Set(PortInfo): LID 0)',
                  lambda t: q0(smp(SET, A_PORT_INFO, 0, t, mkey, data=bytes(base))[:32]),
                  None)
        self.case('a MAD cut inside its M_Key (the key reads wrong)',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey)[:28]), None)
        self.case('a MAD cut to its common header',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey)[:24]), None)
        self.case('an SMP of 4 bytes',
                  lambda t: q0(smp(GET, A_NODE_INFO, 0, t, mkey)[:4]), None)
        self.case('an empty SMP (DETH only)', lambda t: q0(b''), None)
        self.case('an SMP of 300 bytes (no receive buffer holds it)', lambda t: q0(
            smp(GET, A_NODE_INFO, 0, t, mkey) + bytes(44)), None)
        self.case('a MAD with BTH pad 3 (its last 3 bytes cut)', lambda t: q0(
            smp(GET, A_NODE_INFO, 0, t, mkey), pad=3), None)
        self.case('a PMA GMP cut to 100 bytes',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t)[:100]), None)
        self.stale_mad()

        # The PMA on QP1 (IBA 16.1).
        self.case('PMA Get(PortCounters) of port 1',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t)), S_OK)
        self.case('PMA Get(PortCounters) of port 2',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t, port_select=2)), S_INVALID)
        self.case('PMA Get(PortCountersExtended) of port 255', lambda t: q1(
            pma(GET, A_PORT_COUNTERS_EXT, t, port_select=255)), S_INVALID)
        self.case('PMA class version 2',
                  lambda t: q1(pma(GET, A_PORT_COUNTERS, t, cver=2)), S_BAD_VERSION)
        self.case('PMA attribute 0x99', lambda t: q1(pma(GET, 0x99, t)), S_METHOD_ATTR)
        self.case('PMA Set(ClassPortInfo)', lambda t: q1(pma(SET, A_PMA_CPI, t)),
                  S_METHOD_ATTR)
        self.case('PMA method 0x0e', lambda t: q1(pma(0x0E, A_PORT_COUNTERS, t)),
                  S_METHOD)
        # Each key violation is counted in PortInfo (and trapped: 123
        # checks traps_sent).
        before = self.violations()
        self.case('PMA with the wrong Q_Key', lambda t: q1(
            pma(GET, A_PORT_COUNTERS, t), ext=deth(0x12345678, 1)), None)
        # A P_Key whose base matches no entry (IBA 10.9.3).
        other_pkey = next(k for k in (0x9234, 0xA5A5, 0x8001)
                          if all((k ^ e) & 0x7FFF for e in a.pkeys))
        self.case(f'PMA with P_Key {other_pkey:#x} (not in the table)', lambda t: q1(
            pma(GET, A_PORT_COUNTERS, t), pkey=other_pkey), None)
        after = self.violations()
        if before and after:
            # The M_Key is right in the Gets: only P_Key and Q_Key move.
            want = (before[0], before[1] + 1, before[2] + 1)
            if after != want:
                self.fail(f'PortInfo violations (M_Key, P_Key, Q_Key) went from '
                          f'{before} to {after}, want {want}')
            else:
                log(f'ok: P_KeyViolations and Q_KeyViolations each counted once: {after}')

        # HELLOs with garbage: too short, then long and odd. The link stays.
        for g in (b'', b'\x01' * 7, os.urandom(15), os.urandom(200)):
            self.send(bytes([VERSION << 4 | T_HELLO, 0xFF, 0xFF, 0xFF]) + g)
        self.probe('a Get(NodeInfo) after HELLOs with garbage')
        self.drain(0.5)
        late = sorted(t - KA_TID for t in self.no_reply if t in self.replies)
        if late:
            self.fail(f'late replies to cases that want none: TIDs KA+{late}')

    def stale_mad(self, n=640):
        """The MAD layer reposts a receive buffer (the last response built
        in it) without clearing it. Once n Get(NodeInfo)s with the M_Key
        have been through QP0's receive queue (512 buffers), a 4-byte SMP
        "LID-routed Get" would be completed by the stale bytes of one of
        them, M_Key and TID included, and answered. It must be dropped."""
        mkey = self.a.mkey
        tids = range(KA_TID + 0x10000, KA_TID + 0x10000 + n)
        for i, t in enumerate(tids):
            self.send(self.get_node_info(t).wire())
            if i % 16 == 15:
                self.drain(0.02)
        self.drain(1.0)
        got = sum(t in self.replies for t in tids)
        if got < n // 2:
            return self.fail(f'only {got} of {n} Get(NodeInfo)s answered')
        for t in tids:
            self.replies.pop(t, None)
        rx = self.n_rx
        self.send(self.to_qp0(bytes([1, CLASS_SMP_LID, 1, GET])).wire())
        if not self.probe('the probe after a 4-byte SMP'):
            return None
        self.drain(0.5)
        stale = [f'{t - KA_TID:#x}' for t in tids if t in self.replies]
        if self.n_rx - rx != 1 or stale:
            return self.fail(f'a 4-byte SMP after {got} others was answered '
                             f'({self.n_rx - rx - 1} replies, stale TIDs KA+{stale}): '
                             'completed from a reused receive buffer')
        log(f'ok: a 4-byte SMP after {got} Get(NodeInfo)s with the M_Key: no reply')
        return True

    # -- the random stream --

    def rand_lid(self, r):
        a = self.a
        return r.choice([a.lid, a.lid, a.lid, LID_PERMISSIVE, 0, 0xC000, 0xC001,
                         0xFFFE, 0xBFFF, a.lid ^ 1, a.lid + 1, r.randrange(0x10000)])

    def rand_mkey(self, r):
        return r.choice([self.a.mkey] * 6 + [0, self.a.mkey ^ 1, r.getrandbits(64)])

    def force_invalid(self, r, method, attr, mod, data):
        """For a Set that will pass the M_Key check: make it invalid, so
        that it cannot change the port. Returns (mod, data)."""
        if method != SET:
            return mod, data
        d = bytearray(data)
        if attr == A_PORT_INFO:
            k = r.randrange(10)
            if k == 0:
                mod = r.choice([2, 3, 0xFF, 0x80000001, 0xFFFFFFFF])
            elif k == 1:
                struct.pack_into('>H', d, PI_LID, r.choice([0, 0xC000, 0xFFFF, 0xD123]))
            elif k == 2:
                struct.pack_into('>H', d, PI_SM_LID, r.choice([0, 0xC000, 0xFFFF]))
            elif k == 3:
                d[29] = r.choice([0x04, 0x08, 0x10, 0x80, 0x05, 0xFE])
            elif k == 4:
                d[32] = (d[32] & 0xF0) | r.randrange(5, 16)
            elif k == 5:
                d[33] = (d[33] & 0x0F) | r.choice([1, 4, 5, 6, 7, 8, 15]) << 4
            elif k == 6:
                d[33] = (d[33] & 0xF0) | r.randrange(3, 16)
            elif k == 7:
                d[36] = (d[36] & 0x0F) | r.choice([0, 6, 7, 15]) << 4
            elif k == 8:
                d[43] = (d[43] & 0x0F) | r.randrange(2, 16) << 4
            else:
                d[35] = (d[35] & 0xF0) | r.choice([8, 9, 0xA, 0xE])
        elif attr == A_PKEY_TABLE:
            if r.randrange(2):
                mod = r.choice([1, 2, 0xFFFF, 0x10001, r.randrange(1, 0x10000)])
            else:
                i = r.randrange(16, 32)
                struct.pack_into('>H', d, 2 * i, r.randrange(1, 0x10000))
        elif attr == A_SL2VL:
            if r.randrange(2):
                mod = r.randrange(1, 1 << 32)
            else:
                i = r.randrange(8)
                d[i] = r.randrange(1, 15) << 4 | (d[i] & 0xF)
        return mod, bytes(d)

    def rand_smp(self, r, tid):
        a = self.a
        attr = r.choice([A_NODE_DESC, A_NODE_INFO, A_GUID_INFO, A_PORT_INFO,
                         A_PORT_INFO, A_PORT_INFO, A_PKEY_TABLE, A_PKEY_TABLE,
                         A_SL2VL, A_VLARB, A_SM_INFO, 0x02, 0x19, 0x1A, 0x1B,
                         0x30, 0xFF00, r.randrange(0x10000)])
        method = r.choice([GET, GET, GET, SET, SET, SET, SEND, TRAP, GET_RESP,
                           TRAP_REPRESS, 0x06, 0x7F, r.randrange(256)])
        mod = r.choice([0, 0, 0, 1, 2, 0xFF, 0xFFFF, 0x10000, 0x80000000,
                        0xFFFFFFFF, r.getrandbits(32)])
        mkey = self.rand_mkey(r)
        # Start from a valid Set (the port's values), or from noise.
        if attr == A_PORT_INFO and r.randrange(2):
            data = bytearray(self.base_pi)
            for _ in range(r.randrange(4)):
                data[r.randrange(64)] = r.randrange(256)
        elif attr == A_PKEY_TABLE and r.randrange(2):
            data = bytearray(struct.pack('>16H', *(a.pkeys + [0] * 16)[:16]) + bytes(32))
        else:
            data = bytearray(r.randbytes(64) if r.randrange(2) else bytes(64))
        cver = 1 if r.randrange(20) else r.randrange(256)
        base = 1 if r.randrange(200) else r.choice([0, 2, 0x80, 0xFF])
        # Anything but a wrong key might be processed: keep Sets invalid.
        if mkey == a.mkey and base == 1:
            mod, data = self.force_invalid(r, method, attr, mod, data)
        status = 0 if r.randrange(8) else r.getrandbits(16)
        if r.randrange(3):
            m = smp(method, attr, mod, tid, mkey, data=bytes(data), cver=cver,
                    status=status & ~D_BIT & 0xFFFF, base=base)
            kw = {'dlid': r.choice([a.lid, a.lid, LID_PERMISSIVE, self.rand_lid(r)])}
        else:
            hop_cnt = r.choice([0, 1, 1, 1, 2, 3, 63, 64, 255, r.randrange(256)])
            hop_ptr = r.choice([0, 1, hop_cnt, hop_cnt + 1, hop_cnt + 2,
                                r.randrange(256)]) & 0xFF
            route = {'hop_ptr': hop_ptr, 'hop_cnt': hop_cnt, 'd': r.randrange(4) == 0,
                     'slid': r.choice([LID_PERMISSIVE, LID_PERMISSIVE, a.lid, 0,
                                       r.randrange(0x10000)]),
                     'dlid': r.choice([LID_PERMISSIVE, LID_PERMISSIVE, a.lid, 0,
                                       r.randrange(0x10000)]),
                     'init': r.choice([b'\x00\x01\x01\x01', r.randbytes(64)]),
                     'ret': r.choice([b'\x00\x01\x01\x01', r.randbytes(64)])}
            m = smp(method, attr, mod, tid, mkey, data=bytes(data), dr=route,
                    cver=cver, status=status & ~D_BIT & 0xFFFF, base=base)
            kw = {'dlid': r.choice([LID_PERMISSIVE, LID_PERMISSIVE, a.lid]),
                  'slid': r.choice([LID_PERMISSIVE, a.slid])}
        if r.randrange(10) == 0:
            # Truncated: the port must drop it (a MAD is 256 bytes). Were
            # it read, what follows the cut would be stale bytes of an
            # earlier MAD (see stale_mad()), which is how a stream without
            # this check changed sib0's P_Key table; a Set with the right
            # key still gets an invalid attribute modifier if it has one.
            n = r.randrange(257)
            if n >= 32 and mkey == a.mkey and base == 1 and method == SET:
                m = bytearray(m)
                struct.pack_into('>I', m, 20, {A_PORT_INFO: 2, A_PKEY_TABLE: 1,
                                               A_SL2VL: 1}.get(attr, 2))
                m = bytes(m)
            m = m[:n]
        return self.to_qp0(m, **kw)

    def rand_gmp(self, r, tid):
        cls = r.choice([CLASS_PMA, CLASS_PMA, CLASS_PMA, 0x03, 0x06, 0x07, 0x0A,
                        0x10, 0x30, CLASS_SMP_LID, r.randrange(256)])
        method = r.choice([GET, GET, SET, SEND, GET_RESP, 0x06, 0x12, r.randrange(256)])
        attr = r.choice([A_PMA_CPI, A_PORT_COUNTERS, A_PORT_COUNTERS_EXT, 0x10,
                         0x11, r.randrange(0x10000)])
        body = bytes(40) + struct.pack('>BBH', 0, r.choice([0, 1, 1, 2, 255]),
                                       r.getrandbits(16))
        if r.randrange(2):
            body += r.randbytes(188)
        m = mad(cls, method, attr, r.choice([0, 0, 1, r.getrandbits(32)]), tid,
                cver=1 if r.randrange(10) else r.randrange(256),
                base=1 if r.randrange(200) else 2, body=body)
        if r.randrange(10) == 0:
            m = m[:r.randrange(257)]
        qkey = GSI_QKEY if r.randrange(6) else r.getrandbits(32)
        pkey = r.choice([0xFFFF, 0xFFFF, 0xFFFF, 0x7FFF, 0x8001, 0, r.getrandbits(16)])
        return self.to_qp1(m, ext=deth(qkey, r.choice([1, 1, 0, r.getrandbits(24)])),
                           pkey=pkey)

    def rand_bth(self, r, tid):
        """Any opcode to QP0, QP1 or a random QPN, headers of the length
        the opcode has (or not), random contents."""
        a = self.a
        op = r.choice([r.randrange(256), r.choice(list(EXT_LEN)), UD_SEND_ONLY, 0x65])
        ext_len = EXT_LEN.get(op, r.randrange(32))
        if r.randrange(8) == 0:
            ext_len = r.randrange(40)
        qpn = r.choice([0, 1, 1, 2, 3, 0xFFFFFF, r.randrange(1 << 24)])
        ext = r.randbytes(ext_len)
        if op in (UD_SEND_ONLY, 0x65) and r.randrange(2):
            ext = deth(GSI_QKEY if qpn else 0, r.randrange(4)) + ext[8:]
        if qpn == 0 and op in (UD_SEND_ONLY, 0x65) and r.randrange(2):
            # An SMP behind an odd BTH (its Sets invalid as ever).
            p = self.rand_smp(r, tid)
            p.opcode, p.se, p.mig = op, r.randrange(2), r.randrange(2)
            p.resv8a, p.psn, p.ackreq = r.randrange(256), r.getrandbits(24), r.randrange(2)
            return p
        n = r.choice([0, 1, 4, 24, 256, r.randrange(600), r.randrange(4200)])
        payload = r.randbytes(n)
        return Pkt(vl=15 if qpn == 0 and r.randrange(4) else r.choice([0, 0, 1, 15]),
                   dlid=r.choice([a.lid, a.lid, a.lid, LID_PERMISSIVE, self.rand_lid(r)]),
                   slid=r.choice([a.slid, a.slid, LID_PERMISSIVE, r.randrange(0x10000)]),
                   sl=r.randrange(16), opcode=op, se=r.randrange(2), mig=r.randrange(2),
                   pad=None if r.randrange(3) else r.randrange(4),
                   tver=0 if r.randrange(10) else r.randrange(16),
                   pkey=r.choice([0xFFFF, 0xFFFF, 0x7FFF, r.getrandbits(16)]),
                   resv8a=r.randrange(256), qpn=qpn, ackreq=r.randrange(2),
                   psn=r.getrandbits(24), ext=ext, payload=payload)

    def rand_lrh(self, p, r):
        """Random or boundary LRH fields on packet p; ICRC still right."""
        for _ in range(r.randrange(1, 4)):
            k = r.randrange(7)
            if k == 0:
                p.vl = r.choice([0, 1, 7, 14, 15, r.randrange(16)])
            elif k == 1:
                p.lver = r.choice([1, 15, r.randrange(16)])
            elif k == 2:
                p.lnh = r.randrange(4)
                if p.lnh == 3 and p.grh is None:
                    p.grh = self.rand_grh(r)
            elif k == 3:
                p.sl, p.lrh_resv = r.randrange(16), r.randrange(4)
            elif k == 4:
                p.dlid = self.rand_lid(r)
            elif k == 5:
                n = (len(p.wire()) - 4) // 4
                p.pktlen = r.choice([0, 1, 5, n - 1, n + 1, 0x7FF, r.randrange(0x800)])
            else:
                p.slid = r.choice([0, LID_PERMISSIVE, 0xC000, r.randrange(0x10000)])
                p.pktlen_resv = r.randrange(32)
        return p

    def rand_grh(self, r):
        return grh_bytes(version=r.choice([6, 6, 6, 4, 0, 15, r.randrange(16)]),
                         tclass=r.randrange(256), flow=r.randrange(1 << 20),
                         paylen=r.getrandbits(16),
                         next_hdr=r.choice([0x1B, 0x1B, 0x1B, 0, 0x11, r.randrange(256)]),
                         hop=r.randrange(256), sgid=r.randbytes(16),
                         dgid=r.choice([bytes(16), r.randbytes(16),
                                        struct.pack('>QQ', 0xFE80 << 48, self.a.port_guid)]))

    def rand_packet(self, r, tid):
        """(kind, datagram)"""
        k = r.randrange(100)
        if k < 30:
            return 'smp', self.rand_smp(r, tid).wire()
        if k < 42:
            return 'gmp', self.rand_gmp(r, tid).wire()
        if k < 57:
            p = self.rand_smp(r, tid) if r.randrange(2) else self.rand_gmp(r, tid)
            return 'lrh', self.rand_lrh(p, r).wire()
        if k < 64:
            p = self.rand_smp(r, tid) if r.randrange(2) else self.rand_gmp(r, tid)
            p.lnh, p.grh = 3, self.rand_grh(r)
            return 'grh', p.wire()
        if k < 79:
            return 'bth', self.rand_bth(r, tid).wire()
        if k < 85:
            p = self.rand_smp(r, tid) if r.randrange(2) else self.rand_bth(r, tid)
            d = p.wire()
            return 'cut', d[:r.randrange(len(d))]
        if k < 90:
            p = self.rand_smp(r, tid) if r.randrange(2) else self.rand_gmp(r, tid)
            p.icrc_xor = r.getrandbits(32) or 1
            return 'icrc', p.wire()
        if k < 95:
            d = bytearray(self.rand_smp(r, tid).wire())
            d[0] = r.choice([0x00, 0x20, 0xF0, 0x12, 0x1F, r.randrange(256)])
            if d[0] >> 4 == VERSION and d[0] & 0xF in (T_DATA, T_HELLO):
                d[0] = 0x22
            if r.randrange(3) == 0:
                d = d[:r.randrange(8)]
            return 'header', bytes(d)
        # HELLO garbage: odd lengths, odd reserved bytes, random GUIDs.
        g = r.randbytes(r.choice([0, 1, 8, 15, 16, 17, 64, r.randrange(1400)]))
        return 'hello', bytes([VERSION << 4 | T_HELLO, r.randrange(256),
                               r.randrange(256), r.randrange(256)]) + g

    def stream(self):
        a = self.a
        r = random.Random(a.seed)
        counts = {}
        end = time.monotonic() + a.seconds
        n = 0
        while time.monotonic() < end:
            tid = (r.getrandbits(64) & ~(0xFFFF << 48)) | 0x0F00 << 48
            kind, d = self.rand_packet(r, tid)
            counts[kind] = counts.get(kind, 0) + 1
            if a.verbose:
                log(f'# {n} {kind} {d.hex()}')
            self.send(d)
            n += 1
            if n % 32 == 0:
                self.drain(0)
            # Leave the victim's MAD agents some air now and then.
            if n % 256 == 0:
                time.sleep(0.01)
        self.drain(1.0)
        log(f'random stream: seed {a.seed}, {n} datagrams in {a.seconds} s: ' +
            ', '.join(f'{k} {v}' for k, v in sorted(counts.items())))
        return n

    def run(self):
        a = self.a
        if not self.take_over(a.ready):
            self.fail(f'could not bind {a.local}:{PORT} in 60 s (does the '
                      'neighbour\'s device still hold it?)')
            return 1
        log(f'bound {a.local}:{PORT}: the neighbour\'s device is gone, this is it now')
        self.base_pi = bytes(64)
        rx0 = None
        try:
            self.known_answers()
            log(f'known answers: {self.ka_tid - KA_TID} cases and probes, '
                f'{len(self.failures)} failed')
            pi = self.port_info()
            if pi:
                pi[32] &= 0xF0
                pi[33] &= 0x0F
                self.base_pi = bytes(pi)
            rx0 = self.n_rx
            self.stream()
            if self.probe('a Get(NodeInfo) after the random stream'):
                log('ok: the victim still answers a Get(NodeInfo) after the stream')
            r = self.case('Get(PortInfo) after the random stream',
                          lambda t: self.to_qp0(smp(GET, A_PORT_INFO, 0, t, a.mkey)),
                          S_OK, self.pi_unchanged)
            if r:
                pi2 = r['mad'][SMP_DATA:SMP_DATA + 64]
                log(f'PortInfo after the stream: LID {a.lid}, SM LID {a.sm_lid}, '
                    f'Active; M_Key violations {struct.unpack(">H", pi2[44:46])[0]}')
        except VictimSilent as e:
            self.fail(f'the victim stopped answering ({e}): given up')
        during = '' if rx0 is None else f'{self.n_rx - rx0} during the stream; '
        log(f'the victim sent {self.n_rx} DATA datagrams ({during}{self.n_rx_to_qp0} '
            f'GSI replies to GMPs forged from QP0) and {self.n_rx_hello} HELLOs, '
            f'{len(self.bad_rx)} malformed')
        for b in self.bad_rx[:10]:
            self.fail(f'malformed datagram from the victim: {b}')
        if self.failures:
            log(f'{len(self.failures)} checks failed; replay the stream with '
                f'--seed {a.seed}')
        return 1 if self.failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--peer', required=True, help='the victim\'s IPv4 address')
    p.add_argument('--local', required=True, help='the neighbour\'s IPv4 address (ours)')
    p.add_argument('--lid', type=int, required=True, help='the victim\'s LID')
    p.add_argument('--sm-lid', type=int, required=True, help='the victim\'s SM LID')
    p.add_argument('--slid', type=int, default=2, help='our LID (the old neighbour\'s)')
    p.add_argument('--port-guid', type=lambda s: int(s, 0), required=True)
    p.add_argument('--neigh-port-guid', type=lambda s: int(s, 0), required=True,
                   help='the GUID our HELLOs carry (the old neighbour\'s)')
    p.add_argument('--neigh-node-guid', type=lambda s: int(s, 0))
    p.add_argument('--mkey', type=lambda s: int(s, 0), required=True,
                   help='the victim\'s M_Key (protect bits 2)')
    p.add_argument('--pkeys', default='0xffff',
                   help='the victim\'s P_Key table, comma-separated')
    p.add_argument('--seed', type=int, default=None)
    p.add_argument('--seconds', type=float, default=20)
    p.add_argument('--ready', required=True,
                   help='file written once the HELLOs run')
    p.add_argument('--done', required=True,
                   help='file written with the exit status once the checks are over')
    p.add_argument('-v', '--verbose', action='store_true')
    a = p.parse_args()
    if a.mkey & 0xFF == 0:
        p.error('the M_Key\'s last byte must not be 0 (truncation must make it wrong)')
    a.neigh_node_guid = a.neigh_node_guid or a.neigh_port_guid
    a.pkeys = [int(x, 0) for x in a.pkeys.split(',') if x]
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), 'little')
    log(f'scire_fuzz_ib: seed {a.seed} (replay: --seed {a.seed})')

    status = []
    # The caller inspects the port while the HELLOs go on, then stops us.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(status[0] if status else 2))
    f = Fuzzer(a)
    try:
        rc = f.run()
    except Exception as e:  # a bug of ours must fail the test, not hang it
        import traceback
        traceback.print_exc()
        log(f'FAIL: scire_fuzz_ib: {e!r}')
        rc = 1
    status.append(rc)
    with open(a.done, 'w') as fd:
        fd.write(f'{rc}\n')
    sys.stdout.flush()
    while True:
        time.sleep(3600)


if __name__ == '__main__':
    main()
