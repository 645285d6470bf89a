#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The guest half of `make bench`: scripts/bench boots the test VM with
#
#   bench/run-guest.sh [--quick] [--only KEYS] [--siw KO]
#
# and then the VM pair (scripts/vm --pair) twice, once with rxe on both
# hosts and once with scire, running on both hosts at once
#
#   bench/run-guest.sh [--quick] --pair e|f
#
# --only KEYS (a list such as "a b'"): only those configurations (and
# "memcpy" for the ceiling, "nvme" for the NVMe-oF rows); the rest print
# a skip line. --siw KO: the siw.ko to insmod for (h) (scripts/siw-ko).
#
# The one boot measures, in this order (so that rdma_rxe and
# a scire device in init_net never both want UDP port 4791 there):
#
#   memcpy  guest copy bandwidth (build/bench/memcpy_bw), the ceiling:
#           libc's memcpy, and the kernel's ways: "rep movsb", "rep
#           movsq", a movq loop
#   b       scire0 on eth0 talking to itself (as scripts/vm sets it up)
#   b'      the same with /sys/module/scire/parameters/fast_path at 0, if
#           scire has that parameter (not with --quick)
#   c       scireA (netns nsA) <-> scireB (netns nsB) over a veth pair
#   a       rxe0 on eth0 talking to itself (scire0 deleted, rdma_rxe loaded)
#   d       scireB (netns nsB, perftest client) -> rxeA (init_net, server)
#           over a veth pair
#   g       IPoIB: two scire_ib ports over a veth pair (MTU 9000), opensm,
#           ib_ipoib; iperf3 TCP over the veth itself (the ceiling), then
#           over IPoIB in datagram and in connected mode (rows tcp_veth_bw,
#           ipoib_ud_bw, ipoib_cm_bw; size: the interface's MTU), then the
#           same two ports through scire-ibswitch (ipoib_sw_cm_bw,
#           ipoib_sw_ud_bw)
#   nullb, NVMe-oF and h (bench/ulp.sh, issue 18): fio on null_blk (the
#           ceiling), then NVMe-oF (nvmet-rdma and nvme-rdma on one
#           device) over scire0 (column b) and rxe0 (column a), then
#   h       siw0 (Soft-iWARP, siw.ko built by scripts/siw-ko) on eth0
#           talking to itself, perftest with rdma_cm (-R), and NVMe-oF
#           over it; scire0 is added on eth0 again last
#
# and a pair boot (--pair) one of
#
#   e       rxe0 on host a's eth0 <-> rxe0 on host b's eth0 (two kernels,
#           one wire)
#   f       scire0 on host a's eth0 <-> scire0 on host b's eth0
#
# with the perftest server on host a and its client on host b; then (not
# with --quick) a few cells the other way round, server on b (keys e2,
# f2); then NVMe-oF, the target on host a and the host on host b (rows in
# e, f). Each run's server and client meet through files in SCIRE_SHARED;
# the client's host judges the run and prints its line.
#
# the perftest RC tools ib_{write,read,send,atomic}_{bw,lat} at each size
# (atomics: their fixed 8 bytes). In (b) and (c) the SCIF bridge is
# measured too, on the same path after perftest: build/bench/
# scif_bench between two endpoints of node 0 (b, SCIF's loopback over
# scire0) and between node 1 (nsA) and node 2 (nsB) (c), giving the rows
# scif_writeto_bw, scif_readfrom_bw, scif_send_lat and scif_register
# (see bench/scif_bench.c); its runs alternate with those of the
# perftest cells its targets are read against (scif_refs(), which adds
# ib_{write,read}_bw at 16 MiB, SCIF's largest size, in a full run).
# In (a), (b), (b'), (e) and (f) the tail latency follows the matrix:
# ib_write_lat and ib_send_lat at 2 B and 4 KiB with TAIL_ITERS
# iterations, perftest's t_typical (the median), 99% and 99.9%
# percentiles and t_avg (the mean) (quick: one cell in (b) and (f)).
# Issue 18 (bench/scale.sh): every bw run in (a), (b) and (b') samples
# the guest's busy CPU ticks around perftest's timed window (CPU cost);
# after their matrix, (b) on scire0 and (a) on rxe0 run ib_write_bw -q N
# at 64 KiB (N = 1, 4, 16, 64; quick: 1, 4) and build/bench/qp_scale: 4,096
# RC QPs created and connected (quick: 128), a 1 GiB MR registered
# (quick: 64 MiB).
# Every run prints one line on stdout, and
# scripts/bench does the arithmetic (medians, ratios):
#
#   BENCH info NAME TEXT           a fact about the guest or the arguments
#   BENCH config KEY LABEL|TEXT    configuration KEY starts
#   BENCH skip KEY WHY             KEY is not run
#   BENCH setupfail KEY WHY        KEY could not be set up: no runs
#   BENCH run KEY TOOL SIZE VALUE [NOTE]   one good run
#   BENCH fail KEY TOOL SIZE WHY   one failed run; its output follows as
#                                  "BENCH| " lines
#   BENCH tail KEY TOOL SIZE P50 P99 P99.9 AVG   one good tail latency run
#   BENCH tailfail KEY TOOL SIZE WHY         one failed one (as fail)
#   BENCH note KEY TEXT            e.g. packets seen on the wire
#   BENCH cpu KEY TOOL SIZE TICKS HZ SECS ITERS   busy CPU ticks around a
#                                  good bw run's window (bench/scale.sh)
#   BENCH scale KEY ROW N VALUE    a scale figure; BENCH scalefail KEY ROW
#                                  N WHY when it failed (as fail)
#   BENCH done SECONDS             (a pair boot: BENCH pairdone KEY SECONDS)
#
# VALUE: MiB/s (2^20 bytes/s) for *_bw and memcpy, t_typical in usec for
# *_lat, usec per MiB for scif_register. A failed run is retried until
# RUNS runs of the cell succeeded or it had MAX_ATTEMPTS tries; nothing
# is ever made up for one that failed.
# Asserts nothing: exit status 0 unless the script itself cannot run.
# shellcheck disable=SC2317 # functions run through traps
# shellcheck source-path=SCRIPTDIR/..
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SCIRE_ROOT=${SCIRE_ROOT:-$(dirname "$here")}
export SCIRE_BUILD=${SCIRE_BUILD:-$SCIRE_ROOT/build}
# shellcheck source=selftests/lib.sh
. "$SCIRE_ROOT/selftests/lib.sh"
# shellcheck source=bench/scale.sh
. "$here/scale.sh"

quick=0 only="" pair_key=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--only) [ $# -ge 2 ] || set -- --usage; only=$2; shift 2 ;;
	--pair) [ $# -ge 2 ] || set -- --usage; pair_key=$2; shift 2 ;;
	--siw) [ $# -ge 2 ] || set -- --usage; SIW_KO=$2; shift 2 ;;
	*) echo "usage: $0 [--quick] [--only KEYS] [--pair e|f] [--siw KO]" >&2; exit 2 ;;
	esac
