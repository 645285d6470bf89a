#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Systematic fault injection: scire_fault_nth fails, one at a time, every
# fault-injection point the kernel passes while serving one verbs
# operation (/proc/thread-self/fail-nth: N = 1, 2, 3, ... until the
# operation no longer reaches the N-th point), for each kind of operation:
# alloc PD, create CQ, resize CQ, create RC and UD QPs, SRQ, register an MR,
# alloc an MW, create an AH, RESET->INIT->RTR->RTS, post a receive, a SEND
# and an RDMA WRITE and poll their completions, an rdma_cm connection
# (address and route resolution, QP, connect, established) and `rdma link
# add` of a second scire device (RDMA_NLDEV_CMD_NEWLINK). The points are
# failslab's and fail_page_alloc's, with their ignore-gfp-wait filters off
# and fail_page_alloc's min-order 0, so that sleeping and order-0
# allocations count too; user pages (highmem flag) still do not.
#
# Passes if every operation either succeeds or fails with an errno (a work
# request: completes, with success or an error status), the operation
# works again without injection after each series, scire0's `rdma resource
# show` counts are where they were before each kind and after the program
# exits, the kernel log stays clean (selftests/run checks it) and the VM's
# kmemleak scans find nothing (scripts/vm-guest-init).
#
# fail_function is not used: on the debug kernel (no CONFIG_FTRACE) its
# kprobes are int3 breakpoints, whose handler runs as an NMI, where
# should_fail() neither honours fail-nth nor the task filter (in_task() is
# false) and its probability draws a random number (lockdep:
# inconsistent lock state on base_crng.lock). On a kernel with
# CONFIG_KPROBES_ON_FTRACE, the probes run in task context, count as
# fail-nth points, and scire's ALLOW_ERROR_INJECTION steps are added here.
#
# The debug boot of make check takes each kind for at most
# FAULT_KIND_SECONDS (default 12 s on the debug kernel; 0, no limit, with
# SCIRE_DEBUG_FULL=1 or elsewhere) and leaves out link (FAULT_KINDS picks
# kinds: a comma list). Needs a kernel with fault injection: the debug
# kernel (scripts/vm --kernel debug); skipped elsewhere.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug
[ -e /proc/self/fail-nth ] || skip "this kernel has no fail-nth (run with scripts/vm --kernel debug)"
for f in failslab fail_page_alloc; do
	[ -d "$dbg/$f" ] || skip "this kernel has no $f (run with scripts/vm --kernel debug)"
done

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
prog=$(need_prog scire_fault_nth) || exit 1
addr=$(ip -4 -br addr show "$(dev_netdev "$dev")" | awk '{ print $3 }' | cut -d/ -f1)
[ -n "$addr" ] || fail "$dev's netdev has no IPv4 address"

if debug_quick; then
	kinds=${FAULT_KINDS:-pd,cq,resize,qp,ud,srq,mr,mw,ah,modify,post,cm}
	secs=${FAULT_KIND_SECONDS:-12}
else
	kinds=${FAULT_KINDS:-pd,cq,resize,qp,ud,srq,mr,mw,ah,modify,post,cm,link}
	secs=${FAULT_KIND_SECONDS:-0}
fi

# scire's functions that fail_function may make fail (ALLOW_ERROR_INJECTION).
functions="scire_mmap_alloc scire_wq_alloc scire_qp_respond scire_cq_respond
scire_srq_respond scire_mr_fill_pages scire_key_reserve"
kprobes_in_task=0
zcat /proc/config.gz 2>/dev/null | grep -qx CONFIG_KPROBES_ON_FTRACE=y && kprobes_in_task=1

# What the filters were, to put them back.
saved=""
for f in failslab/ignore-gfp-wait fail_page_alloc/ignore-gfp-wait \
	fail_page_alloc/ignore-gfp-highmem fail_page_alloc/min-order \
	failslab/verbose fail_page_alloc/verbose; do
	saved+="$f=$(cat "$dbg/$f") "
done

veth=0
cleanup()
{
	local s

	for s in $saved; do
		echo "${s#*=}" >"$dbg/${s%%=*}"
	done
	if [ "$kprobes_in_task" = 1 ]; then
		echo >"$dbg/fail_function/inject"
	fi
	[ "$veth" = 0 ] || ip link del vfi0 2>/dev/null
}
trap cleanup EXIT

# Nothing fails by probability (it stays 0): only the N-th point of the
# thread that asked, whatever its gfp flags and order. User pages keep
# ignore-gfp-highmem: a failed page fault would be retried, not returned.
for f in failslab fail_page_alloc; do
	[ "$(cat "$dbg/$f/probability")" = 0 ] || fail "$f/probability is $(cat "$dbg/$f/probability"), expected 0"
	echo N >"$dbg/$f/ignore-gfp-wait"
	echo 0 >"$dbg/$f/verbose"
done
echo 0 >"$dbg/fail_page_alloc/min-order"
echo Y >"$dbg/fail_page_alloc/ignore-gfp-highmem"
if [ "$kprobes_in_task" = 1 ]; then
	echo 0 >"$dbg/fail_function/probability"
	echo 0 >"$dbg/fail_function/verbose"
	echo >"$dbg/fail_function/inject"
	for f in $functions; do
		echo "$f" >"$dbg/fail_function/inject" || fail "fail_function refuses $f (not ALLOW_ERROR_INJECTION?)"
		printf '%#x\n' -12 >"$dbg/fail_function/$f/retval"
	done
	echo "fail_function: scire's ALLOW_ERROR_INJECTION steps count as fail-nth points"
else
	echo "fail_function: not used (no CONFIG_KPROBES_ON_FTRACE: its probes would run as NMIs)"
fi

args=()
case ",$kinds," in
*,link,*)
	ip link add vfi0 type veth peer name vfi1 || fail "cannot add veth vfi0"
	veth=1
	ip link set vfi0 up && ip link set vfi1 up || fail "cannot set vfi0 up"
	args+=(-l vfi0)
	;;
esac

base=$(rdma_res_counts "$dev")
echo "$dev resources before: $base; kinds $kinds, at most ${secs}s each (0: no limit)"
start=$SECONDS
"$prog" -d "$dev" -g "$gid" -a "$addr" -k "$kinds" -t "$secs" "${args[@]}"
rc=$?
echo "scire_fault_nth: exit status $rc after $((SECONDS - start)) s"
[ "$rc" = 0 ] || fail "scire_fault_nth failed (exit status $rc)"

# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }
wait_for 20 res_back ||
	fail "$dev resources not back to '$base': $(rdma_res_counts "$dev")"
rdma_has scire_fi && fail "scire_fi (added under injection) is still there"
exit 0
