#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Guest CPU profiles of the workloads behind bench/results.md's MISSED
# targets (issue 18): each sets up one workload, lets it run, samples
# every vCPU with `perf record -a -g -e cpu-clock` (a TCG guest has no
# PMU: cpu-clock is a software event, an hrtimer per CPU) for a window of
# PROFILE_SECS in the middle of its timed part, and prints
#
#   - the workload's own figures (perftest's, fio's, scif_bench's);
#   - /proc/stat over the window: where the vCPUs' time went (user,
#     system, softirq, irq, idle), independent of perf; the softirqs
#     raised (/proc/softirqs); each thread's run time and how often it
#     ran (schedstat);
#   - perf's top symbols (--no-children --sort sym, and --sort dso,sym),
#     by command (--sort comm), and the samples sorted by context from
#     their call chains: idle, softirq (in ksoftirqd or on the way out of
#     an interrupt or a local_bh_enable of some task), kworker, other
#     kernel threads, and processes (user or kernel mode).
#
# Run it in the test VM, one workload or several (each its own window):
#
#   scripts/vm -- bench/profile.sh WORKLOAD...
#   scripts/vm --pair -- bench/profile.sh pair-bw   (SCIRE_VM_SMP=2, as
#                                                    make bench's pair)
#
# WORKLOADs:
#
#   wire-lat         ib_write_lat -s 2 on scire0 talking to itself with
#                    fast_path=0 ((b'), the wire path), then the same on
#                    rxe0 on eth0 (scire0 deleted, added again after;
#                    PROFILE_RXE=0 skips rxe)
#   fast-lat         ib_write_lat -s 2 on scire0 talking to itself on the
#                    same-host fast path ((b); fast_path must be Y)
#   nvmeof-randread  NVMe-oF over scire0 on this host (nvmet-rdma target
#                    and nvme-rdma host, null_blk backing, as bench/ulp.sh
#                    sets it up): fio 4 KiB randread, iodepth 32
#   nvmeof-seqwrite  the same, fio 1 MiB sequential write, iodepth 8
#   scif-send        build/bench/scif_bench loop's scif_send_lat part
#                    (an 8-byte scif_send() the peer echoes, node 0 over
#                    scire0), stopped after the window
#   scif-rma         build/bench/scif_bench loop (SCIF node 0 talking to
#                    itself over scire0): scif_writeto at 64 KiB, or at
#                    $SCIF_RMA_SIZE (the window ends before its readfrom
#                    half starts)
#   qp64             ib_write_bw -s 65536 -q 64 on scire0 (fast path on),
#                    then -q 1
#   veth-bw          ib_write_bw -s 65536 from scireB (netns nsB) to
#                    scireA (netns nsA) over a veth pair at MTU 9000, as
#                    make bench's column (c) sets it up, then (with
#                    PROFILE_RXE=1, the default) the same on rxe0 on eth0
#                    talking to itself, column (a), which (c) is read
#                    against (scire0 deleted, added again after)
#   pair-bw          ib_write_bw -s 65536 across the VM pair, server on
#                    host a, client on host b; each host profiles itself
#                    (on scire0, or PROFILE_PAIR_DEV: rxe0 with
#                    SCIRE_PAIR_DEVS="rxe rxe")
#   pair-nvmeof-randread  NVMe-oF across the VM pair as bench/ulp.sh's
#                    ulp_pair sets it up (nvmet-rdma on host a, nvme-rdma
#                    and fio on host b, on PROFILE_PAIR_DEV): fio 4 KiB
#                    randread, iodepth 32 (PROFILE_NVME_DEPTH); host b also
#                    prints fio's completion latency. Any pair of devices:
#                    scripts/vm --pair --devs "scire rxe" puts the target
#                    on scire and the host on rxe
#   pair-nvmeof-randwrite the same, 4 KiB randwrite
#
# Environment: PROFILE_SECS (window, default 10), PROFILE_WARMUP (seconds
# of the workload before the window, default 3), PROFILE_TOP (symbol
# lines, default 25), PROFILE_RXE (0: no rxe run in wire-lat),
# PROFILE_PERF (0: no perf record, the window is a plain sleep and the
# report has /proc/stat, the counters and schedstat only: for the VM
# pair, where perf's own load stretched the window 7x), PROFILE_PAIR_DEV
# (the pair workloads' device, default scire0), PROFILE_NVME_DEPTH (fio's
# iodepth in pair-nvmeof-*),
# PROFILE_LAT_ITERS (ib_write_lat -n in the window's run, default
# 1000000: it is stopped after the window), PROFILE_DATA (keep perf.data
# files in this directory, e.g. the pair's
# SCIRE_SHARED; default: a scratch directory, gone with the VM).
#
# Output on stdout only; scripts/vm's guest has no writable share, so
# save it on the host: scripts/vm -- bench/profile.sh qp64 | tee out.txt
# A report, not a check: exit status 1 if a workload could not be set up
# or one of its programs failed (a NOTE line says which), else 0. bench/profiles.md has the findings of one run.
# shellcheck source-path=SCRIPTDIR/..
# shellcheck disable=SC2317 # listening runs through wait_for
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SCIRE_ROOT=${SCIRE_ROOT:-$(dirname "$here")}
export SCIRE_BUILD=${SCIRE_BUILD:-$SCIRE_ROOT/build}
# shellcheck source=selftests/lib.sh
. "$SCIRE_ROOT/selftests/lib.sh"
# bench/ulp.sh's fio_value and its job sizes; it wants these two set.
quick=0
scratch=$(mktemp -d)
# shellcheck source=bench/ulp.sh
. "$here/ulp.sh"