done
case $pair_key in "" | e | f) ;; *) echo "$0: --pair takes e or f" >&2; exit 2 ;; esac
# siw (h) and the NVMe-oF rows: ulp_main, ulp_pair.
# shellcheck source=bench/ulp.sh
. "$here/ulp.sh"
# On the VM pair, scripts/vm --pair sets these (see scripts/vm-pair).
SCIRE_HOST=${SCIRE_HOST:-} SCIRE_PEER=${SCIRE_PEER:-} SCIRE_SHARED=${SCIRE_SHARED:-}
if [ -n "$pair_key" ] && { [ -z "$SCIRE_HOST" ] || [ -z "$SCIRE_SHARED" ]; }; then
	echo "$0: --pair runs on a VM pair (scripts/vm --pair)" >&2
	exit 2
fi

# wanted KEY: is configuration KEY to run (--only)?
wanted() { [ -z "$only" ] || case " $only " in *" $1 "*) true ;; *) false ;; esac; }

# Every run costs about 3 s besides its measured part under TCG (process
# start-up, perftest's own sleep(1) after connecting, teardown): with 26
# cells, 3 runs each and 4 or 5 configurations, a 1 s window is what
# keeps a full run near 25 minutes.
# The quick run (make check's) only shows the harness still works: one size.
if [ "$quick" = 1 ]; then
	RUNS=1 MAX_ATTEMPTS=2 SIZES=65536
	SCIF_SIZES=65536 SCIF_LAT_ITERS=100 SCIF_REG_MIB=16
else
	RUNS=3 MAX_ATTEMPTS=5 SIZES="2 4096 65536 1048576"
	SCIF_SIZES="4096 65536 1048576 16777216" SCIF_LAT_ITERS=1000 SCIF_REG_MIB="1 16 64"
fi
PAIR_RUNS=1 PAIR_MAX_ATTEMPTS=3
BW_SECS=1
BW_TOOLS="ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw"
LAT_TOOLS="ib_write_lat ib_read_lat ib_send_lat ib_atomic_lat"
# The quick run: one tool of each kind the data path has (WRITE, READ,
# a SEND round trip) is enough to show the harness works.
if [ "$quick" = 1 ]; then
	BW_TOOLS="ib_write_bw ib_read_bw" LAT_TOOLS="ib_send_lat"
fi
# Tail latency: enough iterations that the 99.9% percentile is the 10th
# worst, not the worst; a quick run keeps one cell of it working.
TAIL_ITERS=10000 TAIL_TOOLS="ib_write_lat ib_send_lat" TAIL_SIZES="2 4096"
if [ "$quick" = 1 ]; then
	TAIL_TOOLS=ib_write_lat TAIL_SIZES=2
fi
# Per run, server and client; a hung run costs this much, then the next.
# A tail run has 100 times the iterations of a matrix one.
RUN_TIMEOUT=60 TAIL_TIMEOUT=120
# After this many timed-out runs in a row a configuration is given up: a
# device that hangs every run would otherwise cost hours.
MAX_TIMEOUTS=4
TIMEOUTS=0
PORT=18000
FAST_PATH=/sys/module/scire/parameters/fast_path

# Latency iterations: enough samples for a stable t_typical (the median),
# few enough that a slow device (milliseconds per iteration under TCG) at
# 1 MiB takes a second, not minutes.
lat_iters()
{
	if [ "$1" -ge 1048576 ]; then
		echo 30
	else
		echo 100
	fi
}

# perftest's duration mode (-D S) times a window of S seconds with alarm()
# and counts the operations completed in it; -f 0: no margins, the window
# is the whole run (a second of warm-up would double a run's length).
bw_args() { echo "-F -D $BW_SECS -f 0"; }
lat_args() { echo "-F -n $(lat_iters "$1")"; }

say() { printf 'BENCH %s\n' "$*"; }
# On the VM pair, what is said once is said by host a.
say_a() { [ -z "$PAIR_DIR" ] || [ "$SCIRE_HOST" = a ] && say "$@"; }

# The server's and client's sides of the current configuration.
S_NS="" S_DEV="" S_GID="" S_IP="" C_NS="" C_DEV="" C_GID=""

# sides SERVER_NS SERVER_DEV SERVER_GID SERVER_IP CLIENT_NS CLIENT_DEV CLIENT_GID
sides()
{
	S_NS=$1 S_DEV=$2 S_GID=$3 S_IP=$4 C_NS=$5 C_DEV=$6 C_GID=$7
}

# A fifo no one writes to: "read -t" on it is a sleep that forks nothing
# (under TCG every new process, sleep or ss, costs a tenth of a second,
# and a run polls for its server's socket many times).
scratch=$(mktemp -d)
mkfifo "$scratch/nap"
exec {nap_fd}<>"$scratch/nap"
nap() { read -r -t "$1" -u "$nap_fd" _; }

# server_listens PID: wait (30 s at most) until the perftest server PID
# listens on TCP port $PORT; false if it exits first or never does.
server_listens()
{
	local i

	for ((i = 0; i < 600; i++)); do
		listening "$1" "$PORT" && return 0
		kill -0 "$1" 2>/dev/null || break
		nap 0.05
	done
	listening "$1" "$PORT"
}

# server_reap PID CLIENT_STATUS: wait for the server PID; its exit status.
# A server whose client failed (CLIENT_STATUS not 0, or a word) may wait
# for that client for good: it gets 5 s to exit, then it is killed.
server_reap()
{
	local i

	if [ "$2" != 0 ]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$1" 2>/dev/null || break
			nap 0.05
		done
		kill "$1" 2>/dev/null
	fi
	wait "$1"
}

# pair TOOL ARG...: TOOL ARG... as the server (S_NS, S_DEV, S_GID) and, once
# it listens on TCP port $PORT, as its client (C_NS, C_DEV, C_GID) towards
# S_IP; each side under timeout RUN_TIMEOUT. The client's output (stdout
# and stderr) is in $scratch/client, the server's in $scratch/server.
# Exit status 0 if both sides exited 0; else prints what went wrong and
# exits 2 if a side timed out, 1 otherwise.
pair()
{
	local tool=$1 tmo=$TMO spid src crc
	local -a srv cli

	shift
	srv=(timeout -k 5 "$tmo" "$tool" -d "$S_DEV" -x "$S_GID" -p "$PORT" "$@")
	cli=("${CPU_PRE[@]}" timeout -k 5 "$tmo" "$tool" -d "$C_DEV" -x "$C_GID" -p "$PORT" "$@" "$S_IP")
	# Not through in_ns: $! must be timeout itself (ip netns exec
	# execs it) so that /proc/$!/net is the server's namespace.
	if [ -n "$S_NS" ]; then
		ip netns exec "$S_NS" "${srv[@]}" >"$scratch/server" 2>&1 &
	else
		"${srv[@]}" >"$scratch/server" 2>&1 &
	fi
	spid=$!
	if ! server_listens "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "the server did not listen on TCP port $PORT (status $?)"
		return 1
	fi
	in_ns "$C_NS" "${cli[@]}" >"$scratch/client" 2>&1
	crc=$?
	server_reap "$spid" "$crc"
	src=$?
	[ "$src" = 0 ] && [ "$crc" = 0 ] && return 0
	echo "server exit status $src, client exit status $crc (124, 137: timed out after ${tmo}s)"
	case " $src $crc " in
	*" 124 "* | *" 137 "*) return 2 ;;
	esac
	return 1
}

