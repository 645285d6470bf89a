#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Parent and thread domains on $SCIRE_DEV (scire0): refused attributes,
# an extended CQ and RC QPs of a parent domain with a TD (no locking) and
# counting allocators, SEND and RDMA WRITE between them with the bytes
# checked, the allocators' calls, EBUSY for a parent domain, PD or TD still
# in use; then with default-answering allocators and with neither TD nor
# allocators: scire_pd, once on the same-host fast path (fast_path=1) and
# once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_pd) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
