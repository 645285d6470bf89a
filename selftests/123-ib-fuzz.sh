#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Forged and malformed traffic on a scire_ib link (docs/scire_ib.md,
# issue 17): the link layer's receive checks and the SMA and PMA of
# kernel/ib/scire_mad.c against a hostile neighbour.
#
# sib0 and sib1 are linked as in 121; opensm on sib0 makes both ACTIVE
# and sets an M_Key with protect bits 2 on them. With opensm stopped and
# sib0's port recorded (state, LID, SM LID, P_Key table, PortInfo), the
# neighbour's device sib1 is deleted while scire_fuzz_ib.py, started in
# its namespace from its address, keeps greeting sib0 with HELLOs and
# takes over its UDP port: the fuzzer is sib0's neighbour from then on
# and receives what sib0 sends back. It sends known-answer cases (packets
# the link layer must drop, each carrying a Get(NodeInfo) that would be
# answered if it got through; SMPs with the wrong M_Key, bad attribute
# modifiers, unknown attributes and methods, invalid Sets, directed
# routes with bad hop pointers and counts, truncated MADs; PMA GMPs), each
# reply's MAD status or its absence checked, then a seeded random stream
# (LRH, GRH, BTH, ICRC, scire_ib header and HELLO garbage, random SMPs and
# GMPs in which every Set the M_Key lets through is invalid).
#
# Pass: every known answer as expected and every datagram sib0 sent back
# well formed (scire_fuzz_ib.py); sib0 still ACTIVE, its LID, SM LID,
# P_Key table and PortInfo (but the violation counters) what they were;
# its rx_drops and icrc_errors counters grew (the packets reached it);
# it still answers an SMP to its own LID. The runner fails the test on
# any kernel WARNING, BUG or KASAN report.
#
# Environment: FUZZ_SECONDS (the random stream, default 20; 12 on the
# debug kernel without SCIRE_DEBUG_FULL=1), FUZZ_SEED (replay a stream;
# default fresh, printed).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for p in smpquery ibstat opensm python3; do
	command -v "$p" >/dev/null || skip "$p not installed (infiniband-diags, opensm)"
done
modprobe ib_umad || fail "cannot load ib_umad"

fuzzer=$(cd "$(dirname "$0")" && pwd)/scire_fuzz_ib.py
ns=$IB_NS ipa=$IB_IP_A ipb=$IB_IP_B
# The fuzzer needs a key whose last byte is not 0 (see its --mkey).
mkey=0x5c1e0000000000f1
# The debug kernel's smaller sizes (debug_quick): 12 s.
secs=${FUZZ_SECONDS:-$(debug_quick && echo 12 || echo 20)}
seed=${FUZZ_SEED:-}
osm_pid='' fz_pid=''
work=$(mktemp -d)
cleanup()
{
	[ -n "$fz_pid" ] && kill "$fz_pid" 2>/dev/null && wait "$fz_pid" 2>/dev/null
	[ -n "$osm_pid" ] && kill "$osm_pid" 2>/dev/null && wait "$osm_pid" 2>/dev/null
	ib_link_teardown
	rm -rf "$work"
}
trap cleanup EXIT

