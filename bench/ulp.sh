# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Sourced by bench/run-guest.sh (issue 18): siw as a third device beside
# rxe and scire, and a kernel ULP, NVMe over Fabrics, over all three.
# ulp_main runs last in the one boot, after (a) and (d) (rdma_rxe is
# unloaded by then, scire0 is on eth0 as scripts/vm left it):
#
#   nullb   the ceiling: fio on a memory-backed null_blk (/dev/nullb0)
#           itself, no transport
#   b       NVMe-oF over scire0: nvmet-rdma target and nvme-rdma host
#           both on scire0 (192.168.77.2), namespace 1 the same null_blk
#   a       the same over rxe0 on eth0 (scire0 deleted, rdma_rxe loaded,
#           then both undone)
#   h       siw0 on eth0 talking to itself (siw.ko of scripts/siw-ko,
#           insmod'ed: Debian's kernel has no siw): the perftest matrix
#           with rdma_cm (-R: iWARP has no other way to connect), then
#           NVMe-oF over siw0; siw unloaded and scire0 added again last
#
# The devices take eth0 one at a time: two RDMA devices with one address
# would leave rdma_cm to pick either for a connection (and siw's iWARP
# connections are TCP ones, on perftest's ports and nvmet's 4420, which
# rxe and scire never use).
#
# The NVMe-oF rows (one run each, ULP_SECS seconds, time-based):
#
#   nvmeof_seq_write   1 MiB  sequential writes, iodepth 8, MiB/s
#   nvmeof_seq_read    1 MiB  sequential reads, iodepth 8, MiB/s
#   nvmeof_rand_write  4 KiB  random writes, iodepth 32, kIOPS
#   nvmeof_rand_read   4 KiB  random reads, iodepth 32, kIOPS
#
# fio --direct=1 --ioengine=libaio over the first ULP_SPAN of the device.
# On the VM pair (ulp_pair, after the perftest cells) the target is on
# host a and the host on host b, rows in (e) and (f). A quick run has one
# cell, nvmeof_rand_read for 2 s, over scire0 and over null_blk; no siw.
# shellcheck disable=SC2154 # quick, only, scratch: run-guest.sh's
# shellcheck disable=SC2317 # functions redefined for a subshell
# shellcheck source=selftests/nvme-lib.sh
. "$SCIRE_ROOT/selftests/nvme-lib.sh"

SIW_KO=${SIW_KO:-}
ULP_SECS=5 ULP_SPAN=512M ULP_RUNS=1
ULP_JOBS="nvmeof_seq_write:write:1048576:8 nvmeof_seq_read:read:1048576:8 nvmeof_rand_write:randwrite:4096:32 nvmeof_rand_read:randread:4096:32"
ULP_ADDR=192.168.77.2
if [ "$quick" = 1 ]; then
	ULP_SECS=2 ULP_JOBS="nvmeof_rand_read:randread:4096:32"
fi

# fio_value JOB RW OUTPUT: the figure of one fio --output-format=json run
# (MiB/s for 1 MiB jobs, kIOPS for 4 KiB ones), or why not (status 1).
fio_value()
{
	python3 -c '
import json, sys
rw = "write" if sys.argv[1].endswith("write") else "read"
try:
    # fio stopped by SIGINT says so on stdout before its JSON.
    t = open(sys.argv[2]).read()
    j = json.loads(t[t.index("{"):])["jobs"][0]
except Exception as e:
    print("no fio JSON output: %s" % e)
    sys.exit(1)
if j.get("error"):
    print("fio job error %s" % j["error"])
    sys.exit(1)
d = j[rw]
if sys.argv[3] == "4096":
    print("%.3f" % (d["iops"] / 1000))
else:
    print("%.2f" % (d["bw"] / 1024))
' "$1" "$2" "$3"
}

