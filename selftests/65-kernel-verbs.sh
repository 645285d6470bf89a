#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Kernel QPs: the verbs a kernel ULP calls (post_send, post_recv, poll_cq,
# fast registration, LOCAL_INV, SEND_WITH_INV, atomics, flush in ERR) work
# on scire0. selftests/kmod/scire_ktest.ko runs its checks in module init
# against dev=scire0 and loads only if all passed; its kernel log lines say
# what differed. On scire it runs twice: fast path, then wire path.
# Skipped only if the module was not built (make ktest).
# SCIRE_KTEST_DEV tests another device (e.g. an rxe one) instead.
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # ktest_once runs through fast_path_each
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=${SCIRE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
ko=${SCIRE_KO_DIR:-$root}/selftests/kmod/scire_ktest.ko
dev=${SCIRE_KTEST_DEV:-scire0}

[ -f "$ko" ] || skip "$ko not built (make ktest)"
rdma_has "$dev" || fail "no RDMA device $dev"
if [ -d /sys/module/scire_ktest ]; then
	echo "scire_ktest was loaded already: removing it"
	rmmod scire_ktest || fail "cannot remove a scire_ktest left loaded"
fi

# ktest_once: load scire_ktest.ko (its checks run in module init), say
# what it logged, remove it; status 1, saying why, if a check failed.
ktest_once()
{
	local mark start out rc log

	mark=$(kmsg_mark)
	start=$(date +%s)
	out=$(insmod "$ko" dev="$dev" 2>&1)
	rc=$?
	echo "insmod $(basename "$ko") dev=$dev: status $rc in $(($(date +%s) - start)) s${out:+: $out}"
	log=$(kmsg_since "$mark" | grep -a 'scire_ktest: ')
	printf '%s\n' "$log"

	if [ -d /sys/module/scire_ktest ]; then
		rmmod scire_ktest || { echo "rmmod scire_ktest failed"; return 1; }
	fi
	[ "$rc" = 0 ] || { echo "scire_ktest refused to load (status $rc): a check failed"; return 1; }
	if grep -q 'scire_ktest: FAIL' <<<"$log"; then
		echo "scire_ktest loaded but logged FAIL lines"
		return 1
	fi
	grep -Eq 'scire_ktest: PASS [1-9][0-9]* checks' <<<"$log" ||
		{ echo "scire_ktest loaded without its 'PASS <n> checks' line"; return 1; }
}

# Both of scire's paths between the two QPs: same-host units, then the
# wire.
fast_path_each "$dev" ktest_once
exit 0
