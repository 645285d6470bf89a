#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A mixed RoCE fabric of scire and rdma_rxe hosts (scripts/vm --hosts N):
# between every two hosts, ibv_rc_pingpong -c (4 KiB, every byte checked
# by the tool) and perftest's ib_write_bw (64 KiB), each host a server
# for some pairs and a client for others. A boot whose hosts all have
# scire (make check-hosts's) makes it mixed first: host b deletes scire0
# and adds rxe0 on the same eth0, as pair/90-scire-rxe.sh does for two;
# a boot with --devs "scire rxe scire" runs as it is.
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

if [ -z "${SCIRE_HOST:-}" ] || [ -z "${SCIRE_HOSTS:-}" ]; then
	skip "not on VM hosts (scripts/vm --hosts N)"
fi
read -ra hosts <<<"$(hosts_names)"
n=${#hosts[@]}
read -ra kinds <<<"$SCIRE_HOSTS_DEVS"
[[ " ${kinds[*]} " != *" none "* ]] || skip "a host has no RDMA device (devices: $SCIRE_HOSTS_DEVS)"
hosts_sync start 300 || fail "the other hosts never started"

# Make it mixed: scire everywhere -> rxe on b.
if [[ " ${kinds[*]} " != *" rxe "* ]]; then
	if [ "$SCIRE_HOST" = b ]; then
		rdma link delete scire0 || fail "rdma link delete scire0 on host b failed"
		modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
		rdma link add rxe0 type rxe netdev eth0 ||
			fail "rdma link add rxe0 type rxe netdev eth0 failed"
		echo "host b: scire0 deleted, rxe0 added on eth0"
	fi
	kinds[1]=rxe
	hosts_sync swapped 120 || fail "host b never swapped scire0 for rxe0"
fi
dev=$(rdma link show | awk '/ netdev eth0( |$)/ { sub("/.*", "", $2); print $2; exit }')
[ -n "$dev" ] || fail "no RDMA device on eth0 on host $SCIRE_HOST"
gid=$(need_dev_gid "$dev") || exit 1
echo "host $SCIRE_HOST: $dev (GID index $gid) on eth0 $SCIRE_ADDR; devices in host order: ${kinds[*]}"

failed=0
runs=0
for ((i = 0; i < n; i++)); do
	for ((j = i + 1; j < n; j++)); do
		# Alternate the roles: each host serves some pairs, and is a
		# client in others.
		if (((i + j) % 2)); then s=${hosts[i]} c=${hosts[j]}; else s=${hosts[j]} c=${hosts[i]}; fi
		sk=${kinds[$(($(host_index "$s") - 1))]} ck=${kinds[$(($(host_index "$c") - 1))]}
		saddr=$(host_addr "$s")
		what="$s ($sk) serves $c ($ck)"
		pp=(-d "$dev" -g "$gid" -c -n 200 -s 4096)
		hosts_duo "ibv_rc_pingpong -c -s 4096, $what" "$s" "$c" ibv_rc_pingpong "${pp[@]}" -- \
			ibv_rc_pingpong "${pp[@]}" "$saddr" || failed=$((failed + 1))
		pt=(-d "$dev" -x "$gid" -F -s 65536 -n 100)
		hosts_duo "ib_write_bw -s 65536, $what" "$s" "$c" ib_write_bw "${pt[@]}" -- \
			ib_write_bw "${pt[@]}" "$saddr" || failed=$((failed + 1))
		runs=$((runs + 2))
	done
done
[ "$failed" = 0 ] || fail "$failed of $runs runs failed on host $SCIRE_HOST"
echo "host $SCIRE_HOST: $runs runs between every two of $n hosts, none failed here"
exit 0
