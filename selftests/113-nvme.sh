#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics (RDMA) over scire0, on one host (the VM's eth0,
# 192.168.77.2): an nvmet-rdma target (configfs, nvme-lib.sh: namespace 1
# a memory-backed null_blk, namespace 2 a file) and the nvme-rdma host,
# both on scire0 (the device talking to itself). The pair's 30-nvme runs
# the same across two kernels; this one adds what needs one host's view
# of both ends and module reloads in between:
#
# - `nvme discover` and `nvme connect` (reconnect delay 1 s, controller
#   loss timeout 60 s), both ends' QPs on scire0; fio random writes of
#   4 KiB to 1 MiB at depth 32, crc32c verified, over 32 MiB of each
#   namespace; scire0's byte counters grown by the I/O; the host's view
#   read back and compared with the target's backing (null_blk read with
#   O_DIRECT, the file through its page cache).
# - Faults under verified fio I/O (writes paced at 8 MiB/s so the fault
#   lands inside the run): the port's subsystem link removed from configfs
#   and put back 3 s later; eth0 taken down for 6 s (scire0's port goes
#   DOWN with IB_EVENT_PORT_ERR). Each time the controller must leave
#   `live`, come back by itself (nvme-rdma's reconnect work, no command of
#   the test's) and fio's verification pass.
# - Variants, each with a verified fio of 16 MiB: nvme_rdma
#   register_always=N (single-segment I/O through the PD's global rkey),
#   one poll queue (`nvme connect --nr-poll-queues=1`, fio io_uring
#   --hipri; the namespace must say io_poll 1 and nvme-rdma hold a CQ
#   polled directly), nvmet_rdma use_srq=1 (SRQs on scire0), and last
#   ib_core force_mr=1 (rdma_rw registers an MR for every READ/WRITE: more
#   MRs on scire0 than without).
# - `rdma link delete scire0` under a live session with fio I/O in flight:
#   it must return, both ULPs' device-removal paths run (the controller
#   goes, fio ends), nvme_rdma, nvmet_rdma, scire and the RDMA core then
#   unload; the core is loaded again with force_mr=1 for the last variant
#   and at the end once more with its defaults.
#
# Afterwards the target is removed, every module the test loaded unloaded,
# and `rdma resource show` is back to its counts (the core's CQ pool
# aside, see lio-lib.sh), once on the first scire0 and once on the one
# of the final reload. About 100 s in the stock VM.
# shellcheck source-path=SCRIPTDIR
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=lio-lib.sh
. "$(dirname "$0")/lio-lib.sh"
# shellcheck source=nvme-lib.sh
. "$(dirname "$0")/nvme-lib.sh"

dev=scire0
addr=${SCIRE_ADDR:-192.168.77.2}
size=32M
vsize=16M
run=/run/scire-nvme
ko=${SCIRE_KO_DIR:-$SCIRE_ROOT}/kernel/scire.ko
# Every connection: a lost controller is tried again each second, for a
# minute (the nvme-rdma defaults: 10 s and 10 minutes).
copts=(--reconnect-delay=1 --ctrl-loss-tmo=60)

[ -d /sys/module/scire ] || skip "scire is not loaded"
rdma_has "$dev" || fail "no $dev"
[ "$(dev_netdev "$dev")" = eth0 ] || fail "$dev is not on eth0: $(rdma link show "$dev/1")"
modprobe -n -q -a nvmet nvmet-rdma nvme-rdma null_blk ||
	skip "this kernel has no nvmet, nvmet-rdma, nvme-rdma or null_blk module"
for t in nvme fio; do
	command -v "$t" >/dev/null || skip "$t missing (Debian packages nvme-cli, fio: scripts/setup)"
done
[ -f "$ko" ] || skip "$ko missing: the test reloads scire"
[ -d /sys/module/nvmet ] && fail "nvmet is loaded already"

base=$(res_but_cq "$dev")
base_cqs=$(rdma resource show cq dev "$dev")
base_mods=$(mods_loaded)
echo "$dev on eth0 $addr; resources before: $(rdma_res_counts "$dev")"
t0=$SECONDS
ctrl="" fio_pid="" core_opts="" fio_t0=0 fio_m0=0 at_break=""
mkdir -p "$run" || fail "cannot create $run"

say() { echo "$* ($((SECONDS - t0)) s in)"; }
# shellcheck disable=SC2317 # called through wait_for
res_back() { [ "$(res_but_cq "$dev")" = "$base" ]; }

