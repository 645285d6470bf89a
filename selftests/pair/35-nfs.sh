#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA across two kernels (scripts/vm --pair): nfsd on host a
# exports a tmpfs and listens on RDMA port 20049 (nfs-lib.sh); host b
# mounts it with -o rdma,port=20049,vers=4.2 (/proc/mounts must say
# proto=rdma), and the rpcrdma transport must have its QP on each host's
# device. fio on b writes random O_DIRECT blocks of 4 KiB to 1 MiB at
# depth 16 over a 32 MiB file and checks each block's crc32c when it reads
# them back; each host's device must have sent and received that much on
# the wire meanwhile. b's view of fio's file, of a file b wrote and of one
# a wrote must match a's tmpfs. Then b unmounts, a stops nfsd, both unload
# the modules, and `rdma resource show` is back to its baseline on both
# (pair_ulp in lib.sh). Scire to scire only, for make check's time;
# SCIRE_PAIR_ULPS=1 runs it on any pair.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../nfs-lib.sh
. "$(dirname "$0")/../nfs-lib.sh"

pair_need_scire SCIRE_PAIR_ULPS
nfs_need
other=$([ "$SCIRE_HOST" = a ] && echo b || echo a)
files="verify.0.0 from-client from-server"

# Print the kernel log of this test (NFS and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'nfs|rpc|rdma|svc|scire' | tail -n 40 | sed 's/^/  kmsg: /'
}

# shellcheck disable=SC2317 # the steps of pair_ulp
{
ulp_target_up()
{
	nfs_hosts "$SCIRE_ADDR $HOSTNAME" "$SCIRE_PEER scire-$other"
	nfs_server_up
}

ulp_initiator_up()
{
	nfs_hosts "$SCIRE_ADDR $HOSTNAME" "$SCIRE_PEER scire-$other"
	nfs_mount "$SCIRE_PEER"
	echo "mounted $SCIRE_PEER:/export over RDMA ($((SECONDS - t0)) s in)"
	ULP_WHERE=$NFS_MNT
}

# What b reads through its mount (buffered: it has none of it cached, fio
# and dd wrote with O_DIRECT) against what a has in its tmpfs.
ulp_after_io()
{
	local out

	if [ "$SCIRE_HOST" = b ]; then
		head -c 4M /dev/urandom | dd of="$NFS_MNT/from-client" bs=1M oflag=direct status=none ||
			{ echo "cannot write $NFS_MNT/from-client"; return 1; }
		# shellcheck disable=SC2086 # files: a list
		(cd "$NFS_MNT" && timeout 60 sha256sum $files) >"$SCIRE_SHARED/nfs.b.sums"
		return
	fi
	# shellcheck disable=SC2086 # files: a list
	out=$(cd "$NFS_EXP" && timeout 60 sha256sum $files | diff - "$SCIRE_SHARED/nfs.b.sums") || {
		echo "b's view and a's tmpfs differ (- a, + b):"
		echo "$out"
		return 1
	}
	echo "b's view = a's tmpfs: fio's file, one b wrote, one a wrote"
}

ulp_initiator_down()
{
	timeout 60 umount "$NFS_MNT" || fail "umount $NFS_MNT failed"
	echo "unmounted ($((SECONDS - t0)) s in)"
}

ulp_teardown()
{
	nfs_teardown
}
}

mark=$(kmsg_mark)
pair_ulp NFS 32M rpcrdma rpcrdma || fail "NFS over RDMA across the pair failed on host $SCIRE_HOST"
exit 0
