#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A remote host flooding connection requests is rate-limited per source
# (scire's gsi_rate and gsi_burst, docs/security.md), from the attacker's
# side. Three network namespaces on one bridge, each with a scire device:
# grA (10.81.0.1) an honest client, grB (10.81.0.2) the target, grC
# (10.81.0.3) the attacker. With gsi_rate 5 and gsi_burst 10, grC floods
# grB with rdma_cm requests to a port where nothing listens
# (scire_cm_flood -r: 16 at a time, each given up after 500 ms without an
# answer) while grA runs rping -v -V to a real listener on grB:
#   - rping completes, every ping checked on both sides, while the flood
#     goes on: grA's requests have a bucket of their own;
#   - grB answers (rejects, reason 8) no more of grC's requests than the
#     bucket lets through (10 + 5 a second), the rest go unanswered; none
#     is established or ends otherwise;
#   - grB's gsi_rate_limited counter grows, and the kernel log names grC's
#     address as over the rate, never grA's.
# Then gsi_rate 0 (no limit): a short flood is answered in full and
# nothing more is counted. Out-of-range values of both parameters are
# refused.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_cm_flood) || exit 1
params=/sys/module/scire/parameters
[ -w "$params/gsi_rate" ] && [ -w "$params/gsi_burst" ] ||
	skip "scire has no gsi_rate parameter (not loaded?)"
rate0=$(cat "$params/gsi_rate")
burst0=$(cat "$params/gsi_burst")
net=10.81.0
br=brgr
port=19400
flood_secs=15

cleanup()
{
	[ -n "${flood:-}" ] && kill "$flood" 2>/dev/null
	wait 2>/dev/null
	echo "$burst0" >"$params/gsi_burst"
	echo "$rate0" >"$params/gsi_rate"
	for h in A B C; do
		rdma_has "gr$h" && timeout 60 rdma link delete "gr$h"
		[ -e "/run/netns/gr$h" ] && ip netns del "gr$h"
	done
	ip link del "$br" 2>/dev/null
	rm -f "${out:-}"
}
trap cleanup EXIT

# --- the parameters refuse what is out of range ------------------------------
for bad in "gsi_rate 1000001" "gsi_burst 0" "gsi_burst 1000001" "gsi_rate -1"; do
	read -r p v <<<"$bad"
	if echo "$v" >"$params/$p" 2>/dev/null; then
		fail "$p took $v"
	fi
done
[ "$(cat "$params/gsi_rate") $(cat "$params/gsi_burst")" = "$rate0 $burst0" ] ||
	fail "a refused value changed a parameter"

# --- the segment: grA, grB, grC on bridge brgr --------------------------------
if ! res=$(ip link add "$br" type bridge 2>&1); then
	[ -e /sys/module/bridge ] || modprobe -q bridge ||
		skip "this kernel has no bridge (CONFIG_BRIDGE) for the segment: $res"
	ip link add "$br" type bridge || fail "cannot create bridge $br"
