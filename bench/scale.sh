# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # run-guest.sh's variables: set there, used there
#
# Issue 18's CPU cost and scale measurements, sourced by bench/run-guest.sh
# (which defines say, pair, perftest_value, RUNS, quick, scratch ...).
#
# CPU cost: in (a), (b) and (b') every good *_bw run's client goes through
# cpu_window (below), which samples /proc/stat's busy ticks (user, nice,
# system, irq, softirq; all CPUs) when perftest starts and ends its timed
# window. After the run's line comes
#
#   BENCH cpu KEY TOOL SIZE BUSY_TICKS USER_HZ WINDOW_S ITERS
#
# and scripts/bench derives CPU seconds per GiB and per million messages.
# The server, the client and the device's own work share the guest's CPUs
# on one host: the figure is the whole guest's.
#
# Scale, on one device, in (b) (scire0) and (a) (rxe0) of the same boot:
#
#   scale KEY ib_write_bw_qps N MIB_PER_S   ib_write_bw -q N -s 65536 (the
#                                           aggregate; N = 1 4 16 64,
#                                           quick: 1 4), timed between
#                                           margins (SCALE_MARGIN)
#   scale KEY rc_qp_connect N SECONDS       build/bench/qp_scale qps: N RC
#   scale KEY rc_qp_kib N KIB_PER_QP        QPs created and connected in
#   scale KEY rc_qp_slab_kib N KIB_PER_QP   pairs (4096; quick: 128),
#   scale KEY rc_qp_destroy N SECONDS       MemAvailable and Slab per QP,
#                                           the time to destroy them
#   scale KEY reg_mr BYTES MSEC             qp_scale reg: ibv_reg_mr of a
#                                           touched 1 GiB buffer, median of
#                                           3 (quick: 64 MiB, once)
#   scalefail KEY ROW SIZE WHY              none of that row's runs was
#                                           good; the output follows as
#                                           "BENCH| " lines

# The client wrapper pair() puts in front of its client (empty: none).
CPU_PRE=()
# coreutils' stdbuf is this library in LD_PRELOAD: set it directly, one
# exec less per run (under TCG every exec costs a tenth of a second).
CPU_STDBUF=/usr/libexec/coreutils/libstdbuf.so

# cpu_window STAMPS CMD [ARG...]: run the perftest bandwidth client CMD
# with its stdout line-buffered (stderr joined to it) and copy its output
# to stdout; when its result header ("#bytes ...") goes by, and then its
# result line, append to STAMPS
#
#   start EPOCHREALTIME BUSY_TICKS
#   end EPOCHREALTIME BUSY_TICKS
#
# BUSY_TICKS: user + nice + system + irq + softirq of all CPUs from
# /proc/stat's "cpu" line, in USER_HZ ticks. perftest prints that header
# right before its warm-up and timed window (-D) and the result right
# after them, so the two stamps bracket the window. A function, not a
# script: the runs it wraps are in init_net, and a bash started per run
# would cost more than it measures; bash's read builtin reads /proc/stat
# without forking. Exit status: CMD's.
cpu_window()
{
	local stamps=$1 state=header line f1 f2

	shift
	: >"$stamps"
	LD_PRELOAD=$CPU_STDBUF _STDBUF_O=L "$@" 2>&1 | while IFS= read -r line; do
		case $state in
		header)
			case $line in
			*'#bytes'*) cpu_stamp start "$stamps"; state=result ;;
			esac
			;;
		result)
			read -r f1 f2 _ <<<"$line"
			case ${f1:-x}${f2:-x} in
			*[!0-9]*) ;;
			*) cpu_stamp end "$stamps"; state=over ;;
			esac
			;;
		esac
		printf '%s\n' "$line"
	done
	return "${PIPESTATUS[0]}"
}

# cpu_stamp WORD STAMPS: append "WORD EPOCHREALTIME BUSY_TICKS" to STAMPS.
cpu_stamp()
{
	local user nice sys irq softirq

	read -r _ user nice sys _ _ irq softirq _ </proc/stat
	printf '%s %s %s\n' "$1" "$EPOCHREALTIME" $((user + nice + sys + irq + softirq)) >>"$2"
}
CPU_KEYS="a b b'"
CPU_HZ=""

