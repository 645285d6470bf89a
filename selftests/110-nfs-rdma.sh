#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA over scire0, on one host (the VM's eth0, 192.168.77.2):
# the kernel NFS server (nfsd, NFSv4 only) exports a tmpfs and listens on
# RDMA port 20049; the kernel client mounts it with
# -o rdma,port=20049,vers=4.2 (/proc/mounts must say proto=rdma, and the
# transport's QPs must be on scire0). fio writes random blocks of 4 KiB to
# 1 MiB at depth 16 with O_DIRECT and checks each block's crc32c when it
# reads them back; the client's view of fio's file, of a file the client
# wrote and of one the server wrote are compared with the server's tmpfs.
# Afterwards nfsd is stopped, the NFS and RPC/RDMA modules unloaded, and
# `rdma resource show` back to what it was. About 40 s in the VM.
#
# With SCIRE_NFS_LINK_DELETE=1 (30-60 s more, so not in make check):
# `rdma link delete scire0` under a live (soft) mount with I/O in flight
# must return, the I/O must end (an error is fine), and once scire0 is
# back the mount must work again.
#
# No systemd in the VM: the test starts what it needs by hand: nfsdcld
# (client tracking, so that nfsd skips its NFSv4 grace period: it has no
# client to reclaim), rpc.mountd (NFSv4 only: no rpcbind, no statd),
# exportfs and rpc.nfsd.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=scire0
addr=${SCIRE_ADDR:-192.168.77.2}
port=20049
# The server's NFSv4 root (fsid=0) is a tmpfs of the test's: the guest's
# own / (overlayfs over 9p) cannot be exported. The client mounts
# $addr:/export, which is $v4root/export.
v4root=/run/scire-nfs/v4root
exp=$v4root/export
mnt=/mnt/x
run=/run/scire-nfs
pipefs=/run/rpc_pipefs
nfsd_fs=/proc/fs/nfsd

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
# The debug kernel (scripts/debug-kernel.config) has no NFS.
modprobe -n -q -a nfsd rpcrdma nfsv4 || skip "this kernel has no nfsd, rpcrdma or nfsv4 module"
for t in rpc.nfsd rpc.mountd exportfs nfsdcld mount.nfs fio; do
	command -v "$t" >/dev/null ||
		skip "$t missing (Debian packages nfs-kernel-server, nfs-common, fio: scripts/setup)"
done

base=$(rdma_res_counts "$dev")
echo "$dev on eth0 $addr; resources before: $base"
t0=$SECONDS
mountd_pid="" cld_pid="" exported=0
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }

# Is a file system mounted on $1? Builtins only: every program the test
# starts costs up to a second or two under TCG, its binary and libraries
# read over 9p.
mounted()
{
	local _d m _r

	while read -r _d m _r; do
		[ "$m" = "$1" ] && return 0
	done </proc/mounts
	return 1
}

# Print the kernel log of this test (NFS and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'nfs|rpc|rdma|svc|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# Undo everything, whatever part of it was done; prints what fails.
teardown()
{
	local ok=0 m

	if mounted "$mnt"; then
		timeout 60 umount -f "$mnt" || timeout 30 umount -l "$mnt" ||
			{ echo "teardown: cannot unmount $mnt"; ok=1; }
	fi
	if [ -e "$nfsd_fs/threads" ] && [ "$(<"$nfsd_fs/threads")" != 0 ]; then
		timeout 60 rpc.nfsd 0 || { echo "teardown: rpc.nfsd 0 failed"; ok=1; }
	fi
	[ "$exported" = 1 ] && timeout 30 exportfs -u "*:$v4root"
	for p in $mountd_pid $cld_pid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for m in "$nfsd_fs" "$pipefs" /etc/hosts; do
		mounted "$m" && umount "$m"
	done
	mounted "$v4root" && { umount "$v4root" || { echo "teardown: cannot unmount $v4root"; ok=1; }; }
	mounted "$v4root" || rm -rf "$run"
	# nfs (the client) may linger a moment after the last unmount.
	modprobe -r rpcrdma nfsv4 nfs nfsd 2>/dev/null
	for m in rpcrdma nfsv4 nfs nfsd; do
		[ -d "/sys/module/$m" ] || continue
		wait_for 20 modprobe -r "$m" ||
			{ echo "teardown: cannot unload $m: $(modprobe -r "$m" 2>&1)"; ok=1; }
	done
	return $ok
}
mark=$(kmsg_mark)
trap 'teardown' EXIT
mkdir -p "$run/cld" "$v4root" "$mnt" "$pipefs" /var/lib/nfs || fail "cannot create $run"

