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
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/scif
param=/sys/module/scire_scif/parameters/max_pending_node
prog=$(need_prog scif_peer_check) || exit 1
scif_need
[ -w "$param" ] || fail "$param missing"
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cm_port=$(cat /sys/module/scire_scif/parameters/cm_port)
port=2400 nports=3 per_port=6 cap=12
old_cap=$(cat "$param")
pids=()

cleanup()
{
	[ -n "${holder:-}" ] && kill "$holder" 2>/dev/null
	[ -n "${lsn:-}" ] && kill "$lsn" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	echo "$old_cap" >"$param"
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
rm -rf "$out"
echo "ok: node 1 held at most $cap queued requests on node 2; its count came back"
exit 0