# --- the VM pair: a run's two sides on two hosts ----------------------
#
# Both hosts run the same sequence of runs; run N's files in $PAIR_DIR
# (on SCIRE_SHARED) carry what one side must know of the other:
#
#   N.ready    server host: "ok" once its server listens, else why not
#   N.cstat    client host: the client's exit status ("-": not run)
#   N.server   server host: the server's output, then
#   N.sstat    its exit status
#   N.verdict  client host: one_run's status (0 good, 1 failed, 2 timed
#              out), so that both hosts retry and give up alike
#
# A file is written under another name and renamed, so that it is never
# seen half written.

PAIR_DIR="" PAIR_SRV=a RUN_N=0

# put NAME TEXT: publish file NAME of the current run.
put()
{
	printf '%s\n' "$2" >"$PAIR_DIR/$RUN_N.$1.tmp" && mv "$PAIR_DIR/$RUN_N.$1.tmp" "$PAIR_DIR/$RUN_N.$1"
}

# await NAME SECS: wait for file NAME of the current run; print its text.
await()
{
	local f=$PAIR_DIR/$RUN_N.$1 i

	for ((i = 0; i < $2 * 20; i++)); do
		if [ -e "$f" ]; then
			cat "$f"
			return 0
		fi
		nap 0.05
	done
	return 1
}

# psync NAME: return once the other host reached psync NAME too (10 min
# at most: a pair boot's setup steps can be slow on a busy machine).
psync()
{
	local other i

	other=$([ "$SCIRE_HOST" = a ] && echo b || echo a)
	touch "$PAIR_DIR/sync.$1.$SCIRE_HOST" || return 1
	for ((i = 0; i < 6000; i++)); do
		[ -e "$PAIR_DIR/sync.$1.$other" ] && return 0
		nap 0.1
	done
	return 1
}

# is_client: does this host run the client of the current run (and so
# judge it and print its line)? Always, on one host.
is_client() { [ -z "$PAIR_DIR" ] || [ "$SCIRE_HOST" != "$PAIR_SRV" ]; }

# duo TOOL ARG...: pair's counterpart on the VM pair, run on both hosts:
# the server on host PAIR_SRV (this host's device, GID and port $PORT),
# the client on the other towards SCIRE_PEER. On the client's host: the
# outputs in $scratch/{client,server} and pair's exit status and words.
# On the server's host: nothing to say, status 0.
duo()
{
	local tool=$1 tmo=$TMO spid src crc r

	shift
	if ! is_client; then
		timeout -k 5 "$tmo" "$tool" -d "$DEV" -x "$GID" -p "$PORT" "$@" >"$scratch/server" 2>&1 &
		spid=$!
		if server_listens "$spid"; then
			put ready ok
			crc=$(await cstat $((tmo + 60))) || crc=none
		else
			put ready "the server did not listen on TCP port $PORT"
			crc=-
		fi
		server_reap "$spid" "$crc"
		src=$?
		cp "$scratch/server" "$PAIR_DIR/$RUN_N.server.tmp" && mv "$PAIR_DIR/$RUN_N.server.tmp" "$PAIR_DIR/$RUN_N.server"
		put sstat "$src"
		return 0
	fi
	if ! r=$(await ready $((tmo + 60))); then
		r="host $PAIR_SRV never said whether its server listens"
	fi
	if [ "$r" = ok ]; then
		timeout -k 5 "$tmo" "$tool" -d "$DEV" -x "$GID" -p "$PORT" "$@" "$SCIRE_PEER" >"$scratch/client" 2>&1
		crc=$?
	else
		: >"$scratch/client"
		crc=-
	fi
	put cstat "$crc"
	src=$(await sstat $((tmo + 60))) || src="none (host $PAIR_SRV never reported it)"
	cp "$PAIR_DIR/$RUN_N.server" "$scratch/server" 2>/dev/null || : >"$scratch/server"
	[ "$src" = 0 ] && [ "$crc" = 0 ] && return 0
	[ "$r" = ok ] || echo "$r; "
	# Is the wire still there? (A run that wedged a device may have
	# stopped a host's network too.)
	ping -c 1 -W 2 "$SCIRE_PEER" >/dev/null 2>&1 || echo "host $PAIR_SRV does not answer ping now; "
	echo "server exit status $src, client exit status $crc (124, 137: timed out after ${tmo}s)"
	case " $src $crc " in
	*" 124 "* | *" 137 "*) return 2 ;;
	esac
	return 1
}

# tail_value TOOL SIZE OUTPUT: "P50 P99 P99.9 AVG" from a lat client's
# OUTPUT ("#bytes #iterations t_min t_max t_typical t_avg t_stdev
# 99% 99.9%"), or why not (exit status 1).
tail_value()
{
	perftest_value "$1" "$2" 0 "$3" >/dev/null || { perftest_value "$1" "$2" 0 "$3"; return 1; }
	awk -v size="$2" '
	$1 == size && $2 ~ /^[0-9]+$/ && NF >= 9 { v = $5 " " $8 " " $9 " " $6 }
	END {
		if (v == "") {
			print "no percentile columns in the result line"
			exit 1
		}
		print v
	}' <<<"$3"
}

# one_run KEY TOOL SIZE [tail]: one server/client run between the current
# sides (on the VM pair: between the hosts, server on PAIR_SRV); "tail": a
# lat tool with TAIL_ITERS iterations, for its percentiles. Prints a BENCH
# run or fail line (tail or tailfail); exit status 0 if it was good, 2 if
# it timed out, 1 otherwise.
one_run()
{
	local key=$1 tool=$2 size=$3 mode=${4:-} why val rc run=run fail=fail
	local -a args

	PORT=$((PORT + 1)) RUN_N=$((RUN_N + 1))
	case $tool in
	*_bw) read -ra args <<<"$(bw_args)" ;;
	*) read -ra args <<<"$(lat_args "$size")" ;;
	esac
	TMO=$RUN_TIMEOUT
	if [ "$mode" = tail ]; then
		args=(-F -n "$TAIL_ITERS") run=tail fail=tailfail TMO=$TAIL_TIMEOUT
	fi
	case $tool in
	ib_atomic_*) ;;
	*) args+=(-s "$size") ;;
	esac
	cpu_arm "$key" "$tool" "$mode"
	if [ -n "$PAIR_DIR" ]; then
		why=$(duo "$tool" "${args[@]}")
	else
		why=$(pair "$tool" "${args[@]}")
	fi
	rc=$?
	why=${why//$'\n'/}
	if ! is_client; then
		rc=$(await verdict $((TMO + 120))) || rc=1
	elif [ "$rc" = 0 ]; then
		if [ "$mode" = tail ]; then
			val=$(tail_value "$tool" "$size" "$(cat "$scratch/client")")
		else
			val=$(perftest_value "$tool" "$size" "$BW_SECS" "$(cat "$scratch/client")")
		fi
		rc=$?
	fi
	if [ "$rc" = 2 ]; then
		TIMEOUTS=$((TIMEOUTS + 1))
	else
		TIMEOUTS=0
	fi
	is_client || return "$rc"
	[ -z "$PAIR_DIR" ] || put verdict "$rc"
	if [ "$rc" = 0 ]; then
		say "$run $key $tool $size $val"
		cpu_say "$key" "$tool" "$size" "$val"
		return 0
	fi
	say "$fail $key $tool $size ${why:-$val}"
	{
		if [ -n "$PAIR_DIR" ]; then
			echo "server: $tool -d DEV -x GID -p $PORT ${args[*]} (on host $PAIR_SRV)"
			cat "$scratch/server"
			echo "client: $tool -d $DEV -x $GID -p $PORT ${args[*]} $SCIRE_PEER (on host $SCIRE_HOST)"
		else
			echo "server: $tool -d $S_DEV -x $S_GID -p $PORT ${args[*]} (netns ${S_NS:-init_net})"
			cat "$scratch/server"
			echo "client: $tool -d $C_DEV -x $C_GID -p $PORT ${args[*]} $S_IP (netns ${C_NS:-init_net})"
		fi
		cat "$scratch/client"
	} | sed 's/^/BENCH| /'
	return "$rc"
}

