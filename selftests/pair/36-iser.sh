#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSCSI over RDMA (iSER) across two kernels (scripts/vm --pair): LIO's
# iSCSI target with ib_isert on host a exports a 64 MiB RAM disk on a
# portal with iSER enabled on a's address (lio-lib.sh); open-iscsi on b
# discovers it and logs in through the iface "iser" (transport iser,
# SCSI host iscsi_iser's). ib_isert on a and ib_iser on b must have their
# QPs on each host's device; fio on b writes random O_DIRECT blocks of
# 4 KiB to 1 MiB at depth 16 over 32 MiB of the disk and checks each
# block's crc32c when it reads them back, and each host's device must
# have sent and received that much on the wire meanwhile. Then b logs
# out, a removes the target, both unload the modules, and `rdma resource
# show` is back to its baseline on both (the core's idle pool CQs aside:
# pair_ulp in lib.sh). Scire to scire only, for make check's time;
# SCIRE_PAIR_ULPS=1 runs it on any pair.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lio-lib.sh
. "$(dirname "$0")/../lio-lib.sh"

pair_need_scire SCIRE_PAIR_ULPS
iser_need
base_mods=$(mods_loaded)

# Print the kernel log of this test (iSCSI, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'iscsi|iser|isert|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# shellcheck disable=SC2317 # the steps of pair_ulp
{
ulp_target_up() { iser_target_up "$PAIR_DEV" "$SCIRE_ADDR"; }
ulp_initiator_up()
{
	iser_login "$SCIRE_PEER"
	ULP_WHERE=$ISER_DISK
}
ulp_after_io() { :; }
ulp_initiator_down() { iser_logout "$SCIRE_PEER"; }
ulp_teardown() { iser_teardown "$SCIRE_PEER" "$base_mods"; }
}

mark=$(kmsg_mark)
pair_ulp iSER 32M ib_isert ib_iser || fail "iSER across the pair failed on host $SCIRE_HOST"
exit 0
