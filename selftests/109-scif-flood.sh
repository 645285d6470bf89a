#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A node of the table flooding another with connection requests that are
# never accepted (docs/security.md): what it can make the other node hold
# is bounded across all of that node's listeners, not per listener only.
# Two nodes, nsA (node 1) and nsB (node 2); on node 2 three listeners
# (backlog 8 each) that accept nothing, and scire_scif's max_pending_node
# at 12. From node 1's own address, 18 honest-looking requests (6 per
# port, raw rdma_cm: scif_peer_check forge) arrive at once: 12 must be
# queued (no answer while the listeners live) and 6 rejected at once,
# each counted in cm_rejected, with a kernel log line. When the listeners
# close, the queued 12 are rejected too and node 1's count is given
# back: a listener then takes node 1's next request. (A count left
# behind would also warn when the namespace goes.)
#
# Then a flood at rate beside honest traffic, against scire_scif's rate
# limit per remote node (module parameters cm_rate and cm_burst): node 3,
# a second address of nsA, sends node 2 request after request without a
# pause (scif_peer_check flood: raw rdma_cm, to a port nobody listens
# on). Out-of-range parameters are refused; with cm_rate 0 nothing is
# limited; with cm_rate 2 and cm_burst 4, every request beyond the bucket
# is refused at once and counted in cm_rate_limited, with a kernel log
# line, while node 1, beside the flood, connects on its first try and
# runs scif_user's sizes client against node 2 (every RMA kind from 1
# byte to a 2 MiB window with the data checked, fences, the stream that
# steers it) to the end.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/scif
param=/sys/module/scire_scif/parameters/max_pending_node
rate=/sys/module/scire_scif/parameters/cm_rate
burst=/sys/module/scire_scif/parameters/cm_burst
prog=$(need_prog scif_peer_check) || exit 1
scif_need
[ -w "$param" ] || fail "$param missing"
{ [ -w "$rate" ] && [ -w "$burst" ]; } || fail "$rate or $burst missing"
[ -r "$cfs/cm_rate_limited" ] || fail "$cfs/cm_rate_limited missing"
user=$(need_prog scif_user) || exit 1
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cm_port=$(cat /sys/module/scire_scif/parameters/cm_port)
port=2400 nports=3 per_port=6 cap=12
old_cap=$(cat "$param") old_rate=$(cat "$rate") old_burst=$(cat "$burst")
pids=()

cleanup()
{
	[ -n "${holder:-}" ] && kill "$holder" 2>/dev/null
	[ -n "${lsn:-}" ] && kill "$lsn" 2>/dev/null
	[ -n "${flooder:-}" ] && kill "$flooder" 2>/dev/null
	[ -n "${srv:-}" ] && kill "$srv" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	echo "$old_cap" >"$param"
	echo "$old_rate" >"$rate"
	echo "$old_burst" >"$burst"
	rmdir "$SCIF_NODES/3" 2>/dev/null
	scif_two_nodes_teardown
}
trap cleanup EXIT

scif_two_nodes
echo "$cap" >"$param" || fail "cannot set max_pending_node"
out=$(mktemp -d)

# Not through in_ns (a function: $! would be its subshell, not the holder).
ip netns exec "$TOPO_NS_B" "$prog" hold "$port" "$nports" 8 300 >"$out/hold" 2>&1 &
holder=$!
wait_for 30 grep -q listening "$out/hold" || fail "the listeners did not start: $(cat "$out/hold")"

# One request first, alone, so that address resolution and the GIDs are
# in place before the flood (its first try may find them not yet). It
# stays queued: its client waits for an answer in the background.
for try in 1 2 3; do
	in_ns "$TOPO_NS_A" timeout 200 "$prog" forge "$TOPO_IP_A" "$TOPO_IP_B" "$cm_port" 1 2 \
		"$port" >"$out/req.first" 2>&1 &
	first=$!
	wait_for 60 grep -q '^sent$\|error:' "$out/req.first"
	grep -q error: "$out/req.first" || break
	wait "$first"
	sleep 1
done
grep -qx sent "$out/req.first" ||
	fail "node 1's first request was not sent: $(cat "$out/req.first") (try $try)"
pids+=("$first")
sleep 2
grep -qx rejected "$out/req.first" && fail "node 1's first request was rejected"
sent=1

before=$(cat "$cfs/cm_rejected")
dmesg_mark=$(dmesg | wc -l)
for ((p = 0; p < nports; p++)); do
	for ((i = 0; i < per_port; i++)); do
		[ "$p" = 0 ] && [ "$i" = 0 ] && continue	# the first one, above
		in_ns "$TOPO_NS_A" timeout 120 "$prog" forge "$TOPO_IP_A" "$TOPO_IP_B" "$cm_port" \
			1 2 $((port + p)) >"$out/req.$p.$i" 2>&1 &
		pids+=($!)
		sent=$((sent + 1))
	done
done

