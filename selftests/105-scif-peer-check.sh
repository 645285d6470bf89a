#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The SCIF bridge checks who connects (docs/security.md): a connection
# request is taken only from an address of the node table, and only when
# the node it claims in its private data is the node of that address.
# Two nodes, nsA (node 1) and nsB (node 2), on a veth pair with scireA and
# scireB; a SCIF listener on node 2. From nsA, scif_peer_check forges
# requests with raw rdma_cm, as any host that can reach cm_port could:
# claiming a node that is not in the table, claiming node 2 itself, and
# claiming node 1 from an address of nsA that the table does not hold;
# each must be rejected and counted in /sys/kernel/config/scif/cm_rejected
# with a kernel log line. A request with a wrong magic is rejected too
# (not counted: it is not SCIF's). Last, an honest request from node 1's
# address is taken: the listener's one accept must report node 1, so
# none of the forged ones reached it.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/scif
prog=$(need_prog scif_peer_check) || exit 1
scif_need
[ -r "$cfs/cm_rejected" ] || fail "$cfs/cm_rejected missing"
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cm_port=$(cat /sys/module/scire_scif/parameters/cm_port)
port=2300

cleanup()
{
	[ -n "${lsn:-}" ] && kill "$lsn" 2>/dev/null
	scif_two_nodes_teardown
}
trap cleanup EXIT

scif_two_nodes
# An address of nsA that no node of the table has.
stranger=$TOPO_NET.3
in_ns "$TOPO_NS_A" ip addr add "$stranger/24" dev "$TOPO_IF_A" ||
	fail "cannot add $stranger to $TOPO_IF_A"

out=$(mktemp)
# The listener outlives the five forged requests before the honest one
# (each up to three tries of 30 s): 100 s ran out once on a host busy
# with three other VMs.
in_ns "$TOPO_NS_B" timeout 330 "$prog" listen "$port" 300 >"$out" 2>&1 &
lsn=$!
sleep 1

# forge WHAT SRC CLAIM [magic]: one request; prints its outcome.
forge()
{
	local what=$1 src=$2 claim=$3 try res
	shift 3
	# The first try may find the new address's GID not in place yet.
	for try in 1 2 3; do
		res=$(in_ns "$TOPO_NS_A" timeout 30 "$prog" forge "$src" "$TOPO_IP_B" \
			"$cm_port" "$claim" 2 "$port" "$@" 2>&1)
		case $res in *error:*) sleep 1 ;; *) break ;; esac
	done
	echo "# $what: $(echo "$res" | tr '\n' ' ')" >&2
	printf '%s' "$res"
}

before=$(cat "$cfs/cm_rejected")
dmesg_mark=$(dmesg | wc -l)
n=0
for c in "claims node 3, not in the table|$TOPO_IP_A|3" \
	"claims node 2, the listener's own|$TOPO_IP_A|2" \
	"claims node 1 from $stranger|$stranger|1"; do
	IFS='|' read -r what src claim <<<"$c"
	res=$(forge "$what" "$src" "$claim" | tail -n1)
	[ "$res" = rejected ] || fail "a request that $what was not rejected: $res"
	n=$((n + 1))
done
res=$(forge "wrong magic" "$TOPO_IP_A" 1 magic | tail -n1)
[ "$res" = rejected ] || fail "a request with a wrong magic was not rejected: $res"
after=$(cat "$cfs/cm_rejected")
[ "$after" -eq $((before + n)) ] ||
	fail "cm_rejected went from $before to $after; $n forged requests were sent"
logged=$(dmesg | tail -n +"$((dmesg_mark + 1))" | grep -c 'scire_scif: connection request claiming node') || :
[ "$logged" -ge 1 ] || fail "no kernel log line for the refused requests"
echo "cm_rejected: $before -> $after; $logged log lines"

# The honest request, last: the listener takes it and no other.
res=$(forge "honest, node 1 from $TOPO_IP_A" "$TOPO_IP_A" 1 | tail -n1)
[ "$res" = established ] || fail "node 1's own request was not taken: $res"
wait "$lsn"
st=$?
lsn=
cat "$out"
[ "$st" = 0 ] || fail "the listener failed (status $st)"
grep -qx "accepted node 1 port 4242" "$out" ||
	fail "the listener accepted something else than node 1's request"
[ "$(cat "$cfs/cm_rejected")" = "$after" ] || fail "the honest request was counted as refused"
exit 0
