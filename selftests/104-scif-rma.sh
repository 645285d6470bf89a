#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SCIF kernel API's windows, RMA and fences from a kernel module:
# register (fixed and automatic offsets, overlaps), readfrom/writeto and
# vreadfrom/vwriteto byte-exact over unaligned multi-page ranges and 4 MiB
# windows, fence mark/wait/signal of both sides, pinned pages, refusals
# (ENXIO, EACCES, EINVAL, EADDRINUSE, EOPNOTSUPP), unregister during an RMA,
# and close with windows registered (selftests/kmod/scif_rma_ktest.c, whose
# module init runs the checks and fails if any does). Three rounds on this
# VM's one node, two endpoints connected to each other: over scire0, over
# scire0 with one page per MR (module parameter mr_pages), and over
# rdma_rxe instead (the bridge is a ULP and must run on any RDMA device;
# rxe's short fast-registration page lists split the big windows into
# several MRs). make check's debug boot runs only the first.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=${SCIRE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
ko=${SCIF_RMA_KTEST_KO:-${SCIRE_KO_DIR:-$root}/selftests/kmod/scif_rma_ktest.ko}

[ -f "$ko" ] || skip "$ko not built (make ktest)"
[ -d /sys/module/scire_scif ] || fail "scire_scif is not loaded"

ktest_round "$ko" "loopback, scire0"

# make check's debug boot (the debug kernel without SCIRE_DEBUG_FULL=1)
# keeps to this first round; make check-debug and the stock boot run all.
if debug_quick; then
	echo "debug kernel, make check's subset: the one-page-MR and rxe rounds are left to make check-debug"
	exit 0
fi

# Every window page its own MR: RMAs become one WR per peer page with
# several local SGEs, and a 4 MiB window takes five SCIF_MSG_REGISTER
# messages to announce.
param=/sys/module/scire_scif/parameters/mr_pages
[ -w "$param" ] || fail "$param missing"
echo 1 >"$param" || fail "cannot set mr_pages"
ktest_round "$ko" "loopback, scire0, one page per MR"
echo 0 >"$param"

# rdma_rxe opens UDP port 4791 in init_net when it loads: scire0 goes first.
if ! modinfo rdma_rxe >/dev/null 2>&1; then
	echo "no rdma_rxe module in this kernel: the rxe round is left out"
	exit 0
fi
rdma link delete scire0 || fail "rdma link delete scire0"
modprobe rdma_rxe || fail "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"
ktest_round "$ko" "loopback, rdma_rxe"
rdma link delete rxe0 || fail "rdma link delete rxe0"
rmmod rdma_rxe || fail "rmmod rdma_rxe"
rdma link add scire0 type scire netdev eth0 || fail "rdma link add scire0 again"
exit 0
