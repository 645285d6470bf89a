#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The node table's shared secret (kernel/scif/scif_auth.c,
# docs/security.md): with /sys/kernel/config/scif/secret set, a connection
# is taken only when both sides prove the secret without sending it. Two
# nodes of one kernel, nsA (node 1) and nsB (node 2), as in 105; one
# kernel has one table and so one secret, so the other end with another
# secret or none is played by scif_secret_check with raw rdma_cm:
#   - the secret is write-only: reading it fails and shows nothing; too
#     long a secret is refused;
#   - against a SCIF listener on node 2, from nsA: a request without a
#     nonce (an older node, or one without the secret), a client with
#     another secret (its proof is wrong; it also finds the listener's
#     proof wrong), a client that never sends its proof (the accept waits
#     5 s), one that sends data before it, and one that replays an earlier
#     request's nonce and proof: each refused and counted in auth_failed,
#     with a kernel log line;
#   - a raw client with the right secret is taken and its data read, and
#     so is node 1's own scif_connect() with scif_send(): the listener
#     accepts these two and nothing else;
#   - node 1 connecting to a stand-in for node 2 that proves another
#     secret, or none (an older node), gets ECONNREFUSED at once, counted;
#   - with the secret cleared, a request with a nonce is refused (counted)
#     and a plain scif_connect() works again.
# shellcheck disable=SC2317 # functions run by trap
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/scif
prog=$SCIRE_BUILD/selftests/scif_secret_check
# meson builds it only where OpenSSL's libcrypto is (selftests/meson.build).
[ -x "$prog" ] || skip "scif_secret_check not built (no libcrypto when meson set up)"
scif_need
[ -e "$cfs/secret" ] || fail "$cfs/secret missing"
[ -r "$cfs/auth_failed" ] || fail "$cfs/auth_failed missing"
export LD_LIBRARY_PATH=$SCIRE_BUILD/libscif${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cm_port=$(cat /sys/module/scire_scif/parameters/cm_port)
port=2310
secret=s3cret-of-the-table
other=another-secret

cleanup()
{
	[ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
	echo >"$cfs/secret" 2>/dev/null
	scif_two_nodes_teardown
}
trap cleanup EXIT

# count: auth_failed now.
count() { cat "$cfs/auth_failed"; }

# expect_count BEFORE N WHAT: auth_failed grew by exactly N since BEFORE.
expect_count()
{
	local now

	now=$(count)
	[ "$now" -eq $(($1 + $2)) ] || fail "$3: auth_failed went from $1 to $now, not by $2"
}

# forge HOW [ARGS]: one raw request from node 1's address; prints the
# outcome (last line: rejected, or established ...).
forge()
{
	local try res

	for try in 1 2 3; do
		res=$(in_ns "$TOPO_NS_A" timeout 60 "$prog" forge "$TOPO_IP_A" "$TOPO_IP_B" \
			"$cm_port" 1 2 "$port" "$@" 2>&1)
		case $res in error:*) sleep 1 ;; *) break ;; esac
	done
	echo "# forge $1: $(echo "$res" | tr '\n' ' ')" >&2
	printf '%s' "$res"
}

scif_two_nodes

# --- the attribute ----------------------------------------------------------
if ! err=$( (printf %s "$secret" >"$cfs/secret") 2>&1); then
	case $err in
	*"No such file"*) skip "this kernel has no hmac(sha256) (CONFIG_CRYPTO_HMAC, CONFIG_CRYPTO_SHA256)" ;;
	*) fail "cannot write the secret: $err" ;;
	esac
fi
out=$(cat "$cfs/secret" 2>&1) && fail "the secret could be read back: $out"
case $out in *"$secret"*) fail "reading the secret showed it: $out" ;; esac
echo "read of secret: $out"
long=$(head -c 65 /dev/zero | tr '\0' x)
printf %s "$long" >"$cfs/secret" 2>/dev/null && fail "a 65-byte secret was taken"
# The failed write left the secret as it was; write it again anyway.
printf %s "$secret" >"$cfs/secret" || fail "cannot write the secret"

dmesg_mark=$(dmesg | wc -l)
out=$(mktemp)
in_ns "$TOPO_NS_B" timeout 300 "$prog" listen "$port" 280 2 >"$out" 2>&1 &
bg=$!
sleep 1

# --- the listener refuses what cannot prove the secret ----------------------
before=$(count)
res=$(forge plain | tail -n1)
[ "$res" = rejected ] || fail "a request without a nonce was not rejected: $res"
expect_count "$before" 1 "request without a nonce"

before=$(count)
res=$(forge proof "$other")
echo "$res" | grep -q "established, server proof bad, then disconnected" ||
	fail "a client with another secret: $res"
expect_count "$before" 1 "client with another secret"