# cpu_arm KEY TOOL [MODE]: make the next run's client sample the CPU, if
# it is a bw run of a configuration CPU cost is taken in.
cpu_arm()
{
	CPU_PRE=()
	case $2 in *_bw) ;; *) return 0 ;; esac
	# Not tail runs, not on the pair; and in init_net only (a function
	# cannot run under ip netns exec).
	[ -z "${3:-}" ] && [ -z "$PAIR_DIR" ] && [ -z "$C_NS" ] || return 0
	case " $CPU_KEYS " in *" $1 "*) ;; *) return 0 ;; esac
	if [ -z "$CPU_HZ" ]; then
		CPU_HZ=$(getconf CLK_TCK 2>/dev/null) || CPU_HZ=100
		say "info cpu_hz $CPU_HZ"
		[ -r "$CPU_STDBUF" ] || say "note $1 CPU cost not measured: no $CPU_STDBUF (coreutils' stdbuf) in the guest"
	fi
	[ -r "$CPU_STDBUF" ] || return 0
	rm -f "$scratch/cpu"
	CPU_PRE=(cpu_window "$scratch/cpu")
}

# cpu_say KEY TOOL SIZE VALUE: the BENCH cpu line of the good run just
# said (VALUE: its "MIB_PER_S perftest=X,iters=N"), if it was sampled.
cpu_say()
{
	local it t0="" t1="" b0 b1 w t b

	[ "${#CPU_PRE[@]}" -gt 0 ] || return 0
	CPU_PRE=()
	it=${4##*iters=}
	while read -r w t b; do
		case $w in
		start) t0=$t b0=$b ;;
		end) t1=$t b1=$b ;;
		esac
	done <"$scratch/cpu" 2>/dev/null
	if [ -z "$t0" ] || [ -z "$t1" ]; then
		say "note $1 CPU cost of $2 $3: perftest's header or result line not seen by cpu_window"
		return 0
	fi
	say "cpu $1 $2 $3 $((b1 - b0)) $CPU_HZ $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $it"
}