SECS=${PROFILE_SECS:-10}
WARMUP=${PROFILE_WARMUP:-3}
TOP=${PROFILE_TOP:-25}
PERF=${PROFILE_PERF:-1}
DATA=${PROFILE_DATA:-$scratch}
FAST_PATH=/sys/module/scire/parameters/fast_path
PORT=18600
# The workload runs this long: its warm-up, twice the window, and a
# margin. perf record's own start and end under load make the window
# (perf record -- sleep SECS) last longer than SECS: with a margin of
# 4 s, ib_write_bw -D and fio ended inside it. fio and scif_bench are
# stopped after the window; perftest's bw tools are waited for.
RUN_SECS=$((WARMUP + 2 * SECS + 10))
# ib_write_lat's iterations: 2 B takes 14-70 us a round trip here.
LAT_ITERS=${PROFILE_LAT_ITERS:-1000000}
bad=0

say() { printf '=== %s\n' "$*"; }
warn() { printf '=== NOTE: %s\n' "$*"; bad=1; }

# Let perf resolve kernel and module symbols (scire.ko's come from
# /proc/kallsyms; its .ko is not under /lib/modules).
echo 0 >/proc/sys/kernel/kptr_restrict 2>/dev/null
echo -1 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null

# stat_snap: the cpu line of /proc/stat (ticks: user nice system idle
# iowait irq softirq steal).
stat_snap() { awk '$1 == "cpu" { print $2, $3, $4, $5, $6, $7, $8, $9 }' /proc/stat; }

# stat_say BEFORE AFTER: the shares of the vCPUs' time between the two.
stat_say()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x); split(b, y)
		n = split("user nice system idle iowait irq softirq steal", name)
		for (i = 1; i <= n; i++) { d[i] = y[i] - x[i]; t += d[i] }
		if (t <= 0) { print "no ticks"; exit }
		printf "/proc/stat over the window (all vCPUs, %d ticks):", t
		for (i = 1; i <= n; i++)
			if (d[i] > 0)
				printf " %s %.1f%%", name[i], 100 * d[i] / t
		printf "; busy (not idle/iowait) %.1f%%\n", 100 * (t - d[4] - d[5]) / t
	}'
}

