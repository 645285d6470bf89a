#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC data integrity on $SCIRE_DEV (scire0): scire_integrity with memory
# windows (-w) at path MTU 256 and 4096, once with ibv_post_send and once
# with the ibv_wr_* API each, and once mixed at MTU 1024: random SEND,
# SEND_WITH_IMM, RDMA WRITE (with IMM), READ, atomics, ATOMIC WRITE (not
# against rxe), fenced READ pairs and type-2 windows, every byte and every
# CQE checked. MTU 4096 needs a netdev
# MTU of at least 4096 + RoCEv2 headers: it is raised to 9000 if lower, and
# restored. The two QPs are on one host: on scire this all runs first on
# the same-host fast path (fast_path=1: units, where the path MTU does not
# segment, so only MTU 4096 wr and 1024 mix), then on the wire path
# (fast_path=0). Where the kernel has udmabuf (6.12 on; not bookworm's
# 6.1; and whose udmabuf can be mapped, which 6.1's, in the debug kernel,
# cannot) every buffer is then a dma-buf MR (-b, without windows: the core
# grants a dma-buf MR no MW_BIND right), on both paths, at every path MTU
# (256 to 4096) on the wire. SCIRE_SEED=N replays a seed;
# On scire also with every MR on-demand paging (-o) and with one implicit
# ODP MR a side (-O), on both paths (on the wire at every path MTU); and
# over XRC instead of RC (-X: an XRC send QP, receive QP and SRQ a side),
# on both paths, on the wire at every path MTU, with ODP MRs too.
# SCIRE_INTEGRITY_OPS sets the ops per run (600).
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_integrity) || exit 1
dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
netdev=$(dev_netdev "$dev")
[ -n "$netdev" ] || fail "cannot tell the netdev of $dev: $(rdma link show "$dev/1" 2>&1)"
ops=${SCIRE_INTEGRITY_OPS:-600}
sizes=()
# The debug kernel is 5-10x slower: for time, fewer ops and messages of
# at most 64 KiB there (make check-debug, SCIRE_DEBUG_FULL=1, takes the
# full sizes: 190 s in one run). Each run costs some 7 s of
# process start-up there: the wire path runs each MTU and each API once
# (three runs, not five).
wire_runs=("256 post" "256 wr" "4096 post" "4096 wr" "1024 mix")
xrc_wire_runs=("256 mix -X" "512 post -X -o" "1024 wr -X" "2048 mix -X -O" "4096 mix -X")
if debug_quick; then
	ops=${SCIRE_INTEGRITY_OPS:-120}
	sizes=(-M 65536)
	wire_runs=("256 post" "4096 wr" "1024 mix")
	xrc_wire_runs=("1024 mix -X -o")
fi

old_mtu=$(cat "/sys/class/net/$netdev/mtu")
cleanup()
{
	[ "$(cat "/sys/class/net/$netdev/mtu")" = "$old_mtu" ] ||
		ip link set "$netdev" mtu "$old_mtu"
}
trap cleanup EXIT
if [ "$old_mtu" -lt 4200 ]; then
	ip link set "$netdev" mtu 9000 || fail "cannot set $netdev's MTU to 9000 (for path MTU 4096)"
fi
active_4096() { ibv_devinfo -d "$dev" | grep -q 'active_mtu:[[:space:]]*4096'; }
wait_for 5 active_4096 ||
	fail "$dev on $netdev (MTU $(cat "/sys/class/net/$netdev/mtu")): port active_mtu is not 4096: $(ibv_devinfo -d "$dev" | grep mtu)"

quirks=()
if ! dev_is_scire "$dev"; then
	# Not scire: rdma_rxe with rdma-core 44's provider. -R works around
	# that provider's ibv_wr_* length bugs and its wc_flags numbering
	# (see scire_integrity.c); scire must pass without it.
	quirks=(-R)
fi
seed=()
[ -z "${SCIRE_SEED:-}" ] || seed=(-s "$SCIRE_SEED")

# dma-buf MRs (scire only: rxe has no reg_user_mr_dmabuf).
dmabuf=0
if dev_is_scire "$dev"; then
	modprobe udmabuf 2>/dev/null
	if [ -c /dev/udmabuf ]; then
		# 77: a udmabuf without vmap (6.1's), which scire cannot map.
		"$(need_prog scire_dmabuf)" -d "$dev" -g "$gid" -c length >/dev/null 2>&1
		case $? in
		0) dmabuf=1 ;;
		77) echo "kernel $(uname -r): its udmabuf gives no kernel mapping: no dma-buf runs" ;;
		*) fail "scire_dmabuf -c length on $dev failed: $("$(need_prog scire_dmabuf)" -d "$dev" -g "$gid" -c length 2>&1 | tail -n3)" ;;
		esac
	else
		echo "no /dev/udmabuf in kernel $(uname -r): no dma-buf runs"
	fi
fi

for mode in $(fast_path_modes "$dev"); do
	runs=("${wire_runs[@]}")
	[ "$mode" != 1 ] || runs=("4096 wr" "1024 mix")
	# On-demand paging: every MR ODP (-o), or one implicit ODP MR a side
	# (-O), windows too; on the wire at every path MTU.
	if dev_is_scire "$dev"; then
		if [ "$mode" = 1 ]; then
			runs+=("4096 mix -o -w" "1024 wr -O -w" "1024 mix -X")
		else
			runs+=("256 post -o -w" "512 wr -O -w" "1024 mix -o -w" "2048 wr -O -w"
				"4096 post -O -w")
			runs+=("${xrc_wire_runs[@]}")
		fi
	fi
	if [ "$dmabuf" = 1 ]; then
		if [ "$mode" = 1 ]; then
			runs+=("4096 mix -b")
		else
			runs+=("256 post -b" "512 wr -b" "1024 mix -b" "2048 post -b" "4096 wr -b")
		fi
	fi
	for run in "${runs[@]}"; do
		read -r mtu api mem <<<"$run"
		# Windows (-w) on every run but the dma-buf ones: the core's
		# REG_DMABUF_MR takes no MW_BIND right.
		mem=${mem:--w}
		read -r -a memargs <<<"$mem"
		start=$SECONDS
		run_fast_path "$mode" "$dev" \
			"$prog" -d "$dev" -g "$gid" -m "$mtu" -a "$api" "${memargs[@]}" -n "$ops" "${sizes[@]}" "${seed[@]}" "${quirks[@]}" ||
			fail "scire_integrity -m $mtu -a $api $mem -n $ops ${sizes[*]} ${quirks[*]} on $dev, $(fast_path_name "$mode") failed (replay: SCIRE_SEED=<the seed it printed>)"
		case $mem in
		-X) mem=", XRC" ;;
		"-X -o") mem=", XRC, ODP MRs" ;;
		"-X -O") mem=", XRC, implicit ODP MRs" ;;
		-b) mem=", dma-buf MRs" ;;
		-o*) mem=", ODP MRs" ;;
		-O*) mem=", implicit ODP MRs" ;;
		*) mem= ;;
		esac
		echo "$(fast_path_name "$mode"), MTU $mtu, API $api$mem: $((SECONDS - start)) s"
	done
done
exit 0
