#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scire against rdma_rxe across two kernels, in the boot of a scire-scire
# pair (make check's): host b deletes scire0 and adds rxe0 on the same
# eth0, then both hosts run 10-verbs.sh (pingpongs -c, rping -v -V,
# perftest) and, in make check-full, 20-lossy.sh (the same over netem)
# again, scire on a and rxe on b, each host as server and as client. One boot instead of a
# second pair (make check-pair-rxe boots scire/rxe from the start and runs
# every pair test that way, the ULPs included). For make check's time,
# only 10-verbs runs here (85 s); SCIRE_FULL=1 (make check-full) adds
# 20-lossy with each tool both ways, and make check-pair-rxe runs it too.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
[ "${SCIRE_DEV_KIND:-}" = scire ] && [ "${SCIRE_PEER_DEV_KIND:-}" = scire ] ||
	skip "needs a scire-scire pair (devices: ${SCIRE_DEV_KIND:-} and ${SCIRE_PEER_DEV_KIND:-})"
here=$(dirname "$0")
pair_sync start 300 || fail "the other host never started"

if [ "$SCIRE_HOST" = b ]; then
	rdma link delete scire0 || fail "rdma link delete scire0 on host b failed"
	modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
	rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 type rxe netdev eth0 failed"
	export SCIRE_DEV_KIND=rxe
	echo "host b: scire0 deleted, rxe0 added on eth0"
else
	export SCIRE_PEER_DEV_KIND=rxe
fi
pair_sync swapped 120 || fail "host b never swapped scire0 for rxe0"

# The tests below sync through files named for themselves: a fresh
# directory keeps their earlier run's from answering for this one.
export SCIRE_SHARED=$SCIRE_SHARED/scire-rxe
export SCIRE_LOSSY_WAYS=${SCIRE_LOSSY_WAYS:-both}
tests=(10-verbs)
[ "${SCIRE_FULL:-0}" != 1 ] || tests+=(20-lossy)
mkdir -p "$SCIRE_SHARED" || fail "cannot make $SCIRE_SHARED"
failed=()
for t in "${tests[@]}"; do
	echo "--- $t, scire on a, rxe on b"
	start=$(date +%s)
	bash "$here/$t.sh" 2>&1 | sed 's/^/  /'
	rc=${PIPESTATUS[0]}
	echo "--- $t: status $rc ($(($(date +%s) - start)) s)"
	[ "$rc" = 0 ] || failed+=("$t")
done
[ "${#failed[@]}" = 0 ] || fail "scire against rxe failed on host $SCIRE_HOST: ${failed[*]}"
exit 0
