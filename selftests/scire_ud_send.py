#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Send UD datagrams over LIDs with pyverbs, one at a time, each send's
completion checked: the forged-key traffic of the scire_ib tests (a wrong
Q_Key, a P_Key of another partition).

    scire_ud_send.py DEV DLID QPN QKEY COUNT [--pkey-index I] [--size BYTES]

DEV's port 1 sends COUNT datagrams of BYTES (default 64) to QP QPN at LID
DLID with Q_Key QKEY, from a UD QP at P_Key index I (default 0). Exit
status 0 when every send completed successfully.
"""
import argparse
import sys

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR


def main():
    p = argparse.ArgumentParser()
    p.add_argument('dev')
    for name in ('dlid', 'qpn', 'qkey', 'count'):
        p.add_argument(name, type=lambda s: int(s, 0))
    p.add_argument('--pkey-index', type=int, default=0)
    p.add_argument('--size', type=int, default=64)
    a = p.parse_args()

    ctx = Context(name=a.dev)
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=1)))
    attr = QPAttr()
    attr.qkey = a.qkey
    attr.pkey_index = a.pkey_index
    attr.port_num = 1
    qp.to_rts(attr)
    mr = MR(pd, a.size, e.IBV_ACCESS_LOCAL_WRITE)
    ah = AH(pd, attr=AHAttr(dlid=a.dlid, port_num=1))
    for _ in range(a.count):
        wr = SendWR(num_sge=1, sg=[SGE(mr.buf, a.size, mr.lkey)])
        wr.set_wr_ud(ah, a.qpn, a.qkey)
        qp.post_send(wr)
        while True:
            got, wcs = cq.poll()
            if got:
                break
        if wcs[0].status != e.IBV_WC_SUCCESS:
            sys.exit(f'send completed with status {wcs[0].status}')


if __name__ == '__main__':
    main()