# Print the kernel log of this test (NVMe and RDMA lines), for a failure.
show_kmsg()
{
	kmsg_since "$mark" | grep -aiE 'nvme|rdma|scire|null_blk' | tail -n 40 | sed 's/^/  kmsg: /'
}

# Undo everything, whatever part of it was done; prints what fails.
teardown()
{
	local ok=0

	if [ -n "$fio_pid" ]; then
		kill "$fio_pid" 2>/dev/null
		wait "$fio_pid" 2>/dev/null
	fi
	# A failure in the eth0 fault leaves it down.
	ip -br link show eth0 | grep -q '\<UP\>' || ip link set eth0 up || { echo "teardown: cannot set eth0 up"; ok=1; }
	timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1
	nvme_target_down
	modprobe -r nvme-rdma 2>/dev/null
	if [ -n "$core_opts" ]; then
		scire_reload --core || ok=1
	elif ! rdma_has "$dev"; then
		scire_reload || ok=1
	fi
	mods_unload_new "$base_mods" || ok=1
	rm -rf "$run" /run/nvme-file.img
	return $ok
}
mark=$(kmsg_mark)
trap 'teardown' EXIT

# host_up [NVME-CONNECT-OPTION...]: discover and connect (copts and the
# options given); sets ctrl, ns1 and ns2. Fails the test otherwise.
host_up()
{
	ctrl=$(nvme_host_connect "$addr" "${copts[@]}" "$@" 2>"$run/connect.log") || {
		tail -n 20 "$run/connect.log"
		show_kmsg
		fail "nvme discover/connect to $addr ${copts[*]} $* failed"
	}
	{ ns1=$(nvme_ns_dev "$ctrl" 1) && ns2=$(nvme_ns_dev "$ctrl" 2); } || fail "no namespaces on $ctrl"
}

# host_down: disconnect; the controller must be gone.
host_down()
{
	local out

	out=$(timeout 60 nvme disconnect -n "$NVME_NQN" 2>&1) || fail "nvme disconnect failed: $out"
	wait_for 20 sh -c "[ ! -e /sys/class/nvme/$ctrl ]" || fail "$ctrl still there 20 s after nvme disconnect"
	ctrl=""
}

# verified DEV SIZE WHAT [FIO-OPTION...]: nvme_fio, failing the test with
# WHAT if it fails.
verified()
{
	local d=$1 s=$2 what=$3

	shift 3
	nvme_fio "$d" "$s" "$@" || { show_kmsg; fail "fio write+verify on $d ($what) failed"; }
}

# fio_bg: nvme_fio over $size of namespace 1 in the background, writes paced
# at 8 MiB/s (a write phase of about 4 s); returns once a MiB has moved. On
# the debug kernel, where each command of this script takes a second or
# more to start, at 1 MiB/s (32 s): at 8 MiB/s fio once had written and
# verified all of it (11 s, 64 MiB) before the fault could be injected.
fio_rate=8m
[ "${SCIRE_KERNEL:-stock}" != debug ] || fio_rate=1m
fio_bg()
{
	local m0

	m0=$(scire_moved "$dev")
	fio_t0=$SECONDS fio_m0=$m0
	nvme_fio "$ns1" "$size" --rate=,"$fio_rate" 2>"$run/fio.err" &
	fio_pid=$!
	wait_for 30 moved_since "$dev" "$m0" || { cat "$run/fio.err"; fail "fio moved nothing over $dev in 30 s"; }
}

# fio_end WHAT: wait for fio_bg's run; it must have verified its blocks.
fio_end()
{
	local rc

	wait "$fio_pid"
	rc=$?
	fio_pid=""
	[ "$rc" = 0 ] || { cat "$run/fio.err"; show_kmsg; fail "fio write+verify across $1 failed (status $rc)"; }
}

# shellcheck disable=SC2317 # called through wait_for
ctrl_is() { [ "$(nvme_ctrl_state "$ctrl")" = "$1" ]; }
# shellcheck disable=SC2317 # called through wait_for
ctrl_not() { [ "$(nvme_ctrl_state "$ctrl")" != "$1" ]; }
# shellcheck disable=SC2317 # called through wait_for
port_is() { rdma link show "$dev/1" | grep -q "state $1 "; }

