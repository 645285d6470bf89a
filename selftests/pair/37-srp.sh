#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SCSI RDMA Protocol (SRP) across two kernels (scripts/vm --pair): LIO's
# SRP target (ib_srpt) on host a exports a 64 MiB RAM disk on its
# device's port with an ACL for b's initiator port (b's GID 0), and
# listens for rdma_cm logins on port 5555 (lio-lib.sh); ib_srp on b logs
# in with add_target, id_ext and ioc_guid a's node GUID,
# dest=192.168.78.1:5555. ib_srpt on a and ib_srp on b must have their
# QPs on each host's device; fio on b writes random O_DIRECT blocks of
# 4 KiB to 1 MiB at depth 16 over 32 MiB of the disk and checks each
# block's crc32c when it reads them back, and each host's device must
# have sent and received that much on the wire meanwhile. Then b deletes
# the remote port, a removes the target, both unload the modules, and
# `rdma resource show` is back to its baseline on both (the core's idle
# pool CQs aside: pair_ulp in lib.sh). Scire to scire only, for make
# check's time; SCIRE_PAIR_ULPS=1 runs it on any pair.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../lio-lib.sh
. "$(dirname "$0")/../lio-lib.sh"

pair_need_scire SCIRE_PAIR_ULPS
srp_need
base_mods=$(mods_loaded)
other=$([ "$SCIRE_HOST" = a ] && echo b || echo a)

# Print the kernel log of this test (SRP, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'srp|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# Each host tells the other its device's GID 0 (a's ACL names b's) and
# node GUID (b's add_target names a's).
echo "$(dev_gid0 "$PAIR_DEV") $(dev_guid "$PAIR_DEV")" >"$SCIRE_SHARED/srp.$SCIRE_HOST.ids" ||
	fail "cannot write to $SCIRE_SHARED"
pair_sync ids 300 || fail "host $other never told its GID and GUID"
read -r peer_gid peer_guid <"$SCIRE_SHARED/srp.$other.ids"

# shellcheck disable=SC2317 # the steps of pair_ulp
{
ulp_target_up() { srp_target_up "$PAIR_DEV" "$peer_gid"; }
ulp_initiator_up()
{
	srp_login "$PAIR_DEV" "$peer_guid" "$SCIRE_PEER"
	ULP_WHERE=$SRP_DISK
}
ulp_after_io() { :; }
ulp_initiator_down() { srp_logout; }
ulp_teardown() { srp_teardown "$base_mods"; }
}

mark=$(kmsg_mark)
pair_ulp SRP 32M ib_srpt ib_srp || fail "SRP across the pair failed on host $SCIRE_HOST"
exit 0
