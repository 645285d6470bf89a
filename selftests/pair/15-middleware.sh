#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Middleware between two kernels (scripts/vm --pair), as 76-middleware
# runs it on one host: UCX's ucx_perftest over rc_verbs (put_bw zero copy,
# get: RDMA WRITE and READ, am_lat) and ud_verbs (am_lat), libfabric's
# fi_pingpong -c (data checked) over msg and rdm (verbs;ofi_rxm), host a
# the server for UCX and b for libfabric; then Open MPI over UCX with one
# rank on each host (build/selftests/scire_mpi: ping-pong 8 B to 1 MiB
# with every byte checked, allreduce with the sums checked), mpirun on
# host a starting host b's daemon through mpi-rsh-agent (no ssh in the
# test VMs).
# UCX_NET_DEVICES names the device on eth0, so UCX cannot fall back to TCP.
#
# With rdma_rxe on either host only fi_pingpong over msg runs: rxe fails
# ud_verbs, ofi_rxm and Open MPI over UCX (see 76-middleware), and
# ucx_perftest's client hands its device name (rxe0 or scire0) to the
# server, which has no device of that name ("Cannot use rc_verbs/rxe0:1").
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
for p in ucx_perftest fi_pingpong mpirun; do
	command -v "$p" >/dev/null || skip "$p not installed (scripts/setup)"
done
mpi_prog=$SCIRE_BUILD/selftests/scire_mpi
[ -x "$mpi_prog" ] || skip "$mpi_prog not built (meson found no MPI: libopenmpi-dev)"
dev=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
[ -n "$dev" ] || skip "no RDMA device on eth0 on host $SCIRE_HOST (SCIRE_PAIR_DEVS none?)"
rxe=0
pair_has_rxe && rxe=1
echo "host $SCIRE_HOST: $dev on eth0 $SCIRE_ADDR, peer $SCIRE_PEER$([ "$rxe" = 1 ] && echo ", rxe on the pair: fi_pingpong msg only")"
pair_sync start 300 || fail "the other host never started"

failed=0
port=13500
# UCX with its server on a, libfabric with its server on b: every tool
# runs one way, each host is a server for one of them.
for t in "rc_verbs put_bw -D zcopy -s 65536 -n 100" "rc_verbs get -D zcopy -s 65536 -n 100" \
	"rc_verbs am_lat -n 300" "ud_verbs am_lat -n 300"; do
	[ "$rxe" = 1 ] && continue
	read -r tl test rest <<<"$t"
	read -ra args <<<"$rest"
	port=$((port + 1))
	read -ra ucx <<<"ucx_perftest $(ucx_mode_args)"
	ucx+=(-d "$dev:1" -x "$tl" -t "$test" -w 50 -p "$port" "${args[@]}")
	pair_duo "ucx_perftest $t" a "${ucx[@]}" -- "${ucx[@]}" "$SCIRE_PEER" ||
		failed=$((failed + 1))
done
for ep in msg rdm; do
	[ "$rxe" = 1 ] && [ "$ep" = rdm ] && continue
	port=$((port + 1))
	fi=(fi_pingpong -p verbs -e "$ep" -d "$dev" -I 100 -S 65536 -c)
	pair_duo "fi_pingpong -e $ep 64 KiB" b "${fi[@]}" -B "$port" -- \
		"${fi[@]}" -P "$port" "$SCIRE_PEER" || failed=$((failed + 1))
done

# Open MPI: host a runs mpirun; host b runs what mpi-rsh-agent hands over.
if [ "$rxe" = 0 ]; then
	rsh=$SCIRE_SHARED/mpi-rsh
	if [ "$SCIRE_HOST" = a ]; then
		rm -rf "$rsh"
		pair_sync mpi-ready 60 || fail "host b is not ready for mpirun"
		start=$SECONDS
		if out=$(timeout -k 5 180 mpirun --allow-run-as-root -np 2 --map-by node \
			--host "$SCIRE_ADDR,$SCIRE_PEER" \
			--mca plm_rsh_agent "$(dirname "$0")/mpi-rsh-agent" \
			--mca pml ucx --mca btl self -x UCX_NET_DEVICES="$dev:1" \
			"$mpi_prog" 2>&1); then
			echo "Open MPI, one rank per host: ok ($((SECONDS - start)) s)"
			# shellcheck disable=SC2001 # indent every line
			sed 's/^/    /' <<<"$out"
			grep -q "rank 1 of 2 on" <<<"$out" || { echo "    rank 1 did not report"; failed=$((failed + 1)); }
		else
			echo "Open MPI, one rank per host: FAILED ($((SECONDS - start)) s)"
			tail -n 30 <<<"$out" | sed 's/^/    /'
			failed=$((failed + 1))
		fi
		touch "$rsh.end"
	else
		rm -f "$rsh.end"
		pair_sync mpi-ready 60 || fail "host a did not get to mpirun"
		# Serve one command (the daemon), or none if mpirun ended first.
		wait_for 200 bash -c "[ -e '$rsh/cmd' ] || [ -e '$rsh.end' ]"
		if [ -e "$rsh/cmd" ]; then
			OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
				timeout -k 5 180 bash -c "$(cat "$rsh/cmd")" >"$rsh/out" 2>&1
			echo $? >"$rsh/status"
			echo "Open MPI: served host a's daemon command (status $(cat "$rsh/status"))"
		else
			echo "Open MPI: mpirun on host a ended without starting a daemon here"
		fi
	fi
	pair_sync mpi-done 240 || fail "the other host did not finish the MPI run"
fi
[ "$failed" = 0 ] || fail "$failed of the runs above failed on host $SCIRE_HOST"
exit 0