# --- the server --------------------------------------------------------------

# rpc.mountd looks the client's address up (and the tools their host
# name): in the VM, DNS is the host's unreachable name server, 10 s a
# look-up. The test's own /etc/hosts names this host.
{ printf '%s\n%s %s\n' "$(</etc/hosts)" "$addr" "$HOSTNAME" >"$run/hosts" &&
	mount --bind "$run/hosts" /etc/hosts; } || fail "cannot put $addr in /etc/hosts"
modprobe -a nfsd rpcrdma nfsv4 || fail "modprobe nfsd rpcrdma nfsv4 failed"
echo "modules loaded ($((SECONDS - t0)) s in)"
mount -t tmpfs -o size=512M tmpfs "$v4root" || fail "cannot mount a tmpfs on $v4root"
mkdir "$exp" || fail "cannot create $exp"
mounted "$nfsd_fs" || mount -t nfsd nfsd "$nfsd_fs" || fail "cannot mount $nfsd_fs"
mounted "$pipefs" || mount -t rpc_pipefs sunrpc "$pipefs" || fail "cannot mount rpc_pipefs"
# nfsdcld before nfsd: with it, and no client in its (fresh) database, nfsd
# needs no grace period.
nfsdcld -F -p "$pipefs" -s "$run/cld" >"$run/cld.log" 2>&1 &
cld_pid=$!
# nfsd creates the pipe (nfsd/cld) when it starts, and waits a second for
# nfsdcld to open it.
# Should the grace period run anyway: its minimum.
{ echo 10 >"$nfsd_fs/nfsv4gracetime" && echo 10 >"$nfsd_fs/nfsv4leasetime"; } ||
	fail "cannot set nfsd's grace and lease times"
# The export, without /etc/exports (-i). tmpfs has no UUID: it needs fsid=.
exported=1
timeout 30 exportfs -i -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$v4root" ||
	fail "exportfs of $v4root failed"
rpc.mountd -F -N 3 >"$run/mountd.log" 2>&1 &
mountd_pid=$!
out=$(timeout 60 rpc.nfsd -N 3 -U 8 2>&1) || fail "rpc.nfsd failed: $out"
out=$( (echo "rdma $port" >"$nfsd_fs/portlist") 2>&1) ||
	{ show_kmsg; fail "echo rdma $port > $nfsd_fs/portlist failed: $out"; }
ports=$(<"$nfsd_fs/portlist")
[[ $'\n'$ports$'\n' == *$'\n'"rdma $port"$'\n'* ]] || fail "nfsd does not list rdma $port: ${ports//$'\n'/, }"
echo "nfsd: versions $(<"$nfsd_fs/versions"), ports ${ports//$'\n'/, } ($((SECONDS - t0)) s in)"
kmsg_since "$mark" | grep -a 'NFSD:'

# A file the server writes, for the client to read.
head -c 4M /dev/urandom >"$exp/from-server" || fail "cannot write $exp/from-server"

# --- the client --------------------------------------------------------------

nfs_mount()
{
	local out

	out=$(timeout 90 mount -t nfs -o "rdma,port=$port,vers=4.2$1" "$addr:/export" "$mnt" 2>&1) || {
		show_kmsg
		fail "mount -o rdma,port=$port,vers=4.2$1 $addr:/export failed: $out"
	}
	grep " $mnt nfs4 " /proc/mounts | grep -q '[ ,]proto=rdma[, ]' ||
		fail "$mnt is not over RDMA: $(grep " $mnt " /proc/mounts)"
}

nfs_mount ""
grep " $mnt " /proc/mounts
qps=$(rdma_res_count "$dev" qp)
[ "${qps:-0}" -gt "$(tr ' ' '\n' <<<"$base" | sed -n 's/^qp=//p')" ] ||
	fail "mounted over RDMA, yet no new QP on $dev: $(rdma_res_counts "$dev")"
