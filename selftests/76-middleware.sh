#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The middleware users run over soft RDMA, as Debian ships it, on one host,
# on $SCIRE_DEV (scire0), and then on rdma_rxe on the same eth0 (in the
# same boot, the checks rxe passes: see the end) when a check failed on
# scire0 (does it fail on rxe too? then suspect the middleware or the
# test, not scire) or when SCIRE_MIDDLEWARE_RXE=1; with every check passed
# on scire0, rxe's run could not change the verdict and make check saves
# its 20 s. No settings beyond choosing the device and the transport under
# test:
#
#   UCX       ucx_info -d lists DEV:1 under rc_verbs and ud_verbs;
#             ucx_perftest (UCT level, server and client on DEV): rc_verbs
#             am_lat, put_bw (zero copy: RDMA WRITE), get (RDMA READ) and
#             add_lat (device atomics: UCX uses them only if it accepts the
#             device's atomic_cap), ud_verbs am_lat.
#   libfabric fi_info -p verbs lists DEV for FI_EP_MSG, DEV-dgram for
#             FI_EP_DGRAM and "verbs;ofi_rxm" on DEV for FI_EP_RDM;
#             fi_pingpong -c (data checked) over msg, rdm and dgram.
#   Open MPI  two ranks over UCX (pml ucx) on the rc_verbs transport (with
#             ud_verbs beside it, as UCX wires up RC), then on ud_verbs
#             alone: build/selftests/scire_mpi's ping-pong (8 B to 1 MiB,
#             every byte checked) and allreduce (sums checked). On one host
#             UCX would choose shared memory, so UCX_TLS and
#             UCX_NET_DEVICES name the transport and device under test.
#
# Each check runs under a timeout; output says which failed and how.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for p in ucx_info ucx_perftest fi_info fi_pingpong mpirun; do
	command -v "$p" >/dev/null ||
		skip "$p not installed (Debian: ucx-utils, libfabric-bin, openmpi-bin; scripts/setup)"
done
mpi_prog=$SCIRE_BUILD/selftests/scire_mpi
[ -x "$mpi_prog" ] || skip "$mpi_prog not built (meson found no MPI: libopenmpi-dev)"
addr=$(ip -4 -o addr show dev eth0 | awk '{ sub("/.*", "", $4); print $4; exit }')
[ -n "$addr" ] || fail "eth0 has no IPv4 address"

CHECK_FAILED=()
port=13400

# ucx_tl DEV TL: ucx_info -d shows DEV:1 as a device of transport TL.
ucx_tl()
{
	ucx_info -d | awk -v tl="$2" -v dev="$1:1" '
		$2 == "Transport:" { cur = $3 }
		$2 == "Device:" && cur == tl && $3 == dev { found = 1 }
		END { exit !found }' || {
		echo "ucx_info -d has no device $1:1 for transport $2; it lists:"
		ucx_info -d | grep -E 'Transport:|Device:'
		return 1
	}
}

# ucx_uct DEV TL TEST [ARGS...]: ucx_perftest TEST over TL on DEV:1,
# server and client on this host; prints the client's result line.
ucx_uct()
{
	local dev=$1 tl=$2 test=$3 out

	shift 3
	port=$((port + 1))
	# shellcheck disable=SC2046 # ucx_mode_args: zero or two words
	out=$(pair_run 60 "$port" ucx_perftest $(ucx_mode_args) -d "$dev:1" -x "$tl" -t "$test" -w 50 -p "$port" "$@") ||
		{ echo "$out"; return 1; }
	grep -E '^Final:' <<<"$out" | tr -s ' ' || { echo "no Final: line:"; echo "$out"; return 1; }
}

# fi_list DEV TYPE DOMAIN PROVIDER: fi_info -p verbs -t TYPE lists DOMAIN
# with PROVIDER.
fi_list()
{
	local out

	out=$(fi_info -p verbs -t "$2" 2>&1)
	awk -v dom="$3" -v prov="$4" '
		$1 == "provider:" { p = $2 }
		$1 == "domain:" && $2 == dom && p == prov { found = 1 }
		END { exit !found }' <<<"$out" || {
		echo "fi_info -p verbs -t $2 has no domain $3 of provider $4:"
		echo "$out" | grep -E 'provider:|domain:' | head -20
		return 1
	}
}

