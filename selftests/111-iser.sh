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
# goes: see lio-lib.sh).
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
port=3260
iqn=iqn.2026-11.dev.scire:iser
size=32M
run=/run/scire-iser

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
# The debug kernel (scripts/debug-kernel.config) has no SCSI target or iSCSI.
modprobe -n -q -a target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod ||
	skip "this kernel has no target_core_mod, iscsi_target_mod, ib_isert, ib_iser or sd_mod module"
for t in iscsid iscsiadm fio; do
	command -v "$t" >/dev/null || skip "$t missing (Debian packages open-iscsi, fio: scripts/setup)"
done
lio_have || skip "no python3-rtslib-fb (Debian package targetcli-fb: scripts/setup)"
pgrep -x iscsid >/dev/null && fail "an iscsid is running already: $(pgrep -a -x iscsid)"

base=$(res_but_cq "$dev")
base_cqs=$(rdma resource show cq dev "$dev")
base_mods=$(mods_loaded)
echo "$dev on eth0 $addr; resources before: $(rdma_res_counts "$dev")"
t0=$SECONDS
iscsid_pid=""
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(res_but_cq "$dev")" = "$base" ]; }
# shellcheck disable=SC2317 # called through wait_for
iscsid_listens() { ss -Hxl | grep -q ISCSIADM_ABSTRACT_NAMESPACE; }

# Print the kernel log of this test (iSCSI, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'iscsi|iser|isert|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# Undo everything, whatever part of it was done; prints what fails.
teardown()
{
	local ok=0

	if [ -n "$iscsid_pid" ]; then
		timeout 60 iscsiadm -m node -u >/dev/null 2>&1
		timeout 30 iscsiadm -m node -o delete >/dev/null 2>&1
		timeout 30 iscsiadm -m discoverydb -t st -p "$addr" -I iser -o delete >/dev/null 2>&1
		timeout 10 iscsiadm -k 0 >/dev/null 2>&1 || kill "$iscsid_pid" 2>/dev/null
		wait_for 10 sh -c "! kill -0 $iscsid_pid" || { echo "teardown: iscsid does not stop"; ok=1; }
		wait "$iscsid_pid" 2>/dev/null
	fi
	lio_clear || ok=1
	mods_unload_new "$base_mods" || ok=1
	rm -rf "$run"
	return $ok
}
mark=$(kmsg_mark)
trap 'teardown' EXIT

# --- the target ------------------------------------------------------------------

# target_core_mod's database directory (it complains if it is missing),
# open-iscsi's lock directory; the overlay and /run take the writes.
mkdir -p /etc/target /run/lock/iscsi "$run" || fail "cannot create /etc/target, /run/lock/iscsi"
modprobe -a target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod ||
	fail "modprobe target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod failed"
lio_init || fail "cannot set up configfs and the target's database directory"
out=$(lio_py 'import sys
from rtslib_fb import RDMCPStorageObject, FabricModule, Target, TPG, LUN, NetworkPortal
addr, port, iqn = sys.argv[1], int(sys.argv[2]), sys.argv[3]
so = RDMCPStorageObject("scire_iser", size=64 << 20)
tpg = TPG(Target(FabricModule("iscsi"), iqn), 1)
# Any initiator, no CHAP, writable (demo mode).
tpg.set_attribute("authentication", "0")
tpg.set_attribute("generate_node_acls", "1")
tpg.set_attribute("demo_mode_write_protect", "0")
LUN(tpg, 0, so)
NetworkPortal(tpg, addr, port).iser = True
tpg.enable = True' "$addr" "$port" "$iqn" 2>&1) || { show_kmsg; fail "LIO target setup failed: $out"; }
np=$LIO_CFG/iscsi/$iqn/tpgt_1/np/$addr:$port
[ "$(cat "$np/iser" 2>/dev/null)" = 1 ] || fail "$np/iser is not 1: $(cat "$np/iser" 2>&1)"
ulp_cm_qps "$dev" ib_isert >/dev/null && fail "ib_isert has QPs before any login"
rdma resource show cm_id dev "$dev" | grep -F 'comm [ib_isert]' | grep -q 'state LISTEN' ||
	fail "ib_isert does not listen on $dev: $(rdma resource show cm_id dev "$dev")"
echo "target: $iqn, LUN 0 a 64 MiB RAM disk, portal $addr:$port with iSER ($((SECONDS - t0)) s in)"

# --- the initiator --------------------------------------------------------------

# iscsid refuses to start without an initiator name: Debian's open-iscsi
# writes one when it is installed; the overlay takes one otherwise.
if [ ! -s /etc/iscsi/initiatorname.iscsi ]; then
	mkdir -p /etc/iscsi && echo "InitiatorName=iqn.2026-11.dev.scire:initiator" >/etc/iscsi/initiatorname.iscsi
fi
# Its own session: iscsid signals its process group when it stops.
setsid iscsid -f >"$run/iscsid.log" 2>&1 &
iscsid_pid=$!
wait_for 20 iscsid_listens || fail "iscsid does not listen: $(cat "$run/iscsid.log")"
out=$(timeout 60 iscsiadm -m discovery -t st -p "$addr:$port" -I iser 2>&1) || {
	show_kmsg
	fail "iscsiadm discovery over iSER failed: $out"
}
grep -qF "$addr:$port,1 $iqn" <<<"$out" || fail "discovery does not list $iqn at $addr:$port: $out"
out=$(timeout 60 iscsiadm -m node -T "$iqn" -p "$addr:$port" -I iser --login 2>&1) || {
	show_kmsg
	fail "iscsiadm login over iSER failed: $out"
}
s=$(timeout 30 iscsiadm -m session -P 3 2>&1)
grep -q 'Iface Transport: iser$' <<<"$s" || fail "the session is not over iSER: $s"
grep -q 'iSCSI Session State: LOGGED_IN' <<<"$s" || fail "the session is not logged in: $s"
host=$(sed -n 's/.*Host Number: \([0-9]*\).*/\1/p' <<<"$s")
[ -n "$host" ] || fail "no SCSI host in: $s"
proc=$(cat "/sys/class/scsi_host/host$host/proc_name")
[ "$proc" = iscsi_iser ] || fail "SCSI host $host is $proc's, not iscsi_iser's"
wait_for 20 scsi_disk_of_host "$host" || { show_kmsg; fail "no disk on SCSI host $host 20 s after login"; }
disk=$(scsi_disk_of_host "$host")
echo "logged in over iSER: SCSI host $host ($proc), disk $disk ($((SECONDS - t0)) s in)"
ulp_qps_on "$dev" ib_iser ib_isert

# --- I/O -------------------------------------------------------------------------

fio_over "$dev" "$disk" "$size" iSER "$t0"

out=$(timeout 60 iscsiadm -m node -T "$iqn" -p "$addr:$port" -I iser --logout 2>&1) ||
	fail "iscsiadm logout failed: $out"
[ -e "/sys/class/scsi_host/host$host" ] && wait_for 20 sh -c "[ ! -e /sys/class/scsi_host/host$host ]"
[ -e "/sys/class/scsi_host/host$host" ] && fail "SCSI host $host still there 20 s after logout"
echo "logged out ($((SECONDS - t0)) s in)"

# --- teardown --------------------------------------------------------------------

trap - EXIT
teardown || fail "teardown failed"
wait_for 20 res_back || fail "resources not back: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
cq_pool_only "$dev" "$base_cqs" || fail "CQs left on $dev that are not idle CQs of the core's pool (above)"
echo "target removed, iscsid stopped, modules unloaded, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
