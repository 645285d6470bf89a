#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The guest half of `make bench-cost` (scripts/bench-cost boots the test
# VM with the cost probe, bench/cost/insn_plugin.c, loaded into qemu):
#
#   bench/cost/run-guest.sh --out DIR [--only KEYS] [--siw KO]
#
# DIR is the host directory the probe writes its dumps to, mounted in the
# guest at the same path (SCIRE_VM_SHARED). For each configuration
#
#   b    scire0 on eth0 talking to itself (fast path)
#   b'   the same with scire's fast_path module parameter at 0 (wire path)
#   a    rxe0 on eth0 talking to itself (scire0 deleted, rdma_rxe loaded)
#   h    siw0 on eth0 talking to itself (with --siw KO; perftest -R)
#
# and each row of ROWS (TOOL SIZE N [ARG...]), perftest's server and client run in
# this one guest, once with -n N and once with -n 2N, and that pair of runs
# twice (rep 1, rep 2). Around each run: `cost_mark start` (the probe
# zeroes its counters and counts) once the server listens, the client, `cost_mark dump ID` (it writes
# DIR/ID.tb), `cost_mark stop`. The analysis (bench/cost/attribute.py)
# takes per operation the difference of the 2N and the N run divided by
# N: what both runs share (process start-up, connection set-up, teardown,
# the markers' own processes) cancels. Beside each dump: DIR/ID.modules
# (/proc/modules) and DIR/KEY.kallsyms (once per configuration, after its
# modules are loaded), and DIR/runs (one line a run:
# "ID KEY TOOL SIZE N REP STATUS CTXT ARGS", CTXT the change of
# /proc/stat's ctxt across the run, ARGS the row's extra perftest
# arguments joined by "_"). First the probe's self-test: `cost_mark loop
# 100000`, dump 4095.
#
# Asserts nothing: exit status 0 unless the script cannot run.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SCIRE_ROOT=${SCIRE_ROOT:-$(dirname "$(dirname "$here")")}
export SCIRE_BUILD=${SCIRE_BUILD:-$SCIRE_ROOT/build}
# shellcheck source=selftests/lib.sh
. "$SCIRE_ROOT/selftests/lib.sh"
# shellcheck source=selftests/nvme-lib.sh
. "$SCIRE_ROOT/selftests/nvme-lib.sh"

out="" only="" siw_ko=""
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--siw) siw_ko=$2; shift 2 ;;
	*) echo "usage: $0 --out DIR [--only KEYS] [--siw KO]" >&2; exit 2 ;;
	esac
done
if [ ! -d "$out" ] || [ ! -w "$out" ]; then
	echo "$0: --out DIR: a writable directory" >&2
	exit 2
fi

