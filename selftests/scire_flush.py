#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""
scire_flush.py -d DEV [-g GIDIDX] [-D DEV2 [-G GIDIDX2]] [-C] [-P DAXDEV]

IBA 1.5 RDMA FLUSH between two RC QPs, through pyverbs (rdma-core 45 and
later have ibv_wr_flush()): requester A on DEV, responder B on DEV (through
its own RoCEv2 GID) or, with -D, on DEV2. Each check is named and says what
differed:

  caps        with -C, DEV reports IBV_DEVICE_FLUSH_GLOBAL and
              IBV_DEVICE_FLUSH_PERSISTENT in device_cap_flags_ex
  range       an RDMA WRITE of 4 KiB and a FLUSH (global, the written range)
              behind it complete with IBV_WC_SUCCESS, the FLUSH with opcode
              IBV_WC_FLUSH and byte_len 0; B's memory then holds the bytes
  region      a FLUSH at level "memory region" with address 0 and length 0
              completes: the level names the whole region by its rkey
  burst       40 FLUSHes posted at once (more than max_rd_atomic) complete
              in order
  persistent  a FLUSH for persistence, to an MR that grants only global
              visibility, completes with IBV_WC_REM_ACCESS_ERR
  past-end    a FLUSH whose range runs past the MR: IBV_WC_REM_ACCESS_ERR
  bad-rkey    a FLUSH with an rkey nobody registered: IBV_WC_REM_ACCESS_ERR
  qp-rights   a FLUSH to a QP that grants no FLUSH right:
              IBV_WC_REM_INV_REQ_ERR (rdma_rxe's answer)
  no-write    none of the failed FLUSHes changes a byte of B's memory
  integrity   at each path MTU (256 to 4096), 48 RDMA WRITEs of random
              length (up to 16 KiB: many packets at the small MTUs) to
              random places of a 64 KiB region, each followed by a FLUSH
              of what it wrote or of the whole region, complete in order
              and successfully, and B's memory is then exactly what they
              wrote over its old bytes
  pmem-refused  an MR over ordinary memory with IBV_ACCESS_FLUSH_PERSISTENT
              is refused (scire: EOPNOTSUPP, rdma_rxe: EINVAL)

With -P, B's memory for these is 2 MiB of the device-DAX character device
DAXDEV (persistent memory), registered with both FLUSH rights:

  pmem-range  an RDMA WRITE of 4 KiB and a FLUSH for persistence (and
              global visibility) of its range complete; the bytes are in
              the device's mapping
  pmem-region a FLUSH for persistence at level "memory region" completes

Exit status 0 when every check passed, 77 when this rdma-core has no
ibv_wr_flush(), 1 otherwise.
"""
import argparse
import ctypes
import mmap
import os
import random
import sys
import time

try:
    import pyverbs.enums as e
    from pyverbs.addr import AHAttr, GlobalRoute
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
    from pyverbs.wr import SGE
except ImportError as ex:
    print(f'SKIP: no pyverbs ({ex})')
    sys.exit(77)

SKIP = 77
BUF = 8192
MSG = 4096
# device_cap_flags_ex bits (IB_UVERBS_DEVICE_FLUSH_*, ib_user_verbs.h);
# pyverbs 56 names no constant for them.
DEVICE_FLUSH_GLOBAL = 1 << 38
DEVICE_FLUSH_PERSISTENT = 1 << 39
FLUSH_RIGHTS = (getattr(e, 'IBV_ACCESS_FLUSH_GLOBAL', 0) |
                getattr(e, 'IBV_ACCESS_FLUSH_PERSISTENT', 0))


def have_wr_flush():
    return hasattr(QPEx, 'wr_flush') and hasattr(e, 'IBV_WR_FLUSH')


class Side:
    """A device's context, PD and CQ."""

    def __init__(self, dev, gid_index):
        self.ctx = Context(name=dev)
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 256)


def poll(cq, n, secs=20):
    """n completions from cq, or fewer if secs pass."""
    wcs = []
    end = time.monotonic() + secs
    while len(wcs) < n and time.monotonic() < end:
        nc, got = cq.poll(num_entries=n - len(wcs))
        if nc:
            wcs.extend(got[:nc])
        else:
            time.sleep(0.001)
    return wcs


