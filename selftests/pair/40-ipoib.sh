#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# InfiniBand between two kernels (scripts/vm --pair, scire on both hosts):
# each host puts a scire_ib port "sib" on eth0 (MTU 9000: IB MTU 4096) in
# place of its RoCE device (a netdev carries one scire device), which
# learns the other host as its neighbour from its HELLOs; opensm
# on host a brings both ports ACTIVE; ib_ipoib joins the broadcast group
# on both; then ping both ways and iperf3 TCP both ways in datagram mode,
# and a 30000-byte ping in connected mode (MTU 65520, RC through ib_cm).
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
# Both hosts decide alike, or one would wait for the other in vain.
[ "${SCIRE_DEV_KIND:-}" = scire ] && [ "${SCIRE_PEER_DEV_KIND:-scire}" = scire ] ||
	skip "scire_ib needs scire on both hosts (devices: ${SCIRE_DEV_KIND:-} and ${SCIRE_PEER_DEV_KIND:-})"
for p in opensm ibstat iperf3; do
	command -v "$p" >/dev/null || skip "$p not installed"
done
modprobe ib_umad || fail "cannot load ib_umad"

roce=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
me=$([ "$SCIRE_HOST" = a ] && echo 1 || echo 2)
peer_ip=10.94.0.$((3 - me))
osm_pid=''
work=$(mktemp -d)
cleanup()
{
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	modprobe -r ib_ipoib 2>/dev/null
	rdma link delete sib 2>/dev/null
	[ -z "$roce" ] || rdma link show "$roce/1" >/dev/null 2>&1 ||
		rdma link add "$roce" type scire netdev eth0
	rm -rf "$work"
}
trap cleanup EXIT
pair_sync start 300 || fail "the other host never started"

[ -z "$roce" ] || rdma link delete "$roce" || fail "cannot delete $roce from eth0"
rdma link add sib type scire_ib netdev eth0 || fail "rdma link add sib type scire_ib netdev eth0 failed"
# No neighbour configured: the port learns the other host from its HELLOs.
wait_for 20 bash -c "ibstat sib | grep -Eq 'State: (Initializing|Armed|Active)'" ||
	fail "sib did not come up: $(ibstat sib; cat /sys/class/infiniband/sib/ports/1/scire_ib_peer)"
learned=$(cat /sys/class/infiniband/sib/ports/1/scire_ib_peer)
[ "$learned" = "$SCIRE_PEER" ] || fail "sib learned neighbour '$learned', want $SCIRE_PEER"
pair_sync link-up 120 || fail "the other host's port never came up"
if [ "$SCIRE_HOST" = a ]; then
	opensm -g "0x$(tr -d : </sys/class/infiniband/sib/node_guid)" -f "$work/opensm.log" \
		>"$work/opensm.out" 2>&1 &
	osm_pid=$!
fi
wait_for 90 ib_port_is sib Active ||
	fail "sib not ACTIVE 90 s after the link came up: $(ibstat sib; [ -z "$osm_pid" ] || tail -20 "$work/opensm.log")"
echo "host $SCIRE_HOST: sib ACTIVE, LID $(ibstat sib | sed -n 's/^[[:space:]]*Base lid: //p')"

modprobe ib_ipoib || fail "cannot load ib_ipoib"
wait_for 10 ipoib_of sib >/dev/null || fail "ib_ipoib made no interface for sib: $(ip -br link)"
ifc=$(ipoib_of sib)
ip addr add "10.94.0.$me/24" dev "$ifc" && ip link set "$ifc" up || fail "cannot bring $ifc up"
wait_for 60 ipoib_carrier "" "$ifc" ||
	fail "$ifc has no carrier: the broadcast group was not joined"
pair_sync ipoib-up 120 || fail "the other host's IPoIB never came up"
ping -c 5 -i 0.2 -W 5 "$peer_ip" >"$work/ping" ||
	fail "datagram mode: no ping to $peer_ip:"$'\n'"$(cat "$work/ping")"
echo "ok: host $SCIRE_HOST: $ifc (datagram mode, MTU $(cat "/sys/class/net/$ifc/mtu")) pings $peer_ip"

failed=0
pair_duo "IPoIB iperf3 a->b" b iperf3 -s -1 -B 10.94.0.2 -- \
	iperf3 -c 10.94.0.2 -n 8M || failed=$((failed + 1))
pair_duo "IPoIB iperf3 b->a" b iperf3 -s -1 -B 10.94.0.2 -- \
	iperf3 -c 10.94.0.2 -n 8M -R || failed=$((failed + 1))

echo connected >"/sys/class/net/$ifc/mode" && ip link set "$ifc" mtu 65520 ||
	fail "cannot put $ifc in connected mode with MTU 65520"
pair_sync connected 120 || fail "the other host never switched to connected mode"
ping -c 3 -W 5 -s 30000 "$peer_ip" >"$work/ping" ||
	{ echo "connected mode: no 30000-byte ping to $peer_ip:"; sed 's/^/    /' "$work/ping"; failed=$((failed + 1)); }
pair_sync finished 300
[ "$failed" = 0 ] || fail "$failed of the IPoIB runs failed on host $SCIRE_HOST"
echo "ok: host $SCIRE_HOST: iperf3 both ways in datagram mode, a 30000-byte ping in connected mode"
exit 0
