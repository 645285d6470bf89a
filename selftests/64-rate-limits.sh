#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A remote host flooding connection requests, or packets the device
# refuses, is rate-limited per source (scire's gsi_rate and gsi_burst,
# err_rate and err_burst; docs/security.md), from the attacker's side. Three network namespaces on one bridge, each with a scire device:
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
# nothing more is counted. Then err_rate 50 and err_burst 100: grC sends
# grB RoCEv2 packets with a wrong ICRC as fast as a UDP socket goes while
# grA runs rping again: rping completes; grB checks no more of
# grC's packets than the bucket allows (icrc_errors grows by at most 100
# + 50 a second), drops the rest unread (err_rate_limited), and the log
# names grC. Then grC guesses rkeys (scire_rkey_guess -D: UC RDMA WRITEs
# with keys that cannot be right into a page of grB's with live regions)
# while grA runs rping again: rping completes, not one byte of the page
# changes, the write with the key grB granted lands once grC's bucket
# refills, grB refuses no more of the guesses than the bucket allows
# (resp_remote_access_errors) and drops the rest unread. Out-of-range
# values of the four parameters are refused.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_cm_flood) || exit 1
guess=$(need_prog scire_rkey_guess) || exit 1
params=/sys/module/scire/parameters
[ -w "$params/gsi_rate" ] && [ -w "$params/gsi_burst" ] ||
	skip "scire has no gsi_rate parameter (not loaded?)"
rate0=$(cat "$params/gsi_rate")
burst0=$(cat "$params/gsi_burst")
erate0=$(cat "$params/err_rate")
eburst0=$(cat "$params/err_burst")
net=10.81.0
br=brgr
port=19400

cleanup()
{
	[ -n "${flood:-}" ] && kill "$flood" 2>/dev/null
	wait 2>/dev/null
	echo "$burst0" >"$params/gsi_burst"
	echo "$rate0" >"$params/gsi_rate"
	echo "$eburst0" >"$params/err_burst"
	echo "$erate0" >"$params/err_rate"
	for h in A B C; do
		rdma_has "gr$h" && timeout 60 rdma link delete "gr$h"
		[ -e "/run/netns/gr$h" ] && ip netns del "gr$h"
	done
	ip link del "$br" 2>/dev/null
	rm -f "${out:-}"
}
trap cleanup EXIT

# --- the parameters refuse what is out of range ------------------------------
for bad in "gsi_rate 1000001" "gsi_burst 0" "gsi_burst 1000001" "gsi_rate -1" \
	"err_rate 1000001" "err_burst 0" "err_burst 1000001" "err_rate x"; do
	read -r p v <<<"$bad"
	if echo "$v" >"$params/$p" 2>/dev/null; then
		fail "$p took $v"
	fi
done
[ "$(cat "$params/gsi_rate") $(cat "$params/gsi_burst") $(cat "$params/err_rate") $(cat "$params/err_burst")" = \
	"$rate0 $burst0 $erate0 $eburst0" ] || fail "a refused value changed a parameter"

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
# its output in $out; returns once it is under way. It stops after
# SECONDS, or at flood_end.
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

# flood_end: stop the flood (if it still runs) and wait for it; its status
# in $frc, its output printed.
flood_end()
{
	kill -TERM "$flood" 2>/dev/null
	wait "$flood"
	frc=$?
	flood=
	cat "$out"
}

# beside WHAT PORT: rping -v -V from grA to grB on PORT while grC's WHAT
# ($flood) runs, then stop it (flood_end); fails unless rping completed,
# the flood outlasted it and ended well. Sets $honest (rping's seconds).
beside()
{
	local started=$SECONDS alive=1

	cm_rping grB "$ipB" grA 64 20 "$2" || fail "rping from grA to grB failed beside grC's $1"
	honest=$((SECONDS - started))
	kill -0 "$flood" 2>/dev/null || alive=0
	flood_end
	[ "$alive" = 1 ] || fail "the $1 had ended before rping did: no overlap"
	[ "$frc" = 0 ] || fail "the $1 failed (status $frc)"
}

# err_limited WHAT SECS REFUSED LIMITED MARK: the checks of a phase with
# err_rate 50 and err_burst 100 after grC's WHAT ran for SECS: grB refused
# (each counted) at most the bucket's 100 at once and 50 a second over the
# flood and two seconds around it (what the receiver still had queued
# when the sender stopped), dropped some unread (LIMITED, err_rate_limited),
# and the kernel log since MARK names grC as over err_rate, never grA.
# Sets $bound.
err_limited()
{
	local what=$1 secs=$2 refused=$3 limited=$4 since=$5

	bound=$(awk -v s="$secs" 'BEGIN { printf "%d", 100 + 50 * (s + 2) + 0.999 }')
	[ "$refused" -le "$bound" ] ||
		fail "grB refused $refused of grC's $what one by one; the bucket allows $bound"
	[ "$limited" -gt 0 ] || fail "err_rate_limited of grB did not grow beside the $what"
	kmsg_since "$since" | grep -q "refused packets from $ipC over err_rate" ||
		fail "no kernel log line names $ipC as over err_rate for the $what"
	if kmsg_since "$since" | grep "refused packets from $ipA over err_rate"; then
		fail "the honest client $ipA was limited"
	fi
}

