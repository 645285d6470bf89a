#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two scire-ibswitch processes cabled to each other (an inter-switch
# link), in one VM, as 124-ib-switch.sh builds one: three scire_ib ports
# in network namespaces sw-a, sw-b, sw-c on a bridge in init_net, where
# both switches listen at the same address on two UDP ports. Switch X
# (4793) takes a and b; switch Y (4794) is started with --link 1=X, so
# its port 1 calls X and X gives it the first free port (3); c attaches
# to Y (port 2). Y starts after X here, but either may start first.
#
# opensm (routing engine updn, X the root) on a sweeps through both: every port
# ACTIVE, the LFTs from updn, not a fallback to minhop; ibnetdiscover finds
# two switches and three CAs, X's port 3 cabled to Y's port 1;
# ibtracert between a and c passes both switches; saquery path records
# between a and c; ibv_rc_pingpong -c and ibv_ud_pingpong -c over LIDs
# from c to a; IPoIB pings between every two hosts (the broadcast group's
# MFT spans both switches); ibqueryerrors finds no errors at either
# switch. Then Y is stopped: X's port 3 goes down and opensm hears trap
# 128 from X; Y started again comes back on X's port 3 and c is ACTIVE
# again.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ibsw-lib.sh
. "$(dirname "$0")/ibsw-lib.sh"

for p in opensm ibstat ibnetdiscover ibtracert saquery ibqueryerrors ibv_rc_pingpong \
	ibv_ud_pingpong ping; do
	command -v "$p" >/dev/null || skip "$p not installed (opensm, infiniband-diags, ibverbs-utils)"
done
switch=$(command -v scire-ibswitch || echo "$SCIRE_BUILD/tools/ibswitch/scire-ibswitch")
[ -x "$switch" ] || skip "no scire-ibswitch (make)"
modprobe ib_umad || fail "cannot load ib_umad"

