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
# counters must show that the data went through it. Then, with fio
# writing again, `rdma link delete scire0` (link_delete_under_io in
# lib.sh): it must return, the session leave LOGGED_IN (ib_iser's
# DEVICE_REMOVAL handler fails the connection; iscsid keeps trying to
# reconnect), fio fail once the session's recovery_tmo (set to 2 s) has
# run out, and the FAILED session still log out. Then the target is
# removed, the modules unloaded, scire unloaded and loaded again
# (scire_reload), and `rdma resource show` on the new scire0 as it was
# (CQs aside: the core's pool keeps idle ones until the device goes, see
# cq_pool_only). About 30 s in the VM (24 s before the link deletion,
# in the same boot).
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

# --- scire0 deleted under the live session -------------------------------------
#
# ib_iser's DEVICE_REMOVAL handler tears its connection down and fails
# it: the iSCSI session goes to FAILED and iscsid tries to reconnect, as
# after any lost connection; the SCSI layer holds the I/O for the
# session's recovery_tmo (replacement_timeout, 120 s by default; 2 s
# here), then fails it. ib_isert's handlers drop the target's connection
# and portal listener. The session, FAILED, must still log out.

sess=$(iser_session) || exit 1
echo 2 >"$sess/recovery_tmo" || fail "cannot set $sess/recovery_tmo"
# FAILED, or FREE once recovery_tmo has run out (the I/O is failed then).
# shellcheck disable=SC2317 # called through link_delete_under_io
sess_failed() { [ "$(cat "$sess/state")" != LOGGED_IN ]; }
io_busy "$dev" "$ISER_DISK"
link_delete_under_io "$dev" "$IO_PID" sess_failed
echo "${sess##*/} $(cat "$sess/state"); fio's first error: $(io_error) ($((SECONDS - t0)) s in)"
iser_logout "$addr"

trap - EXIT
iser_teardown "$addr" "$base_mods" || fail "teardown failed"
scire_reload || fail "scire or $dev do not unload or load again (above)"
wait_for 20 res_back || fail "resources not back on the new $dev: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
echo "target removed, iscsid stopped, modules unloaded, scire unloaded and loaded again, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
