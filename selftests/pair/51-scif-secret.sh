#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The node table's shared secret (kernel/scif/scif_auth.c) across two
# kernels: each host has its own scire_scif and its own secret, which one
# kernel cannot have (108 plays the other end with raw rdma_cm). Both
# hosts write the same node table as pair/50 (node 1 = a, node 2 = b);
# host b listens (scif_secret_check listen) and host a connects with
# scif_connect() and sends "secret-ok", phase by phase:
#   - the same secret on both: connected, the data read on b; then
#     scif_user's client (a) and server (b) with the proofs: stream,
#     windows, RMA of each kind, fences;
#   - different secrets: a gets ECONNREFUSED, and each side counts one in
#     auth_failed (a: b's proof is wrong; b: a closed before its proof);
#     b accepts nothing;
#   - a secret on a only: b refuses the request with a nonce (b counts
#     one), a gets ECONNREFUSED; a secret on b only: b refuses the request
#     without one (b counts one), a gets ECONNREFUSED;
#   - both cleared: a plain connection works again.
# The secrets are cleared at the end, whatever happened.
# scire to scire only (SCIRE_PAIR_SCIF=1 runs it on any pair).
# shellcheck disable=SC2317 # cleanup runs by trap
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

pair_need_scire SCIRE_PAIR_SCIF
cfs=/sys/kernel/config/scif
nodes=$cfs/nodes
[ -d /sys/module/scire_scif ] || skip "scire_scif is not loaded on host $SCIRE_HOST"
[ -d "$nodes" ] || fail "$nodes missing: configfs not mounted?"
prog=$SCIRE_BUILD/selftests/scif_secret_check
# meson builds it only where OpenSSL's libcrypto is (selftests/meson.build).
[ -x "$prog" ] || skip "scif_secret_check not built (no libcrypto when meson set up)"
user=$(need_prog scif_user) || exit 1
{ [ -e "$cfs/secret" ] && [ -r "$cfs/auth_failed" ]; } || fail "$cfs/secret or auth_failed missing"
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

cleanup()
{
	[ -n "${lsn:-}" ] && kill "$lsn" 2>/dev/null
	echo >"$cfs/secret" 2>/dev/null
	rmdir "$nodes/1" "$nodes/2" 2>/dev/null
}
trap cleanup EXIT

mkdir -p "$nodes/1" "$nodes/2" || fail "cannot create nodes 1 and 2"
{ echo 192.168.78.1 >"$nodes/1/addr" && echo 192.168.78.2 >"$nodes/2/addr"; } ||
	fail "cannot set the nodes' addresses"
# One secret written and the attribute there: else this kernel has no
# hmac(sha256), and both hosts must agree to skip.
ok=1
printf %s probe >"$cfs/secret" 2>/dev/null || ok=0
echo >"$cfs/secret"
echo "$ok" >"$SCIRE_SHARED/${0##*/}.hmac.$SCIRE_HOST"
pair_sync start 300 || fail "the other host never started"
for h in a b; do
	[ "$(cat "$SCIRE_SHARED/${0##*/}.hmac.$h")" = 1 ] ||
		skip "host $h cannot set a secret (no hmac(sha256) in its kernel)"
done

auth() { cat "$cfs/auth_failed"; }
errs=()
port=2700

# phase NAME SECRET_A SECRET_B WANT DELTA_A DELTA_B: each host sets its
# secret ('' clears it); b listens, a connects to node 2. WANT: connected
# (b accepts a with a's data) or refused (a gets ECONNREFUSED, b accepts
# nothing). Each host's auth_failed must grow by exactly its DELTA.
phase()
{
	local name=$1 want=$4 mine delta before res now out

	port=$((port + 1))
	if [ "$SCIRE_HOST" = a ]; then mine=$2 delta=$5; else mine=$3 delta=$6; fi
	if [ -n "$mine" ]; then
		printf %s "$mine" >"$cfs/secret" || fail "cannot set the secret"
	else
		echo >"$cfs/secret" || fail "cannot clear the secret"
	fi
	before=$(auth)
	out=$(mktemp)
	if [ "$SCIRE_HOST" = b ]; then
		timeout 150 "$prog" listen "$port" 140 1 >"$out" 2>&1 &
		lsn=$!
		sleep 1
	fi
	pair_sync "$name-ready" 120 || fail "phase $name: the other host did not get ready"
	if [ "$SCIRE_HOST" = a ]; then
		res=$(timeout 60 "$prog" connect 2 "$port" 2>&1)
		echo "$res" >"$SCIRE_SHARED/${0##*/}.$name"
	fi
	pair_sync "$name-done" 120 || fail "phase $name: the other host did not finish"
	res=$(cat "$SCIRE_SHARED/${0##*/}.$name")
	case $want in
	connected) [ "$res" = connected ] || errs+=("$name: a's scif_connect(): $res, expected connected") ;;
	refused) [ "$res" = "refused: Connection refused" ] ||
		errs+=("$name: a's scif_connect(): $res, expected ECONNREFUSED") ;;
	esac
	# b's listener ends by itself once it has read a's data.
	if [ "$SCIRE_HOST" = b ] && [ "$want" = connected ]; then
		wait_for 30 pid_gone "$lsn" || errs+=("$name: b's listener still waits: $(cat "$out")")
	fi
	# The side that finds out counts; b may find out after a returned.
	[ "$delta" = 0 ] || wait_for 15 sh -c "[ \$(cat $cfs/auth_failed) -ge $((before + delta)) ]"
	sleep 1
	now=$(auth)
	[ "$now" = $((before + delta)) ] ||
		errs+=("$name: host $SCIRE_HOST's auth_failed went from $before to $now, not by $delta")
	if [ "$SCIRE_HOST" = b ]; then
		kill "$lsn" 2>/dev/null
		wait "$lsn" 2>/dev/null
		if [ "$want" = refused ]; then
			! grep -q '^accepted' "$out" || errs+=("$name: b accepted: $(cat "$out")")
		else
			grep -q "^accepted node 1 port [0-9]* data secret-ok$" "$out" ||
				errs+=("$name: b did not accept node 1 with its data: $(cat "$out")")
		fi
		lsn=
		echo "phase $name: a's connect: $res; b: $(grep '^accepted' "$out" || echo 'accepted nothing'); auth_failed +$((now - before))"
	else
		echo "phase $name: a's connect: $res; a: auth_failed +$((now - before))"
	fi
	rm -f "$out"
	pair_sync "$name-checked" 120 || fail "phase $name: the other host did not check"
}

phase same "table-secret" "table-secret" connected 0 0
# The same secret: scif_user's whole client across the kernels.
port=$((port + 1))
before=$(auth)
pair_duo "scif_user server (b)/client (a), the same secret on both" b "$user" server "$port" -- \
	"$user" client-remote 2 "$port" ||
	errs+=("scif_user with the same secret failed on host $SCIRE_HOST")
[ "$(auth)" = "$before" ] || errs+=("scif_user with the same secret: auth_failed $before -> $(auth)")
phase different "table-secret" "other-secret" refused 1 1
phase a-only "table-secret" "" refused 0 1
phase b-only "" "table-secret" refused 0 1
phase cleared "" "" connected 0 0

[ "${#errs[@]}" = 0 ] || fail "host $SCIRE_HOST: $(printf '%s; ' "${errs[@]}")"
echo "host $SCIRE_HOST: every phase as expected; secret cleared"
exit 0
