#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SCIF user API (libscif over /dev/scif): scif_user's checks of
# endpoints, the stream, poll, windows in user memory, readfrom/writeto,
# vreadfrom/vwriteto, fences and the user ABI's refusals, in two rounds:
# on this VM's one node (node 0, unconfigured: client and server forked,
# loopback through scire0), and between two nodes, nsA (node 1) and nsB
# (node 2), network namespaces joined by a veth pair with scireA and
# scireB on its ends, the node table set through configfs. Round 1 also
# runs "scif_user closes": connections from one reused port, each with a
# window registered right after connect and closed by both sides at once
# while a request is in flight, on the fast path and on the wire path; no
# close may hang (a bound of seconds) or wait out the RC retries (scire's
# retry_exceeded counter must not rise).
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scif_user) || exit 1
scif_need
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

cleanup()
{
	scif_two_nodes_teardown
}
trap cleanup EXIT

echo "# round 1: node 0, loopback"
timeout 300 "$prog" loop || fail "scif_user loop failed (status $?)"

dev=$SCIRE_DEV
closes_round()
{
	local before after

	# rxe has no such counter: the bound on each close still holds.
	before=$(rdma_counter "$dev" retry_exceeded) || before=
	timeout 300 "$prog" closes 10 || return 1
	[ -z "$before" ] && return 0
	after=$(rdma_counter "$dev" retry_exceeded)
	[ "$after" = "$before" ] || {
		echo "retry_exceeded of $dev rose from $before to $after: a send was left to the RC retries"
		return 1
	}
}
for mode in $(fast_path_modes "$dev"); do
	echo "# round 1, closes: $(fast_path_name "$mode")"
	run_fast_path "$mode" "$dev" closes_round || fail "scif_user closes failed ($(fast_path_name "$mode"))"
done

# make check's debug boot (the debug kernel without SCIRE_DEBUG_FULL=1)
# keeps to round 1: the SCIF calls, /dev/scif and both of scire's paths
# (the closes) under KASAN. Round 2's veth pair and namespaces cost
# 40 s there; make check-debug and the stock boot run it.
if debug_quick; then
	echo "debug kernel, make check's subset: round 2 (two nodes) is left to make check-debug"
	exit 0
fi

echo "# round 2: node 1 (nsA) <-> node 2 (nsB)"
scif_two_nodes
ip netns exec nsA timeout 300 "$prog" server 2200 &
srv=$!
ip netns exec nsB timeout 300 "$prog" client 1 2200
crc=$?
wait "$srv"
src=$?
[ "$crc" = 0 ] || fail "client (node 2) failed: status $crc"
[ "$src" = 0 ] || fail "server (node 1) failed: status $src"
exit 0
