#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SCIF across two kernels (scripts/vm --pair, issue 53 point 6): each
# host's scire_scif has the same node table, node 1 = host a
# (192.168.78.1) and node 2 = host b (192.168.78.2), so the two ends of
# every connection are two modules on two kernels, not one module shared
# by two namespaces as in 100 and 101. In turn:
#   scif_user server/client, each host as server once: connect and accept,
#     the 1 MiB stream blocking and not, poll, the receive ring,
#     register/unregister, readfrom/writeto/vreadfrom/vwriteto, fence
#     mark/wait/signal, the server closing first (ECONNRESET);
#   scif_mpss_abi server/client (raw ioctls as MPSS 4's libscif makes
#     them), each host as server once;
#   scif_user sizes (server on b): every RMA kind from 1 byte to a
#     SCIRE_PAIR_SCIF_MIB (16) MiB window, data checked, fence_mark and
#     fence_wait after RMAs that are not SYNC, fence_signal's value only
#     after its data, INIT_PEER marks, and the client closing first;
#   the fault: host a runs RMA against host b, and host b deletes its
#     scire0 under it; a's RMA, send, recv and close must fail with an
#     errno within 90 s, b's blocked recv too; b adds scire0 back and one
#     more scif_user server (b)/client (a) run shows SCIF works again.
# scire to scire only (make check's pair-rxe lane skips it unless
# SCIRE_PAIR_SCIF=1).
# shellcheck disable=SC2317 # cleanup runs by trap
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

pair_need_scire SCIRE_PAIR_SCIF
nodes=/sys/kernel/config/scif/nodes
[ -d /sys/module/scire_scif ] || skip "scire_scif is not loaded on host $SCIRE_HOST"
[ -d "$nodes" ] || fail "$nodes missing: configfs not mounted?"
user=$(need_prog scif_user) || exit 1
abi=$(need_prog scif_mpss_abi) || exit 1
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mib=${SCIRE_PAIR_SCIF_MIB:-16}

cleanup()
{
	rmdir "$nodes/1" "$nodes/2" 2>/dev/null
	# A fault left half done: the tests after this one need scire0.
	rdma_has scire0 || rdma link add scire0 type scire netdev eth0
}
trap cleanup EXIT

# The same table on both hosts.
mkdir -p "$nodes/1" "$nodes/2" || fail "cannot create nodes 1 and 2"
echo 192.168.78.1 >"$nodes/1/addr" && echo 192.168.78.2 >"$nodes/2/addr" ||
	fail "cannot set the nodes' addresses"
me=$([ "$SCIRE_HOST" = a ] && echo 1 || echo 2)
other=$([ "$SCIRE_HOST" = a ] && echo 2 || echo 1)
echo "host $SCIRE_HOST: SCIF node $me on $PAIR_DEV, peer node $other"
pair_sync start 300 || fail "the other host never started"

# pair_duo, then the count of checks this host's half printed last.
duo()
{
	local rc=0

	pair_duo "$@" || rc=$?
	[ -z "$PAIR_DUO_OUTPUT" ] || echo "    $(tail -n 1 <<<"$PAIR_DUO_OUTPUT")"
	return $rc
}

failed=0
port=2600
for srv in a b; do
	port=$((port + 1))
	duo "scif_user server/client, server on $srv" "$srv" "$user" server "$port" -- \
		"$user" client-remote "$other" "$port" || failed=$((failed + 1))
done
for srv in b a; do
	port=$((port + 2))
	duo "scif_mpss_abi server/client, server on $srv" "$srv" "$abi" server "$port" -- \
		"$abi" client "$other" "$port" || failed=$((failed + 1))
done
port=$((port + 2))
duo "scif_user sizes, 1 byte to $mib MiB, server on b" b "$user" sizes-server "$port" "$mib" -- \
	"$user" sizes-client "$other" "$port" "$mib" || failed=$((failed + 1))
[ "$failed" = 0 ] || echo "host $SCIRE_HOST: $failed of the runs above failed"

# The fault: host b's scire0 deleted under host a's RMA.
port=$((port + 1))
out=$(mktemp)
if [ "$SCIRE_HOST" = b ]; then
	timeout -k 5 150 "$user" fault-server "$port" >"$out" 2>&1 &
	pid=$!
	pair_sync fault-up 60 || fail "host a did not get to the fault"
	pair_sync fault-rma 90 || echo "host a's RMA never ran"
	start=$SECONDS
	if timeout 60 rdma link delete scire0; then
		echo "fault: rdma link delete scire0 under RMA: done ($((SECONDS - start)) s)"
	else
		echo "fault: rdma link delete scire0 under RMA: FAILED or hung (status $?)"
		failed=$((failed + 1))
	fi
	wait "$pid"
	rc=$?
	echo "fault: server on b (scire0 deleted): $([ "$rc" = 0 ] && echo ok || echo "FAILED (status $rc)")"
	sed 's/^/    /' "$out"
	[ "$rc" = 0 ] || failed=$((failed + 1))
	pair_sync fault-done 180 || failed=$((failed + 1))
	rdma link add scire0 type scire netdev eth0 || fail "cannot add scire0 back on eth0"
	need_dev_gid scire0 >/dev/null || fail "scire0 has no GID after it was added back"
	pair_sync fault-restored 120 || fail "host a did not come back from the fault"
else
	pair_sync fault-up 60 || fail "host b did not get to the fault"
	sleep 2
	timeout -k 5 150 "$user" fault-client "$other" "$port" 90 >"$out" 2>&1 &
	pid=$!
	wait_for 60 grep -q "rma running" "$out" || echo "fault: the RMA never ran"
	pair_sync fault-rma 90 || echo "fault: host b did not get to the fault"
	wait "$pid"
	rc=$?
	echo "fault: client on a (peer's scire0 deleted under RMA): $([ "$rc" = 0 ] && echo ok || echo "FAILED (status $rc)")"
	sed 's/^/    /' "$out"
	[ "$rc" = 0 ] || failed=$((failed + 1))
	pair_sync fault-done 180 || failed=$((failed + 1))
	pair_sync fault-restored 120 || fail "host b did not restore scire0"
fi
rm -f "$out"

# SCIF works again with b's new scire0.
port=$((port + 1))
duo "scif_user server/client after the fault, server on b" b "$user" server "$port" -- \
	"$user" client-remote "$other" "$port" || failed=$((failed + 1))
[ "$failed" = 0 ] || fail "$failed of the runs above failed on host $SCIRE_HOST"
exit 0