# scale_fail KEY ROW SIZE WHY FILE...: a scalefail line and the FILEs.
scale_fail()
{
	local key=$1 row=$2 size=$3 why=$4

	shift 4
	say "scalefail $key $row $size $why"
	[ $# = 0 ] || cat "$@" 2>/dev/null | sed 's/^/BENCH| /'
}

# The -q N runs' margin (perftest -f), seconds, before and after their
# timed window: the window starts when every QP's pipeline is full. Sixty-
# four QPs of perftest's default depth (128 WRs of 64 KiB each) hold
# 512 MiB, 0.4 s of scire's fast path; timed from the first post, as the
# matrix's -f 0 runs are, a 1 s window then counted mostly that filling
# (0.53x one QP), not the rate with N QPs at work (0.88-0.92x in one
# boot, bench/profiles.md, qp64).
SCALE_MARGIN=1

# scale_qps KEY N...: ib_write_bw -q N at 64 KiB between the current
# sides, for each N (1 included), RUNS good runs of each, MAX_ATTEMPTS
# tries at most, in rounds of one try of every N still short: what is
# compared is then measured at the same times.
scale_qps()
{
	# rounds() stops at MAX_TIMEOUTS; these runs do not count timeouts
	# there (a timed-out N is given up by itself, below).
	local scale_key=$1 TIMEOUTS=0
	local -a scale_args

	shift
	scale_args=(-F -D $((BW_SECS + 2 * SCALE_MARGIN)) -f "$SCALE_MARGIN")
	rounds scale_try "$@"
}

# scale_try N TRIES: rounds' TRY for scale_qps() (its scale_key and
# scale_args): one ib_write_bw -q N; a timeout gives N up, as its next
# tries would only time out too.
scale_try()
{
	local n=$1 try=$2 why val rc

	PORT=$((PORT + 1)) TMO=$RUN_TIMEOUT
	why=$(pair ib_write_bw "${scale_args[@]}" -s 65536 -q "$n")
	rc=$?
	if [ "$rc" = 0 ] &&
		val=$(perftest_value ib_write_bw 65536 "$BW_SECS" "$(cat "$scratch/client")"); then
		say "scale $scale_key ib_write_bw_qps $n ${val%% *}"
		return 0
	fi
	[ "$rc" = 0 ] && why=$val
	say "note $scale_key ib_write_bw -q $n try $try failed: ${why//$'\n'/ }"
	if [ "${ROUNDS_GOOD[$n]:-0}" = 0 ] && { [ "$rc" = 2 ] || [ "$try" -ge "$MAX_ATTEMPTS" ]; }; then
		scale_fail "$scale_key" ib_write_bw_qps "$n" \
			"no good run of ib_write_bw ${scale_args[*]} -s 65536 -q $n in $try tries" \
			"$scratch/server" "$scratch/client"
	fi
	[ "$rc" != 2 ] || return 2
	return 1
}

# scale KEY DEV GID: the scale rows for device DEV (port 1, GID index
# GID), talking to itself.
scale()
{
	local key=$1 dev=$2 gid=$3 start=$SECONDS n nqp mib reps out rc prog=$SCIRE_BUILD/bench/qp_scale
	local qps secs kib slab dsecs us rest

	CPU_PRE=()
	if [ "$quick" = 1 ]; then
		qps="1 4" nqp=128 mib=64 reps=1
	else
		qps="1 4 16 64" nqp=4096 mib=1024 reps=3
	fi
	say "info scale_$key ib_write_bw -F -D $((BW_SECS + 2 * SCALE_MARGIN)) -f $SCALE_MARGIN -s 65536 -q N (N: $qps); qp_scale qps -n $nqp; qp_scale reg -m $mib -k $reps"
	say "note $key scale: ulimit -l $(ulimit -l) (memlock; perftest and qp_scale run as root)"
	# shellcheck disable=SC2086 # the list of N
	scale_qps "$key" $qps

	if [ ! -x "$prog" ]; then
		scale_fail "$key" rc_qp_connect "$nqp" "$prog missing: run make"
		scale_fail "$key" reg_mr $((mib << 20)) "$prog missing: run make"
		return
	fi
	timeout -k 5 300 "$prog" qps -d "$dev" -x "$gid" -n "$nqp" >"$scratch/client" 2>"$scratch/server"
	rc=$?
	out=$(awk '$1 == "rc_qp_connect" && NF == 6' "$scratch/client")
	if [ "$rc" = 0 ] && [ -n "$out" ]; then
		read -r _ n secs kib slab dsecs <<<"$out"
		say "scale $key rc_qp_connect $n $secs"
		say "scale $key rc_qp_kib $n $kib"
		say "scale $key rc_qp_slab_kib $n $slab"
		say "scale $key rc_qp_destroy $n $dsecs"
		say "note $key qp_scale: $n RC QPs created and connected in $secs s, destroyed in $dsecs s; $(grep -m1 'max_qp' "$scratch/server" | sed 's/^qp_scale: //')"
	else
		scale_fail "$key" rc_qp_connect "$nqp" "qp_scale qps -d $dev -x $gid -n $nqp failed (status $rc)" \
			"$scratch/server" "$scratch/client"
	fi
	timeout -k 5 300 "$prog" reg -d "$dev" -m "$mib" -k "$reps" >"$scratch/client" 2>"$scratch/server"
	rc=$?
	out=$(awk '$1 == "reg_mr" && NF >= 3' "$scratch/client")
	if [ "$rc" = 0 ] && [ -n "$out" ]; then
		read -r _ n us rest <<<"$out"
		say "scale $key reg_mr $n $(awk -v u="$us" 'BEGIN { printf "%.3f", u / 1000 }')"
		say "note $key qp_scale: ibv_reg_mr of $mib MiB: $rest usec"
	else
		scale_fail "$key" reg_mr $((mib << 20)) "qp_scale reg -d $dev -m $mib -k $reps failed (status $rc)" \
			"$scratch/server" "$scratch/client"
	fi
	say "note $key scale took $((SECONDS - start)) s"
}