# Refusals come at once; queued requests wait for the listeners. Wait
# until every request is on its way, then until no answer came for 5 s.
n_sent()
{
	[ "$(cat "$out"/req.* 2>/dev/null | grep -c '^sent$')" = "$sent" ]
}
wait_for 120 n_sent || fail "not every request was sent: $(cat "$out"/req.*)"
quiet=0 last=-1
while [ "$quiet" -lt 5 ]; do
	sleep 1
	done_n=$(cat "$out"/req.* | grep -c .) || :
	if [ "$done_n" = "$last" ]; then quiet=$((quiet + 1)); else quiet=0 last=$done_n; fi
done
rejected=$(cat "$out"/req.* | grep -c '^rejected$') || :
other=$(cat "$out"/req.* | grep -v '^rejected$\|^sent$') || :
queued=$((sent - rejected))
counted=$(($(cat "$cfs/cm_rejected") - before))
echo "$sent requests from node 1: $rejected rejected at once, $queued queued; cm_rejected +$counted"
[ -z "$other" ] || fail "unexpected outcomes: $other"
[ "$queued" = "$cap" ] || fail "$queued requests of node 1 queued on node 2, max_pending_node is $cap"
[ "$counted" = "$rejected" ] || fail "cm_rejected grew by $counted, $rejected were refused"
logged=$(dmesg | tail -n +"$((dmesg_mark + 1))" | grep -c 'requests are queued here already') || :
[ "$logged" -ge 1 ] || fail "no kernel log line for the refused requests"

# The listeners close: what they queued is rejected, and node 1's count
# goes back to zero, so a new listener takes its next request.
kill "$holder"
wait "$holder" 2>/dev/null
holder=
for p in "${pids[@]}"; do wait "$p"; done
pids=()
rejected=$(cat "$out"/req.* | grep -c '^rejected$') || :
[ "$rejected" = "$sent" ] ||
	fail "after the listeners closed, $rejected of $sent requests were rejected: $(cat "$out"/req.* | sort | uniq -c | tr '\n' ' ')"
in_ns "$TOPO_NS_B" timeout 130 "$prog" listen "$port" 120 >"$out/listen" 2>&1 &
lsn=$!
sleep 1
res=
for try in 1 2 3; do
	res=$(in_ns "$TOPO_NS_A" timeout 30 "$prog" forge "$TOPO_IP_A" "$TOPO_IP_B" "$cm_port" 1 2 \
		"$port" 2>&1 | tail -n1)
	case $res in error:*) sleep 1 ;; *) break ;; esac
done
[ "$res" = established ] || fail "after the flood, node 1's request was not taken: $res"
wait "$lsn"
lsn=
grep -qx "accepted node 1 port 4242" "$out/listen" || fail "the listener: $(cat "$out/listen")"
echo "ok: node 1 held at most $cap queued requests on node 2; its count came back"

# --- a flood at rate beside honest traffic: cm_rate and cm_burst -------------
for v in -1 1000001 x ''; do
	echo "$v" >"$rate" 2>/dev/null && fail "cm_rate '$v' was taken"
done
echo 0 >"$burst" 2>/dev/null && fail "cm_burst 0 was taken"
{ [ "$(cat "$rate")" = "$old_rate" ] && [ "$(cat "$burst")" = "$old_burst" ]; } ||
	fail "a refused value changed cm_rate or cm_burst: $(cat "$rate") $(cat "$burst")"
echo "defaults: cm_rate $old_rate, cm_burst $old_burst; out-of-range values refused"

node3=$TOPO_NET.3
in_ns "$TOPO_NS_A" ip addr add "$node3/24" dev "$TOPO_IF_A" ||
	fail "cannot add $node3 to $TOPO_IF_A"
{ mkdir "$SCIF_NODES/3" && echo "$node3" >"$SCIF_NODES/3/addr"; } || fail "cannot create node 3"
fport=2460 hport=2461 cport=2462
limited() { cat "$cfs/cm_rate_limited"; }

# flood SECONDS FILE: node 3 floods node 2's port fport in the background
# (pid in flooder) until SECONDS pass or FILE.stop exists; output in FILE.
flood()
{
	rm -f "$2.stop"
	ip netns exec "$TOPO_NS_A" "$prog" flood "$node3" "$TOPO_IP_B" "$cm_port" 3 2 "$fport" \
		"$1" "$2.stop" >"$2" 2>&1 &
	flooder=$!
}

# A listener on node 2 keeps cm_port open there; the flood's port has none.
ip netns exec "$TOPO_NS_B" "$prog" hold $((fport + 5)) 1 1 600 >"$out/hold2" 2>&1 &
holder=$!
wait_for 30 grep -q listening "$out/hold2" || fail "node 2's listener did not start"
# A request or two to let address resolution and the new GID settle.
for try in 1 2 3 4 5; do
	res=$(in_ns "$TOPO_NS_A" timeout 30 "$prog" forge "$node3" "$TOPO_IP_B" "$cm_port" 3 2 \
		$((fport + 9)) 2>&1 | tail -n1)
	[ "$res" = rejected ] && break
	sleep 1
