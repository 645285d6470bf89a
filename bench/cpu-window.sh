#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
#   bench/cpu-window.sh STAMPS CMD [ARG...]
#
# Runs a perftest bandwidth client CMD (with its stdout line-buffered by
# stdbuf, stderr joined to it) and copies its output to stdout; when the
# result table's header line ("#bytes ...") goes by, and then the result
# line, writes to STAMPS
#
#   start EPOCHREALTIME BUSY_TICKS
#   end EPOCHREALTIME BUSY_TICKS
#
# BUSY_TICKS: user + nice + system + irq + softirq of all CPUs from
# /proc/stat's "cpu" line, in USER_HZ ticks. perftest prints that header
# right before its warm-up and timed window (-D) and the result right
# after them, so the two stamps bracket the timed window (bench/scale.sh
# turns them into CPU seconds per GiB and per million messages). Reading
# /proc/stat with bash's read builtin forks nothing: the stamps cost the
# guest next to no CPU themselves. Exit status: CMD's.
set -u

stamps=$1
shift

stamp()
{
	local user nice sys irq softirq

	read -r _ user nice sys _ _ irq softirq _ </proc/stat
	printf '%s %s %s\n' "$1" "$EPOCHREALTIME" $((user + nice + sys + irq + softirq)) >>"$stamps"
}

: >"$stamps"
stdbuf -oL "$@" 2>&1 | {
	state=header
	while IFS= read -r line; do
		case $state in
		header)
			case $line in
			*'#bytes'*) stamp start; state=result ;;
			esac
			;;
		result)
			read -r f1 f2 _ <<<"$line"
			case ${f1:-x}${f2:-x} in
			*[!0-9]*) ;;
			*) stamp end; state=over ;;
			esac
			;;
		esac
		printf '%s\n' "$line"
	done
}
exit "${PIPESTATUS[0]}"