# fault_under_io WHAT BREAK RESTORE SECS: with fio_bg running, run BREAK;
# the controller must leave live; after SECS run RESTORE; the controller
# must be live again by itself within 60 s and fio verify its blocks.
fault_under_io()
{
	local what=$1 brk=$2 restore=$3 secs=$4 m s

	fio_bg
	m=$(kmsg_mark)
	at_break="fio had run $((SECONDS - fio_t0)) s and moved $((($(scire_moved "$dev") - fio_m0) >> 20)) MiB over $dev when $brk ran"
	# A fault after fio's end would test nothing.
	kill -0 "$fio_pid" 2>/dev/null || fail "$what: fio ended before the fault ($at_break)"
	$brk || fail "$what: $brk failed"
	s=$SECONDS
	wait_for 20 ctrl_not live || { show_kmsg; fail "$what: $ctrl still live 20 s later"; }
	echo "$what: $ctrl $(nvme_ctrl_state "$ctrl") after $((SECONDS - s)) s"
	sleep "$secs"
	if ! kill -0 "$fio_pid" 2>/dev/null; then
		wait "$fio_pid"
		echo "fio's exit status: $?; $at_break; moved $((($(scire_moved "$dev") - fio_m0) >> 20)) MiB in all; its errors:"
		cat "$run/fio.err"
		show_kmsg
		fail "$what: fio ended while the path was down"
	fi
	$restore || fail "$what: $restore failed"
	s=$SECONDS
	wait_for 60 ctrl_is live || { show_kmsg; fail "$what: $ctrl not live again 60 s after $restore"; }
	kmsg_since "$m" | grep -aqE "$ctrl: Successfully reconnected" ||
		{ show_kmsg; fail "$what: no 'Successfully reconnected' from $ctrl"; }
	fio_end "$what"
	say "$what: $ctrl reconnected by itself $((SECONDS - s)) s after $restore; fio verified"
}

# shellcheck disable=SC2317 # called through fault_under_io
eth0_down() { ip link set eth0 down && wait_for 10 port_is DOWN; }
# shellcheck disable=SC2317 # called through fault_under_io
eth0_up()
{
	ip link set eth0 up || return 1
	ip -4 -br addr show eth0 | grep -qF " $addr/24" || ip addr add "$addr/24" dev eth0 || return 1
	wait_for 10 port_is ACTIVE && need_dev_gid "$dev" >/dev/null
}

# --- target, host, verified I/O ----------------------------------------------------

nvme_target_up "$addr" || { show_kmsg; fail "nvmet target setup failed"; }
say "target: $NVME_NQN on $addr:$NVME_PORT (nullb0, a 64 MiB file)"
host_up
grep -q "^subnqn: *$NVME_NQN\$" "$run/connect.log" ||
	fail "nvme discover does not list $NVME_NQN: $(cat "$run/connect.log")"
echo "nvme discover: $(grep -c '^subnqn:' "$run/connect.log") records, $NVME_NQN among them"
n1=$(ulp_cm_qps "$dev" nvme_rdma | wc -l) n2=$(ulp_cm_qps "$dev" nvmet_rdma | wc -l)
{ [ "$n1" -gt 0 ] && [ "$n2" -gt 0 ]; } || fail "QPs on $dev: nvme_rdma $n1, nvmet_rdma $n2: $(rdma res show cm_id dev "$dev")"
mrs=$(rdma_res_count "$dev" mr)
say "connected: $ctrl, namespaces $ns1 and $ns2; QPs on $dev: nvme_rdma $n1, nvmet_rdma $n2"

moved=$(scire_moved "$dev")
verified "$ns1" "$size" null_blk
verified "$ns2" "$size" file
moved=$(($(scire_moved "$dev") - moved))
[ "$moved" -ge $((4 * ${size%M} << 20)) ] ||
	fail "$dev moved $moved bytes for 2 x $size written and read back (tx_bytes + local_bytes)"
[ "$(nvme_sum "$ns1" "$size")" = "$(nvme_sum /dev/nullb0 "$size")" ] ||
	fail "namespace 1: the host's view differs from nullb0"
[ "$(nvme_sum "$ns2" "$size")" = "$(nvme_sum /run/nvme-file.img "$size")" ] ||
	fail "namespace 2: the host's view differs from the file"
say "fio: random 4k-1m writes at depth 32 verified (crc32c) on both namespaces; $dev moved $((moved >> 20)) MiB; host view = target backing"
host_down

# --- variants --------------------------------------------------------------------------

{ modprobe -r nvme-rdma && modprobe nvme-rdma register_always=N; } || fail "cannot reload nvme-rdma register_always=N"
host_up
verified "$ns1" "$vsize" "register_always=N"
host_down
say "nvme_rdma register_always=N: fio verified"

