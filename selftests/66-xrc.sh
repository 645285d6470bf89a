#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# XRC (IBA annex A19) on $SCIRE_DEV (scire0), once on the same-host fast
# path (fast_path=1) and once on the wire path (0, the driver's loopback
# builds and parses every XRCETH): scire_xrc (SENDs, RDMA and atomics
# through XRC QPs, two SRQs on one receive QP, another domain's SRQ or a
# missing one refused with NAK Invalid Request, another PD's R_Key, a
# destroyed SRQ, posts XRC QPs must refuse, and a domain and receive QP
# shared with a second process through the domain's file); then
# rdma-core's ibv_xsrq_pingpong (an XRC
# domain in a file, an XRC SRQ and receive QP per client on the server,
# an XRC send QP each side, SENDs with data checked by the tool's own
# sequence) at 2 bytes, 4 KiB (several packets at MTU 1024) and 64 KiB;
# then perftest's -c XRC (SEND, WRITE and READ through XRC QPs). make
# check's debug boot (debug_quick) runs the pingpong at 4 KiB and
# perftest's SEND only, for its time.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
command -v ibv_xsrq_pingpong >/dev/null ||
	fail "ibv_xsrq_pingpong missing (Debian package ibverbs-utils)"
prog=$(need_prog scire_xrc) || exit 1
fast_path_each "$dev" "$prog" -d "$dev" -g "$gid"

sizes="2 4096 65536" tools="ib_send_bw ib_write_bw ib_read_bw"
if debug_quick; then
	sizes=4096 tools=ib_send_bw
fi
port=18660
for mode in $(fast_path_modes "$dev"); do
	for size in $sizes; do
		port=$((port + 1))
		out=$(run_fast_path "$mode" "$dev" pair_run 120 "$port" ibv_xsrq_pingpong \
			-d "$dev" -g "$gid" -m 1024 -s "$size" -n 20 -p "$port") ||
			fail "ibv_xsrq_pingpong -s $size on $dev, $(fast_path_name "$mode"):
$out"
		echo "$(fast_path_name "$mode"), ibv_xsrq_pingpong -s $size: ok"
	done
	for tool in $tools; do
		port=$((port + 1))
		out=$(run_fast_path "$mode" "$dev" pair_run 120 "$port" "$tool" -d "$dev" \
			-x "$gid" -F -c XRC -n 20 -s 65536 -p "$port") ||
			fail "$tool -c XRC on $dev, $(fast_path_name "$mode"):
$out"
		echo "$(fast_path_name "$mode"), $tool -c XRC -s 65536: ok;" \
			"$(grep -E '^ *[0-9]+ ' <<<"$out" | tail -n1 | tr -s ' \t' ' ')"
	done
done
exit 0
