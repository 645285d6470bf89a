#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scire's KUnit suites (kunit/), built into scire.ko when the kernel has
# KUnit (the debug kernel of scripts/debug-kernel) and run by the kernel
# when the module loads. This test reads each scire_* suite's KTAP result
# from debugfs, shows it, and prints one line that scripts/check counts:
#
#   kunit: S suites, P passed, F failed, K skipped
#
# A test case counts once (the parameters of a parameterized case are shown
# but not counted; a failed suite whose failed case's line the bounded
# debugfs log lost counts one). Fails if a case failed, a suite did not
# finish, or no suite ran although scire.ko carries them; skipped on a
# kernel without KUnit (Debian's stock kernel).
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"

[ -d /sys/module/scire ] || skip "scire.ko is not loaded"
zcat /proc/config.gz 2>/dev/null | grep -qx 'CONFIG_KUNIT=y' ||
	skip "this kernel has no KUnit (run with scripts/vm --kernel debug)"
dir=/sys/kernel/debug/kunit
[ -d "$dir" ] || fail "CONFIG_KUNIT=y but $dir is missing (CONFIG_KUNIT_DEBUGFS?)"

suites=0 passed=0 failed=0 skipped=0 bad=0
for d in "$dir"/scire_*; do
	[ -f "$d/results" ] || continue
	suite=$(basename "$d")
	suites=$((suites + 1))
	out=$(cat "$d/results")
	printf '%s\n' "$out" | sed "s/^/$suite: /"
	# Test cases are the KTAP lines one level (4 spaces) in; the suite's
	# own line is at column 0, a parameterized case's parameters deeper.
	read -r p f s < <(printf '%s\n' "$out" | awk '
		/^    (not )?ok [0-9]+ / {
			if ($0 ~ /# SKIP/) s++
			else if ($0 ~ /^    ok /) p++
			else f++
		}
		END { printf "%d %d %d\n", p, f, s }')
	if ! printf '%s\n' "$out" | grep -qE '^(not )?ok [0-9]+ '; then
		echo "$suite: no result line: the suite did not finish"
		bad=$((bad + 1))
	fi
	# debugfs keeps a bounded log per suite: a long run of failed
	# expectations can push a case's own "not ok" line out of it. The
	# suite's line at column 0 still says it failed; count one case then.
	if [ "$f" = 0 ] && printf '%s\n' "$out" | grep -qE '^not ok [0-9]+ '; then
		echo "FAILED: $suite: the suite failed, its failed case's line lost from the log"
		f=1
	fi
	if [ $((p + f + s)) = 0 ]; then
		echo "$suite: no test case reported"
		bad=$((bad + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	printf '%s\n' "$out" | grep -E '^    not ok ' | sed "s/^ */FAILED: $suite: /"
done

echo "kunit: $suites suites, $passed passed, $failed failed, $skipped skipped"
[ "$suites" -gt 0 ] || fail "scire.ko registered no KUnit suite"
[ "$failed" = 0 ] || fail "$failed KUnit test cases failed"
[ "$bad" = 0 ] || fail "$bad suites did not report properly"
exit 0