# window NAME PID: perf record of every vCPU for SECS seconds into
# $DATA/NAME.data, /proc/stat around it; a note if the workload PID was
# gone before the window ended (the profile would show idle time that is
# not the workload's).
window()
{
	local s0 s1

	kill -0 "$2" 2>/dev/null || warn "$1: the workload ended before the window began"
	ctr_snap >"$scratch/ctr0"
	task_snap >"$scratch/task0"
	sirq_snap >"$scratch/sirq0"
	s0=$(stat_snap)
	W0=$EPOCHREALTIME
	if [ "$PERF" = 1 ]; then
		perf record -q -B -a -g -e cpu-clock -F 999 -o "$DATA/$1.data" -- sleep "$SECS" 2>"$scratch/perf.err" ||
			warn "perf record for $1: $(tail -n 3 "$scratch/perf.err" | tr '\n' ' ')"
	else
		sleep "$SECS"
	fi
	W1=$EPOCHREALTIME
	s1=$(stat_snap)
	sirq_snap >"$scratch/sirq1"
	task_snap >"$scratch/task1"
	ctr_snap >"$scratch/ctr1"
	kill -0 "$2" 2>/dev/null || warn "$1: the workload ended before the window did: the profile's tail is not the workload's"
	WSECS=$(awk -v a="$W0" -v b="$W1" 'BEGIN { printf "%.2f", b - a }')
	STAT_LINE="the window (sleep $SECS$([ "$PERF" = 1 ] && echo " under perf record")) took $WSECS s of wall time
$(stat_say "$s0" "$s1")
RDMA counters over the window (what grew): $(ctr_delta "$scratch/ctr0" "$scratch/ctr1")
Softirqs raised over the window (/proc/softirqs, all vCPUs): $(ctr_delta "$scratch/sirq0" "$scratch/sirq1")
Run time by thread over the window (schedstat: exact, not sampled; a softirq is charged to the task it interrupted, the idle task's own is not counted):
$(task_delta "$scratch/task0" "$scratch/task1")"
	IDLE_STAT=$(awk -v a="$s0" -v b="$s1" 'BEGIN { split(a, x); split(b, y)
		for (i = 1; i <= 8; i++) t += y[i] - x[i]
		printf "%.1f", (t > 0 ? 100 * (y[4] - x[4] + y[5] - x[5]) / t : 0) }')
}

# sirq_snap: "softirq NAME COUNT" of each softirq, summed over the vCPUs.
sirq_snap()
{
	awk 'NR > 1 { n = 0; for (i = 2; i <= NF; i++) n += $i; sub(/:$/, "", $1); print "softirq", $1, n }' /proc/softirqs
}

# task_snap: "TID RUN_NS RUNS COMM" of every thread (its schedstat's
# first and third fields: time on a CPU, and how many times it got one).
task_snap()
{
	local d c r n

	for d in /proc/[0-9]*/task/[0-9]*; do
		read -r r _ n <"$d/schedstat" 2>/dev/null && read -r c <"$d/comm" 2>/dev/null &&
			printf '%s %s %s %s\n' "${d##*/}" "$r" "$n" "$c"
	done
}

# task_delta BEFORE AFTER: the run time of the threads between two
# task_snaps, summed by command (kworker/N:M-queue as kworker-queue),
# as a share of the window's wall time (WSECS) on one vCPU. Threads that
# exited inside the window are not counted.
task_delta()
{
	awk -v secs="$WSECS" 'NR == FNR { v[$1] = $2; r[$1] = $3; next }
	{
		c = $4
		for (i = 5; i <= NF; i++)
			c = c " " $i
		sub(/^kworker\/[0-9u]+:[0-9]+H?[-+]?/, "kworker-", c)
		sub(/\/[0-9]+$/, "", c)
		d = $2 - ($1 in v ? v[$1] : 0)
		if (d > 0) { t[c] += d; all += d; n[c] += $3 - ($1 in r ? r[$1] : 0) }
	}
	END {
		for (c in t)
			if (t[c] >= 1e6)
				printf "  %7.1f ms  %5.1f%% of a vCPU  %7d runs  %s\n", t[c] / 1e6, 100 * t[c] / 1e9 / secs, n[c], c | "sort -rn | head -n 12"
		close("sort -rn | head -n 12")
		printf "  %7.1f ms in all threads (%.1f%% of the window on %d vCPUs)\n", all / 1e6, 100 * all / 1e9 / secs / ncpu, ncpu
	}' ncpu="$(nproc)" "$1" "$2"
}

# ctr_snap: "DEV NAME VALUE" for every counter of every RDMA device.
ctr_snap()
{
	local d

	for d in $(rdma link show 2>/dev/null | awk '{ print $2 }' | cut -d/ -f1); do
		rdma_counters "$d" 2>/dev/null | sed "s/^/$d /; s/=/ /"
	done
}

# ctr_delta BEFORE AFTER: the counters that grew between two ctr_snaps.
ctr_delta()
{
	awk 'NR == FNR { v[$1 " " $2] = $3; next }
	($1 " " $2) in v && $3 > v[$1 " " $2] { printf "%s %s +%.0f; ", $1, $2, $3 - v[$1 " " $2] }' "$1" "$2"
}

# contexts FILE: the samples of FILE by context, from their call chains,
# then the busy (not idle) samples' own symbols and modules, as shares of
# the busy samples.
contexts()
{
	perf script -i "$1" -F comm,ip,sym,dso 2>/dev/null | awk -v top="$TOP" '
	function flush(   ctx) {
		if (comm == "")
			return
		if (soft)
			ctx = (comm ~ /^ksoftirqd/) ? "softirq in ksoftirqd" : "softirq on " (comm ~ /^swapper/ ? "idle CPU (irq exit)" : "a task (" comm ")")
		else if (hard)
			ctx = "hardirq"
		else if (comm ~ /^swapper/)
			ctx = idle ? "idle" : "swapper, not idle"
		else if (comm ~ /^kworker/)
			ctx = "kworker"
		else if (kthread)
			ctx = "kernel thread " comm
		else
			ctx = (ip ~ /^ffff/ ? "process kernel " : "process user ") comm
		n[ctx]++
		total++
		if (ctx != "idle") {
			busy++
			bsym[sym " " dso]++
			bdso[dso]++
		}
		comm = ""
	}
	/^$/ { flush(); hdr = 1; next }
	hdr || comm == "" {
		comm = $0
		sub(/^[ \t]+/, "", comm)
		sub(/[ \t]+$/, "", comm)
		soft = hard = idle = kthread = 0
		ip = ""
		hdr = 0
		next
	}
	{
		if (ip == "") {
			ip = $1
			sym = $2
			dso = $NF
		}
		s = $2
		if (s ~ /^(__do_softirq|do_softirq|run_ksoftirqd|net_rx_action|tasklet_action_common)/)
			soft = 1
		if (s ~ /^(common_interrupt|asm_common_interrupt|__sysvec_|sysvec_|handle_irq_event)/)
			hard = 1
		if (s ~ /^(default_idle|default_idle_call|cpuidle_idle_call|do_idle|native_safe_halt|acpi_idle|poll_idle|pv_native_safe_halt)/)
			idle = 1
		if (s ~ /^(kthread|ret_from_fork)$/)
			kthread = 1
	}
	END {
		flush()
		if (!total) { print "  (no samples)"; exit }
		for (c in n)
			printf "  %6.2f%%  %7d  %s\n", 100 * n[c] / total, n[c], c | "sort -rn"
		close("sort -rn")
		printf "  %d samples, %d of them busy (not idle)\n", total, busy
		if (!busy)
			exit
		print "=== busy samples only: own symbol (% of busy samples)"
		for (c in bsym)
			printf "  %6.2f%%  %7d  %s\n", 100 * bsym[c] / busy, bsym[c], c | "sort -rn | head -n " top
		close("sort -rn | head -n " top)
		print "=== busy samples only: module (% of busy samples)"
		for (c in bdso)
			printf "  %6.2f%%  %7d  %s\n", 100 * bdso[c] / busy, bdso[c], c | "sort -rn | head -n 10"
		close("sort -rn | head -n 10")
	}'
}

# report NAME: what perf saw in $DATA/NAME.data.
report()
{
	local f=$DATA/$1.data

	if [ "$PERF" != 1 ]; then
		say "profile $1: no perf (PROFILE_PERF=0), $SECS s window after $WARMUP s of the workload"
		echo "$STAT_LINE"
		return
	fi
	say "profile $1: perf record -a -g -e cpu-clock -F 999, $SECS s window after $WARMUP s of the workload"
	echo "$STAT_LINE"
	[ -s "$f" ] || { warn "no $f"; return; }
	say "$1: top symbols (perf report --no-children --sort sym)"
	perf report -i "$f" --no-children --sort sym --stdio -g none --percent-limit 0.2 2>/dev/null |
		grep -v -e '^#' -e '^$' | head -n "$TOP"
	say "$1: top dso,sym"
	perf report -i "$f" --no-children --sort dso,sym --stdio -g none --percent-limit 0.5 2>/dev/null |
		grep -v -e '^#' -e '^$' | head -n "$TOP"
	say "$1: by dso"
	perf report -i "$f" --no-children --sort dso --stdio -g none --percent-limit 0.5 2>/dev/null |
		grep -v -e '^#' -e '^$' | head -n 12
	say "$1: by command (--sort comm)"
	perf report -i "$f" --no-children --sort comm --stdio -g none --percent-limit 0.5 2>/dev/null |
		grep -v -e '^#' -e '^$' | head -n 15
	say "$1: by context (call chains: softirq frames, idle loop, kworker, process)"
	contexts "$f" | tee "$scratch/ctx"
	awk -v st="$IDLE_STAT" -v w="$WSECS" -v secs="$SECS" '$NF == "idle" && $3 == "idle" { p = $1 + 0 }
	END {
		d = p - st
		if (d > 15 || d < -15 || w > 1.5 * secs)
			printf "=== NOTE: perf sees %.1f%% idle, /proc/stat %.1f%%, and its sleep %d took %.1f s: the guest'"'"'s timer interrupts came late, and perf'"'"'s samples pile up where interrupts are enabled again (the idle loop'"'"'s halt, spin_unlock_irq*); the schedstat run times above are exact, the symbols only show what ran when a timer got through (see bench/profiles.md)\n", p, st, secs, w
	}' "$scratch/ctx"
	say "$1: callers of the top 6 symbols (caller graph, 3% and up)"
	perf report -i "$f" --no-children --sort sym --stdio --percent-limit 3 \
		-g graph,3,callee --max-stack 12 2>/dev/null | grep -v -e '^#' -e '^$' | head -n 120
}