done
[ "$res" = rejected ] || fail "node 3's first request: $res"

# cm_rate 0: no limit, however fast node 3 sends.
echo 0 >"$rate" || fail "cannot set cm_rate 0"
l0=$(limited)
flood 5 "$out/flood0"
wait "$flooder"
st=$?
flooder=
cat "$out/flood0"
[ "$st" = 0 ] || fail "the flood with cm_rate 0 ended with status $st"
[ "$(limited)" = "$l0" ] || fail "cm_rate 0, yet cm_rate_limited went from $l0 to $(limited)"

# cm_rate 2, cm_burst 4: node 3 floods; node 1 works beside it.
r=2 b=4
{ echo "$r" >"$rate" && echo "$b" >"$burst"; } || fail "cannot set cm_rate $r, cm_burst $b"
l0=$(limited)
dmesg_mark=$(dmesg | wc -l)
flood 500 "$out/flood"
wait_for 30 grep -q flooding "$out/flood" || fail "the flood did not start: $(cat "$out/flood")"
sleep 3
l1=$(limited)
[ "$l1" -gt "$l0" ] || fail "3 s into the flood nothing was limited: $(cat "$out/flood")"

# node 1's one try, no retry (scif_peer_check connect), while node 3's
# bucket is empty: node 3's flood must not cost node 1 its requests.
ip netns exec "$TOPO_NS_B" timeout 60 "$prog" listen "$cport" 50 >"$out/listen1" 2>&1 &
lsn=$!
sleep 1
res=$(in_ns "$TOPO_NS_A" timeout 60 "$prog" connect 2 "$cport" 2>&1)
[ "$res" = connected ] || fail "node 1's connect during node 3's flood: $res"
wait "$lsn"
lsn=
grep -qx "accepted node 1 port [0-9]*" "$out/listen1" ||
	fail "node 2 did not accept node 1's connection: $(cat "$out/listen1")"

# scif_user's sizes client from node 1 (RMA, fences, stream) to node 2.
ip netns exec "$TOPO_NS_B" timeout 400 "$user" sizes-server "$hport" 2 >"$out/server" 2>&1 &
srv=$!
start=$SECONDS
in_ns "$TOPO_NS_A" timeout 400 "$user" sizes-client 2 "$hport" 2 >"$out/client" 2>&1
crc=$?
wait "$srv"
src=$?
srv=
echo "scif_user sizes client (node 1) beside the flood: status $crc, server (node 2) $src, $((SECONDS - start)) s"
tail -n 2 "$out/client"
[ "$crc" = 0 ] || { cat "$out/client"; fail "node 1's scif_user client failed beside the flood (status $crc)"; }
[ "$src" = 0 ] || { cat "$out/server"; fail "node 2's scif_user server failed beside the flood (status $src)"; }
kill -0 "$flooder" 2>/dev/null || fail "the flood ended before the honest client: $(cat "$out/flood")"
touch "$out/flood.stop"
wait "$flooder"
st=$?
flooder=
cat "$out/flood"
[ "$st" = 0 ] || fail "the flood ended with status $st (a request taken, or not answered)"
read -r n_sent secs < <(sed -n 's/^flood: \([0-9]*\) sent,.* in \([0-9.]*\) s$/\1 \2/p' "$out/flood")
[ -n "${n_sent:-}" ] || fail "no summary from the flood"
n_lim=$(($(limited) - l0))
# What the bucket lets through: b at once, r a second after that (+1 for
# the second that was begun).
allowed=$((b + r * (${secs%.*} + 1) + 1))
echo "node 3: $n_sent requests in $secs s, $n_lim limited (cm_rate $r, cm_burst $b: at most $allowed let through)"
[ "$n_lim" -le "$n_sent" ] || fail "cm_rate_limited grew by $n_lim, more than node 3's $n_sent requests"
[ $((n_sent - n_lim)) -le "$allowed" ] ||
	fail "$((n_sent - n_lim)) of node 3's requests got past the limit, at most $allowed should"
[ $((n_sent - n_lim)) -ge "$b" ] || fail "only $((n_sent - n_lim)) of node 3's requests got through, the burst is $b"
[ "$n_lim" -ge 20 ] || fail "only $n_lim requests limited: the flood did not outrun cm_rate $r"
logged=$(dmesg | tail -n +"$((dmesg_mark + 1))" | grep -c 'request from node 3 .* refused: over cm_rate') || :
[ "$logged" -ge 1 ] || fail "no kernel log line for the limited requests"
dmesg | tail -n +"$((dmesg_mark + 1))" | grep 'request from node 1 .* over cm_rate' &&
	fail "node 1's requests were limited"
kill "$holder"
wait "$holder" 2>/dev/null
holder=
rm -rf "$out"
echo "ok: node 3's flood limited ($n_lim refused, $logged log lines), node 1's work beside it done"
exit 0
