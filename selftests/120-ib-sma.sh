#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SMA and PMA of the InfiniBand link type (docs/scire_ib.md).
# "rdma link add sib0 type scire_ib netdev X" gives a port with link layer
# InfiniBand, DOWN (Polling) with LID 0 while it has no neighbour; its SMA
# answers a directed-route NodeInfo even so (where libibmad opens a DOWN
# port: rdma-core 44 does, 56 does not). With its neighbour sib1 (lib.sh's
# ib_link_pair) it is INIT, and its SMA answers directed-route SMPs from
# infiniband-diags (NodeInfo, NodeDescription, PortInfo) and refuses bad
# ones with the MAD status IBA names (bad attribute modifier 0x1c, unknown
# attribute 0x0c, an invalid Set 0x1c that changes nothing). opensm on it
# assigns LIDs and becomes its SM
# (LID_CHANGE, SM_CHANGE and PORT_ACTIVE reach user space); with an M_Key
# set by opensm (protect bits 2) SMPs without the key get no answer, are
# counted as violations and trapped to opensm (trap 256), SMPs with it are
# answered, also LID-routed to
# the port's own LID (looped back); the PMA feeds the sysfs counters.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for p in smpquery smpdump ibportstate ibstat opensm; do
	command -v "$p" >/dev/null || skip "$p not installed (infiniband-diags, opensm)"
done
modprobe ib_umad || fail "cannot load ib_umad"

dev=sib0 ifa=$IB_IF_A mkey=0x5c1e000000000001
osm_pid='' aw_pid=''
work=$(mktemp -d)
cleanup()
{
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	[ -n "$aw_pid" ] && kill "$aw_pid" 2>/dev/null && wait "$aw_pid" 2>/dev/null
	ib_link_teardown
	rm -rf "$work"
}
trap cleanup EXIT
ib_link_pair

# field NAME TEXT: the value of smpquery's "NAME:....value" line in TEXT.
field()
{
	sed -n "s/^$1:\.*//p" <<<"$2" | head -n1
}

# --- the port as the verbs and the core see it ------------------------------
st=$(ibstat "$dev") || fail "ibstat $dev failed"
for want in "Link layer: InfiniBand" "State: Down" \
	"Physical state: Polling" "Base lid: 0" "SM lid: 0"; do
	grep -q "$want" <<<"$st" || fail "ibstat $dev lacks '$want':"$'\n'"$st"
done
ibv_devinfo -d "$dev" | grep -q "link_layer:.*InfiniBand" ||
	fail "ibv_devinfo -d $dev does not say link_layer InfiniBand"
guid=0x$(tr -d : <"/sys/class/infiniband/$dev/node_guid")
echo "ok: $dev is an InfiniBand port, DOWN without a neighbour, LID 0, node GUID $guid"

# --- a DOWN port's SMA ---------------------------------------------------------
# libibmad from rdma-core 53 on pairs a device's SMI and GSI ports and takes
# only ports past DOWN (umad_get_smi_gsi_pair_by_ca_name), as it would a
# real HCA's port without a cable: that refusal, and only it, is no failure.
if ni=$(smpquery -C "$dev" -D nodeinfo 0 2>"$work/err"); then
	[ "$(field Guid "$ni")" = "$guid" ] || fail "NodeInfo (DOWN) Guid is not $guid:"$'\n'"$ni"
	echo "ok: a directed-route NodeInfo is answered while the port is DOWN"
elif grep -q "Can't open UMAD port" "$work/err"; then
	echo "ok: this libibmad opens no DOWN port ($(head -n1 "$work/err")); the SMA is checked INIT below"
else
	fail "smpquery nodeinfo on the DOWN port failed: $(cat "$work/err")"
fi

# --- the SMA over directed-route SMPs, the port INIT ---------------------------
ib_link_up
ni=$(smpquery -C "$dev" -D nodeinfo 0) || fail "smpquery nodeinfo failed"
[ "$(field NodeType "$ni")" = "Channel Adapter" ] || fail "NodeInfo is not a CA:"$'\n'"$ni"
[ "$(field Guid "$ni")" = "$guid" ] || fail "NodeInfo Guid is not $guid:"$'\n'"$ni"
[ "$(field PortGuid "$ni")" = "$guid" ] || fail "NodeInfo PortGuid is not $guid"
[ "$(field NumPorts "$ni")" = 1 ] || fail "NodeInfo NumPorts is not 1:"$'\n'"$ni"
[ "$(field LocalPort "$ni")" = 1 ] || fail "NodeInfo LocalPort is not 1:"$'\n'"$ni"
nd=$(smpquery -C "$dev" -D nodedesc 0) || fail "smpquery nodedesc failed"
grep -q "scire $ifa" <<<"$nd" || fail "NodeDescription is not 'scire $ifa': $nd"
pi=$(smpquery -C "$dev" -D portinfo 0) || fail "smpquery portinfo failed"
[ "$(field LinkState "$pi")" = Initialize ] || fail "PortInfo LinkState is not Initialize:"$'\n'"$pi"
[ "$(field PhysLinkState "$pi")" = LinkUp ] || fail "PortInfo PhysLinkState is not LinkUp:"$'\n'"$pi"
[ "$(field Lid "$pi")" = 0 ] || fail "PortInfo Lid is not 0:"$'\n'"$pi"
echo "ok: NodeInfo, NodeDescription and PortInfo over directed route"

# smp_status ATTR MOD: the status smpdump reports for a Get of ATTR.
smp_status()
{
	smpdump -C "$dev" -D 0 "$1" "$2" 2>&1 | sed -n 's/^SMP status: 0x\(.*\)/\1/p'
}
# The D bit (0x8000) is set in every directed-route response.
[ "$(smp_status 0x15 5)" = 801c ] ||
	fail "PortInfo of port 5: status $(smp_status 0x15 5), want 801c (invalid attribute value)"