# cell KEY TOOL SIZE [tail]: RUNS good runs, MAX_ATTEMPTS tries at most.
cell()
{
	local good=0 try

	for ((try = 1; try <= MAX_ATTEMPTS && good < RUNS; try++)); do
		if [ "$TIMEOUTS" -ge "$MAX_TIMEOUTS" ]; then
			is_client && say "$([ "${4:-}" = tail ] && echo tailfail || echo fail) $1 $2 $3 not run: the last $TIMEOUTS runs of ($1) timed out"
			return
		fi
		one_run "$@" && good=$((good + 1))
	done
}

# matrix KEY [scif]: every tool and size between the current sides;
# with "scif", not the cells scif() runs between its own runs (scif_refs).
matrix()
{
	local key=$1 tool size start=$SECONDS refs=""

	[ "${2:-}" != scif ] || refs=$(scif_refs)
	TIMEOUTS=0
	for tool in $BW_TOOLS $LAT_TOOLS; do
		case $tool in
		ib_atomic_*) cell "$key" "$tool" 8 ;;
		*)
			for size in $SIZES; do
				grep -qx "$tool $size" <<<"$refs" || cell "$key" "$tool" "$size"
			done
			;;
		esac
	done
	say_a "note $key matrix took $((SECONDS - start)) s"
}

# tails KEY: the tail latency cells between the current sides, RUNS good
# runs each on one host; on the VM pair, where a run of TAIL_ITERS round
# trips lasts tens of seconds, one (its 10,000 samples are the point).
tails()
{
	local key=$1 tool size start=$SECONDS RUNS=$RUNS

	# A quick run keeps the code working in one column a boot.
	[ "$quick" = 0 ] || [ "$key" = b ] || [ "$key" = f ] || return 0
	[ -z "$PAIR_DIR" ] || RUNS=1
	say_a "info tail_runs_$key $RUNS"
	TIMEOUTS=0
	for tool in $TAIL_TOOLS; do
		for size in $TAIL_SIZES; do
			cell "$key" "$tool" "$size" tail
		done
	done
	say_a "note $key tail latency (-n $TAIL_ITERS) took $((SECONDS - start)) s"
}

# --- SCIF ------------------------------------------------------------

SCIF_PORT=2300
SCIF_NODES=/sys/kernel/config/scif/nodes

scif_args()
{
	echo "-t $BW_SECS -n $SCIF_LAT_ITERS -s $(tr ' ' , <<<"$SCIF_SIZES") -r $(tr ' ' , <<<"$SCIF_REG_MIB")"
}

# The rows one scif_bench run gives: "TOOL SIZE" lines.
scif_rows()
{
	local s

	echo "scif_send_lat 8"
	for s in $SCIF_SIZES; do
		echo "scif_writeto_bw $s"
		echo "scif_readfrom_bw $s"
	done
	for s in $SCIF_REG_MIB; do
		echo "scif_register $((s << 20))"
	done
}

# scif_one KEY SERVER_NS CLIENT_NS NODE: one scif_bench run; with
# SERVER_NS empty, "scif_bench loop" (both endpoints on this node), else
# its server in SERVER_NS and its client in CLIENT_NS towards node NODE.
# Prints BENCH run lines, or BENCH fail lines for every row and the
# output; exit status 0 if it was good.
scif_one()
{
	local key=$1 sns=$2 cns=$3 node=$4 prog=$SCIRE_BUILD/bench/scif_bench
	local why="" spid src=0 crc tool size val
	local -a args

	SCIF_PORT=$((SCIF_PORT + 1))
	read -ra args <<<"$(scif_args)"
	: >"$scratch/server"
	if [ -z "$sns" ]; then
		timeout -k 5 "$RUN_TIMEOUT" "$prog" loop -p "$SCIF_PORT" "${args[@]}" >"$scratch/client" 2>&1
		crc=$?
	else
		ip netns exec "$sns" timeout -k 5 "$RUN_TIMEOUT" "$prog" server "$SCIF_PORT" \
			>"$scratch/server" 2>&1 &
		spid=$!
		ip netns exec "$cns" timeout -k 5 "$RUN_TIMEOUT" "$prog" client "$node" "$SCIF_PORT" \
			"${args[@]}" >"$scratch/client" 2>&1
		crc=$?
		[ "$crc" = 0 ] || kill "$spid" 2>/dev/null
		wait "$spid"
		src=$?
	fi
	if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
		why="server exit status $src, client exit status $crc (124, 137: timed out after ${RUN_TIMEOUT}s)"
		case $crc in 124 | 137) TIMEOUTS=$((TIMEOUTS + 1)) ;; esac
	else
		TIMEOUTS=0
		while read -r tool size; do
			val=$(awk -v t="$tool" -v s="$size" '$1 == t && $2 == s && $3 ~ /^[0-9]+(\.[0-9]+)?$/ { print $3 }' \
				"$scratch/client")
			[ -n "$val" ] || { why="no figure for $tool $size"; break; }
		done < <(scif_rows)
	fi
	if [ -z "$why" ]; then
		while read -r tool size; do
			say "run $key $tool $size $(awk -v t="$tool" -v s="$size" '$1 == t && $2 == s { print $3 }' "$scratch/client")"
		done < <(scif_rows)
		say "note $key scif_bench outside the figures: $(awk '$1 ~ /^scif_bench_/ { $2 = ""; printf "%s; ", $0 }' \
			"$scratch/client" "$scratch/server")"
		return 0
	fi
	while read -r tool size; do
		say "fail $key $tool $size $why"
	done < <(scif_rows)
	{
		if [ -z "$sns" ]; then
			echo "scif_bench loop -p $SCIF_PORT ${args[*]}"
		else
			echo "server: scif_bench server $SCIF_PORT (netns $sns)"
			cat "$scratch/server"
			echo "client: scif_bench client $node $SCIF_PORT ${args[*]} (netns $cns)"
		fi
		cat "$scratch/client"
	} | sed 's/^/BENCH| /'
	return 1
}

