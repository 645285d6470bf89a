#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""
scire_raw.py -a DEV_A -b DEV_B [--mtu MTU] [--no-net-raw | --hold]

Raw packet QPs (IBV_QPT_RAW_PACKET) and flow steering (ibv_create_flow),
through pyverbs. DEV_A and DEV_B are scire devices on the two ends of one
Ethernet link (a veth pair); frames A's QPs send reach B's over it. Each
check is named and says what differed:

  caps        both devices report IBV_DEVICE_MANAGED_FLOW_STEERING
  loopback    a frame a raw QP of A sends reaches another raw QP of A whose
              flow (destination MAC) matches, byte for byte, with byte_len
              the frame's length; the sender's own matching flow gets none
  wire        the same frame reaches a raw QP of B through the link
  sniffer     a sniffer flow on A sees the frame A sent exactly once
  nomatch     a frame to another destination MAC reaches no QP: the next
              completion is the next matching frame's
  udp4        ETH(IPv4) + IPV4(destination) + UDP(destination port): the
              port 5678 frame is taken, the port 5679 one is not
  tcp6        ETH(IPv6) + IPV6(destination) + TCP(destination port)
  vlan        an ETH spec with a VLAN ID takes a frame tagged with it (the
              tag in the received bytes), not one tagged with another ID
  priority    of two flows that match, only the better priority's QP gets
              the frame; with IBV_FLOW_ATTR_FLAGS_DONT_TRAP on it, both do
  default     an ALL_DEFAULT flow gets what no NORMAL flow took, and not
              what one did
  short-wqe   a frame longer than the receive WQE is dropped, and that WQE
              serves the next frame that fits
  destroyed   after ibv_destroy_flow() the flow's frames stop
  qp-gone     a frame for the flow of a QP that was destroyed reaches no
              one, and the next frame still its own flow's QP
  too-long    a send longer than the MTU and an 802.1Q header completes
              with IBV_WC_LOC_LEN_ERR; so does one shorter than an Ethernet
              header
  not-raw     a flow on a UD QP: EOPNOTSUPP
  rss         an RSS QP on B (a raw packet QP over an indirection table of
              8 receive WQs on 2 CQs, Toeplitz over IPv4 addresses and UDP
              ports) spreads 64 UDP frames over the WQs: each lands, byte
              for byte, in the WQ the Toeplitz hash of its fields picks
              (computed here), with the WQ's number as its qp_num; a WQ
              not yet RDY drops its frames; a WQ moved to ERR completes
              its posted WQEs with IBV_WC_WR_FLUSH_ERR
  fuzz        400 frames B sends with random bytes behind random, truncated
              or malformed IPv4, IPv6, TCP, UDP and 802.1Q headers pass A's
              flows (every spec type) and reach A's sniffer flow each
              exactly once, byte for byte
  counters    raw_tx_frames and raw_rx_frames of both devices grew

With --no-net-raw (run without CAP_NET_RAW) only one check:

  no-net-raw  creating a raw packet QP is refused with EPERM

With --hold, a raw packet QP on DEV_A with a flow and a frame waiting in
its RQ is created, "ready" printed, and the process sleeps until killed
(for tests that take the device away under it).

