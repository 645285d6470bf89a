#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC over a lossy wire: scireA (netns nsA) and scireB (netns nsB) on a veth
# pair (topo_scire_pair in lib.sh) with tc netem on both ends: every packet
# delayed 1 ms but 5% sent at once (so those overtake: reordering; netem
# reorders only packets it delays), 2% lost, 1% duplicated, 0.1% with one
# bit flipped. Retransmission (sequence NAKs, timeouts), duplicate and
# out-of-sequence handling and the ICRC check must still deliver every
# byte exactly once:
#   - ibv_rc_pingpong -c (every received buffer checked, byte counts on
#     both sides) at 1 byte x 100, 64 KiB x 50 and 1 MiB x 3 at path MTU
#     1024, and 1 MiB x 3 at path MTU 4096: some 60000 packets, so at 0.1%
#     corruption some 60 corrupted ones (a flip in the Ethernet, IP or UDP
#     header gets the packet dropped before scire sees it; one in BTH or
#     payload must fail the ICRC);
#   - scire_integrity with QP A on scireA and QP B on scireB, every kind
#     of op (READs answered again from where their responses broke off);
#   - the hw counters (rdma statistic) of the two ports, read before and
#     after: icrc_errors must have grown on at least one side, and so must
#     retransmits (2% loss of thousands of packets);
#   - then a slow wire, not a lossy one: netem replaced by a 2 Mbit/s rate
#     limit on both ends (nothing dropped, a deep queue) and
#     ibv_rc_pingpong -s 262144 -n 3 -m 256 -c. A window of 256 packets
#     takes some 340 ms to drain there, five times the local ACK timeout
#     (67 ms), so timeouts fire with nothing lost. A requester that
#     resends its whole window on each of them queues more duplicates
#     than the link drains, and its retries run out (transport retry
#     counter exceeded) with every packet delivered; see the top of
#     kernel/scire_comp.c. About 10 s.
# Every cell runs; the test fails listing those that did not pass.
# SCIRE_NETEM overrides the netem parameters.
# shellcheck disable=SC2317 # functions run by check_run and trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

netem=${SCIRE_NETEM:-delay 1ms reorder 5% loss 2% duplicate 1% corrupt 0.1%}
trap topo_teardown EXIT

topo_scire_pair 9000
topo_describe
topo_static_neigh || fail "cannot install static neighbour entries on $TOPO_IF_A/$TOPO_IF_B"
for s in A B; do
	eval "ns=\$TOPO_NS_$s ifc=\$TOPO_IF_$s"
	# shellcheck disable=SC2086 # netem: parameters, split on purpose
	out=$(tc -n "$ns" qdisc add dev "$ifc" root netem $netem 2>&1) ||
		fail "tc qdisc add dev $ifc root netem $netem (netns $ns): $out"
done
echo "netem on $TOPO_IF_A and $TOPO_IF_B: $netem"

counters=(icrc_errors retransmits seq_nak_sent seq_nak_rcvd duplicate_request out_of_seq_request
	rx_drops rx_packets tx_packets)

# Print "NAME=VALUE ..." of device $1's counters; exit status 1 (printing
# what is missing) if it lacks one.
read_counters()
{
	local all c v line="" missing=""

	all=$(rdma_counters "$1") || { echo "$1 has no hw counters (rdma statistic show link $1/1: $all)"; return 1; }
	for c in "${counters[@]}"; do
		if v=$(sed -n "s/^$c=//p" <<<"$all" | grep .); then
			line+="$c=$v "
		else
			missing+=" $c"
		fi
	done
	if [ -n "$missing" ]; then
		echo "$1 lacks hw counters:$missing (it has: $(tr '\n' ' ' <<<"$all"))"
		return 1
	fi
	echo "$line"
}

before_a=$(read_counters "$TOPO_DEV_A") && before_b=$(read_counters "$TOPO_DEV_B")
have_counters=$?

pingpong_once()
{
	pingpong_pair ibv_rc_pingpong "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID_A" "$TOPO_IP_A" \
		"$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID_B" "$@"
}

