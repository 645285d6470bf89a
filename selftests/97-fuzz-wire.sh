#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Wire fuzzing: scire_fuzz_wire injects malformed and adversarial RoCEv2
# packets into live RC, UC and UD QPs of scireB (netns nsB) from netns nsA
# (topo_scire_pair in lib.sh) through a raw IPv4 socket, with the victim's
# MRs inside patterned guard mappings. The victim QPs' peers are on scireA,
# so the forged packets carry the source address the victims accept. See
# scire_fuzz_wire.c for what is sent and what is checked; it fails if a
# byte outside what was granted changed, if a victim QP neither works nor
# is in ERR, or if a fresh QP pair cannot move data afterwards.
#
# The victims' own traffic (set-up and the checks after the run) crosses
# the wire: two devices in two namespaces take no same-host path.
# While the flood runs, an honest ibv_rc_pingpong -c between scireA and
# scireB (other QPs of the same devices, the same wire) must complete
# with its data checked: the flood is absorbed, not passed on to others.
# The fuzzer holds its flood until the pingpong has ended (-H), and on the
# stock kernel goes on past its budget until it has sent the packets asked
# for (-m), so neither depends on how busy the host is.
# This test also checks that scireB's hw counters saw the packets
# (rx_packets and icrc_errors grew) and that `rdma resource show` counts
# on both devices are back where they were once the program exited.
#
# Environment: FUZZ_SECONDS (total budget, default 40), FUZZ_PACKETS (total
# packet cap, default none), FUZZ_SEED (a seed to replay; default: fresh,
# printed), FUZZ_JOBS (injecting processes, default one per CPU; with 1 a
# seed replays the exact packet stream), FUZZ_MIN_PACKETS (how many packets
# scireB must have received; default 1,000,000 on the stock kernel with the
# default budget, see below).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_fuzz_wire) || exit 1
# make check's debug boot (debug_quick): 20 s, for its time budget.
secs=${FUZZ_SECONDS:-$(debug_quick && echo 20 || echo 40)}
pkts=${FUZZ_PACKETS:-}
seed=${FUZZ_SEED:-}
# One injector per CPU: the victim's receive path runs on the sender's.
jobs=${FUZZ_JOBS:-$(nproc)}
# The issue's target: 1,000,000 packets per make check, which the stock
# kernel's boot delivers (about 34,000/s here: 1.3-1.6 million in 40 s).
# The debug kernel takes about 2,000/s under KASAN and lockdep, and a
# budget or cap given by hand is the caller's: those only need packets to
# arrive (checked below).
if [ -n "${FUZZ_MIN_PACKETS:-}" ]; then
	floor=$FUZZ_MIN_PACKETS
elif [ "${SCIRE_KERNEL:-stock}" = debug ] || [ -n "${FUZZ_SECONDS:-}$pkts" ]; then
	floor=1
else
	floor=1000000
fi

# The forged packets carry scireA's address, and most are refused: with
# scire's per-source limit of refusals (err_rate, 64-rate-limits) on,
# scireB would drop nearly all of them unread after the first few
# thousand, and the parser would not be fuzzed. Off for this test.
erate=/sys/module/scire/parameters/err_rate
erate0=$(cat "$erate" 2>/dev/null)
trap 'rm -f "$hold"; topo_teardown; [ -z "$erate0" ] || echo "$erate0" >"$erate"' EXIT
[ -z "$erate0" ] || echo 0 >"$erate" || fail "cannot turn err_rate off"
topo_scire_pair 9000
topo_describe
topo_static_neigh || fail "cannot install static neighbour entries on $TOPO_IF_A/$TOPO_IF_B"

# Print "pd=N cq=N qp=N mr=N" of device $1 (what the core counts as its).
res_of()
{
	local r k out=""

	r=$(rdma_res_counts "$1")
	for k in pd cq qp mr; do
		out+="$k=$(tr ' ' '\n' <<<"$r" | sed -n "s/^$k=//p") "
	done
	echo "$out"
}

