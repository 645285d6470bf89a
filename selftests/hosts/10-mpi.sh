#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Open MPI over UCX with one rank on each of N hosts (scripts/vm --hosts
# N, scire on every host): build/selftests/scire_mpi --alltoall, the
# ping-pong between ranks 0 and 1 (8 B to 1 MiB, every byte checked),
# MPI_Allreduce of one long and of 1 MiB with the sums checked, and
# MPI_Alltoall of 8 B and 64 KiB blocks between every two ranks with
# every element checked. mpirun on host a starts every other host's
# daemon through mpi-rsh-agent (no ssh in the test VMs), as
# pair/15-middleware.sh does for two. UCX_NET_DEVICES names scire0, so
# UCX cannot fall back to TCP.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

if [ -z "${SCIRE_HOST:-}" ] || [ -z "${SCIRE_HOSTS:-}" ]; then
	skip "not on VM hosts (scripts/vm --hosts N)"
fi
command -v mpirun >/dev/null || skip "mpirun not installed (scripts/setup)"
mpi_prog=$SCIRE_BUILD/selftests/scire_mpi
[ -x "$mpi_prog" ] || skip "$mpi_prog not built (meson found no MPI: libopenmpi-dev)"
read -ra hosts <<<"$(hosts_names)"
n=${#hosts[@]}
for h in "${hosts[@]}"; do
	[ "$(host_dev "$h")" = scire ] ||
		skip "Open MPI over UCX here needs scire on every host (devices: $SCIRE_HOSTS_DEVS)"
done
dev=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
[ -n "$dev" ] || fail "no RDMA device on eth0 on host $SCIRE_HOST"
echo "host $SCIRE_HOST: $dev on eth0 $SCIRE_ADDR, $n hosts: $SCIRE_HOSTS"
hosts_sync start 300 || fail "the other hosts never started"

rsh=$SCIRE_SHARED/mpi-rsh
failed=0
if [ "$SCIRE_HOST" = a ]; then
	rm -rf "$rsh" "$rsh.end"
	hosts_sync mpi-ready 60 || fail "the other hosts are not ready for mpirun"
	start=$SECONDS
	if out=$(timeout -k 5 420 mpirun --allow-run-as-root -np "$n" --map-by node \
		--host "${SCIRE_HOSTS// /,}" \
		--mca plm_rsh_agent "$(dirname "$0")/mpi-rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca pml ucx --mca btl self -x UCX_NET_DEVICES="$dev:1" \
		"$mpi_prog" --alltoall 2>&1); then
		echo "Open MPI, one rank on each of $n hosts: ok ($((SECONDS - start)) s)"
		# shellcheck disable=SC2001 # indent every line
		sed 's/^/    /' <<<"$out"
		for ((r = 0; r < n; r++)); do
			grep -q "rank $r of $n on" <<<"$out" || { echo "    rank $r did not report"; failed=1; }
		done
		for what in "allreduce 1 MiB: ok" "alltoall 8 B per rank pair: ok" \
			"alltoall 65536 B per rank pair: ok"; do
			grep -q "$what" <<<"$out" || { echo "    no '$what'"; failed=1; }
		done
	else
		echo "Open MPI, one rank on each of $n hosts: FAILED ($((SECONDS - start)) s)"
		tail -n 40 <<<"$out" | sed 's/^/    /'
		failed=1
	fi
	touch "$rsh.end"
else
	hosts_sync mpi-ready 60 || fail "host a did not get to mpirun"
	# Serve one command (this host's daemon), or none if mpirun ended first.
	me=$rsh/$SCIRE_ADDR
	wait_for 400 bash -c "[ -e '$me/cmd' ] || [ -e '$rsh.end' ]"
	if [ -e "$me/cmd" ]; then
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
			timeout -k 5 420 bash -c "$(cat "$me/cmd")" >"$me/out" 2>&1
		echo $? >"$me/status"
		echo "Open MPI: served host a's daemon command (status $(cat "$me/status"))"
	else
		echo "Open MPI: mpirun on host a ended without starting a daemon here"
	fi
fi
hosts_sync mpi-done 480 || fail "the other hosts did not finish the MPI run"
[ "$failed" = 0 ] || fail "Open MPI across $n hosts failed"
exit 0
