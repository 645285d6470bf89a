#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# InfiniBand between two kernels (scripts/vm --pair, scire on both hosts):
# each host puts a scire_ib port "sib" on eth0 (MTU 9000: IB MTU 4096) in
# place of its RoCE device (a netdev carries one scire device), which
# learns the other host as its neighbour from its HELLOs; opensm
# on host a brings both ports ACTIVE. Then, each host looking at the
# other: ibstat (Active, LinkUp, a LID of its own, a's SM LID),
# ibnetdiscover (two CAs, both node GUIDs), smpquery nodeinfo and
# portinfo of the peer's LID (its node GUID, its LID, the SM's LID),
# saquery NodeRecords (both nodes), perfquery of the peer's LID before
# and after the verbs runs (its packet and data counters grew by at
# least what those runs sent). Verbs over LIDs, no GID:
# ibv_rc_pingpong -c (server a), ibv_ud_pingpong -c (server b),
# ib_write_bw (server a) and ib_send_lat (server b) without -x; each
# end must name the peer's LID as the remote address. IPoIB: ib_ipoib
# joins the broadcast group on both; ping both ways and iperf3 TCP both
# ways in datagram mode, a 30000-byte ping in connected mode (MTU
# 65520, RC through ib_cm). Last the SM moves: opensm stops on a and starts on b, which
# logs SUBNET UP and no error; both ports stay ACTIVE with b's LID as
# their SM LID (whose NodeInfo is b's) and their LIDs unchanged, IPoIB
# joins its broadcast group again in the new SA (a trusted saquery of
# its MCMemberRecords lists both ports) and pings again; opensm
# restarted on b does the same. Unloaded, ib_ipoib leaves every group
# (the SA lists neither port) before the SM stops.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
# Both hosts decide alike, or one would wait for the other in vain.
[ "${SCIRE_DEV_KIND:-}" = scire ] && [ "${SCIRE_PEER_DEV_KIND:-scire}" = scire ] ||
	skip "scire_ib needs scire on both hosts (devices: ${SCIRE_DEV_KIND:-} and ${SCIRE_PEER_DEV_KIND:-})"
for p in opensm ibstat ibnetdiscover smpquery saquery perfquery iperf3 python3 \
	ibv_rc_pingpong ibv_ud_pingpong ib_write_bw ib_send_lat; do
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
	# IPoIB first: its multicast leaves want a live SA (below).
	modprobe -r ib_ipoib 2>/dev/null
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
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

failed=0
bad()
{
	echo "FAILED on host $SCIRE_HOST: $*"
	failed=$((failed + 1))
}
# ib_field NAME [TEXT]: the value of "NAME: value" in TEXT (ibstat sib).
ib_field()
{
	sed -n "s/^[[:space:]]*$1: //p" <<<"${2:-$(ibstat sib)}"
}
# dotted NAME TEXT: the value of smpquery/perfquery's "NAME:.....value".
dotted()
{
	sed -n "s/^$1:\.*//p" <<<"$2"
}
lid=$(ib_field 'Base lid')
guid=0x$(tr -d : </sys/class/infiniband/sib/node_guid)
other=$([ "$SCIRE_HOST" = a ] && echo b || echo a)
# The port GID as saquery prints it (inet_ntop: zeros compressed).
gid=$(python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address(sys.argv[1]))' \
	"$(cat /sys/class/infiniband/sib/ports/1/gids/0)") || fail "no GID 0 on sib"
echo "$lid $guid $gid" >"$SCIRE_SHARED/${0##*/}.ids.$SCIRE_HOST"
pair_sync ids 120 || fail "the other host never wrote its LID and GUID"
read -r peer_lid peer_guid peer_gid <"$SCIRE_SHARED/${0##*/}.ids.$other"
peer_hex=$(printf %x "$peer_lid")
if [ "$SCIRE_HOST" = a ]; then
	lid_a=$lid lid_b=$peer_lid
else
	lid_a=$peer_lid lid_b=$lid
