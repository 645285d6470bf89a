#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# IBA 1.5 RDMA FLUSH (scire_flush.py, through pyverbs' ibv_wr_flush()): a
# FLUSH of a written range and of a whole region completes, bursts beyond
# max_rd_atomic complete in order, WRITEs each followed by a FLUSH leave
# exactly the bytes written at every path MTU; persistence to an MR that grants only
# global visibility, a range past the MR, a wrong rkey and a QP without
# the FLUSH rights are refused with the statuses rdma_rxe gives, and
# change no byte; an MR over ordinary memory is refused the persistence
# right. With persistent memory (a device-DAX namespace over scripts/vm's
# NVDIMM, SCIRE_VM_NVDIMM), a WRITE and a FLUSH for persistence into it.
# On scire0, once on the same-host fast path and once on the wire path,
# with the device capabilities required; then scire against rdma_rxe over
# a veth (topo_rxe_scire), each as the requester.
#
# Needs rdma-core 45 or later (ibv_wr_flush()) and a 6.2 or later kernel
# (the FLUSH access rights): Debian trixie. On bookworm (rdma-core 44,
# 6.1) it skips, saying which is missing.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(cd "$(dirname "$0")" && pwd)/scire_flush.py
gid=$(need_dev_gid "$SCIRE_DEV") || exit 1

python3 - <<'PY' 2>/dev/null || skip "this rdma-core's pyverbs has no ibv_wr_flush() (rdma-core 45 and later)"
from pyverbs.qp import QPEx
import sys
sys.exit(0 if hasattr(QPEx, 'wr_flush') else 1)
PY
v=$(uname -r) maj=${v%%.*} min=${v#*.}
min=${min%%[!0-9]*}
{ [ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 2 ]; }; } ||
	skip "kernel $(uname -r) has no RDMA FLUSH access rights (they came in 6.2)"

# Persistent memory for the persistence checks: a device-DAX namespace
# over scripts/vm's NVDIMM (make check's trixie boot has one).
pmem=()
if dax=$(pmem_devdax); then
	echo "persistent memory: $dax"
	pmem=(-P "$dax")
else
	echo "note: no persistent memory, so no FLUSH for persistence is executed: $dax"
fi

fast_path_each "$SCIRE_DEV" python3 "$prog" -d "$SCIRE_DEV" -g "$gid" -C "${pmem[@]}"

trap topo_teardown EXIT
topo_rxe_scire 9000
topo_describe
check_run "scire_flush: requester $TOPO_DEV_B, responder $TOPO_DEV_A" \
	timeout -k 5 300 python3 "$prog" -d "$TOPO_DEV_B" -g "$TOPO_GID_B" -D "$TOPO_DEV_A" -G "$TOPO_GID_A" -C "${pmem[@]}"
check_run "scire_flush: requester $TOPO_DEV_A, responder $TOPO_DEV_B" \
	timeout -k 5 300 python3 "$prog" -d "$TOPO_DEV_A" -g "$TOPO_GID_A" -D "$TOPO_DEV_B" -G "$TOPO_GID_B" "${pmem[@]}"
check_report
