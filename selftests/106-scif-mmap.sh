#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scif_mmap() and scif_get_pages() of a peer's windows whose pages are in
# this kernel, and fences read through such mappings (issue 53, points 4
# and 5). selftests/scif_mmap.c does the user side: one mapping over two
# windows, writes seen both ways, ENXIO/EACCES/EINVAL refusals, mprotect(),
# fork() (the child gets no copy, as upstream's VM_DONTCOPY), unregister
# while mapped (deferred until munmap), close before and after munmap on
# both sides, and four rounds of fence signals and INIT_PEER marks whose
# 4 MiB of data is read through a mapping as soon as the signal is there.
# Round 1: this VM's node 0, client and server forked (SCIF loopback);
# the client's endpoint is refused at a port nobody listens on before it
# connects, and its mappings must work on that second attempt.
# Round 2: node 1 (nsA) and node 2 (nsB), network namespaces joined by a
# veth pair with scireA and scireB on its ends, as 101 does: two nodes of
# one kernel. Round 3: scif_get_pages()/scif_put_pages() from a kernel
# module (selftests/kmod/scif_rma_ktest.c, loopback), data and physical
# addresses checked, and an unregister deferred while a range is held.
# Windows of another host stay refused (ENODEV, EOPNOTSUPP); that is
# checked across the VM pair by selftests/pair/50-scif.sh (scif_user).
# make check's debug boot runs all three rounds.
# shellcheck disable=SC2317 # cleanup runs by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=${SCIRE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
ko=${SCIF_RMA_KTEST_KO:-${SCIRE_KO_DIR:-$root}/selftests/kmod/scif_rma_ktest.ko}
prog=$(need_prog scif_mmap) || exit 1
scif_need

cleanup()
{
	scif_two_nodes_teardown
}
trap cleanup EXIT

echo "# round 1: node 0, loopback over $SCIRE_DEV"
timeout 300 "$prog" loop || fail "scif_mmap loop failed"

echo "# round 2: node 1 (nsA) <-> node 2 (nsB), two nodes of this kernel"
scif_two_nodes 9000
ip netns exec nsA timeout 300 "$prog" server 2600 &
spid=$!
ip netns exec nsB timeout 300 "$prog" client 1 2600
crc=$?
wait "$spid"
src=$?
[ "$crc" = 0 ] || fail "client (node 2) failed: status $crc"
[ "$src" = 0 ] || fail "server (node 1) failed: status $src"

echo "# round 3: scif_get_pages() from a kernel module, loopback"
[ -f "$ko" ] || fail "$ko not built (make ktest)"
ktest_round "$ko" "loopback, scire0, get_pages"
exit 0
