#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Wire interop with rdma_rxe through the verbs tools (no rdma_cm): rxeA on a
# veth end in init_net, scireB on the other end in netns nsB (topo_rxe_scire
# in lib.sh, MTU 9000, active MTU 4096 on both), each tool run in both
# directions (scire as server, then rxe as server), each side in its
# device's namespace, addresses exchanged over TCP on the veth:
#   - ibv_rc_pingpong -c at 1, 4097 (path MTU 1024) and 1 MiB (path MTU
#     4096) bytes and ibv_ud_pingpong -c at 1024 and 4096 bytes: every
#     received buffer checked, and the byte count both sides report;
#   - perftest ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw and
#     ib_send_lat (-x GID index, -F): the result line must show the size
#     and iterations asked for (see perftest_verify);
#   - scire_integrity with QP A on scireB and QP B on rxeA (every byte and
#     every CQE of random RC traffic, both directions in one run).
# Every cell runs; the test fails listing those that did not pass.
# shellcheck disable=SC2317 # functions run by check_run and trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

need_prog scire_integrity >/dev/null || exit 1
iters=${SCIRE_PERFTEST_ITERS:-5}
trap topo_teardown EXIT

topo_rxe_scire 9000
topo_describe

# side S (A or B): set ns, dev, gid, ip of that side.
side()
{
	eval "ns=\$TOPO_NS_$1 dev=\$TOPO_DEV_$1 gid=\$TOPO_GID_$1 ip=\$TOPO_IP_$1"
}

# pp SERVER CLIENT PORT SECS TOOL GIDOPT ARGS...: TOOL ARGS... on both
# sides, with -d, GIDOPT (the GID index option) and -p for each.
pp()
{
	local s=$1 c=$2 port=$3 secs=$4 tool=$5 gopt=$6 ns dev gid ip sns sdev sgid sip

	shift 6
	side "$s"
	sns=$ns sdev=$dev sgid=$gid sip=$ip
	side "$c"
	pair_run_ns "$secs" "tcp:$port" "$sns" "$ns" \
		"$tool" -d "$sdev" "$gopt" "$sgid" -p "$port" "$@" -- \
		"$tool" -d "$dev" "$gopt" "$gid" -p "$port" "$@" "$sip"
}

# pingpong SERVER CLIENT PORT TOOL SIZE ITERS [ARGS...]
pingpong()
{
	local s=$1 c=$2 port=$3 tool=$4 size=$5 n=$6 ns dev gid ip sns sdev sgid sip

	shift 6
	side "$s"
	sns=$ns sdev=$dev sgid=$gid sip=$ip
	side "$c"
	pingpong_pair "$tool" "$sns" "$sdev" "$sgid" "$sip" "$ns" "$dev" "$gid" "$port" "$size" "$n" "$@"
}

# perftest SERVER CLIENT PORT TOOL SIZE (SIZE empty: the tool's fixed 8)
perftest()
{
	local s=$1 c=$2 port=$3 tool=$4 size=$5 out sz=()

	[ -n "$size" ] && sz=(-s "$size")
	out=$(pp "$s" "$c" "$port" 120 "$tool" -x -F -n "$iters" "${sz[@]}") || { echo "$out"; return 1; }
	perftest_verify "$out" "${size:-8}" "$iters" || { printf '%s\n' "$out" | sed 's/^/  | /'; return 1; }
}

port=19300
for dir in "B A" "A B"; do
	read -r s c <<<"$dir"
	side "$s"
	what="server $dev, client"
	side "$c"
	what+=" $dev"
	for run in "1 20 -m 1024" "4097 20 -m 1024" "1048576 10 -m 4096"; do
		read -r size n mtu <<<"$run"
		port=$((port + 1))
		# shellcheck disable=SC2086 # mtu: "-m N", split on purpose
		check_run "ibv_rc_pingpong -s $size $mtu ($what)" \
			pingpong "$s" "$c" "$port" ibv_rc_pingpong "$size" "$n" $mtu
	done
	for size in 1024 4096; do
		port=$((port + 1))
		check_run "ibv_ud_pingpong -s $size ($what)" \
			pingpong "$s" "$c" "$port" ibv_ud_pingpong "$size" 20
	done
	for run in "ib_write_bw 65536" "ib_read_bw 65536" "ib_send_bw 65536" "ib_atomic_bw -" \
		"ib_send_lat 4096"; do
		read -r tool size <<<"$run"
		[ "$size" = - ] && size=""
		port=$((port + 1))
		check_run "$tool${size:+ -s $size} ($what)" perftest "$s" "$c" "$port" "$tool" "$size"
	done
done
for run in "1024 post" "4096 mix"; do
	read -r mtu api <<<"$run"
	check_run "scire_integrity -m $mtu -a $api -w: QP A on $TOPO_DEV_B, QP B on $TOPO_DEV_A" \
		integrity_pair "$TOPO_DEV_B" "$TOPO_GID_B" "$TOPO_DEV_A" "$TOPO_GID_A" \
		-m "$mtu" -a "$api" -w -n "${SCIRE_INTEGRITY_OPS:-400}"
done

check_report
