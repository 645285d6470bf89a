#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Containers and scire with the RDMA core in exclusive netns mode (`rdma
# system set netns exclusive`; docs/security.md, "Namespaces and
# containers"). Two namespaces, nsA and nsB, joined by a veth pair:
#
# 1. `rdma link add` needs CAP_NET_ADMIN in the initial user namespace:
#    from nsA without it (setpriv drops it from the bounding set), and as
#    root of a user namespace of its own with its own netns (a rootless
#    container; where the kernel has user namespaces), it is refused with
#    EPERM and makes no device.
# 2. scireA on vethA and scireB on vethB, added from inside nsA and nsB.
#    The core (6.1: nldev_newlink() -> ib_alloc_device()) puts a new
#    device in init_net whoever asks, so each is given to its namespace
#    with `rdma dev set NAME netns NS` (a kernel that creates it in the
#    caller's namespace needs no move; the test says which it saw). Then
#    each device is listed (rdma dev, rdma link, ibv_devices,
#    /sys/class/infiniband) and opened (ibv_devinfo) in its own namespace
#    only; from init_net and from the other namespace it is not listed,
#    ibv_devinfo -d does not find it, and opening its uverbs file fails
#    with EPERM. ibv_rc_pingpong runs between the two namespaces, as
#    root and as uid 65534 without capabilities, rping (rdma_cm) as root,
#    and that user in nsB
#    cannot open nsA's device even with its file at mode 0666.
# 3. scireB is moved to nsA while scire_hold holds it open in nsB: the
#    holder sees DEVICE_FATAL and exits cleanly, scireB is then nsA's
#    only; moved back, ibv_rc_pingpong works again.
# 4. SCIF (if scire_scif is loaded): the node table holds node 1 = nsA's
#    address only. /dev/scif opened in nsA is node 1, in nsB node 0; a
#    libscif client in nsB cannot connect to nsA's listener (refused and
#    counted in cm_rejected). With node 2 = nsB's address in the table,
#    nsB's /dev/scif is node 2 and the same connection is accepted as
#    node 2's.
# The core goes back to shared mode at the end whatever happens; the
# switch is refused while any other network namespace exists, so the
# test waits for its namespaces to be gone first.
# shellcheck disable=SC2317,SC2016 # functions run by trap and wait_for; sh -c scripts
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -d /sys/module/scire ] || skip "scire is not loaded"
command -v setpriv >/dev/null || skip "no setpriv (util-linux) to drop CAP_NET_ADMIN"
hold=$(need_prog scire_hold) || exit 1
cfs=/sys/kernel/config/scif
scif=0
if [ -d /sys/module/scire_scif ]; then
	scif=1
	check=$(need_prog scif_peer_check) || exit 1
	[ -d "$cfs/nodes" ] || fail "$cfs/nodes missing: configfs not mounted?"
	export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
mode=$(rdma system show 2>&1) || skip "rdma system show failed: $mode"
grep -q 'netns shared' <<<"$mode" || fail "the RDMA core is not in shared netns mode at the start: $mode"

TOPO_NS_A=nsA TOPO_IF_A=vethA TOPO_IP_A=$TOPO_NET.1 TOPO_DEV_A=scireA
TOPO_NS_B=nsB TOPO_IF_B=vethB TOPO_IP_B=$TOPO_NET.2 TOPO_DEV_B=scireB
tmp=$(mktemp -d)
lsn="" hpid="" exclusive=0

# where DEV: the namespace (nsA, nsB, or "init_net") whose rdma netlink
# sees RDMA device DEV, or "nowhere".
where()
{
	local ns

	for ns in "" nsA nsB; do
		if in_ns "$ns" rdma dev show "$1" >/dev/null 2>&1; then
			echo "${ns:-init_net}"
			return
		fi
	done
	echo nowhere
}

cleanup()
{
	local d ns ok=0

	[ -n "$hpid" ] && kill -9 "$hpid" 2>/dev/null
	[ -n "$lsn" ] && kill "$lsn" 2>/dev/null
	wait 2>/dev/null
	rmdir "$cfs/nodes/1" "$cfs/nodes/2" 2>/dev/null
	# A device is deleted from the namespace it is in.
	for d in scireA scireB scireX scireU; do
		ns=$(where "$d")
		[ "$ns" = nowhere ] && continue
		[ "$ns" = init_net ] && ns=""
		in_ns "$ns" timeout 60 rdma link delete "$d" || { echo "cleanup: cannot delete $d"; ok=1; }
	done
	TOPO_DEV_A="" TOPO_DEV_B=""
	topo_teardown || ok=1
	if [ "$exclusive" = 1 ]; then
		# A deleted namespace is dismantled by a workqueue; until then
		# the core refuses the mode switch (EBUSY).
		wait_for 60 rdma system set netns shared ||
			{ echo "cleanup: rdma system set netns shared failed: $(rdma system set netns shared 2>&1)"; ok=1; }
		rdma system show | grep -q 'netns shared' || { echo "cleanup: not back in shared mode: $(rdma system show)"; ok=1; }
		# scire0 was removed and re-created as a compat device: is it there?
		rdma_has scire0 || echo "cleanup: scire0 missing after the mode switch"
	fi
	rm -rf "$tmp"
	return "$ok"
}
trap 'cleanup || exit 1' EXIT