# --- limited: gsi_rate 5, gsi_burst 10 ----------------------------------------
echo 10 >"$params/gsi_burst" && echo 5 >"$params/gsi_rate" ||
	fail "cannot set gsi_rate 5, gsi_burst 10"
lim0=$(rdma_counter grB gsi_rate_limited) || fail "grB has no gsi_rate_limited counter"
mark=$(kmsg_mark)
# Until rping is done (at most 120 s): the honest run must overlap it.
flood 120 500
beside "flood of requests" $((port + 10))
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
wait "$flood"
flood_end
[ "$frc" = 0 ] || fail "the unlimited flood's checks failed (status $frc)"
read -r answered unanswered < <(sed -n 's/^answered \([0-9]*\), unanswered \([0-9]*\)$/\1 \2/p' "$out")
lim1=$(rdma_counter grB gsi_rate_limited)
[ "${unanswered:-x}" = 0 ] || fail "with gsi_rate 0, $unanswered of grC's requests went unanswered"
[ "$lim1" = "$lim0" ] || fail "with gsi_rate 0, gsi_rate_limited grew ($lim0 -> $lim1)"
echo "no limit: grB answered all $answered of grC's requests; gsi_rate_limited stayed $lim0"
echo "$rate0" >"$params/gsi_rate"

# --- refused packets: err_rate 50, err_burst 100 ------------------------------
echo 100 >"$params/err_burst" && echo 50 >"$params/err_rate" ||
	fail "cannot set err_rate 50, err_burst 100"
icrc0=$(rdma_counter grB icrc_errors)
erl0=$(rdma_counter grB err_rate_limited) || fail "grB has no err_rate_limited counter"
mark=$(kmsg_mark)
out=$(mktemp)
# A UC SEND Only (opcode 0x24) to QP 0x11 with P_Key 0xffff, 16 bytes of
# payload and an ICRC that is wrong: it passes every check of the
# receiver up to the ICRC, which it computes over the whole packet.
# It runs until SIGTERM (at most 120 s) and prints how many it sent in
# how long.
ip netns exec grC python3 - "$ipB" 120 >"$out" 2>&1 <<'PY' &
import signal, socket, sys, time
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
bth = bytes([0x24, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 1])
pkt = bth + bytes(16) + b'\xde\xad\xbe\xef'
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
end = t0 + float(sys.argv[2])
n = 0
print('flooding', flush=True)
while not stop and time.monotonic() < end:
    for _ in range(100):
        s.sendto(pkt, (sys.argv[1], 4791))
    n += 100
print(f'sent {n} packets with a wrong ICRC in {time.monotonic() - t0:.1f} s', flush=True)
PY
flood=$!
wait_for 30 grep -q flooding "$out" || fail "the ICRC flood did not start: $(cat "$out")"
beside "ICRC flood" $((port + 20))
read -r sent fsecs < <(sed -n 's/^sent \([0-9]*\) packets with a wrong ICRC in \([0-9.]*\) s$/\1 \2/p' "$out")
[ -n "${fsecs:-}" ] || fail "cannot read what the ICRC flood sent"
icrc1=$(rdma_counter grB icrc_errors)
erl1=$(rdma_counter grB err_rate_limited)
checked=$((icrc1 - icrc0)) limited=$((erl1 - erl0))
[ "$checked" -gt 0 ] || fail "grB counted none of grC's packets as ICRC errors"
err_limited "packets with a wrong ICRC" "$fsecs" "$checked" "$limited" "$mark"
[ $((checked + limited)) -le "$sent" ] ||
	fail "grB counted $checked + $limited of $sent packets sent"
echo "refusals limited: rping from grA completed in ${honest} s beside the ICRC flood; of $sent packets grB checked $checked (at most $bound) and dropped $limited unread (err_rate_limited); the rest were lost before it"

# --- bad rkeys from another host: err_rate 50, err_burst 100 ------------------
# One process holds both ends (the RDMA core shares devices between
# namespaces): the victim's regions on grB, the guessing client's QP on
# grC, whose packets leave through grC's gr0 and cross the bridge. Its
# flood ends at SIGTERM (flood_end), then it checks the page and counters.
acc0=$(rdma_counter grB resp_remote_access_errors) || fail "grB has no resp_remote_access_errors counter"
erl0=$(rdma_counter grB err_rate_limited)
mark=$(kmsg_mark)
out=$(mktemp)
"$guess" -d grB -D grC -t 120 >"$out" 2>&1 &
flood=$!
wait_for 60 grep -q flooding "$out" || fail "the rkey-guessing flood did not start: $(cat "$out")"
beside "rkey-guessing flood" $((port + 30))
read -r guesses gsecs < <(sed -n 's/^\([0-9]*\) guesses in \([0-9.]*\) s$/\1 \2/p' "$out")
[ -n "${gsecs:-}" ] || fail "cannot read what the rkey-guessing flood sent"
acc1=$(rdma_counter grB resp_remote_access_errors)
erl1=$(rdma_counter grB err_rate_limited)
refused=$((acc1 - acc0)) limited=$((erl1 - erl0))
# The granted write's tries are not refused: only guesses count.
err_limited "rkey guesses" "$gsecs" "$refused" "$limited" "$mark"
echo "rkey guesses limited: rping from grA completed in ${honest} s beside them; of $guesses guesses grB refused $refused (at most $bound) and dropped $limited unread; not one byte written"
exit 0