# rounds TRY ITEM...: RUNS good runs of each ITEM, tried in turn rather
# than one ITEM after the other, so the figures compared with each other
# are taken at the same times: each round gives every ITEM still short
# of RUNS good runs, and with fewer than MAX_ATTEMPTS tries, one call
# "TRY ITEM TRIES" (TRIES counts this one). TRY's status: 0 a good run,
# 1 a failed one, 2 a failed one that further tries would only repeat
# (ITEM is given up). Stops early, before a try, once TIMEOUTS has
# reached MAX_TIMEOUTS. ROUNDS_GOOD[ITEM] holds the good runs after.
declare -A ROUNDS_GOOD=()
rounds()
{
	local try=$1 round more item
	local -A tries=()

	shift
	ROUNDS_GOOD=()
	for ((round = 1; round <= MAX_ATTEMPTS; round++)); do
		more=0
		for item in "$@"; do
			[ "${ROUNDS_GOOD[$item]:-0}" -lt "$RUNS" ] || continue
			[ "${tries[$item]:-0}" -lt "$MAX_ATTEMPTS" ] || continue
			[ "$TIMEOUTS" -lt "$MAX_TIMEOUTS" ] || return 0
			more=1 tries[$item]=$((${tries[$item]:-0} + 1))
			"$try" "$item" "${tries[$item]}"
			case $? in
			0) ROUNDS_GOOD[$item]=$((${ROUNDS_GOOD[$item]:-0} + 1)) ;;
			2) tries[$item]=$MAX_ATTEMPTS ;;
			esac
		done
		[ "$more" = 1 ] || break
	done
}

# scif_refs: the perftest cells ("TOOL SIZE" lines) a SCIF target is
# read against: ib_send_lat at 2 B (when the matrix has it) for
# scif_send_lat, ib_write_bw and ib_read_bw at each SCIF size.
scif_refs()
{
	local s

	case " $LAT_TOOLS " in
	*" ib_send_lat "*) case " $SIZES " in *" 2 "*) echo "ib_send_lat 2" ;; esac ;;
	esac
	for s in $SCIF_SIZES; do
		echo "ib_write_bw $s"
		echo "ib_read_bw $s"
	done
}

# scif KEY SERVER_NS CLIENT_NS NODE: RUNS good scif_bench runs and RUNS
# good runs of each of its perftest cells (scif_refs), MAX_ATTEMPTS tries
# of each at most, interleaved: each round gives every cell still short
# of RUNS one try, then scif_bench one. A SCIF figure and the perftest
# figure it is read against are then taken within a minute of each
# other, not minutes apart: under TCG the host's load moves a figure by
# 1.5x between such runs (bench/profiles.md, scif-rma). With SERVER_NS
# "-", SCIF is not measured and only the perftest cells run.
scif()
{
	local key=$1 start=$SECONDS ref measure=0
	local -a refs items scif_argv=("$@")

	mapfile -t refs < <(scif_refs)
	items=("${refs[@]}")
	if [ "$2" = - ]; then
		:
	elif [ ! -c /dev/scif ]; then
		say "note $key SCIF not measured: no /dev/scif (scire_scif not loaded)"
	else
		items+=(scif_bench) measure=1
	fi
	TIMEOUTS=0
	rounds scif_try "${items[@]}"
	if [ "$TIMEOUTS" -ge "$MAX_TIMEOUTS" ]; then
		for ref in "${refs[@]}"; do
			[ "${ROUNDS_GOOD[$ref]:-0}" -ge "$RUNS" ] ||
				say "fail $key $ref not run: the last $TIMEOUTS runs of ($key) timed out"
		done
	fi
	if [ "$measure" = 1 ]; then
		say "note $key SCIF (scif_bench) and its perftest cells took $((SECONDS - start)) s"
	fi
}

# scif_try ITEM TRIES: rounds' TRY for scif(), whose arguments it finds
# in scif_argv: one scif_bench run (ITEM scif_bench), or one run of the
# perftest cell ITEM ("TOOL SIZE"). A timeout counts as a failed run
# (one_run and scif_one count it in TIMEOUTS).
scif_try()
{
	if [ "$1" = scif_bench ]; then
		scif_one "${scif_argv[@]}" || return 1
	else
		# shellcheck disable=SC2086 # "TOOL SIZE"
		one_run "${scif_argv[0]}" $1 || return 1
	fi
}

# counter DEV NAME: hw counter NAME of RDMA device DEV, or "?".
counter() { rdma_counter "$1" "$2" || echo "?"; }

# iperf_cell KEY TOOL SIZE ADDR: RUNS good runs (MAX_ATTEMPTS tries) of an
# iperf3 TCP client in this namespace towards a one-off server on ADDR in
# netns IB_NS, BW_SECS long; VALUE: MiB/s the server received.
iperf_cell()
{
	local key=$1 tool=$2 size=$3 addr=$4 good=0 try spid v

	for ((try = 0; try < MAX_ATTEMPTS && good < RUNS; try++)); do
		in_ns "$IB_NS" timeout "$RUN_TIMEOUT" iperf3 -s -1 -B "$addr" >"$scratch/server" 2>&1 &
		spid=$!
		wait_for 10 listening "$spid" 5201
		if timeout "$RUN_TIMEOUT" iperf3 -c "$addr" -t "$BW_SECS" -J >"$scratch/client" 2>&1 &&
			v=$(python3 -c 'import json, sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' <"$scratch/client" 2>/dev/null); then
			say "run $key $tool $size $v"
			good=$((good + 1))
		else
			say "fail $key $tool $size iperf3 -c $addr failed"
			tail -n 20 "$scratch/client" | sed 's/^/BENCH| /'
		fi
		wait "$spid" 2>/dev/null
	done
}

# netdev_tx NS IFACE: transmitted packets of netdev IFACE in netns NS.
netdev_tx() { in_ns "$1" cat "/sys/class/net/$2/statistics/tx_packets" 2>/dev/null || echo "?"; }

# delta A B: B - A, or "?" if either is unknown.
delta()
{
	case "$1$2" in
	*[!0-9]*) echo "?" ;;
	*) echo $(($2 - $1)) ;;
	esac
}

# eth0_tx: packets eth0 sent so far.
eth0_tx() { cat /sys/class/net/eth0/statistics/tx_packets 2>/dev/null || echo "?"; }

# thp_off: the guest's transparent huge pages off for every configuration
# alike (prints the setting). Under TCG a copy between 2 MiB pages ran 3-6x
# slower in some runs than in others of the same command in one boot
# (bench/profiles.md, scif-rma): an artifact of the emulator that made a
# figure depend on where THP happened to put the buffers, not on the code.
thp_off()
{
	local f=/sys/kernel/mm/transparent_hugepage/enabled

	if [ -w "$f" ] && echo never >"$f" 2>/dev/null; then
		cat "$f"
	else
		echo "unchanged: $(cat "$f" 2>/dev/null || echo absent)"
	fi
}

