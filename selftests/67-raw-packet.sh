#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Raw packet QPs and flow steering (scire_raw.py, through pyverbs): two
# scire devices on the ends of a veth pair; frames a raw QP of one sends
# reach the raw QPs of both whose flows match (ETH, IPv4, IPv6, UDP, TCP
# and VLAN specs, priorities and DONT_TRAP, default and sniffer flows),
# byte for byte, and no others; oversized and undersized sends fail
# locally, a UD QP takes no flow; an RSS QP spreads frames over its
# receive WQs as the Toeplitz hash says; random and malformed frames from the
# wire pass the flows and reach a sniffer intact. Then, without
# CAP_NET_RAW, creating a raw packet QP is refused; and a netdev deleted
# under a process that holds a raw QP with a flow (and a frame in its RQ)
# takes its device away cleanly. rdma-core's own raw
# packet and flow tests (tests/test_flow.py, the raw QP tests of
# tests/test_qp.py) run in 95, on scire0.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(cd "$(dirname "$0")" && pwd)/scire_raw.py
python3 -c 'import pyverbs.flow' 2>/dev/null || skip "no pyverbs (python3-pyverbs)"

trap topo_teardown EXIT
topo_scire_pair 1500
topo_describe
check_run "scire_raw: $TOPO_DEV_A -> $TOPO_DEV_B" \
	timeout -k 5 300 python3 "$prog" -a "$TOPO_DEV_A" -b "$TOPO_DEV_B" --mtu 1500
check_run "scire_raw: no raw packet QP without CAP_NET_RAW" \
	timeout -k 5 60 setpriv --bounding-set -net_raw --inh-caps -net_raw \
	python3 "$prog" -a "$TOPO_DEV_A" -b "$TOPO_DEV_B" --no-net-raw

# The netdev goes while a process holds a raw QP, its flow and a frame.
hold=$(mktemp)
python3 "$prog" -a "$TOPO_DEV_A" -b "$TOPO_DEV_B" --hold >"$hold" 2>&1 &
holder=$!
if wait_for 60 grep -q '^ready' "$hold"; then
	out=$(ip -n "$TOPO_NS_A" link del "$TOPO_IF_A" 2>&1)
	check_run "scire_raw: $TOPO_IF_A deleted under a held raw QP and flow: $TOPO_DEV_A goes" \
		wait_for 30 sh -c "! rdma link show $TOPO_DEV_A/1 >/dev/null 2>&1"
	[ -z "$out" ] || echo "ip link del: $out"
else
	check_run "scire_raw --hold: ready" false
	cat "$hold"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -f "$hold"
check_report
