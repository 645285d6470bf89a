# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers for the SCSI-over-RDMA selftests (111 iSER, 112 SRP): a LIO
# target (the kernel's SCSI target) configured through python3-rtslib-fb,
# the library under targetcli, in one Python process per step; the SCSI
# disk the initiator gets; fio with verification on it; and the checks
# that the I/O went over the RDMA device and that everything is gone
# afterwards. Sourced after lib.sh (not a test).
#
# Why rtslib and not the targetcli command: targetcli's shell refreshes its
# whole tree first, and its user-backstore node asks tcmu-runner over the
# D-Bus system bus, which the test VM has not got ("g-io-error-quark:
# Could not connect"); it then exits without running the command.
# Every targetcli call would also start a Python interpreter (seconds
# under TCG).

LIO_CFG=/sys/kernel/config/target
LIO_PY=/usr/bin/python3

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

# mods_loaded: the names of the loaded modules, one a line, sorted.
mods_loaded()
{
	cut -d' ' -f1 /proc/modules | sort
}

# mods_unload_new BEFORE: unload every module loaded now that is not in
# BEFORE (an earlier mods_loaded), users before what they use. Prints
# the modules left; status 1 then.
mods_unload_new()
{
	local before=$1 left pass m r unused

	for pass in 1 2 3 4 5 6 7 8; do
		left=$(mods_loaded | grep -vxF -e "$before")
		[ -n "$left" ] || return 0
		# The unused ones, in one rmmod (a program start costs under
		# TCG); the next pass gets what they used.
		unused=()
		for m in $left; do
			read -r r <"/sys/module/$m/refcnt" 2>/dev/null && [ "$r" = 0 ] && unused+=("$m")
		done
		[ ${#unused[@]} = 0 ] || rmmod "${unused[@]}" 2>/dev/null
		[ "$pass" -lt 4 ] || sleep 1
	done
	left=$(mods_loaded | grep -vxF -e "$before")
	[ -z "$left" ] && return 0
	echo "modules still loaded: ${left//$'\n'/ }"
	return 1
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

# scire_moved DEV: print the bytes RDMA device DEV has moved, on the
# wire (tx_bytes) and on the same-host path (local_bytes).
scire_moved()
{
	echo $(($(rdma_counter "$1" tx_bytes) + $(rdma_counter "$1" local_bytes)))
}

# ulp_cm_qps DEV MODULE: print the rdma_cm IDs of kernel module MODULE
# with a QP on RDMA device DEV (lines of rdma resource show cm_id).
ulp_cm_qps()
{
	rdma resource show cm_id dev "$1" | grep -F "comm [$2]" | grep ' lqpn '
}

# fio_verify DISK SIZE: fio writes random O_DIRECT blocks of 4 KiB to
# 1 MiB at depth 16 over the first SIZE of block device DISK, then reads
# every block back and checks its crc32c. Prints fio's summary; status
# 1 (with fio's last lines) if fio failed or found a bad block.
fio_verify()
{
	local out

	out=$(timeout 120 fio --name=verify --filename="/dev/$1" --size="$2" --rw=randwrite \
		--bsrange=4k-1m --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --randseed=$RANDOM 2>&1) || {
		printf '%s\n' "$out" | tail -n 20
		return 1
	}
	grep -E '^ *(WRITE|READ):' <<<"$out"
}

# ulp_qps_on DEV MODULE...: each MODULE must have an rdma_cm ID with a QP
# on DEV (ulp_cm_qps); prints them, fails the test otherwise.
ulp_qps_on()
{
	local dev=$1 m qp

	shift
	for m in "$@"; do
		qp=$(ulp_cm_qps "$dev" "$m") || fail "$m has no QP on $dev: $(rdma resource show cm_id dev "$dev")"
		echo "$m: $qp"
	done
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

# cq_pool_only DEV BEFORE: compare RDMA device DEV's CQs (rdma resource
# show cq) with BEFORE (that listing earlier): every CQ that is new must be
# an idle CQ of the core's CQ pool (comm [ib_core], users 0). isert,
# srpt and iser take their CQs from the pool (ib_cq_pool_get), which keeps
# them until the device is unregistered (ib_cq_pool_cleanup, called from
# drivers/infiniband/core/device.c: disable_device). Prints the CQs that
# are not; status 1 then.
cq_pool_only()
{
	local bad

	bad=$(rdma resource show cq dev "$1" | grep -vxF -e "$2" | grep -v 'users 0 .*comm \[ib_core\]')
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad"
	return 1
}

# res_but_cq DEV: RDMA device DEV's resource counts but the CQs (see
# cq_pool_only).
res_but_cq()
{
	rdma_res_counts "$1" | sed 's/cq=[0-9]* //'
}
