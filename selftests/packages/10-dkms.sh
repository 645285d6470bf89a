#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian packages of `make deb` (build/deb/), installed the way a user
# would: dpkg -i, scire-dkms builds scire.ko and scire_scif.ko for the
# running kernel, modprobe loads them from DKMS's directory, scire0 comes up
# on eth0 and ibv_devinfo finds it through the installed provider alone (the
# tree's copy that the VM puts in place is removed first), libscif.so.0
# reaches /dev/scif, man finds the packages' manual pages, and purging the
# packages takes the modules and pages away again.
# Needs a boot without the tree's scire.ko (make check boots 6.1 beside
# its stock boot, make check-packages alone; bookworm's 6.12 by hand with
# --kernel 6.12):
#   scripts/vm [--kernel 6.12] --no-scire -- selftests/run packages/
# shellcheck source-path=SCRIPTDIR/..
set -u
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ ! -d /sys/module/scire ] || skip "scire is loaded already: boot with scripts/vm --no-scire"
debs=${SCIRE_DEBS:-$SCIRE_BUILD/deb}
pkgs=(scire-dkms scire-ibverbs-provider libscif0 libscif-dev)
files=()
for p in "${pkgs[@]}"; do
	f=("$debs/${p}"_*.deb)
	[ -f "${f[0]}" ] || fail "no $p package in $debs: run make deb"
	files+=("${f[0]}")
done
abi=$(uname -r)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
provider=/usr/lib/$multiarch/libibverbs/libscire-rdmav34.so

# The VM installs the tree's provider on its overlay; only the package's
# may be found here. The overlay root is thrown away at power-off.
rm -f "$provider" /etc/libibverbs.d/scire.driver
unset RDMAV_DRIVERS LD_LIBRARY_PATH

# DKMS builds against /lib/modules/<abi>/build, which the linux-headers
# package links; the VM's /lib/modules is the unpacked kernel image's.
[ -d "/usr/src/linux-headers-$abi" ] || skip "no linux-headers-$abi on the host"
[ -e "/lib/modules/$abi/build" ] || ln -s "/usr/src/linux-headers-$abi" "/lib/modules/$abi/build"

# man-db rebuilds its index after each dpkg run that adds or removes a
# manual page: 30 s under TCG, twice here, and not what this test checks.
# This overlay is thrown away, so it goes without; the pages are looked up
# below with man -w, which reads the directories themselves.
rm -f /var/lib/man-db/auto-update

# Printed as it goes: under TCG the DKMS build takes many minutes.
export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
dpkg -i "${files[@]}" 2>&1 | while IFS= read -r line; do
	printf '%4ss %s\n' "$(($(date +%s) - start))" "$line"
done
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
echo "dpkg -i (DKMS build and install for $abi): ${secs}s"
st=$(dkms status scire 2>&1)
echo "dkms status: $st"
if [ "$rc" != 0 ] || ! grep -q "$abi.*installed" <<<"$st"; then
	for l in /var/lib/dkms/scire/*/build/make.log; do
		[ -f "$l" ] && tail -n 40 "$l"
	done
	fail "dpkg -i failed (status $rc) or DKMS did not install scire for $abi"
fi

for m in scire scire_scif; do
	path=$(modinfo -n "$m" 2>&1) || fail "modinfo $m: $path"
	case $path in
	"/lib/modules/$abi/updates/dkms/$m.ko"*) ;;
	*) fail "modprobe would load $m from $path, not DKMS's updates/dkms" ;;
	esac
done
modprobe scire || fail "modprobe scire failed"
modprobe scire_scif || fail "modprobe scire_scif failed"
[ -c /dev/scif ] || fail "no /dev/scif after modprobe scire_scif"

rdma link add scire0 type scire netdev eth0 || fail "rdma link add scire0 type scire netdev eth0 failed"
owner=$(dpkg -S "$provider" 2>&1)
grep -q '^scire-ibverbs-provider' <<<"$owner" || fail "$provider is not the package's: $owner"
info=$(ibv_devinfo -d scire0 2>&1) || fail "ibv_devinfo -d scire0 failed: $info"
echo "$info" | grep -E 'hca_id|transport|state:|link_layer'
grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" || fail "scire0's port is not PORT_ACTIVE"

# libscif0 from its package: it opens /dev/scif and counts the nodes.
nodes=$(python3 -c '
import ctypes
lib = ctypes.CDLL("libscif.so.0")
ids = (ctypes.c_uint16 * 16)()
self_id = ctypes.c_uint16()
print(lib.scif_get_nodeIDs(ids, 16, ctypes.byref(self_id)))' 2>&1)
[[ $nodes =~ ^[1-9][0-9]*$ ]] || fail "libscif.so.0: scif_get_nodeIDs() gave '$nodes'"
echo "libscif.so.0: scif_get_nodeIDs() = $nodes"

# The manual pages the packages install: scire(7) and scif(7) with
# scire-dkms, a page per libscif call with libscif-dev.
for page in "7 scire" "7 scif" "3 scif_open" "3 scif_readfrom" "3 scif_fence_mark"; do
	# shellcheck disable=SC2086 # section and name
	where=$(man -w $page 2>&1) || fail "man -w $page: $where"
	case $where in
	/usr/share/man/*) echo "man $page: $where" ;;
	*) fail "man -w $page found $where, not the package's page" ;;
	esac
done

rdma link delete scire0 || fail "rdma link delete scire0 failed"
rmmod scire_scif || fail "rmmod scire_scif failed"
rmmod scire || fail "rmmod scire failed"

out=$(dpkg -P "${pkgs[@]}" 2>&1) || fail "dpkg -P failed: $out"
# 6.12's DKMS installs the modules xz-compressed (scire.ko.xz).
left=$(find "/lib/modules/$abi/updates/dkms" -name 'scire*.ko*' 2>/dev/null)
[ -z "$left" ] || fail "still installed after dpkg -P: $left"
[ ! -e "$provider" ] || fail "$provider is still there after dpkg -P"
! where=$(man -w 7 scire 2>/dev/null) || fail "scire(7) is still there after dpkg -P: $where"
echo "purged: ${pkgs[*]}"
exit 0
