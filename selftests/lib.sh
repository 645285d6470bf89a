# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Helpers shared by the test VM's init (scripts/vm-guest-init), the TAP
# runner (selftests/run) and the shell selftests. Sourced, never run; not
# executable, so selftests/run does not take it for a test.
#
# Kernel log: every reader "consumes" the ring buffer (dmesg -c) into one
# file, $SCIRE_KMSG_LOG, so nothing is lost when the ring wraps and "what
# appeared since X" is a byte offset into that file.

SCIRE_KMSG_LOG=${SCIRE_KMSG_LOG:-/run/scire/dmesg.log}
export SCIRE_KMSG_LOG

# What makes a test fail whatever it printed. A kernel general protection
# fault logs "general protection fault: 0000 [#1]" or "general protection
# fault, probably for non-canonical address ..."; a user process's logs
# "traps: PROG[PID] general protection fault ip:..." and is that program's
# business (its exit status tells its test). The debug kernel adds UBSAN
# reports and kmemleak's "N new suspected memory leaks"; its KASAN and
# "BUG: sleeping function called from invalid context" reports match the
# patterns above. lockdep's reports start "WARNING: ..." or "BUG: ...",
# except the one about a lock without a static key; the word lockdep
# alone is no pattern, since every stack trace through lock acquisition
# has lockdep_* frames (an allocation-failure report, for one). A netdev
# whose transmit queue stays stopped (the watchdog's "NETDEV WATCHDOG")
# is a netdev_crit() line in these kernels, no WARNING, but a stall.
SCIRE_KMSG_BAD='WARNING:|BUG:|Oops|KASAN|UBSAN:|possible circular locking|INFO: trying to register non-static key|turning off the locking correctness validator|INFO: task .* blocked|hung_task|general protection fault[,:]|suspected memory leak|NETDEV WATCHDOG'

# Move what is in the kernel ring buffer to $SCIRE_KMSG_LOG.
kmsg_collect()
{
	# Builtins where they do: each program started costs a TCG guest
	# a tenth of a second or more, and this runs around every test.
	[ -d "${SCIRE_KMSG_LOG%/*}" ] || mkdir -p "${SCIRE_KMSG_LOG%/*}"
	dmesg -c >>"$SCIRE_KMSG_LOG" 2>/dev/null || true
}

# Print a mark (byte offset) for kmsg_since.
kmsg_mark()
{
	kmsg_collect
	stat -c %s "$SCIRE_KMSG_LOG"
}

# Print the kernel log written since mark $1.
kmsg_since()
{
	kmsg_collect
	tail -c +"$(($1 + 1))" "$SCIRE_KMSG_LOG"
}

# Print the bad lines (with 2 lines of context before) logged since mark $1;
# exit status 0 if there were any.
kmsg_bad_since()
{
	kmsg_since "$1" | grep -E -B2 -A20 "$SCIRE_KMSG_BAD"
}

# --- for tests --------------------------------------------------------------

SCIRE_BUILD=${SCIRE_BUILD:-${SCIRE_ROOT:-.}/build}

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

skip()
{
	echo "SKIP: $*"
	exit 77
}

# Print the path of selftest program $1, or fail saying how to get it.
need_prog()
{
	local p="$SCIRE_BUILD/selftests/$1"

	[ -x "$p" ] || fail "missing $p: run make"
	echo "$p"
}