def connect(a, b, b_access, mtu=e.IBV_MTU_1024):
    """An RC pair: QPEx on A (WRITE and FLUSH builders), QP on B."""
    cap = QPCap(max_send_wr=64, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qia = QPInitAttrEx(cap=cap, qp_type=e.IBV_QPT_RC, scq=a.cq, rcq=a.cq,
                       pd=a.pd,
                       send_ops_flags=e.IBV_QP_EX_WITH_RDMA_WRITE |
                       e.IBV_QP_EX_WITH_FLUSH,
                       comp_mask=e.IBV_QP_INIT_ATTR_PD |
                       e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
    qa = QPEx(a.ctx, qia, QPAttr(port_num=1))
    battr = QPAttr(port_num=1)
    battr.qp_access_flags = b_access
    qb = QP(b.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=b.cq, rcq=b.cq,
                             cap=cap), battr)
    psn_a, psn_b = random.getrandbits(24), random.getrandbits(24)
    for qp, me, peer, dqpn, rq_psn, sq_psn in ((qa, a, b, qb.qp_num, psn_b, psn_a),
                                                (qb, b, a, qa.qp_num, psn_a, psn_b)):
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = b_access if qp is qb else 0
        attr.path_mtu = mtu
        attr.max_dest_rd_atomic = 4
        attr.max_rd_atomic = 4
        attr.min_rnr_timer = 12
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        gr = GlobalRoute(dgid=peer.gid, sgid_index=me.gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        attr.dest_qp_num = dqpn
        attr.rq_psn = rq_psn
        attr.sq_psn = sq_psn
        qp.to_rts(attr)
    return qa, qb


def post(qa, ops):
    """ops: ('write', wr_id, rkey, addr, sge) or ('flush', wr_id, rkey,
    addr, len, type, level), one session, every WR signalled."""
    qa.wr_start()
    for op in ops:
        qa.wr_id = op[1]
        qa.wr_flags = e.IBV_SEND_SIGNALED
        if op[0] == 'write':
            qa.wr_rdma_write(op[2], op[3])
            qa.wr_set_sge(op[4])
        else:
            qa.wr_flush(op[2], op[3], op[4], op[5], op[6])
    qa.wr_complete()


def pmem_checks(a, b, path, src, pattern, access, qp_rights, check):
    """WRITE and FLUSH for persistence into 2 MiB of a device-DAX mapping."""
    size = 2 << 20
    fd = os.open(path, os.O_RDWR)
    try:
        mapping = mmap.mmap(fd, size, mmap.MAP_SHARED,
                            mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mapping))
    mapping[0:size] = bytes(size)
    try:
        pmr = MR(b.pd, size, access | FLUSH_RIGHTS, address=addr)
    except Exception as ex:  # pylint: disable=broad-except
        check('pmem-range', False, f'an MR over {path} with both FLUSH rights: {ex}')
        return
    off = size - MSG - 4096
    qa, qb = connect(a, b, qp_rights)
    post(qa, [('write', 11, pmr.rkey, pmr.buf + off, SGE(src.buf, MSG, src.lkey)),
              ('flush', 12, pmr.rkey, pmr.buf + off, MSG,
               e.IBV_FLUSH_PERSISTENT | e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_RANGE)])
    wcs = poll(a.cq, 2)
    check('pmem-range', len(wcs) == 2 and
          all(w.status == e.IBV_WC_SUCCESS for w in wcs) and
          wcs[1].opcode == e.IBV_WC_FLUSH and mapping[off:off + MSG] == pattern,
          f'completions {[(w.wr_id, w.status, w.opcode) for w in wcs]}, '
          f'bytes there {"equal" if mapping[off:off + MSG] == pattern else "differ"}')
    post(qa, [('flush', 13, pmr.rkey, 0, 0, e.IBV_FLUSH_PERSISTENT, e.IBV_FLUSH_MR)])
    wcs = poll(a.cq, 1)
    check('pmem-region', len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].opcode == e.IBV_WC_FLUSH,
          f'completions {[(w.wr_id, w.status, w.opcode) for w in wcs]}')
    del qa, qb
    pmr.close()


