#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Several scire devices: scireC on vC and vD_scire (a name that does not
# start with "scire") on vD are both listed, both PORT_ACTIVE, each with
# its own netdev's IPv4 GID; a second device on vC is refused; deleting
# scireC leaves vD_scire working.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cleanup()
{
	rdma link delete scireX 2>/dev/null
	rdma link delete scireC 2>/dev/null
	rdma link delete vD_scire 2>/dev/null
	ip link del vC 2>/dev/null
}
trap cleanup EXIT

ip link add vC type veth peer name vD || fail "cannot create veth pair vC/vD"
{ ip addr add 192.168.78.1/24 dev vC && ip addr add 192.168.78.2/24 dev vD; } ||
	fail "cannot address vC/vD"
{ ip link set vC up && ip link set vD up; } || fail "cannot set vC/vD up"

out=$(rdma link add scireC type scire netdev vC 2>&1) ||
	fail "rdma link add scireC type scire netdev vC failed: $out"
out=$(rdma link add vD_scire type scire netdev vD 2>&1) ||
	fail "rdma link add vD_scire type scire netdev vD failed: $out"

# check DEV IP: listed by ibv_devices, PORT_ACTIVE, RoCE v2 GID for IP.
check()
{
	local info

	ibv_devices 2>&1 | grep -qw "$1" || fail "ibv_devices does not list $1: $(ibv_devices 2>&1)"
	wait_for 5 sh -c "ibv_devinfo -v -d '$1' | grep -q '::ffff:$2, RoCE v2'"
	info=$(ibv_devinfo -v -d "$1" 2>&1)
	grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" ||
		fail "$1: port state '$(ibv_port_state "$1")', expected PORT_ACTIVE"
	grep -q "::ffff:$2, RoCE v2" <<<"$info" ||
		fail "$1: no RoCE v2 GID ::ffff:$2; GIDs: $(grep 'GID\[' <<<"$info")"
	echo "$1: PORT_ACTIVE, GID ::ffff:$2"
}
check scireC 192.168.78.1
check vD_scire 192.168.78.2
check scire0 192.168.77.2

if out=$(rdma link add scireX type scire netdev vC 2>&1); then
	fail "a second scire device on vC (scireX) was accepted"
fi
echo "second device on vC refused: $out"

out=$(rdma link delete scireC 2>&1) || fail "rdma link delete scireC failed: $out"
rdma_has scireC && fail "scireC still in rdma link after delete"
ibv_devices 2>&1 | grep -qw scireC && fail "scireC still in ibv_devices after delete"
check vD_scire 192.168.78.2
check scire0 192.168.77.2
exit 0
