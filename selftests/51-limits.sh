#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# What an unprivileged user (uid 65534, no capabilities) can make
# $SCIRE_DEV hold, under the limits an administrator has: scire_limits.
#
#   - RLIMIT_MEMLOCK (1 MiB here) bounds the pages its MRs pin: ENOMEM one
#     page beyond it, and the pages come back on deregistration; the same
#     for SCIF windows, and RLIMIT_NOFILE bounds its SCIF endpoints
#     (EMFILE); the message buffers and receive rings of SCIF connections
#     are charged to the memory cgroup of the process that connects or
#     accepts (16 loopback connections, root, in a cgroup of their own);
#   - an rdma cgroup with hca_handle=2 bounds its device contexts and one
#     with hca_object=24 its PDs, CQs and MRs: EAGAIN beyond them, while
#     another unprivileged user outside the cgroup creates a PD, 32 CQs, 32
#     MRs and a QP at the same moment; when the holder exits, the cgroup's
#     rdma.current is back to zero (nothing leaked).
#
# The uverbs file is opened to every user (mode 0666, as udev rules of
# distributions make it) for the test and given its mode back afterwards.
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cleanup runs by trap
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_limits) || exit 1
dev=$SCIRE_DEV
uv=
for u in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$u/ibdev" 2>/dev/null)" = "$dev" ] && uv=$(basename "$u")
done
node=/dev/infiniband/$uv
[ -c "$node" ] || fail "no uverbs character device for $dev ($node)"
mode=$(stat -c %a "$node")
cgs=()
# The limits go back to max before a cgroup is removed: Debian's 6.1
# frees an rdma cgroup while a resource pool with a limit set but
# nothing charged stays on the device's list, and the device's
# unregistration then corrupts memory (list_del in free_cg_rpool_locked();
# seen when 94 deleted scire0 after this test). At max with nothing
# charged, the pool is freed at once.
unlimit()
{
	echo "$dev hca_handle=max hca_object=max" >"$1/rdma.max"
}
cleanup()
{
	chmod "$mode" "$node"
	for c in "${cgs[@]}"; do
		unlimit "$c" 2>/dev/null
		rmdir "$c" 2>/dev/null
	done
}
trap cleanup EXIT
chmod 0666 "$node" || fail "chmod $node"

# as_nobody [CGROUP] -- COMMAND: COMMAND as uid/gid 65534 without
# capabilities, in CGROUP if one is given.
as_nobody()
{
	local cg=$1

	shift 2
	# shellcheck disable=SC2016 # $$ is the child shell's
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 2; shift
	       exec setpriv --reuid=65534 --regid=65534 --clear-groups \
			    --inh-caps=-all --bounding-set=-all "$@"' sh "$cg" "$@"
}

# RLIMIT_MEMLOCK: 1 MiB, set while still root (a lower limit is kept).
out=$(ulimit -l 1024 && as_nobody "" -- "$prog" -d "$dev" -m memlock 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "RLIMIT_MEMLOCK and scire's MRs (status $rc)"

# SCIF, on this host's own node: windows against RLIMIT_MEMLOCK, endpoints
# (open files of /dev/scif) against RLIMIT_NOFILE.
if [ -c /dev/scif ]; then
	scif=$(need_prog scif_peer_check) || exit 1
	export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	out=$(ulimit -l 1024 -n 64 && as_nobody "" -- timeout 120 "$scif" limits 2500 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" = 0 ] || fail "SCIF under RLIMIT_MEMLOCK and RLIMIT_NOFILE (status $rc)"
	# Who pays for a connection: its message buffers and receive ring
	# are charged to the memory cgroup of the process that connects or
	# accepts (the debug kernel has no memory controller: said, not run).
	if cgroup2_enable memory; then
		mcg=$CGROUP2_ROOT/scire-limits-scif
		mkdir -p "$mcg" || fail "mkdir $mcg"
		cgs+=("$mcg")
		# shellcheck disable=SC2016 # $$ is the child shell's
		out=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$mcg" \
			timeout 120 "$scif" memcg 2600 16 "$mcg/memory.current" 2>&1)
		rc=$?
		echo "$out"
		[ "$rc" = 0 ] || fail "SCIF connections and the memory cgroup (status $rc)"
	else
		echo "SCIF connections and the memory cgroup: not checked ($CGROUP2_WHY)"
	fi
else
	echo "no /dev/scif: SCIF's limits not checked"
fi

# The rdma cgroup. Debug kernels may not have it: say so.
cgroup2_enable rdma || skip "memlock checked; $CGROUP2_WHY"

# uncharged CGROUP: nothing of $dev charged to CGROUP (rdma.current
# lists the device at zero, or not at all).
uncharged()
{
	local cur

	cur=$(grep "^$dev " "$1/rdma.current")
	cur=${cur% }
	[ -z "$cur" ] || [ "$cur" = "$dev hca_handle=0 hca_object=0" ]
}

# hold CGROUP LIMIT MODE N: run scire_limits -m MODE -w as nobody in CGROUP
# limited to LIMIT until it prints "full", check that another user outside
# the cgroup still gets what it asks for, then let the holder go and check
# the cgroup's charge is back to zero.
hold()
{
	local cg=$CGROUP2_ROOT/$1 limit=$2 m=$3 n=$4 line out rc pid rd wr

	mkdir -p "$cg" || fail "mkdir $cg"
	cgs+=("$cg")
	echo "$dev $limit" >"$cg/rdma.max" || fail "cannot write '$dev $limit' to $cg/rdma.max"
	coproc HOLDER { as_nobody "$cg" -- "$prog" -d "$dev" -m "$m" -n "$n" -w 2>&1; }
	# bash forgets these when the coprocess ends: keep copies.
	pid=$HOLDER_PID
	exec {rd}<&"${HOLDER[0]}" {wr}>&"${HOLDER[1]}"
	eval "exec ${HOLDER[0]}<&- ${HOLDER[1]}>&-"
	while read -r -t 120 line <&"$rd"; do
		echo "$line"
		[ "$line" = full ] && break
	done
	[ "$line" = full ] || { wait "$pid"; fail "$m under '$limit': the holder stopped before it was full"; }
	line=$(grep "^$dev " "$cg/rdma.current")
	echo "rdma.current while full: ${line% }"
	out=$(as_nobody "" -- "$prog" -d "$dev" -m spare -n 32 2>&1)
	rc=$?
	echo "another user meanwhile: $out"
	[ "$rc" = 0 ] || fail "another user outside the cgroup was refused while $m was at its limit"
	exec {wr}>&-
	while read -r -t 120 line <&"$rd"; do echo "$line"; done
	exec {rd}<&-
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || fail "$m under '$limit' (status $rc)"
	wait_for 10 uncharged "$cg" ||
		fail "after the holder exited, $cg/rdma.current is '$(grep "^$dev " "$cg/rdma.current")': charges leaked"
	unlimit "$cg" || fail "cannot reset $cg/rdma.max"
	rmdir "$cg" || fail "rmdir $cg"
}

hold scire-limits-ctx hca_handle=2 contexts 2
hold scire-limits-obj hca_object=24 objects 24
echo "ok: RLIMIT_MEMLOCK and the rdma cgroup bound what an unprivileged user holds on $dev"
exit 0
