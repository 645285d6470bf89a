#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device memory on $SCIRE_DEV (scire0): ibv_alloc_dm limits, copies to and
# from it, DM MRs as RDMA WRITE/READ targets and as local SGEs, EBUSY for a
# DM an MR covers, a freed DM that a forked child still maps counting
# against the limit until it goes: scire_dm, once on the same-host fast
# path (fast_path=1) and once on the wire path (0). Then rdma-core's
# ibv_rc_pingpong -j (its buffer in device memory) between two processes.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_dm) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"

# -j: rc_pingpong's buffer is device memory, copied in whole words, so
# sizes are multiples of 4 (-s 1 fails: EINVAL, see scire(7)).
dev=$SCIRE_DEV
port=18780
for mode in $(fast_path_modes "$dev"); do
	for size in 4096 65536; do
		port=$((port + 1))
		out=$(run_fast_path "$mode" "$dev" pair_run 120 "$port" ibv_rc_pingpong -d "$dev" \
			-g "$gid" -s "$size" -n 20 -c -j -p "$port") ||
			fail "ibv_rc_pingpong -j -s $size -n 20 -c on $dev, $(fast_path_name "$mode"):
$out"
		echo "$(fast_path_name "$mode"), ibv_rc_pingpong -j -s $size: ok:" \
			"$(grep -m1 'bytes in' <<<"$out")"
	done
done
exit 0
