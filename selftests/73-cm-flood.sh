#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A flood of rdma_cm connection requests at $SCIRE_DEV's IPv4 address
# (scire_cm_flood: 16 at a time, at a port where nothing listens and at a
# listener that rejects each one) with honest rdma_cm traffic beside it on
# the same device and address, over the wire path (fast_path=0): rping -v
# -V (every ping checked on both sides) and ucmatose. The honest runs must
# complete while the flood goes on; no flooding request may be established
# or end otherwise than rejected with its target's reason; and afterwards
# the cm_ids and QPs rdma(8) lists return to what they were before.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_cm_flood) || exit 1
dev=$SCIRE_DEV
need_dev_gid "$dev" >/dev/null || exit 1
netdev=$(dev_netdev "$dev")
ip=$(ip -4 -o addr show dev "$netdev" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
[ -n "$ip" ] || fail "$dev's netdev '$netdev' has no IPv4 address"
mode=$(fast_path_modes "$dev")
mode=${mode##* }
echo "$dev on $netdev, $ip, $(fast_path_name "$mode")"

# What the flood must leave as it found: every cm_id (bound to a device
# or not) and the device's QPs.
cm_ids() { rdma resource show cm_id 2>/dev/null | grep -c .; }
qps() { rdma_res_count "$dev" qp; }
cm0=$(cm_ids)
qp0=$(qps)
# shellcheck disable=SC2317 # called through wait_for
cm_back() { [ "$(cm_ids)" = "$cm0" ]; }
# shellcheck disable=SC2317 # called through wait_for
qp_back() { [ "$(qps)" = "$qp0" ]; }

out=$(mktemp)
# -t 120: a bound in case this script dies; it is stopped with SIGTERM.
"$prog" -a "$ip" -p 19300 -t 120 >"$out" 2>&1 &
flood=$!
wait_for 30 grep -q flooding "$out" || {
	kill "$flood" 2>/dev/null
	fail "the flood did not start: $(cat "$out")"
}
started=$SECONDS

rc=0
run_fast_path "$mode" "$dev" cm_rping "" "$ip" "" 4000 40 19310 || {
	echo "rping beside the flood failed"
	rc=1
}
run_fast_path "$mode" "$dev" cm_tool ucmatose "" "$ip" "" 2 10 1000 19311 || {
	echo "ucmatose beside the flood failed"
	rc=1
}
honest=$((SECONDS - started))
alive=1
kill -0 "$flood" 2>/dev/null || alive=0
kill -TERM "$flood" 2>/dev/null
wait "$flood"
frc=$?
cat "$out"
rm -f "$out"
[ "$rc" = 0 ] || fail "the honest rdma_cm traffic failed beside the flood"
[ "$alive" = 1 ] || fail "the flood had ended before the honest traffic did: no overlap"
[ "$frc" = 0 ] || fail "the flood's checks failed (status $frc)"

if ! wait_for 20 cm_back; then
	rdma resource show cm_id
	fail "cm_ids: $cm0 before the flood, $(cm_ids) 20 s after"
fi
if ! wait_for 20 qp_back; then
	rdma resource show qp
	fail "$dev's QPs: $qp0 before the flood, $(qps) 20 s after"
fi
echo "ok: rping and ucmatose completed in ${honest} s beside the flood; cm_ids ($cm0) and QPs ($qp0) back to before"
exit 0