hosts="a b c"
br=swbr sw_ip=192.168.94.254 x_port=4793 y_port=4794
work=$(mktemp -d)
x_pid='' y_pid='' osm_pid=''
cleanup()
{
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	modprobe -r ib_ipoib 2>/dev/null
	for h in $hosts; do
		rdma link delete "sws$h" 2>/dev/null
		ip link delete "swv$h" 2>/dev/null
		ip netns delete "sw-$h" 2>/dev/null
	done
	[ -n "$x_pid" ] && kill "$x_pid" 2>/dev/null && wait "$x_pid" 2>/dev/null
	[ -n "$y_pid" ] && kill "$y_pid" 2>/dev/null && wait "$y_pid" 2>/dev/null
	ip link delete "$br" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# switch_y: start switch Y, its port 1 cabled to X.
switch_y()
{
	"$switch" --listen "$sw_ip:$y_port" --ports 4 --link "1=$sw_ip:$x_port" --verbose \
		2>>"$work/y.log" &
	y_pid=$!
}

# switch_state: whether the switches run, and what they logged.
switch_state()
{
	local w

	for w in x y; do
		eval "pid=\$${w}_pid"
		echo "switch ${w^^}: $([ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo running || echo "not running")"
		tail -8 "$work/$w.log"
	done
}

# --- the fabric ---------------------------------------------------------------
if ! out=$(ip link add "$br" type bridge 2>&1); then
	[ -d /sys/class/net/"$br" ] || [ -e /sys/module/bridge ] || modprobe -q bridge ||
		skip "this kernel has no bridge (CONFIG_BRIDGE) for the hosts' segment: $out"
	ip link add "$br" type bridge || fail "cannot create bridge $br"
fi
ip link set "$br" mtu 9000 up
ip addr add "$sw_ip/24" dev "$br" || fail "cannot address $br"
for h in $hosts; do
	ip netns add "sw-$h" || fail "ip netns add sw-$h failed"
	ip -n "sw-$h" link set lo up
	ip link add "swv$h" mtu 9000 type veth peer name eth netns "sw-$h" ||
		fail "cannot create veth swv$h"
	ip link set "swv$h" master "$br" up
	ip -n "sw-$h" link set eth mtu 9000 up
	ip -n "sw-$h" addr add "$(ip_of "$h")/24" dev eth
	in_ns "sw-$h" rdma link add "sws$h" type scire_ib netdev eth ||
		fail "rdma link add sws$h (in sw-$h) failed"
done
for bad in "0=$sw_ip" "5=$sw_ip" "1=$sw_ip:$y_port" "x=$sw_ip" "1=nowhere"; do
	timeout 5 "$switch" --listen "$sw_ip:$y_port" --ports 4 --link "$bad" 2>/dev/null
	rc=$?
	[ "$rc" = 2 ] || fail "scire-ibswitch --ports 4 --listen $sw_ip:$y_port --link $bad: status $rc, not 2 (usage)"
done
"$switch" --listen "$sw_ip:$x_port" --ports 4 --verbose 2>"$work/x.log" &
x_pid=$!
wait_for 10 grep -q "ports at" "$work/x.log" || fail "switch X did not start: $(cat "$work/x.log")"
attach()
{
	local h=$1 to=$2 peer=/sys/class/infiniband/sws$1/ports/1/scire_ib_peer

	echo "$to" >"$peer" || fail "sws$h: cannot write $to to scire_ib_peer"
	wait_for 10 ib_port_is "sws$h" Initializing ||
		fail "sws$h is $(ib_state "sws$h") with switch $to as its neighbour"
}
attach a "$sw_ip:$x_port"
attach b "$sw_ip:$x_port"
switch_y
wait_for 10 grep -q "port 3 .*:$y_port.*link up" "$work/x.log" ||
	fail "switch Y's call did not bring up X's port 3:"$'\n'"$(cat "$work/x.log" "$work/y.log")"
wait_for 10 grep -q "port 1 .*:$x_port.*link up" "$work/y.log" ||
	fail "Y's port 1 did not come up with X's answer:"$'\n'"$(cat "$work/y.log")"
attach c "$sw_ip:$y_port"
echo "ok: switch Y's port 1 cabled to switch X's port 3 (same address, two UDP ports); a, b on X, c on Y, in INIT"

# --- opensm through both switches ------------------------------------------------
# Up*/Down* routing, not opensm's default minhop (124 runs that one),
# with X as its root: opensm finds roots by itself only where most CAs
# are equally far from a switch (a fat tree's spine), which no switch of
# this fabric is.
sed -n 's/.*NodeGUID \(0x[0-9a-f]*\).*/\1/p' "$work/x.log" >"$work/roots"
[ -s "$work/roots" ] || fail "switch X printed no NodeGUID: $(cat "$work/x.log")"
opensm -g "$(guid_of a)" -p 8 -R updn -a "$work/roots" -D 0x07 -f "$work/opensm.log" \
	>"$work/opensm.out" 2>&1 &
osm_pid=$!
for h in $hosts; do
	wait_for 120 ib_port_is "sws$h" Active ||
		fail "sws$h not ACTIVE 120 s after opensm started: $(ibstat "sws$h"; tail -30 "$work/opensm.log")"$'\n'"$(switch_state)"
done
topo=$(ibnetdiscover -C swsa 2>&1) || fail "ibnetdiscover failed:"$'\n'"$topo"
[ "$(grep -c '^Switch' <<<"$topo")" = 2 ] && [ "$(grep -c '^Ca' <<<"$topo")" = 3 ] ||
	fail "ibnetdiscover did not find two switches and three CAs:"$'\n'"$topo"
grep -qE "^\[3\][[:space:]]+\"S-[0-9a-f]+\"\[1\]" <<<"$topo" ||
	fail "ibnetdiscover: X's port 3 is not cabled to a switch's port 1:"$'\n'"$topo"
echo "ok: opensm: all three ACTIVE; ibnetdiscover: two switches (X port 3 to Y port 1), three CAs"
# The LFTs must be updn's: opensm says so in its log (with -D 0x07: not
# at its default flags), and falls back to minhop, logging why, when an
# engine fails.
if grep -qiE "fall(ing)? ?back|routing engine.*failed|updn.*(ERR|cannot)" "$work/opensm.log" ||
	! grep -q "updn tables configured on all switches" "$work/opensm.log"; then
	fail "opensm did not route with updn:"$'\n'"$(grep -iE "fall|updn|routing|root" "$work/opensm.log" | head -30)"
fi
echo "ok: opensm routed with updn, switch X the root"

la=$(lid_of a) lc=$(lid_of c)
for pr in "$la $lc" "$lc $la"; do
	read -r s d <<<"$pr"
	tr_out=$(ibtracert -C swsb "$s" "$d" 2>&1) || fail "ibtracert $s $d failed:"$'\n'"$tr_out"
	[ "$(grep -c "switch port" <<<"$tr_out")" -ge 2 ] ||
		fail "ibtracert $s $d does not pass two switches:"$'\n'"$tr_out"
	sa=$(saquery -C swsa --src-to-dst "$s:$d" 2>&1) || fail "saquery path $s -> $d failed:"$'\n'"$sa"
	grep -qE "^[[:space:]]*dlid\.*($d|0x0*$(printf %x "$d"))\$" <<<"$sa" ||
		fail "no path record to $d:"$'\n'"$sa"
done
echo "ok: ibtracert between a and c passes both switches; saquery path records both ways"
ibqueryerrors -C swsa -k -K >/dev/null 2>&1

# --- verbs and IPoIB across the inter-switch link -----------------------------------
ibsw_pingpong ", through both switches" ibv_rc_pingpong -n 20 -s 65536 -c
ibsw_pingpong ", through both switches" ibv_ud_pingpong -n 20 -s 2048 -c

ibsw_ipoib_up
ibsw_ipoib_ping_all
echo "ok: IPoIB: ping between every pair of hosts (ARP through the MFTs of both switches)"
qe=$(ibqueryerrors -c -C swsa 2>&1)
grep -q "^Errors for .*scire-ibswitch" <<<"$qe" &&
	fail "ibqueryerrors finds errors at a switch of a healthy fabric:"$'\n'"$qe"
echo "ok: ibqueryerrors finds no errors at either switch's ports"

# --- the inter-switch link goes down and comes back -----------------------------------
kill "$y_pid" && wait "$y_pid" 2>/dev/null
y_pid=
wait_for 15 grep -q "port 3 .*link down" "$work/x.log" ||
	fail "X's port 3 did not go down when Y stopped:"$'\n'"$(cat "$work/x.log")"
wait_for 15 grep -q "num:128 " "$work/opensm.log" ||
	fail "opensm logged no trap 128 for X's port 3:"$'\n'"$(grep -i trap "$work/opensm.log" | tail -5)"
x_port3_back()
{
	sed -n '/port 3 .*link down/,$p' "$work/x.log" | grep -q "port 3 .*:$y_port.*link up"
}
switch_y
wait_for 15 x_port3_back ||
	fail "X's port 3 did not come back with Y:"$'\n'"$(cat "$work/x.log")"
wait_for 90 ib_port_is swsc Active || fail "swsc not ACTIVE again behind Y: $(ibstat swsc)"
ibsw_pingpong ", Y back" ibv_ud_pingpong -n 20 -s 2048 -c
echo "ok: Y stopped: X's port 3 down, trap 128 at opensm; Y back on X's port 3, c ACTIVE again"
exit 0
