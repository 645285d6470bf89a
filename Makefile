# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# scire top-level build. `make` builds kernel/scire.ko (Kbuild, against
# Debian's linux-headers-amd64 unless KDIR= says otherwise) and the user
# side (Meson: libscire-rdmav34.so and the selftest programs) in $(BUILD).
# `make KABI=<abi>` builds the modules for another Debian kernel ABI, such
# as bookworm's 6.12 (scripts/kabi --612), against
# /usr/src/linux-headers-<abi>, into $(BUILD)/k-<abi>/ (scripts/vm
# --kernel <abi> loads them from there); the tree's own kernel/*.ko stay
# the default kernel's. `make DISTRO=trixie kernel ktest` builds them for
# Debian trixie's kernel, inside the trixie root of scripts/trixie-root
# (chroot: trixie's gcc and linux-headers), into $(BUILD)/k-trixie-<abi>/
# (scripts/vm --distro trixie loads them from there). `make KABI=newest
# kernel ktest` builds them for the newest Debian kernel the same way, in
# the build root of scripts/newest-kernel.

KABI_DEFAULT := $(shell scripts/kabi 2>/dev/null)
KABI	?= $(KABI_DEFAULT)
KDIR	?= /usr/src/linux-headers-$(KABI)
BUILD	?= build
PREFIX	?= /usr
DESTDIR	?=
V	?= 0
# What runs Kbuild's make (the trixie root's chroot for DISTRO=trixie),
# and where KDIR is seen from here.
KRUN	:=
KROOT	:=

# scire's version: dkms.conf's PACKAGE_VERSION (Meson and debian/ read it too).
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)

# Debian's linux-source-6.1 provides checkpatch.pl; scripts/setup unpacks it.
CACHE		?= $(or $(SCIRE_CACHE),$(HOME)/.cache/scire)
LINUX_SRC	?= $(CACHE)/linux-source-6.1
CHECKPATCH	?= $(LINUX_SRC)/scripts/checkpatch.pl

