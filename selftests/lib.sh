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

# --- data-path tests (70 and up) ---------------------------------------------

# The device the data-path tests run on: scire0 (what `make check` sets up)
# unless SCIRE_DEV names another, e.g. SCIRE_DEV=rxe0 to hold scire's tests
# against rdma_rxe.
SCIRE_DEV=${SCIRE_DEV:-scire0}

# Is RDMA device $1 a scire device (it exports scire_abi_version)?
dev_is_scire()
{
	[ -e "/sys/class/infiniband/$1/scire_abi_version" ]
}

# Print the netdev under RDMA device $1 (from rdma link show).
dev_netdev()
{
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

# Print the index of port 1's first RoCE v2 GID of RDMA device $1 that holds
# an IPv4-mapped address (::ffff:a.b.c.d, the GID for a netdev's IPv4
# address); exit status 1 if there is none.
roce_v2_ipv4_gid()
{
	local d=/sys/class/infiniband/$1/ports/1 i

	# grep reads the whole table in one go (rxe has 1024 entries); no
	# process substitution: the test VM has no /dev/fd.
	i=$(grep -l '^0000:0000:0000:0000:0000:ffff:' "$d"/gids/* 2>/dev/null |
		sed 's|.*/||' | sort -n | while read -r i; do
			if [ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ]; then
				echo "$i"
				break
			fi
		done)
	[ -n "$i" ] || return 1
	echo "$i"
}

# Check that RDMA device $1 exists and is ACTIVE, wait up to 5 s for its
# IPv4 RoCE v2 GID (the core adds GIDs asynchronously) and print its index.
# Fails the test (exit 1) otherwise; use as gid=$(need_dev_gid DEV) || exit 1.
need_dev_gid()
{
	rdma_has "$1" || fail "no RDMA device $1 (SCIRE_DEV=$SCIRE_DEV): $(rdma link show 2>&1)"
	wait_for 5 sh -c "rdma link show '$1/1' | grep -q 'state ACTIVE'" ||
		fail "$1 port 1 is not ACTIVE: $(rdma link show "$1/1" 2>&1)"
	wait_for 5 roce_v2_ipv4_gid "$1" ||
		fail "$1 port 1 has no RoCE v2 GID with an IPv4 address (netdev $(dev_netdev "$1"): $(ip -4 -br addr show "$(dev_netdev "$1")" 2>&1))"
	roce_v2_ipv4_gid "$1"
}

# Print RDMA device $1's line of `rdma resource show` as "pd=1 cq=1 qp=1 ...".
rdma_res_counts()
{
	rdma resource show | awk -v dev="$1:" '$2 == dev {
		for (i = 3; i < NF; i += 2) printf "%s=%s ", $i, $(i + 1)
	}'
}

# Print one count (pd, cq, qp, mr, ...) of RDMA device $1's resources.
rdma_res_count()
{
	rdma_res_counts "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Is something listening on TCP port $1?
tcp_listening()
{
	ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# pair_run SECS PORT CMD [ARG...]: the client/server pattern of
# ibv_*_pingpong and perftest. Runs CMD ARG... as the server; once it
# listens on TCP PORT (ARG... must make it use PORT), runs CMD ARG...
# 127.0.0.1 as its client. Each side runs under timeout SECS, so a hang is
# a failure. Prints the client's output; exit status 0 if both sides
# exited 0, else prints both outputs and says what went wrong.
pair_run()
{
	local secs=$1 port=$2 tmp spid src crc

	shift 2
	tmp=$(mktemp -d)
	timeout -k 5 "$secs" "$@" >"$tmp/server" 2>&1 &
	spid=$!
	if ! wait_for 20 tcp_listening "$port"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "server '$*' did not listen on port $port within 20 s; its output:"
		sed 's/^/  | /' "$tmp/server"
		rm -rf "$tmp"
		return 1
	fi
	timeout -k 5 "$secs" "$@" 127.0.0.1 >"$tmp/client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if [ "$src" = 0 ] && [ "$crc" = 0 ]; then
		cat "$tmp/client"
		rm -rf "$tmp"
		return 0
	fi
	echo "'$*': server exit status $src, client exit status $crc (124: timed out after ${secs}s)"
	echo "server output:"
	sed 's/^/  | /' "$tmp/server"
	echo "client output:"
	sed 's/^/  | /' "$tmp/client"
	rm -rf "$tmp"
	return 1
}
