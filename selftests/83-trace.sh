#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scire's tracepoints (kernel/scire_trace.h) fire where they should: on the
# wire path (fast_path=0) of $SCIRE_DEV, scire_rnr's RNR waits and its
# rnr_retry 0 failure must leave, in a trace instance of their own, the
# QP's state changes (RTS, ERR), the requester's path choice (wire), the
# responder's RNR NAKs and the completer's receipt of them, the RNR
# rewinds, and the failed WQE with RNR_RETRY_EXC_ERR; a datagram too short
# to be RoCEv2, sent over a veth pair to a scire device's UDP port 4791,
# must leave a scire_drop with reason "malformed". Also checks every event has a format file, which is
# what trace-cmd and perf read.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_rnr) || exit 1
dev_is_scire "$SCIRE_DEV" || skip "$SCIRE_DEV is not a scire device"
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1

inst=$(trace_open "scire-selftest-$$" 16384) ||
	fail "no trace instance with the scire events (tracefs mounted? scire built with them?)"
cleanup()
{
	trace_close "$inst"
	topo_teardown
}
trap cleanup EXIT
events="scire_qp_state scire_req_path scire_drop scire_rewind scire_nak_send scire_nak_recv scire_wqe_fail"
for ev in $events; do
	[ -r "$inst/events/scire/$ev/format" ] || fail "event scire/$ev has no format file"
done

run_fast_path 0 "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid" ||
	fail "scire_rnr on the wire path failed: see above"
topo_scire_pair 1500
topo_describe
in_ns "$TOPO_NS_A" bash -c "printf x >/dev/udp/$TOPO_IP_B/4791" ||
	fail "cannot send a datagram from $TOPO_NS_A to $TOPO_IP_B:4791"
wait_for 5 grep -q ' scire_drop: ' "$inst/trace"
echo 0 >"$inst/events/scire/enable"

log=$(mktemp)
cat "$inst/trace" >"$log"
echo "$(grep -c ' scire_' "$log") scire events; one of each kind:"
for ev in $events; do
	grep -m1 " $ev: " "$log" | sed 's/^ *//'
done
miss=0
expect()
{
	grep -Eq "$2" "$log" && return
	echo "missing: $1 (no line matches /$2/)"
	miss=1
}
expect "a QP reaching RTS" " scire_qp_state: $SCIRE_DEV qpn=[0-9]+ RTR -> RTS"
expect "a QP entering ERR" " scire_qp_state: $SCIRE_DEV qpn=[0-9]+ RTS -> ERR"
expect "the wire path chosen at RTS" " scire_req_path: $SCIRE_DEV .* path=wire "
expect "an RNR NAK sent" ' scire_nak_send: .* RNR_NAK '
expect "an RNR NAK received" ' scire_nak_recv: .* RNR_NAK '
expect "an RNR rewind" ' scire_rewind: .* reason=rnr_nak '
expect "the WQE failed by rnr_retry 0" ' scire_wqe_fail: .* status=RNR_RETRY_EXC_ERR'
expect "the short datagram dropped" " scire_drop: $TOPO_DEV_B reason=malformed "
rm -f "$log"
[ "$miss" -eq 0 ] || fail "scire's tracepoints missed events (see above)"
exit 0
