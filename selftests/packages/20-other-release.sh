#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The provider package built for another Debian release is refused here.
# scire's provider is built against one rdma-core release's private
# libibverbs ABI (bookworm's 44, trixie's 56); loaded by another
# libibverbs it would write that library's structures at the wrong
# offsets. Its package depends on exactly the libibverbs1 it was built
# for, so apt must refuse to install bookworm's package on trixie and
# trixie's on bookworm, and must name that dependency when it does.
# SCIRE_DEBS_OTHER names the other release's packages (make check sets it
# when it built both):
#   scripts/vm --distro trixie --no-scire -- env SCIRE_DEBS=$PWD/build/deb-trixie \
#       SCIRE_DEBS_OTHER=$PWD/build/deb selftests/run packages/
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

other=${SCIRE_DEBS_OTHER:-}
[ -n "$other" ] || skip "SCIRE_DEBS_OTHER unset: no other release's packages to try"
f=("$other"/scire-ibverbs-provider_*.deb)
[ -f "${f[0]}" ] || fail "no scire-ibverbs-provider package in $other"

want=$(dpkg-deb -f "${f[0]}" Depends)
have=$(dpkg-query -W -f '${Version}' libibverbs1 2>&1) || fail "no libibverbs1 installed here: $have"
echo "package: ${f[0]##*/}: Depends: $want"
echo "here: libibverbs1 $have"
# The package's libibverbs1 range must not hold the installed one, or this
# test checks nothing.
if dpkg --compare-versions "$have" ge "$(sed -nE 's/.*libibverbs1 \(>= ([^)]+)\).*/\1/p' <<<"$want")" &&
	dpkg --compare-versions "$have" lt "$(sed -nE 's/.*libibverbs1 \(<< ([^)]+)\).*/\1/p' <<<"$want")"; then
	fail "${f[0]##*/} claims this libibverbs1 ($have): it was not built for another release"
fi

# apt resolves against what is installed; it must stop before unpacking.
export DEBIAN_FRONTEND=noninteractive
out=$(apt-get install -s -o Debug::NoLocking=1 "${f[0]}" 2>&1)
rc=$?
echo "$out" | tail -n 8
[ "$rc" != 0 ] || fail "apt-get would install ${f[0]##*/} beside libibverbs1 $have"
grep -q 'libibverbs1' <<<"$out" || fail "apt-get refused, but not for libibverbs1 (status $rc)"
echo "apt-get refuses ${f[0]##*/} here (status $rc), naming libibverbs1"
exit 0
