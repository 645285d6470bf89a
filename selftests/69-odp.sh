#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# On-demand paging on $SCIRE_DEV (scire0): odp_caps, RDMA WRITE, READ,
# SEND and atomics into and out of an ODP MR over untouched memory (each
# first access a page fault, counted), ibv_advise_mr prefetch, and an MR
# that follows munmap() and a new mmap() of its range: scire_odp, once on
# the same-host fast path (fast_path=1) and once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_odp) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
