#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics across two kernels (scripts/vm --pair): an nvmet-rdma
# target on host a (configfs; namespace 1 a memory-backed null_blk,
# namespace 2 a file), nvme-rdma on host b. b discovers and connects,
# fio writes random blocks of 4 KiB to 1 MiB at depth 32 with crc32c
# verification on both namespaces, then b's view of the written range is
# compared with a's backing device; b disconnects, reconnects, and the
# data is still there; an `nvme reset` under fio I/O must not lose a
# verified block. Afterwards `rdma resource show` is back to its baseline
# on both hosts (the core's CQ pool aside).
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../nvme-lib.sh
. "$(dirname "$0")/../nvme-lib.sh"

# make check's time budget: the scire-to-scire pair runs it; other pairs
# when asked (SCIRE_PAIR_NVME=1).
pair_need_scire SCIRE_PAIR_NVME
dev=$PAIR_DEV
command -v nvme >/dev/null && command -v fio >/dev/null || skip "nvme-cli or fio missing"
size=64M
base=$(rdma_res_counts "$dev")
echo "host $SCIRE_HOST: $dev; before: $base"
pair_sync start 300 || fail "the other host never started"

rc=0
if [ "$SCIRE_HOST" = a ]; then
	trap nvme_target_down EXIT
	nvme_target_up "$SCIRE_ADDR" || { nvme_target_down; fail "nvmet target setup failed"; }
	echo "target: $NVME_NQN on $SCIRE_ADDR:$NVME_PORT (nullb0, a 64 MiB file)"
	pair_sync target-up 600 || fail "host b gave up"
	pair_sync written 900 || fail "host b did not finish writing"
	sync
	nvme_sum /dev/nullb0 "$size" >"$SCIRE_SHARED/nvme.a.ns1"
	nvme_sum /run/nvme-file.img "$size" >"$SCIRE_SHARED/nvme.a.ns2"
	pair_sync compared 300 || fail "host b did not finish comparing"
	pair_sync host-down 900 || fail "host b did not finish"
	nvme_target_down
	trap - EXIT
else
	pair_sync target-up 600 || fail "host a's target never came up"
	ctrl=$(nvme_host_connect "$SCIRE_PEER") || fail "nvme connect to $SCIRE_PEER failed"
	ns1=$(nvme_ns_dev "$ctrl" 1) && ns2=$(nvme_ns_dev "$ctrl" 2) || fail "no namespaces on $ctrl"
	echo "host: $ctrl, namespaces $ns1 and $ns2"
	for d in "$ns1" "$ns2"; do
		nvme_fio "$d" "$size" || { echo "fio verify on $d failed"; rc=1; }
	done
	[ "$rc" = 0 ] && echo "fio: random 4k-1m writes at depth 32 verified (crc32c) on both namespaces"
	h1=$(nvme_sum "$ns1" "$size") h2=$(nvme_sum "$ns2" "$size")
	pair_sync written 300
	pair_sync compared 300
	[ "$h1" = "$(cat "$SCIRE_SHARED/nvme.a.ns1")" ] || { echo "namespace 1: host and target differ"; rc=1; }
	[ "$h2" = "$(cat "$SCIRE_SHARED/nvme.a.ns2")" ] || { echo "namespace 2: host and target differ"; rc=1; }
	[ "$rc" = 0 ] && echo "host view = target backing on both namespaces"

	nvme disconnect -n "$NVME_NQN" || { echo "nvme disconnect failed"; rc=1; }
	ctrl=$(nvme_host_connect "$SCIRE_PEER") || fail "nvme reconnect failed"
	ns1=$(nvme_ns_dev "$ctrl" 1) || fail "no namespace 1 after reconnecting"
	[ "$(nvme_sum "$ns1" "$size")" = "$h1" ] || { echo "data changed across a reconnect"; rc=1; }
	[ "$rc" = 0 ] && echo "reconnected: data intact"

	# A controller reset in the middle of verified I/O.
	nvme_fio "$ns1" 32M &
	fio_pid=$!
	sleep 3
	nvme reset "/dev/$ctrl" || { echo "nvme reset failed"; rc=1; }
	wait "$fio_pid" || { echo "fio across nvme reset failed"; rc=1; }
	[ "$rc" = 0 ] && echo "nvme reset under I/O: fio verified"

	nvme disconnect -n "$NVME_NQN" || { echo "nvme disconnect failed"; rc=1; }
	modprobe -r nvme-rdma 2>/dev/null
	pair_sync host-down 300
fi
# The core's CQ pool (drivers/infiniband/core/cq.c) keeps CQs per device.
back() { [ "$(rdma_res_counts "$dev" | sed 's/cq=[0-9]*//')" = "$(echo "$base" | sed 's/cq=[0-9]*//')" ]; }
wait_for 20 back || { echo "resources not back: $(rdma_res_counts "$dev"), before: $base"; rc=1; }
pair_sync end 300
[ "$rc" = 0 ] || fail "NVMe-oF over $dev failed on host $SCIRE_HOST"
exit 0