fi

# --- the management tools, each host at the other ------------------------------
t0=$SECONDS
st=$(ibstat sib)
for want in 'State=Active' 'Physical state=LinkUp' 'Link layer=InfiniBand' "SM lid=$lid_a"; do
	[ "$(ib_field "${want%%=*}" "$st")" = "${want#*=}" ] ||
		bad "ibstat: ${want%%=*} is '$(ib_field "${want%%=*}" "$st")', want '${want#*=}'"
done
if [ "$lid" = 0 ] || [ "$lid" = "$peer_lid" ]; then
	bad "ibstat: LID $lid here, $peer_lid on the peer: want two LIDs, neither 0"
fi
topo=$(ibnetdiscover -C sib 2>&1) || bad "ibnetdiscover failed"
[ "$(grep -c '^Ca' <<<"$topo")" = 2 ] || bad "ibnetdiscover did not list two CAs"
# ibnetdiscover prints GUIDs without leading zeros (caguid=0x88c2d...).
for g in "$guid" "$peer_guid"; do
	u=${g#0x}
	grep -q "caguid=0x${u#"${u%%[!0]*}"}\$" <<<"$topo" ||
		bad "ibnetdiscover lacks node GUID $g"
done
ni=$(smpquery -C sib nodeinfo "$peer_lid" 2>&1) || bad "smpquery nodeinfo $peer_lid failed"
[ "$(dotted Guid "$ni")" = "$peer_guid" ] ||
	bad "smpquery nodeinfo $peer_lid: Guid '$(dotted Guid "$ni")', want the peer's $peer_guid"
pi=$(smpquery -C sib portinfo "$peer_lid" 2>&1) || bad "smpquery portinfo $peer_lid failed"
for want in "Lid=$peer_lid" "SMLid=$lid_a" LinkState=Active; do
	[ "$(dotted "${want%%=*}" "$pi")" = "${want#*=}" ] ||
		bad "smpquery portinfo $peer_lid: ${want%%=*} '$(dotted "${want%%=*}" "$pi")', want '${want#*=}'"
done
sa=$(saquery -C sib -N 2>&1) || bad "saquery -N failed"
for g in "$guid" "$peer_guid"; do
	grep -q "node_guid\.*$g\$" <<<"$sa" || bad "saquery's NodeRecords lack node GUID $g"
done
for l in "$lid" "$peer_lid"; do
	grep -Eq "^[[:space:]]*lid\.+($l|0x0*$(printf %x "$l"))\$" <<<"$sa" ||
		bad "saquery's NodeRecords lack LID $l"
done
pq0=$(perfquery -C sib "$peer_lid" 2>&1) || bad "perfquery $peer_lid failed"
if [ "$failed" = 0 ]; then
	echo "ok: host $SCIRE_HOST: ibstat, ibnetdiscover, smpquery, saquery and perfquery agree: LIDs $lid_a (a, the SM) and $lid_b (b) ($((SECONDS - t0)) s)"
else
	printf '%s\n' "--- ibstat" "$st" "--- ibnetdiscover" "$topo" "--- smpquery nodeinfo" "$ni" \
		"--- smpquery portinfo" "$pi" "--- saquery -N" "$sa" | sed 's/^/    /'
fi

# --- verbs over LIDs: no -g, no -x ------------------------------------------------
# lid_duo NAME SERVER-HOST CMD...: pair_duo with CMD as server and CMD
# PEER as client; this host's half must name the peer's LID as the
# remote address.
lid_duo()
{
	local name=$1 server=$2 rc=0

	shift 2
	pair_duo "$name" "$server" "$@" -- "$@" "$SCIRE_PEER" || rc=1
	if ! grep -Eiq "remote address: +LID 0x0*${peer_hex}[ ,]" <<<"$PAIR_DUO_OUTPUT"; then
		echo "$name on $SCIRE_HOST: the peer's LID $peer_lid is not the remote address:"
		grep -i 'address' <<<"$PAIR_DUO_OUTPUT" | sed 's/^/    /'
		rc=1
	fi
	return $rc
}
# A pingpong's two ends both send and receive: one run each covers both
# kernels' requester and responder; the servers alternate.
t0=$SECONDS
lid_duo "ibv_rc_pingpong over LIDs" a ibv_rc_pingpong -d sib -c -n 200 -s 4096 ||
	failed=$((failed + 1))
lid_duo "ibv_ud_pingpong over LIDs" b ibv_ud_pingpong -d sib -c -n 200 -s 2048 ||
	failed=$((failed + 1))
lid_duo "ib_write_bw over LIDs" a ib_write_bw -d sib -F -s 65536 -n 100 || failed=$((failed + 1))
lid_duo "ib_send_lat over LIDs" b ib_send_lat -d sib -F -s 2 -n 200 || failed=$((failed + 1))
echo "host $SCIRE_HOST: verbs over LIDs: $((SECONDS - t0)) s"

# The peer sent and received at least the pingpongs' messages: 200 of
# 4 KiB and 200 of 2 KiB each way (PortXmitData and PortRcvData count
# 4-byte words).
pq1=$(perfquery -C sib "$peer_lid" 2>&1) || bad "perfquery $peer_lid after the verbs runs failed"
for want in PortXmitPkts=400 PortRcvPkts=400 PortXmitData=307200 PortRcvData=307200; do
	c=${want%%=*} v0=$(dotted "${want%%=*}" "$pq0") v1=$(dotted "${want%%=*}" "$pq1")
	if ! [ "${v0:-x}" -ge 0 ] 2>/dev/null || ! [ "${v1:-x}" -ge 0 ] 2>/dev/null; then
		bad "perfquery $peer_lid: no $c (before: '$v0', after: '$v1')"
	elif [ $((v1 - v0)) -lt "${want#*=}" ]; then
		bad "perfquery $peer_lid: $c grew by $((v1 - v0)) ($v0 -> $v1) across the verbs runs, want at least ${want#*=}"
	fi
done
echo "host $SCIRE_HOST: the peer's counters before and after the verbs runs:" \
	"$(grep -E '^Port(Xmit|Rcv)(Pkts|Data)' <<<"$pq0" | tr -d . | tr '\n' ' ')->" \
	"$(grep -E '^Port(Xmit|Rcv)(Pkts|Data)' <<<"$pq1" | tr -d . | tr '\n' ' ')"

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

pair_duo "IPoIB iperf3 a->b" b iperf3 -s -1 -B 10.94.0.2 -- \
	iperf3 -c 10.94.0.2 -n 8M || failed=$((failed + 1))
pair_duo "IPoIB iperf3 b->a" b iperf3 -s -1 -B 10.94.0.2 -- \
	iperf3 -c 10.94.0.2 -n 8M -R || failed=$((failed + 1))

echo connected >"/sys/class/net/$ifc/mode" && ip link set "$ifc" mtu 65520 ||
	fail "cannot put $ifc in connected mode with MTU 65520"
pair_sync connected 120 || fail "the other host never switched to connected mode"
ping -c 3 -W 5 -s 30000 "$peer_ip" >"$work/ping" ||
	{ echo "connected mode: no 30000-byte ping to $peer_ip:"; sed 's/^/    /' "$work/ping"; failed=$((failed + 1)); }
echo "host $SCIRE_HOST: iperf3 both ways in datagram mode, a 30000-byte ping in connected mode done"

# --- the SM moves from a to b ---------------------------------------------------
# sm_is LID: is sib ACTIVE with LID as its SM's?
sm_is()
{
	local st

	st=$(ibstat sib)
	[ "$(ib_field State "$st")" = Active ] && [ "$(ib_field 'SM lid' "$st")" = "$1" ]
}
# ipoib_joined: both ports are members of IPoIB's broadcast group (of
# the default partition) in the SA's MCMemberRecords. The query is a
# trusted one (opensm's default SM_Key, 1): an untrusted one is answered
# with the groups, their PortGIDs zeroed.
ipoib_joined()
{
	local m

	m=$(saquery -C sib --smkey 1 -m 2>/dev/null | awk '/MGID\.+/ { sub(/.*MGID\.+/, ""); g = $0 }
		/PortGid\.+/ { sub(/.*PortGid\.+/, ""); print g, $0 }')
	grep -qx "ff12:401b:ffff::ffff:ffff $gid" <<<"$m" &&
		grep -qx "ff12:401b:ffff::ffff:ffff $peer_gid" <<<"$m"
}
# sm_check WHAT SECS: within SECS, sib ACTIVE with b's LID as its SM's,
# that LID's NodeInfo b's, this port's LID unchanged; within 30 s more,
# the new SM's SA has both ports in IPoIB's broadcast group (IPoIB
# joined again, on the new SM's client reregistration); then IPoIB
# pings.
sm_check()
{
	local what=$1 t0=$SECONDS st ni g

	if ! wait_for "$2" sm_is "$lid_b"; then
		st=$(ibstat sib)
		bad "$what: not ACTIVE with SM lid $lid_b (b's) within $2 s: State $(ib_field State "$st"), SM lid $(ib_field 'SM lid' "$st")"
		return
	fi
	echo "host $SCIRE_HOST: $what: ACTIVE, SM lid $lid_b after $((SECONDS - t0)) s"
	[ "$(ib_field 'Base lid')" = "$lid" ] || bad "$what: this port's LID went from $lid to $(ib_field 'Base lid')"
	ni=$(smpquery -C sib nodeinfo "$lid_b" 2>&1)
	g=$([ "$SCIRE_HOST" = b ] && echo "$guid" || echo "$peer_guid")
	[ "$(dotted Guid "$ni")" = "$g" ] ||
		bad "$what: NodeInfo of the SM's LID $lid_b: Guid '$(dotted Guid "$ni")', want b's $g"
	t0=$SECONDS
	if wait_for 30 ipoib_joined; then
		echo "host $SCIRE_HOST: $what: both ports in the SA's IPoIB broadcast group after $((SECONDS - t0)) s"
	else
		bad "$what: the SA's MCMemberRecords lack $gid or $peer_gid in ff12:401b:ffff::ffff:ffff after 30 s:"$'\n'"$(saquery -C sib --smkey 1 -m 2>&1 | head -40)"
	fi
	t0=$SECONDS
	if wait_for 60 ping -c 1 -W 2 "$peer_ip" && ping -c 3 -i 0.2 -W 5 "$peer_ip" >"$work/ping"; then
		echo "host $SCIRE_HOST: $what: IPoIB pings $peer_ip again after $((SECONDS - t0)) s"
	else
		bad "$what: no IPoIB ping to $peer_ip within 60 s: $(cat "$work/ping" 2>/dev/null)"
	fi
}
if [ -n "$osm_pid" ]; then
	kill "$osm_pid" && wait "$osm_pid" 2>/dev/null
	osm_pid=''
fi
pair_sync sm-stopped 120 || fail "the other host never got here"
t_sm=$SECONDS
# sm_up LOG: opensm (-d 2: its log flushed line by line) logged SUBNET UP
# in LOG within 60 s, and no error.
sm_up()
{
	local t0=$SECONDS

	if ! wait_for 60 grep -q 'SUBNET UP' "$1"; then
		bad "opensm on b: no SUBNET UP in 60 s:"$'\n'"$(tail -20 "$1")"
	elif grep -q ' ERR ' "$1"; then
		bad "opensm on b logged errors:"$'\n'"$(grep ' ERR ' "$1" | head -20)"
	else
		echo "host b: opensm: SUBNET UP after $((SECONDS - t0)) s, no errors logged"
	fi
}
if [ "$SCIRE_HOST" = b ]; then
	opensm -g "$guid" -d 2 -f "$work/opensm-b.log" >"$work/opensm-b.out" 2>&1 &
	osm_pid=$!
	sm_up "$work/opensm-b.log"
fi
sm_check "opensm moved to b" 90
pair_sync sm-moved 180 || fail "the other host never got here"
# The same SM restarted sweeps the subnet again to the same result.
if [ "$SCIRE_HOST" = b ]; then
	kill "$osm_pid" && wait "$osm_pid" 2>/dev/null
	opensm -g "$guid" -d 2 -f "$work/opensm-b2.log" >"$work/opensm-b2.out" 2>&1 &
	osm_pid=$!
	sm_up "$work/opensm-b2.log"
fi
pair_sync sm-restarted 120 || fail "the other host never got here"
sm_check "opensm restarted on b" 30
# Both hosts check before either leaves: a host that went on would take
# its port out of the broadcast group under the other's check.
pair_sync sm-rechecked 180 || fail "the other host never got here"
echo "host $SCIRE_HOST: the SM's move and restart: $((SECONDS - t_sm)) s"

# --- leaving --------------------------------------------------------------------
# ib_ipoib unloaded leaves its multicast groups through the SA: both
# ports must drop out of its MCMemberRecords. The SM stops only then:
# a leave the SA does not answer holds the core's multicast port
# reference until it times out, and deleting sib waited for that in
# mcast_remove_one (15 to 25 s under TCG).
ipoib_left()
{
	local m

	m=$(saquery -C sib --smkey 1 -m 2>/dev/null) || return 1
	! grep -Eq "PortGid\.+($gid|$peer_gid)\$" <<<"$m"
}
# IPoIB's connected mode has an ordering bug of its own:
# ipoib_ndo_uninit() destroys the CQs (ipoib_ib_dev_cleanup()) before it
# destroys priv->wq, where the CM TX reaper may still be waiting, up to
# 5 s, for the last sends of a connection (ipoib_cm_tx_destroy()): a send
# to a peer whose QP is gone completes only after the local ACK timeout.
# The CQ then cannot be destroyed ("Destroy of kernel CQ shouldn't fail",
# "timing out; N sends not completed") and the QP leaks. Hardware hits it
# the same way. So each host takes ib0 down (which flushes the paths and
# so queues every TX connection for the reaper) and unloads ib_ipoib only
# once no RC QP of IPoIB is left; and one host at a time, a first.
ipoib_rc_gone()
{
	! rdma res show qp link sib/1 2>/dev/null | grep -q 'type RC .*comm \[ib_ipoib\]'
}
ipoib_unload()
{
	local t0=$SECONDS n

	n=$(rdma res show qp link sib/1 2>/dev/null | grep -c 'type RC .*comm \[ib_ipoib\]')
	ip link set ib0 down || bad "cannot take ib0 down"
	if wait_for 20 ipoib_rc_gone; then
		echo "host $SCIRE_HOST: IPoIB's $n RC QPs gone $((SECONDS - t0)) s after ib0 went down"
	else
		bad "ib0 down for 20 s, yet IPoIB still has RC QPs:"$'\n'"$(rdma res show qp link sib/1 2>&1)"
	fi
	modprobe -r ib_ipoib || bad "cannot unload ib_ipoib"
}
[ "$SCIRE_HOST" = a ] || pair_sync ipoib-a-unloaded 120 || fail "host a never unloaded ib_ipoib"
ipoib_unload
[ "$SCIRE_HOST" = b ] || pair_sync ipoib-a-unloaded 120 || fail "host b never got here"
pair_sync ipoib-unloaded 120 || fail "the other host never unloaded ib_ipoib"
wait_for 20 ipoib_left ||
	bad "ib_ipoib unloaded on both hosts, yet the SA still lists members after 20 s:"$'\n'"$(saquery -C sib --smkey 1 -m 2>&1 | grep -B2 -A1 PortGid | head -40)"
pair_sync finished 300
[ "$failed" = 0 ] || fail "$failed of the checks and runs above failed on host $SCIRE_HOST"
exit 0
