#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Type 1 memory windows on $SCIRE_DEV (scire0): ibv_alloc_mw(IBV_MW_TYPE_1)
# and ibv_bind_mw(); bind, rebind and unbind give new rkeys and retire the
# old ones; data moves through the window only inside its range and rights;
# LOCAL_INV and SEND_WITH_INV cannot invalidate it; binds beyond what the MR
# allows are refused; dereg of its MR is refused while bound: scire_mw. On
# scire, once on the same-host fast path (fast_path=1) and once on the wire
# path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_mw) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