# perftest NAME DEV TOOL ARG...: TOOL's server and client on DEV (this
# host, 127.0.0.1), the window WARMUP s after the client starts; prints
# the client's output. A bw TOOL runs -D RUN_SECS and is waited for. A
# lat TOOL's duration mode (-D) ends early (-D 12 ran about 6 s in this
# guest), so it gets LAT_ITERS iterations, more than the window needs,
# and is stopped after the window: its figures are quick_lat's.
perftest()
{
	local name=$1 dev=$2 tool=$3 gid spid cpid

	shift 3
	case $tool in
	*_lat) set -- "$@" -n "$LAT_ITERS" ;;
	*) set -- "$@" -D "$RUN_SECS" ;;
	esac
	gid=$(need_dev_gid "$dev") || { warn "$name: no GID on $dev"; return 1; }
	PORT=$((PORT + 1))
	timeout -k 5 $((RUN_SECS + 60)) "$tool" -d "$dev" -x "$gid" -p "$PORT" "$@" >"$scratch/server" 2>&1 &
	spid=$!
	wait_for 30 listening "$spid" "$PORT" || warn "$name: the $tool server does not listen"
	timeout -k 5 $((RUN_SECS + 60)) "$tool" -d "$dev" -x "$gid" -p "$PORT" "$@" 127.0.0.1 >"$scratch/client" 2>&1 &
	cpid=$!
	sleep "$WARMUP"
	window "$name" "$cpid"
	case $tool in
	*_lat)
		kill "$cpid" "$spid" 2>/dev/null
		wait "$cpid" "$spid"
		say "$name: $tool -d $dev -x $gid $* (stopped after the window)"
		;;
	*)
		wait "$cpid" || warn "$name: client exit status $?"
		wait "$spid" || warn "$name: server exit status $?"
		say "$name: $tool -d $dev -x $gid $* (client's output)"
		grep -v -e '^ *-\{10,\}' "$scratch/client" | tail -n 8
		;;
	esac
	report "$name"
}

