# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers for the SCSI-over-RDMA selftests (111 iSER and 112 SRP on one
# host, pair/36 and pair/37 across a VM pair): a LIO target (the kernel's
# SCSI target) configured through python3-rtslib-fb, the library under
# targetcli, in one Python process per step; each protocol's target and
# initiator; the SCSI disk the initiator gets. What NFS shares with them
# (fio, the modules, the resource checks) is in lib.sh. Sourced after
# lib.sh (not a test).
#
# Why rtslib and not the targetcli command: targetcli's shell refreshes its
# whole tree first, and its user-backstore node asks tcmu-runner over the
# D-Bus system bus, which the test VM has not got ("g-io-error-quark:
# Could not connect"); it then exits without running the command.
# Every targetcli call would also start a Python interpreter (seconds
# under TCG).

LIO_CFG=/sys/kernel/config/target
LIO_PY=/usr/bin/python3
# The test's start, for "(N s in)" in what the functions print.
t0=$SECONDS

# lio_py SCRIPT [ARG...]: run Python SCRIPT with rtslib. Debian's python3,
# whatever else is first in PATH; no warnings (rtslib warns that it
# cannot move target_core_mod's db_root once devices exist: harmless).
lio_py()
{
	local script=$1

	shift
	"$LIO_PY" -W ignore -c "$script" "$@"
}

# lio_have: is rtslib there? (Debian package python3-rtslib-fb, pulled
# in by targetcli-fb.)
lio_have()
{
	"$LIO_PY" -c 'import rtslib_fb' 2>/dev/null
}

# lio_init: after modprobe target_core_mod: configfs mounted, and the
# target's database directory (persistent reservations, ALUA state) set to
# rtslib's (/etc/rtslib-fb-target, from the package) while no device
# exists yet; rtslib would try on every call afterwards, and the kernel
# log each refusal. /etc/target, the kernel's default, is made too (the
# module complains at load when it is missing). The overlay takes the
# writes.
lio_init()
{
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || return 1
	mkdir -p /etc/target /etc/rtslib-fb-target || return 1
	[ "$(cat "$LIO_CFG/dbroot")" = /etc/rtslib-fb-target ] ||
		echo /etc/rtslib-fb-target >"$LIO_CFG/dbroot"
}

# lio_clear: remove every LIO object (targets, LUNs, ACLs, backstores),
# then the configfs directories of the fabrics (iscsi, srpt, ...; rtslib
# creates one for every fabric module it looks at): each holds a
# reference to its fabric module, which could not be unloaded otherwise.
# Prints what fails; status 1 then.
lio_clear()
{
	local ok=0 f out

	[ -d "$LIO_CFG" ] || return 0
	out=$(lio_py 'from rtslib_fb import RTSRoot
RTSRoot().clear_existing(confirm=True)' 2>&1) || { echo "rtslib clear_existing failed: $out"; ok=1; }
	for f in "$LIO_CFG"/*/; do
		f=${f%/}
		[ "${f##*/}" = core ] && continue
		rmdir "$f" || { echo "cannot remove $f"; ok=1; }
	done
	return $ok
}

