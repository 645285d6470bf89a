#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Allocation failures everywhere scire's users can reach: with failslab,
# fail_page_alloc and fail_function (scire's own setup steps, those marked
# ALLOW_ERROR_INJECTION in kernel/), each task-filtered to the test's
# programs (/proc/PID/make-it-fail), every kind of object is created and
# destroyed, MRs registered, QPs set up and traffic moved, in one process
# (scire_objects, scire_integrity), between two (ibv_rc_pingpong,
# ibv_srq_pingpong, ibv_ud_pingpong) and through rdma_cm (rping).
#
# Passes if, for every injector: failures were injected (the injector's
# `times` budget went down); every program exited by itself, with 0 or an
# error status (a signal, a hang or a timeout fails); once the programs are
# gone scire0's `rdma resource show` counts are back to where they were;
# and afterwards, with injection off, ibv_rc_pingpong -c moves data on
# scire0. The kernel log must stay clean (the runner checks it) and the
# VM's final kmemleak scan must find nothing (scripts/vm-guest-init).
# Needs a kernel with fault injection: the debug kernel
# (scripts/vm --kernel debug); skipped elsewhere.
#
# Environment: FAULT_PROBABILITY (percent, default "2 20": each injector
# runs once per value).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug
for f in failslab fail_page_alloc fail_function; do
	[ -d "$dbg/$f" ] || skip "this kernel has no $f (run with scripts/vm --kernel debug)"
done

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
integrity=$(need_prog scire_integrity) || exit 1
objects=$(need_prog scire_objects) || exit 1
probabilities=${FAULT_PROBABILITY:-2 20}
budget=100000

# scire's functions that fail_function may make fail (ALLOW_ERROR_INJECTION).
functions="scire_mmap_alloc scire_wq_alloc scire_qp_respond scire_cq_respond
scire_srq_respond scire_mr_fill_pages scire_key_reserve"

tmp=$(mktemp -d)
# Runs its arguments as a task that the injectors may fail.
cat >"$tmp/mif" <<'EOF'
#!/bin/sh
echo 1 >/proc/self/make-it-fail || exit 125
exec "$@"
EOF
chmod 755 "$tmp/mif"

injector_off()
{
	echo 0 >"$dbg/failslab/probability"
	echo 0 >"$dbg/fail_page_alloc/probability"
	echo 0 >"$dbg/fail_function/probability"
	echo >"$dbg/fail_function/inject"
}
trap 'injector_off; rm -rf "$tmp"' EXIT

# injector_on NAME PERCENT: arm one injector, task-filtered, failing
# sleeping allocations too, silently, at most $budget times.
injector_on()
{
	local d=$dbg/$1 f

	echo Y >"$d/task-filter"
	echo 1 >"$d/interval"
	echo 0 >"$d/space"
	echo 0 >"$d/verbose"
	echo "$budget" >"$d/times"
	case $1 in
	failslab) echo N >"$d/ignore-gfp-wait" ;;
	fail_page_alloc)
		echo N >"$d/ignore-gfp-wait"
		echo N >"$d/ignore-gfp-highmem"
		echo 0 >"$d/min-order"
		;;
	fail_function)
		echo >"$d/inject"
		for f in $functions; do
			echo "$f" >"$d/inject" || fail "fail_function refuses $f (not ALLOW_ERROR_INJECTION?)"
			printf '%#x\n' -12 >"$d/$f/retval"
		done
		;;
	esac
	echo "$2" >"$d/probability"
}

# Exit status of a program under injection: 0 or an error status is a
# clean outcome; 124 and 137 (timeout), or death by a signal, is not.
clean_status()
{
	[ "$1" -lt 124 ] || [ "$1" = 125 ] || [ "$1" = 126 ] || [ "$1" = 127 ]
}

failed_runs=0
# run_one WHAT SECS CMD...: one program under injection.
run_one()
{
	local what=$1 secs=$2 rc

	shift 2
	timeout -k 5 "$secs" "$tmp/mif" "$@" >"$tmp/out" 2>&1
	rc=$?
	if clean_status "$rc"; then
		echo "  $what: exit status $rc"
	else
		echo "  $what: FAILED: exit status $rc (timeout or signal); its last output:"
		tail -n 15 "$tmp/out" | sed 's/^/    | /'
		failed_runs=$((failed_runs + 1))
	fi
}