mark=$SCIRE_BUILD/bench/cost/cost_mark
clock=$SCIRE_BUILD/bench/cost/cost_clock.so
addr=127.0.0.1 CM=0
FAST_PATH=/sys/module/scire/parameters/fast_path
# TOOL SIZE N [ARG...]: the 2-byte round trips with 1000 iterations, the
# 4 KiB transfers with 2000 (8 MiB), the 64 KiB ones with 500 (32 MiB),
# the 1 MiB ones with 128 (no fewer than perftest's queue depth of 128).
# -e: perftest sleeps on CQ events
# instead of polling the CQ. A polling side spins for as long as the
# other side takes, so its instruction count follows the emulator's
# speed, not the work: the -e rows give repeatable totals; the polled
# ones repeatable kernel counts only. perftest has -e for SEND and READ,
# not for WRITE ("Events feature not available on WRITE verb"):
# ib_write_lat polls the buffer, ib_write_bw the CQ.
ROWS=${SCIRE_COST_ROWS:-"ib_send_lat 2 1000 -e
ib_send_lat 2 1000
ib_write_lat 2 1000
ib_write_bw 4096 2000
ib_read_bw 4096 2000 -e
ib_write_bw 65536 500
ib_read_bw 65536 500 -e
ib_write_bw 1048576 128
ib_read_bw 1048576 128 -e"}
# SCIF rows (b and b' only: the bridge runs over scire), TOOL SIZE N:
# scif_send, N 8-byte scif_send() round trips (blocking, so against
# ib_send_lat -e); scif_writeto, N scif_writeto()s of SIZE between two
# windows, then one fence (against ib_write_bw of the same size).
SCIF_ROWS=${SCIRE_COST_SCIF_ROWS-"scif_send 8 1000
scif_writeto 1048576 128"}
# NVMe-oF rows (b, b', a; h with --siw), TOOL SIZE N: N I/Os of SIZE by
# fio (libaio, O_DIRECT, a fixed random seed, so the N run's I/Os are the
# 2N run's first N) on the namespace of an nvme-rdma host connected to an
# nvmet-rdma target on the same device, exporting a memory-backed
# null_blk whose first NVME_SPAN is written once beforehand (null_blk
# allocates a page on its first write). TOOL: nvme_randread and
# nvme_randwrite at iodepth 32, nvme_read and nvme_write (sequential) at 8.
NVME_ROWS=${SCIRE_COST_NVME_ROWS-"nvme_randread 4096 1000
nvme_randwrite 4096 1000
nvme_read 1048576 32
nvme_write 1048576 32"}
NVME_SPAN=64M NVME_ADDR=192.168.77.2
REPS=2 PORT=19000 ID=0 TMO=300 SCIF_PORT=2400

say() { printf 'COST %s\n' "$*"; }
wanted() { [ -z "$only" ] || case " $only " in *" $1 "*) true ;; *) false ;; esac; }
ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

# ready PID: has the server PID started listening (TCP port $PORT, or
# with -R an rdma_cm ID on it)?
ready()
{
	if [ "$CM" = 1 ]; then
		cm_listening "$PORT"
	else
		listening "$1" "$PORT"
	fi
}

# one KEY DEV GID TOOL SIZE N REP [ARG...]: one counted run. Counting
# starts once the server listens (the wait polls, and its cost follows
# the time it takes) and ends after both sides exited. Both run with
# cost_clock.so (perftest's time-bound calibration loop made one of
# fixed length).
one()
{
	local key=$1 dev=$2 gid=$3 tool=$4 size=$5 n=$6 rep=$7 spid crc src c0 st i
	local -a args

	shift 7
	ID=$((ID + 1)) PORT=$((PORT + 1))
	args=(-d "$dev" -x "$gid" -p "$PORT" -F -n "$n" -s "$size" "$@")
	cat /proc/modules >"$out/$ID.modules"
	LD_PRELOAD=$clock timeout -k 5 "$TMO" "$tool" "${args[@]}" >"$out/$ID.server" 2>&1 &
	spid=$!
	for ((i = 0; i < 600; i++)); do
		ready "$spid" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	c0=$(ctxt)
	"$mark" start
	LD_PRELOAD=$clock timeout -k 5 "$TMO" "$tool" "${args[@]}" "$addr" >"$out/$ID.client" 2>&1
	crc=$?
	[ "$crc" = 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	"$mark" dump "$ID"
	"$mark" stop
	st=ok
	[ "$crc" = 0 ] && [ "$src" = 0 ] || st="fail:$src/$crc"
	echo "$ID $key $tool $size $n $rep $st $(($(ctxt) - c0)) ${*// /_}" >>"$out/runs"
	say "run $ID $key $tool $size $n $rep $st $*"
	if [ "$st" != ok ]; then
		sed 's/^/COST| server: /' "$out/$ID.server"
		sed 's/^/COST| client: /' "$out/$ID.client"
	fi
}

# counted KEY TOOL SIZE N REP CMD...: one counted run of CMD (its output
# in DIR/ID.client), between `cost_mark start` and `cost_mark dump ID`,
# recorded in DIR/runs as one() records perftest's.
counted()
{
	local key=$1 tool=$2 size=$3 n=$4 rep=$5 rc c0 st

	shift 5
	ID=$((ID + 1))
	cat /proc/modules >"$out/$ID.modules"
	c0=$(ctxt)
	"$mark" start
	timeout -k 5 "$TMO" "$@" >"$out/$ID.client" 2>&1
	rc=$?
	"$mark" dump "$ID"
	"$mark" stop
	st=ok
	[ "$rc" = 0 ] || st="fail:$rc"
	echo "$ID $key $tool $size $n $rep $st $(($(ctxt) - c0))" >>"$out/runs"
	say "run $ID $key $tool $size $n $rep $st"
	[ "$st" = ok ] || sed "s#^#COST| ${1##*/}: #" "$out/$ID.client"
}

# scif_one KEY TOOL SIZE N REP: one counted run of `scif_bench loop`
# (bench/scif_bench.c: a server endpoint it forks, and a client, both on
# this node, SCIF's loopback through scire0). Counting covers the whole
# program, start-up, connection and windows too, which the N and 2N runs
# share.
scif_one()
{
	local key=$1 tool=$2 size=$3 n=$4 rep=$5
	local -a args

	case $tool in
	scif_send) args=(-s 0 -r 0 -n "$n") ;;
	scif_writeto) args=(-s "$size" -N "$n" -k writeto -n 0 -r 0) ;;
	*) say "setupfail $key unknown SCIF row $tool"; return ;;
	esac
	SCIF_PORT=$((SCIF_PORT + 1))
	counted "$key" "$tool" "$size" "$n" "$rep" \
		"$SCIRE_BUILD/bench/scif_bench" loop -p "$SCIF_PORT" "${args[@]}"
}

