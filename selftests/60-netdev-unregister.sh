#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A scire device goes away with its netdev: deleting the veth under scireE
# returns promptly and scireE leaves rdma link and ibv_devices within 5 s.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cleanup()
{
	rdma link delete scireE 2>/dev/null
	ip link del vE 2>/dev/null
}
trap cleanup EXIT

ip link add vE type veth peer name vF || fail "cannot create veth pair vE/vF"
{ ip link set vE up && ip link set vF up; } || fail "cannot set vE/vF up"
out=$(rdma link add scireE type scire netdev vE 2>&1) ||
	fail "rdma link add scireE type scire netdev vE failed: $out"
rdma_has scireE || fail "scireE not in rdma link after add"

out=$(timeout 10 ip link del vE 2>&1)
rc=$?
[ "$rc" = 124 ] && fail "ip link del vE hung (over 10 s) with scireE on it"
[ "$rc" = 0 ] || fail "ip link del vE failed (status $rc): $out"

gone() { ! rdma_has scireE; }
wait_for 5 gone || fail "scireE still in rdma link 5 s after its netdev vE was deleted: $(rdma link show)"
ibv_devices 2>&1 | grep -qw scireE && fail "scireE still in ibv_devices after vE was deleted"
echo "scireE gone with vE"
exit 0
