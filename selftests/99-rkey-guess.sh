#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A client guessing rkeys against a victim with live regions on
# $SCIRE_DEV: keys near those it saw, a counter's successors, stale key
# bytes and random ones, each an RDMA WRITE over UC into a page only the
# key protects. Not one byte may change, and each guess is counted in
# resp_remote_access_errors: scire_rkey_guess, once on the same-host fast
# path and once on the wire path.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_rkey_guess) || exit 1
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1
fast_path_each "$SCIRE_DEV" "$prog" -d "$SCIRE_DEV" -g "$gid"
exit 0
