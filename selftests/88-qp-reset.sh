#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A QP's unpolled completions leave its CQ when it goes to RESET or is
# destroyed, another QP's on the same CQ stay in order, and the QP works
# again after RESET: scire_qp_reset on $SCIRE_DEV (scire0), once on the
# same-host fast path (fast_path=1) and once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_qp_reset) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
