#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two kernels, one wire (scripts/vm --pair; SCIRE_PAIR_DEVS says which
# RDMA device each host has): each host as server and as client in turn,
# ibv_rc_pingpong -c (4 KiB and 64 KiB), ibv_ud_pingpong -c,
# ibv_srq_pingpong -c, rping -v -V (rdma_cm), and perftest ib_write_bw,
# ib_read_bw and ib_send_lat; between two scire devices also XRC
# (ibv_xsrq_pingpong, ib_send_bw -c XRC). Data is validated by the tools
# themselves.
# Then scire_integrity -P: one QP on each host, every op kind in both
# directions (SENDs, WRITEs, READs, atomics, fenced pairs, memory
# windows), every byte and CQE checked by the host that owns it (a is QP
# A and listens, b connects with -C).
# Runs on both hosts at once; each reports its own half.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ -n "${SCIRE_HOST:-}" ] || skip "not on a VM pair (scripts/vm --pair)"
dev=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
[ -n "$dev" ] || skip "no RDMA device on eth0 on host $SCIRE_HOST (SCIRE_PAIR_DEVS none?)"
gid=$(need_dev_gid "$dev") || exit 1
echo "host $SCIRE_HOST: $dev (GID index $gid) on eth0 $SCIRE_ADDR, peer $SCIRE_PEER"
pair_sync start 300 || fail "the other host never started"

failed=0
for srv in a b; do
	pp=(-d "$dev" -g "$gid" -c)
	pair_duo "ibv_rc_pingpong -s 4096" "$srv" ibv_rc_pingpong "${pp[@]}" -n 200 -s 4096 -- \
		ibv_rc_pingpong "${pp[@]}" -n 200 -s 4096 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ibv_rc_pingpong -s 65536" "$srv" ibv_rc_pingpong "${pp[@]}" -n 50 -s 65536 -- \
		ibv_rc_pingpong "${pp[@]}" -n 50 -s 65536 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ibv_ud_pingpong" "$srv" ibv_ud_pingpong "${pp[@]}" -n 200 -s 2048 -- \
		ibv_ud_pingpong "${pp[@]}" -n 200 -s 2048 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ibv_srq_pingpong" "$srv" ibv_srq_pingpong "${pp[@]}" -n 100 -s 4096 -- \
		ibv_srq_pingpong "${pp[@]}" -n 100 -s 4096 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "rping -v -V" "$srv" rping -s -a "$SCIRE_ADDR" -C 50 -S 4000 -V -- \
		rping -c -a "$SCIRE_PEER" -C 50 -S 4000 -v -V || failed=$((failed + 1))
	pt=(-d "$dev" -x "$gid" -F)
	pair_duo "ib_write_bw -s 65536" "$srv" ib_write_bw "${pt[@]}" -s 65536 -n 100 -- \
		ib_write_bw "${pt[@]}" -s 65536 -n 100 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ib_read_bw -s 65536" "$srv" ib_read_bw "${pt[@]}" -s 65536 -n 100 -- \
		ib_read_bw "${pt[@]}" -s 65536 -n 100 "$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ib_send_lat -s 2" "$srv" ib_send_lat "${pt[@]}" -s 2 -n 200 -- \
		ib_send_lat "${pt[@]}" -s 2 -n 200 "$SCIRE_PEER" || failed=$((failed + 1))
	# XRC between two kernels (scire only: rxe has none).
	pair_has_rxe && continue
	pair_duo "ibv_xsrq_pingpong -s 4096" "$srv" ibv_xsrq_pingpong -d "$dev" -g "$gid" \
		-n 50 -s 4096 -- ibv_xsrq_pingpong -d "$dev" -g "$gid" -n 50 -s 4096 \
		"$SCIRE_PEER" || failed=$((failed + 1))
	pair_duo "ib_send_bw -c XRC -s 65536" "$srv" ib_send_bw "${pt[@]}" -c XRC -s 65536 \
		-n 100 -- ib_send_bw "${pt[@]}" -c XRC -s 65536 -n 100 "$SCIRE_PEER" ||
		failed=$((failed + 1))
done
# One run: each QP is requester and responder of ops both ways, whichever
# host listens for the TCP connection. rxe (rdma-core 44's provider, 6.1's
# driver) needs -R: see scire_integrity.c.
si=(scire_integrity -d "$dev" -g "$gid" -P 19477)
pair_has_rxe && si+=(-R)
pair_duo "scire_integrity -P -m 4096 -a mix -w" a "${si[@]}" -m 4096 -a mix -w \
	-n "${SCIRE_INTEGRITY_OPS:-400}" -- "${si[@]}" -C "$SCIRE_PEER" || failed=$((failed + 1))
[ "$failed" = 0 ] || fail "$failed of the runs above failed on host $SCIRE_HOST"
exit 0
