# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Helpers shared by the test VM's init (scripts/vm-guest-init), the TAP
# runner (selftests/run) and the shell selftests. Sourced, never run; not
# executable, so selftests/run does not take it for a test.
#
# Kernel log: every reader "consumes" the ring buffer (dmesg -c) into one
# file, $SCIRE_KMSG_LOG, so nothing is lost when the ring wraps and "what
# appeared since X" is a byte offset into that file.

SCIRE_KMSG_LOG=${SCIRE_KMSG_LOG:-/run/scire/dmesg.log}
export SCIRE_KMSG_LOG

# What makes a test fail whatever it printed.
SCIRE_KMSG_BAD='WARNING:|BUG:|Oops|KASAN|possible circular locking|lockdep|INFO: task .* blocked|hung_task|general protection'

# Move what is in the kernel ring buffer to $SCIRE_KMSG_LOG.
kmsg_collect()
{
	mkdir -p "$(dirname "$SCIRE_KMSG_LOG")"
	dmesg -c >>"$SCIRE_KMSG_LOG" 2>/dev/null || true
}

# Print a mark (byte offset) for kmsg_since.
kmsg_mark()
{
	kmsg_collect
	stat -c %s "$SCIRE_KMSG_LOG"
}

# Print the kernel log written since mark $1.
kmsg_since()
{
	kmsg_collect
	tail -c +"$(($1 + 1))" "$SCIRE_KMSG_LOG"
}

# Print the bad lines (with 2 lines of context before) logged since mark $1;
# exit status 0 if there were any.
kmsg_bad_since()
{
	kmsg_since "$1" | grep -E -B2 -A20 "$SCIRE_KMSG_BAD"
}

# --- for tests --------------------------------------------------------------

SCIRE_BUILD=${SCIRE_BUILD:-${SCIRE_ROOT:-.}/build}

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

skip()
{
	echo "SKIP: $*"
	exit 77
}

# Print the path of selftest program $1, or fail saying how to get it.
need_prog()
{
	local p="$SCIRE_BUILD/selftests/$1"

	[ -x "$p" ] || fail "missing $p: run make"
	echo "$p"
}

# wait_for SECONDS COMMAND...: run COMMAND every 0.2 s until it succeeds;
# exit status 1 if it did not within SECONDS (wall clock).
wait_for()
{
	local end=$((SECONDS + $1))

	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# Does `rdma link show` know device $1?
rdma_has()
{
	rdma link show "$1/1" >/dev/null 2>&1
}

# Port state (PORT_ACTIVE, PORT_DOWN, ...) of device $1 as ibv_devinfo
# reports it, or "none" if ibv_devinfo does not know the device.
ibv_port_state()
{
	local s

	s=$(ibv_devinfo -d "$1" 2>/dev/null | sed -n 's/^[[:space:]]*state:[[:space:]]*\(PORT_[A-Z_]*\).*/\1/p' | head -n1)
	echo "${s:-none (ibv_devinfo -d $1 does not know it)}"
}