KSRC	:= $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*.h kernel/ib/*.c kernel/scif/*.c kernel/scif/*.h \
	   kunit/*.c)) \
	   include/uapi/rdma/scire-abi.h include/uapi/rdma/scire-scif-abi.h

.PHONY: all kernel user ktest deps-ok check sparse checkpatch kernel-doc demo install \
	clean bench kernel-debug check-debug deb deb-one check-packages check-pair-rxe \
	check-full check-trixie check-newest check-hosts bench-cost bench-cost-selftest

all: kernel user ktest

deps-ok:
	@missing=""; \
	[ -f "$(KROOT)$(KDIR)/Makefile" ] || missing="$$missing linux-headers"; \
	command -v meson >/dev/null || missing="$$missing meson"; \
	command -v ninja >/dev/null || missing="$$missing ninja"; \
	pkg-config --exists libibverbs 2>/dev/null || missing="$$missing libibverbs-dev"; \
	if [ -n "$$missing" ]; then \
		echo "scire: missing build dependencies:$$missing" >&2; \
		echo "scire: install them with: sudo scripts/setup$(if $(filter trixie,$(DISTRO)), (DISTRO=trixie: and sudo scripts/trixie-root build))$(if $(NEWEST), (KABI=newest: and sudo scripts/newest-kernel build))" >&2; \
		exit 1; \
	fi

# link_tree DIR: DIR becomes a tree of symlinks to the kernel sources, so
# a build for another kernel leaves the objects in kernel/ alone (Kbuild
# writes its objects next to the sources). Links to files since removed go.
link_tree = mkdir -p $(1) && \
	find Kbuild include kunit kernel selftests/kmod \
		\( -name '*.[ch]' -o -name Kbuild -o -name scire_compat_probe \) \
		! -name '*.mod.c' -print | \
	while read -r f; do \
		mkdir -p "$(1)/$$(dirname $$f)"; \
		ln -sfn "$(CURDIR)/$$f" "$(1)/$$f"; \
	done; \
	find $(1) -xtype l -delete

# Where the modules are built: in the tree for the default kernel, in a
# linked tree of $(BUILD) for any other KABI.
KOUT	:= $(if $(filter $(KABI_DEFAULT),$(KABI)),$(CURDIR),$(abspath $(BUILD))/k-$(KABI))

# DISTRO=trixie: trixie's kernel ABI and headers, in the root that
# scripts/trixie-root build made; Kbuild runs there with chroot.
ifeq ($(DISTRO),trixie)
KABI	:= $(shell scripts/trixie-root abi 2>/dev/null)
KDIR	:= /usr/src/linux-headers-$(KABI)
KROOT	:= $(shell scripts/trixie-root dir 2>/dev/null)/root
KOUT	:= $(abspath $(BUILD))/k-trixie-$(KABI)
KRUN	:= scripts/trixie-root run --bind $(KOUT)
endif

# KABI=newest: the newest kernel Debian's registry serves (unstable's or
# trixie-backports', scripts/newest-kernel), built in that script's build
# root (chroot: the kernel's own gcc and linux-headers), into
# $(BUILD)/k-<abi>/ (scripts/vm --kernel newest loads them from there).
ifeq ($(KABI),newest)
override KABI := $(shell scripts/newest-kernel abi 2>/dev/null)
KDIR	:= /usr/src/linux-headers-$(KABI)
KROOT	:= $(shell scripts/newest-kernel dir 2>/dev/null)/root
KOUT	:= $(abspath $(BUILD))/k-$(KABI)
KRUN	:= scripts/newest-kernel run --bind $(KOUT)
NEWEST	:= 1
endif

kernel: deps-ok
	@[ "$(KOUT)" = "$(CURDIR)" ] || { $(call link_tree,$(KOUT)); }
	$(KRUN) $(MAKE) -C $(KDIR) M=$(KOUT) KBUILD_VERBOSE=$(V) W=1 KCFLAGS=-Werror modules

# The selftest modules in selftests/kmod/; the SCIF ones link against
# scire_scif.ko's exports, so they need the module build's Module.symvers.
# Kbuild does not relink an external module when only the symbol CRCs of
# KBUILD_EXTRA_SYMBOLS change (a struct in scire_scif's API grew): the
# test modules would then load with stale CRCs and be refused. A copy of
# the Module.symvers they were linked against tells when to relink; the
# relink starts from modpost (a .mod.o left without its .mod.c would be
# linked again as it is, CRCs and all).
ktest: kernel
	@if ! cmp -s $(KOUT)/Module.symvers $(KOUT)/selftests/kmod/.linked.symvers; then \
		rm -f $(KOUT)/selftests/kmod/*.ko $(KOUT)/selftests/kmod/*.mod.[co] \
			$(KOUT)/selftests/kmod/Module.symvers; fi
	$(KRUN) $(MAKE) -C $(KDIR) M=$(KOUT)/selftests/kmod KBUILD_VERBOSE=$(V) W=1 KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/Module.symvers modules
	@cp $(KOUT)/Module.symvers $(KOUT)/selftests/kmod/.linked.symvers

# scire.ko (with its KUnit suites) and scire_ktest.ko for the debug kernel
# of scripts/debug-kernel, in $(BUILD)/kdebug/: a tree of symlinks to the
# sources, so the stock objects in kernel/ are left alone. scripts/vm
# --kernel debug loads them from there.
KDEBUG_OUT := $(abspath $(BUILD))/kdebug

kernel-debug:
	@d=$$(SCIRE_CACHE=$(CACHE) scripts/debug-kernel dir) || \
		{ echo "scire: no debug kernel in $(CACHE): run sudo scripts/setup" >&2; exit 1; }; \
	$(call link_tree,$(KDEBUG_OUT)); \
	$(MAKE) -C $$d/src M=$(KDEBUG_OUT) KBUILD_VERBOSE=$(V) W=1 KCFLAGS=-Werror modules && \
	$(MAKE) -C $$d/src M=$(KDEBUG_OUT)/selftests/kmod KBUILD_VERBOSE=$(V) W=1 KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS=$(KDEBUG_OUT)/Module.symvers modules

user: deps-ok
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) --prefix=$(PREFIX) -Dwerror=true
	ninja -C $(BUILD)

# --- checks ---------------------------------------------------------------

# sparse over every kernel source (C=2 checks all files, not just rebuilt ones).
# Its objects go to a linked tree of their own, $(BUILD)/k-sparse-<abi>/,
# so that make check can run it while a VM loads the tree's kernel/*.ko.
SPARSE_OUT := $(abspath $(BUILD))/k-sparse-$(KABI)
sparse: deps-ok
	@command -v sparse >/dev/null || { echo "scire: sparse missing: run scripts/setup" >&2; exit 1; }
	@mkdir -p $(BUILD)
	@$(call link_tree,$(SPARSE_OUT))
	$(MAKE) -C $(KDIR) M=$(SPARSE_OUT) C=2 CF="-D__CHECK_ENDIAN__" modules > $(BUILD)/sparse.log 2>&1 || \
		{ cat $(BUILD)/sparse.log; exit 1; }
	@cat $(BUILD)/sparse.log
	@if grep -qE '(warning|error):' $(BUILD)/sparse.log; then \
		echo "scire: sparse reported problems" >&2; exit 1; fi

checkpatch:
	@[ -x $(CHECKPATCH) ] || { echo "scire: $(CHECKPATCH) missing: run scripts/setup" >&2; exit 1; }
	$(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES \
		-f $(KSRC)

# Every kernel-doc comment well formed (the headers package ships the tool).
kernel-doc: deps-ok
	@out=$$(perl $(KDIR)/scripts/kernel-doc -none $(KSRC) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out"; exit 1; fi

# Host checks and VM selftests; the last line is "N passed, N failed".
check:
	@scripts/check

# make check with what it leaves out for its time (docs/testing.md): the
# one-host NFS over RDMA, iSER and SRP tests and the one-kernel rdma_rxe
# interop tests (91, 92) in the stock boot, and pair/90's lossy-wire runs
# both ways.
check-full:
	@SCIRE_FULL=1 scripts/check

# The debug-kernel lane alone: KUnit and every selftest (make check runs a
# subset there) under KASAN, lockdep, kmemleak and UBSAN.
check-debug:
	@SCIRE_CHECK_LANES=debug SCIRE_CHECK_DEBUG_TESTS=$${SCIRE_CHECK_DEBUG_TESTS:-all} \
		SCIRE_DEBUG_FULL=$${SCIRE_DEBUG_FULL:-1} scripts/check

# The Debian packages alone: make deb, then dpkg -i in a VM booted without
# the tree's scire.ko, DKMS building the modules there (selftests/packages/),
# eight minutes. make check runs the same VM in the background, at idle
# priority, beside its host checks and stock boot.
check-packages:
	@SCIRE_CHECK_LANES=packages scripts/check

# Two kernels, scire on host a and rdma_rxe on host b from boot, every
# test of selftests/pair/ (the ULPs too). make check's scire-scire pair
# runs the verbs and lossy-wire tests scire to rxe in its own boot
# (pair/90).
check-pair-rxe:
	@SCIRE_CHECK_LANES="host pair-rxe" scripts/check

# Three hosts on one switched segment (scripts/vm --hosts 3): Open MPI
# with one rank on each over scire, and a scire/rxe/scire fabric running
# ibv_rc_pingpong -c and ib_write_bw between every two hosts
# (selftests/hosts/), about five minutes. Not part of make check.
check-hosts: all
	@scripts/vm --hosts 3 -- selftests/run hosts/

# Debian trixie (scripts/trixie-root, made first if missing): the modules
# built for trixie's kernel with trixie's gcc (make DISTRO=trixie), then
# one trixie boot running the selftests that pass there, and a pair with
# scire on bookworm (host a) and trixie's rdma_rxe on host b. make check
# runs a shorter trixie boot and no pair.
check-trixie:
	@SCIRE_CHECK_LANES=trixie SCIRE_CHECK_TRIXIE_FULL=1 scripts/check

# The newest Debian kernel (scripts/newest-kernel: unstable's or
# trixie-backports'): its build root and kernel made if missing (about 5
# minutes, once), the modules built in it with W=1 -Werror (make
# KABI=newest kernel ktest), one boot of it running a subset of the
# selftests (SCIRE_CHECK_NEWEST_TESTS). make check runs a shorter list.
check-newest:
	@SCIRE_CHECK_LANES=newest SCIRE_CHECK_NEWEST_FULL=1 scripts/check

demo:
	@scripts/demo

# The benchmark matrix (scripts/bench) in one VM boot, rxe and scire side by
# side, then across the VM pair, rxe to rxe and scire to scire, then the
# cost per operation (scripts/bench-cost, below); needs `make` first.
# QUICK=1: one run per cell, one size, no pair, no cost boot, a few minutes.
# BENCH_OUT: where the markdown goes; the full run's default,
# bench/results.md, is committed, so a quick run writes elsewhere.
QUICK		?=
bench_quick	:= $(filter 1 y yes,$(QUICK))
BENCH_OUT	?= $(if $(bench_quick),$(BUILD)/bench/results-quick.md,bench/results.md)

bench:
	@scripts/bench $(if $(bench_quick),--quick) --out $(BENCH_OUT)
	$(if $(bench_quick),,@scripts/bench-cost --siw --out $(BENCH_OUT))

# Instructions, system calls, context switches and copies per operation
# (issue 50), counted by a QEMU TCG plugin in one VM boot of its own:
# scire's fast and wire paths, rxe and siw; writes the section "Cost per
# operation" of bench/results.md (BENCH_OUT). Method: bench/cost.md.
# bench-cost-selftest: only the probe's self-test (a loop of known length
# counted within 0.1%), one short boot.
bench-cost:
	@scripts/bench-cost --siw --out $(BENCH_OUT)

bench-cost-selftest:
	@scripts/bench-cost --selftest

# As a distro package would: the module under updates/ (unsigned: sign it
# yourself for Secure Boot), the provider in libibverbs' provider directory
# and /etc/libibverbs.d/scire.driver (meson install).
MODDIR	:= /lib/modules/$(KABI)/updates

install: all
	install -D -m 644 $(KOUT)/kernel/scire.ko $(DESTDIR)$(MODDIR)/scire.ko
	install -D -m 644 $(KOUT)/kernel/scif/scire_scif.ko $(DESTDIR)$(MODDIR)/scire_scif.ko
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KABI); \
	else echo "scire: run 'depmod -a $(KABI)' on the target"; fi
	DESTDIR=$(DESTDIR) meson install -C $(BUILD) --no-rebuild

# Debian packages (debian/) in $(BUILD)/deb/: scire-dkms, the provider,
# libscif0, libscif-dev. Built from a copy of the tree's files (git's view:
# tracked and untracked, not ignored) in $(BUILD)/deb/scire-$(VERSION), so
# the checkout itself is left alone; lintian's errors fail the target.
# `make deb DISTRO=trixie` builds them for trixie instead, inside the
# trixie root (chroot: trixie's debhelper, dkms, Meson and rdma-core 56),
# into $(BUILD)/deb-trixie/: the provider package then depends on trixie's
# libibverbs1 56 and refuses bookworm's 44, and the other way round.
DEB_OUT	:= $(BUILD)/deb
DEB_RUN	:=
ifeq ($(DISTRO),trixie)
DEB_OUT	:= $(BUILD)/deb-trixie
DEB_RUN	:= $(CURDIR)/scripts/trixie-root run --bind $(abspath $(DEB_OUT))
endif

# `make deb` builds bookworm's and, when the trixie root is there, trixie's;
# DISTRO=bookworm or DISTRO=trixie builds one.
deb:
ifeq ($(DISTRO),)
	@$(MAKE) --no-print-directory deb-one
	@if SCIRE_CACHE=$(CACHE) scripts/trixie-root check >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory deb-one DISTRO=trixie; \
	else echo "scire: no trixie root (sudo scripts/trixie-root build): bookworm's packages only"; fi
else
	@$(MAKE) --no-print-directory deb-one
endif

deb-one:
	@if [ -z "$(DEB_RUN)" ]; then \
		command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || \
		{ echo "scire: debhelper or dh-dkms missing: run sudo scripts/setup" >&2; exit 1; }; \
	else SCIRE_CACHE=$(CACHE) scripts/trixie-root check || \
		{ echo "scire: no trixie root: run sudo scripts/trixie-root build" >&2; exit 1; }; fi
	@cl=$$(dpkg-parsechangelog -SVersion); [ "$$cl" = "$(VERSION)" ] || \
		{ echo "scire: debian/changelog is at $$cl, dkms.conf at $(VERSION)" >&2; exit 1; }
	rm -rf $(DEB_OUT)
	mkdir -p $(DEB_OUT)/scire-$(VERSION)
	git ls-files -co --exclude-standard | while read -r f; do [ ! -e "$$f" ] || echo "$$f"; done | \
		tar -cf - -T - | tar -xf - -C $(DEB_OUT)/scire-$(VERSION)
	cd $(DEB_OUT)/scire-$(VERSION) && $(DEB_RUN) dpkg-buildpackage -us -uc -b
	rm -rf $(DEB_OUT)/scire-$(VERSION)
	@if command -v lintian >/dev/null; then \
		echo "lintian $(DEB_OUT)/*.changes"; \
		lintian --fail-on error $(DEB_OUT)/*.changes; \
	else echo "scire: lintian missing: packages not checked" >&2; fi
	@ls $(DEB_OUT)/*.deb

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/kmod clean
	rm -rf $(BUILD)
