#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSCSI over RDMA (iSER) over scire0, on one host (the VM's eth0,
# 192.168.77.2): the kernel's iSCSI target (LIO, iscsi_target_mod with
# ib_isert) exports a 64 MiB RAM disk on a portal with iSER enabled; the
# kernel initiator (open-iscsi's iscsid and iscsiadm, ib_iser) discovers
# it and logs in through the iface "iser". The session must say transport
# iser, both ends must have their QPs on scire0, and fio writes random
# O_DIRECT blocks of 4 KiB to 1 MiB at depth 16 over 32 MiB of the disk
# and checks each block's crc32c when it reads them back; scire0's
# counters must show that the data went through it. Then logout, the
# target removed, the modules unloaded, and `rdma resource show` back to
# what it was (the core's CQ pool keeps its idle CQs until the device
# goes: see cq_pool_only in lib.sh).
#
# No systemd, udev or D-Bus in the VM: the test loads sd_mod itself (no
# udev to do it), starts iscsid by hand, and configures LIO with
# python3-rtslib-fb (why not the targetcli command: lio-lib.sh).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=lio-lib.sh
. "$(dirname "$0")/lio-lib.sh"

dev=scire0
addr=${SCIRE_ADDR:-192.168.77.2}
size=32M

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
iser_need

base=$(res_but_cq "$dev")
base_cqs=$(rdma resource show cq dev "$dev")
base_mods=$(mods_loaded)
echo "$dev on eth0 $addr; resources before: $(rdma_res_counts "$dev")"
t0=$SECONDS
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(res_but_cq "$dev")" = "$base" ]; }

# Print the kernel log of this test (iSCSI, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'iscsi|iser|isert|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

mark=$(kmsg_mark)
trap 'iser_teardown "$addr" "$base_mods"' EXIT

iser_target_up "$dev" "$addr"
iser_login "$addr"
ulp_qps_on "$dev" ib_iser ib_isert
fio_over "$dev" "$ISER_DISK" "$size" iSER "$t0"
iser_logout "$addr"

trap - EXIT
iser_teardown "$addr" "$base_mods" || fail "teardown failed"
wait_for 20 res_back || fail "resources not back: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
cq_pool_only "$dev" "$base_cqs" || fail "CQs left on $dev that are not idle CQs of the core's pool (above)"
echo "target removed, iscsid stopped, modules unloaded, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