# wait_for SECONDS COMMAND...: run COMMAND every 0.2 s until it succeeds;
# exit status 1 if it did not within SECONDS (wall clock).
wait_for()
{
	local end=$((SECONDS + $1))

	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# wait_value SECS OP WANT CMD [ARG...]: wait up to SECS seconds until
# CMD's output compares to WANT by test(1)'s OP (-eq, -ge, -gt, =, ...).
# CMD runs afresh each time: `wait_for N test "$(CMD)" ...` would compare
# the one value read when the line ran.
wait_value()
{
	local secs=$1

	shift
	wait_for "$secs" value_is "$@"
}

# value_is OP WANT CMD [ARG...]: does CMD's output compare to WANT by OP?
value_is()
{
	local op=$1 want=$2 got

	shift 2
	got=$("$@") || return 1
	test "$got" "$op" "$want"
}

# pkey_index_of DEV PKEY: the index of P_Key PKEY (0x8001 as sysfs
# prints it) in port 1's table of DEV; fails if it holds none.
pkey_index_of()
{
	local f

	for f in "/sys/class/infiniband/$1/ports/1/pkeys/"*; do
		[ "$(cat "$f")" = "$2" ] && { echo "${f##*/}"; return 0; }
	done
	return 1
}

# listening PID PORT: does process PID's network namespace have a TCP
# socket listening on PORT? Read from /proc/PID/net, so it needs no
# "ip netns exec ss" per poll.
listening()
{
	local want f addr st

	printf -v want ':%04X' "$2"
	for f in "/proc/$1/net/tcp" "/proc/$1/net/tcp6"; do
		[ -r "$f" ] || continue
		while read -r _ addr _ st _; do
			[ "$st" = 0A ] && [ "${addr%"$want"}" != "$addr" ] && return 0
		done <"$f"
	done
	return 1
}

# Does `rdma link show` know device $1?
rdma_has()
{
	# sysfs first (no process started); rdma(8) for what this sysfs
	# does not show (another netns in exclusive mode).
	[ -e "/sys/class/infiniband/$1" ] || rdma link show "$1/1" >/dev/null 2>&1
}

# Port state (PORT_ACTIVE, PORT_DOWN, ...) of device $1 as ibv_devinfo
# reports it, or "none" if ibv_devinfo does not know the device.
ibv_port_state()
{
	local s

	s=$(ibv_devinfo -d "$1" 2>/dev/null | sed -n 's/^[[:space:]]*state:[[:space:]]*\(PORT_[A-Z_]*\).*/\1/p' | head -n1)
	echo "${s:-none (ibv_devinfo -d $1 does not know it)}"
}

# --- data-path tests (70 and up) ---------------------------------------------

# The device the data-path tests run on: scire0 (what `make check` sets up)
# unless SCIRE_DEV names another, e.g. SCIRE_DEV=rxe0 to hold scire's tests
# against rdma_rxe.
SCIRE_DEV=${SCIRE_DEV:-scire0}

# Is RDMA device $1 a scire device (it exports scire_abi_version)?
dev_is_scire()
{
	[ -e "/sys/class/infiniband/$1/scire_abi_version" ]
}

# Print the netdev under RDMA device $1 (from rdma link show).
dev_netdev()
{
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

# roce_v2_gid_matching DEV REGEX: print the lowest index among port 1's
# RoCE v2 GIDs of RDMA device DEV whose sysfs text (eight groups of four hex
# digits) matches the grep REGEX; exit status 1 if there is none.
roce_v2_gid_matching()
{
	local d=/sys/class/infiniband/$1/ports/1 i f t best=""

	# One grep reads the whole table (rxe has 1024 entries); the types of
	# the hits with builtins. No process substitution: the test VM has no
	# /dev/fd.
	for f in $(grep -l -e "$2" "$d"/gids/* 2>/dev/null); do
		i=${f##*/}
		{ [ -z "$best" ] || [ "$i" -lt "$best" ]; } || continue
		read -r t <"$d/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$t" != "RoCE v2" ] || best=$i
	done
	[ -n "$best" ] || return 1
	echo "$best"
}

# Print the index of port 1's first RoCE v2 GID of RDMA device $1 that holds
# an IPv4-mapped address (::ffff:a.b.c.d, the GID for a netdev's IPv4
# address); exit status 1 if there is none.
roce_v2_ipv4_gid()
{
	roce_v2_gid_matching "$1" '^0000:0000:0000:0000:0000:ffff:'
}

# Print the index of port 1's RoCE v2 GID of RDMA device $1 that is the
# IPv6 address $2 (in any of its spellings, e.g. fd77::1); exit status 1
# if there is none.
roce_v2_gid_of()
{
	local want

	# The sysfs spelling: eight groups of four hex digits.
	want=$(python3 -c 'import ipaddress, sys
print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$2") || return 1
	roce_v2_gid_matching "$1" "^$want\$"
}

# Check that RDMA device $1 exists and is ACTIVE, wait up to 5 s for its
# IPv4 RoCE v2 GID (the core adds GIDs asynchronously) and print its index.
# Fails the test (exit 1) otherwise; use as gid=$(need_dev_gid DEV) || exit 1.
need_dev_gid()
{
	local i end=$((SECONDS + 5))

	rdma_has "$1" || fail "no RDMA device $1 (SCIRE_DEV=$SCIRE_DEV): $(rdma link show 2>&1)"
	wait_for 5 port_active "$1" ||
		fail "$1 port 1 is not ACTIVE: $(rdma link show "$1/1" 2>&1)"
	until i=$(roce_v2_ipv4_gid "$1"); do
		[ "$SECONDS" -lt "$end" ] ||
			fail "$1 port 1 has no RoCE v2 GID with an IPv4 address (netdev $(dev_netdev "$1"): $(ip -4 -br addr show "$(dev_netdev "$1")" 2>&1))"
		sleep 0.2
	done
	echo "$i"
}

# port_active DEV: is port 1 of RDMA device DEV ACTIVE? (sysfs, where it
# shows DEV; else rdma(8).)
port_active()
{
	local st

	if read -r st <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; then
		[ "$st" = "4: ACTIVE" ]
	else
		rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE'
	fi
}

# Print RDMA device $1's line of `rdma resource show` as "pd=1 cq=1 qp=1 ...".
rdma_res_counts()
{
	rdma resource show | awk -v dev="$1:" '$2 == dev {
		for (i = 3; i < NF; i += 2) printf "%s=%s ", $i, $(i + 1)
	}'
}

# Print one count (pd, cq, qp, mr, ...) of RDMA device $1's resources.
rdma_res_count()
{
	rdma_res_counts "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Is something listening on TCP port $1?
# cgroup2_enable NAME: cgroup2 mounted at /sys/fs/cgroup (mounted here if
# it is not) with controller NAME enabled for its children. Status 1 with
# the reason in CGROUP2_WHY if this kernel has no cgroup2 or no such
# controller (the caller says what it could not check); fails the test if
# mounting or enabling fails.
CGROUP2_ROOT=/sys/fs/cgroup
cgroup2_enable()
{
	CGROUP2_WHY=
	if [ ! -f $CGROUP2_ROOT/cgroup.controllers ]; then
		grep -qw cgroup2 /proc/filesystems || { CGROUP2_WHY="this kernel has no cgroup2"; return 1; }
		mount -t cgroup2 none $CGROUP2_ROOT || fail "cannot mount cgroup2 on $CGROUP2_ROOT"
	fi
	grep -qw "$1" $CGROUP2_ROOT/cgroup.controllers || {
		CGROUP2_WHY="no $1 controller in cgroup2: $(cat $CGROUP2_ROOT/cgroup.controllers)"
		return 1
	}
	echo "+$1" >$CGROUP2_ROOT/cgroup.subtree_control || fail "cannot enable the $1 controller"
}

# tcp_listening PORT: is something in this network namespace listening on
# TCP PORT? (Read from /proc like listening(): an ss per poll costs half a
# second of a TCG guest.)
tcp_listening()
{
	listening self "$1"
}

# pair_run SECS PORT CMD [ARG...]: the client/server pattern of
# ibv_*_pingpong and perftest. Runs CMD ARG... as the server; once it
# listens on TCP PORT (ARG... must make it use PORT), runs CMD ARG...
# 127.0.0.1 as its client. Each side runs under timeout SECS, so a hang is
# a failure. Prints the client's output; exit status 0 if both sides
# exited 0, else prints both outputs and says what went wrong.
pair_run()
{
	local secs=$1 port=$2 tmp spid src crc

	shift 2
	tmp=$(mktemp -d)
	timeout -k 5 "$secs" "$@" >"$tmp/server" 2>&1 &
	spid=$!
	if ! wait_for 20 tcp_listening "$port"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "server '$*' did not listen on port $port within 20 s; its output:"
		sed 's/^/  | /' "$tmp/server"
		rm -rf "$tmp"
		return 1
	fi
	timeout -k 5 "$secs" "$@" 127.0.0.1 >"$tmp/client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if [ "$src" = 0 ] && [ "$crc" = 0 ]; then
		cat "$tmp/client"
		rm -rf "$tmp"
		return 0
	fi
	echo "'$*': server exit status $src, client exit status $crc (124: timed out after ${secs}s)"
	echo "server output:"
	sed 's/^/  | /' "$tmp/server"
	echo "client output:"
	sed 's/^/  | /' "$tmp/client"
	rm -rf "$tmp"
	return 1
}

# --- network namespaces, veth pairs and rdma_rxe (71 and up) -------------------
#
# Two topologies, each one veth pair with IPv4 on both ends and jumbo frames
# (so RoCE path MTU 4096 fits, as on eth0):
#
#   topo_rxe_scire:  rxeA on vrxe (init_net, 10.77.0.1) <-> scireB on vsci
#                    (netns nsB, 10.77.0.2). scire0 is deleted first and
#                    rdma_rxe loaded: rxe binds UDP 4791 in init_net at
#                    module load, which scire0's socket would hold.
#   topo_scire_pair: scireA on vethA (netns nsA, 10.77.0.1) <-> scireB on
#                    vethB (netns nsB, 10.77.0.2); scire0 stays on eth0.
#
# Both set TOPO_{NS,IF,IP,DEV,GID}_{A,B} (NS empty: init_net) and fail the
# test if a step does not work. topo_teardown undoes what was set up
# (install it with trap ... EXIT before calling them); selftests/run's
# baseline restore is the safety net behind it.
#
# With TOPO_IPV6=1 set before the call, the veth ends also get
# TOPO_NET6::1/64 and TOPO_NET6::2/64 (in TOPO_IP6_A/B), without DAD, and
# TOPO_GID6_A/B are the indexes of the RoCE v2 GIDs the core builds from
# them; otherwise IPv6 is off on the veth ends.

TOPO_NET=10.77.0
TOPO_NET6=fd77
TOPO_IPV6=${TOPO_IPV6:-0}
TOPO_IP6_A="" TOPO_IP6_B="" TOPO_GID6_A="" TOPO_GID6_B=""
TOPO_NS_A="" TOPO_NS_B="" TOPO_IF_A="" TOPO_IF_B="" TOPO_IP_A="" TOPO_IP_B=""
TOPO_DEV_A="" TOPO_DEV_B="" TOPO_GID_A="" TOPO_GID_B=""
TOPO_RXE_LOADED=0 TOPO_SCIRE0_DELETED=0

# in_ns NS CMD...: run CMD in network namespace NS, or here if NS is empty.
in_ns()
{
	local ns=$1

	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# topo_veth MTU: the veth pair TOPO_IF_A/TOPO_IF_B between TOPO_NS_A and
# TOPO_NS_B (created if missing), MTU MTU, TOPO_IP_A/24 and TOPO_IP_B/24
# (and TOPO_IP6_A/64, TOPO_IP6_B/64 with TOPO_IPV6=1), both ends up; waits
# for carrier. Fails the test on error.
topo_veth()
{
	local mtu=$1 s ns ifc ip ip6

	# Few processes (each costs a TCG guest a tenth of a second or more):
	# one ip -batch here, then one shell per namespace.
	local cmds="" out

	for s in A B; do
		eval "ns=\$TOPO_NS_$s"
		if [ -n "$ns" ] && [ ! -e "/run/netns/$ns" ]; then
			ip netns add "$ns" || fail "ip netns add $ns failed"
		fi
	done
	cmds="link add $TOPO_IF_A type veth peer name $TOPO_IF_B"$'\n'
	[ -z "$TOPO_NS_A" ] || cmds+="link set $TOPO_IF_A netns $TOPO_NS_A"$'\n'
	[ -z "$TOPO_NS_B" ] || cmds+="link set $TOPO_IF_B netns $TOPO_NS_B"$'\n'
	out=$(ip -batch - <<<"$cmds" 2>&1) ||
		fail "creating veth pair $TOPO_IF_A/$TOPO_IF_B (namespaces ${TOPO_NS_A:-init_net}, ${TOPO_NS_B:-init_net}) failed: $out"
	if [ "$TOPO_IPV6" = 1 ]; then
		TOPO_IP6_A=$TOPO_NET6::1 TOPO_IP6_B=$TOPO_NET6::2
	fi
	for s in A B; do
		eval "ns=\$TOPO_NS_$s ifc=\$TOPO_IF_$s ip=\$TOPO_IP_$s ip6=\$TOPO_IP6_$s"
		cmds="link set $ifc mtu $mtu"$'\n'"addr add $ip/24 dev $ifc"$'\n'
		[ -z "$ip6" ] || cmds+="addr add $ip6/64 dev $ifc nodad"$'\n'
		cmds+="link set $ifc up"$'\n'
		[ -z "$ns" ] || cmds="link set lo up"$'\n'"$cmds"
		# Without TOPO_IPV6, no IPv6: no link-local GIDs and no DAD
		# delay to wait for; the tests use the IPv4 RoCE v2 GIDs.
		# B's end, up last, waits for its carrier (a veth has it on
		# both ends once both are up), at most 5 s.
		# shellcheck disable=SC2016 # sh's own $1, $2 and $3
		out=$(in_ns "$ns" sh -c '[ -n "$1" ] || echo 1 >"/proc/sys/net/ipv6/conf/$2/disable_ipv6"
			ip -batch - || exit 1
			[ "$3" = B ] || exit 0
			for i in $(seq 50); do
				[ "$(cat "/sys/class/net/$2/carrier")" != 1 ] || exit 0
				sleep 0.1
			done
			echo "no carrier on $2 after 5 s: $(ip -br link show "$2")"; exit 1' \
			sh "$ip6" "$ifc" "$s" <<<"$cmds" 2>&1) ||
			fail "cannot set up $ifc (netns ${ns:-init_net}: MTU $mtu, $ip/24${ip6:+, $ip6/64}, up): $out"
	done
}

# topo_link_add S TYPE: add RDMA device TOPO_DEV_S of TYPE (rxe, scire) on
# TOPO_IF_S from inside TOPO_NS_S (a link type resolves the netdev name in
# the caller's namespace).
topo_link_add()
{
	local ns dev ifc out

	eval "ns=\$TOPO_NS_$1 dev=\$TOPO_DEV_$1 ifc=\$TOPO_IF_$1"
	out=$(in_ns "$ns" timeout 60 rdma link add "$dev" type "$2" netdev "$ifc" 2>&1) ||
		fail "rdma link add $dev type $2 netdev $ifc (netns ${ns:-init_net}) failed: $out"
}

# topo_ready: wait for both devices to be ACTIVE with an IPv4 RoCE v2 GID;
# sets TOPO_GID_A and TOPO_GID_B (and, with TOPO_IPV6=1, waits for the GIDs
# of TOPO_IP6_A/B and sets TOPO_GID6_A and TOPO_GID6_B).
topo_ready()
{
	local s ns dev ip6 i

	TOPO_GID_A=$(need_dev_gid "$TOPO_DEV_A") || exit 1
	TOPO_GID_B=$(need_dev_gid "$TOPO_DEV_B") || exit 1
	[ "$TOPO_IPV6" = 1 ] || return 0
	for s in A B; do
		eval "ns=\$TOPO_NS_$s dev=\$TOPO_DEV_$s ip6=\$TOPO_IP6_$s"
		# sysfs shows every namespace's devices (shared rdma mode).
		wait_for 5 roce_v2_gid_of "$dev" "$ip6" ||
			fail "$dev has no RoCE v2 GID for $ip6: $(in_ns "$ns" ip -6 -br addr 2>&1)"
		i=$(roce_v2_gid_of "$dev" "$ip6")
		eval "TOPO_GID6_$s=\$i"
	done
}

# Print the active MTU (bytes) of port 1 of RDMA device $1.
dev_active_mtu()
{
	local k v _

	while read -r k v _; do
		[ "$k" != active_mtu: ] || { echo "$v"; return 0; }
	done <<<"$(ibv_devinfo -d "$1" -i 1)"
}

# Print a one-line summary of the topology.
topo_describe()
{
	echo "$TOPO_DEV_A on $TOPO_IF_A ${TOPO_IP_A} (${TOPO_NS_A:-init_net}, GID $TOPO_GID_A, active MTU $(dev_active_mtu "$TOPO_DEV_A"))" \
		"<-> $TOPO_DEV_B on $TOPO_IF_B $TOPO_IP_B (${TOPO_NS_B:-init_net}, GID $TOPO_GID_B, active MTU $(dev_active_mtu "$TOPO_DEV_B"))"
	if [ "$TOPO_IPV6" = 1 ]; then
		echo "IPv6: $TOPO_DEV_A $TOPO_IP6_A (GID $TOPO_GID6_A) <-> $TOPO_DEV_B $TOPO_IP6_B (GID $TOPO_GID6_B)"
	fi
}

# topo_rxe_scire [MTU]: see above (MTU default 9000).
topo_rxe_scire()
{
	local mtu=${1:-9000} out

	TOPO_NS_A="" TOPO_IF_A=vrxe TOPO_IP_A=$TOPO_NET.1 TOPO_DEV_A=rxeA
	TOPO_NS_B=nsB TOPO_IF_B=vsci TOPO_IP_B=$TOPO_NET.2 TOPO_DEV_B=scireB
	[ -d /sys/module/scire ] || skip "scire is not loaded: no scire device to put on the wire"
	if rdma_has scire0; then
		timeout 60 rdma link delete scire0 || fail "rdma link delete scire0 failed"
		TOPO_SCIRE0_DELETED=1
	fi
	if [ ! -d /sys/module/rdma_rxe ]; then
		out=$(timeout 60 modprobe rdma_rxe 2>&1) ||
			fail "modprobe rdma_rxe failed (is UDP 4791 still held in init_net, by a scire device there?): $out $(dmesg | tail -n 3)"
		TOPO_RXE_LOADED=1
	fi
	topo_veth "$mtu"
	topo_link_add A rxe
	topo_link_add B scire
	topo_ready
}

# topo_scire_pair [MTU]: see above (MTU default 9000).
topo_scire_pair()
{
	local mtu=${1:-9000}

	TOPO_NS_A=nsA TOPO_IF_A=vethA TOPO_IP_A=$TOPO_NET.1 TOPO_DEV_A=scireA
	TOPO_NS_B=nsB TOPO_IF_B=vethB TOPO_IP_B=$TOPO_NET.2 TOPO_DEV_B=scireB
	[ -d /sys/module/scire ] || skip "scire is not loaded: no scire device to put on the wire"
	topo_veth "$mtu"
	topo_link_add A scire
	topo_link_add B scire
	topo_ready
}

# Undo topo_rxe_scire / topo_scire_pair, whatever part of it was done.
# Prints what fails; exit status 1 then.
# SCIF's node table, scire_scif's configfs directory.
SCIF_NODES=/sys/kernel/config/scif/nodes

# scif_need: skip unless scire_scif is loaded; fail if it is but /dev/scif
# or its node table is missing.
scif_need()
{
	[ -d /sys/module/scire_scif ] || skip "scire_scif is not loaded (make kernel builds it)"
	[ -c /dev/scif ] || fail "/dev/scif missing although scire_scif is loaded"
	[ -d "$SCIF_NODES" ] || fail "$SCIF_NODES missing: configfs not mounted?"
}

# scif_two_nodes [MTU]: topo_scire_pair [MTU], then node 1 at nsA's address
# and node 2 at nsB's in the node table: two SCIF nodes of this kernel.
scif_two_nodes()
{
	topo_scire_pair "$@"
	mkdir "$SCIF_NODES/1" "$SCIF_NODES/2" || fail "cannot create nodes 1 and 2"
	echo "$TOPO_IP_A" >"$SCIF_NODES/1/addr" && echo "$TOPO_IP_B" >"$SCIF_NODES/2/addr" ||
		fail "cannot set the nodes' addresses"
}

# scif_two_nodes_teardown: undo scif_two_nodes, whatever part of it was done.
scif_two_nodes_teardown()
{
	rmdir "$SCIF_NODES/1" "$SCIF_NODES/2" 2>/dev/null
	topo_teardown
}

# topo_static_neigh: permanent neighbour entries for the two veth ends, so
# that address resolution (modify_qp to RTR, rdma_cm) never has to get an
# ARP exchange through a lossy qdisc (netem drops ARP like anything else).
topo_static_neigh()
{
	local mac_a mac_b

	mac_a=$(in_ns "$TOPO_NS_A" cat "/sys/class/net/$TOPO_IF_A/address") || return 1
	mac_b=$(in_ns "$TOPO_NS_B" cat "/sys/class/net/$TOPO_IF_B/address") || return 1
	in_ns "$TOPO_NS_A" ip neigh replace "$TOPO_IP_B" lladdr "$mac_b" dev "$TOPO_IF_A" nud permanent &&
		in_ns "$TOPO_NS_B" ip neigh replace "$TOPO_IP_A" lladdr "$mac_a" dev "$TOPO_IF_B" nud permanent
}

topo_teardown()
{
	local ok=0 d ns out

	for d in "$TOPO_DEV_A" "$TOPO_DEV_B"; do
		{ [ -n "$d" ] && rdma_has "$d"; } || continue
		out=$(timeout 60 rdma link delete "$d" 2>&1) || { echo "teardown: rdma link delete $d: $out"; ok=1; }
	done
	# Deleting one end of a veth pair deletes both.
	if [ -n "$TOPO_IF_A" ]; then
		out=$(in_ns "$TOPO_NS_A" ip link del "$TOPO_IF_A" 2>&1) ||
			[[ $out == *"Cannot find device"* ]] || { echo "teardown: ip link del $TOPO_IF_A: $out"; ok=1; }
	fi
	for ns in "$TOPO_NS_A" "$TOPO_NS_B"; do
		[ -n "$ns" ] && [ -e "/run/netns/$ns" ] || continue
		ip netns del "$ns" || { echo "teardown: ip netns del $ns failed"; ok=1; }
	done
	if [ "$TOPO_RXE_LOADED" = 1 ]; then
		# The module reference of a just-closed device is dropped
		# asynchronously: give rmmod a few tries.
		wait_for 10 timeout 10 rmmod rdma_rxe || { echo "teardown: rmmod rdma_rxe failed"; ok=1; }
		TOPO_RXE_LOADED=0
	fi
	if [ "$TOPO_SCIRE0_DELETED" = 1 ]; then
		out=$(timeout 60 rdma link add scire0 type scire netdev eth0 2>&1) ||
			{ echo "teardown: rdma link add scire0 type scire netdev eth0: $out"; ok=1; }
		TOPO_SCIRE0_DELETED=0
	fi
	TOPO_DEV_A="" TOPO_DEV_B=""
	return $ok
}

# Has process $1 exited?
pid_gone()
{
	! kill -0 "$1" 2>/dev/null
}

# listening_in PID NS PORT: process PID is in netns NS (empty: ours), and
# something there listens on TCP PORT.
listening_in()
{
	local want

	want=$(readlink /proc/self/ns/net)
	[ -z "$2" ] || want="net:[$(stat -L -c %i "/run/netns/$2")]"
	[ "$(readlink "/proc/$1/ns/net")" = "$want" ] && listening "$1" "$3"
}

# Is something in netns $1 (empty: here) listening on TCP port $2?
tcp_listening_ns()
{
	in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# ucx_mode_args: prints "-P 0" where ucx_perftest runs as an MPI program
# unless told not to (UCX built with MPI support, e.g. trixie's 1.18: "-P
# <0|1> disable/enable MPI mode (1)"), so that a server and client started
# by hand meet over their TCP port as ucx_perftest(1) describes; nothing
# for a ucx_perftest without that option (bookworm's 1.13).
ucx_mode_args()
{
	ucx_perftest -h 2>&1 | grep -q -- '-P <0|1>' && echo "-P 0"
	return 0
}

# cm_listening PORT [NS]: is an rdma_cm ID listening on PORT, as rdma(8)
# sees it from NS (any namespace's in shared netns mode; in exclusive mode
# only those of NS's devices)?
cm_listening()
{
	in_ns "${2:-}" rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1\>"
}

# pair_run_ns SECS READY SERVER_NS CLIENT_NS SERVER_CMD... -- CLIENT_CMD...
#
# pair_run for two devices in two namespaces: runs SERVER_CMD in netns
# SERVER_NS (empty: here); once it is ready runs CLIENT_CMD (which names
# the server's address itself) in CLIENT_NS. READY is tcp:PORT (the server
# listens on TCP PORT in its netns: ibv_*_pingpong, perftest) or cm:PORT
# (an rdma_cm ID listens on PORT: rping, ucmatose, udaddy, perftest -R).
# Each side runs under timeout SECS. A side's output is its stdout, then
# its stderr (kept apart so that what one thread prints to stderr cannot
# land inside a long stdout line another printed). Prints the client's
# output and copies the server's to file $PAIR_SERVER_OUT if that is set
# (callers capture the output with $(...), a subshell: it cannot hand back
# more); exit status 0 if both sides exited 0, else prints both outputs
# and what went wrong.
PAIR_SERVER_OUT=${PAIR_SERVER_OUT:-}
pair_run_ns()
{
	local secs=$1 ready=$2 sns=$3 cns=$4 tmp spid src crc
	local -a srv=() cli=() up=()

	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	[ $# -gt 0 ] || { echo "pair_run_ns: no -- between server and client commands"; return 2; }
	shift
	cli=("$@")
	case $ready in
	tcp:* | cm:*) ;;
	*) echo "pair_run_ns: READY must be tcp:PORT or cm:PORT, not '$ready'"; return 2 ;;
	esac
	tmp=$(mktemp -d)
	# Not through in_ns: $! must be timeout itself (ip netns exec execs
	# it), which passes a kill on to the server.
	if [ -n "$sns" ]; then
		ip netns exec "$sns" timeout -k 5 "$secs" "${srv[@]}" >"$tmp/server" 2>"$tmp/server.err" &
	else
		timeout -k 5 "$secs" "${srv[@]}" >"$tmp/server" 2>"$tmp/server.err" &
	fi
	spid=$!
	# The server's own /proc/PID/net shows its netns's sockets once ip
	# netns exec has moved it there (then it execs timeout, keeping PID).
	case $ready in
	tcp:*) up=(listening_in "$spid" "$sns" "${ready#tcp:}") ;;
	cm:*) up=(cm_listening "${ready#cm:}" "$sns") ;;
	esac
	if ! wait_for 20 "${up[@]}"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		cat "$tmp/server.err" >>"$tmp/server"
		echo "server '${srv[*]}' (netns ${sns:-init_net}) was not ready ($ready) within 20 s; its output:"
		sed 's/^/  | /' "$tmp/server"
		rm -rf "$tmp"
		return 1
	fi
	in_ns "$cns" timeout -k 5 "$secs" "${cli[@]}" >"$tmp/client" 2>"$tmp/client.err"
	crc=$?
	cat "$tmp/client.err" >>"$tmp/client"
	# A server whose client failed may wait for it forever: give it a
	# moment to notice, not the whole timeout.
	if [ "$crc" != 0 ] && ! wait_for 5 pid_gone "$spid"; then
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	src=$?
	cat "$tmp/server.err" >>"$tmp/server"
	[ -z "$PAIR_SERVER_OUT" ] || cp "$tmp/server" "$PAIR_SERVER_OUT"
	if [ "$src" = 0 ] && [ "$crc" = 0 ]; then
		cat "$tmp/client"
		rm -rf "$tmp"
		return 0
	fi
	echo "server '${srv[*]}' (netns ${sns:-init_net}): exit status $src;" \
		"client '${cli[*]}' (netns ${cns:-init_net}): exit status $crc (124: timed out after ${secs}s)"
	echo "server output:"
	sed 's/^/  | /' "$tmp/server"
	echo "client output:"
	sed 's/^/  | /' "$tmp/client"
	rm -rf "$tmp"
	return 1
}

# --- checking tools' output ------------------------------------------------------

# rping_verify FILE PREFIX COUNT SIZE: FILE (rping -v output) must hold
# exactly COUNT lines starting with PREFIX ("ping data: " for the client,
# what the server wrote back; "server ping data: " for the server, what it
# read), line i the text rping -c puts in ping i of SIZE bytes: "rdma-ping-i: "
# then letters cycling through ASCII 65..122 from 65 + i % 58, up to the
# terminating NUL at SIZE - 1. Prints the first difference; exit status 1
# then.
rping_verify()
{
	awk -v pfx="$2" -v n="$3" -v size="$4" '
	BEGIN {
		# Every run of the cycle, long enough for any start.
		for (c = 65; c <= 122; c++)
			cyc = cyc sprintf("%c", c)
		pat = cyc
		while (length(pat) < size + 58)
			pat = pat pat
		got = 0
	}
	index($0, pfx) == 1 {
		hdr = sprintf("rdma-ping-%d: ", got)
		want = hdr substr(pat, got % 58 + 1, size - 1 - length(hdr))
		line = substr($0, length(pfx) + 1)
		if (line != want) {
			for (k = 1; k <= length(want) && substr(line, k, 1) == substr(want, k, 1); k++)
				;
			printf "ping %d: %d bytes printed, %d expected; first difference at byte %d: got \"%s\", expected \"%s\"\n",
				got, length(line), length(want), k - 1, substr(line, k, 16), substr(want, k, 16)
			bad = 1
			exit
		}
		got++
	}
	END {
		if (bad)
			exit 1
		if (got != n) {
			printf "%d lines \"%s...\", expected %d\n", got, pfx, n
			exit 1
		}
	}' "$1"
}

# perftest_verify OUTPUT SIZE ITERS: OUTPUT (perftest's, as a string) must
# have a result line for SIZE bytes and ITERS iterations whose figures (BW
# or latencies) are all numbers (not nan or inf). Not that they are above
# zero: under TCG perftest's cycle-counter calibration can fail ("r^2 <
# 0.9") and its figures come out as 0.00 however much moved. When it says
# so, a latency tool's figures (divided by that 0 MHz) may be inf or nan
# instead: the line must still be there, for SIZE and ITERS. Prints that
# line, or what is wrong (exit status 1).
perftest_verify()
{
	local calib=0

	grep -Eq 'Correlation coefficient r\^2: [0-9.]+ < 0\.9' <<<"$1" && calib=1
	awk -v size="$2" -v iters="$3" -v calib="$calib" '
	$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 4 {
		line = $0
		if ($1 != size || $2 != iters) {
			why = "result line for " $1 " bytes, " $2 " iterations; expected " size " and " iters
			next
		}
		for (i = 3; i <= NF; i++)
			if ($i !~ /^[0-9]+(\.[0-9]+)?$/ &&
			    !(calib && $i ~ /^(inf|-?nan)$/))
				why = "figure " i " (\"" $i "\") is not a number"
		found = 1
	}
	END {
		if (!found || why) {
			print (why ? why : "no result line") (line ? ": " line : "")
			exit 1
		}
		gsub(/[ \t]+/, " ", line)
		print line (calib ? " (perftest: clock calibration failed, r^2 < 0.9)" : "")
	}' <<<"$1"
}

# --- collecting results ------------------------------------------------------------
#
# Interop tests run a matrix of tools and directions: every cell runs, and
# the test fails at the end listing the cells that did not pass.

CHECK_FAILED=()
CHECK_COUNT=0

# check_run NAME CMD...: run CMD (a command or function; its output is
# shown indented), record NAME as failed if it exits non-zero.
check_run()
{
	local name=$1 start=$SECONDS out rc

	shift
	CHECK_COUNT=$((CHECK_COUNT + 1))
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok: $name ($((SECONDS - start)) s)"
	else
		echo "FAILED: $name ($((SECONDS - start)) s)"
		CHECK_FAILED+=("$name")
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/    /'
	return "$rc"
}

# check_report: exit 0 if every check_run passed, else fail listing those
# that did not.
check_report()
{
	local n=${#CHECK_FAILED[@]}

	[ "$n" = 0 ] && { echo "all $CHECK_COUNT checks passed"; return 0; }
	fail "$n of $CHECK_COUNT checks failed: $(printf '\n  %s' "${CHECK_FAILED[@]}")"
}

# --- rdma_cm tool pairs (71, 92) ------------------------------------------------
#
# Each runs one server/client pair of a librdmacm tool through pair_run_ns
# and checks what both sides printed; output says what ran or what differed.

# cm_rping SERVER_NS SERVER_IP CLIENT_NS SIZE COUNT PORT: rping -v -V, and
# rping_verify on both sides' ping data.
cm_rping()
{
	local sns=$1 sip=$2 cns=$3 size=$4 count=$5 port=$6 out
	local PAIR_SERVER_OUT

	PAIR_SERVER_OUT=$(mktemp)
	out=$(pair_run_ns 60 "cm:$port" "$sns" "$cns" rping -s -v -V -a "$sip" -p "$port" -S "$size" -- \
		rping -c -v -V -a "$sip" -p "$port" -S "$size" -C "$count") || {
		echo "$out"
		rm -f "$PAIR_SERVER_OUT"
		return 1
	}
	printf '%s\n' "$out" >"$PAIR_SERVER_OUT.client"
	if grep -m1 'data mismatch' "$PAIR_SERVER_OUT.client" ||
		! rping_verify "$PAIR_SERVER_OUT.client" "ping data: " "$count" "$size" ||
		! rping_verify "$PAIR_SERVER_OUT" "server ping data: " "$count" "$size"; then
		echo "(\"ping data\": what the client got written back; \"server ping data\": what the server read)"
		rm -f "$PAIR_SERVER_OUT" "$PAIR_SERVER_OUT.client"
		return 1
	fi
	rm -f "$PAIR_SERVER_OUT" "$PAIR_SERVER_OUT.client"
	echo "$count pings of $size bytes read by the server and written back intact"
}

# cm_tool ucmatose|udaddy SERVER_NS SERVER_IP CLIENT_NS CONNS COUNT SIZE
# PORT: exit status 0 and "return status 0" on both sides. udaddy has no
# port option: PORT must be its fixed 7174.
cm_tool()
{
	local tool=$1 sns=$2 sip=$3 cns=$4 conns=$5 count=$6 size=$7 port=$8 out rc=0
	local PAIR_SERVER_OUT
	local -a p=()

	[ "$tool" = ucmatose ] && p=(-p "$port")
	PAIR_SERVER_OUT=$(mktemp)
	out=$(pair_run_ns 60 "cm:$port" "$sns" "$cns" "$tool" -b "$sip" "${p[@]}" -c "$conns" \
		-C "$count" -S "$size" -- "$tool" -s "$sip" "${p[@]}" -c "$conns" -C "$count" -S "$size") || {
		echo "$out"
		rm -f "$PAIR_SERVER_OUT"
		return 1
	}
	if ! grep -q '^return status 0$' <<<"$out" || ! grep -q '^return status 0$' "$PAIR_SERVER_OUT"; then
		echo "exit status 0 but not 'return status 0' on both sides; client:"
		printf '%s\n' "$out" | sed 's/^/  | /'
		echo "server:"
		sed 's/^/  | /' "$PAIR_SERVER_OUT"
		rc=1
	else
		echo "$conns x $count messages of $size bytes; return status 0 on both sides"
	fi
	rm -f "$PAIR_SERVER_OUT"
	return $rc
}

# cm_perftest TOOL SERVER_NS SERVER_DEV SERVER_IP CLIENT_NS CLIENT_DEV SIZE
# ITERS PORT [ARG...]: TOOL -R, perftest_verify on the client's output
# (SIZE empty: the tool's fixed size, 8 for atomics).
#
# perftest 4.5 with -R makes two rdma_cm connections on PORT: a control
# one, then, once it is up, the server listens again for the test QPs. Its
# client does not wait for that second listen: when its REQ (SIDR REQ for
# -c UD) gets there first, the server's CM answers "invalid service ID"
# (REJ reason 8; SIDR status 1), and the client, meaning to retry, crashes.
# That one case, recognised by the client's message, is run again (twice
# at most, saying so); any other failure fails.
cm_perftest()
{
	local tool=$1 sns=$2 sdev=$3 sip=$4 cns=$5 cdev=$6 size=$7 iters=$8 port=$9 out try
	local -a szopt=()

	shift 9
	command -v "$tool" >/dev/null || { echo "$tool missing (Debian package perftest)"; return 1; }
	[ -n "$size" ] && szopt=(-s "$size")
	for try in 1 2 3; do
		out=$(pair_run_ns 120 "cm:$port" "$sns" "$cns" \
			"$tool" -R -d "$sdev" -F -n "$iters" "${szopt[@]}" -p "$port" "$@" -- \
			"$tool" -R -d "$cdev" -F -n "$iters" "${szopt[@]}" -p "$port" "$@" "$sip") && break
		if [ "$try" = 3 ] ||
			! grep -Eq 'RDMA_CM_EVENT_(REJECTED; error: 8|UNREACHABLE; error: 1)\.' <<<"$out"; then
			echo "$out"
			return 1
		fi
		echo "try $try: the client connected before the server listened for the test QPs" \
			"($(grep -Eo 'RDMA_CM_EVENT_[A-Z]+; error: [0-9]+' <<<"$out" | head -n1)): again"
	done
	perftest_verify "$out" "${size:-8}" "$iters" || { printf '%s\n' "$out" | sed 's/^/  | /'; return 1; }
}

# rdma_counters DEV: print port 1's hw counters of RDMA device DEV (rdma
# statistic show link DEV/1) as "NAME=VALUE" lines; exit status 1, printing
# what rdma said, if it has none.
rdma_counters()
{
	local out f v hw=/sys/class/infiniband/$1/ports/1/hw_counters

	# sysfs first (the same counters, no process: rdma(8) costs most of
	# a second per call in a TCG guest); rdma(8) for a device this
	# sysfs does not show (another netns in exclusive mode).
	if [ -d "$hw" ]; then
		for f in "$hw"/*; do
			[ "${f##*/}" != lifespan ] && read -r v <"$f" && [[ $v =~ ^[0-9]+$ ]] &&
				out+="${f##*/}=$v"$'\n'
		done
		[ -z "$out" ] || { printf '%s' "$out"; return 0; }
	fi
	out=$(timeout 30 rdma statistic show link "$1/1" 2>&1) || { echo "$out"; return 1; }
	awk '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ /^[0-9]+$/ && $i !~ /^[0-9]+$/) print $i "=" $(i + 1) }' <<<"$out" |
		grep . || { echo "no counters in: $out"; return 1; }
}

# rdma_counter DEV NAME: print hw counter NAME of port 1 of RDMA device DEV;
# exit status 1 if it has no such counter (or none at all).
rdma_counter()
{
	local v

	if [ "$2" != lifespan ] && [ -f "/sys/class/infiniband/$1/ports/1/hw_counters/$2" ]; then
		read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" && [ -n "$v" ] &&
			echo "$v" && return 0
		return 1
	fi
	rdma_counters "$1" 2>/dev/null | sed -n "s/^$2=//p" | grep .
}

FAST_PATH_PARAM=/sys/module/scire/parameters/fast_path

# fast_path_modes DEV: the values of scire's fast_path module parameter a
# same-host test on RDMA device DEV runs under: "1 0" (same-host units,
# then the wire path) for a scire device, "-" (leave it) for another.
fast_path_modes()
{
	if dev_is_scire "$1" && [ -w "$FAST_PATH_PARAM" ]; then
		echo "1 0"
	else
		echo "-"
	fi
}

# fast_path_name MODE: how a test names the mode in its output.
fast_path_name()
{
	case $1 in
	1) echo "fast path" ;;
	0) echo "wire path" ;;
	*) echo "as loaded" ;;
	esac
}

