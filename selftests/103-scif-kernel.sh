#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SCIF kernel API's endpoints from a kernel module: bind, listen,
# connect, accept, backlog, a 1 MiB byte-exact stream each way, poll,
# refusals and the peer's close (selftests/kmod/scif_conn_ktest.c, whose
# module init runs the checks and fails if any does). Three rounds on
# this VM's one node: unconfigured (node 0, found from eth0's address),
# configured as node 7 through configfs, and over rdma_rxe instead of
# scire (the bridge is a ULP and must run on any RDMA device).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=${SCIRE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
ko=${SCIRE_KO_DIR:-$root}/selftests/kmod/scif_conn_ktest.ko
nodes=/sys/kernel/config/scif/nodes

[ -f "$ko" ] || skip "$ko not built (make ktest)"
[ -d /sys/module/scire_scif ] || fail "scire_scif is not loaded"
[ -d "$nodes" ] || fail "$nodes missing: configfs not mounted?"
addr=$(ip -4 -o addr show dev eth0 | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$addr" ] || fail "eth0 has no IPv4 address"

ktest_round "$ko" "node 0 (unconfigured), scire0"

mkdir "$nodes/7" && echo "$addr" >"$nodes/7/addr" || fail "cannot configure node 7"
ktest_round "$ko" "node 7 (configfs), scire0"
rmdir "$nodes/7"

# rdma_rxe opens UDP port 4791 in init_net when it loads: scire0 goes first.
if ! modinfo rdma_rxe >/dev/null 2>&1; then
	echo "no rdma_rxe module in this kernel: the rxe round is left out"
	exit 0
fi
rdma link delete scire0 || fail "rdma link delete scire0"
modprobe rdma_rxe || fail "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"
ktest_round "$ko" "node 0, rdma_rxe"
rdma link delete rxe0 || fail "rdma link delete rxe0"
rmmod rdma_rxe || fail "rmmod rdma_rxe"
rdma link add scire0 type scire netdev eth0 || fail "rdma link add scire0 again"
exit 0
