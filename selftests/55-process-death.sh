#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Objects die with their process: scire_hold allocates a context, PD, MR and
# CQ on scire0; after kill -9 the core's resource counts for scire0 must be
# back to what they were (rdma resource show), five times over, and the
# device must still work.
# shellcheck disable=SC2317 # functions run by trap and wait_for
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_hold) || exit 1
tmp=$(mktemp -d)
pid=""
cleanup()
{
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# "pd 1 cq 1 qp 0 cm_id 0 mr 1 ctx 1 srq 0" for scire0, as "pd=1 cq=1 ...".
counts()
{
	rdma resource show | awk '$2 == "scire0:" {
		for (i = 3; i < NF; i += 2) printf "%s=%s ", $i, $(i + 1)
	}'
}

base=$(counts)
[ -n "$base" ] || fail "rdma resource show has no line for scire0"
echo "before: $base"

for round in 1 2 3 4 5; do
	"$prog" -d scire0 >"$tmp/hold" 2>&1 &
	pid=$!
	wait_for 10 grep -q '^ready' "$tmp/hold" || {
		cat "$tmp/hold"
		fail "round $round: scire_hold did not print 'ready' within 10 s"
	}
	held=$(counts)
	[ "$held" != "$base" ] ||
		fail "round $round: scire_hold holds objects but counts did not change: $held"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	pid=""
	back() { [ "$(counts)" = "$base" ]; }
	wait_for 5 back ||
		fail "round $round: after kill -9, counts are '$(counts)', expected '$base' (held: '$held')"
done
echo "after 5 kill -9 rounds: $(counts)"

out=$("$(need_prog scire_objects)" -d scire0 2>&1) ||
	fail "scire0 unusable after the kills: $out"
exit 0