# local_sent DEV: same-host requests DEV's QPs handed over so far, as
# units (local_units) or directly to the peer's responder (local_direct).
local_sent()
{
	local units direct

	units=$(rdma_counter "$1" local_units) || return 1
	direct=$(rdma_counter "$1" local_direct) || return 1
	echo $((units + direct))
}

# run_fast_path MODE DEV CMD...: run CMD with scire's fast_path parameter at
# MODE (1 or 0; "-": as it is), then put it back to 1. QPs take the value
# when they enter RTS. Besides CMD's own status, fails (saying so) if DEV's
# counters say the other path was taken: same-host requests (local_sent)
# must grow under 1 and stay still under 0.
run_fast_path()
{
	local mode=$1 dev=$2 before after rc=0

	shift 2
	[ "$mode" != - ] || { "$@"; return; }
	echo "$mode" >"$FAST_PATH_PARAM" || { echo "cannot write $FAST_PATH_PARAM"; return 1; }
	before=$(local_sent "$dev") || { echo "$dev has no local_units or local_direct counter"; return 1; }
	"$@" || rc=$?
	after=$(local_sent "$dev")
	echo 1 >"$FAST_PATH_PARAM"
	[ "$rc" -eq 0 ] || return "$rc"
	if [ "$mode" = 1 ] && [ "$after" -le "$before" ]; then
		echo "fast_path=1, yet $dev handed over no same-host request (local_units + local_direct stayed at $before)"
		return 1
	fi
	if [ "$mode" = 0 ] && [ "$after" -ne "$before" ]; then
		echo "fast_path=0, yet $dev handed over $((after - before)) same-host requests"
		return 1
	fi
}

