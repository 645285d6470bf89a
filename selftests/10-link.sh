#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scire0 (added on eth0 by the VM) is visible and usable: rdma link shows it
# ACTIVE on eth0, libibverbs lists it, and its port is an active Ethernet
# port whose GID table holds eth0's IPv4 address as a RoCE v2 GID.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

link=$(rdma link show scire0/1 2>&1) || fail "rdma link show scire0/1 failed: $link"
echo "$link"
grep -q 'netdev eth0\>' <<<"$link" || fail "scire0 is not on eth0: $link"
grep -q 'state ACTIVE\>' <<<"$link" || fail "scire0 is not ACTIVE: $link"

devs=$(ibv_devices 2>&1)
grep -qw scire0 <<<"$devs" || fail "ibv_devices does not list scire0 (is the provider built?):
$devs"

# The core fills the GID table from the netdev's addresses asynchronously.
gid_ok() { ibv_devinfo -v -d scire0 2>/dev/null | grep -q '::ffff:192\.168\.77\.2, RoCE v2'; }
wait_for 5 gid_ok
info=$(ibv_devinfo -v -d scire0 2>&1) || fail "ibv_devinfo -v -d scire0 failed: $info"
grep -E 'state:|link_layer:|GID\[' <<<"$info"
grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" || fail "port state is not PORT_ACTIVE"
grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$info" || fail "link_layer is not Ethernet"
grep -q '::ffff:192\.168\.77\.2, RoCE v2' <<<"$info" ||
	fail "no RoCE v2 GID ::ffff:192.168.77.2 after 5 s"
exit 0