# perftest_ns NAME NS_S DEV_S GID_S IP_S NS_C DEV_C GID_C TOOL ARG...: a bw
# TOOL's server on DEV_S in netns NS_S and its client on DEV_C in NS_C,
# connecting to IP_S, for RUN_SECS; the window WARMUP s after the client
# starts. Prints the client's output.
perftest_ns()
{
	local name=$1 ns_s=$2 dev_s=$3 gid_s=$4 ip_s=$5 ns_c=$6 dev_c=$7 gid_c=$8 tool=$9 spid cpid

	shift 9
	PORT=$((PORT + 1))
	timeout -k 5 $((RUN_SECS + 60)) ip netns exec "$ns_s" "$tool" -d "$dev_s" -x "$gid_s" -p "$PORT" "$@" \
		-D "$RUN_SECS" >"$scratch/server" 2>&1 &
	spid=$!
	wait_for 30 tcp_listening_ns "$ns_s" "$PORT" || warn "$name: the $tool server does not listen"
	timeout -k 5 $((RUN_SECS + 60)) ip netns exec "$ns_c" "$tool" -d "$dev_c" -x "$gid_c" -p "$PORT" "$@" \
		-D "$RUN_SECS" "$ip_s" >"$scratch/client" 2>&1 &
	cpid=$!
	sleep "$WARMUP"
	window "$name" "$cpid"
	wait "$cpid" || warn "$name: client exit status $?"
	wait "$spid" || warn "$name: server exit status $?"
	say "$name: $tool -d $dev_c -x $gid_c $* -D $RUN_SECS $ip_s (client's output; server on $dev_s in $ns_s)"
	grep -v -e '^ *-\{10,\}' "$scratch/client" | tail -n 8
	report "$name"
}

# quick_lat DEV: ib_write_lat -s 2 -n 10000 unprofiled (make bench's tail
# cell), for the figure the window's workload is to be read against.
quick_lat()
{
	local gid spid

	gid=$(need_dev_gid "$1") || return 1
	PORT=$((PORT + 1))
	timeout -k 5 120 ib_write_lat -d "$1" -x "$gid" -p "$PORT" -s 2 -F -n 10000 >/dev/null 2>&1 &
	spid=$!
	wait_for 30 listening "$spid" "$PORT"
	say "$1: ib_write_lat -s 2 -F -n 10000, no perf (t_typical is the 5th figure, then 99%, 99.9%)"
	timeout -k 5 120 ib_write_lat -d "$1" -x "$gid" -p "$PORT" -s 2 -F -n 10000 127.0.0.1 2>&1 | grep -E '^ *(#bytes|2 )'
	wait "$spid"
}

# rxe_self NAME COMMAND...: run COMMAND with rxe0 on eth0 (make bench's
# column (a)) in scire0's place: scire0 is deleted first and added again
# after. NAME is the workload, for the notes.
rxe_self()
{
	local name=$1 out

	shift
	if ! out=$({ timeout 60 rdma link delete scire0 && modprobe rdma_rxe &&
		timeout 60 rdma link add rxe0 type rxe netdev eth0; } 2>&1); then
		warn "$name: rxe0 on eth0: $out"
	else
		wait_for 10 port_active rxe0
		"$@"
	fi
	rdma_has rxe0 && timeout 60 rdma link delete rxe0
	[ ! -d /sys/module/rdma_rxe ] || wait_for 10 timeout 10 rmmod rdma_rxe || warn "rmmod rdma_rxe failed"
	rdma_has scire0 || timeout 60 rdma link add scire0 type scire netdev eth0 || warn "cannot add scire0 again"
}

wl_wire_lat()
{
	local fp

	[ -w "$FAST_PATH" ] || { warn "wire-lat: no writable $FAST_PATH"; return 1; }
	fp=$(cat "$FAST_PATH")
	echo 0 >"$FAST_PATH"
	say "wire-lat: fast_path=$(cat "$FAST_PATH") (b')"
	quick_lat scire0
	perftest wire-lat-scire scire0 ib_write_lat -s 2 -F
	echo "$fp" >"$FAST_PATH"
	[ "${PROFILE_RXE:-1}" = 1 ] || return 0
	rxe_self wire-lat wire_lat_rxe
}

wire_lat_rxe()
{
	quick_lat rxe0
	perftest wire-lat-rxe rxe0 ib_write_lat -s 2 -F
}