Exit status 0 when every check passed, 1 otherwise.
"""
import argparse
import errno
import struct
import sys
import time

try:
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.flow import Flow, FlowAttr
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.pyverbs_error import PyverbsRDMAError
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.spec import EthSpec, Ipv4ExtSpec, Ipv6Spec, TcpUdpSpec
    from pyverbs.wr import SGE, RecvWR, SendWR
    from pyverbs.qp import QPEx, QPInitAttrEx
    from pyverbs.wq import WQ, WQAttr, WQInitAttr, RwqIndTable, \
        RwqIndTableInitAttr, RxHashConf
except ImportError as ex:
    print(f'SKIP: no pyverbs ({ex})')
    sys.exit(77)

SLOT = 2048           # bytes of MR per receive WQE
NRECV = 16
DEVICE_MANAGED_FLOW_STEERING = 1 << 29
SRC = '02:00:00:00:00:0a'
failures = []


def check(name, ok, what):
    if ok:
        print(f'ok: {name}')
    else:
        print(f'FAIL: {name}: {what}')
        failures.append(name)


def mac(s):
    return bytes(int(x, 16) for x in s.split(':'))


def frame(dst, payload=b'scire raw frame', ethertype=0x88b5, vlan=None,
          l3=None):
    """An Ethernet frame; with l3, payload follows the IP/UDP/TCP headers."""
    hdr = mac(dst) + mac(SRC)
    if vlan is not None:
        hdr += struct.pack('!HH', 0x8100, vlan)
    if l3 is None:
        return hdr + struct.pack('!H', ethertype) + payload
    ver, src_ip, dst_ip, proto, sport, dport = l3
    if proto == 'udp':
        l4 = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0)
        pnum = 17
    else:
        l4 = struct.pack('!HHIIBBHHH', sport, dport, 1, 0, 5 << 4, 0x18,
                         1024, 0, 0)
        pnum = 6
    body = l4 + payload
    if ver == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(body), 0,
                         0x4000, 64, pnum, 0, bytes(src_ip), bytes(dst_ip))
        return hdr + struct.pack('!H', 0x0800) + ip + body
    ip = struct.pack('!IHBB16s16s', 6 << 28, len(body), pnum, 64,
                     bytes(src_ip), bytes(dst_ip))
    return hdr + struct.pack('!H', 0x86dd) + ip + body


class Dev:
    def __init__(self, name):
        self.name = name
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)

    def counter(self, name):
        with open(f'/sys/class/infiniband/{self.name}/ports/1/hw_counters/{name}') as f:
            return int(f.read())


class RawQP:
    """A raw packet QP with its own CQ and MR: NRECV receive slots, then
    one send slot."""

    def __init__(self, dev, recv_len=SLOT):
        self.dev = dev
        self.cq = CQ(dev.ctx, 64)
        self.mr = MR(dev.pd, SLOT * (NRECV + 1), e.IBV_ACCESS_LOCAL_WRITE)
        cap = QPCap(max_send_wr=16, max_recv_wr=NRECV, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(dev.pd, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET,
                                        scq=self.cq, rcq=self.cq, cap=cap))
        attr = QPAttr(port_num=1)
        attr.qp_state = e.IBV_QPS_INIT
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PORT)
        attr.qp_state = e.IBV_QPS_RTR
        self.qp.modify(attr, e.IBV_QP_STATE)
        attr.qp_state = e.IBV_QPS_RTS
        self.qp.modify(attr, e.IBV_QP_STATE)
        self.recv_len = recv_len
        self.flows = []
        self.stash = []
        for i in range(NRECV):
            self.post_recv(i)

    def post_recv(self, slot, length=None):
        sge = SGE(self.mr.buf + slot * SLOT, length or self.recv_len,
                  self.mr.lkey)
        self.qp.post_recv(RecvWR(wr_id=slot, num_sge=1, sg=[sge]))

    def flow(self, specs, flow_type=e.IBV_FLOW_ATTR_NORMAL, priority=0,
             flags=0):
        attr = FlowAttr(num_of_specs=len(specs), flow_type=flow_type,
                        priority=priority, port=1, flags=flags)
        for s in specs:
            attr.specs.append(s)
        f = Flow(self.qp, attr)
        self.flows.append(f)
        return f

    def send(self, data, wait=True):
        off = NRECV * SLOT
        self.mr.write(data, len(data), off)
        sge = SGE(self.mr.buf + off, len(data), self.mr.lkey)
        self.qp.post_send(SendWR(wr_id=0x5e5d, opcode=e.IBV_WR_SEND,
                                 num_sge=1, sg=[sge],
                                 send_flags=e.IBV_SEND_SIGNALED))
        if not wait:
            return None
        wcs = self.wait(1, sends=True)
        return wcs[0] if wcs else None

    def wait(self, n, secs=10, sends=False):
        """n completions (receives, or with sends the send's), or fewer
        if secs pass. Receives are reposted."""
        got = []
        end = time.monotonic() + secs
        while len(got) < n and time.monotonic() < end:
            nc, wcs = self.cq.poll(num_entries=8)
            for wc in wcs[:nc]:
                is_send = wc.opcode == e.IBV_WC_SEND
                if is_send != sends:
                    if not is_send:
                        self.stash.append(wc)
                    continue
                got.append(wc)
            if not nc:
                time.sleep(0.002)
        return got

    def recv(self, secs=10):
        """The next receive completion and its bytes, or (None, None)."""
        if self.stash:
            wc = self.stash.pop(0)
        else:
            wcs = self.wait(1, secs)
            if not wcs:
                return None, None
            wc = wcs[0]
            self.stash.extend(wcs[1:])
        data = self.mr.read(wc.byte_len, wc.wr_id * SLOT) if \
            wc.status == e.IBV_WC_SUCCESS else None
        self.post_recv(wc.wr_id)
        return wc, data

    def quiet(self, secs=0.5):
        """True if no receive completes within secs."""
        wc, _ = self.recv(secs)
        return wc is None

    def close(self):
        for f in self.flows:
            f.close()
        self.qp.close()
        self.mr.close()
        self.cq.close()


def got_frame(q, want, name):
    wc, data = q.recv()
    if wc is None:
        check(name, False, f'no frame reached {q.dev.name}')
        return False
    ok = wc.status == e.IBV_WC_SUCCESS and wc.opcode == e.IBV_WC_RECV and \
        wc.byte_len == len(want) and data == want
    check(name, ok, f'status {wc.status} opcode {wc.opcode} byte_len '
          f'{wc.byte_len} (want {len(want)}), bytes '
          f'{"equal" if data == want else "differ"}')
    return ok


def eth(dst, ethertype=None, vlan=None):
    kw = {'dst_mac': dst}
    if ethertype is not None:
        kw['ether_type'] = ethertype
    if vlan is not None:
        kw['vlan_tag'] = vlan
        kw['vlan_tag_mask'] = 0x0fff
    return EthSpec(**kw)


def no_net_raw(dev):
    d = Dev(dev)
    try:
        RawQP(d)
    except PyverbsRDMAError as ex:
        check('no-net-raw', ex.error_code == errno.EPERM,
              f'creating a raw packet QP without CAP_NET_RAW: {ex}')
        return
    check('no-net-raw', False, 'a raw packet QP was created without CAP_NET_RAW')


RSS_KEY = bytes([0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7,
                 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94,
                 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1,
                 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56, 0x3d, 0x59,
                 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a])


def toeplitz(key, data):
    """The Toeplitz hash (Microsoft RSS) of data under key."""
    k = int.from_bytes(key, 'big')
    klen = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (klen - 32 - i)) & 0xffffffff
    return h


# Microsoft's RSS verification suite: this key, 66.9.149.187:2794 to
# 161.142.100.80:1766, hashes to 0x51ccc178 (addresses only: 0x323e8fc2).
MS_KEY = bytes.fromhex('6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b4'
                       '77cb2da38030f20c6a42b73bbeac01fa')


def rss(a, b):
    n_wq, log = 8, 3
    ms_in = bytes([66, 9, 149, 187, 161, 142, 100, 80])
    check('rss', toeplitz(MS_KEY, ms_in + (2794).to_bytes(2, 'big') +
                          (1766).to_bytes(2, 'big')) == 0x51ccc178 and
          toeplitz(MS_KEY, ms_in) == 0x323e8fc2,
          "the test's own Toeplitz hash misses Microsoft's verification vectors")
    cqs = [CQ(b.ctx, 256) for _ in range(2)]
    mr = MR(b.pd, SLOT * 64 * n_wq, e.IBV_ACCESS_LOCAL_WRITE)
    wqs = []
    for i in range(n_wq):
        wq = WQ(b.ctx, WQInitAttr(wq_pd=b.pd, wq_cq=cqs[i % 2],
                                  wq_type=e.IBV_WQT_RQ, max_wr=64, max_sge=1))
        wqs.append(wq)
    # The last WQ stays in RESET for a while: its frames are dropped.
    for wq in wqs[:-1]:
        wq.modify(WQAttr(attr_mask=e.IBV_WQ_ATTR_STATE, wq_state=e.IBV_WQS_RDY))
    for i, wq in enumerate(wqs):
        for j in range(32):
            slot = i * 64 + j
            wq.post_recv(RecvWR(wr_id=slot, num_sge=1,
                                sg=[SGE(mr.buf + slot * SLOT, SLOT, mr.lkey)]))
    tbl = RwqIndTable(b.ctx, RwqIndTableInitAttr(log_ind_tbl_size=log,
                                                 wqs_list=wqs))
    fields = (e.IBV_RX_HASH_SRC_IPV4 | e.IBV_RX_HASH_DST_IPV4 |
              e.IBV_RX_HASH_SRC_PORT_UDP | e.IBV_RX_HASH_DST_PORT_UDP)
    conf = RxHashConf(rx_hash_function=e.IBV_RX_HASH_FUNC_TOEPLITZ,
                      rx_hash_key_len=len(RSS_KEY), rx_hash_key=list(RSS_KEY),
                      rx_hash_fields_mask=fields)
    qp = QPEx(b.ctx, QPInitAttrEx(qp_type=e.IBV_QPT_RAW_PACKET,
                                  comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                  e.IBV_QP_INIT_ATTR_RX_HASH |
                                  e.IBV_QP_INIT_ATTR_IND_TABLE,
                                  pd=b.pd, hash_conf=conf, ind_table=tbl))
    dst = '02:00:00:00:55:55'
    attr = FlowAttr(num_of_specs=1, port=1)
    attr.specs.append(eth(dst))
    flow = Flow(qp, attr)
    sender = RawQP(a)
    want = {}                   # frame -> WQ index
    import random
    rnd = random.Random(0x55)
    for k in range(64):
        src = [10, rnd.randrange(256), rnd.randrange(256), rnd.randrange(1, 255)]
        dip = [10, 0, 0, rnd.randrange(1, 255)]
        sport, dport = rnd.randrange(1024, 65536), rnd.randrange(1, 65536)
        f = frame(dst, b'rss %d' % k, l3=(4, src, dip, 'udp', sport, dport))
        h = toeplitz(RSS_KEY, bytes(src) + bytes(dip) +
                     sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big'))
        want[f] = h & (n_wq - 1)
        sender.send(f)
    got, bad = 0, []
    end = time.monotonic() + 10
    expect = sum(1 for w in want.values() if w != n_wq - 1)
    while got + len(bad) < expect and time.monotonic() < end:
        for cq in cqs:
            nc, wcs = cq.poll(num_entries=16)
            for wc in wcs[:nc]:
                wqi = wc.wr_id // 64
                data = mr.read(wc.byte_len, wc.wr_id * SLOT)
                if wc.status != e.IBV_WC_SUCCESS or data not in want or \
                        want[data] != wqi or wc.qp_num != wqs[wqi].wqn:
                    bad.append((wc.wr_id, wc.status, wqi,
                                want.get(data), wc.qp_num, wqs[wqi].wqn))
                else:
                    got += 1
        time.sleep(0.01)
    spread = sorted(set(want.values()))
    check('rss', got == expect and not bad and len(spread) > 4,
          f'{got} of {expect} frames in the WQ their hash picks, wrong: '
          f'{bad[:4]}; the hash used WQs {spread}')
    # ERR flushes what is posted: 32 WQEs of WQ 0, less what it got.
    left = 32 - sum(1 for w in want.values() if w == 0)
    wqs[0].modify(WQAttr(attr_mask=e.IBV_WQ_ATTR_STATE, wq_state=e.IBV_WQS_ERR))
    flushed, end = 0, time.monotonic() + 5
    while flushed < left and time.monotonic() < end:
        nc, wcs = cqs[0].poll(num_entries=16)
        flushed += sum(1 for wc in wcs[:nc]
                       if wc.status == e.IBV_WC_WR_FLUSH_ERR and wc.wr_id < 64)
    check('rss', flushed == left,
          f'WQ 0 in ERR: {flushed} of {left} posted WQEs flushed')
    flow.close()
    qp.close()
    tbl.close()
    for wq in wqs:
        wq.close()
    sender.close()
    mr.close()
    for cq in cqs:
        cq.close()


def hold(dev):
    d = Dev(dev)
    q, peer = RawQP(d), RawQP(d)
    q.flow([eth('02:00:00:00:10:10')])
    peer.send(frame('02:00:00:00:10:10', b'left in the RQ'))
    print('ready', flush=True)
    while True:
        time.sleep(3600)


def fuzz_frame(rnd):
    """A frame of a random kind with random, often broken, headers. A
    tagged one has 2 bytes or more behind its tag: the kernel drops a
    shorter one before any packet handler sees it (skb_vlan_untag())."""
    f = fuzz_frame_any(rnd)
    if f[12:14] == b'\x81\x00' and len(f) < 20:
        f += rnd.randbytes(20 - len(f))
    return f


def fuzz_frame_any(rnd):
    dst = bytes([rnd.randrange(256) & 0xfe] + [rnd.randrange(256) for _ in range(5)])
    hdr = dst + mac(SRC)
    kind = rnd.randrange(5)
    if kind == 0:
        et = rnd.choice([t for t in range(0x600, 0x10000, 0x137)
                         if t not in (0x8100, 0x88a8, 0x9100)])
        return hdr + struct.pack('!H', et) + rnd.randbytes(rnd.randrange(0, 120))
    if kind == 4:
        # 802.1Q with a whole tag, then any of the kinds below inside
        hdr += struct.pack('!HH', 0x8100, rnd.randrange(0x10000))
        kind = rnd.randrange(1, 4)
    if kind == 1:
        ihl = rnd.choice([0, 3, 5, 5, 5, 6, 15])
        frag = rnd.choice([0, 0x4000, 0x2000, 0x0005, 0x1fff])
        proto = rnd.choice([6, 17, 17, 1, 255])
        ip = struct.pack('!BBHHHBBH4s4s', 0x40 | ihl, rnd.randrange(256),
                         rnd.randrange(0x10000), 0, frag, rnd.randrange(256),
                         proto, 0, rnd.randbytes(4), bytes([2, 2, 2, 2]))
        body = ip + rnd.randbytes(rnd.randrange(0, 60))
        return hdr + struct.pack('!H', 0x0800) + body[:rnd.randrange(0, len(body) + 1)]
    nh = rnd.choice([6, 17, 17, 0, 44, 58])
    ip = struct.pack('!IHBB16s16s', (6 << 28) | rnd.randrange(1 << 28), 0, nh,
                     rnd.randrange(256), rnd.randbytes(16),
                     bytes(range(0xb0, 0xc0)))
    body = ip + rnd.randbytes(rnd.randrange(0, 40))
    if kind == 3:
        body = body[:rnd.randrange(0, len(body) + 1)]
    return hdr + struct.pack('!H', 0x86dd) + body


def fuzz(a, b, frames=400, batch=8):
    import random
    rnd = random.Random(0x5c1e)
    sniff = RawQP(a)
    sniff.flow([], flow_type=e.IBV_FLOW_ATTR_SNIFFER)
    # Flows of every spec type for the frames to be parsed against.
    sink = RawQP(a)
    sink.flow([eth('02:00:00:00:04:04', 0x0800), Ipv4ExtSpec(dst_ip='2.2.2.2'),
               TcpUdpSpec(e.IBV_FLOW_SPEC_UDP, dst_port=5678)])
    sink.flow([eth('02:00:00:00:06:06', 0x86dd),
               Ipv6Spec(dst_ip='b0b1:b2b3:b4b5:b6b7:b8b9:babb:bcbd:bebf',
                        src_ip='::', src_ip_mask='::'),
               TcpUdpSpec(e.IBV_FLOW_SPEC_TCP, src_port=1)])
    sink.flow([eth('02:00:00:00:0a:0a', vlan=7)])
    sink.flow([], flow_type=e.IBV_FLOW_ATTR_MC_DEFAULT)
    src = RawQP(b)
    missing, extra = 0, 0
    for _ in range(frames // batch):
        sent = [fuzz_frame(rnd) for _ in range(batch)]
        for f in sent:
            src.send(f)
        want = list(sent)
        end = time.monotonic() + 5
        while want and time.monotonic() < end:
            wc, data = sniff.recv(0.5)
            if wc is None:
                continue
            if data in want:
                want.remove(data)
            else:
                extra += 1
        missing += len(want)
        while sink.recv(0.01)[0] is not None:
            pass
    check('fuzz', not missing and not extra,
          f'{missing} of {frames} frames did not reach the sniffer, '
          f'{extra} frames it got were not sent or came twice')
    for q in (sniff, sink, src):
        q.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-a', required=True)
    ap.add_argument('-b', required=True)
    ap.add_argument('--mtu', type=int, default=1500,
                    help="the link's MTU (for too-long)")
    ap.add_argument('--no-net-raw', action='store_true')
    ap.add_argument('--hold', action='store_true')
    args = ap.parse_args()
    if args.no_net_raw:
        no_net_raw(args.a)
        return 1 if failures else 0
    if args.hold:
        hold(args.a)

    a, b = Dev(args.a), Dev(args.b)
    for d in (a, b):
        flags = d.ctx.query_device().device_cap_flags
        check('caps', flags & DEVICE_MANAGED_FLOW_STEERING,
              f'{d.name}: device_cap_flags {flags:#x} lacks MANAGED_FLOW_STEERING')
    tx0 = [a.counter('raw_tx_frames'), b.counter('raw_tx_frames')]
    rx0 = [a.counter('raw_rx_frames'), b.counter('raw_rx_frames')]

    # loopback, wire, sniffer
    dst = '01:50:56:19:20:a7'
    qa1, qa2, qa3, qb = RawQP(a), RawQP(a), RawQP(a), RawQP(b)
    qa1.flow([eth(dst)])
    qa2.flow([eth(dst)])
    qa3.flow([], flow_type=e.IBV_FLOW_ATTR_SNIFFER)
    qb.flow([eth(dst)])
    f1 = frame(dst, b'loopback and wire ' * 8)
    wc = qa1.send(f1)
    check('send', wc is not None and wc.status == e.IBV_WC_SUCCESS,
          f'send completion {wc.status if wc else "missing"}')
    got_frame(qa2, f1, 'loopback')
    check('loopback', qa1.quiet(), 'the sender received its own frame')
    got_frame(qb, f1, 'wire')
    seen, end = 0, time.monotonic() + 2
    while time.monotonic() < end:
        wc, data = qa3.recv(0.2)
        if wc is not None and data == f1:
            seen += 1
    check('sniffer', seen == 1, f'the sniffer saw the sent frame {seen} times')

    # nomatch
    qa1.send(frame('01:50:56:19:20:a8', b'nobody'))
    f2 = frame(dst, b'after the stray one')
    qa1.send(f2)
    got_frame(qb, f2, 'nomatch')

    # udp4
    q4 = RawQP(b)
    dst4 = '02:00:00:00:04:04'
    q4.flow([eth(dst4, 0x0800), Ipv4ExtSpec(dst_ip='2.2.2.2', proto=17),
             TcpUdpSpec(e.IBV_FLOW_SPEC_UDP, dst_port=5678)])
    l3 = (4, [1, 1, 1, 1], [2, 2, 2, 2], 'udp', 1234, 5679)
    qa1.send(frame(dst4, b'udp 5679', l3=l3))
    l3 = (4, [1, 1, 1, 1], [2, 2, 2, 2], 'udp', 1234, 5678)
    f3 = frame(dst4, b'udp 5678', l3=l3)
    qa1.send(f3)
    got_frame(q4, f3, 'udp4')
    check('udp4', q4.quiet(), 'a second frame arrived')

    # tcp6
    q6 = RawQP(b)
    dst6 = '02:00:00:00:06:06'
    v6 = list(range(0xb0, 0xc0))
    # pyverbs needs both addresses as strings; '::' under '::' is any.
    q6.flow([eth(dst6, 0x86dd),
             Ipv6Spec(dst_ip='b0b1:b2b3:b4b5:b6b7:b8b9:babb:bcbd:bebf',
                      src_ip='::', src_ip_mask='::', next_hdr=6),
             TcpUdpSpec(e.IBV_FLOW_SPEC_TCP, dst_port=80)])
    qa1.send(frame(dst6, b'tcp 81', l3=(6, list(range(16)), v6, 'tcp', 999, 81)))
    f4 = frame(dst6, b'tcp 80', l3=(6, list(range(16)), v6, 'tcp', 999, 80))
    qa1.send(f4)
    got_frame(q6, f4, 'tcp6')
    check('tcp6', q6.quiet(), 'a second frame arrived')

    # vlan
    qv = RawQP(b)
    dstv = '02:00:00:00:0a:0a'
    qv.flow([eth(dstv, vlan=5)])
    qa1.send(frame(dstv, b'vid 6', vlan=6))
    f5 = frame(dstv, b'vid 5', vlan=5)
    qa1.send(f5)
    got_frame(qv, f5, 'vlan')
    check('vlan', qv.quiet(), 'a second frame arrived')

    # priority, and DONT_TRAP
    qp0, qp1 = RawQP(b), RawQP(b)
    dstp = '02:00:00:00:0b:0b'
    qp0.flow([eth(dstp)], priority=0)
    qp1.flow([eth(dstp)], priority=1)
    f6 = frame(dstp, b'priority')
    qa1.send(f6)
    got_frame(qp0, f6, 'priority')
    check('priority', qp1.quiet(), 'the worse priority got the frame too')
    dstt = '02:00:00:00:0c:0c'
    qp0.flow([eth(dstt)], priority=0, flags=e.IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
    qp1.flow([eth(dstt)], priority=1)
    f7 = frame(dstt, b'dont trap')
    qa1.send(f7)
    got_frame(qp0, f7, 'priority')
    got_frame(qp1, f7, 'priority')

    # default: B's namespace sends nothing of its own (no IPv6, no
    # traffic), so what the default flow sees is ours.
    qd = RawQP(b)
    qd.flow([], flow_type=e.IBV_FLOW_ATTR_ALL_DEFAULT)
    qa1.send(f2)
    got_frame(qb, f2, 'default')
    f8 = frame('02:00:00:00:0d:0d', b'for the default flow')
    qa1.send(f8)
    wc, data = qd.recv()
    while wc is not None and data != f8 and data != f2:
        wc, data = qd.recv(2)
    check('default', data == f8,
          'the default flow got a frame a NORMAL flow took' if data == f2
          else 'the default flow did not get the unmatched frame')
    qd.close()

    # short-wqe: a 64-byte receive WQE under a 200-byte frame
    qs = RawQP(b, recv_len=64)
    dsts = '02:00:00:00:0e:0e'
    qs.flow([eth(dsts)])
    qa1.send(frame(dsts, b'x' * 200))
    f9 = frame(dsts, b'fits')
    qa1.send(f9)
    wc, data = qs.recv()
    check('short-wqe', wc is not None and wc.wr_id == 0 and data == f9,
          f'first completion: {"none" if wc is None else f"wr_id {wc.wr_id} status {wc.status} byte_len {wc.byte_len}"}')
    qs.close()

    # destroyed
    qb2 = RawQP(b)
    qb2.flow([eth(dst)])
    for f in qb.flows:
        f.close()
    qb.flows = []
    qa1.send(f1)
    got_frame(qb2, f1, 'destroyed')
    check('destroyed', qb.quiet(1), 'a frame arrived after its flow was destroyed')

    # qp-gone: pyverbs destroys a QP's flows before the QP (the core would
    # refuse the QP with EBUSY while a flow holds it)
    qx = RawQP(b)
    qx.flow([eth('02:00:00:00:0f:0f')])
    qx.close()
    qa1.send(frame('02:00:00:00:0f:0f', b'to a QP that is gone'))
    qa1.send(f2)
    got_frame(qb2, f2, 'qp-gone')

    # too-long, too-short
    mtu = args.mtu
    for name, data in (('too-long', frame(dst, b'L' * (mtu + 5))),
                       ('too-short', b'0123456789')):
        q = RawQP(a)
        big = MR(a.pd, len(data), e.IBV_ACCESS_LOCAL_WRITE)
        big.write(data, len(data), 0)
        q.qp.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                              sg=[SGE(big.buf, len(data), big.lkey)],
                              send_flags=e.IBV_SEND_SIGNALED))
        nc, wcs = 0, []
        end = time.monotonic() + 10
        while not nc and time.monotonic() < end:
            nc, wcs = q.cq.poll(num_entries=1)
        check(name, nc == 1 and wcs[0].status == e.IBV_WC_LOC_LEN_ERR,
              f'{len(data)} bytes: {"no completion" if not nc else f"status {wcs[0].status}"}')
        q.close()
        big.close()

    # not-raw
    cq = CQ(a.ctx, 4)
    ud = QP(a.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                             cap=QPCap(max_send_wr=1, max_recv_wr=1)))
    try:
        attr = FlowAttr(num_of_specs=1, port=1)
        attr.specs.append(eth(dst))
        Flow(ud, attr).close()
        check('not-raw', False, 'a flow on a UD QP was created')
    except PyverbsRDMAError as ex:
        check('not-raw', ex.error_code == errno.EOPNOTSUPP, f'{ex}')
    ud.close()
    cq.close()

    rss(a, b)
    fuzz(a, b)

    tx1 = [a.counter('raw_tx_frames'), b.counter('raw_tx_frames')]
    rx1 = [a.counter('raw_rx_frames'), b.counter('raw_rx_frames')]
    check('counters', tx1[0] > tx0[0] and rx1[0] > rx0[0] and rx1[1] > rx0[1],
          f'raw_tx_frames {tx0} -> {tx1}, raw_rx_frames {rx0} -> {rx1}')
    for q in (qa1, qa2, qa3, qb, qb2, q4, q6, qv, qp0, qp1):
        q.close()
    return 1 if failures else 0


if __name__ == '__main__':
    rc = main()
    print(f'{len(failures)} failed' if failures else 'all passed')
    sys.exit(rc)
