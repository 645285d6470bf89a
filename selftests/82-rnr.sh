#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Receiver Not Ready on $SCIRE_DEV (scire0): a SEND that finds no receive
# WQE waits (RNR NAK, retried after the RNR timer) and completes, in order
# and byte-exact, once one is posted; with rnr_retry 0 it completes with
# IBV_WC_RNR_RETRY_EXC_ERR and the QP enters ERR: scire_rnr, at 16 bytes (a
# direct request on the fast path) and 40000 bytes. On scire, once on the
# same-host fast path (fast_path=1) and once on the wire path (0).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_rnr) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
