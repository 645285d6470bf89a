#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# An InfiniBand subnet of N VMs (scripts/vm --hosts N) through one
# scire-ibswitch: 124-ib-switch.sh builds the same fabric from network
# namespaces of one kernel; here every CA is another kernel. A host's
# scire RoCE device on eth0 makes way and is added again at the end (a
# netdev carries one scire device; rxe stays where 20 put it). Host a runs
# the switch on its eth0 address (UDP 4793) beside its own scire_ib port
# on the same eth0; every host adds ibsw0 (type scire_ib) on eth0 and
# attaches it by writing the switch's ADDR:PORT to its scire_ib_peer, in
# host order, so that host k is on switch port k. opensm on host a makes
# every port ACTIVE; ibnetdiscover finds one switch and N CAs, each on
# its port; ibtracert and saquery path records between every two other
# hosts; ibv_rc_pingpong -c, ibv_ud_pingpong -c and ib_write_bw over LIDs
# (no GRH) between every two hosts; IPoIB pings between every two hosts
# in datagram mode, rping (rdma_cm) by IPoIB address between every two
# hosts with every ping's data checked, then in connected mode (MTU 65520) pings again and
# 1 MiB over TCP from the last host to a with its SHA-256 compared;
# ibqueryerrors finds no errors on the switch's ports; then the last
# host's eth0 goes down: its switch port goes down, opensm hears trap
# 128, two other hosts (if there are) keep talking; eth0 back up, the
# host is ACTIVE again and reaches a over IPoIB.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

if [ -z "${SCIRE_HOST:-}" ] || [ -z "${SCIRE_HOSTS:-}" ]; then
	skip "not on VM hosts (scripts/vm --hosts N)"
fi
for p in opensm ibstat ibnetdiscover ibtracert saquery ibqueryerrors ibv_rc_pingpong \
	ibv_ud_pingpong ping rping; do
	command -v "$p" >/dev/null || skip "$p not installed (opensm, infiniband-diags, ibverbs-utils, rdmacm-utils)"
