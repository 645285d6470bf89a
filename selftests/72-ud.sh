#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UD on $SCIRE_DEV (scire0): scire_ud (datagrams from 1 byte up to the
# port's active MTU with and without immediate data, every byte, CQE field
# and GRH checked; replies through ibv_create_ah_from_wc; a wrong Q_Key;
# multicast attach, delivery and detach; a message of MTU + 1 bytes), then
# ibv_ud_pingpong, server and client on the same device through its IPv4
# RoCE v2 GID (TCP exchange over 127.0.0.1), at sizes 1, 1024 and the active
# MTU. ibv_ud_pingpong has no -c data check: it checks that every receive
# completes; both sides must exit 0 within 120 s. Every part runs even if
# an earlier one failed.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_ud) || exit 1
dev=$SCIRE_DEV
gid=$(need_dev_gid "$dev") || exit 1
mtu=$(ibv_devinfo -d "$dev" | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' | head -n1)
[ -n "$mtu" ] || fail "cannot read port 1's active MTU of $dev: $(ibv_devinfo -d "$dev" 2>&1 | grep -i mtu)"
echo "$dev, GID index $gid, active MTU $mtu"

failed=()

quirks=()
if ! dev_is_scire "$dev"; then
	# rdma_rxe: the IPv4 header it puts in the GRH of a looped-back
	# datagram has checksum 0 (see scire_ud.c); scire must pass without -R.
	quirks=(-R)
fi
start=$SECONDS
if "$prog" -d "$dev" -g "$gid" -n 2 "${quirks[@]}"; then
	echo "scire_ud: ok ($((SECONDS - start)) s)"
else
	failed+=("scire_ud -d $dev -g $gid -n 2${quirks[*]:+ ${quirks[*]}}")
fi

port=18760
sizes=(1)
[ "$mtu" -le 1024 ] || sizes+=(1024)
sizes+=("$mtu")
for size in "${sizes[@]}"; do
	port=$((port + 1))
	start=$SECONDS
	if out=$(pair_run 120 "$port" ibv_ud_pingpong -d "$dev" -g "$gid" -s "$size" -n 20 \
		-p "$port"); then
		echo "ibv_ud_pingpong -s $size: ok ($((SECONDS - start)) s): $(grep -m1 'bytes in' <<<"$out")"
	else
		echo "ibv_ud_pingpong -s $size -n 20 between two QPs of $dev:"
		echo "$out"
		failed+=("ibv_ud_pingpong -s $size")
	fi
done
if [ ${#failed[@]} != 0 ]; then
	msg=$(printf '%s; ' "${failed[@]}")
	fail "${msg%; }"
fi
exit 0