# scsi_disk_of_host HOST: print the name of the (first) disk of SCSI host
# HOST (a number); status 1 if it has none (yet). By /sys/class/scsi_disk:
# an iSCSI host's targets hang below its session, not below the host.
scsi_disk_of_host()
{
	local b

	for b in /sys/class/scsi_disk/"$1":*/device/block/*; do
		[ -e "$b" ] || continue
		basename "$b"
		return 0
	done
	return 1
}

# fio_over DEV DISK SIZE ULP T0: fio_verify on DISK, which ULP serves over
# DEV; DEV's counters must show the data (SIZE written and read back, so
# at least twice SIZE in bytes, given as 32M). Fails the test otherwise.
fio_over()
{
	local dev=$1 disk=$2 size=$3 ulp=$4 t0=$5 moved want

	want=$((2 * ${size%M} << 20))
	moved=$(scire_moved "$dev")
	fio_verify "$disk" "$size" || { show_kmsg; fail "fio write+verify on $disk ($ulp) failed"; }
	moved=$(($(scire_moved "$dev") - moved))
	[ "$moved" -ge "$want" ] ||
		fail "$dev moved $moved bytes for $((want >> 20)) MiB of I/O on the $ulp disk (tx_bytes + local_bytes)"
	echo "fio: random 4k-1m O_DIRECT writes at depth 16 verified (crc32c); $dev moved $((moved >> 20)) MiB ($((SECONDS - t0)) s in)"
}

# scsi_host_disk HOST DRIVER WHAT: SCSI host HOST (a number) must be
# DRIVER's and have a disk within 20 s of WHAT (the step that made it);
# sets SCSI_DISK to the disk's name. Fails the test otherwise.
scsi_host_disk()
{
	local proc

	proc=$(cat "/sys/class/scsi_host/host$1/proc_name")
	[ "$proc" = "$2" ] || fail "SCSI host $1 is $proc's, not $2's"
	wait_for 20 scsi_disk_of_host "$1" || { show_kmsg; fail "no disk on SCSI host $1 20 s after $3"; }
	SCSI_DISK=$(scsi_disk_of_host "$1")
}

# --- iSER (111, pair/36) ---------------------------------------------------------
#
# The target: LIO's iSCSI target (iscsi_target_mod with ib_isert) exports
# a 64 MiB RAM disk as LUN 0 of ISER_IQN on a portal with iSER enabled.
# The initiator: open-iscsi's iscsid, started by hand (no systemd in the
# VM), and iscsiadm through the iface "iser" (ib_iser). The functions
# below fail the test on error, calling its show_kmsg first where the
# kernel log may say why; t0 is the test's start (SECONDS).

ISER_IQN=iqn.2026-11.dev.scire:iser
ISER_PORT=3260
ISER_RUN=/run/scire-iser
iscsid_pid=""

# iser_need: skip the test unless this kernel and the guest have what iSER
# needs on both ends.
iser_need()
{
	# The debug kernel (scripts/debug-kernel.config) has no SCSI target or iSCSI.
	modprobe -n -q -a target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod ||
		skip "this kernel has no target_core_mod, iscsi_target_mod, ib_isert, ib_iser or sd_mod module"
	for t in iscsid iscsiadm fio; do
		command -v "$t" >/dev/null || skip "$t missing (Debian packages open-iscsi, fio: scripts/setup)"
	done
	lio_have || skip "no python3-rtslib-fb (Debian package targetcli-fb: scripts/setup)"
	pgrep -x iscsid >/dev/null && fail "an iscsid is running already: $(pgrep -a -x iscsid)"
	return 0
}

# iser_target_up DEV ADDR: the target, its portal on ADDR:ISER_PORT;
# ib_isert must listen on RDMA device DEV, with no QP yet.
iser_target_up()
{
	local dev=$1 addr=$2 out np

	# target_core_mod's database directory (it complains if it is missing);
	# the overlay takes the writes.
	mkdir -p /etc/target || fail "cannot create /etc/target"
	modprobe -a target_core_mod iscsi_target_mod ib_isert ||
		fail "modprobe target_core_mod iscsi_target_mod ib_isert failed"
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
tpg.enable = True' "$addr" "$ISER_PORT" "$ISER_IQN" 2>&1) || { show_kmsg; fail "LIO target setup failed: $out"; }
	np=$LIO_CFG/iscsi/$ISER_IQN/tpgt_1/np/$addr:$ISER_PORT
	[ "$(cat "$np/iser" 2>/dev/null)" = 1 ] || fail "$np/iser is not 1: $(cat "$np/iser" 2>&1)"
	ulp_cm_qps "$dev" ib_isert >/dev/null && fail "ib_isert has QPs before any login"
	rdma resource show cm_id dev "$dev" | grep -F 'comm [ib_isert]' | grep -q 'state LISTEN' ||
		fail "ib_isert does not listen on $dev: $(rdma resource show cm_id dev "$dev")"
	echo "target: $ISER_IQN, LUN 0 a 64 MiB RAM disk, portal $addr:$ISER_PORT with iSER ($((SECONDS - t0)) s in)"
}

# shellcheck disable=SC2317 # called through wait_for
iscsid_listens() { ss -Hxl | grep -q ISCSIADM_ABSTRACT_NAMESPACE; }

# iser_login ADDR: the initiator: iscsid started, discovery of ADDR's
# portal and login over iSER. The session must be iSER's and logged in;
# sets ISER_HOST (its SCSI host's number) and ISER_DISK (its disk).
iser_login()
{
	local addr=$1 out s

	# open-iscsi's lock directory; /run takes the writes.
	mkdir -p /run/lock/iscsi "$ISER_RUN" || fail "cannot create /run/lock/iscsi, $ISER_RUN"
	modprobe -a ib_iser sd_mod || fail "modprobe ib_iser sd_mod failed"
	# iscsid refuses to start without an initiator name: Debian's open-iscsi
	# writes one when it is installed; the overlay takes one otherwise.
	if [ ! -s /etc/iscsi/initiatorname.iscsi ]; then
		mkdir -p /etc/iscsi && echo "InitiatorName=iqn.2026-11.dev.scire:initiator" >/etc/iscsi/initiatorname.iscsi
	fi
	# Its own session: iscsid signals its process group when it stops.
	setsid iscsid -f >"$ISER_RUN/iscsid.log" 2>&1 &
	iscsid_pid=$!
	wait_for 20 iscsid_listens || fail "iscsid does not listen: $(cat "$ISER_RUN/iscsid.log")"
	out=$(timeout 60 iscsiadm -m discovery -t st -p "$addr:$ISER_PORT" -I iser 2>&1) || {
		show_kmsg
		fail "iscsiadm discovery over iSER failed: $out"
	}
	grep -qF "$addr:$ISER_PORT,1 $ISER_IQN" <<<"$out" ||
		fail "discovery does not list $ISER_IQN at $addr:$ISER_PORT: $out"
	out=$(timeout 60 iscsiadm -m node -T "$ISER_IQN" -p "$addr:$ISER_PORT" -I iser --login 2>&1) || {
		show_kmsg
		fail "iscsiadm login over iSER failed: $out"
	}
	s=$(timeout 30 iscsiadm -m session -P 3 2>&1)
	grep -q 'Iface Transport: iser$' <<<"$s" || fail "the session is not over iSER: $s"
	grep -q 'iSCSI Session State: LOGGED_IN' <<<"$s" || fail "the session is not logged in: $s"
	ISER_HOST=$(sed -n 's/.*Host Number: \([0-9]*\).*/\1/p' <<<"$s")
	[ -n "$ISER_HOST" ] || fail "no SCSI host in: $s"
	scsi_host_disk "$ISER_HOST" iscsi_iser login
	ISER_DISK=$SCSI_DISK
	echo "logged in over iSER: SCSI host $ISER_HOST (iscsi_iser), disk $ISER_DISK ($((SECONDS - t0)) s in)"
}

