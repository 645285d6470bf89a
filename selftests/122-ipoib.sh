#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# IPoIB over the scire_ib link (docs/scire_ib.md): sib0 on a veth end in
# init_net, sib1 on the other end in netns $IB_NS, opensm on sib0 with a
# partition file. ib_ipoib attaches to both ports; sib1's interface moves
# into $IB_NS. In datagram mode each interface joins the broadcast group
# (a multicast LID from the SA, attached with ib_attach_mcast) and gets
# its carrier; ping (ARP goes to the broadcast group), 8 MiB over TCP both
# ways with byte count and SHA-256 compared;
# rping -v -V connects by the IPoIB addresses (rdma_cm). The same in
# connected mode (RC QPs set up through ib_cm, MTU 65520). A P_Key child interface of partition
# 0x8001, which both ports are full members of, carries ping; in partition
# 0x8002, which only sib0 is a member of, sib1's child never comes up and
# nothing gets through. Datagrams of 0x8001 to a QP of the default
# partition are refused, counted and trapped (257).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for p in opensm ibstat rping ping; do
	command -v "$p" >/dev/null || skip "$p not installed (opensm, infiniband-diags, rdmacm-utils)"
done
modprobe ib_umad || fail "cannot load ib_umad"
modinfo ib_ipoib >/dev/null 2>&1 || skip "this kernel has no ib_ipoib"

ns=$IB_NS
addr_a=10.92.0.1 addr_b=10.92.0.2
osm_pid='' rcv_pid=''
work=$(mktemp -d)
cleanup()
{
	[ -n "$rcv_pid" ] && kill "$rcv_pid" 2>/dev/null
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	# Its interfaces go with it, in whatever namespace they are.
	modprobe -r ib_ipoib 2>/dev/null
	ib_link_teardown
	rm -rf "$work"
}
trap cleanup EXIT

# rcv_listening NS: the TCP receiver listens on port 5301 (in NS, or here).
rcv_listening()
{
	in_ns "$1" ss -Hltn 'sport = :5301' 2>/dev/null | grep -q .
}

# tcp_both LABEL: 8 MiB of random bytes over TCP from a to b and from b
# to a, byte count and SHA-256 compared. (iperf3's rates are make bench's
# column (g); its own received count may miss the last bytes in flight
# when the client ends the test, so it would not be the check.)
tcp_both()
{
	local dir want got

	want="$(stat -c %s "$work/blob") $(sha256sum <"$work/blob" | cut -d' ' -f1)"
	for dir in ab ba; do
		if [ "$dir" = ab ]; then
			in_ns "$ns" timeout 120 python3 "$(dirname "$0")/scire_tcp.py" sum "$addr_b" >"$work/sum" &
		else
			timeout 120 python3 "$(dirname "$0")/scire_tcp.py" sum "$addr_a" >"$work/sum" &
		fi
		rcv_pid=$!
		# python3's start can take seconds under TCG on a busy host.
		if [ "$dir" = ab ]; then
			wait_for 30 rcv_listening "$ns"
		else
			wait_for 30 rcv_listening ""
		fi || fail "$1: TCP receiver ($dir) did not listen on port 5301"
		if [ "$dir" = ab ]; then
			timeout 120 python3 "$(dirname "$0")/scire_tcp.py" send "$addr_b" "$work/blob"
		else
			in_ns "$ns" timeout 120 python3 "$(dirname "$0")/scire_tcp.py" send "$addr_a" "$work/blob"
		fi || fail "$1: TCP transfer $dir failed"
		wait "$rcv_pid" || fail "$1: TCP receiver ($dir) failed"
		rcv_pid=''
		got=$(cat "$work/sum")
		[ "$got" = "$want" ] || fail "$1: TCP $dir received '$got', sent '$want' (bytes, SHA-256)"
	done
	echo "ok: $1: 8 MiB over TCP both ways, byte count and SHA-256 equal"
}

ib_link_pair
ib_link_up
head -c 8M /dev/urandom >"$work/blob"
ga=$(tr -d : <"/sys/class/infiniband/sib0/node_guid")
# Partition 0x0001 takes both ports, 0x0002 only sib0 (IBA 10.9).
cat >"$work/partitions.conf" <<EOF
Default=0x7fff, ipoib : ALL=full ;
both=0x0001, ipoib : ALL=full ;
aonly=0x0002, ipoib : 0x$ga=full ;
EOF
opensm -g "0x$ga" -P "$work/partitions.conf" -f "$work/opensm.log" \
	>"$work/opensm.out" 2>&1 &