# Any namespace still being dismantled (an earlier test's) makes the
# switch fail with EBUSY for a while.
wait_for 60 rdma system set netns exclusive ||
	fail "rdma system set netns exclusive failed: $(rdma system set netns exclusive 2>&1) (namespaces: $(ip netns list))"
exclusive=1
rdma system show | grep -q 'netns exclusive' || fail "rdma system show does not say exclusive: $(rdma system show)"
echo "RDMA core in exclusive netns mode"
topo_veth 9000

# --- 1. rdma link add without CAP_NET_ADMIN --------------------------------
out=$(ip netns exec nsA setpriv --inh-caps=-all --bounding-set=-net_admin \
	rdma link add scireA type scire netdev vethA 2>&1) &&
	fail "rdma link add in nsA without CAP_NET_ADMIN succeeded"
grep -q 'Operation not permitted' <<<"$out" ||
	fail "rdma link add in nsA without CAP_NET_ADMIN failed, but not with EPERM: $out"
[ "$(where scireA)" = nowhere ] || fail "the refused rdma link add made scireA ($(where scireA))"
echo "nsA without CAP_NET_ADMIN: $out"
# A rootless container: root of its own user namespace, which owns its
# network namespace, with a netdev of its own. (The debug kernel has no
# user namespaces: CONFIG_USER_NS is off there.)
if ! unshare -U -r -n true 2>/dev/null; then
	echo "no user namespaces in this kernel ($(unshare -U -r -n true 2>&1)): root of a user namespace not tried"
elif out=$(unshare -U -r -n sh -c 'ip link add dumU type dummy && ip link set dumU up &&
	rdma link add scireU type scire netdev dumU' 2>&1); then
	fail "rdma link add by root of a user namespace succeeded"
else
	grep -q 'Operation not permitted' <<<"$out" ||
		fail "rdma link add by root of a user namespace failed, but not with EPERM: $out"
	[ "$(where scireU)" = nowhere ] || fail "the refused rdma link add made scireU"
	echo "root of a user namespace with its own netns: $out"
fi

# --- 2. devices created in nsA and nsB, each its namespace's only ------------
for s in A B; do
	eval "ns=\$TOPO_NS_$s dev=\$TOPO_DEV_$s"
	topo_link_add "$s" scire
	at=$(where "$dev")
	echo "$dev added from $ns: the core put it in $at"
	case $at in
	"$ns") ;;
	init_net)
		out=$(timeout 60 rdma dev set "$dev" netns "$ns" 2>&1) ||
			fail "rdma dev set $dev netns $ns failed: $out"
		[ "$(where "$dev")" = "$ns" ] || fail "$dev is in $(where "$dev") after rdma dev set $dev netns $ns"
		echo "rdma dev set $dev netns $ns: done"
		;;
	*) fail "$dev added from $ns is in $at" ;;
	esac
done

# gid_in NS DEV: wait for DEV's IPv4 RoCE v2 GID as NS's sysfs shows it;
# print its index.
gid_in()
{
	in_ns "$1" bash -c '. "$1/lib.sh"; wait_for 5 roce_v2_ipv4_gid "$2" && roce_v2_ipv4_gid "$2"' \
		_ "$(dirname "$0")" "$2"
}

# uverbs_of NS DEV: the uverbs character device of DEV, looked up in NS.
uverbs_of()
{
	in_ns "$1" sh -c 'for f in /sys/class/infiniband_verbs/uverbs*/ibdev; do
		[ "$(cat "$f")" = "$1" ] && { basename "$(dirname "$f")"; exit 0; }; done; exit 1' _ "$2"
}

