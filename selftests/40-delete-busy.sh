#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Deleting a device that a process holds open completes: scire_hold opens
# scire0 and allocates PD/MR/CQ; `rdma link delete scire0` must return within
# 10 s while it runs, and scire_hold must see IBV_EVENT_DEVICE_FATAL and exit
# 0 within 10 s. scire0 is re-added on eth0 afterwards.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_hold) || exit 1
tmp=$(mktemp -d)
pid=""
cleanup()
{
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
	rdma_has scire0 || rdma link add scire0 type scire netdev eth0
	rm -rf "$tmp"
}
trap cleanup EXIT

"$prog" -d scire0 >"$tmp/hold" 2>&1 &
pid=$!
wait_for 10 grep -q '^ready' "$tmp/hold" || {
	cat "$tmp/hold"
	fail "scire_hold -d scire0 did not print 'ready' within 10 s"
}

start=$(date +%s)
out=$(timeout 10 rdma link delete scire0 2>&1)
rc=$?
[ "$rc" = 124 ] && fail "rdma link delete scire0 did not return within 10 s while scire_hold held it"
[ "$rc" = 0 ] || fail "rdma link delete scire0 failed (status $rc): $out"
echo "rdma link delete scire0 took $(($(date +%s) - start)) s"
rdma_has scire0 && fail "scire0 still in rdma link after delete"

i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
if kill -0 "$pid" 2>/dev/null; then
	cat "$tmp/hold"
	fail "scire_hold still running 10 s after scire0 was deleted (no DEVICE_FATAL?)"
fi
wait "$pid"
rc=$?
pid=""
cat "$tmp/hold"
[ "$rc" = 0 ] || fail "scire_hold exited with status $rc (expected 0: saw DEVICE_FATAL, cleaned up)"

out=$(rdma link add scire0 type scire netdev eth0 2>&1) ||
	fail "re-adding scire0 on eth0 failed: $out"
state_active() { [ "$(ibv_port_state scire0)" = PORT_ACTIVE ]; }
wait_for 5 state_active || fail "re-added scire0: port state '$(ibv_port_state scire0)', expected PORT_ACTIVE"
echo "scire0 re-added, PORT_ACTIVE"
exit 0
