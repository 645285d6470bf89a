#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Rings shared with user space cannot hurt the kernel: scire_scribble
# --strict writes random bytes over every uverbs mapping (CQ, SQ, RQ, SRQ
# rings) of a process with a connected RC QP pair and an SRQ while posting
# and polling, 3000 times; nothing may crash or hang, every destroy call
# must succeed, the kernel log must stay clean (the runner checks it), the
# resource counts of $SCIRE_DEV (scire0) must be back to where they were,
# and the device must still move data (a short scire_integrity run).
#
# Only for scire devices: rdma_rxe trusts the rings it shares with user
# space; its provider (rdma-core 44) crashes on the first scribbled index
# and its kernel oopses (copy_data from a scribbled receive WQE, then soft
# lockups). SCIRE_SCRIBBLE_ANY=1 runs it on another device anyway, sparing
# rxe's queue headers (--spare 384) and tolerating a provider crash.
# shellcheck disable=SC2317 # functions run by wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_scribble) || exit 1
integrity=$(need_prog scire_integrity) || exit 1
dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1

quirks=()
if dev_is_scire "$dev"; then
	args=(--strict)
elif [ "${SCIRE_SCRIBBLE_ANY:-0}" = 1 ]; then
	args=(--spare 384)
	quirks=(-R)
else
	skip "$dev is not a scire device, and rdma_rxe cannot take this test (its kernel oopses); SCIRE_SCRIBBLE_ANY=1 runs it anyway"
fi
seed=()
[ -z "${SCIRE_SEED:-}" ] || seed=(-s "$SCIRE_SEED")

base=$(rdma_res_counts "$dev")
[ -n "$base" ] || fail "rdma resource show has no line for $dev"
echo "before: $base"

"$prog" -d "$dev" -g "$gid" -n 3000 "${args[@]}" "${seed[@]}" ||
	fail "scire_scribble ${args[*]} on $dev failed (replay: SCIRE_SEED=<the seed it printed>)"

back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }
wait_for 5 back ||
	fail "5 s after scire_scribble ended: $dev resource counts '$(rdma_res_counts "$dev")', expected '$base'"
echo "after: $(rdma_res_counts "$dev")"

out=$("$integrity" -d "$dev" -g "$gid" -n 100 -M 65536 "${quirks[@]}" 2>&1) ||
	fail "$dev does not move data correctly after the scribbling:
$out"
echo "$dev still moves data: $(tail -n1 <<<"$out")"
exit 0
