#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest's RC tools on $SCIRE_DEV (scire0), server and client on the same
# device (TCP exchange over 127.0.0.1, RoCE v2 GID -x): ib_write_bw,
# ib_read_bw and ib_send_bw over all message sizes (-a: 2 bytes to 8 MiB),
# ib_write_lat, ib_read_lat and ib_send_lat at 2 bytes and 64 KiB (a
# ping-pong over every size took 13 s a tool and added nothing the bw
# tools do not cover), ib_atomic_bw and ib_atomic_lat at their fixed 8
# bytes (they refuse -a: "Message size cannot be changed for Atomic
# tests"). Few iterations (-n, SCIRE_PERFTEST_ITERS, default 5):
# this checks that the tools run to completion on both sides, under a
# timeout each, not how fast.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
iters=${SCIRE_PERFTEST_ITERS:-5}
echo "$dev, GID index $gid, -n $iters"

port=18900
for tool in ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw ib_send_lat \
	ib_atomic_bw ib_atomic_lat; do
	command -v "$tool" >/dev/null || fail "$tool missing (Debian package perftest)"
	case $tool in
	ib_atomic_*) runs=("") ;;
	*_lat) runs=("-s 2" "-s 65536") ;;
	*) runs=(-a) ;;
	esac
	for r in "${runs[@]}"; do
		read -ra all <<<"$r"
		port=$((port + 1))
		start=$SECONDS
		out=$(pair_run 180 "$port" "$tool" -d "$dev" -x "$gid" -F -n "$iters" "${all[@]}" \
			-p "$port") || fail "$tool ${all[*]} -n $iters on $dev:
$out"
		# The last result line: the largest size.
		echo "$tool ${all[*]}: ok ($((SECONDS - start)) s); last line: $(grep -E '^ *[0-9]+ ' <<<"$out" | tail -n1 | tr -s ' \t' ' ')"
	done
done
exit 0