# owned_by DEV NS: DEV is listed and opened in NS (and active), in no other.
owned_by()
{
	local dev=$1 own=$2 ns v out

	in_ns "$own" rdma dev show "$dev" >/dev/null 2>&1 || fail "$dev: not in rdma dev of ${own:-init_net}"
	in_ns "$own" rdma link show "$dev/1" 2>/dev/null | grep -q 'state ACTIVE' ||
		fail "$dev: not ACTIVE in rdma link of ${own:-init_net}: $(in_ns "$own" rdma link 2>&1)"
	in_ns "$own" ibv_devices 2>&1 | grep -qw "$dev" ||
		fail "$dev: not in ibv_devices of ${own:-init_net}: $(in_ns "$own" ibv_devices 2>&1)"
	in_ns "$own" test -d "/sys/class/infiniband/$dev" || fail "$dev: not in ${own:-init_net}'s /sys/class/infiniband"
	in_ns "$own" ibv_devinfo -d "$dev" >/dev/null 2>&1 || fail "$dev: ibv_devinfo -d $dev fails in ${own:-init_net}"
	v=$(uverbs_of "$own" "$dev") || fail "$dev: no uverbs device in ${own:-init_net}'s /sys/class/infiniband_verbs"
	for ns in "" nsA nsB; do
		[ "$ns" = "$own" ] && continue
		in_ns "$ns" rdma dev show "$dev" >/dev/null 2>&1 && fail "$dev (${own:-init_net}'s) is in rdma dev of ${ns:-init_net}"
		in_ns "$ns" rdma link show 2>&1 | grep -qw "$dev" && fail "$dev is in rdma link of ${ns:-init_net}"
		in_ns "$ns" ibv_devices 2>&1 | grep -qw "$dev" && fail "$dev is in ibv_devices of ${ns:-init_net}"
		in_ns "$ns" test -e "/sys/class/infiniband/$dev" && fail "$dev is in ${ns:-init_net}'s /sys/class/infiniband"
		in_ns "$ns" ibv_devinfo -d "$dev" >/dev/null 2>&1 && fail "ibv_devinfo -d $dev works in ${ns:-init_net}"
		out=$(in_ns "$ns" sh -c "exec 3</dev/infiniband/$v" 2>&1) &&
			fail "${ns:-init_net} opened $dev's /dev/infiniband/$v"
		grep -q 'Operation not permitted' <<<"$out" ||
			fail "opening $dev's /dev/infiniband/$v in ${ns:-init_net} failed, but not with EPERM: $out"
	done
	echo "$dev: listed and opened in ${own:-init_net} only; /dev/infiniband/$v elsewhere: EPERM"
}
owned_by scireA nsA
owned_by scireB nsB
# init_net keeps its own device and sees no other.
owned_by scire0 ""
for ns in nsA nsB; do
	n=$(in_ns "$ns" rdma dev show 2>/dev/null | grep -c .)
	[ "$n" = 1 ] || fail "$ns's rdma dev lists $n devices: $(in_ns "$ns" rdma dev show 2>&1)"
done

port=18515
# pingpong WHEN [nobody]: ibv_rc_pingpong between the namespaces, as root
# or as uid 65534 without capabilities.
pingpong()
{
	local ga gb out as=()

	[ "${2:-}" = nobody ] &&
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
	ga=$(gid_in nsA scireA) || fail "scireA has no IPv4 RoCE v2 GID in nsA"
	gb=$(gid_in nsB scireB) || fail "scireB has no IPv4 RoCE v2 GID in nsB"
	out=$(pair_run_ns 60 "tcp:$port" nsA nsB \
		"${as[@]}" ibv_rc_pingpong -d scireA -g "$ga" -p "$port" -n 200 -s 4096 -- \
		"${as[@]}" ibv_rc_pingpong -d scireB -g "$gb" -p "$port" -n 200 -s 4096 "$TOPO_IP_A") ||
		fail "ibv_rc_pingpong scireA (nsA) <-> scireB (nsB) $1: $out"
	echo "ibv_rc_pingpong nsA <-> nsB $1: $(grep -m1 'Mbit/sec' <<<"$out")"
	port=$((port + 1))
}
pingpong "after the devices were given to their namespaces"

# rdma_cm between the containers: each side resolves the other's address
# to its own namespace's device (rdma_cm in exclusive mode binds only to
# devices of the caller's netns), and the listener is seen from nsA only.
out=$(pair_run_ns 60 cm:7174 nsA nsB \
	rping -s -a "$TOPO_IP_A" -C 10 -S 4000 -V -- \
	rping -c -a "$TOPO_IP_A" -C 10 -S 4000 -v -V) ||
	fail "rping scireA (nsA) <-> scireB (nsB): $out"
[ "$(grep -c 'ping data' <<<"$out")" = 10 ] ||
	fail "rping nsA <-> nsB: $(grep -c 'ping data' <<<"$out") of 10 pings verified: $out"
echo "rping -v -V nsA <-> nsB (rdma_cm in exclusive mode): 10 pings verified"

# An unprivileged user in each container uses its container's device (its
# uverbs file opened to every user, as distributions' udev rules make it),
# and cannot open the other container's, whatever the file's mode.
va=$(uverbs_of nsA scireA) && vb=$(uverbs_of nsB scireB) || fail "no uverbs files for scireA, scireB"
chmod 0666 "/dev/infiniband/$va" "/dev/infiniband/$vb" || fail "chmod the uverbs files"
pingpong "as uid 65534 without capabilities in both" nobody
out=$(ip netns exec nsB setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	--bounding-set=-all sh -c "exec 3</dev/infiniband/$va" 2>&1) &&
	fail "uid 65534 in nsB opened scireA's /dev/infiniband/$va"
