# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers for the selftests of an InfiniBand subnet through scire-ibswitch
# in one kernel (124 one switch, 125 two): hosts a, b and c are network
# namespaces sw-a..sw-c, each with a veth end swv<h> at 192.168.94.<n>
# and a scire_ib device sws<h> on it; IPoIB at 10.94.0.<n>. The tests set
# $hosts and $work and may define fabric_state, which failures print.
# Sourced after lib.sh (not a test).
# shellcheck disable=SC2154 # $hosts and $work are the test's

ip_of() { echo "192.168.94.$(($(printf %d "'$1") - 96))"; }	# a -> .1
ipoib_ip() { echo "10.94.0.$(($(printf %d "'$1") - 96))"; }
lid_of() { ibstat "sws$1" | sed -n 's/^[[:space:]]*Base lid: //p'; }
guid_of() { echo "0x$(tr -d : <"/sys/class/infiniband/sws$1/node_guid")"; }

# What a test knows of the fabric, for a failure message (fabric_state
# where it defines one).
ibsw_state() { ! declare -F fabric_state >/dev/null || fabric_state; }

# ibsw_pingpong HOW TOOL ARGS...: TOOL's server on host a, its client on
# host c (TCP over the bridge for the exchange); no -g: LID address
# handles, through the switches. HOW ends the ok line.
ibsw_pingpong()
{
	local how=$1 tool=$2 out rc spid

	shift 2
	in_ns sw-a timeout 60 "$tool" -d swsa "$@" >"$work/srv" 2>&1 &
	spid=$!
	wait_for 30 tcp_listening_ns sw-a 18515 || fail "$tool server did not listen: $(cat "$work/srv")"
	out=$(in_ns sw-c timeout 60 "$tool" -d swsc "$@" "$(ip_of a)" 2>&1)
	rc=$?
	wait "$spid" || fail "$tool $* server failed: $(cat "$work/srv")"$'\n'"$(ibsw_state)"
	[ "$rc" = 0 ] || fail "$tool $* client failed:"$'\n'"$out"$'\n'"$(ibsw_state)"
	grep -q "LID 0x" <<<"$out" || fail "$tool did not use LIDs:"$'\n'"$out"
	echo "ok: $tool $* from c to a$how: $(grep 'bytes in' <<<"$out")"
}

# ibsw_ipoib_up: ib_ipoib's interface of each host's device moved into
# its namespace, addressed and up (ipoib_if H names it), then carrier:
# the broadcast group joined through the subnet manager.
ibsw_ipoib_up()
{
	local h i

	modprobe ib_ipoib || fail "cannot load ib_ipoib"
	for h in $hosts; do
		wait_for 10 ipoib_of "sws$h" >/dev/null || fail "ib_ipoib made no interface for sws$h: $(ip -br link)"
		i=$(ipoib_of "sws$h")
		ip link set "$i" netns "sw-$h" || fail "cannot move $i into sw-$h"
		# Not renamed: IPoIB's debugfs entries keep the first name.
		eval "ib_$h=$i"
		ip -n "sw-$h" addr add "$(ipoib_ip "$h")/24" dev "$i"
		ip -n "sw-$h" link set "$i" up
	done
	for h in $hosts; do
		wait_for 30 ipoib_carrier "sw-$h" "$(ipoib_if "$h")" ||
			fail "no IPoIB carrier in sw-$h: the broadcast group was not joined: $(tail -20 "$work/opensm.log")"
	done
}
ipoib_if() { eval echo "\$ib_$1"; }

# ibsw_ipoib_ping_all: IPoIB pings from every host to every other.
ibsw_ipoib_ping_all()
{
	local h o

	for h in $hosts; do
		for o in $hosts; do
			[ "$h" = "$o" ] && continue
			in_ns "sw-$h" ping -c 2 -i 0.3 -W 5 "$(ipoib_ip "$o")" >"$work/ping" ||
				fail "IPoIB: no ping $h -> $o:"$'\n'"$(cat "$work/ping")"
		done
	done
}