# fast_path_each DEV CMD...: run CMD in each of DEV's fast_path_modes
# through run_fast_path, saying which, and fail the test naming CMD and the
# mode if one run fails.
fast_path_each()
{
	local dev=$1 mode

	shift
	for mode in $(fast_path_modes "$dev"); do
		echo "--- $(fast_path_name "$mode")"
		run_fast_path "$mode" "$dev" "$@" ||
			fail "$(basename "$1") on $dev, $(fast_path_name "$mode"): see above"
	done
}

# integrity_pair DEV_A GID_A DEV_B GID_B [ARG...]: scire_integrity with QP
# A on DEV_A and QP B on DEV_B, so its traffic crosses the wire between
# them (two QPs of one scire device talk through the driver's loopback).
# With -R if either is not scire (rdma-core 44's rxe provider quirks, see
# scire_integrity.c, for the QP on that device only). Fails, saying so, if
# scire_integrity has no two-device mode (-D DEV2 -G GIDIDX2).
integrity_pair()
{
	local prog="$SCIRE_BUILD/selftests/scire_integrity" a=$1 ga=$2 b=$3 gb=$4 dev
	local -a quirks=()

	shift 4
	[ -x "$prog" ] || { echo "missing $prog: run make"; return 1; }
	if timeout 10 "$prog" -D "$b" 2>&1 | grep -q "invalid option -- 'D'"; then
		echo "scire_integrity cannot put its two QPs on two devices: it needs -D DEV2 [-G GIDIDX2]" \
			"(QP B with its CQs, PD and MRs on DEV2; -R then for the QP on a non-scire device only)"
		return 1
	fi
	{ dev_is_scire "$a" && dev_is_scire "$b"; } || quirks=(-R)
	timeout -k 5 300 "$prog" -d "$a" -g "$ga" -D "$b" -G "$gb" "${quirks[@]}" "$@" && return 0
	# What both devices counted (retransmits, NAKs, drops) tells a lost
	# packet from a stuck state machine.
	for dev in "$a" "$b"; do
		echo "$dev counters (non-zero): $(rdma stat show link "$dev/1" 2>&1 |
			awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf "%s %s ", $i, $(i + 1) }')"
	done
	return 1
}