# fi_pp DEV EP SIZE: fi_pingpong -p verbs -e EP -c (data checked), server
# and client on this host, the client given DEV's eth0 address.
fi_pp()
{
	local out dom=$1 last

	[ "$2" = dgram ] && dom=$1-dgram
	port=$((port + 1))
	out=$(pair_run_ns 60 "tcp:$port" "" "" \
		fi_pingpong -p verbs -e "$2" -d "$dom" -I 100 -S "$3" -c -B "$port" -- \
		fi_pingpong -p verbs -e "$2" -d "$dom" -I 100 -S "$3" -c -P "$port" "$addr") ||
		{ echo "$out"; return 1; }
	# bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
	last=$(grep -E '^[0-9]+[kmg]? ' <<<"$out" | tail -n1 | tr -s ' ')
	grep -qE '^[0-9]+[kmg]? 100 =100 ' <<<"$last" ||
		{ echo "not 100 of 100 exchanged:"; echo "$out"; return 1; }
	echo "$last"
}

# mpi_run DEV TLS: scire_mpi on two ranks over UCX with UCX_TLS=TLS on DEV.
mpi_run()
{
	timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np 2 \
		--mca pml ucx --mca btl self -x UCX_TLS="$2" -x UCX_NET_DEVICES="$1:1" \
		"$mpi_prog"
}

# middleware DEV [rxe]: the checks above on DEV; with "rxe", only those
# rdma_rxe passes (below).
middleware()
{
	local dev=$1 rxe=${2:-}

	echo "== $dev"
	check_run "$dev: ucx_info rc_verbs" ucx_tl "$dev" rc_verbs
	[ -n "$rxe" ] || check_run "$dev: ucx_info ud_verbs" ucx_tl "$dev" ud_verbs
	check_run "$dev: ucx_perftest rc_verbs am_lat" ucx_uct "$dev" rc_verbs am_lat -n 1000
	check_run "$dev: ucx_perftest rc_verbs put_bw 64 KiB" \
		ucx_uct "$dev" rc_verbs put_bw -D zcopy -s 65536 -n 200
	check_run "$dev: ucx_perftest rc_verbs get 64 KiB (RDMA READ)" \
		ucx_uct "$dev" rc_verbs get -D zcopy -s 65536 -n 200
	check_run "$dev: ucx_perftest rc_verbs add_lat (device atomics)" \
		ucx_uct "$dev" rc_verbs add_lat -n 1000
	[ -n "$rxe" ] ||
		check_run "$dev: ucx_perftest ud_verbs am_lat" ucx_uct "$dev" ud_verbs am_lat -n 1000
	check_run "$dev: fi_info msg" fi_list "$dev" FI_EP_MSG "$dev" verbs
	check_run "$dev: fi_info dgram" fi_list "$dev" FI_EP_DGRAM "$dev-dgram" verbs
	[ -n "$rxe" ] || check_run "$dev: fi_info rdm" fi_list "$dev" FI_EP_RDM "$dev" "verbs;ofi_rxm"
	check_run "$dev: fi_pingpong msg 64 KiB" fi_pp "$dev" msg 65536
	[ -n "$rxe" ] || check_run "$dev: fi_pingpong rdm 64 KiB" fi_pp "$dev" rdm 65536
	check_run "$dev: fi_pingpong dgram 1 KiB" fi_pp "$dev" dgram 1024
	[ -z "$rxe" ] || return 0
	check_run "$dev: Open MPI over UCX rc_verbs" mpi_run "$dev" rc_verbs,ud_verbs,self
	check_run "$dev: Open MPI over UCX ud_verbs" mpi_run "$dev" ud_verbs,self
}

middleware "$SCIRE_DEV"
if [ "${#CHECK_FAILED[@]}" = 0 ] && [ "${SCIRE_MIDDLEWARE_RXE:-0}" != 1 ]; then
	echo "every check passed on $SCIRE_DEV: rdma_rxe's run left out (SCIRE_MIDDLEWARE_RXE=1 runs it)"
	check_report
	exit
fi

# rdma_rxe beside it: on the same eth0, so scire0 goes first (both bind
# UDP 4791 in init_net); selftests/run restores the baseline afterwards.
# Left out on rxe, which fails them in Debian's 6.1 (seen here): UCX's
# ud_verbs, and so Open MPI over UCX, which wires up RC through UD (rxe
# reports 0 in a RoCE v2 UD receive's wc.sl, UCX reads it as the IP
# version and drops every datagram: "UD endpoint ... unhandled timeout
# error"), and libfabric's ofi_rxm (it asks for 196,608 CQEs, rxe's
# max_cqe is 32,767: "ctrl/read: no data or remote connection closed").
rdma link delete "$SCIRE_DEV" || fail "cannot delete $SCIRE_DEV to make room for rxe"
out=$(modprobe rdma_rxe 2>&1) || fail "modprobe rdma_rxe failed: $out"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 type rxe netdev eth0 failed"
rxe_active() { [ "$(ibv_port_state rxe0)" = PORT_ACTIVE ]; }
wait_for 10 rxe_active || fail "rxe0 not ACTIVE: $(ibv_port_state rxe0)"
middleware rxe0 rxe
rdma link delete rxe0
check_report