osm_pid=$!
for d in sib0 sib1; do
	wait_for 60 ib_port_is "$d" Active ||
		fail "$d not ACTIVE 60 s after opensm started: $(ibstat "$d"; tail -20 "$work/opensm.log")"
done

modprobe ib_ipoib || fail "cannot load ib_ipoib"
wait_for 10 ipoib_of sib0 >/dev/null && wait_for 10 ipoib_of sib1 >/dev/null ||
	fail "ib_ipoib made no interface for sib0 or sib1: $(ip -br link)"
ia=$(ipoib_of sib0) ib=$(ipoib_of sib1)
ip link set "$ib" netns "$ns" || fail "cannot move $ib into $ns"
ip addr add "$addr_a/24" dev "$ia" && ip link set "$ia" up ||
	fail "cannot bring $ia up"
in_ns "$ns" ip addr add "$addr_b/24" dev "$ib" && in_ns "$ns" ip link set "$ib" up ||
	fail "cannot bring $ib up in $ns"

# --- datagram mode --------------------------------------------------------
wait_for 30 ipoib_carrier "" "$ia" && wait_for 30 ipoib_carrier "$ns" "$ib" ||
	fail "no carrier on $ia or $ib: the broadcast group was not joined: $(ip -br link; tail -20 "$work/opensm.log")"
[ "$(cat "/sys/class/net/$ia/mode")" = datagram ] || fail "$ia is not in datagram mode"
mtu=$(cat "/sys/class/net/$ia/mtu")
[ "$mtu" = 2044 ] || fail "$ia's MTU is $mtu, want 2044 (IB MTU 2048, the broadcast group's)"
echo "ok: ib_ipoib on sib0 ($ia) and sib1 ($ib, in $ns): broadcast group joined, MTU $mtu"
ping -c 5 -i 0.2 -W 5 "$addr_b" >"$work/ping" || fail "datagram mode: no ping $addr_a -> $addr_b:"$'\n'"$(cat "$work/ping")"
in_ns "$ns" ping -c 3 -W 5 -s 2016 "$addr_a" >"$work/ping" ||
	fail "datagram mode: no full-MTU ping $addr_b -> $addr_a:"$'\n'"$(cat "$work/ping")"
echo "ok: datagram mode: ping both ways (ARP over the broadcast group)"
tcp_both "datagram mode"
# rdma_cm resolves IPoIB addresses to the ports' GIDs and LIDs (path
# records from the SA) and connects through ib_cm.
in_ns "$ns" timeout 120 rping -s -a "$addr_b" -C 10 -S 4000 -V >"$work/rping-s" 2>&1 &
rping_pid=$!
# rping listens on rdma_cm port 7174; rdma(8) shows the listening ID.
wait_for 30 cm_listening 7174 || fail "the rping server on $addr_b did not listen: $(cat "$work/rping-s")"
out=$(timeout 60 rping -c -a "$addr_b" -C 10 -S 4000 -v -V 2>&1) ||
	fail "rping -v -V to $addr_b over IPoIB failed:"$'\n'"$(tail -5 <<<"$out")"
wait "$rping_pid" || fail "rping server on $addr_b failed: $(tail -5 "$work/rping-s")"
[ "$(grep -c 'ping data' <<<"$out")" = 10 ] ||
	fail "rping over IPoIB: $(grep -c 'ping data' <<<"$out") of 10 pings verified"
echo "ok: rping -v -V over IPoIB addresses (rdma_cm, ib_cm, SA path records)"

# --- connected mode -------------------------------------------------------
echo connected >"/sys/class/net/$ia/mode" || fail "cannot put $ia in connected mode"
in_ns "$ns" sh -c "echo connected >/sys/class/net/$ib/mode" ||
	fail "cannot put $ib in connected mode"
ip link set "$ia" mtu 65520 && in_ns "$ns" ip link set "$ib" mtu 65520 ||
	fail "connected mode: cannot set MTU 65520"
