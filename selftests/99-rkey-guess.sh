#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A client guessing rkeys against a victim with live regions on
# $SCIRE_DEV: keys near those it saw, a counter's successors, stale key
# bytes and random ones, each an RDMA WRITE over UC into a page only the
# key protects. Not one byte may change, and each guess is counted in
# resp_remote_access_errors: scire_rkey_guess, once on the same-host fast
# path and once on the wire path. Then, on the wire path, a flood of
# wrong keys for 20 s with an honest ibv_rc_pingpong (data checked)
# beside it on the same device: the pingpong completes while the count
# of refusals grows.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_rkey_guess) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"

[ "$(fast_path_modes "$SCIRE_DEV")" = - ] || echo 0 >"$FAST_PATH_PARAM"
out=$(mktemp)
"$prog" -d "$SCIRE_DEV" -g "$gid" -t 20 >"$out" 2>&1 &
flood=$!
wait_for 30 grep -q flooding "$out" || fail "the flood did not start: $(cat "$out")"
c0=$(rdma_counter "$SCIRE_DEV" resp_remote_access_errors)
pingpong_pair ibv_rc_pingpong "" "$SCIRE_DEV" "$gid" 127.0.0.1 "" "$SCIRE_DEV" "$gid" 18515 \
	4096 200
rc=$?
c1=$(rdma_counter "$SCIRE_DEV" resp_remote_access_errors)
wait "$flood"
frc=$?
echo 1 >"$FAST_PATH_PARAM" 2>/dev/null
cat "$out"
rm -f "$out"
[ "$rc" = 0 ] || fail "the honest pingpong failed beside the flood"
[ "$frc" = 0 ] || fail "the flood's checks failed (status $frc)"
[ "$c1" -gt "$c0" ] || fail "no guess was refused while the pingpong ran: no overlap"
echo "ok: ibv_rc_pingpong completed while $((c1 - c0)) guesses were refused beside it"
exit 0