# ulp_fio KEY DEV: the ULP_JOBS on block device DEV, rows in column KEY.
ulp_fio()
{
	local key=$1 dev=$2 job row rw bs depth try good val rc

	for job in $ULP_JOBS; do
		IFS=: read -r row rw bs depth <<<"$job"
		good=0
		for ((try = 0; try < ULP_RUNS + 1 && good < ULP_RUNS; try++)); do
			timeout -k 5 $((ULP_SECS + 60)) fio --name="$row" --filename="$dev" --direct=1 \
				--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$depth" --size="$ULP_SPAN" \
				--time_based --runtime="$ULP_SECS" --output-format=json \
				>"$scratch/fio.json" 2>"$scratch/fio.err"
			rc=$?
			if [ "$rc" = 0 ] && val=$(fio_value "$rw" "$scratch/fio.json" "$bs"); then
				say "run $key $row $bs $val"
				good=$((good + 1))
				continue
			fi
			[ "$rc" = 0 ] || val="exit status $rc (124, 137: timed out)"
			say "fail $key $row $bs fio on $dev: $val"
			cat "$scratch/fio.err" "$scratch/fio.json" 2>/dev/null | tail -n 20 | sed 's/^/BENCH| /'
		done
	done
}

# ulp_nvme KEY DEV ADDR: nvmet-rdma target and nvme-rdma host on this host
# over RDMA device DEV (on eth0, address ADDR), the ULP_JOBS on the
# host's namespace 1 (a fresh null_blk), all undone after (null_blk
# unloaded too). Rows in column KEY.
ulp_nvme()
{
	local key=$1 dev=$2 addr=$3 ctrl ns err t0=$SECONDS tx0=""

	err=$scratch/nvme.err
	if ! nvme_target_up "$addr" >"$err" 2>&1; then
		say "note $key NVMe-oF: the nvmet-rdma target on $dev would not come up: $(tr '\n' ' ' <"$err" | cut -c1-300)"
		ulp_fail_rows "$key" "nvmet-rdma target setup on $dev failed"
		nvme_target_down
		return
	fi
	if ! ctrl=$(nvme_host_connect "$addr" 2>"$err") || ! ns=$(nvme_ns_dev "$ctrl" 1); then
		say "note $key NVMe-oF: nvme connect over $dev failed: $(tail -n 5 "$err" | tr '\n' ' ' | cut -c1-300)"
		ulp_fail_rows "$key" "nvme connect over $dev failed"
	else
		# Which of scire's paths the ULP took: packets sent are the
		# wire path's, the same-host fast path sends none.
		dev_is_scire "$dev" && tx0=$(counter "$dev" tx_packets)
		ulp_fio "$key" "$ns"
		dev_is_scire "$dev" &&
			say "note $key $dev tx_packets during NVMe-oF's fio jobs: $(delta "$tx0" "$(counter "$dev" tx_packets)")"
		timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1 ||
			say "note $key NVMe-oF: nvme disconnect failed"
	fi
	nvme_target_down
	modprobe -r nvme-rdma 2>/dev/null
	say "note $key NVMe-oF over $dev took $((SECONDS - t0)) s"
}

