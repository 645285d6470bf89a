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
# the data went through it. Then the remote port is deleted, the target
# removed, the modules unloaded, and `rdma resource show` back to what it
# was (the core's CQ pool keeps its idle CQs until the device goes: see
# lio-lib.sh).
#
# The target port is named by scire0's GID 0 (ib_srpt's gid form,
# 0x<32 hex digits>, which rtslib names ib.<32 hex digits>); its ACL names
# the initiator port ID ib_srp sends: its initiator_ext (0) followed by
# the interface ID of its GID 0.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=lio-lib.sh
. "$(dirname "$0")/lio-lib.sh"

dev=scire0
addr=${SCIRE_ADDR:-192.168.77.2}
port=5555
size=32M
srp_host=/sys/class/infiniband_srp/srp-$dev-1

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
# The debug kernel (scripts/debug-kernel.config) has no SCSI target or SRP.
modprobe -n -q -a target_core_mod ib_srpt ib_srp sd_mod ||
	skip "this kernel has no target_core_mod, ib_srpt, ib_srp or sd_mod module"
command -v fio >/dev/null || skip "fio missing (Debian package fio: scripts/setup)"
lio_have || skip "no python3-rtslib-fb (Debian package targetcli-fb: scripts/setup)"

base=$(res_but_cq "$dev")
base_cqs=$(rdma resource show cq dev "$dev")
base_mods=$(mods_loaded)
echo "$dev on eth0 $addr; resources before: $(rdma_res_counts "$dev")"
t0=$SECONDS
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(res_but_cq "$dev")" = "$base" ]; }
# shellcheck disable=SC2317 # called through wait_for
no_rports() { ! ls -d /sys/class/srp_remote_ports/port-* >/dev/null 2>&1; }

# Print the kernel log of this test (SRP, SCSI and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'srp|scsi|sd |rdma|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# Undo everything, whatever part of it was done; prints what fails.
teardown()
{
	local ok=0 p

	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	wait_for 20 no_rports || { echo "teardown: SRP remote ports left: $(ls /sys/class/srp_remote_ports)"; ok=1; }
	if [ -e "$LIO_CFG/srpt/discovery_auth/rdma_cm_port" ]; then
		echo 0 >"$LIO_CFG/srpt/discovery_auth/rdma_cm_port" || { echo "teardown: cannot reset rdma_cm_port"; ok=1; }
	fi
	lio_clear || ok=1
	mods_unload_new "$base_mods" || ok=1
	return $ok
}
mark=$(kmsg_mark)
trap 'teardown' EXIT

# --- the target ------------------------------------------------------------------

mkdir -p /etc/target || fail "cannot create /etc/target"
modprobe -a target_core_mod ib_srpt ib_srp sd_mod ||
	fail "modprobe target_core_mod ib_srpt ib_srp sd_mod failed"
lio_init || fail "cannot set up configfs and the target's database directory"
guid=$(tr -d : <"/sys/class/infiniband/$dev/node_guid")
sguid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
[ "$sguid" = "0x$guid" ] || fail "ib_srpt's service GUID $sguid is not $dev's node GUID $guid"
gid=$(tr -d : <"/sys/class/infiniband/$dev/ports/1/gids/0")
out=$(lio_py 'import sys
from rtslib_fb import RDMCPStorageObject, FabricModule, Target, TPG, LUN, NodeACL, MappedLUN
gid = sys.argv[1]
fm = FabricModule("srpt")
wwn = "ib." + gid
if wwn not in fm.wwns:
    sys.exit("%s is not among the SRP target ports %s" % (wwn, list(fm.wwns)))
so = RDMCPStorageObject("scire_srp", size=64 << 20)
tpg = TPG(Target(fm, wwn), 1)
lun = LUN(tpg, 0, so)
# ib_srp initiator_ext 0, then the interface ID of its GID 0.
MappedLUN(NodeACL(tpg, "ib." + "0" * 16 + gid[16:]), 0, lun)
tpg.enable = True' "$gid" 2>&1) || { show_kmsg; fail "LIO SRP target setup failed: $out"; }
echo "$port" >"$LIO_CFG/srpt/discovery_auth/rdma_cm_port" || fail "cannot set ib_srpt's rdma_cm_port to $port"
rdma resource show cm_id | grep -F 'comm [ib_srpt]' | grep -q "state LISTEN.*:$port\>" ||
	fail "ib_srpt does not listen on rdma_cm port $port: $(rdma resource show cm_id)"
echo "target: port 0x$gid, LUN 0 a 64 MiB RAM disk, rdma_cm port $port ($((SECONDS - t0)) s in)"

# --- the initiator --------------------------------------------------------------

[ -e "$srp_host/add_target" ] || fail "ib_srp has no $srp_host/add_target: $(ls /sys/class/infiniband_srp 2>&1)"
opts="id_ext=$guid,ioc_guid=$guid,dest=$addr:$port"
out=$( (echo "$opts" >"$srp_host/add_target") 2>&1) || { show_kmsg; fail "echo $opts > $srp_host/add_target failed: $out"; }
rports=$(ls -d /sys/class/srp_remote_ports/port-* 2>/dev/null)
[ "$(wc -w <<<"$rports")" = 1 ] || fail "one SRP remote port expected after add_target, found: ${rports:-none}"
state=$(cat "$rports/state")
[ "$state" = running ] || fail "SRP remote port $rports is $state"
hostdir=$(dirname "$(readlink -f "$rports/device")")
host=${hostdir##*/host}
proc=$(cat "/sys/class/scsi_host/host$host/proc_name")
[ "$proc" = ib_srp ] || fail "SCSI host $host is $proc's, not ib_srp's"
wait_for 20 scsi_disk_of_host "$host" || { show_kmsg; fail "no disk on SCSI host $host 20 s after add_target"; }
disk=$(scsi_disk_of_host "$host")
echo "logged in over SRP: ${rports##*/} $state, SCSI host $host ($proc), disk $disk ($((SECONDS - t0)) s in)"
ulp_qps_on "$dev" ib_srp ib_srpt

# --- I/O -------------------------------------------------------------------------

fio_over "$dev" "$disk" "$size" SRP "$t0"

echo 1 >"$rports/delete" || fail "echo 1 > $rports/delete failed"
wait_for 20 sh -c "[ ! -e /sys/class/scsi_host/host$host ]" || fail "SCSI host $host still there 20 s after deleting $rports"
echo "remote port deleted ($((SECONDS - t0)) s in)"

# --- teardown --------------------------------------------------------------------

trap - EXIT
teardown || fail "teardown failed"
wait_for 20 res_back || fail "resources not back: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
cq_pool_only "$dev" "$base_cqs" || fail "CQs left on $dev that are not idle CQs of the core's pool (above)"
echo "target removed, modules unloaded, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