def integrity(a, b, access, qp_rights, check):
    """WRITEs and FLUSHes at every path MTU, B's memory against a model."""
    size, maxlen, ops = 64 << 10, 16 << 10, 48
    rnd = random.Random(0xf105)
    dst = MR(b.pd, size, access | e.IBV_ACCESS_FLUSH_GLOBAL)
    src = MR(a.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    for mtu in (e.IBV_MTU_256, e.IBV_MTU_512, e.IBV_MTU_1024, e.IBV_MTU_2048,
                e.IBV_MTU_4096):
        model = bytearray(rnd.randbytes(size))
        dst.write(bytes(model), size)
        data = rnd.randbytes(size)
        src.write(data, size)
        qa, qb = connect(a, b, qp_rights, mtu)
        batch, done, bad = [], [], []
        for i in range(ops):
            length = rnd.randrange(1, maxlen + 1)
            off = rnd.randrange(0, size - length + 1)
            soff = rnd.randrange(0, size - length + 1)
            model[off:off + length] = data[soff:soff + length]
            batch.append(('write', 2 * i, dst.rkey, dst.buf + off,
                          SGE(src.buf + soff, length, src.lkey)))
            if rnd.randrange(4):
                batch.append(('flush', 2 * i + 1, dst.rkey, dst.buf + off, length,
                              e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_RANGE))
            else:
                batch.append(('flush', 2 * i + 1, dst.rkey, 0, 0,
                              e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_MR))
            # Eight WRs at a time: well inside the send queue.
            if len(batch) == 8:
                post(qa, batch)
                wcs = poll(a.cq, len(batch))
                done += [w.wr_id for w in wcs]
                bad += [(w.wr_id, w.status) for w in wcs
                        if w.status != e.IBV_WC_SUCCESS]
                if len(wcs) != len(batch):
                    break
                batch = []
        ok = not bad and done == list(range(2 * ops)) and \
            dst.read(size, 0) == bytes(model)
        check('integrity', ok,
              f'path MTU {128 << mtu}: {len(done)} of {2 * ops} completions, '
              f'in order: {done == sorted(done)}, failed: {bad[:4]}, memory '
              f'{"as written" if dst.read(size, 0) == bytes(model) else "differs"}')
        del qa, qb
    dst.close()
    src.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-d', required=True)
    ap.add_argument('-g', type=int, default=1)
    ap.add_argument('-D')
    ap.add_argument('-G', type=int)
    ap.add_argument('-C', action='store_true')
    ap.add_argument('-P')
    args = ap.parse_args()
    if not have_wr_flush():
        print('SKIP: this rdma-core has no ibv_wr_flush() (it came in rdma-core 45)')
        return SKIP

    failed = []

    def check(name, ok, why=''):
        print(f'{"ok" if ok else "FAIL"}: {name}{"" if ok else ": " + why}')
        if not ok:
            failed.append(name)

    a = Side(args.d, args.g)
    b = Side(args.D, args.G if args.G is not None else args.g) if args.D else \
        Side(args.d, args.g)

    if args.C:
        flags = a.ctx.query_device_ex().device_cap_flags_ex
        check('caps', bool(flags & DEVICE_FLUSH_GLOBAL) and
              bool(flags & DEVICE_FLUSH_PERSISTENT),
              f'device_cap_flags_ex {flags:#x}')

    access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
    try:
        mr = MR(b.pd, BUF, access | e.IBV_ACCESS_FLUSH_GLOBAL)
    except Exception as ex:  # pylint: disable=broad-except
        check('register', False, f'an MR with IBV_ACCESS_FLUSH_GLOBAL: {ex}')
        return 1
    src = MR(a.pd, MSG, e.IBV_ACCESS_LOCAL_WRITE)
    pattern = bytes(random.getrandbits(8) for _ in range(MSG))
    src.write(pattern, MSG)
    guard = bytes(random.getrandbits(8) for _ in range(BUF))
    mr.write(guard, BUF)
    qp_rights = access | FLUSH_RIGHTS

    # range: a WRITE and a FLUSH of what it wrote.
    qa, qb = connect(a, b, qp_rights)
    post(qa, [('write', 1, mr.rkey, mr.buf + 512, SGE(src.buf, MSG, src.lkey)),
              ('flush', 2, mr.rkey, mr.buf + 512, MSG, e.IBV_FLUSH_GLOBAL,
               e.IBV_FLUSH_RANGE)])
    wcs = poll(a.cq, 2)
    ok = len(wcs) == 2 and all(w.status == e.IBV_WC_SUCCESS for w in wcs)
    # byte_len of a FLUSH completion is not checked: scire gives 0, rxe the
    # length asked for, and the verbs leave it open for a send queue.
    check('range', ok and wcs[1].opcode == e.IBV_WC_FLUSH and
          wcs[1].wr_id == 2 and mr.read(MSG, 512) == pattern,
          f'completions {[(w.wr_id, w.status, w.opcode, w.byte_len) for w in wcs]}')
    expect = guard[:512] + pattern + guard[512 + MSG:]

    # region: the level names the MR by rkey; address and length unchecked.
    post(qa, [('flush', 3, mr.rkey, 0, 0, e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_MR)])
    wcs = poll(a.cq, 1)
    check('region', len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].opcode == e.IBV_WC_FLUSH,
          f'completions {[(w.wr_id, w.status, w.opcode) for w in wcs]}')

    # burst: more FLUSHes than max_rd_atomic, in order.
    post(qa, [('flush', 100 + i, mr.rkey, mr.buf + 64 * i, 64, e.IBV_FLUSH_GLOBAL,
               e.IBV_FLUSH_RANGE) for i in range(40)])
    wcs = poll(a.cq, 40)
    check('burst', len(wcs) == 40 and
          all(w.status == e.IBV_WC_SUCCESS for w in wcs) and
          [w.wr_id for w in wcs] == list(range(100, 140)),
          f'{len(wcs)} completions, statuses {sorted({w.status for w in wcs})}')
    del qa, qb

    # Each refusal on a fresh pair: a NAK leaves the QP in the error state.
    bad = [('persistent', mr.rkey, mr.buf, 64, e.IBV_FLUSH_PERSISTENT, qp_rights,
            e.IBV_WC_REM_ACCESS_ERR),
           ('past-end', mr.rkey, mr.buf + BUF - 64, 128, e.IBV_FLUSH_GLOBAL, qp_rights,
            e.IBV_WC_REM_ACCESS_ERR),
           ('bad-rkey', mr.rkey ^ 0x5a5a00, mr.buf, 64, e.IBV_FLUSH_GLOBAL, qp_rights,
            e.IBV_WC_REM_ACCESS_ERR),
           ('qp-rights', mr.rkey, mr.buf, 64, e.IBV_FLUSH_GLOBAL, access,
            e.IBV_WC_REM_INV_REQ_ERR)]
    for name, rkey, addr, length, ptype, rights, want in bad:
        qa, qb = connect(a, b, rights)
        post(qa, [('flush', 9, rkey, addr, length, ptype, e.IBV_FLUSH_RANGE)])
        wcs = poll(a.cq, 1)
        # Flushed WRs of the QP in error may follow; only the first counts.
        check(name, len(wcs) >= 1 and wcs[0].status == want,
              f'completion {[(w.wr_id, w.status) for w in wcs]}, want status {want}')
        del qa, qb
        poll(b.cq, 4, secs=0.2)
    check('no-write', mr.read(BUF, 0) == expect, "B's memory changed")

    integrity(a, b, access, qp_rights, check)

    try:
        MR(b.pd, BUF, access | FLUSH_RIGHTS)
        check('pmem-refused', False, 'an MR over ordinary memory was granted '
              'IBV_ACCESS_FLUSH_PERSISTENT')
    except Exception as ex:  # pylint: disable=broad-except
        check('pmem-refused', True)
        print(f'note: pmem-refused: {ex}')
    if args.P:
        pmem_checks(a, b, args.P, src, pattern, access, qp_rights, check)

    print(f'{len(failed)} of the checks failed' if failed else 'all checks passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
