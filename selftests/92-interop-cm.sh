#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma_cm interop with rdma_rxe: rxeA on a veth end in init_net, scireB on
# the other end in netns nsB (topo_rxe_scire in lib.sh, active MTU 4096 on
# both), each tool in both directions (scire as server, then rxe as
# server), each side in its device's namespace: the CM REQ/REP/RTU and
# DREQ/DREP MADs and SIDR (udaddy) between the two GSI QPs, rdma_cm's
# address and route resolution in the namespaces, then RC and UD traffic.
#   - rping -v -V at 64 and 65000 bytes: every ping the client gets back
#     and every ping the server reads is compared with the text rping wrote;
#   - ucmatose (2 RC connections, 65536 bytes), udaddy (2 UD endpoints,
#     2048 bytes): "return status 0" on both sides (small messages are
#     rping's);
#   - perftest -R: ib_send_bw (RC and UD), ib_write_bw, ib_read_bw,
#     ib_atomic_bw, ib_read_lat: the result line must show the size and
#     iterations asked for (see perftest_verify, and cm_perftest for the
#     one perftest race that is run again).
# Every cell runs; the test fails listing those that did not pass.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

iters=${SCIRE_PERFTEST_ITERS:-5}
trap topo_teardown EXIT

topo_rxe_scire 9000
topo_describe

port=19500
for dir in "B A" "A B"; do
	read -r s c <<<"$dir"
	eval "sns=\$TOPO_NS_$s sdev=\$TOPO_DEV_$s sip=\$TOPO_IP_$s"
	eval "cns=\$TOPO_NS_$c cdev=\$TOPO_DEV_$c"
	what="server $sdev, client $cdev"
	for run in "64 10" "65000 4"; do
		read -r size count <<<"$run"
		port=$((port + 1))
		check_run "rping -S $size -C $count ($what)" \
			cm_rping "$sns" "$sip" "$cns" "$size" "$count" "$port"
	done
	for run in "ucmatose 2 4 65536" "udaddy 2 10 2048"; do
		read -r tool conns count size <<<"$run"
		port=$((port + 1))
		cmport=$port
		[ "$tool" = udaddy ] && cmport=7174
		check_run "$tool -c $conns -C $count -S $size ($what)" \
			cm_tool "$tool" "$sns" "$sip" "$cns" "$conns" "$count" "$size" "$cmport"
	done
	for run in "ib_send_bw 65536" "ib_send_bw 2048 -c UD" "ib_write_bw 65536" "ib_read_bw 65536" \
		"ib_atomic_bw -" "ib_read_lat 4096"; do
		read -r tool size extra <<<"$run"
		[ "$size" = - ] && size=""
		port=$((port + 1))
		# shellcheck disable=SC2086 # extra: options, split on purpose
		check_run "$tool -R${size:+ -s $size}${extra:+ $extra} ($what)" \
			cm_perftest "$tool" "$sns" "$sdev" "$sip" "$cns" "$cdev" "$size" "$iters" "$port" $extra
	done
done

check_report
