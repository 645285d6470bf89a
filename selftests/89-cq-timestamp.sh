#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Completion timestamps: the device's completion clock (1 GHz, read by
# ibv_query_rt_values_ex without a system call), CQEs stamped with it and
# converted to wall-clock time, in order, between the clock readings
# around each SEND; other extended CQ fields refused: scire_cq_ts on
# $SCIRE_DEV (scire0), on the same-host fast path (fast_path=1) and on
# the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_cq_ts) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