# nvmeof NAME RW BS DEPTH: fio over NVMe-oF on scire0 (bench/ulp.sh's
# ulp_nvme set-up), the window WARMUP s into it.
nvmeof()
{
	local name=$1 rw=$2 bs=$3 depth=$4 ctrl ns fpid tx0 addr=$ULP_ADDR

	if ! nvme_target_up "$addr" >"$scratch/nvme.err" 2>&1; then
		warn "$name: nvmet-rdma target: $(tr '\n' ' ' <"$scratch/nvme.err" | cut -c1-300)"
		nvme_target_down
		return 1
	fi
	if ! ctrl=$(nvme_host_connect "$addr" 2>"$scratch/nvme.err") || ! ns=$(nvme_ns_dev "$ctrl" 1); then
		warn "$name: nvme connect: $(tail -n 5 "$scratch/nvme.err" | tr '\n' ' ' | cut -c1-300)"
	else
		tx0=$(rdma_counter scire0 tx_packets)
		timeout -k 5 $((RUN_SECS + 60)) fio --name="$name" --filename="$ns" --direct=1 \
			--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$depth" --size="$ULP_SPAN" \
			--time_based --runtime=$RUN_SECS --output-format=json \
			>"$scratch/fio.json" 2>"$scratch/fio.err" &
		fpid=$!
		sleep "$WARMUP"
		window "$name" "$fpid"
		# fio ends a run early on SIGINT, with its figures (sent to
		# fio itself, the child of timeout).
		pkill -INT -P "$fpid" 2>/dev/null
		wait "$fpid" || warn "$name: fio exit status $?"
		say "$name: fio --filename=$ns --direct=1 --ioengine=libaio --rw=$rw --bs=$bs --iodepth=$depth --runtime=$RUN_SECS (stopped after the window)"
		echo "fio: $(fio_value "$rw" "$scratch/fio.json" "$bs") $([ "$bs" = 4096 ] && echo kIOPS || echo MiB/s) (from its start to the window's end)"
		echo "scire0 tx_packets during fio: $(($(rdma_counter scire0 tx_packets) - tx0)) (0: the same-host fast path)"
		timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1 || warn "$name: nvme disconnect failed"
		report "$name"
	fi
	nvme_target_down
	modprobe -r nvme-rdma 2>/dev/null
}

# fast-lat: (b), ib_write_lat -s 2 on scire0 with the fast path on.
wl_fast_lat()
{
	if [ ! -r "$FAST_PATH" ] || [ "$(cat "$FAST_PATH")" != Y ]; then
		warn "fast-lat: fast_path is not Y"
		return 1
	fi
	say "fast-lat: fast_path=Y (b)"
	quick_lat scire0
	perftest fast-lat-scire scire0 ib_write_lat -s 2 -F
}

# scif_loop NAME PORT EARLY_ROW WHAT ARG...: profile "scif_bench loop -p
# PORT ARG..." (SCIF node 0 talking to itself over scire0) as workload
# NAME, stopping it after the window; a NOTE if it printed EARLY_ROW (the
# part meant to be profiled ended) before the window did. WHAT says
# which part that is.
scif_loop()
{
	local name=$1 port=$2 early=$3 what=$4 prog=$SCIRE_BUILD/bench/scif_bench pid main

	shift 4
	[ -c /dev/scif ] || { warn "$name: no /dev/scif (scire_scif not loaded)"; return 1; }
	timeout -k 5 $((2 * RUN_SECS + 60)) stdbuf -oL "$prog" loop -p "$port" "$@" >"$scratch/scif" 2>&1 &
	pid=$!
	sleep "$WARMUP"
	window "$name" "$pid"
	! grep -q "^$early" "$scratch/scif" || warn "$name: $what ended inside the window"
	# Stop the rest: both of loop's processes (it forks the server).
	main=$(pgrep -P "$pid")
	kill $(pgrep -P "$main") "$main" 2>/dev/null
	wait "$pid"
	say "$name: scif_bench loop -p $port $* (stopped after the window, inside its $what)"
	cat "$scratch/scif"
	report "$name"
}

# scif-send: scif_bench's scif_send_lat part (8-byte scif_send() echoed
# by the peer).
wl_scif_send() { scif_loop scif-send 2398 scif_send_lat "latency part" -t 1 -n 1000000 -s 4096 -r 0; }

# scif-rma: scif_writeto at SCIF_RMA_SIZE (default 64K) for RUN_SECS; its
# readfrom half comes after the window and is not profiled.
wl_scif_rma()
{
	scif_loop scif-rma 2399 scif_writeto_bw "writeto part" -t "$RUN_SECS" -n 10 \
		-s "${SCIF_RMA_SIZE:-64K}" -r 0
}

