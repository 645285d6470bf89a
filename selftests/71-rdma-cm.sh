#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma_cm on $SCIRE_DEV (scire0) talking to itself through its netdev's IPv4
# address (192.168.77.2): connection setup over GSI (QP1) MADs, address and
# route resolution, the RC and UD QPs rdma_cm creates. rping -v -V at three
# sizes (every ping the client gets back and every ping the server reads is
# compared with the text rping writes), ucmatose (2 RC connections), udaddy
# (2 UD endpoints through SIDR), and perftest with -R (rdma_cm instead of
# the TCP exchange): ib_send_bw (RC and UD), ib_write_bw, ib_read_bw,
# ib_atomic_bw, ib_send_lat, ib_write_lat, ib_read_lat, whose result line
# must show the size and iterations asked for (see perftest_verify, and
# cm_perftest for the one perftest race that is run again). Every cell runs;
# the test fails listing those that did not pass.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
netdev=$(dev_netdev "$dev")
ip=$(ip -4 -o addr show dev "$netdev" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
[ -n "$ip" ] || fail "$dev's netdev '$netdev' has no IPv4 address"
iters=${SCIRE_PERFTEST_ITERS:-5}
echo "$dev on $netdev, $ip, GID index $gid"

# The debug kernel spends ~10 s of start-up per cell: there, one size of
# each tool and the perftest cells of each transport and kind of op,
# unless SCIRE_DEBUG_FULL=1 (make check-debug).
full=1
! debug_quick || full=0
rpings=("64 10" "4000 10" "65000 4")
perftests=("ib_send_bw 65536" "ib_send_bw 2048 -c UD" "ib_write_bw 65536" "ib_read_bw 65536"
	"ib_atomic_bw -" "ib_send_lat 4096" "ib_write_lat 4096" "ib_read_lat 4096")
if [ "$full" = 0 ]; then
	rpings=("65000 4")
	perftests=("ib_send_bw 2048 -c UD" "ib_write_bw 65536" "ib_read_bw 65536" "ib_atomic_bw -")
fi

port=19100
for run in "${rpings[@]}"; do
	read -r size count <<<"$run"
	port=$((port + 1))
	check_run "rping -S $size -C $count" cm_rping "" "$ip" "" "$size" "$count" "$port"
done

port=$((port + 1))
check_run "ucmatose -c 2 -C 10 -S 100" cm_tool ucmatose "" "$ip" "" 2 10 100 "$port"
if [ "$full" = 1 ]; then
	port=$((port + 1))
	check_run "ucmatose -c 2 -C 4 -S 65536" cm_tool ucmatose "" "$ip" "" 2 4 65536 "$port"
	check_run "udaddy -c 2 -C 10 -S 100" cm_tool udaddy "" "$ip" "" 2 10 100 7174
fi
check_run "udaddy -c 2 -C 10 -S 2048" cm_tool udaddy "" "$ip" "" 2 10 2048 7174

for run in "${perftests[@]}"; do
	read -r tool size extra <<<"$run"
	[ "$size" = - ] && size=""
	port=$((port + 1))
	# shellcheck disable=SC2086 # extra: options, split on purpose
	check_run "$tool -R${size:+ -s $size}${extra:+ $extra}" \
		cm_perftest "$tool" "" "$dev" "$ip" "" "$dev" "$size" "$iters" "$port" $extra
done

check_report
