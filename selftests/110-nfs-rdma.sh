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
# Then, on a soft mount with fio writing, `rdma link delete scire0`
# (link_delete_under_io in lib.sh): it must return, xprtrdma's device
# removal run and fio end (with EIO); the mount must unmount with no
# device. Afterwards nfsd is stopped, the NFS and RPC/RDMA modules and
# scire unloaded (scire_reload), and `rdma resource show` on the new
# scire0 back to what it was. About 35 s in the VM (12 s before the link
# deletion, in the same boot). With SCIRE_NFS_RECOVER=1, scire0 comes
# back before the unmount, and the mount must work again.
#
# The server and the mount: nfs-lib.sh.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=nfs-lib.sh
. "$(dirname "$0")/nfs-lib.sh"

dev=scire0
addr=${SCIRE_ADDR:-192.168.77.2}

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
nfs_need

base=$(rdma_res_counts "$dev")
echo "$dev on eth0 $addr; resources before: $base"
t0=$SECONDS
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }

# Print the kernel log of this test (NFS and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'nfs|rpc|rdma|svc|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

mark=$(kmsg_mark)
trap 'nfs_teardown' EXIT

# --- the server --------------------------------------------------------------

nfs_hosts "$addr $HOSTNAME"
nfs_server_up
kmsg_since "$mark" | grep -a 'NFSD:'

# --- the client --------------------------------------------------------------

nfs_mount "$addr"
grep " $NFS_MNT " /proc/mounts
qps=$(rdma_res_count "$dev" qp)
[ "${qps:-0}" -gt "$(tr ' ' '\n' <<<"$base" | sed -n 's/^qp=//p')" ] ||
	fail "mounted over RDMA, yet no new QP on $dev: $(rdma_res_counts "$dev")"
echo "mounted ($((SECONDS - t0)) s in); $dev: $(rdma_res_counts "$dev")"

fio_verify "$NFS_MNT" 32M || { show_kmsg; fail "fio write+verify over NFS/RDMA failed"; }
echo "fio: random 4k-1m O_DIRECT writes at depth 16 verified (crc32c) ($((SECONDS - t0)) s in)"

# The client's view against the server's tmpfs (buffered reads: the
# client has none of it cached, fio and dd wrote with O_DIRECT).
head -c 4M /dev/urandom | dd of="$NFS_MNT/from-client" bs=1M oflag=direct status=none ||
	fail "cannot write $NFS_MNT/from-client"
for f in verify.0.0 from-client from-server; do
	out=$(timeout 60 cmp "$NFS_MNT/$f" "$NFS_EXP/$f" 2>&1) ||
		fail "$f: the client's view and the server's tmpfs differ: $out"
done
echo "client view = server's tmpfs: fio's file, one the client wrote, one the server wrote"
timeout 60 umount "$NFS_MNT" || fail "umount $NFS_MNT failed"
echo "unmounted ($((SECONDS - t0)) s in)"

# --- scire0 deleted under a live mount -----------------------------------------
#
# A soft mount: with a hard one, the I/O in flight would wait for the
# server for ever (by design), and so would the test. timeo=10 (1 s),
# retrans=1: each RPC in flight fails after one connection attempt (3 s).
# xprtrdma's DEVICE_REMOVAL handler disconnects the client's transport
# ("rpcrdma: removing device"), svcrdma's closes the server's. Then the
# soft mount must unmount with no device to reach the server by. With
# SCIRE_NFS_RECOVER=1, scire0 comes back first and the mount must work
# again: the client reconnects by itself. (Not in make check, which
# checks the unmount with no device; about as long: the unmount then
# takes 10 s, the time the NFS modules otherwise take to let go.)

nfs_mount "$addr" ",soft,timeo=10,retrans=1"
echo "mounted soft ($((SECONDS - t0)) s in)"
# On fio's file of the first mount (no new one to lay out), one write at a
# time: each batch of RPCs in flight fails only after its own attempt to
# reconnect.
io_busy "$dev" "$NFS_MNT/verify.0.0" --iodepth=1
m=$(kmsg_mark)
# shellcheck disable=SC2317 # called through link_delete_under_io
xprt_removed() { kmsg_since "$m" | grep -aq "rpcrdma: removing device $dev for "; }
link_delete_under_io "$dev" "$IO_PID" xprt_removed
echo "xprtrdma's device removal ran; fio's first error: $(io_error) ($((SECONDS - t0)) s in)"
if [ "${SCIRE_NFS_RECOVER:-0}" = 1 ]; then
	out=$(timeout 60 rdma link add "$dev" type scire netdev eth0 2>&1) || fail "cannot add $dev again: $out"
	need_dev_gid "$dev" >/dev/null || exit 1
	s=$SECONDS
	ok=0
	for _ in 1 2 3 4 5 6; do
		if head -c 1M /dev/urandom | timeout 30 dd of="$NFS_MNT/after" bs=1M oflag=direct status=none 2>/dev/null &&
			timeout 30 cmp -s "$NFS_MNT/after" "$NFS_EXP/after"; then
			ok=1
			break
		fi
		sleep 2
	done
	[ "$ok" = 1 ] || { show_kmsg; fail "the mount does not work again after $dev is back"; }
	echo "$dev back: the mount works again after $((SECONDS - s)) s (1 MiB written and read back intact) ($((SECONDS - t0)) s in)"
fi
s=$SECONDS
timeout 60 umount "$NFS_MNT" || { show_kmsg; fail "umount $NFS_MNT after $dev went failed or took over 60 s"; }
echo "unmounted in $((SECONDS - s)) s"

# --- teardown ------------------------------------------------------------------

trap - EXIT
nfs_teardown || fail "teardown failed"
scire_reload || fail "scire or $dev do not unload or load again (above)"
wait_for 20 res_back || fail "resources not back on the new $dev: $(rdma_res_counts "$dev"), before: $base"
echo "nfsd stopped, modules unloaded, scire unloaded and loaded again, $dev resources back to $base ($((SECONDS - t0)) s)"
exit 0
