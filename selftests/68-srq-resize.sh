#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Resizing an SRQ (ibv_modify_srq with IBV_SRQ_MAX_WR): the device claims
# IBV_DEVICE_SRQ_RESIZE; an SRQ grows with its WQEs posted and shrinks
# while they still fit, refuses sizes they do not fit, 0, beyond
# max_srq_wr and below an armed limit, and every WQE posted before, during
# and after three resizes in a row is taken in order by a SEND into its
# own buffer: scire_srq_resize on $SCIRE_DEV (scire0), on the same-host
# fast path (fast_path=1) and on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_srq_resize) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
