#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma-core's own test suite (python3-pyverbs' tests/run_tests.py) on scire0
# and on rdma_rxe, in this one boot, on the same netdev (eth0) and the same
# kind of GID (port 1's IPv4 RoCE v2 GID): scire0 first, then scire0 is
# deleted (rxe and scire cannot both own UDP 4791 in init_net), rdma_rxe
# loaded, rxe0 added on eth0 and the suite run again; then rxe0 and
# rdma_rxe go and scire0 is back on eth0.
#
# Fails if any test fails, errors or hangs on scire but passes on rxe, or if
# a run does not finish. When scire's run is clean (every test passed or
# was skipped, none hung), no test can fail there yet pass on rxe: the rxe
# run is then left out (it would only list what scire skips and rxe
# passes; SCIRE_PYVERBS_RXE=1 runs it anyway), which saves some 40 s of
# make check. Listed without failing: tests scire skips (it says
# it lacks the feature) but rxe passes, tests that fail on both, tests run
# on scire only. The per-test record, the comparison and the one adaptation
# of the suite (rdma_cm tests find the device's netdev through the GID, not
# through a parent bus device that software devices do not have) are in
# rdma_core_suite.py next to this file.
#
# Not run on rxe: the three rdma_cm multicast tests. Debian's 6.1 rdma_rxe
# WARNs (rxe_pool.c, __rxe_cleanup from rxe_destroy_qp) whenever a UD QP
# that was attached to a multicast group is destroyed, even after a clean
# leave (mckey alone shows it), which would fail this test for rxe's sake;
# two of them also fail on rxe. They still run on scire.
# Nor the mlx5-only tests (test_mlx5_*): on trixie (rdma-core 56, kernel
# 6.12) python3 dies in several of them with SIGSEGV on rxe0 (after
# pyverbs fails to close a CQ, say) and takes the rest of rxe's run with
# it; on scire they skip (not an mlx5 device), and on rxe they would only
# skip too.
#
# Environment: SCIRE_PYVERBS_TIMEOUT (seconds per whole run, default 270:
# two runs must fit selftests/run's 600 s per test), SCIRE_PYVERBS_TEST_TIMEOUT
# (seconds per test, default 60), SCIRE_PYVERBS_ARGS (extra run_tests.py
# arguments, e.g. "-k test_qp" while investigating; a subset run still
# compares only what ran), SCIRE_PYVERBS_VERBOSE=1 (also print every test's
# outcome on both devices, and both runs' output), SCIRE_PYVERBS_RXE=1 (the
# rxe run and the comparison even when scire's run is clean).
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cleanup runs from trap
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
helper=$here/rdma_core_suite.py
src=/usr/share/doc/rdma-core/tests
run_timeout=${SCIRE_PYVERBS_TIMEOUT:-270}
test_timeout=${SCIRE_PYVERBS_TEST_TIMEOUT:-60}
read -r -a extra <<<"${SCIRE_PYVERBS_ARGS:-}"
rxe_exclude=(
	'tests.test_rdmacm.CMTestCase.test_rdmacm_async_multicast_traffic'
	'tests.test_rdmacm.CMTestCase.test_rdmacm_async_ex_multicast_traffic'
	'tests.test_rdmacm.CMTestCase.test_rdmacm_async_ex_leave_multicast_traffic'
	'tests.test_mlx5_*'
)

[ -f "$src/run_tests.py" ] || fail "$src/run_tests.py missing (Debian package python3-pyverbs)"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing"
dev_is_scire scire0 || fail "no scire device scire0: $(rdma link show 2>&1)"
[ "$(dev_netdev scire0)" = eth0 ] || fail "scire0 is not on eth0: $(rdma link show scire0/1 2>&1)"
modinfo rdma_rxe >/dev/null 2>&1 || fail "the kernel has no rdma_rxe module"
lsmod | grep -q '^rdma_rxe ' && fail "rdma_rxe is already loaded (scire0 and rxe cannot share UDP 4791 in init_net)"

tmp=$(mktemp -d)
# The suite's huge page tests (a parent domain allocating from 2 MiB
# pages) skip unless some are reserved: reserve 16 (32 MiB) for the runs.
huge=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
huge0=$(cat "$huge" 2>/dev/null || echo)
[ -z "$huge0" ] || [ "$huge0" -ge 16 ] || echo 16 >"$huge" ||
	echo "note: cannot reserve huge pages; the suite's huge page tests skip"
# Whatever happens, leave the baseline: no rxe, scire0 on eth0, the huge
# pages as they were.
cleanup()
{
	rdma_has rxe0 && rdma link delete rxe0
	lsmod | grep -q '^rdma_rxe ' && wait_for 10 rmmod rdma_rxe
	rdma_has scire0 || rdma link add scire0 type scire netdev eth0
	[ -z "$huge0" ] || echo "$huge0" >"$huge"
	rm -rf "$tmp"
}
trap cleanup EXIT