done
switch=$(command -v scire-ibswitch || echo "$SCIRE_BUILD/tools/ibswitch/scire-ibswitch")
[ -x "$switch" ] || skip "no scire-ibswitch (make)"
read -ra hosts <<<"$(hosts_names)"
n=${#hosts[@]}
me=$SCIRE_HOST
a_addr=$(host_addr a)
sw_port=4793
dev=ibsw0
work=$(mktemp -d)
sw_pid='' osm_pid=''
# A netdev carries one scire device: the RoCE one on eth0 (scire0) makes
# way for the test's scire_ib port and comes back after it.
# (scripts/vm names it scire0; rxe0 is rdma_rxe's.)
roce=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
[[ $roce == scire* ]] || roce=
cleanup()
{
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	modprobe -r ib_ipoib 2>/dev/null
	rdma link delete "$dev" 2>/dev/null
	[ -z "$roce" ] || rdma link add "$roce" type scire netdev eth0 ||
		echo "cleanup: rdma link add $roce type scire netdev eth0 failed"
	[ -n "$sw_pid" ] && kill "$sw_pid" 2>/dev/null && wait "$sw_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
modprobe ib_umad || fail "cannot load ib_umad"
hosts_sync start 300 || fail "the other hosts never started"

lid() { ibstat "$dev" | sed -n 's/^[[:space:]]*Base lid: //p'; }
ipoib_ip() { echo "10.95.0.$(host_index "$1")"; }

# --- the fabric ---------------------------------------------------------------
if [ -n "$roce" ]; then
	rdma link delete "$roce" || fail "rdma link delete $roce (the RoCE device on eth0) failed"
fi
rdma link add "$dev" type scire_ib netdev eth0 || fail "rdma link add $dev type scire_ib netdev eth0 failed"
if [ "$me" = a ]; then
	"$switch" --listen "$a_addr:$sw_port" --ports "$n" --verbose 2>"$work/switch.log" &
	sw_pid=$!
	wait_for 10 grep -q "ports at" "$work/switch.log" ||
		fail "scire-ibswitch did not start: $(cat "$work/switch.log")"
fi
hosts_sync switch-up 120 || fail "the switch or another host's $dev did not come up"
# One host at a time, in host order: host k gets switch port k.
for h in "${hosts[@]}"; do
	if [ "$h" = "$me" ]; then
		echo "$a_addr:$sw_port" >"/sys/class/infiniband/$dev/ports/1/scire_ib_peer" ||
			fail "cannot write $a_addr:$sw_port to $dev's scire_ib_peer"
		wait_for 20 ib_port_is "$dev" Initializing ||
			fail "$dev is $(ib_state "$dev") with the switch as its neighbour"
	fi
	hosts_sync "attached-$h" 120 || fail "host $h did not attach to the switch"
done
echo "host $me: $dev attached to the switch at $a_addr:$sw_port, INIT"

guid=0x$(tr -d : <"/sys/class/infiniband/$dev/node_guid")
if [ "$me" = a ]; then
	opensm -g "$guid" -p 8 -f "$work/opensm.log" >"$work/opensm.out" 2>&1 &
	osm_pid=$!
fi
wait_for 120 ib_port_is "$dev" Active ||
	fail "$dev not ACTIVE 120 s after opensm started: $(ibstat "$dev")$([ "$me" = a ] && tail -30 "$work/opensm.log")"
lid >"$SCIRE_SHARED/ibsw.lid.$me"
echo "$guid" >"$SCIRE_SHARED/ibsw.guid.$me"
hosts_sync active 180 || fail "another host's port did not become ACTIVE"
declare -A lids
for h in "${hosts[@]}"; do
	lids[$h]=$(cat "$SCIRE_SHARED/ibsw.lid.$h")
done
echo "host $me: ACTIVE, LID $(lid); LIDs in host order: ${lids[*]}"

failed=0
if [ "$me" = a ]; then
	topo=$(ibnetdiscover -C "$dev" 2>&1) || fail "ibnetdiscover failed:"$'\n'"$topo"
	[ "$(grep -c '^Switch' <<<"$topo")" = 1 ] && [ "$(grep -c '^Ca' <<<"$topo")" = "$n" ] ||
		fail "ibnetdiscover did not find one switch and $n CAs:"$'\n'"$topo"
	# Each host's CA on the switch port of its place in host order.
	for h in "${hosts[@]}"; do
		u=$(sed 's/^0x0*//' <"$SCIRE_SHARED/ibsw.guid.$h")
		p=$(host_index "$h")
		grep -q "^\[$p\][[:space:]]*\"H-0*$u\"\[1\]" <<<"$topo" ||
			fail "ibnetdiscover: host $h's CA is not on switch port $p:"$'\n'"$topo"
	done
	echo "ok: ibnetdiscover: one switch, $n CAs (one per VM), each on its port"
	for s in "${hosts[@]}"; do
		for d in "${hosts[@]}"; do
			[ "$s" = "$d" ] && continue
			tr_out=$(ibtracert -C "$dev" "${lids[$s]}" "${lids[$d]}" 2>&1) ||
				fail "ibtracert ${lids[$s]} ${lids[$d]} ($s to $d) failed:"$'\n'"$tr_out"
			grep -q switch <<<"$tr_out" ||
				fail "ibtracert $s to $d passes no switch:"$'\n'"$tr_out"
			sa=$(saquery -C "$dev" --src-to-dst "${lids[$s]}:${lids[$d]}" 2>&1) ||
				fail "saquery path $s to $d failed:"$'\n'"$sa"
		done
	done
	echo "ok: ibtracert and saquery path records between every two hosts, through the switch"
	ibqueryerrors -C "$dev" -k -K >/dev/null 2>&1
fi
hosts_sync discovered 300 || fail "host a's discovery did not finish"

# --- verbs over LIDs, between every two hosts -----------------------------------
# Each host serves some pairs and is a client in others, as 20 does: one
# "SERVER CLIENT" line per two hosts.
duos=()
for ((i = 0; i < n; i++)); do
	for ((j = i + 1; j < n; j++)); do
		if (((i + j) % 2)); then duos+=("${hosts[i]} ${hosts[j]}"); else duos+=("${hosts[j]} ${hosts[i]}"); fi
	done
done
port=18600
for duo in "${duos[@]}"; do
	read -r s c <<<"$duo"
	saddr=$(host_addr "$s")
	port=$((port + 1))
	pp=(-d "$dev" -p "$port" -c -n 50 -s 4096)
	hosts_duo "ibv_rc_pingpong -c over LIDs, $c to $s" "$s" "$c" ibv_rc_pingpong "${pp[@]}" -- \
		ibv_rc_pingpong "${pp[@]}" "$saddr" || failed=$((failed + 1))
	port=$((port + 1))
	pp=(-d "$dev" -p "$port" -c -n 50 -s 2048)
	hosts_duo "ibv_ud_pingpong -c over LIDs, $c to $s" "$s" "$c" ibv_ud_pingpong "${pp[@]}" -- \
		ibv_ud_pingpong "${pp[@]}" "$saddr" || failed=$((failed + 1))
	if command -v ib_write_bw >/dev/null; then
		port=$((port + 1))
		pt=(-d "$dev" -F -p "$port" -s 65536 -n 100)
		hosts_duo "ib_write_bw -s 65536 over LIDs, $c to $s" "$s" "$c" ib_write_bw "${pt[@]}" -- \
			ib_write_bw "${pt[@]}" "$saddr" || failed=$((failed + 1))
	fi
done

# --- IPoIB between every two hosts ---------------------------------------------
modprobe ib_ipoib || fail "cannot load ib_ipoib"
wait_for 10 ipoib_of "$dev" >/dev/null || fail "ib_ipoib made no interface for $dev: $(ip -br link)"
ib_if=$(ipoib_of "$dev")
ip link set "$ib_if" up && ip addr add "$(ipoib_ip "$me")/24" dev "$ib_if" ||
	fail "cannot bring $ib_if up with $(ipoib_ip "$me")"
wait_for 60 ipoib_carrier "" "$ib_if" || fail "$ib_if has no carrier (broadcast group not joined)"
hosts_sync ipoib-up 180 || fail "another host's IPoIB did not come up"
for h in "${hosts[@]}"; do
	[ "$h" = "$me" ] && continue
	if out=$(ping -c 3 -W 5 "$(ipoib_ip "$h")" 2>&1); then
		echo "ok: IPoIB ping $me -> $h: $(grep -o '[0-9]* received' <<<"$out")"
	else
		echo "IPoIB ping $me -> $h failed:"$'\n'"$out"
		failed=$((failed + 1))
	fi
done
hosts_sync pinged 120 || fail "another host did not finish its pings"

# rdma_cm between every two hosts by their IPoIB addresses (address
# resolution over IPoIB's ARP, path records from the SA, ib_cm through
# the switch): rping, every ping's data checked.
for duo in "${duos[@]}"; do
	read -r s c <<<"$duo"
	sip=$(ipoib_ip "$s")
	# Line-buffered: its stderr (the disconnect event) goes into
	# the same output between lines, not inside one.
	if hosts_duo "rping over IPoIB addresses, $c to $s" "$s" "$c" \
		rping -s -a "$sip" -C 10 -S 4000 -V -- \
		stdbuf -oL rping -c -a "$sip" -C 10 -S 4000 -v -V; then
		if [ "$me" = "$c" ]; then
			printf '%s\n' "$PAIR_DUO_OUTPUT" >"$work/rping"
			if why=$(rping_verify "$work/rping" "ping data: " 10 4000); then
				echo "ok: rping -v -V $c to $s by IPoIB address: 10 pings of 4000 bytes verified"
			else
				echo "rping $c to $s: $why"
				failed=$((failed + 1))
			fi
		fi
	else
		failed=$((failed + 1))
	fi
done

if [ "$me" = a ]; then
	qe=$(ibqueryerrors -c -C "$dev" 2>&1)
	if grep -q "^Errors for .*scire-ibswitch" <<<"$qe"; then
		echo "ibqueryerrors finds errors at the switch after the traffic:"$'\n'"$qe"
		failed=$((failed + 1))
	else
		echo "ok: ibqueryerrors finds no errors at the switch's ports"
	fi
fi

# --- IPoIB in connected mode: pings, and 1 MiB over TCP, checked ----------------
last=${hosts[n - 1]}
{ echo connected >"/sys/class/net/$ib_if/mode" && ip link set "$ib_if" mtu 65520; } ||
	fail "cannot switch $ib_if to connected mode with MTU 65520"
hosts_sync cm-up 120 || fail "another host did not switch to connected mode"
for h in "${hosts[@]}"; do
	[ "$h" = "$me" ] && continue
	if out=$(ping -c 2 -W 5 -s 16000 "$(ipoib_ip "$h")" 2>&1); then
		echo "ok: IPoIB connected mode, 16000-byte ping $me -> $h: $(grep -o '[0-9]* received' <<<"$out")"
	else
		echo "IPoIB connected-mode ping $me -> $h failed:"$'\n'"$out"
		failed=$((failed + 1))
	fi
done
hosts_sync cm-pinged 120 || fail "another host did not finish its connected-mode pings"
if [ "$me" = a ]; then
	timeout 120 python3 "$(dirname "$0")/../scire_tcp.py" sum "$(ipoib_ip a)" >"$work/got" 2>&1 &
	rcv_pid=$!
	wait_for 30 tcp_listening 5301 || fail "the TCP receiver on a did not listen"
fi
hosts_sync tcp-ready 60 || fail "host a's TCP receiver is not ready"
if [ "$me" = "$last" ]; then
	head -c 1M /dev/urandom >"$work/blob"
	echo "$(stat -c %s "$work/blob") $(sha256sum <"$work/blob" | cut -d' ' -f1)" >"$SCIRE_SHARED/ibsw.tcp.want"
	timeout 120 python3 "$(dirname "$0")/../scire_tcp.py" send "$(ipoib_ip a)" "$work/blob" || { echo "TCP over IPoIB $last -> a failed"; failed=$((failed + 1)); }
fi
hosts_sync tcp-sent 180 || fail "host $last did not finish sending"
if [ "$me" = a ]; then
	wait "$rcv_pid" || { echo "the TCP receiver on a failed: $(cat "$work/got")"; failed=$((failed + 1)); }
	if [ "$(cat "$work/got")" = "$(cat "$SCIRE_SHARED/ibsw.tcp.want")" ]; then
		echo "ok: IPoIB connected mode: 1 MiB over TCP from $last to a, byte count and SHA-256 equal"
	else
		echo "TCP $last -> a received '$(cat "$work/got")', sent '$(cat "$SCIRE_SHARED/ibsw.tcp.want")'"
		failed=$((failed + 1))
	fi
fi
hosts_sync tcp-done 60 || fail "another host did not finish the TCP transfer"

# --- a cut cable: the last host's eth0 goes down and comes back ----------------
cut=${hosts[n - 1]}
traps0=0
[ "$me" != a ] || traps0=$(grep -c "num:128 " "$work/opensm.log")
hosts_sync cut-ready 60 || fail "another host is not ready for the cut"
if [ "$me" = "$cut" ]; then
	ip link set eth0 down || fail "ip link set eth0 down failed"
	wait_for 15 bash -c "! ibstat $dev | grep -q 'State: Active'" ||
		fail "$dev still ACTIVE 15 s after eth0 went down"
fi
hosts_sync cut 60 || fail "host $cut did not cut its cable"
if [ "$me" = a ]; then
	wait_for 15 grep -q "port $(host_index "$cut") .*link down" "$work/switch.log" ||
		fail "switch port $(host_index "$cut") did not go down with host $cut's eth0:"$'\n'"$(tail -5 "$work/switch.log")"
	wait_value 30 -gt "$traps0" grep -c "num:128 " "$work/opensm.log" ||
		fail "opensm logged no trap 128 for the switch's port $(host_index "$cut")"
	echo "ok: host $cut's eth0 down: its switch port down, trap 128 at opensm"
fi
# The others keep working meanwhile.
if [ "$n" -ge 3 ]; then
	pp=(-d "$dev" -p 18650 -c -n 50 -s 2048)
	hosts_duo "ibv_ud_pingpong -c b to a while host $cut is cut off" a b \
		ibv_ud_pingpong "${pp[@]}" -- ibv_ud_pingpong "${pp[@]}" "$a_addr" ||
		failed=$((failed + 1))
fi
hosts_sync cut-served 120 || fail "another host did not get past the cut"
if [ "$me" = "$cut" ]; then
	ip link set eth0 up || fail "ip link set eth0 up failed"
	wait_for 120 ib_port_is "$dev" Active || fail "$dev not ACTIVE again 120 s after eth0 came up"
	if out=$(ping -c 3 -W 5 "$(ipoib_ip a)" 2>&1); then
		echo "ok: host $cut back: ACTIVE again, IPoIB ping to a: $(grep -o '[0-9]* received' <<<"$out")"
	else
		echo "IPoIB ping $cut -> a after the cable came back failed:"$'\n'"$out"
		failed=$((failed + 1))
	fi
fi
hosts_sync reconnected 180 || fail "host $cut did not come back"

hosts_sync finished 120 || fail "another host did not finish"
[ "$failed" = 0 ] || fail "$failed of the runs above failed on host $me"
echo "ok: host $me: pingpongs over LIDs and IPoIB through the switch of $n VMs"
exit 0
