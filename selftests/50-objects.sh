#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PD, MR and CQ life cycles and bad inputs on scire0: scire_objects. Then
# who pays for a ring: its memory is charged to the memory cgroup of the
# process that creates the queue, so in a cgroup limited to 48 MiB a CQ of
# max_cqe entries (a 64 MiB ring) fails with ENOMEM (not an OOM kill)
# while one of 4096 entries is created (pyverbs, in a child cgroup of a
# cgroup2 hierarchy mounted here if none is).
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prog=$(need_prog scire_objects) || exit 1
"$prog" -d scire0 || exit 1

# The debug kernel has no cgroups: scire_objects has passed, and the
# charge is checked in the stock boot.
nocg()
{
	echo "not checked here: who pays for a ring ($1)"
	exit 0
}
cgroup2_enable memory || nocg "$CGROUP2_WHY"
cg=$CGROUP2_ROOT/scire-objects
mkdir -p $cg || fail "cannot create $cg"
trap 'rmdir $cg 2>/dev/null' EXIT
echo 48M >$cg/memory.max || fail "cannot limit $cg to 48 MiB"
[ ! -f $cg/memory.swap.max ] || echo 0 >$cg/memory.swap.max

# shellcheck disable=SC2016 # $$ is the child shell's
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec /usr/bin/python3 -c "$2"' sh "$cg" '
import errno, sys
from pyverbs.device import Context
from pyverbs.cq import CQ
from pyverbs.pyverbs_error import PyverbsRDMAError

ctx = Context(name="scire0")
max_cqe = ctx.query_device().max_cqe
small = CQ(ctx, 4096)
try:
    big = CQ(ctx, max_cqe)
except PyverbsRDMAError as e:
    if e.error_code == errno.ENOMEM:
        print(f"CQ of {max_cqe} entries in a 48 MiB cgroup: ENOMEM, 4096 entries: created")
        sys.exit(0)
    print(f"CQ of {max_cqe} entries in a 48 MiB cgroup: {e}, expected ENOMEM")
    sys.exit(1)
print(f"CQ of {max_cqe} entries (a {max_cqe * 64 >> 20} MiB ring) created in a 48 MiB cgroup: its ring was not charged to the cgroup")
sys.exit(1)
' 2>&1)
rc=$?
echo "$out"
events=$(grep -E '^(oom|oom_kill) ' $cg/memory.events | tr '\n' ' ')
[ "$rc" = 0 ] || fail "ring memory and the memory cgroup (status $rc; $events)"
grep -q '^oom_kill 0$' $cg/memory.events || fail "the cgroup's limit killed a process: $events"
echo "ok: ring memory is charged to the creator's memory cgroup"
exit 0