# iser_session: the sysfs directory (class iscsi_session) of the session
# iser_login made.
iser_session()
{
	local d

	for d in /sys/class/scsi_host/host"$ISER_HOST"/device/session*/iscsi_session/session*; do
		[ -e "$d/state" ] || continue
		echo "$d"
		return 0
	done
	fail "no iSCSI session under SCSI host $ISER_HOST"
}

# iser_logout ADDR: log out of ADDR's portal; the SCSI host must go.
iser_logout()
{
	local out host=/sys/class/scsi_host/host$ISER_HOST

	out=$(timeout 60 iscsiadm -m node -T "$ISER_IQN" -p "$1:$ISER_PORT" -I iser --logout 2>&1) ||
		fail "iscsiadm logout failed: $out"
	[ -e "$host" ] && wait_for 20 sh -c "[ ! -e $host ]"
	[ -e "$host" ] && fail "SCSI host $ISER_HOST still there 20 s after logout"
	echo "logged out ($((SECONDS - t0)) s in)"
}

# iser_teardown ADDR MODS: undo whatever part of either end was done
# (iscsid's sessions and records for ADDR's portal, the target), and
# unload the modules not in MODS (mods_loaded before). Prints what fails;
# status 1 then.
iser_teardown()
{
	local addr=$1 mods=$2 ok=0

	if [ -n "$iscsid_pid" ]; then
		timeout 60 iscsiadm -m node -u >/dev/null 2>&1
		timeout 30 iscsiadm -m node -o delete >/dev/null 2>&1
		timeout 30 iscsiadm -m discoverydb -t st -p "$addr" -I iser -o delete >/dev/null 2>&1
		timeout 10 iscsiadm -k 0 >/dev/null 2>&1 || kill "$iscsid_pid" 2>/dev/null
		wait_for 10 sh -c "! kill -0 $iscsid_pid" || { echo "teardown: iscsid does not stop"; ok=1; }
		wait "$iscsid_pid" 2>/dev/null
	fi
	lio_clear || ok=1
	mods_unload_new "$mods" || ok=1
	rm -rf "$ISER_RUN"
	return $ok
}