# port_active DEV: is port 1 of RDMA device DEV ACTIVE?
port_active() { rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE'; }

# ulp_fail_rows KEY WHY: a fail line for every NVMe-oF row of column KEY.
ulp_fail_rows()
{
	local job row rw bs depth

	for job in $ULP_JOBS; do
		IFS=: read -r row rw bs depth <<<"$job"
		say "fail $1 $row $bs $2"
	done
}

# siw_matrix: the perftest matrix on siw0 talking to itself, as (h). Every
# run with rdma_cm (-R): one_run takes its arguments from bw_args and
# lat_args, redefined here, in a subshell, for this configuration only.
siw_matrix()
(
	bw_args() { echo "-R -F -D $BW_SECS -f 0"; }
	lat_args() { echo "-R -F -n $(lat_iters "$1")"; }
	# rdma_cm connects to eth0's address: siw binds a QP to the device
	# of the address its TCP connection uses (127.0.0.1 would be lo's).
	sides "" siw0 0 "$ULP_ADDR" "" siw0 0
	# siw has no atomics (ATOMIC_NONE: RFC 7306's are not implemented),
	# and perftest's atomic tools would fail every try.
	if ibv_devinfo -v -d siw0 2>/dev/null | grep -q 'atomic_cap:[[:space:]]*ATOMIC_NONE'; then
		BW_TOOLS=${BW_TOOLS//ib_atomic_bw/} LAT_TOOLS=${LAT_TOOLS//ib_atomic_lat/}
		say "note h no ib_atomic_bw, ib_atomic_lat: siw0 says atomic_cap ATOMIC_NONE"
	fi
	matrix h
)

# ulp_main: the configurations above, in that order.
ulp_main()
{
	local want_nvme=0 want_h=0 out scire0_deleted=0 tx0
	local -a deps

	say "config h (h) siw self|siw0 on eth0 (192.168.77.2), server and client on the same device, perftest with rdma_cm (-R); siw.ko built from Debian's linux-source-6.1 (scripts/siw-ko), scire0 deleted first"
	say "config nullb null_blk (ceiling)|fio on /dev/nullb0 itself (null_blk memory_backed=1, 1 GiB), no transport: the NVMe-oF rows' ceiling"
	say "info runs_nullb $ULP_RUNS"
	say "info runs_nvme $ULP_RUNS"
	say "info ulp_args fio --direct=1 --ioengine=libaio --size=$ULP_SPAN --time_based --runtime=$ULP_SECS; $(tr ' ' '\n' <<<"$ULP_JOBS" | awk -F: '{ printf "%s%s: --rw=%s --bs=%s --iodepth=%s", (NR > 1 ? ", " : ""), $1, $2, $3, $4 }')"
	wanted nvme && want_nvme=1
	wanted h && want_h=1
	[ "$want_nvme" = 1 ] || say "skip nullb not among --only $only"
	if [ "$quick" = 1 ]; then
		want_h=0
		say "skip h not in a quick run"
	elif [ "$want_h" = 0 ]; then
		say "skip h not among --only $only"
	fi
	for t in nvme fio; do
		[ "$want_nvme" = 0 ] || command -v "$t" >/dev/null || {
			say "note nullb NVMe-oF not measured: $t missing (Debian packages nvme-cli, fio)"
			want_nvme=0
		}
	done
	[ "$want_nvme" = 1 ] || [ "$want_h" = 1 ] || return 0

	if [ "$want_nvme" = 1 ]; then
		# Each transport gets a null_blk of its own, as fresh as this one:
		# a memory-backed null_blk allocates a page on its first write
		# there, and writes into pages an earlier run left are faster.
		if modprobe null_blk nr_devices=1 gb=1 memory_backed=1 2>"$scratch/nvme.err"; then
			ulp_fio nullb /dev/nullb0
			modprobe -r null_blk
		else
			ulp_fail_rows nullb "modprobe null_blk: $(tr '\n' ' ' <"$scratch/nvme.err")"
		fi
		if rdma_has scire0; then
			ulp_nvme b scire0 "$ULP_ADDR"
		else
			ulp_fail_rows b "no scire0"
		fi
	fi
	[ "$quick" = 0 ] || return 0

	if rdma_has scire0; then
		if ! out=$(timeout 60 rdma link delete scire0 2>&1); then
			say "setupfail h rdma link delete scire0: $out"
			return 0
		fi
		scire0_deleted=1
	fi
	if [ "$want_nvme" = 1 ]; then
		if ! out=$({ timeout 60 modprobe rdma_rxe && timeout 60 rdma link add rxe0 type rxe netdev eth0; } 2>&1); then
			ulp_fail_rows a "rxe0 on eth0: $out"
		else
			wait_for 10 port_active rxe0
			ulp_nvme a rxe0 "$ULP_ADDR"
		fi
		rdma_has rxe0 && { timeout 60 rdma link delete rxe0 || say "note a cannot delete rxe0"; }
		[ ! -d /sys/module/rdma_rxe ] || wait_for 10 timeout 10 rmmod rdma_rxe || say "note a rmmod rdma_rxe failed"
	fi

	if [ -z "$SIW_KO" ] || [ ! -f "$SIW_KO" ]; then
		say "setupfail h no siw.ko (${SIW_KO:-scripts/bench passes none}): see scripts/siw-ko"
	elif ! out=$({
		# insmod loads no dependencies: those of siw.ko (ib_core,
		# libcrc32c) are in the stock kernel's modules.
		IFS=, read -ra deps <<<"$(modinfo -F depends "$SIW_KO")" &&
			modprobe -a "${deps[@]}" &&
			insmod "$SIW_KO" && timeout 60 rdma link add siw0 type siw netdev eth0
	} 2>&1); then
		say "setupfail h siw0 on eth0: $out"
	else
		wait_for 10 port_active siw0
		if [ "$want_h" = 1 ]; then
			tx0=$(eth0_tx)
			siw_matrix
			say "note h eth0 tx_packets during (h): $(delta "$tx0" "$(eth0_tx)") (siw's own TCP connections to eth0's address go over lo)"
		fi
		[ "$want_nvme" = 0 ] || ulp_nvme h siw0 "$ULP_ADDR"
	fi
	if rdma_has siw0 && ! out=$(timeout 60 rdma link delete siw0 2>&1); then
		say "note h rdma link delete siw0: $out"
	fi
	[ ! -d /sys/module/siw ] || wait_for 10 timeout 10 rmmod siw || say "note h rmmod siw failed"
	if [ "$scire0_deleted" = 1 ] && ! out=$(timeout 60 rdma link add scire0 type scire netdev eth0 2>&1); then
		say "note h cannot add scire0 on eth0 again: $out"
	fi
}

# ulp_pair KEY: NVMe-oF across the VM pair (pair_main, both hosts): the
# target on host a (its eth0 address), the host on host b; rows in KEY.
ulp_pair()
{
	local key=$1 ctrl ns t0=$SECONDS ok=ok

	wanted nvme || return 0
	if [ "$SCIRE_HOST" = a ]; then
		nvme_target_up "$SCIRE_ADDR" >"$scratch/nvme.err" 2>&1 || ok="the target on host a would not come up: $(tr '\n' ' ' <"$scratch/nvme.err" | cut -c1-300)"
		printf '%s\n' "$ok" >"$PAIR_DIR/nvme.target.tmp" && mv "$PAIR_DIR/nvme.target.tmp" "$PAIR_DIR/nvme.target"
		psync nvme-done || say "note $key NVMe-oF: host b never finished"
		nvme_target_down
		return 0
	fi
	psync_file "$PAIR_DIR/nvme.target" 600 || ok="host a never said whether its target is up"
	[ "$ok" != ok ] || ok=$(cat "$PAIR_DIR/nvme.target")
	if [ "$ok" != ok ]; then
		ulp_fail_rows "$key" "$ok"
	elif ! ctrl=$(nvme_host_connect "$SCIRE_PEER" 2>"$scratch/nvme.err") || ! ns=$(nvme_ns_dev "$ctrl" 1); then
		ulp_fail_rows "$key" "nvme connect to host a failed: $(tail -n 5 "$scratch/nvme.err" | tr '\n' ' ' | cut -c1-300)"
	else
		ulp_fio "$key" "$ns"
		timeout 60 nvme disconnect -n "$NVME_NQN" >/dev/null 2>&1 || say "note $key NVMe-oF: nvme disconnect failed"
	fi
	modprobe -r nvme-rdma 2>/dev/null
	psync nvme-done
	say "note $key NVMe-oF across the pair took $((SECONDS - t0)) s"
}

# psync_file FILE SECS: wait for FILE to appear.
psync_file()
{
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		nap 0.1
	done
	return 1
}
