#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# IBA 1.5 RDMA ATOMIC WRITE (scire_atomic_write): the 8 bytes land exactly,
# in order with the other atomics on the same word, in bursts beyond
# max_rd_atomic; a wrong rkey, a missing right, a range past the MR and a
# misaligned address complete in error and change no byte. On scire0, once
# on the same-host fast path (fast_path=1) and once on the wire path (0),
# with the device capability required where the kernel defines it (6.2 on).
# Then scire against rdma_rxe over a veth (topo_rxe_scire), each as the
# requester, where rxe executes ATOMIC WRITE (6.2 on); before that the
# interop part is skipped, saying why.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_atomic_write) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1

# The kernel's IB_DEVICE_ATOMIC_WRITE (and rxe's ATOMIC WRITE) came in 6.2.
kernel_at_least_6_2()
{
	local v maj min

	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 2 ]; }
}

cap=()
kernel_at_least_6_2 && cap=(-C)
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid" "${cap[@]}"

if ! kernel_at_least_6_2; then
	echo "SKIP interop with rdma_rxe: rxe of $(uname -r) has no RDMA ATOMIC WRITE (it came in 6.2)"
	exit 0
fi

trap topo_teardown EXIT
topo_rxe_scire 9000
topo_describe
check_run "scire_atomic_write: requester $TOPO_DEV_B, responder $TOPO_DEV_A" \
	timeout -k 5 300 "$prog" -d "$TOPO_DEV_B" -g "$TOPO_GID_B" -D "$TOPO_DEV_A" -G "$TOPO_GID_A" -C
check_run "scire_atomic_write: requester $TOPO_DEV_A, responder $TOPO_DEV_B" \
	timeout -k 5 300 "$prog" -d "$TOPO_DEV_A" -g "$TOPO_GID_A" -D "$TOPO_DEV_B" -G "$TOPO_GID_B"
check_report
