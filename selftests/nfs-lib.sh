# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# NFS over RDMA helpers for the selftests (110 on one host, pair/35 across
# a VM pair): the kernel NFS server (nfsd, NFSv4 only) exporting a tmpfs
# and listening on RDMA port NFS_PORT, the kernel client's mount of it,
# and a teardown that undoes whatever part of either was done. Sourced
# after lib.sh (not a test). The functions fail the test on error,
# calling its show_kmsg first where the kernel log may say why; t0 is the
# test's start (SECONDS).
#
# No systemd in the VM: the server is started by hand: nfsdcld (client
# tracking, so that nfsd skips its NFSv4 grace period: it has no client to
# reclaim), rpc.mountd (NFSv4 only: no rpcbind, no statd), exportfs and
# rpc.nfsd. The server's NFSv4 root (fsid=0) is a tmpfs of the test's:
# the guest's own / (overlayfs over 9p) cannot be exported. The client
# mounts ADDR:/export, which is NFS_EXP.

# The test's start, for "(N s in)" in what the functions print.
t0=$SECONDS
NFS_PORT=20049
NFS_RUN=/run/scire-nfs
NFS_V4ROOT=$NFS_RUN/v4root
NFS_EXP=$NFS_V4ROOT/export
NFS_MNT=/mnt/x
NFS_PIPEFS=/run/rpc_pipefs
NFSD_FS=/proc/fs/nfsd
nfs_mountd_pid="" nfs_cld_pid="" nfs_exported=0

# nfs_need: skip the test unless this kernel and the guest have what NFS
# over RDMA needs on both ends.
nfs_need()
{
	local t

	# The debug kernel (scripts/debug-kernel.config) has no NFS.
	modprobe -n -q -a nfsd rpcrdma nfsv4 || skip "this kernel has no nfsd, rpcrdma or nfsv4 module"
	for t in rpc.nfsd rpc.mountd exportfs nfsdcld mount.nfs fio; do
		command -v "$t" >/dev/null ||
			skip "$t missing (Debian packages nfs-kernel-server, nfs-common, fio: scripts/setup)"
	done
}

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

# nfs_hosts "ADDR NAME"...: /etc/hosts with these lines added (a file of
# NFS_RUN bind-mounted over it). rpc.mountd looks the client's address up
# (and the tools their host name): in the VM, DNS is the host's
# unreachable name server, 10 s a look-up.
nfs_hosts()
{
	mkdir -p "$NFS_RUN" || fail "cannot create $NFS_RUN"
	{ printf '%s\n' "$(</etc/hosts)" "$@" >"$NFS_RUN/hosts" &&
		mount --bind "$NFS_RUN/hosts" /etc/hosts; } || fail "cannot add $* to /etc/hosts"
}

# nfs_server_up: the server, listening on RDMA port NFS_PORT; NFS_EXP
# holds a file of 4 MiB it wrote, from-server.
nfs_server_up()
{
	local out ports

	modprobe -a nfsd rpcrdma || fail "modprobe nfsd rpcrdma failed"
	mkdir -p "$NFS_RUN/cld" "$NFS_V4ROOT" "$NFS_PIPEFS" /var/lib/nfs || fail "cannot create $NFS_RUN"
	mount -t tmpfs -o size=512M tmpfs "$NFS_V4ROOT" || fail "cannot mount a tmpfs on $NFS_V4ROOT"
	mkdir "$NFS_EXP" || fail "cannot create $NFS_EXP"
	mounted "$NFSD_FS" || mount -t nfsd nfsd "$NFSD_FS" || fail "cannot mount $NFSD_FS"
	mounted "$NFS_PIPEFS" || mount -t rpc_pipefs sunrpc "$NFS_PIPEFS" || fail "cannot mount rpc_pipefs"
	# nfsdcld before nfsd: with it, and no client in its (fresh) database,
	# nfsd needs no grace period. nfsd creates the pipe (nfsd/cld) when it
	# starts, and waits a second for nfsdcld to open it.
	nfsdcld -F -p "$NFS_PIPEFS" -s "$NFS_RUN/cld" >"$NFS_RUN/cld.log" 2>&1 &
	nfs_cld_pid=$!
	# Should the grace period run anyway: its minimum.
	{ echo 10 >"$NFSD_FS/nfsv4gracetime" && echo 10 >"$NFSD_FS/nfsv4leasetime"; } ||
		fail "cannot set nfsd's grace and lease times"
	# The export, without /etc/exports (-i). tmpfs has no UUID: it needs fsid=.
	nfs_exported=1
	timeout 30 exportfs -i -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$NFS_V4ROOT" ||
		fail "exportfs of $NFS_V4ROOT failed"
	rpc.mountd -F -N 3 >"$NFS_RUN/mountd.log" 2>&1 &
	nfs_mountd_pid=$!
	out=$(timeout 60 rpc.nfsd -N 3 -U 8 2>&1) || fail "rpc.nfsd failed: $out"
	out=$( (echo "rdma $NFS_PORT" >"$NFSD_FS/portlist") 2>&1) ||
		{ show_kmsg; fail "echo rdma $NFS_PORT > $NFSD_FS/portlist failed: $out"; }
	ports=$(<"$NFSD_FS/portlist")
	[[ $'\n'$ports$'\n' == *$'\n'"rdma $NFS_PORT"$'\n'* ]] ||
		fail "nfsd does not list rdma $NFS_PORT: ${ports//$'\n'/, }"
	echo "nfsd: versions $(<"$NFSD_FS/versions"), ports ${ports//$'\n'/, } ($((SECONDS - t0)) s in)"
	# A file the server writes, for the client to read.
	head -c 4M /dev/urandom >"$NFS_EXP/from-server" || fail "cannot write $NFS_EXP/from-server"
}