# pingpong PORT SIZE ITERS [ARG...]. Each side of ibv_rc_pingpong exits as
# soon as its own last SEND and receive have completed. When the last ACK
# one side owes is lost after that side has exited (the client's for the
# server's last SEND, or the server's for the client's last SEND once the
# client has ACKed the server's), the other side retransmits to a QP that
# is gone and fails with "transport retry counter exceeded", though every
# byte arrived and was checked: a race of the tool on a lossy link, not of
# the transport. That outcome (one side exit status 0, the other out of
# retries), and only it, gets one more try (on another port).
pingpong()
{
	local port=$1 out

	shift
	out=$(pingpong_once "$port" "$@") && { echo "$out"; return 0; }
	if grep -q "(netns [^)]*): exit status 0" <<<"$out" &&
		grep -q "transport retry counter exceeded" <<<"$out"; then
		echo "the last ACK one side owed was lost after it had exited" \
			"(ibv_rc_pingpong's race on a lossy link); once more:"
		pingpong_once "$((port + 100))" "$@"
		return
	fi
	echo "$out"
	return 1
}

port=19700
for run in "1 100 1024" "65536 50 1024" "1048576 3 1024" "1048576 3 4096"; do
	read -r size n mtu <<<"$run"
	port=$((port + 1))
	check_run "ibv_rc_pingpong -s $size -n $n -m $mtu -c over netem" \
		pingpong "$port" "$size" "$n" -m "$mtu"
done
# Every kind of op (SENDs, WRITEs, READs, atomics, memory windows). -L: the
# NAK of an op that must fail remotely may be lost, and then retries run
# out instead (the responder is in ERR and answers nothing).
check_run "scire_integrity -m 1024 -a mix -w -L over netem: QP A on $TOPO_DEV_A, QP B on $TOPO_DEV_B" \
	integrity_pair "$TOPO_DEV_A" "$TOPO_GID_A" "$TOPO_DEV_B" "$TOPO_GID_B" \
	-m 1024 -a mix -w -L -M 262144 -n "${SCIRE_INTEGRITY_OPS:-200}"

for s in A B; do
	eval "ns=\$TOPO_NS_$s ifc=\$TOPO_IF_$s"
	echo "$ifc: $(tc -n "$ns" -s qdisc show dev "$ifc" | sed -n 's/^ *\(Sent .*\)/\1/p')"
done

# counter_grew NAME: did NAME grow on A or B? (globals: before/after)
counter_grew()
{
	local s b a

	for s in A B; do
		eval "b=\$before_${s,,} a=\$after_${s,,}"
		b=$(tr ' ' '\n' <<<"$b" | sed -n "s/^$1=//p")
		a=$(tr ' ' '\n' <<<"$a" | sed -n "s/^$1=//p")
		[ "$a" -gt "$b" ] && return 0
	done
	return 1
}

check_counters()
{
	local ok=0 c

	if [ "$have_counters" != 0 ]; then
		echo "$before_a${before_b:-}"
		return 1
	fi
	if ! after_a=$(read_counters "$TOPO_DEV_A") || ! after_b=$(read_counters "$TOPO_DEV_B"); then
		echo "$after_a$after_b"
		return 1
	fi
	echo "$TOPO_DEV_A before: $before_a"
	echo "$TOPO_DEV_A after:  $after_a"
	echo "$TOPO_DEV_B before: $before_b"
	echo "$TOPO_DEV_B after:  $after_b"
	for c in icrc_errors retransmits; do
		if ! counter_grew "$c"; then
			echo "$c did not grow on either side"
			ok=1
		fi
	done
	return $ok
}
after_a="" after_b=""
check_run "hw counters: icrc_errors and retransmits grew" check_counters

slow=${SCIRE_NETEM_SLOW:-rate 2mbit limit 100000}
slow_wire()
{
	local s ns ifc out

	for s in A B; do
		eval "ns=\$TOPO_NS_$s ifc=\$TOPO_IF_$s"
		# shellcheck disable=SC2086 # netem: parameters, split on purpose
		out=$(tc -n "$ns" qdisc replace dev "$ifc" root netem $slow 2>&1) ||
			{ echo "tc qdisc replace dev $ifc root netem $slow (netns $ns): $out"; return 1; }
	done
	pingpong "$((port + 1))" 262144 3 -m 256
}
check_run "ibv_rc_pingpong -s 262144 -n 3 -m 256 -c over a slow wire (netem $slow)" slow_wire

check_report
