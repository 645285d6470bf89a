#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SCSI RDMA Protocol (SRP) over scire0, on one host (the VM's eth0,
# 192.168.77.2): the kernel's SRP target (LIO with ib_srpt) exports a
# 64 MiB RAM disk on scire0's port, and listens for rdma_cm logins on
# port 5555 (configfs target/srpt/discovery_auth/rdma_cm_port; a module
# parameter only in later kernels). The kernel initiator (ib_srp) logs in
# over rdma_cm: id_ext and ioc_guid are the target's service GUID
# (scire0's node GUID), written with dest=ADDR:PORT to
# /sys/class/infiniband_srp/srp-scire0-1/add_target (the format of
# drivers/infiniband/ulp/srp/ib_srp.c, srp_opt_tokens). Both ends must
# have their QPs on scire0, and fio writes random O_DIRECT blocks of
# 4 KiB to 1 MiB at depth 16 over 32 MiB of the disk and checks each
# block's crc32c when it reads them back; scire0's counters must show that
# the data went through it. Then, with fio writing again, `rdma link
# delete scire0` (link_delete_under_io in lib.sh): it must return,
# ib_srp's device removal delete the remote port and its SCSI host, and
# fio end (with an error). Then the target is removed, the modules
# unloaded, scire unloaded and loaded again (scire_reload), and `rdma
# resource show` on the new scire0 as it was (CQs aside: the core's pool
# keeps idle ones until the device goes, see cq_pool_only). About 23 s
# in the VM (19 s before the link deletion). How the target port and
# its ACL are named: lio-lib.sh.
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
srp_need

base=$(res_but_cq "$dev")
base_cqs=$(rdma resource show cq dev "$dev")
base_mods=$(mods_loaded)
echo "$dev on eth0 $addr; resources before: $(rdma_res_counts "$dev")"
t0=$SECONDS
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(res_but_cq "$dev")" = "$base" ]; }

# Print the kernel log of this test (SRP, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'srp|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

mark=$(kmsg_mark)
trap 'srp_teardown "$base_mods"' EXIT

# One device: the initiator's GID and the target's GUID are its own.
srp_target_up "$dev" "$(dev_gid0 "$dev")"
srp_login "$dev" "$(dev_guid "$dev")" "$addr"
ulp_qps_on "$dev" ib_srp ib_srpt
fio_over "$dev" "$SRP_DISK" "$size" SRP "$t0"

# --- scire0 deleted under the live session -------------------------------------
#
# ib_srp's ib_client remove deletes the remote port and its SCSI host
# (the I/O in flight fails), ib_srpt's disables the target port; the
# target's configuration stays, as after any HCA's removal.

# shellcheck disable=SC2317 # called through link_delete_under_io
srp_gone() { no_rports && [ ! -e "/sys/class/scsi_host/host$SRP_HOST" ]; }
io_busy "$dev" "$SRP_DISK"
link_delete_under_io "$dev" "$IO_PID" srp_gone
echo "ib_srp's device removal deleted ${SRP_RPORT##*/} and SCSI host $SRP_HOST; fio's first error: $(io_error) ($((SECONDS - t0)) s in)"

trap - EXIT
srp_teardown "$base_mods" || fail "teardown failed"
scire_reload || fail "scire or $dev do not unload or load again (above)"
wait_for 20 res_back || fail "resources not back on the new $dev: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
echo "target removed, modules unloaded, scire unloaded and loaded again, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