# tcp_pair KEY: one TCP stream (iperf3, BW_SECS, one stream) from the
# client's host to the server's across the pair's wire, eth0 to eth0: the
# wire's own ceiling, which the bw rows are held to. RUNS good runs,
# MAX_ATTEMPTS tries, both hosts alike (the client's verdict decides).
# Row tcp_bw 9000 (the wire's MTU); VALUE: MiB/s the server received.
tcp_pair()
{
	local key=$1 good=0 try spid r rc v

	for ((try = 0; try < MAX_ATTEMPTS && good < RUNS; try++)); do
		PORT=$((PORT + 1)) RUN_N=$((RUN_N + 1))
		if ! is_client; then
			timeout -k 5 "$RUN_TIMEOUT" iperf3 -s -1 -p "$PORT" >"$scratch/server" 2>&1 &
			spid=$!
			if wait_for 10 listening "$spid" "$PORT"; then
				put ready ok
			else
				put ready "iperf3 -s on host $SCIRE_HOST did not listen on TCP port $PORT"
			fi
			await cstat $((RUN_TIMEOUT + 60)) >/dev/null || kill "$spid" 2>/dev/null
			wait "$spid"
			put sstat "$?"
			rc=$(await verdict $((RUN_TIMEOUT + 120))) || rc=1
		else
			r=$(await ready $((RUN_TIMEOUT + 60))) || r="host $PAIR_SRV never said whether iperf3 listens"
			rc=1
			if [ "$r" = ok ] &&
				timeout -k 5 "$RUN_TIMEOUT" iperf3 -c "$SCIRE_PEER" -p "$PORT" -t "$BW_SECS" -J >"$scratch/client" 2>&1 &&
				v=$(python3 -c 'import json, sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' <"$scratch/client" 2>/dev/null); then
				rc=0
			fi
			put cstat "$rc"
			await sstat $((RUN_TIMEOUT + 60)) >/dev/null
			put verdict "$rc"
			if [ "$rc" = 0 ]; then
				say "run $key tcp_bw 9000 $v"
			else
				[ "$r" = ok ] && r="iperf3 -c $SCIRE_PEER failed"
				say "fail $key tcp_bw 9000 $r"
				tail -n 20 "$scratch/client" | sed 's/^/BENCH| /'
			fi
		fi
		[ "$rc" = 0 ] && good=$((good + 1))
	done
}

# pair_main: --pair KEY, on both hosts of the VM pair at once.
pair_main()
{
	local key=$pair_key t0=$SECONDS t0r kind tx0 dev_line tool

	kind=$([ "$key" = e ] && echo rxe || echo scire)
	PAIR_DIR=$SCIRE_SHARED/bench-$key
	mkdir -p "$PAIR_DIR" || { echo "cannot make $PAIR_DIR" >&2; exit 1; }
	dev_line="${kind}0 on eth0 of host a (192.168.78.1, perftest server) <-> ${kind}0 on eth0 of host b (192.168.78.2, client): two VMs booted for this ($(nproc) vCPU each, the same kernel), their eth0s joined by a qemu stream netdev (lossless), MTU 9000"
	say_a "config $key ($key) $kind pair|$dev_line"
	say_a "info pair_$key $(uname -r), $(nproc) vCPU(s), $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) per host"
	say_a "info tail_iters $TAIL_ITERS"
	say_a "info thp_$key $(thp_off)"
	# A run across the pair costs about 10 s under TCG (rxe more than
	# scire): the full matrix once, not three times, keeps the two pair
	# boots within the bench's time.
	[ "$quick" = 1 ] || RUNS=$PAIR_RUNS MAX_ATTEMPTS=$PAIR_MAX_ATTEMPTS
	say_a "info runs_$key $RUNS"
	say_a "info runs_${key}2 $RUNS"
	say_a "info max_attempts_$key $MAX_ATTEMPTS"
	DEV=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
	if [ "$DEV" != "${kind}0" ]; then
		say_a "setupfail $key host $SCIRE_HOST has ${DEV:-no RDMA device} on eth0, not ${kind}0"
		exit 0
	fi
	if ! GID=$(need_dev_gid "$DEV" 2>&1); then
		say "setupfail $key host $SCIRE_HOST: $GID"
		exit 0
	fi
	if ! psync start; then
		say "setupfail $key host $SCIRE_HOST: the other host never started"
		exit 0
	fi

	PAIR_SRV=a
	tx0=$(eth0_tx)
	matrix "$key"
	say "note $key host $SCIRE_HOST's eth0 sent $(delta "$tx0" "$(eth0_tx)") packets during the matrix"
	# Not in a quick run (it has no pair boot but a configured one).
	[ "$quick" = 1 ] || tcp_pair "$key"
	tails "$key"

	# The other way round: a few cells, the ones the targets name (quick:
	# one, to keep it working).
	say_a "config ${key}2 (${key}2) $kind pair, server on b|as ($key), with the perftest server on host b and its client on host a"
	PAIR_SRV=b
	t0r=$SECONDS
	TIMEOUTS=0
	for tool in ib_write_bw ib_read_bw; do
		cell "${key}2" "$tool" 65536
		[ "$quick" = 0 ] || break
	done
	if [ "$quick" = 0 ]; then
		for tool in ib_write_lat ib_send_lat; do
			cell "${key}2" "$tool" 2
		done
	fi
	say_a "note ${key}2 took $((SECONDS - t0r)) s"
	ulp_pair "$key"
	psync end || say "note $key host $SCIRE_HOST: the other host never reached the end"
	say_a "pairdone $key $((SECONDS - t0))"
	rm -rf "$scratch"
}