# --- SRP (112, pair/37) ----------------------------------------------------------
#
# The target: LIO's SRP target (ib_srpt) exports a 64 MiB RAM disk on its
# RDMA device's port, and listens for rdma_cm logins on SRP_PORT
# (configfs target/srpt/discovery_auth/rdma_cm_port; a module parameter
# only in later kernels). The target port is named by the device's GID 0
# (ib_srpt's gid form, 0x<32 hex digits>, which rtslib names
# ib.<32 hex digits>); its ACL names the initiator port ID ib_srp sends:
# its initiator_ext (0) followed by the interface ID of the initiator's
# GID 0. The initiator (ib_srp) logs in over rdma_cm: id_ext and ioc_guid
# are the target's service GUID (its device's node GUID), written with
# dest=ADDR:PORT to /sys/class/infiniband_srp/srp-DEV-1/add_target (the
# format of drivers/infiniband/ulp/srp/ib_srp.c, srp_opt_tokens). As for
# iSER, the functions fail the test on error; t0 is its start.

SRP_PORT=5555

# srp_need: skip the test unless this kernel and the guest have what SRP
# needs on both ends.
srp_need()
{
	# The debug kernel (scripts/debug-kernel.config) has no SCSI target or SRP.
	modprobe -n -q -a target_core_mod ib_srpt ib_srp sd_mod ||
		skip "this kernel has no target_core_mod, ib_srpt, ib_srp or sd_mod module"
	command -v fio >/dev/null || skip "fio missing (Debian package fio: scripts/setup)"
	lio_have || skip "no python3-rtslib-fb (Debian package targetcli-fb: scripts/setup)"
}

# dev_gid0 DEV: port 1's GID 0 of RDMA device DEV, 32 hex digits.
dev_gid0()
{
	tr -d : <"/sys/class/infiniband/$1/ports/1/gids/0"
}

# dev_guid DEV: the node GUID of RDMA device DEV, 16 hex digits.
dev_guid()
{
	tr -d : <"/sys/class/infiniband/$1/node_guid"
}