# veth-bw: column (c), ib_write_bw -s 65536 between two scire devices in
# two namespaces over a veth pair, then column (a) on rxe0. The topology
# is built in a subshell, as bench/run-guest.sh builds it: lib.sh's topo_*
# helpers exit on error, and the trap tears down what was set up.
wl_veth_bw()
{
	(
		trap 'topo_teardown >/dev/null 2>&1' EXIT
		topo_scire_pair 9000 >"$scratch/topo" 2>&1 ||
			{ warn "veth-bw: no veth pair: $(tr '\n' ' ' <"$scratch/topo" | cut -c1-300)"; exit 1; }
		say "veth-bw: $TOPO_DEV_A ($TOPO_NS_A, $TOPO_IP_A, server) <- $TOPO_DEV_B ($TOPO_NS_B, client), active MTU $(dev_active_mtu "$TOPO_DEV_A")"
		perftest_ns veth-bw-scire "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID_A" "$TOPO_IP_A" \
			"$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID_B" ib_write_bw -s 65536 -F
		say "veth-bw: veth packets sent over the run: $(in_ns "$TOPO_NS_A" cat "/sys/class/net/$TOPO_IF_A/statistics/tx_packets") by $TOPO_IF_A, $(in_ns "$TOPO_NS_B" cat "/sys/class/net/$TOPO_IF_B/statistics/tx_packets") by $TOPO_IF_B; drops: $(in_ns "$TOPO_NS_A" cat "/sys/class/net/$TOPO_IF_A/statistics/tx_dropped") and $(in_ns "$TOPO_NS_B" cat "/sys/class/net/$TOPO_IF_B/statistics/tx_dropped")"
		exit $bad
	) || bad=1
	[ "${PROFILE_RXE:-1}" = 1 ] || return 0
	rxe_self veth-bw perftest veth-bw-rxe rxe0 ib_write_bw -s 65536 -F
}

wl_qp64()
{
	say "qp64: fast_path=$(cat "$FAST_PATH" 2>/dev/null)"
	perftest qp64 scire0 ib_write_bw -s 65536 -q 64 -F
	perftest qp1 scire0 ib_write_bw -s 65536 -q 1 -F
}

# pair-bw: host a serves, host b is the client; both profile the same
# seconds (host b says in the shared directory when its client started).
wl_pair_bw()
{
	local gid pid go=$SCIRE_SHARED/profile-pair-bw.go i dev=${PROFILE_PAIR_DEV:-scire0}

	if [ -z "${SCIRE_HOST:-}" ] || [ -z "${SCIRE_SHARED:-}" ]; then
		warn "pair-bw runs on the VM pair (scripts/vm --pair)"
		return 1
	fi
	gid=$(need_dev_gid "$dev") || { warn "pair-bw: no GID on $dev"; return 1; }
	if [ "$SCIRE_HOST" = a ]; then
		rm -f "$go"
		timeout -k 5 $((RUN_SECS + 120)) ib_write_bw -d "$dev" -x "$gid" -p 18700 -s 65536 -F -D "$RUN_SECS" \
			>"$scratch/server" 2>&1 &
		pid=$!
		for ((i = 0; i < 600; i++)); do
			[ -e "$go" ] && break
			sleep 0.1
		done
		[ -e "$go" ] || warn "pair-bw: host b never started its client"
	else
		for ((i = 0; i < 60; i++)); do
			ping -c 1 -W 1 "$SCIRE_PEER" >/dev/null 2>&1 && break
		done
		sleep 3
		for ((i = 0; i < 30; i++)); do
			timeout -k 5 $((RUN_SECS + 60)) ib_write_bw -d "$dev" -x "$gid" -p 18700 -s 65536 -F -D "$RUN_SECS" \
				"$SCIRE_PEER" >"$scratch/client" 2>&1 &
			pid=$!
			sleep 2
			# A client that found no server has exited by now.
			kill -0 "$pid" 2>/dev/null && break
			wait "$pid"
			sleep 1
		done
		touch "$go"
	fi
	sleep "$WARMUP"
	window "pair-bw-$SCIRE_HOST" "$pid"
	wait "$pid" || warn "pair-bw: ib_write_bw exit status $?"
	say "pair-bw host $SCIRE_HOST: ib_write_bw -d $dev -s 65536 -F -D $RUN_SECS ($([ "$SCIRE_HOST" = a ] && echo server || echo "client of $SCIRE_PEER"))"
	grep -v -e '^ *-\{10,\}' "$scratch/$([ "$SCIRE_HOST" = a ] && echo server || echo client)" | tail -n 6
	report "pair-bw-$SCIRE_HOST"
}