# All of the run is in main(): bash reads a script as it runs it, and a
# full run lasts about 25 minutes, during which this file may change.
main()
{
	# --- facts ----------------------------------------------------

	t0=$SECONDS
	say "info mode $([ "$quick" = 1 ] && echo quick || echo full)"
	say "info runs $RUNS"
	say "info max_attempts $MAX_ATTEMPTS"
	say "info kernel $(uname -r) $(uname -v)"
	say "info perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo unknown)"
	say "info cpu $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) vCPUs, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
	say "info bw_args $(bw_args) -s SIZE"
	say "info lat_args -F -n N -s SIZE (N: $(for s in $SIZES; do printf '%s at %s B, ' "$(lat_iters "$s")" "$s"; done | sed 's/, $//'))"
	say "info scif_args $(scif_args)"
	say "info tail_iters $TAIL_ITERS"
	say "info thp $(thp_off)"
	say "info scire_ko $(sha256sum "$SCIRE_ROOT/kernel/scire.ko" 2>/dev/null | cut -c1-16)"
	if [ -e "$FAST_PATH" ]; then
		say "info fast_path $(cat "$FAST_PATH")"
	else
		say "info fast_path absent"
	fi

	# --- memcpy ceiling -------------------------------------------

	# libc's memcpy, and the kernel's ways: "rep movsb" on a CPU with ERMS
	# or FSRM, "rep movsq" with REP_GOOD only, a loop of 8-byte moves
	# without either (the guest's flags say which it has).
	say "config memcpy guest memcpy|memcpy_bw, one thread, 2 x 128 MiB buffers, 1 s per chunk size"
	say "info cpuflags $(grep -o -w -E 'fsrm|erms|rep_good|avx2|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ')"
	mbw=$SCIRE_BUILD/bench/memcpy_bw
	mruns=$RUNS
	wanted memcpy || { mruns=0; say "skip memcpy not among --only $only"; }
	for ((i = 0; i < mruns; i++)); do
		for how in memcpy repmovsb repmovsq movq; do
			if [ -x "$mbw" ] && out=$("$mbw" -m "$how" -t 1 4K 64K 1M 2>&1); then
				awk '{ print "BENCH run memcpy " $1 " " $2 " " $3 }' <<<"$out"
				continue
			fi
			[ -x "$mbw" ] || out="$mbw missing: run make"
			for size in 4096 65536 1048576; do
				say "fail memcpy $how $size memcpy_bw -m $how failed"
			done
			printf '%s\n' "$out" | sed 's/^/BENCH| /'
		done
	done

	# --- (b) and (b'): scire0 talking to itself -------------------

	say "config b (b) scire self|scire0 on eth0 (192.168.77.2), server and client on the same device"
	if ! wanted b && ! wanted "b'"; then
		say "skip b not among --only $only"
	elif ! rdma_has scire0; then
		say "setupfail b scire0 does not exist (is scire loaded?)"
	elif ! gid=$(need_dev_gid scire0 2>&1); then
		say "setupfail b $gid"
	else
		sides "" scire0 "$gid" 127.0.0.1 "" scire0 "$gid"
		if wanted b; then
			tx0=$(counter scire0 tx_packets)
			matrix b scif
			say "note b scire0 tx_packets during (b): $(delta "$tx0" "$(counter scire0 tx_packets)")"
			tails b
			# SCIF node 0 (no node table) talks to itself through scire0.
			scif b "" "" 0
			scale b scire0 "$gid"
		else
			say "skip b not among --only $only"
		fi

		say "config b' (b') scire self, wire path|as (b), with scire's fast_path module parameter at 0"
		if [ "$quick" = 1 ]; then
			say "skip b' not in a quick run"
		elif ! wanted "b'"; then
			say "skip b' not among --only $only"
		elif [ ! -w "$FAST_PATH" ]; then
			say "skip b' scire has no writable $FAST_PATH"
		else
			fp=$(cat "$FAST_PATH")
			if echo 0 >"$FAST_PATH"; then
				tx0=$(counter scire0 tx_packets)
				matrix "b'"
				say "note b' scire0 tx_packets during (b'): $(delta "$tx0" "$(counter scire0 tx_packets)")"
				tails "b'"
			else
				say "setupfail b' cannot write 0 to $FAST_PATH"
			fi
			echo "$fp" >"$FAST_PATH" || say "note b' cannot restore $FAST_PATH to $fp"
		fi
	fi

	# --- (c): two scire devices over a veth pair ------------------

	# A configuration that needs a topology runs in a subshell: lib.sh's topo_*
	# helpers exit on error, and its EXIT trap tears down whatever was set up.
	say "config c (c) scire-scire veth|scireA on vethA (netns nsA, 10.77.0.1, server) <-> scireB on vethB (netns nsB, 10.77.0.2, client), MTU 9000"
	wanted c || say "skip c not among --only $only"
	wanted c && (
		err=$(mktemp)
		ready=0
		on_exit()
		{
			[ "$ready" = 1 ] || say "setupfail c $(tr '\n' ' ' <"$err")"
			rmdir "$SCIF_NODES/1" "$SCIF_NODES/2" 2>/dev/null
			topo_teardown >"$err" 2>&1 || say "note c teardown: $(tr '\n' ' ' <"$err")"
			rm -f "$err"
		}
		trap on_exit EXIT
		topo_scire_pair 9000 2>"$err" >&2
		ready=1
		sides "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID_A" "$TOPO_IP_A" "$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID_B"
		# SCIF node 1 is nsA (the perftest server's side), node 2 nsB.
		scif_ns=-
		if [ "$quick" = 1 ]; then
			# make check runs the quick bench: one SCIF column (b) is
			# enough there to keep scif_bench working.
			say "note c SCIF not measured in a quick run (column b has it)"
		elif [ ! -d "$SCIF_NODES" ]; then
			say "note c SCIF not measured: no $SCIF_NODES (scire_scif not loaded?)"
		elif mkdir "$SCIF_NODES/1" "$SCIF_NODES/2" && echo "$TOPO_IP_A" >"$SCIF_NODES/1/addr" &&
			echo "$TOPO_IP_B" >"$SCIF_NODES/2/addr"; then
			scif_ns=$TOPO_NS_A
		else
			say "note c SCIF not measured: cannot configure nodes 1 and 2 in $SCIF_NODES"
		fi
		tx0=$(netdev_tx "$TOPO_NS_A" "$TOPO_IF_A") tx1=$(netdev_tx "$TOPO_NS_B" "$TOPO_IF_B")
		matrix c scif
		# What scif() adds (SCIF's own packets among them) counts too.
		scif c "$scif_ns" "$TOPO_NS_B" 1
		say "note c veth packets during (c): $(delta "$tx0" "$(netdev_tx "$TOPO_NS_A" "$TOPO_IF_A")") sent by $TOPO_IF_A, $(delta "$tx1" "$(netdev_tx "$TOPO_NS_B" "$TOPO_IF_B")") by $TOPO_IF_B"
	)

	# --- (g): IPoIB over two scire_ib ports -----------------------

	say "config g (g) IPoIB|sib0 on $IB_IF_A (init_net, iperf3 client) <-> sib1 on $IB_IF_B (netns $IB_NS, iperf3 server) over a veth pair, MTU 9000, opensm on sib0; iperf3 TCP (\`-t $BW_SECS\`, one stream; MiB/s received) over the veth's own addresses (tcp_veth_bw: the ceiling), then over IPoIB in datagram mode (ipoib_ud_bw, MTU 2044) and connected mode (ipoib_cm_bw, MTU 65520); then both ports cabled to scire-ibswitch at sib0's address instead of to each other, connected and datagram mode again (ipoib_sw_cm_bw, ipoib_sw_ud_bw)"
	wanted g || say "skip g not among --only $only"
	wanted g && (
		err=$(mktemp)
		ready=0 osm='' ia='' ib=''
		# IPoIB's connected mode must have reaped its RC QPs before
		# ib_ipoib goes: unloaded earlier, it destroys its CQs while the
		# CM TX reaper still waits for a connection's last sends ("Destroy
		# of kernel CQ shouldn't fail"; see selftests/pair/40-ipoib.sh).
		# Taking the interfaces down queues every connection for it.
		ipoib_rc_gone()
		{
			! rdma res show qp 2>/dev/null | grep -q 'type RC .*comm \[ib_ipoib\]'
		}
		on_exit()
		{
			[ "$ready" = 1 ] || say "setupfail g $(tr '\n' ' ' <"$err")"
			[ -z "$ia" ] || ip link set "$ia" down 2>/dev/null
			[ -z "$ib" ] || in_ns "$IB_NS" ip link set "$ib" down 2>/dev/null
			wait_for 20 ipoib_rc_gone ||
				say "note g IPoIB still had RC QPs 20 s after its interfaces went down"
			[ -z "$osm" ] || kill "$osm" 2>/dev/null
			modprobe -r ib_ipoib 2>/dev/null
			ib_link_teardown >/dev/null 2>&1
			rm -f "$err"
		}
		trap on_exit EXIT
		command -v iperf3 >/dev/null && command -v opensm >/dev/null ||
			{ echo "iperf3 or opensm not installed" >"$err"; exit 1; }
		modprobe ib_umad 2>"$err" || exit 1
		ib_link_pair 2>"$err" >&2
		ib_link_up 2>"$err" >&2
		opensm -g "0x$(tr -d : </sys/class/infiniband/sib0/node_guid)" -f /dev/null >/dev/null 2>&1 &
		osm=$!
		wait_for 60 ib_port_is sib0 Active && wait_for 60 ib_port_is sib1 Active ||
			{ echo "the ports did not become ACTIVE under opensm" >"$err"; exit 1; }
		modprobe ib_ipoib 2>"$err" || exit 1
		wait_for 10 ipoib_of sib0 && wait_for 10 ipoib_of sib1 ||
			{ echo "ib_ipoib made no interfaces" >"$err"; exit 1; }
		ia=$(ipoib_of sib0) ib=$(ipoib_of sib1)
		{ ip link set "$ib" netns "$IB_NS" && ip addr add 10.92.0.1/24 dev "$ia" &&
			ip link set "$ia" up && in_ns "$IB_NS" ip addr add 10.92.0.2/24 dev "$ib" &&
			in_ns "$IB_NS" ip link set "$ib" up; } 2>"$err" || exit 1
		wait_for 30 ipoib_carrier "" "$ia" && wait_for 30 ipoib_carrier "$IB_NS" "$ib" ||
			{ echo "IPoIB got no carrier (broadcast group not joined)" >"$err"; exit 1; }
		ready=1
		iperf_cell g tcp_veth_bw 9000 "$IB_IP_B"
		iperf_cell g ipoib_ud_bw 2044 10.92.0.2
		# ipoib_mode MODE MTU: both interfaces to MODE with MTU.
		ipoib_mode()
		{
			echo "$1" >"/sys/class/net/$ia/mode" &&
				in_ns "$IB_NS" sh -c "echo $1 >/sys/class/net/$ib/mode" &&
				ip link set "$ia" mtu "$2" && in_ns "$IB_NS" ip link set "$ib" mtu "$2"
		}
		if ipoib_mode connected 65520; then
			iperf_cell g ipoib_cm_bw 65520 10.92.0.2
		else
			say "fail g ipoib_cm_bw 65520 cannot switch to connected mode with MTU 65520"
		fi
		# The same two ports through scire-ibswitch (in init_net at
		# sib0's address): one more user-space relay each way.
		sw=$(command -v scire-ibswitch || echo "$SCIRE_BUILD/tools/ibswitch/scire-ibswitch")
		if [ ! -x "$sw" ]; then
			say "fail g ipoib_sw_ud_bw 2044 no scire-ibswitch (make)"
			exit 0
		fi
		"$sw" --listen "$IB_IP_A:4793" --ports 2 2>/dev/null &
		swpid=$!
		if ! { echo "$IB_IP_A:4793" >/sys/class/infiniband/sib0/ports/1/scire_ib_peer &&
			echo "$IB_IP_A:4793" >/sys/class/infiniband/sib1/ports/1/scire_ib_peer; } 2>"$err" ||
			! { wait_for 90 ib_port_is sib0 Active && wait_for 90 ib_port_is sib1 Active; } ||
			! wait_for 60 ipoib_carrier "" "$ia" || ! wait_for 60 ipoib_carrier "$IB_NS" "$ib"; then
			say "fail g ipoib_sw_ud_bw 2044 the ports did not come up ACTIVE through the switch: $(tr '\n' ' ' <"$err")"
			kill "$swpid"
			exit 0
		fi
		iperf_cell g ipoib_sw_cm_bw 65520 10.92.0.2
		if ipoib_mode datagram 2044; then
			iperf_cell g ipoib_sw_ud_bw 2044 10.92.0.2
		else
			say "fail g ipoib_sw_ud_bw 2044 cannot switch back to datagram mode with MTU 2044"
		fi
		kill "$swpid"
	)

	# --- (a) and (d): rdma_rxe ------------------------------------

	say "config a (a) rxe self|rxe0 on eth0 (192.168.77.2), server and client on the same device; scire0 deleted first"
	say "config d (d) scire-rxe veth|rxeA on vrxe (init_net, 10.77.0.1, server) <- scireB on vsci (netns nsB, 10.77.0.2, client), MTU 9000"
	wanted a || say "skip a not among --only $only"
	wanted d || say "skip d not among --only $only"
	{ wanted a || wanted d; } && (
		err=$(mktemp)
		scire0_deleted=0 rxe_loaded=0
		on_exit()
		{
			if rdma_has rxe0; then
				timeout 60 rdma link delete rxe0 || say "note a teardown: rdma link delete rxe0 failed"
			fi
			if [ "$rxe_loaded" = 1 ]; then
				wait_for 10 timeout 10 rmmod rdma_rxe || say "note d teardown: rmmod rdma_rxe failed"
			fi
			if [ "$scire0_deleted" = 1 ]; then
				timeout 60 rdma link add scire0 type scire netdev eth0 ||
					say "note d teardown: cannot add scire0 on eth0 again"
			fi
			rm -f "$err"
		}
		trap on_exit EXIT
		if rdma_has scire0; then
			if ! out=$(timeout 60 rdma link delete scire0 2>&1); then
				say "setupfail a rdma link delete scire0: $out"
				say "setupfail d rdma link delete scire0: $out"
				exit 1
			fi
			scire0_deleted=1
		fi
		if [ ! -d /sys/module/rdma_rxe ]; then
			if ! out=$(timeout 60 modprobe rdma_rxe 2>&1); then
				say "setupfail a modprobe rdma_rxe: $out"
				say "setupfail d modprobe rdma_rxe: $out"
				exit 1
			fi
			rxe_loaded=1
		fi

		if ! wanted a; then
			:
		elif ! out=$(timeout 60 rdma link add rxe0 type rxe netdev eth0 2>&1); then
			say "setupfail a rdma link add rxe0 type rxe netdev eth0: $out"
		elif ! gid=$(need_dev_gid rxe0 2>&1); then
			say "setupfail a $gid"
		else
			sides "" rxe0 "$gid" 127.0.0.1 "" rxe0 "$gid"
			matrix a
			tails a
			scale a rxe0 "$gid"
		fi
		if rdma_has rxe0 && ! out=$(timeout 60 rdma link delete rxe0 2>&1); then
			say "note a rdma link delete rxe0: $out"
		fi

		# topo_rxe_scire exits on error: a subshell of its own. It finds
		# scire0 gone and rdma_rxe loaded, so undoing that stays ours.
		wanted d && (
			ready=0
			topo_exit()
			{
				[ "$ready" = 1 ] || say "setupfail d $(tr '\n' ' ' <"$err")"
				topo_teardown >"$err" 2>&1 || say "note d teardown: $(tr '\n' ' ' <"$err")"
			}
			trap topo_exit EXIT
			topo_rxe_scire 9000 2>"$err" >&2
			ready=1
			sides "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID_A" "$TOPO_IP_A" "$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID_B"
			tx0=$(netdev_tx "$TOPO_NS_B" "$TOPO_IF_B")
			matrix d
			say "note d veth packets during (d): $(delta "$tx0" "$(netdev_tx "$TOPO_NS_B" "$TOPO_IF_B")") sent by $TOPO_IF_B (scire)"
		)
	)

	ulp_main

	rm -rf "$scratch"
	say "done $((SECONDS - t0))"
}

# One line: nothing after it is read, whatever the file holds by then.
if [ -n "$pair_key" ]; then pair_main; else main; fi; exit 0
