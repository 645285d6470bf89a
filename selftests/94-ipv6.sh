#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RoCEv2 over IPv6: the other tests use the GIDs of IPv4 addresses; this one
# gives the veth ends fd77::1/64 and fd77::2/64 and uses the RoCE v2 GIDs the
# core builds from those, so packets carry IPv6 headers (RC, and UD with its
# 40-byte GRH on receive). Two topologies, as in lib.sh: scireA <-> scireB
# (two namespaces), then rxeA <-> scireB (interop). In each, scire is the
# client against the other side's server:
#   - ibv_rc_pingpong -c at 3000 bytes (path MTU 1024: multi-packet
#     messages) and ibv_ud_pingpong -c at 1024 bytes: every received buffer
#     checked and the byte count both sides report (addresses exchanged
#     over TCP on the IPv4 addresses; the RDMA traffic uses the IPv6 GIDs);
#   - rping -v -V over rdma_cm with the IPv6 address (IPv6 route and GID
#     resolution, then RC traffic): every ping written back intact.
# And once, scire_ud's unicast part on scireB's own IPv6 GID: every CQE
# field of a UD receive, sl 1 (RoCEv2 over IPv6) among them, and the IPv6
# header in the GRH.
# Every cell runs; the test fails listing those that did not pass.
# shellcheck disable=SC2317 # functions run by check_run and trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

trap topo_teardown EXIT
TOPO_IPV6=1

ud=$(need_prog scire_ud) || exit 1
port=19700
for topo in topo_scire_pair topo_rxe_scire; do
	"$topo" 9000
	topo_describe
	what="server $TOPO_DEV_A, client $TOPO_DEV_B, IPv6 GIDs"
	port=$((port + 1))
	check_run "ibv_rc_pingpong -c -s 3000 -m 1024 ($what)" \
		pingpong_pair ibv_rc_pingpong "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID6_A" "$TOPO_IP_A" \
		"$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID6_B" "$port" 3000 50 -m 1024
	port=$((port + 1))
	check_run "ibv_ud_pingpong -c -s 1024 ($what)" \
		pingpong_pair ibv_ud_pingpong "$TOPO_NS_A" "$TOPO_DEV_A" "$TOPO_GID6_A" "$TOPO_IP_A" \
		"$TOPO_NS_B" "$TOPO_DEV_B" "$TOPO_GID6_B" "$port" 1024 50
	port=$((port + 1))
	check_run "rping -S 4000 -C 10 -a $TOPO_IP6_A ($what)" \
		cm_rping "$TOPO_NS_A" "$TOPO_IP6_A" "$TOPO_NS_B" 4000 10 "$port"
	if [ "$topo" = topo_scire_pair ]; then
		check_run "scire_ud -t unicast on $TOPO_DEV_B's IPv6 GID" \
			in_ns "$TOPO_NS_B" "$ud" -d "$TOPO_DEV_B" -g "$TOPO_GID6_B" -n 1 -t unicast
	fi
	topo_teardown || fail "teardown of $topo failed"
done

check_report