# pair-nvmeof NAME RW BS DEPTH: NVMe-oF across the VM pair as bench/ulp.sh's
# ulp_pair sets it up (the nvmet-rdma target on host a, nvme-rdma and fio
# on host b, on PROFILE_PAIR_DEV); both hosts take the same window
# WARMUP s into fio's run. Host b also prints fio's completion latency.
wl_pair_nvmeof()
{
	local name=$1 rw=$2 bs=$3 depth=${PROFILE_NVME_DEPTH:-$4} dev=${PROFILE_PAIR_DEV:-scire0}
	local ctrl ns fpid ok=1

	if [ -z "${SCIRE_HOST:-}" ] || [ -z "${SCIRE_SHARED:-}" ]; then
		warn "$name runs on the VM pair (scripts/vm --pair)"
		return 1
	fi
	if [ "$SCIRE_HOST" = a ]; then
		nvme_target_up "$SCIRE_ADDR" >"$scratch/nvme.err" 2>&1 ||
			{ warn "$name: the target would not come up: $(tr '\n' ' ' <"$scratch/nvme.err" | cut -c1-300)"; ok=0; }
		pair_sync "$name.target" 600 || warn "$name: host b never connected"
		[ "$ok" = 1 ] && pair_sync "$name.fio" 600 && sleep "$WARMUP" &&
			window "$name-a" "$$" && say "$name host a: the nvmet-rdma target on $dev" && report "$name-a"
		pair_sync "$name.done" 900 || warn "$name: host b never finished"
		nvme_target_down
		return 0
	fi
	pair_sync "$name.target" 600 || { warn "$name: host a never set up its target"; return 1; }
	if ! ctrl=$(nvme_host_connect "$SCIRE_PEER" 2>"$scratch/nvme.err") || ! ns=$(nvme_ns_dev "$ctrl" 1); then
		warn "$name: nvme connect to $SCIRE_PEER: $(tail -n 5 "$scratch/nvme.err" | tr '\n' ' ' | cut -c1-300)"
		pair_sync "$name.fio" 5
	else
		timeout -k 5 $((RUN_SECS + 60)) fio --name="$name" --filename="$ns" --direct=1 \
			--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$depth" --size="$ULP_SPAN" \
			--time_based --runtime=$RUN_SECS --output-format=json \
			>"$scratch/fio.json" 2>"$scratch/fio.err" &
		fpid=$!
		pair_sync "$name.fio" 60
		sleep "$WARMUP"
		window "$name-b" "$fpid"
		pkill -INT -P "$fpid" 2>/dev/null
		wait "$fpid"
		say "$name host b: fio --filename=$ns (on $dev, target $SCIRE_PEER) --direct=1 --ioengine=libaio --rw=$rw --bs=$bs --iodepth=$depth (stopped after the window)"
		echo "fio: $(fio_value "$rw" "$scratch/fio.json" "$bs") $([ "$bs" = 4096 ] && echo kIOPS || echo MiB/s) (from its start to the window's end)"
		fio_clat "$rw" "$scratch/fio.json"
		timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1 || warn "$name: nvme disconnect failed"
		report "$name-b"
	fi
	modprobe -r nvme-rdma 2>/dev/null
	pair_sync "$name.done" 300
}

# fio_clat RW FILE: the completion latency of fio's JSON output FILE
# (mean, percentiles, max), in microseconds.
fio_clat()
{
	python3 -c '
import json, sys
rw = "write" if sys.argv[1].endswith("write") else "read"
try:
    t = open(sys.argv[2]).read()
    c = json.loads(t[t.index("{"):])["jobs"][0][rw]["clat_ns"]
except Exception as e:
    print("fio clat: no figures (%s)" % e)
    sys.exit(0)
p = c.get("percentile", {})
q = lambda k: "%.0f" % (p[k] / 1000) if k in p else "-"
print("fio clat (us): mean %.0f, p50 %s, p90 %s, p99 %s, p99.9 %s, max %.0f, %d I/Os" % (
    c["mean"] / 1000, q("50.000000"), q("90.000000"), q("99.000000"), q("99.900000"),
    c["max"] / 1000, c.get("N", 0)))
' "$1" "$2"
}

[ $# -gt 0 ] || { sed -n '/^# Run it/,/^# A report/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ "$PERF" != 1 ] || command -v perf >/dev/null || { echo "profile.sh: no perf (Debian package linux-perf)" >&2; exit 1; }
say "kernel $(uname -r), $(nproc) vCPUs, perf $(perf --version 2>/dev/null | awk '{ print $3 }'), scire.ko $(sha256sum "$SCIRE_ROOT/kernel/scire.ko" 2>/dev/null | cut -c1-16)"
for w in "$@"; do
	say "workload $w"
	case $w in
	wire-lat) wl_wire_lat ;;
	fast-lat) wl_fast_lat ;;
	scif-send) wl_scif_send ;;
	nvmeof-randread) nvmeof "$w" randread 4096 32 ;;
	nvmeof-seqwrite) nvmeof "$w" write 1048576 8 ;;
	scif-rma) wl_scif_rma ;;
	qp64) wl_qp64 ;;
	veth-bw) wl_veth_bw ;;
	pair-bw) wl_pair_bw ;;
	pair-nvmeof-randread) wl_pair_nvmeof "$w" randread 4096 32 ;;
	pair-nvmeof-randwrite) wl_pair_nvmeof "$w" randwrite 4096 32 ;;
	*) warn "unknown workload $w (wire-lat fast-lat nvmeof-randread nvmeof-seqwrite scif-send scif-rma qp64 veth-bw pair-bw pair-nvmeof-randread pair-nvmeof-randwrite)" ;;
	esac
done
rm -rf "$scratch"
exit "$bad"