echo "mounted ($((SECONDS - t0)) s in); $dev: $(rdma_res_counts "$dev")"

out=$(timeout 120 fio --name=nfs-verify --directory="$mnt" --rw=randwrite --bsrange=4k-1m \
	--size=32M --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --randseed=$RANDOM 2>&1) || {
	printf '%s\n' "$out" | tail -n 20
	show_kmsg
	fail "fio write+verify over NFS/RDMA failed"
}
grep -E '^ *(WRITE|READ):' <<<"$out"
echo "fio: random 4k-1m O_DIRECT writes at depth 16 verified (crc32c) ($((SECONDS - t0)) s in)"

# The client's view against the server's tmpfs (buffered reads: the
# client has none of it cached, fio and dd wrote with O_DIRECT).
head -c 4M /dev/urandom | dd of="$mnt/from-client" bs=1M oflag=direct status=none ||
	fail "cannot write $mnt/from-client"
for f in nfs-verify.0.0 from-client from-server; do
	out=$(timeout 60 cmp "$mnt/$f" "$exp/$f" 2>&1) ||
		fail "$f: the client's view and the server's tmpfs differ: $out"
done
echo "client view = server's tmpfs: fio's file, one the client wrote, one the server wrote"
timeout 60 umount "$mnt" || fail "umount $mnt failed"
echo "unmounted ($((SECONDS - t0)) s in)"

# --- scire0 deleted under a live mount -----------------------------------------
#
# A soft mount: with a hard one, the I/O that was in flight would wait for
# the server for ever (by design), and so would the test. timeo=20 (2 s),
# retrans=1: the I/O in flight fails within seconds rather than half a
# minute.

if [ "${SCIRE_NFS_LINK_DELETE:-0}" = 1 ]; then
	nfs_mount ",soft,timeo=20,retrans=1"
	echo "mounted soft ($((SECONDS - t0)) s in)"
	dd if=/dev/zero of="$mnt/busy" bs=1M count=256 oflag=direct status=none 2>"$run/dd.err" &
	dd_pid=$!
	sleep 1
	s=$SECONDS
	out=$(timeout 120 rdma link delete "$dev" 2>&1)
	rc=$?
	echo "rdma link delete $dev under the mount: status $rc in $((SECONDS - s)) s${out:+: $out}"
	[ "$rc" = 0 ] || { show_kmsg; fail "rdma link delete $dev under a live NFS/RDMA mount failed or hung"; }
	# The I/O must end, one way or the other.
	wait_for 90 sh -c "! kill -0 $dd_pid" || { show_kmsg; fail "I/O in flight still hangs 90 s after $dev went"; }
	wait "$dd_pid"
	echo "the dd in flight ended with status $? ($(<"$run/dd.err")) ($((SECONDS - t0)) s in)"
	out=$(timeout 60 rdma link add "$dev" type scire netdev eth0 2>&1) || fail "cannot re-add $dev: $out"
	need_dev_gid "$dev" >/dev/null || exit 1
	# The client reconnects once there is a device again.
	s=$SECONDS
	ok=0
	for _ in 1 2 3 4 5 6; do
		if head -c 1M /dev/urandom | timeout 30 dd of="$mnt/after" bs=1M oflag=direct status=none 2>/dev/null &&
			timeout 30 cmp -s "$mnt/after" "$exp/after"; then
			ok=1
			break
		fi
		sleep 2
	done
	[ "$ok" = 1 ] || { show_kmsg; fail "the mount does not work again after $dev is back"; }
	echo "$dev back: the mount works again after $((SECONDS - s)) s (1 MiB written and read back intact) ($((SECONDS - t0)) s in)"
	s=$SECONDS
	timeout 60 umount "$mnt" || fail "umount $mnt after the device's return failed"
	echo "unmounted in $((SECONDS - s)) s"
else
	echo "not deleting $dev under a live mount (SCIRE_NFS_LINK_DELETE=1 does)"
fi

# --- teardown ------------------------------------------------------------------

trap - EXIT
teardown || fail "teardown failed"
wait_for 20 res_back || fail "resources not back: $(rdma_res_counts "$dev"), before: $base"
echo "nfsd stopped, modules unloaded, $dev resources back to $base ($((SECONDS - t0)) s)"
exit 0