# srp_target_up DEV INITIATOR_GID: the target on RDMA device DEV, for the
# initiator whose GID 0 is INITIATOR_GID (dev_gid0 of its device).
srp_target_up()
{
	local dev=$1 igid=$2 sguid gid out

	mkdir -p /etc/target || fail "cannot create /etc/target"
	modprobe -a target_core_mod ib_srpt || fail "modprobe target_core_mod ib_srpt failed"
	lio_init || fail "cannot set up configfs and the target's database directory"
	sguid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	[ "$sguid" = "0x$(dev_guid "$dev")" ] ||
		fail "ib_srpt's service GUID $sguid is not $dev's node GUID $(dev_guid "$dev")"
	gid=$(dev_gid0 "$dev")
	out=$(lio_py 'import sys
from rtslib_fb import RDMCPStorageObject, FabricModule, Target, TPG, LUN, NodeACL, MappedLUN
gid, igid = sys.argv[1], sys.argv[2]
fm = FabricModule("srpt")
wwn = "ib." + gid
if wwn not in fm.wwns:
    sys.exit("%s is not among the SRP target ports %s" % (wwn, list(fm.wwns)))
so = RDMCPStorageObject("scire_srp", size=64 << 20)
tpg = TPG(Target(fm, wwn), 1)
lun = LUN(tpg, 0, so)
# ib_srp initiator_ext 0, then the interface ID of its GID 0.
MappedLUN(NodeACL(tpg, "ib." + "0" * 16 + igid[16:]), 0, lun)
tpg.enable = True' "$gid" "$igid" 2>&1) || { show_kmsg; fail "LIO SRP target setup failed: $out"; }
	echo "$SRP_PORT" >"$LIO_CFG/srpt/discovery_auth/rdma_cm_port" ||
		fail "cannot set ib_srpt's rdma_cm_port to $SRP_PORT"
	rdma resource show cm_id | grep -F 'comm [ib_srpt]' | grep -q "state LISTEN.*:$SRP_PORT\>" ||
		fail "ib_srpt does not listen on rdma_cm port $SRP_PORT: $(rdma resource show cm_id)"
	echo "target: port 0x$gid, LUN 0 a 64 MiB RAM disk, rdma_cm port $SRP_PORT ($((SECONDS - t0)) s in)"
}

# srp_login DEV GUID ADDR: ib_srp on RDMA device DEV logs in to the target
# whose service GUID is GUID (dev_guid of its device) at ADDR:SRP_PORT.
# Sets SRP_RPORT (the remote port's sysfs directory), SRP_HOST (its SCSI
# host's number) and SRP_DISK (its disk).
srp_login()
{
	local dev=$1 guid=$2 addr=$3 srp_host=/sys/class/infiniband_srp/srp-$1-1 opts out state hostdir

	modprobe -a ib_srp sd_mod || fail "modprobe ib_srp sd_mod failed"
	[ -e "$srp_host/add_target" ] ||
		fail "ib_srp has no $srp_host/add_target: $(ls /sys/class/infiniband_srp 2>&1)"
	opts="id_ext=$guid,ioc_guid=$guid,dest=$addr:$SRP_PORT"
	out=$( (echo "$opts" >"$srp_host/add_target") 2>&1) ||
		{ show_kmsg; fail "echo $opts > $srp_host/add_target failed: $out"; }
	SRP_RPORT=$(ls -d /sys/class/srp_remote_ports/port-* 2>/dev/null)
	[ "$(wc -w <<<"$SRP_RPORT")" = 1 ] ||
		fail "one SRP remote port expected after add_target, found: ${SRP_RPORT:-none}"
	state=$(cat "$SRP_RPORT/state")
	[ "$state" = running ] || fail "SRP remote port $SRP_RPORT is $state"
	hostdir=$(dirname "$(readlink -f "$SRP_RPORT/device")")
	SRP_HOST=${hostdir##*/host}
	scsi_host_disk "$SRP_HOST" ib_srp add_target
	SRP_DISK=$SCSI_DISK
	echo "logged in over SRP: ${SRP_RPORT##*/} $state, SCSI host $SRP_HOST (ib_srp), disk $SRP_DISK ($((SECONDS - t0)) s in)"
}

# srp_logout: delete the remote port; its SCSI host must go.
srp_logout()
{
	echo 1 >"$SRP_RPORT/delete" || fail "echo 1 > $SRP_RPORT/delete failed"
	wait_for 20 sh -c "[ ! -e /sys/class/scsi_host/host$SRP_HOST ]" ||
		fail "SCSI host $SRP_HOST still there 20 s after deleting $SRP_RPORT"
	echo "remote port deleted ($((SECONDS - t0)) s in)"
}

# shellcheck disable=SC2317 # called through wait_for
no_rports() { ! ls -d /sys/class/srp_remote_ports/port-* >/dev/null 2>&1; }

# srp_teardown MODS: undo whatever part of either end was done (remote
# ports, the target) and unload the modules not in MODS (mods_loaded
# before). Prints what fails; status 1 then.
srp_teardown()
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
	mods_unload_new "$1" || ok=1
	return $ok
}
