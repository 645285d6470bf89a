#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# /dev/scif as MPSS 4's libscif calls it (issue 53): scif_mpss_abi makes
# the ioctls itself, with the argument widths and conventions of Intel's
# library (a uint16_t port for SCIF_BIND on a stack guarded on both
# sides, values in the argument for SCIF_LISTEN and SCIF_FENCE_WAIT, the
# two-step accept, out_len, out_offset, an int mark, node ids on a file of
# their own, poll(2)), and checks that the kernel writes back only what
# scif(7)'s ioctl table says. Round 1: this VM's node 0, client and
# server forked, over scire0 on the fast path and then on the wire path.
# Round 2: node 1 (nsA) and node 2 (nsB), network namespaces joined by a
# veth pair with scireA and scireB on its ends, as 100 does; make check's
# debug boot keeps to round 1.
# shellcheck disable=SC2317 # functions run by trap and fast_path_each
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scif_mpss_abi) || exit 1
scif_need

cleanup()
{
	scif_two_nodes_teardown
}
trap cleanup EXIT

loop_round()
{
	timeout 300 "$prog" loop
}

echo "# round 1: node 0, loopback over $SCIRE_DEV"
fast_path_each "$SCIRE_DEV" loop_round

if debug_quick; then
	echo "debug kernel, make check's subset: round 2 (two nodes) is left to make check-debug"
	exit 0
fi

echo "# round 2: node 1 (nsA) <-> node 2 (nsB)"
scif_two_nodes
ip netns exec nsA timeout 300 "$prog" server 2400 &
spid=$!
ip netns exec nsB timeout 300 "$prog" client 1 2400
crc=$?
wait "$spid"
src=$?
[ "$crc" = 0 ] || fail "client (node 2) failed: status $crc"
[ "$src" = 0 ] || fail "server (node 1) failed: status $src"
exit 0
