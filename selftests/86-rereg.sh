#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ibv_rereg_mr() on $SCIRE_DEV (scire0): a new translation moves the MR's
# data to the new buffer and none to the old one, dropping a right is
# enforced remotely, a PD change switches which QPs get through, and an MR
# with a memory window bound cannot be reregistered; the keys stay:
# scire_rereg. On scire, once on the same-host fast path (fast_path=1) and
# once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_rereg) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