# pingpong_pair TOOL SERVER_NS SERVER_DEV SERVER_GID SERVER_IP CLIENT_NS
# CLIENT_DEV CLIENT_GID PORT SIZE ITERS [ARG...]: ibv_rc_pingpong or
# ibv_ud_pingpong -c (each side checks every buffer it receives) between two
# devices, TCP exchange on PORT at SERVER_IP; both sides must report SIZE *
# ITERS * 2 bytes moved. Prints the client's "bytes in" line.
pingpong_pair()
{
	local tool=$1 sns=$2 sdev=$3 sgid=$4 sip=$5 cns=$6 cdev=$7 cgid=$8 port=$9
	local size=${10} n=${11} out want rc=0
	local PAIR_SERVER_OUT

	shift 11
	PAIR_SERVER_OUT=$(mktemp)
	out=$(pair_run_ns 120 "tcp:$port" "$sns" "$cns" \
		"$tool" -d "$sdev" -g "$sgid" -p "$port" -s "$size" -n "$n" -c "$@" -- \
		"$tool" -d "$cdev" -g "$cgid" -p "$port" -s "$size" -n "$n" -c "$@" "$sip") || {
		echo "$out"
		rm -f "$PAIR_SERVER_OUT"
		return 1
	}
	want="$((size * n * 2)) bytes in"
	if ! grep -q "^$want" <<<"$out" || ! grep -q "^$want" "$PAIR_SERVER_OUT"; then
		echo "expected '$want ...' from both sides; client:"
		printf '%s\n' "$out" | sed 's/^/  | /'
		echo "server:"
		sed 's/^/  | /' "$PAIR_SERVER_OUT"
		rc=1
	else
		grep -m1 'bytes in' <<<"$out"
	fi
	rm -f "$PAIR_SERVER_OUT"
	return $rc
}

# pair_has_rxe: on a VM pair, is rdma_rxe the device of either host? Both
# hosts get the same answer, so they take the same branches.
pair_has_rxe()
{
	[ "${SCIRE_DEV_KIND:-}" = rxe ] || [ "${SCIRE_PEER_DEV_KIND:-}" = rxe ]
}

# --- N hosts (scripts/vm --hosts N; a pair is N = 2) ----------------------------

# hosts_names: the hosts of this run, "a b" to "a b c d" (one per address
# in SCIRE_HOSTS; a pair's scripts/vm-pair from before SCIRE_HOSTS: a b).
hosts_names()
{
	local n=2

	[ -z "${SCIRE_HOSTS:-}" ] || n=$(wc -w <<<"$SCIRE_HOSTS")
	echo "a b c d" | cut -d' ' -f"1-$n"
}

# host_index H: H's place in host order, from 1 (a = 1).
host_index()
{
	case $1 in a) echo 1 ;; b) echo 2 ;; c) echo 3 ;; d) echo 4 ;; *) return 1 ;; esac
}

# host_addr H: host H's eth0 address (SCIRE_HOSTS).
host_addr()
{
	local i

	i=$(host_index "$1") || return 1
	awk -v i="$i" '{ print $i }' <<<"${SCIRE_HOSTS:-192.168.78.1 192.168.78.2}"
}

# host_dev H: host H's RDMA device kind on eth0, scire, rxe or none
# (SCIRE_HOSTS_DEVS).
host_dev()
{
	local i

	i=$(host_index "$1") || return 1
	awk -v i="$i" '{ print $i }' <<<"${SCIRE_HOSTS_DEVS:-}"
}