ping -c 3 -W 5 -s 30000 "$addr_b" >"$work/ping" ||
	fail "connected mode: no 30000-byte ping $addr_a -> $addr_b:"$'\n'"$(cat "$work/ping")"
echo "ok: connected mode: MTU 65520, a 30000-byte ping crosses an RC connection"
tcp_both "connected mode"
echo datagram >"/sys/class/net/$ia/mode"
in_ns "$ns" sh -c "echo datagram >/sys/class/net/$ib/mode"

# --- P_Key child interfaces -----------------------------------------------
for p in 8001 8002; do
	ip link add link "$ia" name "$ia.$p" type ipoib pkey "0x$p" ||
		fail "cannot add $ia.$p"
	in_ns "$ns" ip link add link "$ib" name "$ib.$p" type ipoib pkey "0x$p" ||
		fail "cannot add $ib.$p in $ns"
	ip addr add "10.93.$((p - 8000)).1/24" dev "$ia.$p" && ip link set "$ia.$p" up
	in_ns "$ns" ip addr add "10.93.$((p - 8000)).2/24" dev "$ib.$p" &&
		in_ns "$ns" ip link set "$ib.$p" up
done
wait_for 30 ipoib_carrier "" "$ia.8001" && wait_for 30 ipoib_carrier "$ns" "$ib.8001" ||
	fail "no carrier on the 0x8001 children: $(ip -br link; in_ns "$ns" ip -br link)"
ping -c 3 -W 5 10.93.1.2 >"$work/ping" ||
	fail "partition 0x8001: no ping:"$'\n'"$(cat "$work/ping")"
echo "ok: partition 0x8001 (both ports members): child interfaces up, ping"
wait_for 30 ipoib_carrier "" "$ia.8002" || fail "$ia.8002 has no carrier, though sib0 is a member"
ipoib_carrier "$ns" "$ib.8002" && fail "$ib.8002 has a carrier, though sib1 is no member of 0x8002"
ping -c 2 -W 2 10.93.2.2 >/dev/null 2>&1 && fail "partition 0x8002 reached sib1, which is not a member"
echo "ok: partition 0x8002 (sib0 only): sib1's child stays down, nothing gets through"

# --- P_Keys per QP ------------------------------------------------------------
# Both ports hold 0x8001, but sib0's parent interface's UD QP is of the
# default partition: datagrams from sib1 with P_Key 0x8001 to that QP are
# refused, counted in sib0's P_KeyViolations and trapped to opensm (trap
# 257, IBA 14.2.5.1). The 0x8001 ping above crossed with 0x8001 in its BTHs
# to QPs of that partition.
if command -v smpquery >/dev/null && python3 -c 'import pyverbs' 2>/dev/null; then
	pviol()
	{
		smpquery -C sib0 -D portinfo 0 | sed -n 's/^PkeyViolations:\.*//p'
	}
	idx=$(pkey_index_of sib1 0x8001) ||
		fail "sib1's P_Key table has no 0x8001: $(cat /sys/class/infiniband/sib1/ports/1/pkeys/*)"
	qpn=$((16#$(cut -d: -f2-4 "/sys/class/net/$ia/address" | tr -d :)))
	la=$(ibstat sib0 | sed -n 's/.*Base lid: //p')
	v0=$(pviol) || fail "cannot read sib0's PortInfo"
	n=20
	python3 "$(dirname "$0")/scire_ud_send.py" sib1 "$la" "$qpn" 0xb1b "$n" --pkey-index "$idx" ||
		fail "the 0x8001 sender failed"
	wait_value 10 -ge $((v0 + n)) pviol ||
		fail "P_KeyViolations of sib0 went from $v0 to $(pviol), want +$n for $n sends of P_Key 0x8001 to QP $qpn (P_Key 0xffff)"
	wait_for 10 grep -q "num:257 .* from LID:$la " "$work/opensm.log" ||
		fail "opensm's log has no trap 257 from LID $la:"$'\n'"$(grep -i -e notice -e trap "$work/opensm.log" | tail)"
	ping -c 1 -W 5 10.93.1.2 >/dev/null || fail "partition 0x8001: no ping after the refused datagrams"
	echo "ok: P_Key per QP: $n datagrams of 0x8001 to sib0's default-partition QP $qpn refused (P_KeyViolations $v0 -> $(pviol)), opensm logged trap 257"
fi
exit 0