grep -q 'Operation not permitted' <<<"$out" ||
	fail "uid 65534 in nsB opening scireA's /dev/infiniband/$va failed, but not with EPERM: $out"
echo "uid 65534 in nsB: scireA's /dev/infiniband/$va (mode 0666): EPERM"

# --- 3. moving a device while it is open ---------------------------------------
ip netns exec nsB "$hold" -d scireB >"$tmp/hold" 2>&1 &
hpid=$!
wait_for 10 grep -q '^ready' "$tmp/hold" || { cat "$tmp/hold"; fail "scire_hold -d scireB in nsB not ready in 10 s"; }
out=$(ip netns exec nsB timeout 30 rdma dev set scireB netns nsA 2>&1) ||
	fail "rdma dev set scireB netns nsA (scireB open in nsB) failed or hung: $out"
wait_for 10 pid_gone "$hpid" || { cat "$tmp/hold"; fail "scire_hold still runs 10 s after scireB left nsB"; }
wait "$hpid" || { cat "$tmp/hold"; fail "scire_hold failed after scireB left nsB"; }
hpid=""
echo "scireB moved to nsA while open in nsB: the holder saw DEVICE_FATAL and closed cleanly"
owned_by scireB nsA
out=$(ip netns exec nsA timeout 30 rdma dev set scireB netns nsB 2>&1) ||
	fail "rdma dev set scireB netns nsB (back) failed: $out"
owned_by scireB nsB
pingpong "after scireB went to nsA and back"

# --- 4. SCIF: a container's node -----------------------------------------------
if [ "$scif" = 0 ]; then
	echo "scire_scif is not loaded: no SCIF checks"
	exit 0
fi
# nodes NS: what scif_get_node_ids() says through /dev/scif opened in NS.
nodes()
{
	in_ns "$1" timeout 10 "$check" nodes 2>&1
}
{ mkdir "$cfs/nodes/1" && echo "$TOPO_IP_A" >"$cfs/nodes/1/addr"; } || fail "cannot make node 1 = $TOPO_IP_A"
out=$(nodes nsA)
[ "${out%% nodes*}" = "self 1" ] || fail "/dev/scif in nsA: '$out', expected self 1"
out=$(nodes nsB)
[ "${out%% nodes*}" = "self 0" ] || fail "/dev/scif in nsB (no table address): '$out', expected self 0"
echo "node table {1: $TOPO_IP_A}: nsA's /dev/scif: $(nodes nsA); nsB's: $out"

sport=2400
ip netns exec nsA timeout 120 "$check" listen "$sport" 100 >"$tmp/listen" 2>&1 &
lsn=$!
wait_for 20 cm_listening "$(cat /sys/module/scire_scif/parameters/cm_port)" ||
	fail "node 1 (nsA) does not listen with rdma_cm"
before=$(cat "$cfs/cm_rejected")
out=$(ip netns exec nsB timeout 30 "$check" connect 1 "$sport" 2>&1)
case $out in
refused:*) ;;
*) fail "nsB, not in the node table, connecting to node 1: $out" ;;
esac
after=$(cat "$cfs/cm_rejected")
[ "$after" -gt "$before" ] || fail "nsB's refused request was not counted (cm_rejected $before -> $after)"
echo "nsB (node 0, not in the table) -> node 1 port $sport: $out; cm_rejected $before -> $after"

{ mkdir "$cfs/nodes/2" && echo "$TOPO_IP_B" >"$cfs/nodes/2/addr"; } || fail "cannot make node 2 = $TOPO_IP_B"
out=$(nodes nsB)
[ "${out%% nodes*}" = "self 2" ] || fail "/dev/scif in nsB with node 2 = $TOPO_IP_B: '$out', expected self 2"
out=$(ip netns exec nsB timeout 30 "$check" connect 1 "$sport" 2>&1)
[ "$out" = connected ] || fail "node 2 (nsB, in the table) connecting to node 1: $out"
wait "$lsn"
st=$?
lsn=""
cat "$tmp/listen"
[ "$st" = 0 ] || fail "node 1's listener failed (status $st)"
grep -q '^accepted node 2 ' "$tmp/listen" || fail "node 1's listener accepted something else than node 2"
[ "$(cat "$cfs/cm_rejected")" = "$after" ] || fail "node 2's request was counted as refused"
echo "with node 2 = $TOPO_IP_B: nsB's /dev/scif is node 2, and node 1 accepted it"
exit 0
