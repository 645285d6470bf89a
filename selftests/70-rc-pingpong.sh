#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RC SEND/RECV with data checks on $SCIRE_DEV (scire0): ibv_rc_pingpong -c and
# ibv_srq_pingpong -c (16 QPs on one SRQ), server and client on the same
# device through its IPv4 RoCE v2 GID (TCP exchange over 127.0.0.1), at
# message sizes 1, 4097 (path MTU 1024: four full packets and one of a
# single byte) and 1048576 (1 and 65536 on the debug kernel); other sizes
# are perftest's (75) and scire_integrity's (80). Both sides must exit 0
# within 120 s; -c makes each side check every received buffer. On scire, all of
# it on the same-host fast path (fast_path=1), then on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
echo "$dev, GID index $gid"

sizes="1 4097 1048576"
# The debug kernel (KASAN, lockdep, kmemleak) spends ~30 s of start-up per
# pair: two sizes there, one short and one of 16 MTU-sized packets, unless
# SCIRE_DEBUG_FULL=1 (make check-debug).
if debug_quick; then
	sizes="1 65536"
fi
port=18700
for mode in $(fast_path_modes "$dev"); do
	for size in $sizes; do
		for prog in ibv_rc_pingpong ibv_srq_pingpong; do
			port=$((port + 1))
			start=$SECONDS
			out=$(run_fast_path "$mode" "$dev" pair_run 120 "$port" "$prog" -d "$dev" -g "$gid" \
				-s "$size" -n 20 -c -p "$port") ||
				fail "$prog -s $size -n 20 -c between two QPs of $dev, $(fast_path_name "$mode"):
$out"
			echo "$(fast_path_name "$mode"), $prog -s $size: ok ($((SECONDS - start)) s):" \
				"$(grep -m1 'bytes in' <<<"$out")"
		done
	done
done
exit 0