{ modprobe -r nvme-rdma && modprobe nvme-rdma; } || fail "cannot reload nvme-rdma"
host_up --nr-poll-queues=1
q=/sys/block/${ns1#/dev/}/queue/io_poll
[ "$(cat "$q")" = 1 ] || fail "$q is $(cat "$q") with a poll queue"
# nvme-rdma takes its other CQs from the core's pool (comm [ib_core]) and
# allocates a poll queue's itself, IB_POLL_DIRECT. (bookworm's rdma tool
# names the kernel's poll contexts one off: it prints DIRECT for SOFTIRQ
# and UNBOUND_WORKQUEUE for DIRECT.)
rdma resource show cq dev "$dev" | grep -qF 'comm [nvme_rdma]' ||
	fail "no CQ of nvme_rdma's own (a poll queue's) on $dev: $(rdma resource show cq dev "$dev")"
verified "$ns1" "$vsize" "a poll queue" --ioengine=io_uring --hipri
host_down
say "a poll queue (io_poll 1, a polled CQ of nvme_rdma's): fio io_uring --hipri verified"

{ nvme_port_unlink && modprobe -r nvmet-rdma && modprobe nvmet-rdma use_srq=1 && nvme_port_link; } ||
	fail "cannot reload nvmet-rdma use_srq=1"
host_up
srqs=$(rdma_res_count "$dev" srq)
[ "${srqs:-0}" -gt 0 ] || fail "nvmet_rdma use_srq=1, yet no SRQ on $dev: $(rdma_res_counts "$dev")"
verified "$ns1" "$vsize" "use_srq=1"
host_down
{ nvme_port_unlink && modprobe -r nvmet-rdma && modprobe nvmet-rdma && nvme_port_link; } ||
	fail "cannot reload nvmet-rdma"
say "nvmet_rdma use_srq=1 ($srqs SRQs on $dev): fio verified"

# --- faults under I/O ----------------------------------------------------------------

host_up
fault_under_io "port's subsystem link removed" nvme_port_unlink nvme_port_link 3
fault_under_io "eth0 down (port DOWN)" eth0_down eth0_up 6
[ "$(nvme_sum "$ns1" "$size")" = "$(nvme_sum /dev/nullb0 "$size")" ] ||
	fail "namespace 1 after the faults: the host's view differs from nullb0"
host_down

# The port's listener aside too (its rdma_cm ID).
nvme_port_unlink || fail "cannot remove the port's subsystem link"
wait_for 20 res_back || fail "resources not back after the variants and faults: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
cq_pool_only "$dev" "$base_cqs" || fail "CQs left on $dev that are not idle CQs of the core's pool (above)"
say "$dev resources back to $(rdma_res_counts "$dev") (the port disabled)"
nvme_port_link || fail "cannot put the subsystem back on the port"

# --- rdma link delete under a live session ------------------------------------------

host_up
fio_bg
link_delete_under_io "$dev" "$fio_pid" ctrl_is gone
say "$ctrl deleted by nvme-rdma's device removal; the fio in flight ended with status $LINK_IO_STATUS"
fio_pid="" ctrl=""
nvme_port_unlink || fail "cannot remove the port's subsystem link"
out=$(modprobe -r nvme-rdma nvmet-rdma 2>&1) || fail "nvme-rdma, nvmet-rdma do not unload after $dev went: $out"
core_opts=force_mr=1
scire_reload --core force_mr=1 || fail "cannot reload the RDMA core with force_mr=1 (above)"
say "nvme_rdma, nvmet_rdma, scire and the RDMA core unloaded; ib_core force_mr=1, scire and $dev loaded"

# --- ib_core force_mr=1 ---------------------------------------------------------------

{ modprobe nvmet-rdma && nvme_port_link; } || fail "cannot enable the port again"
host_up
m=$(rdma_res_count "$dev" mr)
[ "$m" -gt "$mrs" ] || fail "force_mr=1, yet $m MRs on $dev with a session, as many as $mrs without it"
verified "$ns1" "$vsize" "force_mr=1"
[ "$(nvme_sum "$ns1" "$size")" = "$(nvme_sum /dev/nullb0 "$size")" ] ||
	fail "namespace 1 with force_mr=1: the host's view differs from nullb0"
host_down
say "ib_core force_mr=1 ($m MRs on $dev with a session, $mrs without): fio verified"

# --- teardown ------------------------------------------------------------------------

trap - EXIT
teardown || fail "teardown failed"
wait_for 20 res_back || fail "resources not back: $(rdma_res_counts "$dev"), before: $base (CQs aside)"
cq_pool_only "$dev" "$base_cqs" || fail "CQs left on $dev that are not idle CQs of the core's pool (above)"
echo "target removed, modules unloaded, RDMA core reloaded with its defaults, $dev resources back to $(rdma_res_counts "$dev") ($((SECONDS - t0)) s)"
exit 0