# run_tests.py loads its own directory as the package "tests".
cp -r "$src" "$tmp/tests" || fail "cannot copy $src"
gunzip -f "$tmp"/tests/*.gz || fail "cannot gunzip $tmp/tests/*.gz"

unfinished=""

# run_suite DEV [--exclude GLOB]...: run the suite on DEV (its IPv4 RoCE v2
# GID) into $tmp/DEV.json (per-test record) and $tmp/DEV.log (run_tests.py's
# -v output); add DEV to $unfinished if the run did not finish. When python3
# dies inside a test (a signal, not the timeout), that test is recorded as
# an error and the run resumes after it (at most 5 times, within the same
# time budget), so one crashing test does not hide the rest of the suite.
run_suite()
{
	local dev=$1 gid start rc left resumes=0
	local -a resume=()

	shift
	gid=$(need_dev_gid "$dev") || exit 1
	echo "$dev: run_tests.py --dev $dev --gid $gid -v ${extra[*]} $* (timeout ${run_timeout}s, ${test_timeout}s per test)"
	start=$SECONDS
	: >"$tmp/$dev.log"
	while :; do
		left=$((run_timeout - (SECONDS - start)))
		[ "$left" -gt 0 ] || { rc=124; break; }
		(cd "$tmp/tests" && timeout -k 10 "$left" /usr/bin/python3 "$helper" run \
			"$tmp/tests" "$tmp/$dev.json" --test-timeout "$test_timeout" \
			"${resume[@]}" "$@" -- \
			--dev "$dev" --gid "$gid" -v "${extra[@]}") >"$tmp/$dev.try" 2>&1
		rc=$?
		cat "$tmp/$dev.try" >>"$tmp/$dev.log"
		# 124 and 137: timeout's; above 128 otherwise: a signal killed
		# python3 (139: SIGSEGV).
		if [ "$rc" -gt 128 ] && [ "$rc" != 137 ] && [ "$resumes" -lt 5 ] &&
			! grep -q '^Ran [0-9]* test' "$tmp/$dev.try"; then
			resumes=$((resumes + 1))
			echo "$dev: python3 died (exit status $rc) after $((SECONDS - start)) s; last lines:"
			tail -n 5 "$tmp/$dev.try" | sed 's/^/  | /'
			resume=(--resume "$rc")
			continue
		fi
		break
	done
	echo "$dev: run_tests.py exit status $rc after $((SECONDS - start)) s$( [ "$resumes" != 0 ] && echo ", resumed $resumes time(s)")$( [ "$rc" -ge 124 ] && echo ": TIMED OUT or killed")"
	if [ "$rc" -ge 124 ] || ! grep -q '^Ran [0-9]* test' "$tmp/$dev.try"; then
		echo "$dev: the run did not finish; last lines of its output:"
		tail -n 30 "$tmp/$dev.log" | sed 's/^/  | /'
		unfinished+=" $dev"
	fi
	touch "$tmp/$dev.json"
}

run_suite scire0

if [ -z "$unfinished" ] && [ "${SCIRE_PYVERBS_RXE:-0}" != 1 ] &&
	[ "${SCIRE_PYVERBS_VERBOSE:-0}" != 1 ]; then
	if out=$(/usr/bin/python3 "$helper" clean "$tmp/scire0.json"); then
		echo "scire: $out"
		echo "scire's run is clean: no test fails on scire that passes on rxe;" \
			"rxe's run left out (SCIRE_PYVERBS_RXE=1 runs it)"
		exit 0
	fi
	echo "scire's run is not clean: running rxe's to compare"
	echo "$out"
fi

rdma link delete scire0 || fail "cannot delete scire0"
modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
rdma link add rxe0 type rxe netdev eth0 || fail "cannot add rxe0 on eth0"
excl=()
for t in "${rxe_exclude[@]}"; do
	excl+=(--exclude "$t")
done
run_suite rxe0 "${excl[@]}"
rdma link delete rxe0 || fail "cannot delete rxe0"
# rxe drops its devices' last references asynchronously after the delete.
wait_for 10 rmmod rdma_rxe || fail "cannot unload rdma_rxe: $(rmmod rdma_rxe 2>&1)"
rdma link add scire0 type scire netdev eth0 || fail "cannot re-add scire0 on eth0"

all=()
if [ "${SCIRE_PYVERBS_VERBOSE:-0}" = 1 ]; then
	all=(--all)
	for d in scire0 rxe0; do
		echo "--- $d: run_tests.py output"
		sed 's/^/  | /' "$tmp/$d.log"
	done
fi
/usr/bin/python3 "$helper" compare "${all[@]}" "$tmp/scire0.json" "$tmp/rxe0.json"
rc=$?
[ -z "$unfinished" ] || fail "the run on$unfinished did not finish (see above): the comparison is incomplete"
exit "$rc"
