# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# NVMe over Fabrics (RDMA) helpers for the selftests: an nvmet-rdma target
# configured through configfs with a memory-backed null_blk namespace and a
# file namespace, and the host side with nvme-cli. Sourced (not a test).

NVME_NQN=nqn.2026-11.org.scire:test
NVME_PORT=4420
NVME_CFG=/sys/kernel/config/nvmet

# nvme_target_up ADDR: export nullb0 (namespace 1) and a 64 MiB file
# (namespace 2) to any host on ADDR:4420 over RDMA.
nvme_target_up()
{
	local addr=$1 sub ns port

	modprobe -a nvmet nvmet-rdma || return 1
	[ -e /dev/nullb0 ] || modprobe null_blk nr_devices=1 gb=1 memory_backed=1 || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	sub=$NVME_CFG/subsystems/$NVME_NQN
	mkdir "$sub" || return 1
	echo 1 >"$sub/attr_allow_any_host"
	ns=$sub/namespaces/1
	mkdir "$ns" && echo /dev/nullb0 >"$ns/device_path" && echo 1 >"$ns/enable" || return 1
	truncate -s 64M /run/nvme-file.img || return 1
	ns=$sub/namespaces/2
	# The file lives in tmpfs, which has no O_DIRECT: buffered I/O.
	mkdir "$ns" && echo /run/nvme-file.img >"$ns/device_path" &&
		echo 1 >"$ns/buffered_io" && echo 1 >"$ns/enable" || return 1
	port=$NVME_CFG/ports/1
	mkdir "$port" || return 1
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$addr" >"$port/addr_traddr"
	echo "$NVME_PORT" >"$port/addr_trsvcid"
	nvme_port_link
}

# nvme_port_unlink: take the subsystem off port 1 (nvmet deletes its
# controllers there, and with the port's last subsystem disables the port,
# which drops nvmet-rdma's listener and its hold on the module).
nvme_port_unlink()
{
	rm "$NVME_CFG/ports/1/subsystems/$NVME_NQN"
}

# nvme_port_link: put the subsystem back on port 1 (enables the port).
nvme_port_link()
{
	ln -s "$NVME_CFG/subsystems/$NVME_NQN" "$NVME_CFG/ports/1/subsystems/$NVME_NQN"
}

# nvme_target_down: undo nvme_target_up (what of it exists).
nvme_target_down()
{
	local sub=$NVME_CFG/subsystems/$NVME_NQN

	rm -f "$NVME_CFG/ports/1/subsystems/$NVME_NQN" 2>/dev/null
	rmdir "$NVME_CFG/ports/1" 2>/dev/null
	for ns in "$sub"/namespaces/*; do
		[ -d "$ns" ] || continue
		echo 0 >"$ns/enable"
		rmdir "$ns"
	done
	rmdir "$sub" 2>/dev/null
	rm -f /run/nvme-file.img
	modprobe -r nvmet-rdma nvmet null_blk 2>/dev/null
	return 0
}

# nvme_host_connect ADDR: discover and connect; prints the controller name
# (nvme0) once both namespaces have block devices.
nvme_host_connect()
{
	local addr=$1 ctrl c

	modprobe nvme-rdma || return 1
	nvme discover -t rdma -a "$addr" -s "$NVME_PORT" >&2 || return 1
	nvme connect -t rdma -a "$addr" -s "$NVME_PORT" -n "$NVME_NQN" "${@:2}" >&2 || return 1
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NVME_NQN" ] && ctrl=$(basename "$c")
	done
	[ -n "${ctrl:-}" ] || return 1
	wait_for 20 nvme_ns_ready "$ctrl" 1 >&2 && wait_for 20 nvme_ns_ready "$ctrl" 2 >&2 || return 1
	echo "$ctrl"
}

# nvme_ns_dev CTRL NSID: the block device of namespace NSID of CTRL.
nvme_ns_dev()
{
	local d

	for d in /sys/class/nvme/"$1"/nvme*n*; do
		[ -e "$d/nsid" ] || continue
		if [ "$(cat "$d/nsid")" = "$2" ]; then
			echo "/dev/$(basename "$d" | sed 's/c[0-9]*n/n/')"
			return 0
		fi
	done
	return 1
}

# nvme_ns_ready CTRL NSID: namespace NSID of CTRL has its block device.
nvme_ns_ready()
{
	local d

	d=$(nvme_ns_dev "$1" "$2") && [ -b "$d" ]
}

# nvme_fio DEV SIZE [FIO-OPTION...]: random writes of 4 KiB to 1 MiB at
# depth 32 over the first SIZE of DEV, each block's crc32c checked when
# read back. FIO-OPTIONs come last, so they override (--ioengine=io_uring
# --hipri for polled I/O, --rate= to stretch a run across a fault).
nvme_fio()
{
	fio --name=scire-verify --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=32 --rw=randwrite --bsrange=4k-1m --size="$2" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randseed=$RANDOM \
		"${@:3}" --output-format=terse --terse-version=3 >/dev/null
}

# nvme_sum DEV SIZE: the SHA-256 of the first SIZE (in MiB, as 32M) of DEV.
# A block device is read with O_DIRECT: a buffered read could return what
# an earlier one left in its page cache, while the I/O under test (fio's,
# nvmet's bdev backend) bypasses it. A file (nvmet's buffered_io
# namespace, in tmpfs, which has no O_DIRECT) is read through its cache,
# which is where nvmet wrote.
nvme_sum()
{
	if [ -b "$1" ]; then
		dd if="$1" bs=1M count="${2%M}" iflag=direct status=none
	else
		head -c "$2" "$1"
	fi | sha256sum | cut -d' ' -f1
}

# nvme_ctrl_state CTRL: the state of controller CTRL (live, connecting,
# resetting, deleting, ...), or "gone".
nvme_ctrl_state()
{
	cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone
}