# scif_rows KEY: every SCIF row, N and 2N, REPS times (needs /dev/scif).
scif_rows()
{
	local key=$1 tool size n rep

	if [ ! -c /dev/scif ]; then
		say "setupfail $key no /dev/scif (scire_scif not loaded): no SCIF rows"
		return
	fi
	while read -r tool size n; do
		[ -n "$tool" ] || continue
		for ((rep = 1; rep <= REPS; rep++)); do
			scif_one "$key" "$tool" "$size" "$n" "$rep"
			scif_one "$key" "$tool" "$size" $((2 * n)) "$rep"
		done
	done <<<"$SCIF_ROWS"
}

# nvme_one KEY TOOL SIZE N REP NS: one counted fio run on block device NS.
nvme_one()
{
	local key=$1 tool=$2 size=$3 n=$4 rep=$5 ns=$6 rw depth

	case $tool in
	nvme_randread) rw=randread depth=32 ;;
	nvme_randwrite) rw=randwrite depth=32 ;;
	nvme_read) rw=read depth=8 ;;
	nvme_write) rw=write depth=8 ;;
	*) say "setupfail $key unknown NVMe-oF row $tool"; return ;;
	esac
	counted "$key" "$tool" "$size" "$n" "$rep" \
		fio --name="$tool" --filename="$ns" --direct=1 --ioengine=libaio \
		--rw="$rw" --bs="$size" --iodepth="$depth" --size="$NVME_SPAN" \
		--io_size=$((n * size)) --randseed=5101 --norandommap
}

# nvme_rows KEY DEV: the NVMe-oF rows over RDMA device DEV (on eth0, at
# NVME_ADDR): target, host, the rows N and 2N REPS times, all undone.
nvme_rows()
{
	local key=$1 dev=$2 ctrl ns tool size n rep err=$out/nvme-$1.err

	[ -n "$NVME_ROWS" ] || return 0
	if ! command -v fio >/dev/null || ! command -v nvme >/dev/null; then
		say "setupfail $key no fio or nvme-cli: no NVMe-oF rows"
		return 0
	fi
	if ! modprobe null_blk nr_devices=1 gb=1 memory_backed=1 2>"$err" ||
	   ! nvme_target_up "$NVME_ADDR" >>"$err" 2>&1; then
		say "setupfail $key nvmet-rdma target on $dev: $(tr '\n' ' ' <"$err" | cut -c1-300)"
	elif ! ctrl=$(nvme_host_connect "$NVME_ADDR" 2>>"$err") || ! ns=$(nvme_ns_dev "$ctrl" 1); then
		say "setupfail $key nvme connect over $dev: $(tail -n 5 "$err" | tr '\n' ' ' | cut -c1-300)"
	elif ! fio --name=fill --filename="$ns" --direct=1 --ioengine=libaio --rw=write --bs=1M \
		--iodepth=8 --size="$NVME_SPAN" >>"$err" 2>&1; then
		say "setupfail $key writing the first $NVME_SPAN of $ns failed"
	else
		# nvme-rdma's and nvmet's symbols, for the profile.
		grep -E '^[0-9a-f]+ [tTwW] ' /proc/kallsyms >"$out/$key.kallsyms"
		say "config $key NVMe-oF over $dev: namespace $ns"
		while read -r tool size n; do
			[ -n "$tool" ] || continue
			for ((rep = 1; rep <= REPS; rep++)); do
				nvme_one "$key" "$tool" "$size" "$n" "$rep" "$ns"
				nvme_one "$key" "$tool" "$size" $((2 * n)) "$rep" "$ns"
			done
		done <<<"$NVME_ROWS"
	fi
	[ -z "${ctrl:-}" ] || timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1 ||
		say "note $key nvme disconnect failed"
	nvme_target_down
	timeout 30 modprobe -r nvme-rdma nvmet-rdma 2>/dev/null
	timeout 30 modprobe -r null_blk 2>/dev/null
}

