#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Killing both ends of a transfer frees everything: an ib_write_bw and then
# an ib_read_bw pair (server and client on $SCIRE_DEV, scire0, 60 s
# duration, 64 KiB messages) is killed with SIGKILL on both sides in the
# middle of the transfer; within 10 s the device's `rdma resource show`
# counts (pd, cq, qp, mr, ctx, ...) must be what they were before, and a
# short ib_write_bw must work afterwards.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
tmp=$(mktemp -d)
spid="" cpid=""
cleanup()
{
	[ -z "$spid" ] || kill -9 "$spid" 2>/dev/null
	[ -z "$cpid" ] || kill -9 "$cpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

base=$(rdma_res_counts "$dev")
[ -n "$base" ] || fail "rdma resource show has no line for $dev"
base_qp=$(rdma_res_count "$dev" qp)
echo "before: $base"

port=18800
for tool in ib_write_bw ib_read_bw; do
	port=$((port + 1))
	args=(-d "$dev" -x "$gid" -F -s 65536 -D 60 -p "$port")
	# stdbuf: perftest's output is a file here, and it must show up as
	# it is printed.
	stdbuf -oL "$tool" "${args[@]}" >"$tmp/server" 2>&1 &
	spid=$!
	wait_for 20 tcp_listening "$port" || {
		cat "$tmp/server"
		fail "$tool server did not listen on port $port within 20 s"
	}
	stdbuf -oL "$tool" "${args[@]}" 127.0.0.1 >"$tmp/client" 2>&1 &
	cpid=$!

	# Mid-transfer: the client printed its result header (perftest does
	# that once both QPs are connected, before the timed run) and both
	# sides' QPs exist.
	running() {
		grep -q '#bytes' "$tmp/client" &&
			[ "$(rdma_res_count "$dev" qp)" -ge $((base_qp + 2)) ]
	}
	wait_for 30 running || {
		echo "server:"; cat "$tmp/server"; echo "client:"; cat "$tmp/client"
		fail "$tool pair did not start transferring within 30 s (counts: $(rdma_res_counts "$dev"))"
	}
	sleep 2
	if ! kill -0 "$spid" 2>/dev/null || ! kill -0 "$cpid" 2>/dev/null; then
		echo "server:"; cat "$tmp/server"; echo "client:"; cat "$tmp/client"
		fail "$tool: a side ended before it was killed (-D 60 should keep both busy)"
	fi
	held=$(rdma_res_counts "$dev")
	kill -9 "$spid" "$cpid"
	wait "$spid" "$cpid" 2>/dev/null
	spid="" cpid=""

	back() { [ "$(rdma_res_counts "$dev")" = "$base" ]; }
	wait_for 10 back ||
		fail "$tool: 10 s after kill -9 of both sides mid-transfer, counts are '$(rdma_res_counts "$dev")', expected '$base' (while running: '$held')"
	echo "$tool: killed mid-transfer (held: $held), counts back to the baseline"
done

out=$(pair_run 60 $((port + 1)) ib_write_bw -d "$dev" -x "$gid" -F -s 65536 -n 20 \
	-p $((port + 1))) || fail "ib_write_bw after the kills:
$out"
echo "ib_write_bw after the kills: ok"
exit 0
