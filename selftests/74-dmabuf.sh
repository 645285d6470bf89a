#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# dma-buf MRs on $SCIRE_DEV (scire0): ibv_reg_dmabuf_mr over a buffer that
# udmabuf exports from a memfd, its refusals, RDMA WRITE and READ into and
# out of it as target and as local SGE, and an MR that outlives its
# descriptor: scire_dmabuf, once on the same-host fast path (fast_path=1)
# and once on the wire path (0). Skips where the kernel has no udmabuf
# (bookworm's 6.1) or whose udmabuf has no vmap (6.1's, in the debug
# kernel); make check runs it on 6.12 (trixie) and the newest kernel.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_dmabuf) || exit 1
modprobe udmabuf 2>/dev/null
[ -c /dev/udmabuf ] || skip "no /dev/udmabuf in kernel $(uname -r) (CONFIG_UDMABUF is off)"
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
# 77: a udmabuf without vmap (6.1's, in the debug kernel).
"$prog" -d "$SCIRE_DEV" -g "$gid" -c length >/dev/null 2>&1
[ $? != 77 ] || skip "kernel $(uname -r): its udmabuf gives no kernel mapping (vmap), which scire imports through"
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
