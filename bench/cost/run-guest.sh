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
#   g    TCP over IPoIB on two scire_ib ports, and over their veth
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
# IPoIB rows (g), TOOL MTU N: N MiB of one iperf3 TCP stream (-n) from
# init_net to a server in the namespace IB_NS, between the two ends of a
# veth pair carrying scire_ib ports sib0 and sib1 (opensm on sib0):
# tcp_veth over the veth's own addresses (the ceiling), ipoib_ud over
# IPoIB in datagram mode (MTU 2044), ipoib_cm in connected mode (MTU
# 65520). An operation is one MiB.
IPOIB_ROWS=${SCIRE_COST_IPOIB_ROWS-"tcp_veth 9000 64
ipoib_ud 2044 64
ipoib_cm 65520 64"}
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
# recorded in DIR/runs as one() records perftest's. With COUNTED_WAIT
# set to the PID of a background child of this shell, it waits for that
# too before the dump (a nonzero exit status fails the run).
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
	# A server the caller started before counting (COUNTED_WAIT, a
	# child of this shell) ends inside the count too; when the client
	# failed it may never have been reached, so it is not waited for.
	if [ -n "${COUNTED_WAIT:-}" ]; then
		[ "$rc" = 0 ] || kill "$COUNTED_WAIT" 2>/dev/null
		wait "$COUNTED_WAIT" || rc=$((rc + 100))
	fi
	"$mark" dump "$ID"
	"$mark" stop
	st=ok
	[ "$rc" = 0 ] || st="fail:$rc"
	echo "$ID $key $tool $size $n $rep $st $(($(ctxt) - c0))" >>"$out/runs"
	say "run $ID $key $tool $size $n $rep $st"
	[ "$st" = ok ] && return 0
	sed "s#^#COST| ${1##*/}: #" "$out/$ID.client"
	return 1
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

# ipoib_one KEY TOOL MTU N REP ADDR: one counted iperf3 run of N MiB to
# a one-off server on ADDR (in IB_NS), started before counting. A failed
# run is tried once more after the neighbour is resolved again: on a
# loaded host IPoIB's address resolution (an SA path query under opensm)
# can time out and iperf3 then says "No route to host"; the analysis
# keeps the run that succeeded.
ipoib_one()
{
	local key=$1 tool=$2 mtu=$3 n=$4 rep=$5 addr=$6 spid i try

	for try in 1 2; do
		# ip netns exec execs: $! is the server's process, in IB_NS,
		# whose /proc/PID/net listening() reads.
		ip netns exec "$IB_NS" timeout -k 5 "$TMO" iperf3 -s -1 -i 0 -B "$addr" >"$out/iperf3.server" 2>&1 &
		spid=$!
		for ((i = 0; i < 200; i++)); do
			listening "$spid" 5201 && break
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.05
		done
		COUNTED_WAIT=$spid counted "$key" "$tool" "$mtu" "$n" "$rep" \
			iperf3 -c "$addr" -i 0 -n "${n}M" && return 0
		[ "$try" = 2 ] && return 1
		say "note $key $tool $n MiB rep $rep failed: resolving $addr again, one more try"
		ip neigh flush to "$addr" 2>/dev/null
		ping -c 3 -W 5 "$addr" >/dev/null 2>&1 ||
			say "note $key $tool: $addr does not answer ping either"
	done
}

# ipoib_rows KEY: the IPoIB rows, N and 2N REPS times, over two scire_ib
# ports set up as make bench's configuration (g) sets them up, all undone.
ipoib_rows()
{
	local key=$1 err=$out/ipoib-$1.err

	[ -n "$IPOIB_ROWS" ] || return 0
	if ! command -v iperf3 >/dev/null || ! command -v opensm >/dev/null; then
		say "setupfail $key no iperf3 or opensm: no IPoIB rows"
		return 0
	fi
	# A subshell: the set-up helpers of selftests/lib.sh exit on failure.
	(
		osm='' ia='' ib=''
		ipoib_rc_gone()
		{
			! rdma res show qp 2>/dev/null | grep -q 'type RC .*comm \[ib_ipoib\]'
		}
		on_exit()
		{
			# Connected mode's RC QPs must be reaped before ib_ipoib
			# goes (see make bench's (g), bench/run-guest.sh).
			[ -z "$ia" ] || ip link set "$ia" down 2>/dev/null
			[ -z "$ib" ] || in_ns "$IB_NS" ip link set "$ib" down 2>/dev/null
			wait_for 20 ipoib_rc_gone || say "note $key IPoIB RC QPs left 20 s after the interfaces went down"
			[ -z "$osm" ] || kill "$osm" 2>/dev/null
			timeout 60 modprobe -r ib_ipoib 2>/dev/null
			ib_link_teardown >/dev/null 2>&1
		}
		trap on_exit EXIT
		# ipoib_mode MODE MTU: both interfaces to MODE with MTU.
		ipoib_mode()
		{
			echo "$1" >"/sys/class/net/$ia/mode" &&
				in_ns "$IB_NS" sh -c "echo $1 >/sys/class/net/$ib/mode" &&
				ip link set "$ia" mtu "$2" && in_ns "$IB_NS" ip link set "$ib" mtu "$2"
		}
		modprobe ib_umad 2>"$err" || { say "setupfail $key modprobe ib_umad"; exit 0; }
		ib_link_pair >"$err" 2>&1 && ib_link_up >>"$err" 2>&1 ||
			{ say "setupfail $key scire_ib ports: $(tr '\n' ' ' <"$err" | cut -c1-300)"; exit 0; }
		opensm -g "0x$(tr -d : </sys/class/infiniband/sib0/node_guid)" -f /dev/null >/dev/null 2>&1 &
		osm=$!
		if ! wait_for 60 ib_port_is sib0 Active || ! wait_for 60 ib_port_is sib1 Active; then
			say "setupfail $key the ports did not become ACTIVE under opensm"
			exit 0
		fi
		modprobe ib_ipoib 2>"$err" && wait_for 10 ipoib_of sib0 && wait_for 10 ipoib_of sib1 ||
			{ say "setupfail $key ib_ipoib made no interfaces"; exit 0; }
		ia=$(ipoib_of sib0) ib=$(ipoib_of sib1)
		{ ip link set "$ib" netns "$IB_NS" && ip addr add 10.92.0.1/24 dev "$ia" &&
			ip link set "$ia" up && in_ns "$IB_NS" ip addr add 10.92.0.2/24 dev "$ib" &&
			in_ns "$IB_NS" ip link set "$ib" up; } 2>"$err" ||
			{ say "setupfail $key IPoIB addresses: $(tr '\n' ' ' <"$err")"; exit 0; }
		if ! wait_for 30 ipoib_carrier "" "$ia" || ! wait_for 30 ipoib_carrier "$IB_NS" "$ib"; then
			say "setupfail $key IPoIB got no carrier (broadcast group not joined)"
			exit 0
		fi
		# ib_ipoib's symbols, for the profile.
		grep -E '^[0-9a-f]+ [tTwW] ' /proc/kallsyms >"$out/$key.kallsyms"
		say "config $key IPoIB: $ia (10.92.0.1) <-> $ib (netns $IB_NS, 10.92.0.2) over $IB_IF_A/$IB_IF_B"
		while read -r tool mtu n; do
			[ -n "$tool" ] || continue
			case $tool in
			tcp_veth) addr=$IB_IP_B ;;
			ipoib_ud) addr=10.92.0.2 mode=datagram ;;
			ipoib_cm) addr=10.92.0.2 mode=connected ;;
			*) say "setupfail $key unknown IPoIB row $tool"; continue ;;
			esac
			if [ "$tool" != tcp_veth ] && ! ipoib_mode "$mode" "$mtu" 2>"$err"; then
				say "setupfail $key $tool: cannot set $mode mode with MTU $mtu: $(tr '\n' ' ' <"$err")"
				continue
			fi
			# Uncounted first: the neighbour's address, and in
			# connected mode its RC connection, set up once.
			ip netns exec "$IB_NS" timeout 60 iperf3 -s -1 -B "$addr" >/dev/null 2>&1 &
			wpid=$!
			wait_for 10 listening "$wpid" 5201
			timeout 60 iperf3 -c "$addr" -n 1M >/dev/null 2>&1 ||
				say "note $key $tool: the warm-up iperf3 failed"
			wait "$wpid"
			for ((rep = 1; rep <= REPS; rep++)); do
				ipoib_one "$key" "$tool" "$mtu" "$n" "$rep" "$addr"
				ipoib_one "$key" "$tool" "$mtu" $((2 * n)) "$rep" "$addr"
			done
		done <<<"$IPOIB_ROWS"
	)
	# The subshell's runs are in DIR/runs; go on after its last ID.
	ID=$(awk '$1 > m { m = $1 } END { print m + 0 }' "$out/runs")
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
	wanted g && ipoib_rows g
	rdma_has scire0 || timeout 60 rdma link add scire0 type scire netdev eth0
	say "done $((SECONDS - t0))"
}

main
exit 0