before=$(count)
res=$(forge silent | tail -n1)
[ "$res" = "established, server proof not checked, then disconnected" ] ||
	fail "a client that sends no proof was not disconnected: $res"
expect_count "$before" 1 "client without a proof"

before=$(count)
res=$(forge data | tail -n1)
[ "$res" = "established, server proof not checked, then disconnected" ] ||
	fail "a client that sends data before its proof was not disconnected: $res"
expect_count "$before" 1 "data before the proof"

# The right secret: taken (the listener's first accept), and recorded.
before=$(count)
res=$(forge proof "$secret")
echo "$res" | grep -q "established, server proof ok" ||
	fail "a raw client with the right secret: $res"
expect_count "$before" 0 "raw client with the right secret"
nonce=$(echo "$res" | sed -n 's/^nonce //p')
proof=$(echo "$res" | sed -n 's/^proof //p')
{ [ -n "$nonce" ] && [ -n "$proof" ]; } || fail "no nonce and proof to replay: $res"

before=$(count)
res=$(forge replay "$nonce" "$proof" | tail -n1)
[ "$res" = "established, server proof not checked, then disconnected" ] ||
	fail "a replayed request and proof were not disconnected: $res"
expect_count "$before" 1 "replay"

# node 1's own client, with the same secret: connects and data moves.
before=$(count)
res=$(in_ns "$TOPO_NS_A" timeout 60 "$prog" connect 2 "$port" 2>&1)
[ "$res" = connected ] || fail "scif_connect() with the same secret: $res"
wait "$bg"
st=$?
bg=
cat "$out"
[ "$st" = 0 ] || fail "the listener failed (status $st)"
[ "$(grep -c '^accepted' "$out")" = 2 ] || fail "the listener did not accept exactly two"
grep -qx "accepted node 1 port 4242 data forged-ok" "$out" ||
	fail "the raw client with the right secret was not accepted, or its data not read"
grep -q "^accepted node 1 port [0-9]* data secret-ok$" "$out" ||
	fail "node 1's scif_connect() was not accepted, or its data not read"
expect_count "$before" 0 "scif_connect() with the same secret"

logged=$(dmesg | tail -n +"$((dmesg_mark + 1))" | grep -c 'scire_scif: connection .* refused: .*secret') || :
[ "$logged" -ge 1 ] || fail "no kernel log line for the refused connections"
echo "log lines: $logged"

# --- node 1 refuses a node 2 that proves another secret, or none ------------
for how in "proof $other" plain; do
	sout=$(mktemp)
	# shellcheck disable=SC2086 # HOW and its argument
	in_ns "$TOPO_NS_B" timeout 120 "$prog" serve "$TOPO_IP_B" "$cm_port" $how >"$sout" 2>&1 &
	bg=$!
	wait_for 20 grep -q listening "$sout" || fail "the stand-in server did not listen: $(cat "$sout")"
	before=$(count)
	start=$SECONDS
	res=$(in_ns "$TOPO_NS_A" timeout 60 "$prog" connect 2 "$port" 2>&1)
	echo "# connect to a node 2 with '${how%% *}': $res, $((SECONDS - start)) s"
	[ "$res" = "refused: Connection refused" ] ||
		fail "scif_connect() to a node with '$how' was not refused: $res"
	expect_count "$before" 1 "server with '${how%% *}'"
	wait "$bg"
	bg=
	cat "$sout"
	grep -q "request flags 1, then disconnected" "$sout" ||
		fail "the stand-in did not see a request with a nonce, then the disconnect"
done
# Refused for the right reasons: a wrong proof, then none.
for why in "wrong proof of the secret" "the node sent no proof of the secret"; do
	dmesg | tail -n +"$((dmesg_mark + 1))" |
		grep -q "scire_scif: connection to node 2 port $port refused: $why" ||
		fail "no kernel log line 'refused: $why' for the stand-in node"
done

# --- without a secret: requests with a nonce refused, plain ones work -------
echo >"$cfs/secret" || fail "cannot clear the secret"
in_ns "$TOPO_NS_B" timeout 200 "$prog" listen "$port" 180 1 >"$out" 2>&1 &
bg=$!
sleep 1
before=$(count)
res=$(forge proof "$secret" | tail -n1)
[ "$res" = rejected ] || fail "a request with a nonce to a node without a secret: $res"
expect_count "$before" 1 "nonce to a node without a secret"
res=$(in_ns "$TOPO_NS_A" timeout 60 "$prog" connect 2 "$port" 2>&1)
[ "$res" = connected ] || fail "scif_connect() with the secret cleared: $res"
wait "$bg"
st=$?
bg=
cat "$out"
[ "$st" = 0 ] || fail "the listener failed (status $st)"
grep -q "^accepted node 1 port [0-9]* data secret-ok$" "$out" ||
	fail "with the secret cleared, node 1's connection was not the one accepted"
echo "auth_failed: $(count)"
exit 0
