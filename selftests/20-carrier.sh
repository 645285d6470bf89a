#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Carrier follows the netdev: on a veth pair vA/vB with scireA on vA, taking
# vB down makes the port PORT_DOWN and bringing it up makes it PORT_ACTIVE
# again; scire_async_events sees IBV_EVENT_PORT_ERR then PORT_ACTIVE.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
pid=""
cleanup()
{
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rdma link delete scireA 2>/dev/null
	ip link del vA 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ip link add vA type veth peer name vB || fail "cannot create veth pair vA/vB"
{ ip link set vA up && ip link set vB up; } || fail "cannot set vA/vB up"
out=$(rdma link add scireA type scire netdev vA 2>&1) ||
	fail "rdma link add scireA type scire netdev vA failed: $out"

state_is() { [ "$(ibv_port_state scireA)" = "$1" ]; }
wait_for 5 state_is PORT_ACTIVE ||
	fail "scireA on vA (carrier up): port state '$(ibv_port_state scireA)', expected PORT_ACTIVE"

events=""
if prog=$(need_prog scire_async_events 2>&1); then
	"$prog" -d scireA -e PORT_ERR,PORT_ACTIVE -t 20 >"$tmp/events" 2>&1 &
	pid=$!
	wait_for 10 grep -q '^ready' "$tmp/events" || {
		cat "$tmp/events"
		fail "scire_async_events did not print 'ready' within 10 s"
	}
else
	events=$prog
fi

ip link set vB down
wait_for 5 state_is PORT_DOWN ||
	fail "after 'ip link set vB down' (vA lost carrier): port state '$(ibv_port_state scireA)', expected PORT_DOWN"
echo "vB down: scireA PORT_DOWN"
ip link set vB up
wait_for 5 state_is PORT_ACTIVE ||
	fail "after 'ip link set vB up': port state '$(ibv_port_state scireA)', expected PORT_ACTIVE"
echo "vB up: scireA PORT_ACTIVE"

[ -z "$events" ] || fail "${events#FAIL: }"
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
kill -0 "$pid" 2>/dev/null && { cat "$tmp/events"; fail "scire_async_events still running 10 s after the events"; }
wait "$pid"
rc=$?
pid=""
cat "$tmp/events"
[ "$rc" = 0 ] || fail "scire_async_events -e PORT_ERR,PORT_ACTIVE exited with status $rc"
exit 0