# nfs_mount ADDR [,OPTIONS]: mount ADDR:/export on NFS_MNT over RDMA,
# NFSv4.2 (OPTIONS added); /proc/mounts must say proto=rdma.
nfs_mount()
{
	local out

	modprobe -a rpcrdma nfsv4 || fail "modprobe rpcrdma nfsv4 failed"
	mkdir -p "$NFS_MNT" || fail "cannot create $NFS_MNT"
	out=$(timeout 90 mount -t nfs -o "rdma,port=$NFS_PORT,vers=4.2${2:-}" "$1:/export" "$NFS_MNT" 2>&1) || {
		show_kmsg
		fail "mount -o rdma,port=$NFS_PORT,vers=4.2${2:-} $1:/export failed: $out"
	}
	grep " $NFS_MNT nfs4 " /proc/mounts | grep -q '[ ,]proto=rdma[, ]' ||
		fail "$NFS_MNT is not over RDMA: $(grep " $NFS_MNT " /proc/mounts)"
}

# nfs_teardown: undo nfs_hosts, nfs_server_up and nfs_mount, whatever part
# of them was done; unload the NFS and RPC/RDMA modules. Prints what
# fails; status 1 then.
nfs_teardown()
{
	local ok=0 m p

	if mounted "$NFS_MNT"; then
		timeout 60 umount -f "$NFS_MNT" || timeout 30 umount -l "$NFS_MNT" ||
			{ echo "teardown: cannot unmount $NFS_MNT"; ok=1; }
	fi
	if [ -e "$NFSD_FS/threads" ] && [ "$(<"$NFSD_FS/threads")" != 0 ]; then
		timeout 60 rpc.nfsd 0 || { echo "teardown: rpc.nfsd 0 failed"; ok=1; }
	fi
	[ "$nfs_exported" = 1 ] && timeout 30 exportfs -u "*:$NFS_V4ROOT"
	for p in $nfs_mountd_pid $nfs_cld_pid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for m in "$NFSD_FS" "$NFS_PIPEFS" /etc/hosts; do
		mounted "$m" && umount "$m"
	done
	mounted "$NFS_V4ROOT" && { umount "$NFS_V4ROOT" || { echo "teardown: cannot unmount $NFS_V4ROOT"; ok=1; }; }
	mounted "$NFS_V4ROOT" || rm -rf "$NFS_RUN"
	# nfs (the client) may linger a moment after the last unmount.
	modprobe -r rpcrdma nfsv4 nfs nfsd 2>/dev/null
	for m in rpcrdma nfsv4 nfs nfsd; do
		[ -d "/sys/module/$m" ] || continue
		wait_for 20 modprobe -r "$m" ||
			{ echo "teardown: cannot unload $m: $(modprobe -r "$m" 2>&1)"; ok=1; }
	done
	return $ok
}