# counter NAME: scireB's hw counter NAME (0 if it has none).
counter()
{
	rdma_counter "$TOPO_DEV_B" "$1" || echo 0
}

failed=()
hold=$(mktemp -u /run/scire-fuzz-hold.XXXXXX)
args=(-d "$TOPO_DEV_B" -g "$TOPO_GID_B" -D "$TOPO_DEV_A" -G "$TOPO_GID_A" -N "$TOPO_NS_A" -t "$secs"
	-j "$jobs" -H "$hold")
# Sent, not received: a tenth more, for what the sender's stack refuses.
[ "$floor" -le 1 ] || args+=(-m "$((floor + floor / 10))")
[ -z "$pkts" ] || args+=(-n "$pkts")
[ -z "$seed" ] || args+=(-s "$seed")
res_a=$(res_of "$TOPO_DEV_A") res_b=$(res_of "$TOPO_DEV_B")
rx0=$(counter rx_packets) drop0=$(counter rx_drops) icrc0=$(counter icrc_errors)
echo "scire_fuzz_wire ${args[*]}"
start=$SECONDS
timeout -k 10 "$((secs + 600))" "$prog" "${args[@]}" &
fpid=$!
# The honest pair, once the flood is under way: the fuzzer creates $hold
# when it starts and floods until we remove it.
if ! wait_for 300 sh -c "test -e '$hold' || ! kill -0 $fpid"; then
	failed+=("the fuzzer did not start its flood in 300 s")
elif [ ! -e "$hold" ]; then
	failed+=("the fuzzer ended before its flood started")
elif out=$(pair_run_ns 60 tcp:18600 "$TOPO_NS_B" "$TOPO_NS_A" \
	ibv_rc_pingpong -d "$TOPO_DEV_B" -g "$TOPO_GID_B" -p 18600 -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d "$TOPO_DEV_A" -g "$TOPO_GID_A" -p 18600 -n 100 -s 4096 -c "$TOPO_IP_B"); then
	pid_gone "$fpid" && failed+=("the fuzzer ended before the honest pingpong did: it did not run beside the flood")
	echo "beside the flood: ibv_rc_pingpong -c $TOPO_DEV_A -> $TOPO_DEV_B: $(grep -m1 'Mbit/sec' <<<"$out")"
else
	failed+=("ibv_rc_pingpong -c beside the flood failed: $out")
fi
rm -f "$hold"
wait "$fpid" || failed+=("scire_fuzz_wire (exit status $?)")
rx=$(($(counter rx_packets) - rx0)) drop=$(($(counter rx_drops) - drop0))
icrc=$(($(counter icrc_errors) - icrc0))
echo "$TOPO_DEV_B received $((rx + drop + icrc)) packets in $((SECONDS - start)) s:" \
	"$rx passed the header and ICRC checks, $drop dropped, $icrc with a wrong ICRC"
if [ "$rx" -le 0 ] || [ "$icrc" -le 0 ]; then
	failed+=("$TOPO_DEV_B's rx_packets or icrc_errors did not grow: the packets did not reach it")
fi
if [ $((rx + drop + icrc)) -lt "$floor" ]; then
	failed+=("$TOPO_DEV_B received $((rx + drop + icrc)) packets, fewer than the $floor asked for (FUZZ_MIN_PACKETS)")
fi
# The program has exited: everything it created must be gone.
for d in "$TOPO_DEV_A:$res_a" "$TOPO_DEV_B:$res_b"; do
	dev=${d%%:*} want=${d#*:}
	if ! wait_value 10 = "$want" res_of "$dev"; then
		failed+=("rdma resource show $dev: $(res_of "$dev")after the run, ${want}before")
	fi
done

[ ${#failed[@]} -eq 0 ] || fail "failed: $(printf '%s; ' "${failed[@]}")"
echo "ok"