# hosts_sync NAME [SECONDS [HOST...]]: on VM hosts (scripts/vm --hosts or
# --pair), return once every HOST (default: every host of the run) has
# called hosts_sync NAME too (default: wait 300 s, then fail). NAME is
# taken within the calling test: one boot runs several tests, and each
# one's "start" (or hosts_duo's "duo1-up") is its own. A host that is not
# among HOST... only leaves its mark.
hosts_sync()
{
	local what=$1 name=${0##*/}.$1 secs=${2:-300} h
	local -a hs=()

	if [ -z "${SCIRE_SHARED:-}" ] || [ -z "${SCIRE_HOST:-}" ]; then
		echo "hosts_sync: not on VM hosts (scripts/vm --hosts or --pair)" >&2
		return 1
	fi
	shift $(($# < 2 ? $# : 2))
	if [ $# -gt 0 ]; then hs=("$@"); else read -ra hs <<<"$(hosts_names)"; fi
	touch "$SCIRE_SHARED/sync.$name.$SCIRE_HOST" || return 1
	for h in "${hs[@]}"; do
		wait_for "$secs" test -e "$SCIRE_SHARED/sync.$name.$h" || {
			echo "hosts_sync $what: host $h did not get there in ${secs}s" >&2
			return 1
		}
	done
}

# pair_sync NAME [SECONDS]: on a VM pair (scripts/vm --pair), return once
# the other host has called pair_sync NAME too (default: wait 300 s, then
# fail): hosts_sync NAME SECONDS, every host of the run.
pair_sync()
{
	hosts_sync "$1" "${2:-300}"
}

# serving PID: does the command that timeout PID runs listen yet, on a TCP
# port of this netns (ibv_*_pingpong, perftest, iperf3, ucx_perftest,
# fi_pingpong) or with an rdma_cm ID (rping, perftest -R)? Those servers
# set up their verbs resources before they listen, so a client may start.
serving()
{
	local p

	for p in $(pgrep -P "$1"); do
		ss -Hltnp 2>/dev/null | grep -q "pid=$p," && return 0
		rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
			grep -q " pid $p " && return 0
	done
	return 1
}

# pair_duo NAME SERVER_HOST SERVER_CMD... -- CLIENT_CMD...: on a VM pair,
# SERVER_CMD runs on host SERVER_HOST (a or b) and CLIENT_CMD, once the
# server listens (serving; a server it cannot see gets 2 s), on the other
# host (retried a few times while the server may not listen yet). Both
# hosts return together; the status is that of this host's half (0 on the
# host that had nothing to run only if nothing failed there). Output goes
# to stdout with the name. The client's status is passed to the server's
# host through the shared directory; a server still running PAIR_DUO_GRACE
# (30) seconds after its client ended is stopped (status 124), so one hung
# server cannot put the hosts out of step for the tests that follow. On
# return, PAIR_DUO_PEER holds the client's status on the server's host
# (empty elsewhere), PAIR_DUO_LATE is 1 if the server was stopped that
# way, and PAIR_DUO_OUTPUT is what this host's half printed (for a test
# that checks more than the status: the addresses a tool reports, say).
pair_duo()
{
	local other

	other=$([ "$2" = a ] && echo b || echo a)
	hosts_duo "$1" "$2" "$other" "${@:3}"
}

# hosts_duo NAME SERVER_HOST CLIENT_HOST SERVER_CMD... -- CLIENT_CMD...:
# pair_duo between two of N hosts (scripts/vm --hosts): SERVER_CMD runs
# on SERVER_HOST, CLIENT_CMD on CLIENT_HOST, and every other host only
# keeps step (it returns 0 with the others). CLIENT_CMD names the
# server's address itself (host_addr).
hosts_duo()
{
	local name=$1 shost=$2 chost=$3 rc=0 out pid i start cfile done_at
	local -a scmd=() ccmd=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	shift
	ccmd=("$@")
	PAIR_DUO_N=$((${PAIR_DUO_N:-0} + 1))
	PAIR_DUO_PEER=
	PAIR_DUO_LATE=0
	PAIR_DUO_OUTPUT=
	cfile=$SCIRE_SHARED/${0##*/}.duo$PAIR_DUO_N.client
	out=$(mktemp)
	start=$(date +%s)
	if [ "$SCIRE_HOST" = "$shost" ]; then
		timeout 180 "${scmd[@]}" >"$out" 2>&1 &
		pid=$!
		wait_for 2 serving "$pid"
		hosts_sync "duo$PAIR_DUO_N-up" || rc=1
		done_at=
		while kill -0 "$pid" 2>/dev/null; do
			if [ -z "$done_at" ] && [ -s "$cfile" ]; then
				done_at=$(date +%s)
			elif [ -n "$done_at" ] &&
				[ $(($(date +%s) - done_at)) -ge "${PAIR_DUO_GRACE:-30}" ]; then
				PAIR_DUO_LATE=1
				kill "$pid" 2>/dev/null
				echo "still running ${PAIR_DUO_GRACE:-30} s after the client ended: stopped" >>"$out"
				break
			fi
			sleep 0.2
		done
		wait "$pid" || rc=$?
		[ "$PAIR_DUO_LATE" = 0 ] || rc=124
		[ -s "$cfile" ] && PAIR_DUO_PEER=$(cat "$cfile")
		echo "$name: server on $SCIRE_HOST: $([ "$rc" = 0 ] && echo ok || echo "FAILED (status $rc)") ($(($(date +%s) - start)) s)"
	elif [ "$SCIRE_HOST" = "$chost" ]; then
		hosts_sync "duo$PAIR_DUO_N-up" || rc=1
		for i in 1 2 3 4 5; do
			timeout 150 "${ccmd[@]}" >"$out" 2>&1 && { rc=0; break; }
			rc=$?
			# Refused: the server is not listening yet.
			grep -qiE 'refused|unable to connect|couldn.t connect|REJECTED' "$out" || break
			sleep 2
		done
		echo "$rc" >"$cfile"
		echo "$name: client on $SCIRE_HOST: $([ "$rc" = 0 ] && echo ok || echo "FAILED (status $rc)") ($(($(date +%s) - start)) s)"
	else
		hosts_sync "duo$PAIR_DUO_N-up" || rc=1
	fi
	[ "$rc" = 0 ] || sed 's/^/    /' "$out" | tail -n 20
	PAIR_DUO_OUTPUT=$(cat "$out")
	rm -f "$out"
	hosts_sync "duo$PAIR_DUO_N-done" || rc=1
	return "$rc"
}

# perftest_value TOOL SIZE SECS OUTPUT: print "VALUE NOTE" from the client's
# perftest OUTPUT (TOOL at SIZE bytes; a bandwidth tool in duration mode,
# -D SECS), or a reason it has none (exit status 1). bench/run-guest.sh
# and scripts/demo-guest read perftest with it.
#
# bw, duration mode: "#bytes #iterations BW-peak BW-average MsgRate".
# VALUE is #iterations * size / window. perftest's own BW average is the
# same quotient timed with the cycle counter, whose calibration (redone
# when it reports) fails in about a third of the runs under TCG ("r^2 <
# 0.9": it then prints 0.00); it goes into NOTE for comparison.
# lat: "#bytes #iterations t_min t_max t_typical ..."; t_typical has no
# such fallback, so a failed calibration fails the run.
perftest_value()
{
	local tool=$1 size=$2 secs=$3 out=$4

	awk -v tool="$tool" -v size="$size" -v secs="$secs" '
	/Correlation coefficient/ { calib = 1 }
	$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 && $1 == size {
		for (i = 3; i <= NF; i++)
			if ($i !~ /^[0-9]+(\.[0-9]+)?$/)
				bad = "figure " i " (" $i ") is not a number: " $0
		line = $0
		iters = $2
		if (tool ~ /_bw$/)
			pt = $4
		else
			typ = $5
	}
	END {
		if (line == "") {
			print "no result line for " size " bytes"
			exit 1
		}
		if (bad != "") {
			print bad
			exit 1
		}
		if (tool ~ /_bw$/) {
			printf "%.6f perftest=%s,iters=%s\n", iters * size / secs / 1048576, pt, iters
			exit 0
		}
		if (typ + 0 <= 0) {
			if (calib)
				print "t_typical " typ ": perftest cycle-counter calibration failed (r^2 < 0.9)"
			else
				print "t_typical " typ " is not above 0"
			exit 1
		}
		print typ
	}' <<<"$out"
}

# trace_open NAME KB [EVENT...]: a trace instance of its own for scire's
# events (tracefs mounted if it is not), KB KiB of buffer per CPU, with
# the EVENTs enabled (every scire event when none is named); prints its
# directory. Fails (status 1, nothing printed, nothing left behind) if
# tracefs, the scire events or the instance are not to be had. Undo with
# trace_close.
trace_open()
{
	local tracing=/sys/kernel/tracing name=$1 kb=$2 inst ev

	shift 2
	[ -d "$tracing/events" ] || mount -t tracefs tracefs "$tracing" 2>/dev/null ||
		return 1
	[ -d "$tracing/events/scire" ] || return 1
	inst=$tracing/instances/$name
	mkdir "$inst" 2>/dev/null || return 1
	if ! echo "$kb" >"$inst/buffer_size_kb"; then
		rmdir "$inst"
		return 1
	fi
	for ev in "${@:-}"; do
		if ! echo 1 >"$inst/events/scire${ev:+/$ev}/enable"; then
			trace_close "$inst"
			return 1
		fi
	done
	echo "$inst"
}

# trace_close DIR: disable a trace_open instance's events and remove it.
trace_close()
{
	[ -d "$1" ] || return 0
	echo 0 >"$1/events/scire/enable"
	rmdir "$1"
}

# debug_quick: true in make check's debug boot (the debug kernel without
# SCIRE_DEBUG_FULL=1), where a test slow under KASAN and lockdep may take
# smaller sizes; false on the stock kernel and in make check-debug.
debug_quick()
{
	[ "${SCIRE_KERNEL:-stock}" = debug ] && [ "${SCIRE_DEBUG_FULL:-0}" != 1 ]
}

# ktest_round KO WHAT: load the self-checking test module KO (its init runs
# the checks and fails if any does), show its log lines, unload it. Fails
# the test unless the module loaded and logged "NAME: PASS <n> checks" with
# n > 0 (NAME: KO's file name without .ko).
ktest_round()
{
	local ko=$1 what=$2 name mark rc out log

	name=$(basename "$ko" .ko)
	mark=$(kmsg_mark)
	out=$(timeout 600 insmod "$ko" 2>&1)
	rc=$?
	log=$(kmsg_since "$mark" | grep -a "$name: ")
	printf '%s: insmod status %s%s\n%s\n' "$what" "$rc" "${out:+: $out}" "$log"
	if [ -d "/sys/module/$name" ]; then
		rmmod "$name" || fail "rmmod $name failed"
	fi
	[ "$rc" = 0 ] || fail "$what: a check failed"
	grep -Eq "$name: PASS [1-9][0-9]* checks" <<<"$log" ||
		fail "$what: no 'PASS <n> checks' line"
}

# --- the scire_ib link type (120, 121) ----------------------------------------

# The two ends of ib_link_pair: sib0 on IB_IF_A (init_net, IB_IP_A), sib1
# on IB_IF_B in netns IB_NS (IB_IP_B); MTU 9000, so IB MTU 4096.
IB_NS=scire-ib-b IB_IF_A=sibA IB_IF_B=sibB
IB_IP_A=192.168.91.1 IB_IP_B=192.168.91.2

# ib_link_pair: create the veth pair, its namespace and scire_ib devices
# sib0 and sib1 on its ends, with no neighbour: each learns the other
# from its first HELLO, then is told "none" (both DOWN).
ib_link_pair()
{
	ip netns add "$IB_NS" || fail "ip netns add $IB_NS failed"
	ip -n "$IB_NS" link set lo up
	ip link add "$IB_IF_A" type veth peer name "$IB_IF_B" netns "$IB_NS" ||
		fail "cannot create veth $IB_IF_A/$IB_IF_B"
	ip link set "$IB_IF_A" mtu 9000 up || fail "cannot set $IB_IF_A up"
	ip addr add "$IB_IP_A/24" dev "$IB_IF_A" || fail "cannot address $IB_IF_A"
	ip -n "$IB_NS" link set "$IB_IF_B" mtu 9000 up || fail "cannot set $IB_IF_B up"
	ip -n "$IB_NS" addr add "$IB_IP_B/24" dev "$IB_IF_B" ||
		fail "cannot address $IB_IF_B"
	wait_for 5 grep -qx 1 "/sys/class/net/$IB_IF_A/carrier" ||
		fail "$IB_IF_A has no carrier"
	rdma link add sib0 type scire_ib netdev "$IB_IF_A" ||
		fail "rdma link add sib0 type scire_ib netdev $IB_IF_A failed"
	in_ns "$IB_NS" rdma link add sib1 type scire_ib netdev "$IB_IF_B" ||
		fail "rdma link add sib1 (in $IB_NS) failed"
	echo none >/sys/class/infiniband/sib0/ports/1/scire_ib_peer &&
		echo none >/sys/class/infiniband/sib1/ports/1/scire_ib_peer ||
		fail "cannot write none to scire_ib_peer"
}

# ib_link_up: make sib0 and sib1 each other's neighbour and wait until both
# are INIT (or already further).
ib_link_up()
{
	local d

	echo "$IB_IP_B" >/sys/class/infiniband/sib0/ports/1/scire_ib_peer ||
		fail "cannot set sib0's neighbour"
	echo "$IB_IP_A" >/sys/class/infiniband/sib1/ports/1/scire_ib_peer ||
		fail "cannot set sib1's neighbour"
	for d in sib0 sib1; do
		wait_for 10 bash -c "ibstat $d | grep -Eq 'State: (Initializing|Armed|Active)'" ||
			fail "$d did not come up with its neighbour: $(ibstat "$d")"
	done
}

# ib_link_teardown: undo ib_link_pair.
ib_link_teardown()
{
	rdma link delete sib0 2>/dev/null
	rdma link delete sib1 2>/dev/null
	ip link delete "$IB_IF_A" 2>/dev/null
	ip netns delete "$IB_NS" 2>/dev/null
}

# ib_state DEV: the port state ibstat reports (Down, Initializing, Active...).
ib_state()
{
	ibstat "$1" | sed -n 's/^[[:space:]]*State: //p'
}

# ib_port_is DEV STATE: is DEV's port in STATE?
ib_port_is()
{
	[ "$(ib_state "$1")" = "$2" ]
}

# ipoib_of DEV: the IPoIB interface (in this namespace) of DEV's port 1:
# the one whose hardware address (QPN and GID) ends in the port's GUID.
ipoib_of()
{
	local guid n a

	guid=$(tr -d : <"/sys/class/infiniband/$1/ports/1/gids/0")
	guid=${guid: -16}
	for n in /sys/class/net/*; do
		# ARPHRD_INFINIBAND
		[ "$(cat "$n/type" 2>/dev/null)" = 32 ] || continue
		a=$(tr -d : <"$n/address")
		[ "${a: -16}" = "$guid" ] && { basename "$n"; return 0; }
	done
	return 1
}

# ipoib_carrier [NS] IF: has IPoIB interface IF (in netns NS) its carrier,
# which IPoIB sets once it has joined the broadcast group?
ipoib_carrier()
{
	[ "$(in_ns "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null)" = 1 ]
}

# --- kernel ULPs over RDMA (110-112, pair/35-37) ------------------------------
#
# What the NFS, iSER and SRP tests share, on one host or a VM pair: the
# modules they load and unload, fio with verification, the checks that
# the I/O went over the RDMA device, and the resources they leave.

# mods_loaded: the names of the loaded modules, one a line, sorted.
mods_loaded()
{
	cut -d' ' -f1 /proc/modules | sort
}

# mods_unload_new BEFORE: unload every module loaded now that is not in
# BEFORE (an earlier mods_loaded), users before what they use. Prints
# the modules left; status 1 then.
mods_unload_new()
{
	local before=$1 left pass m r unused

	for pass in 1 2 3 4 5 6 7 8; do
		left=$(mods_loaded | grep -vxF -e "$before")
		[ -n "$left" ] || return 0
		# The unused ones, in one rmmod (a program start costs under
		# TCG); the next pass gets what they used.
		unused=()
		for m in $left; do
			read -r r <"/sys/module/$m/refcnt" 2>/dev/null && [ "$r" = 0 ] && unused+=("$m")
		done
		[ ${#unused[@]} = 0 ] || rmmod "${unused[@]}" 2>/dev/null
		[ "$pass" -lt 4 ] || sleep 1
	done
	left=$(mods_loaded | grep -vxF -e "$before")
	[ -z "$left" ] && return 0
	echo "modules still loaded: ${left//$'\n'/ }"
	return 1
}

# scire_moved DEV: print the bytes RDMA device DEV has moved, on the
# wire (tx_bytes) and on the same-host path (local_bytes). Read from
# sysfs where the port has its hw_counters there: a poll loop then costs
# two reads, not two runs of the rdma tool (seconds apiece on the debug
# kernel under load, long enough for a short fio run to end unseen).
scire_moved()
{
	local d=/sys/class/infiniband/$1/ports/1/hw_counters

	if [ -r "$d/tx_bytes" ] && [ -r "$d/local_bytes" ]; then
		echo $(($(cat "$d/tx_bytes") + $(cat "$d/local_bytes")))
	else
		echo $(($(rdma_counter "$1" tx_bytes) + $(rdma_counter "$1" local_bytes)))
	fi
}

# moved_since DEV BYTES: has RDMA device DEV moved more than a MiB beyond
# BYTES (an earlier scire_moved DEV)? For wait_for: I/O has started.
moved_since() { [ "$(scire_moved "$1")" -gt $(($2 + (1 << 20))) ]; }

# ulp_cm_qps DEV MODULE: print the rdma_cm IDs of kernel module MODULE
# with a QP on RDMA device DEV (lines of rdma resource show cm_id).
ulp_cm_qps()
{
	rdma resource show cm_id dev "$1" | grep -F "comm [$2]" | grep ' lqpn '
}

# fio_verify WHERE SIZE: fio writes random O_DIRECT blocks of 4 KiB to
# 1 MiB at depth 16 over SIZE of WHERE, then reads every block back and
# checks its crc32c. WHERE is a block device's name (sdb: its first SIZE)
# or a directory (/mnt/x: a file verify.0.0 of SIZE in it). Prints fio's
# summary; status 1 (with fio's last lines) if fio failed or found a bad
# block.
fio_verify()
{
	local out

	out=$(timeout 120 fio --name=verify "$(fio_where "$1")" --size="$2" --rw=randwrite \
		--bsrange=4k-1m --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randseed=$RANDOM 2>&1) || {
		printf '%s\n' "$out" | tail -n 20
		return 1
	}
	grep -E '^ *(WRITE|READ):' <<<"$out"
}

# fio_where WHERE: fio's option for WHERE, a block device's name, a
# directory (see fio_verify) or a file.
fio_where()
{
	if [ "${1#/}" = "$1" ]; then
		echo "--filename=/dev/$1"
	elif [ -f "$1" ]; then
		echo "--filename=$1"
	else
		echo "--directory=$1"
	fi
}

# io_busy DEV WHERE [FIO-OPTION...]: I/O in flight for a fault to land
# in: fio writes random O_DIRECT blocks of 4 KiB to 1 MiB at depth 16 over
# 32 MiB of WHERE (fio_where; FIO-OPTIONs added), paced at 8 MiB/s, for
# up to 60 s, in the background, its output in IO_LOG. Sets IO_PID;
# returns once RDMA device DEV has moved a MiB more. Fails the test
# otherwise.
IO_LOG=/run/scire-io-busy.log
io_busy()
{
	local dev=$1 where=$2 m0

	shift 2
	m0=$(scire_moved "$dev")
	fio --name=busy "$(fio_where "$where")" --size=32M --rw=randwrite --bsrange=4k-1m \
		--ioengine=libaio --iodepth=16 --direct=1 --rate=,8m --time_based --runtime=60 "$@" >"$IO_LOG" 2>&1 &
	IO_PID=$!
	wait_for 30 moved_since "$dev" "$m0" || { cat "$IO_LOG"; fail "fio on $where moved nothing over $dev in 30 s"; }
}

# io_error: the first error fio's io_busy run reported (or "none").
io_error()
{
	local e

	e=$(grep -m1 -E 'error|err=' "$IO_LOG")
	echo "${e:-none}"
}

# ulp_qps_on DEV MODULE...: each MODULE must have an rdma_cm ID with a QP
# on DEV (ulp_cm_qps); prints them, fails the test otherwise.
ulp_qps_on()
{
	local dev=$1 m qp

	shift
	for m in "$@"; do
		qp=$(ulp_cm_qps "$dev" "$m") || fail "$m has no QP on $dev: $(rdma resource show cm_id dev "$dev")"
		echo "$m: $qp"
	done
}

# cq_pool_only DEV BEFORE: compare RDMA device DEV's CQs (rdma resource
# show cq) with BEFORE (that listing earlier): every CQ that is new must be
# an idle CQ of the core's CQ pool (comm [ib_core], users 0). isert,
# srpt and iser take their CQs from the pool (ib_cq_pool_get), which keeps
# them until the device is unregistered (ib_cq_pool_cleanup, called from
# drivers/infiniband/core/device.c: disable_device). Prints the CQs that
# are not; status 1 then.
cq_pool_only()
{
	local bad

	bad=$(rdma resource show cq dev "$1" | grep -vxF -e "$2" | grep -v 'users 0 .*comm \[ib_core\]')
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad"
	return 1
}

# res_but_cq DEV: RDMA device DEV's resource counts but the CQs (see
# cq_pool_only).
res_but_cq()
{
	rdma_res_counts "$1" | sed 's/cq=[0-9]* //'
}

# --- rdma link delete under a ULP's I/O (110-113) ------------------------------
#
# A storage ULP's RDMA device going under a live session (`rdma link
# delete`, as a hot-unplugged HCA): the core calls each ib_client's
# remove and rdma_cm sends DEVICE_REMOVAL to every rdma_cm ID on the
# device, and the deletion returns only once every ULP has let go of it.
# What an RDMA user expects: the deletion returns (a ULP keeping a
# reference would hang it), the I/O in flight ends or fails (an error is
# fine), the initiator's session is gone or waits in an error state it
# can recover from, and the ULPs' modules and the driver can be unloaded
# afterwards. A kernel warning or hung task fails the test (selftests/run).

# link_delete_under_io DEV PID GONE...: with PID (the test's I/O over
# RDMA device DEV, in the background) running, `rdma link delete DEV`
# must return within 60 s and DEV leave `rdma link show`; then within
# 30 s command GONE... (the test's sign that its ULP's device removal
# ran) must succeed and PID end. Sets LINK_IO_STATUS to PID's exit
# status. Fails the test (after its show_kmsg) otherwise.
link_delete_under_io()
{
	local dev=$1 pid=$2 s out

	shift 2
	kill -0 "$pid" 2>/dev/null || fail "the I/O over $dev ended before $dev was deleted"
	s=$SECONDS
	out=$(timeout 60 rdma link delete "$dev" 2>&1) || {
		show_kmsg
		fail "rdma link delete $dev under I/O failed or did not return in 60 s: $out"
	}
	echo "rdma link delete $dev under I/O returned in $((SECONDS - s)) s"
	! rdma_has "$dev" || fail "$dev still in rdma link show after its deletion: $(rdma link show)"
	wait_for 30 "$@" || { show_kmsg; fail "30 s after $dev went, still not true: $*"; }
	wait_for 30 pid_gone "$pid" || { show_kmsg; fail "the I/O over $dev still runs 30 s after $dev went"; }
	wait "$pid"
	LINK_IO_STATUS=$?
	echo "the I/O in flight ended with status $LINK_IO_STATUS, $((SECONDS - s)) s after the deletion began"
}

# scire_reload [--core [IB_CORE_OPTION...]]: delete scire0 if it is
# there, unload scire_scif and scire (with --core the RDMA core too, and
# ib_umad, which the InfiniBand link-layer tests load), each within 60 s;
# then load them again (the core with IB_CORE_OPTIONs, as the VM's init
# does: ib_core's force_mr is a parameter only module load sets; ib_umad
# if it was loaded), scire0 on eth0, scire_scif if it was loaded, and wait
# for scire0's GID. Unloading scire proves no one holds it any more. If an
# unload fails, what was unloaded is still loaded again, so the caller's
# baseline (scire0 on eth0) survives the failure. Prints what fails;
# status 1 then.
# shellcheck disable=SC2120 # the options are optional
scire_reload()
{
	local dir=${SCIRE_KO_DIR:-$SCIRE_ROOT}/kernel core=0 scif=0 umad=0 ok=0
	local mods=(scire_scif scire) m out

	if [ "${1:-}" = --core ]; then
		core=1
		shift
		# ib_uverbs_support: ib_uverbs' objects, a module of their
		# own since 7.x (absent before: skipped).
		mods+=(rdma_ucm ib_umad ib_uverbs ib_uverbs_support rdma_cm iw_cm ib_cm ib_core)
	fi
	[ -d /sys/module/scire_scif ] && scif=1
	[ -d /sys/module/ib_umad ] && umad=1
	if rdma_has scire0; then
		out=$(timeout 60 rdma link delete scire0 2>&1) || { echo "rdma link delete scire0: $out"; return 1; }
	fi
	for m in "${mods[@]}"; do
		[ -d "/sys/module/$m" ] || continue
		out=$(timeout 60 rmmod "$m" 2>&1) && continue
		echo "cannot unload $m ($(ls "/sys/module/$m/holders" 2>/dev/null)): $out"
		ok=1
		break
	done
	if [ "$core" = 1 ]; then
		# modprobe of a loaded module does nothing: after a failed
		# unload this only brings back what went.
		out=$({ modprobe ib_core "$@" && modprobe -a ib_uverbs rdma_ucm ib_cm rdma_cm &&
			{ [ "$umad" = 0 ] || modprobe ib_umad; }; } 2>&1) ||
			{ echo "loading ib_core $* failed: $out"; return 1; }
	fi
	if [ ! -d /sys/module/scire ]; then
		out=$(insmod "$dir/scire.ko" 2>&1) || { echo "insmod scire.ko failed: $out"; return 1; }
	fi
	out=$(timeout 60 rdma link add scire0 type scire netdev eth0 2>&1) ||
		{ echo "scire0 on eth0 failed: $out"; return 1; }
	if [ "$scif" = 1 ] && [ ! -d /sys/module/scire_scif ]; then
		out=$(insmod "$dir/scif/scire_scif.ko" 2>&1) || { echo "insmod scire_scif.ko failed: $out"; return 1; }
	fi
	out=$(need_dev_gid scire0 2>&1) || { echo "$out"; return 1; }
	return $ok
}

# wire_bytes DEV: RDMA device DEV's byte counters, "TX RX LOCAL" (tx_bytes,
# rx_bytes: the wire; local_bytes: the same-host path), for wire_grew.
wire_bytes()
{
	rdma_counters "$1" 2>/dev/null |
		awk -F= '{ v[$1] = $2 } END { printf "%.0f %.0f %.0f\n", v["tx_bytes"], v["rx_bytes"], v["local_bytes"] }'
}

# wire_grew DEV BEFORE SIZE: since BEFORE (wire_bytes DEV), DEV must have
# sent and received at least SIZE (in MiB, given as 32M) each on the wire
# and moved nothing on its same-host path: on a VM pair, I/O of SIZE
# written to the other host and read back from it. Prints the figures;
# status 1 if they fall short. rxe has no byte counters: on an rxe device
# it says so and passes.
wire_grew()
{
	local want=$((${3%M} << 20)) tx0 rx0 l0 tx rx l

	dev_is_scire "$1" || { echo "$1 is not scire: no byte counters to check"; return 0; }
	read -r tx0 rx0 l0 <<<"$2"
	read -r tx rx l <<<"$(wire_bytes "$1")"
	tx=$((tx - tx0)) rx=$((rx - rx0)) l=$((l - l0))
	echo "$1: sent $((tx >> 20)) MiB, received $((rx >> 20)) MiB on the wire, $l bytes on the same-host path"
	[ "$tx" -ge "$want" ] && [ "$rx" -ge "$want" ] && [ "$l" = 0 ]
}

# pair_need_scire VAR: skip the test unless it runs on a VM pair whose
# eth0 has an RDMA device, which it sets PAIR_DEV to. A test for the
# scire-to-scire pair only (make check's time budget) passes the name of
# the variable that runs it on any pair when it is 1 (SCIRE_PAIR_NVME, ...).
pair_need_scire()
{
	[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
	if [ "${SCIRE_DEV_KIND:-}" != scire ] || [ "${SCIRE_PEER_DEV_KIND:-}" != scire ]; then
		[ "${!1:-0}" = 1 ] || skip "not a scire-to-scire pair ($1=1 runs it on any)"
	fi
	PAIR_DEV=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
	[ -n "$PAIR_DEV" ] || skip "no RDMA device on eth0 on host $SCIRE_HOST"
}

# pair_ulp ULP SIZE TARGET_MODULE INITIATOR_MODULE: a storage ULP across a
# VM pair, the target (server) on host a and the initiator (client) on b,
# over PAIR_DEV on each (pair_need_scire). The test defines the steps:
# ulp_target_up (on a), ulp_initiator_up (on b; sets ULP_WHERE, what
# fio_verify writes to), ulp_after_io (on both, once b's I/O is done: b
# first, then a), ulp_initiator_down (on b) and ulp_teardown (on both,
# undoing whatever part was done; also the EXIT trap), and show_kmsg.
# Checked: each end's rdma_cm ID (of TARGET_MODULE on a, INITIATOR_MODULE
# on b) has its QP on PAIR_DEV; fio_verify over SIZE of ULP_WHERE on b;
# each host's PAIR_DEV sent and received at least SIZE on the wire
# meanwhile and nothing on the same-host path (wire_grew); after the
# teardown, `rdma resource show` back to what it was on each host, but
# idle CQs of the core's pool (cq_pool_only). Status 1 if a check failed;
# a step failing exits the test.
pair_ulp()
{
	local ulp=$1 size=$2 tmod=$3 imod=$4 dev=$PAIR_DEV rc=0 base base_cqs wire0

	base=$(res_but_cq "$dev")
	base_cqs=$(rdma resource show cq dev "$dev")
	echo "host $SCIRE_HOST: $dev; resources before: $(rdma_res_counts "$dev")"
	pair_sync start 300 || fail "the other host never started"
	trap ulp_teardown EXIT
	if [ "$SCIRE_HOST" = a ]; then
		ulp_target_up
		wire0=$(wire_bytes "$dev")
		pair_sync target-up 300 || fail "host b gave up"
		pair_sync initiator-up 300 || fail "host b's $ulp initiator did not come up"
		# In a subshell: a failed check must not leave b waiting.
		(ulp_qps_on "$dev" "$tmod") || rc=1
		pair_sync io-done 300 || fail "host b did not finish its I/O"
		wire_grew "$dev" "$wire0" "$size" || { echo "$dev: too little on the wire for $size of $ulp I/O"; rc=1; }
		ulp_after_io || rc=1
		pair_sync initiator-down 300 || fail "host b did not finish"
	else
		pair_sync target-up 300 || fail "host a's $ulp target never came up"
		ulp_initiator_up
		(ulp_qps_on "$dev" "$imod") || rc=1
		pair_sync initiator-up 300
		wire0=$(wire_bytes "$dev")
		if fio_verify "$ULP_WHERE" "$size"; then
			echo "fio: random 4k-1m O_DIRECT writes at depth 16 over $size of $ULP_WHERE verified (crc32c) ($((SECONDS - t0)) s in)"
		else
			show_kmsg
			echo "fio write+verify on $ULP_WHERE ($ulp) failed"
			rc=1
		fi
		wire_grew "$dev" "$wire0" "$size" || { echo "$dev: too little on the wire for $size of $ulp I/O"; rc=1; }
		ulp_after_io || rc=1
		pair_sync io-done 300
		ulp_initiator_down
		pair_sync initiator-down 300
	fi
	trap - EXIT
	ulp_teardown || { echo "$ulp teardown failed"; rc=1; }
	# shellcheck disable=SC2317 # called through wait_for
	back() { [ "$(res_but_cq "$dev")" = "$base" ]; }
	wait_for 20 back || { echo "resources not back: $(rdma_res_counts "$dev"), before: $base (CQs aside)"; rc=1; }
	cq_pool_only "$dev" "$base_cqs" || { echo "CQs left on $dev that are not idle CQs of the core's pool (above)"; rc=1; }
	[ "$rc" = 0 ] && echo "host $SCIRE_HOST: $ulp torn down, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
	pair_sync end 300
	return $rc
}

# pmem_dax_node: print the first device-DAX character device there is.
pmem_dax_node()
{
	local dev

	for dev in /sys/bus/dax/devices/dax*; do
		[ -e "/dev/${dev##*/}" ] && { echo "/dev/${dev##*/}"; return 0; }
	done
	return 1
}

# pmem_devdax: print the character device of a device-DAX namespace over
# the VM's emulated NVDIMM (scripts/vm with SCIRE_VM_NVDIMM), making it
# first if the region still has its raw namespace: the dax seed of the
# region gets a UUID, 2 MiB alignment, its struct pages in RAM and the
# namespace, and dax_pmem binds it (what `ndctl create-namespace -m
# devdax` does, through sysfs). Returns 1, saying why, without one.
pmem_devdax()
{
	local r ns d

	modprobe -q nfit && modprobe -q dax_pmem && modprobe -q device_dax ||
		{ echo "cannot load nfit, dax_pmem and device_dax"; return 1; }
	pmem_dax_node && return 0
	r=$(find /sys/bus/nd/devices/ -maxdepth 1 -name 'region*' -printf '%f\n' 2>/dev/null | head -n1)
	[ -n "$r" ] || { echo "no NVDIMM region (scripts/vm needs SCIRE_VM_NVDIMM)"; return 1; }
	ns=$(cat "/sys/bus/nd/devices/$r/namespace_seed") d=$(cat "/sys/bus/nd/devices/$r/dax_seed")
	[ -e "/sys/bus/nd/devices/$ns/driver" ] && echo "$ns" >"/sys/bus/nd/devices/$ns/driver/unbind"
	{ cat /proc/sys/kernel/random/uuid >"/sys/bus/nd/devices/$d/uuid" &&
		echo 2097152 >"/sys/bus/nd/devices/$d/align" &&
		echo ram >"/sys/bus/nd/devices/$d/mode" &&
		echo "$ns" >"/sys/bus/nd/devices/$d/namespace" &&
		echo "$d" >/sys/bus/nd/drivers/dax_pmem/bind; } 2>/dev/null ||
		{ echo "cannot make $d a device-DAX namespace over $ns of $r"; return 1; }
	wait_for 5 pmem_dax_node && { pmem_dax_node; return 0; }
	echo "dax_pmem bound $d, yet no /dev/dax* appeared"
	return 1
}