# run_pair WHAT PORT CMD...: a TCP-rendezvous pingpong, both sides under
# injection; the client gets 127.0.0.1 as its last argument.
run_pair()
{
	local what=$1 port=$2 spid src crc

	shift 2
	timeout -k 5 60 "$tmp/mif" "$@" >"$tmp/server" 2>&1 &
	spid=$!
	# The server may fail before it listens: then the client fails too.
	wait_for 15 tcp_listening "$port" || true
	timeout -k 5 60 "$tmp/mif" "$@" 127.0.0.1 >"$tmp/client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if clean_status "$src" && clean_status "$crc"; then
		echo "  $what: server $src, client $crc"
	else
		echo "  $what: FAILED: server exit status $src, client $crc (timeout or signal)"
		tail -n 8 "$tmp/server" | sed 's/^/    server | /'
		tail -n 8 "$tmp/client" | sed 's/^/    client | /'
		failed_runs=$((failed_runs + 1))
	fi
}

# rping: rdma_cm over scire0's address, both sides under injection.
run_rping()
{
	local spid src crc

	timeout -k 5 60 "$tmp/mif" rping -s -a 192.168.77.2 -p 18999 -C 10 -v >"$tmp/server" 2>&1 &
	spid=$!
	sleep 1
	timeout -k 5 60 "$tmp/mif" rping -c -a 192.168.77.2 -p 18999 -C 10 -v -V >"$tmp/client" 2>&1
	crc=$?
	# A server whose client never came waits forever: end it.
	sleep 1
	kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	[ "$src" = 143 ] && src=0
	if clean_status "$src" && clean_status "$crc"; then
		echo "  rping: server $src, client $crc"
	else
		echo "  rping: FAILED: server exit status $src, client $crc"
		tail -n 8 "$tmp/client" | sed 's/^/    client | /'
		failed_runs=$((failed_runs + 1))
	fi
}

# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }

base=$(rdma_res_counts "$dev")
echo "$dev resources before: $base"
port=19100
for inj in failslab fail_page_alloc fail_function; do
	for p in $probabilities; do
		echo "$inj at $p%:"
		injector_on "$inj" "$p"
		run_one "scire_objects" 300 "$objects" -d "$dev"
		run_one "scire_integrity -a mix" 300 "$integrity" -d "$dev" -g "$gid" -n 200 -a mix
		port=$((port + 1))
		run_pair "ibv_rc_pingpong -c" "$port" ibv_rc_pingpong -d "$dev" -g "$gid" -s 65536 -n 10 -c -p "$port"
		port=$((port + 1))
		run_pair "ibv_srq_pingpong -c" "$port" ibv_srq_pingpong -d "$dev" -g "$gid" -s 4096 -n 10 -c -p "$port"
		port=$((port + 1))
		run_pair "ibv_ud_pingpong -c" "$port" ibv_ud_pingpong -d "$dev" -g "$gid" -s 1024 -n 10 -c -p "$port"
		run_rping
		left=$(cat "$dbg/$inj/times")
		injector_off
		echo "  $((budget - left)) failures injected"
		[ "$left" -lt "$budget" ] || fail "$inj at $p%: no failure was injected"
		# Objects go with their processes; the core may release some a
		# little later.
		if ! wait_for 20 res_back; then
			fail "$inj at $p%: $dev resources not back to '$base': $(rdma_res_counts "$dev"); $(rdma resource show qp dev "$dev" 2>&1 | head -5)"
		fi
	done
	# The device still works with injection off.
	port=$((port + 1))
	out=$(pair_run 120 "$port" ibv_rc_pingpong -d "$dev" -g "$gid" -s 65536 -n 20 -c -p "$port") ||
		fail "after $inj: ibv_rc_pingpong -c on $dev fails: $out"
	echo "after $inj: ibv_rc_pingpong -c works: $(grep -m1 'bytes in' <<<"$out")"
done

[ "$failed_runs" = 0 ] || fail "$failed_runs programs hung or died of a signal under injection"
exit 0