fi
ip link set "$br" mtu 9000 up || fail "cannot bring $br up"
i=0
for h in A B C; do
	ns=gr$h
	i=$((i + 1))
	ip netns add "$ns" || fail "ip netns add $ns failed"
	ip link add "grv$h" mtu 9000 type veth peer name gr0 netns "$ns" ||
		fail "cannot create veth grv$h"
	ip link set "grv$h" master "$br" up || fail "cannot put grv$h on $br"
	# No IPv6: only the IPv4 RoCE v2 GIDs (as topo_veth does).
	res=$(ip netns exec "$ns" sh -c "echo 1 >/proc/sys/net/ipv6/conf/gr0/disable_ipv6
		ip link set lo up && ip link set gr0 mtu 9000 up && ip addr add $net.$i/24 dev gr0" 2>&1) ||
		fail "cannot set up gr0 in $ns: $res"
	res=$(ip netns exec "$ns" timeout 60 rdma link add "$ns" type scire netdev gr0 2>&1) ||
		fail "rdma link add $ns type scire netdev gr0 (in $ns): $res"
done
for h in A B C; do
	need_dev_gid "gr$h" >/dev/null || fail "gr$h has no GID"
done
ipA=$net.1 ipB=$net.2 ipC=$net.3

# flood SECONDS GIVE_UP_MS: grC's flood at grB in the background ($flood),
# its output in $out; returns once it is under way.
flood()
{
	out=$(mktemp)
	ip netns exec grC "$prog" -r -a "$ipB" -p "$port" -t "$1" -n 16 -w "$2" >"$out" 2>&1 &
	flood=$!
	wait_for 60 grep -q flooding "$out" || {
		cat "$out"
		fail "the flood did not start"
	}
}

# flood_end: wait for the flood; its status in $frc, its output printed.
flood_end()
{
	wait "$flood"
	frc=$?
	flood=
	cat "$out"
}

# --- limited: gsi_rate 5, gsi_burst 10 ----------------------------------------
echo 10 >"$params/gsi_burst" && echo 5 >"$params/gsi_rate" ||
	fail "cannot set gsi_rate 5, gsi_burst 10"
lim0=$(rdma_counter grB gsi_rate_limited) || fail "grB has no gsi_rate_limited counter"
mark=$(kmsg_mark)
flood "$flood_secs" 500
started=$SECONDS
cm_rping grB "$ipB" grA 64 20 $((port + 10)) ||
	fail "rping from grA to grB failed beside grC's flood"
honest=$((SECONDS - started))
alive=1
kill -0 "$flood" 2>/dev/null || alive=0
flood_end
[ "$alive" = 1 ] || fail "the flood had ended before rping did: no overlap"
[ "$frc" = 0 ] || fail "the flood's checks failed (status $frc)"
lim1=$(rdma_counter grB gsi_rate_limited)
secs=$(sed -n 's/^\([0-9.]*\) s of requests.*/\1/p' "$out")
rejected=$(sed -n 's/.*rejected with reason 8 \([0-9]*\),.*/\1/p' "$out")
read -r answered unanswered < <(sed -n 's/^answered \([0-9]*\), unanswered \([0-9]*\)$/\1 \2/p' "$out")
[ -n "$secs" ] && [ -n "$rejected" ] && [ -n "${unanswered:-}" ] ||
	fail "cannot read the flood's tally"
# The bucket: 10 at once, then 5 a second, over the flood and the second
# its last answers may take.
bound=$(awk -v s="$secs" 'BEGIN { printf "%d", 10 + 5 * (s + 1) + 0.999 }')
[ "$answered" -le "$bound" ] ||
	fail "grB answered $answered of grC's requests in $secs s; the bucket allows $bound"
[ "$unanswered" -gt 0 ] || fail "none of grC's requests went unanswered"
[ "$lim1" -gt "$lim0" ] || fail "gsi_rate_limited of grB did not grow ($lim0 -> $lim1)"
log=$(kmsg_since "$mark")
grep -q "QP1 packets from $ipC over gsi_rate" <<<"$log" ||
	fail "no kernel log line names $ipC as over gsi_rate"
if grep "QP1 packets from $ipA over gsi_rate" <<<"$log"; then
	fail "the honest client $ipA was limited"
fi
echo "limited: rping from grA completed in ${honest} s beside the flood; grB answered $answered of grC's requests (at most $bound), $unanswered unanswered, gsi_rate_limited $lim0 -> $lim1"

# --- no limit: gsi_rate 0 ------------------------------------------------------
echo 0 >"$params/gsi_rate" || fail "cannot set gsi_rate 0"
lim0=$(rdma_counter grB gsi_rate_limited)
flood 5 10000
flood_end
[ "$frc" = 0 ] || fail "the unlimited flood's checks failed (status $frc)"
read -r answered unanswered < <(sed -n 's/^answered \([0-9]*\), unanswered \([0-9]*\)$/\1 \2/p' "$out")
lim1=$(rdma_counter grB gsi_rate_limited)
[ "${unanswered:-x}" = 0 ] || fail "with gsi_rate 0, $unanswered of grC's requests went unanswered"
[ "$lim1" = "$lim0" ] || fail "with gsi_rate 0, gsi_rate_limited grew ($lim0 -> $lim1)"
echo "no limit: grB answered all $answered of grC's requests; gsi_rate_limited stayed $lim0"
exit 0
