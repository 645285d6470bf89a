#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Remote access checks on $SCIRE_DEV (scire0): RDMA WRITE, READ and both
# atomics past the target MR's end, before its start, without the access
# right, with a wrong, a stale (deregistered) and another PD's rkey must
# complete with IBV_WC_REM_ACCESS_ERR, flush what follows, leave the
# requester QP in ERR and change no byte: scire_access. On scire, once on
# the same-host fast path (fast_path=1) and once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_access) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