[ "$(smp_status 0x16 1)" = 801c ] ||
	fail "P_KeyTable block 1: status $(smp_status 0x16 1), want 801c"
[ "$(smp_status 0x99 0)" = 800c ] ||
	fail "attribute 0x99: status $(smp_status 0x99 0), want 800c (unsupported attribute)"
[ "$(smp_status 0x18 0)" = 800c ] ||
	fail "VLArbitrationTable (VLArbCap 0): status $(smp_status 0x18 0), want 800c"
# An invalid Set (LinkWidthEnabled 8X, not supported) changes nothing.
out=$(ibportstate -C "$dev" -D 0 1 width 4 2>&1) &&
	fail "ibportstate width 4 (8X) succeeded:"$'\n'"$out"
pi=$(smpquery -C "$dev" -D portinfo 0)
[ "$(field LinkWidthEnabled "$pi")" = "1X or 4X" ] ||
	fail "a refused Set changed LinkWidthEnabled to '$(field LinkWidthEnabled "$pi")'"
echo "ok: bad attribute modifiers, unknown attributes and invalid Sets get their MAD status"

# --- opensm on the port ------------------------------------------------------
ibv_asyncwatch -d "$dev" >"$work/async" 2>&1 &
aw_pid=$!
cat >"$work/opensm.conf" <<EOF
m_key $mkey
m_key_protection_level 2
m_key_lease_period 0
EOF
opensm -F "$work/opensm.conf" -g "$guid" -f "$work/opensm.log" >"$work/opensm.out" 2>&1 &
osm_pid=$!
lid_set()
{
	[ "$(ibstat "$dev" | sed -n 's/.*Base lid: //p')" != 0 ]
}
wait_for 60 lid_set ||
	fail "opensm assigned no LID in 60 s: $(ibstat "$dev"; tail -20 "$work/opensm.log")"
st=$(ibstat "$dev")
lid=$(sed -n 's/.*Base lid: //p' <<<"$st")
[ "$(sed -n 's/.*SM lid: //p' <<<"$st")" = "$lid" ] ||
	fail "SM lid is not the port's own LID $lid:"$'\n'"$st"
wait_for 30 bash -c "ibstat $dev | grep -q 'State: Active'" ||
	fail "opensm did not make the port ACTIVE:"$'\n'"$(ibstat "$dev")"
for ev in SM_CHANGE LID_CHANGE PORT_ACTIVE; do
	wait_for 10 grep -q "$ev" "$work/async" ||
		fail "no $ev event reached user space: $(cat "$work/async")"
done
echo "ok: opensm assigned LID $lid, is the port's SM, made it ACTIVE; LID_CHANGE, SM_CHANGE, PORT_ACTIVE seen"

# M_Key protect bits 2: a Get without the key is dropped, with it answered.
mkey_set()
{
	smpquery -C "$dev" --m_key "$mkey" -D portinfo 0 | grep -q "^ProtectBits:\.*2"
}
wait_for 30 mkey_set || fail "opensm's M_Key never took: $(smpquery -C "$dev" --m_key "$mkey" -D portinfo 0)"
out=$(timeout 20 smpquery -C "$dev" -D portinfo 0 2>&1) &&
	fail "a Get without the M_Key was answered:"$'\n'"$out"
pi=$(smpquery -C "$dev" --m_key "$mkey" -D portinfo 0) ||
	fail "a Get with the M_Key failed"
[ "$(field MkeyViolations "$pi")" -ge 1 ] ||
	fail "MkeyViolations did not count the Get without the key:"$'\n'"$pi"
# LID-routed, to the port's own LID: QP0 loops it back.
ni=$(smpquery -C "$dev" --m_key "$mkey" nodeinfo "$lid") ||
	fail "LID-routed NodeInfo to LID $lid failed"
[ "$(field Guid "$ni")" = "$guid" ] || fail "LID-routed NodeInfo Guid is not $guid"
echo "ok: M_Key protection (violations $(field MkeyViolations "$pi")); LID-routed SMP to LID $lid"
# The violation was trapped to the SM (trap 256, Bad M_Key, IBA 14.2.5.1),
# which logged it and repressed the trap.
wait_for 10 grep -q "num:256 .* from LID:$lid " "$work/opensm.log" ||
	fail "opensm's log has no trap 256 from LID $lid:"$'\n'"$(grep -i -e notice -e trap "$work/opensm.log" | tail)"
wait_value 10 -ge 1 rdma_counter "$dev" traps_repressed ||
	fail "the M_Key trap was not repressed: traps_sent $(rdma_counter "$dev" traps_sent), traps_repressed $(rdma_counter "$dev" traps_repressed)"
echo "ok: trap 256 (Bad M_Key) reached opensm: $(grep -m1 "num:256 " "$work/opensm.log" | sed 's/^.*Received/Received/')"

# --- the PMA, through the core's sysfs counters ------------------------------
c=/sys/class/infiniband/$dev/ports/1/counters
x=$(cat "$c/port_xmit_packets") || fail "no PMA counters in $c"
r=$(cat "$c/port_rcv_packets")
[ "$x" -ge 2 ] || fail "port_xmit_packets $x after opensm's sweep"
[ "$r" -ge 2 ] || fail "port_rcv_packets $r after opensm's sweep"
[ "$(cat "$c/port_xmit_data")" -gt 0 ] || fail "port_xmit_data is 0"
echo "ok: PMA counters: xmit_packets $x, rcv_packets $r, xmit_data $(cat "$c/port_xmit_data")"