guid_of()
{
	echo "0x$(tr -d : <"/sys/class/infiniband/$1/node_guid")"
}
ibstat_field()
{
	ibstat "$1" | sed -n "s/^[[:space:]]*$2: //p"
}
counter()
{
	rdma_counter sib0 "$1" || echo 0
}
# The port as the forged traffic must leave it: ibstat's view, the P_Key
# table in sysfs, PortInfo but for the three violation counters.
port_snapshot()
{
	local f

	ibstat sib0 | grep -E 'State|Physical state|Base lid|LMC|SM lid|Port GUID'
	for f in /sys/class/infiniband/sib0/ports/1/pkeys/*; do
		echo "pkey[$(basename "$f")] $(cat "$f")"
	done | sort -t'[' -k2 -n
	smpquery -C sib0 --m_key "$mkey" -D portinfo 0 | grep -vE '^[MPQ]keyViolations:'
}

# --- the link, opensm with an M_Key ------------------------------------------------
ib_link_pair
ib_link_up
ga=$(guid_of sib0) gb=$(guid_of sib1)
cat >"$work/opensm.conf" <<EOF
m_key $mkey
m_key_protection_level 2
m_key_lease_period 0
EOF
opensm -F "$work/opensm.conf" -g "$ga" -f "$work/opensm.log" >"$work/opensm.out" 2>&1 &
osm_pid=$!
for d in sib0 sib1; do
	wait_for 60 ib_port_is "$d" Active ||
		fail "$d not ACTIVE 60 s after opensm started: $(ibstat "$d"; tail -20 "$work/opensm.log")"
done
mkey_set()
{
	smpquery -C sib0 --m_key "$mkey" -D portinfo 0 | grep -q '^ProtectBits:\.*2'
}
wait_for 30 mkey_set || fail "opensm's M_Key never took: $(smpquery -C sib0 --m_key "$mkey" -D portinfo 0)"
# opensm 3.3 logs no "SUBNET UP" here: wait until it has nothing more to set.
settled()
{
	local s

	s=$(port_snapshot)
	sleep 2
	[ "$(port_snapshot)" = "$s" ]
}
wait_for 60 settled || fail "sib0's port still changing 60 s after opensm started"
# The SM's own traffic would blur what the forged traffic did.
kill "$osm_pid" && wait "$osm_pid" 2>/dev/null
osm_pid=''
la=$(ibstat_field sib0 'Base lid') lb=$(ibstat_field sib1 'Base lid')
sm=$(ibstat_field sib0 'SM lid')
pkeys=$(for f in /sys/class/infiniband/sib0/ports/1/pkeys/*; do
	echo "$(basename "$f") $(cat "$f")"
done | sort -n | cut -d' ' -f2 | paste -sd,)
before=$(port_snapshot) || fail "cannot read sib0's port"
echo "ok: opensm made sib0 (LID $la) and sib1 (LID $lb) ACTIVE with M_Key $mkey (protect bits 2), then stopped"
echo "sib0 before: $(ib_state sib0), LID $la, SM LID $sm, P_Keys $pkeys"

drop0=$(counter rx_drops) icrc0=$(counter icrc_errors) rx0=$(counter rx_packets)
trap0=$(counter traps_sent) t0=$SECONDS

# --- the fuzzer takes sib1's place ------------------------------------------------
args=(--peer "$ipa" --local "$ipb" --lid "$la" --sm-lid "$sm" --slid "$lb"
	--port-guid "$ga" --neigh-port-guid "$gb" --mkey "$mkey" --pkeys "$pkeys"
	--seconds "$secs" --ready "$work/ready" --done "$work/done")
[ -z "$seed" ] || args+=(--seed "$seed")
echo "scire_fuzz_ib.py ${args[*]}"
# ip netns exec execs: $! is the fuzzer's own pid.
ip netns exec "$ns" python3 "$fuzzer" "${args[@]}" >"$work/fuzz.out" 2>&1 &
fz_pid=$!
wait_for 30 test -e "$work/ready" || fail "the fuzzer did not start: $(cat "$work/fuzz.out")"
in_ns "$ns" rdma link delete sib1 || fail "cannot delete sib1"
fuzz_over()
{
	[ -e "$work/done" ] || ! kill -0 "$fz_pid"
}
wait_for $((secs + 400)) fuzz_over
sed 's/^/  /' "$work/fuzz.out"
failed=()
[ -e "$work/done" ] || failed+=("the fuzzer did not finish its checks")

# --- the port after the forged traffic (the fuzzer's HELLOs go on) ----------------------
after=$(port_snapshot) || failed+=("cannot read sib0's port after the fuzzing")
if [ "$after" != "$before" ]; then
	failed+=("sib0's port changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | paste -sd' ')")
fi
ib_port_is sib0 Active || failed+=("sib0 is $(ib_state sib0), not Active")
ni=$(smpquery -C sib0 --m_key "$mkey" nodeinfo "$la" 2>&1)
grep -q "^Guid:\.*$ga" <<<"$ni" || failed+=("no answer to an SMP to sib0's own LID $la: $ni")
drop=$(($(counter rx_drops) - drop0)) icrc=$(($(counter icrc_errors) - icrc0))
rx=$(($(counter rx_packets) - rx0))
echo "sib0 counted $rx packets received, $drop dropped, $icrc with a wrong ICRC"
if [ "$drop" -le 0 ] || [ "$icrc" -le 0 ]; then
	failed+=("sib0's rx_drops or icrc_errors did not grow: the packets did not reach it")
fi

# Key violations are trapped to the SM LID (sib0's own, no SM listens
# now), one security trap at a time and none sooner than 100 ms after
# the last began: thousands of violations, a few traps.
traps=$(($(counter traps_sent) - trap0)) el=$((SECONDS - t0 + 1))
viol=$(smpquery -C sib0 --m_key "$mkey" -D portinfo 0 2>&1 | grep -E '^(Mkey|Pkey|Qkey)Violations' | tr -s '.' ' ' | paste -sd' ')
echo "sib0 sent $traps traps in $el s; PortInfo: $viol"
if [ "$traps" -le 0 ]; then
	failed+=("sib0 sent no trap for the key violations ($viol)")
elif [ "$traps" -gt $((el * 10 + 8)) ]; then
	failed+=("sib0 sent $traps traps in $el s: more than one per 100 ms")
fi

kill "$fz_pid"
wait "$fz_pid"
rc=$?
fz_pid=''
[ "$rc" = 0 ] || failed+=("scire_fuzz_ib.py: exit status $rc ($(grep -c '^FAIL' "$work/fuzz.out") failed checks)")
[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
echo "ok: sib0 unchanged and answering after $(grep -c '^ok:' "$work/fuzz.out") known answers and the random stream"