# rows KEY DEV [ARG...]: every row on DEV, N and 2N, REPS times; ARGs
# go to every run (siw: -R).
rows()
{
	local key=$1 dev=$2 gid tool size n rep extra
	local -a more

	shift 2
	CM=0 addr=127.0.0.1
	case " $* " in *" -R "*) CM=1 ;; esac
	if [ "$CM" = 1 ]; then
		# iWARP: GID index 0, rdma_cm to eth0's own address.
		gid=0 addr=${SCIRE_ADDR:-192.168.77.2}
		wait_for 10 sh -c "rdma link show '$dev/1' | grep -q 'state ACTIVE'"
	elif ! gid=$(need_dev_gid "$dev" 2>&1); then
		say "setupfail $key $gid"
		return
	fi
	# Text symbols only, the modules' among them.
	grep -E '^[0-9a-f]+ [tTwW] ' /proc/kallsyms >"$out/$key.kallsyms"
	say "config $key $dev gid $gid"
	while read -r tool size n extra; do
		[ -n "$tool" ] || continue
		read -ra more <<<"$extra"
		for ((rep = 1; rep <= REPS; rep++)); do
			one "$key" "$dev" "$gid" "$tool" "$size" "$n" "$rep" "${more[@]}" "$@"
			one "$key" "$dev" "$gid" "$tool" "$size" $((2 * n)) "$rep" "${more[@]}" "$@"
		done
	done <<<"$ROWS"
}

main()
{
	local t0=$SECONDS fp

	sysctl -qw kernel.kptr_restrict=0
	: >"$out/runs"
	say "info kernel $(uname -r), $(nproc) vCPUs, perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
	say "info thp $(echo never >/sys/kernel/mm/transparent_hugepage/enabled 2>&1 && echo off)"
	# The probe's self-test: a loop of known length.
	"$mark" loop 100000
	say "selftest $(command -v "$mark") loop 100000"

	if wanted b || wanted "b'"; then
		if ! rdma_has scire0; then
			say "setupfail b scire0 does not exist"
		else
			wanted b && { rows b scire0; scif_rows b; nvme_rows b scire0; }
			if wanted "b'" && [ -w "$FAST_PATH" ]; then
				fp=$(cat "$FAST_PATH")
				echo 0 >"$FAST_PATH" && { rows "b'" scire0; scif_rows "b'"; nvme_rows "b'" scire0; }
				echo "$fp" >"$FAST_PATH"
			fi
		fi
	fi

	if wanted a; then
		if rdma_has scire0 && ! timeout 60 rdma link delete scire0; then
			say "setupfail a cannot delete scire0"
		elif ! timeout 60 modprobe rdma_rxe || ! timeout 60 rdma link add rxe0 type rxe netdev eth0; then
			say "setupfail a cannot add rxe0"
		else
			rows a rxe0
			nvme_rows a rxe0
		fi
		rdma_has rxe0 && timeout 60 rdma link delete rxe0
		timeout 30 rmmod rdma_rxe 2>/dev/null
	fi

	if wanted h && [ -n "$siw_ko" ]; then
		rdma_has scire0 && timeout 60 rdma link delete scire0
		# insmod loads no dependencies: siw.ko's (ib_core, libcrc32c)
		# are in the stock kernel's modules.
		IFS=, read -ra deps <<<"$(modinfo -F depends "$siw_ko")"
		if ! modprobe -a "${deps[@]}" || ! insmod "$siw_ko" ||
		   ! timeout 60 rdma link add siw0 type siw netdev eth0; then
			say "setupfail h cannot add siw0"
		else
			# siw (iWARP) connects through rdma_cm: perftest -R.
			rows h siw0 -R
			nvme_rows h siw0
		fi
		rdma_has siw0 && timeout 60 rdma link delete siw0
		timeout 30 rmmod siw 2>/dev/null
	fi
	rdma_has scire0 || timeout 60 rdma link add scire0 type scire netdev eth0
	say "done $((SECONDS - t0))"
}

main
exit 0
