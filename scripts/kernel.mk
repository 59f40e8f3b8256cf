# SPDX-License-Identifier: GPL-2.0
#
# Kernel targets of kpgo, included by the top Makefile.  None of them runs
# scripts/setup: run it once on a new machine.
#
# BASE= names the base configuration: a kconfig target (tinyconfig, the
# default; defconfig) or the path of your own .config (plain, .gz or .xz).
# scripts/configure-kernel applies scripts/configs/{qemu,pgo}.config on top
# (and scripts/configs/<BASE>.config if there is one).  Each base has its
# own trees: KPGO_BUILD is build/ for tinyconfig, build/<target> for another
# target, build/config-<name>-<hash> for a file (scripts/base-dir prints it).
#
# TOOLCHAIN= names the toolchain of every kernel target: llvm-19 (the
# default: clang 19, rustc 1.85), llvm-22 (clang 22, rustc 1.96), llvm-21
# and llvm-23 (sid's clang 21 and 23, rustc 1.96), or the path
# of a toolchain file (scripts/toolchains/ has the form).  It selects
# clang/LLVM, ld.lld, llvm-profdata, rustc, rustdoc, the Rust library source
# and bindgen's libclang together; each toolchain but the default has its
# trees in KPGO_BUILD/<toolchain>.  An unknown one is refused here, before
# anything is built.
#
#   make kernel         KPGO_BUILD/linux: the instrumented kernel (on the
#                       default base, the test kernel: + scripts/kpgo.config,
#                       lock debugging); bzImage, vmlinux and modules
#   make optimized      KPGO_BUILD/linux-optimized: PGO off, PROFILE applied
#                       (default: the main job's KPGO_BUILD/kernel.profdata)
#   make baseline       KPGO_BUILD/linux-nopgo: PGO off, no profile
#   make kernel-check   the QEMU tests of tests/kernel/ on build/linux
#   make kernel-kasan   build/linux-kasan: the test kernel + KASAN, kmemleak
#                       and fault injection (scripts/configs/kasan.config)
#   make kernel-sampled, kernel-sampled-kasan
#                       the test kernel and its KASAN twin with sampled
#                       instrumentation (TOOLCHAIN=llvm-22: clang 21 or
#                       later), for make check-sampled
#   make kernel-figures build-time figures, build/figures-kernel.txt
#
# PRODUCTION_CONFIG=FRAGMENT is applied last to the optimized and baseline
# kernels: the differences of your production configuration from the
# instrumented one (e.g. scripts/configs/modversions.config).
#
# scripts/kmake runs make in the prepared tree with the right toolchain,
# for anything else: scripts/kmake menuconfig, scripts/kmake M=dir modules.

KPGO_REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BASE ?= tinyconfig
TOOLCHAIN ?= llvm-19
export BASE TOOLCHAIN
# MODULE_LIST=FILE (scripts/kernel-env.sh), for every script and its
# build folder.
ifneq ($(MODULE_LIST),)
override MODULE_LIST := $(abspath $(MODULE_LIST))
export MODULE_LIST
endif
# Given explicitly: make 4.3 does not pass exported variables to $(shell).
KPGO_BUILD := $(shell BASE='$(BASE)' TOOLCHAIN='$(TOOLCHAIN)' MODULE_LIST='$(MODULE_LIST)' \
	LINUX='$(LINUX)' $(KPGO_REPO)/scripts/base-dir)
ifeq ($(KPGO_BUILD),)
$(error BASE=$(BASE) TOOLCHAIN=$(TOOLCHAIN): no build folder, see the line above)
endif
KPGO_KERNEL_TREE := $(KPGO_BUILD)/linux
KPGO_KERNEL_TREE_NOPGO := $(KPGO_BUILD)/linux-nopgo
KPGO_KERNEL_TREE_OPTIMIZED := $(KPGO_BUILD)/linux-optimized
# The profile that `make optimized` applies: by default the main job's.
PROFILE ?= $(KPGO_BUILD)/kernel.profdata
# The test kernels' lock debugging (make kernel, optimized, baseline), on the
# default base only: the main job (make) goes without.
KPGO_TEST_FRAGMENTS := $(if $(filter tinyconfig,$(BASE)),--fragment $(KPGO_REPO)/scripts/kpgo.config)
KPGO_PRODUCTION_FRAGMENTS := $(if $(PRODUCTION_CONFIG),--fragment $(abspath $(PRODUCTION_CONFIG)))

.PHONY: kernel kernel-nopgo kernel-check kernel-figures optimized baseline \
	series series-check

# Each target prepares its tree (quick when up to date) and configures it
# when the configuration's inputs changed (configure-kernel --if-changed).
kpgo_prepared = KPGO_TREE=$(1) $(KPGO_REPO)/scripts/prepare-kernel --configure $(2)

kernel:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE),$(KPGO_TEST_FRAGMENTS))
	KPGO_TREE=$(KPGO_KERNEL_TREE) $(KPGO_REPO)/scripts/kmake

# The baseline: the configuration without PGO_CLANG, no profile.
baseline kernel-nopgo:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_NOPGO),--no-pgo $(KPGO_TEST_FRAGMENTS) $(KPGO_PRODUCTION_FRAGMENTS))
	KPGO_TREE=$(KPGO_KERNEL_TREE_NOPGO) $(KPGO_REPO)/scripts/kmake

# The optimized kernel: the configuration without PGO_CLANG, PROFILE applied
# (and RUST_PROFILE to Rust, where rustc writes another raw version);
# the profile's binary ids are checked against the instrumented kernel of
# this base when that was built (KPGO_BUILD/linux).
optimized:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_OPTIMIZED),--no-pgo $(KPGO_TEST_FRAGMENTS) $(KPGO_PRODUCTION_FRAGMENTS))
	KPGO_TREE=$(KPGO_KERNEL_TREE_OPTIMIZED) $(KPGO_REPO)/scripts/build-optimized \
		--instrumented $(KPGO_KERNEL_TREE) --instrumented $(KPGO_BUILD)/bench/instrumented \
		$(if $(RUST_PROFILE),--rust-profile $(RUST_PROFILE)) $(PROFILE)

# The test kernel with LLVM's runtime counter relocation
# (scripts/configs/counter-relocation.config), in build/linux-reloc, with
# preemption as distributions build it (preempt-dynamic.config): an epoch
# switch's wait then includes synchronize_rcu_tasks() (TASKS_RCU), which
# covers a task preempted between its load of the bias and its update;
# and with Magic SysRq (sysrq.config), which persist.sh crashes it with.
KPGO_KERNEL_TREE_RELOC := $(KPGO_BUILD)/linux-reloc
KPGO_RELOC_FRAGMENTS := $(KPGO_TEST_FRAGMENTS) \
	--fragment $(KPGO_REPO)/scripts/configs/counter-relocation.config \
	--fragment $(KPGO_REPO)/scripts/configs/preempt-dynamic.config
.PHONY: kernel-reloc
kernel-reloc:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_RELOC),$(KPGO_RELOC_FRAGMENTS) --fragment \
		$(KPGO_REPO)/scripts/configs/sysrq.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_RELOC) $(KPGO_REPO)/scripts/kmake

# tests/kernel/reloc.sh on that kernel, built first: every counter update
# through its object's bias, and the end-to-end tests' exact profiles.
# About 20 minutes on 2 cores (a build of its own, and the scale test), so
# out of make check.
.PHONY: check-reloc
check-reloc: kernel-reloc
	$(KPGO_REPO)/tests/kernel/reloc.sh

# The relocation kernel with the timerlat tracer
# (scripts/configs/latency.config), in KPGO_BUILD/linux-latency, and
# tests/kernel/latency.sh on it: a generated module of about a million
# counters, read, mapped and switched with timerlat watching one CPU, for
# every preemption model the release offers at boot (6.12: none and
# voluntary too). About 20 minutes on 2 cores with a cold build.
KPGO_KERNEL_TREE_LATENCY := $(KPGO_BUILD)/linux-latency
.PHONY: kernel-latency check-latency
kernel-latency:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_LATENCY),$(KPGO_RELOC_FRAGMENTS) --fragment \
		$(KPGO_REPO)/scripts/configs/latency.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_LATENCY) $(KPGO_REPO)/scripts/kmake
check-latency: kernel-latency
	KPGO_TREE=$(KPGO_KERNEL_TREE_LATENCY) $(KPGO_REPO)/tests/kernel/latency.sh

# The test kernel with sampled instrumentation
# (scripts/configs/sampling.config), in KPGO_BUILD/linux-sampled: it needs
# LLVM 21 or later (kernel/pgo/Kconfig), so TOOLCHAIN=llvm-22.
KPGO_KERNEL_TREE_SAMPLED := $(KPGO_BUILD)/linux-sampled
.PHONY: kernel-sampled
kernel-sampled:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_SAMPLED),$(KPGO_TEST_FRAGMENTS) --fragment \
		$(KPGO_REPO)/scripts/configs/sampling.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_SAMPLED) $(KPGO_REPO)/scripts/kmake

# The test kernel with entry sampling (scripts/configs/entry-sampling.config:
# kpgo's pass plugin, built against the compiler's LLVM, whose headers
# scripts/setup installs for LLVM 22), in KPGO_BUILD/linux-entry, and
# tests/kernel/entry-sampled.sh on it, with SAMPLED_TOOLCHAIN (below).
KPGO_KERNEL_TREE_ENTRY := $(KPGO_BUILD)/linux-entry
.PHONY: kernel-entry check-entry
kernel-entry:
	$(call kpgo_prepared,$(KPGO_KERNEL_TREE_ENTRY),$(KPGO_TEST_FRAGMENTS) --fragment \
		$(KPGO_REPO)/scripts/configs/entry-sampling.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_ENTRY) $(KPGO_REPO)/scripts/kmake
check-entry:
	$(MAKE) -s kernel-entry BASE=tinyconfig TOOLCHAIN=$(SAMPLED_TOOLCHAIN)
	$(MAKE) -s kernel-entry-kasan TOOLCHAIN=$(SAMPLED_TOOLCHAIN)
	TOOLCHAIN=$(SAMPLED_TOOLCHAIN) $(KPGO_REPO)/tests/kernel/entry-sampled.sh

# tests/kernel/sampled.sh on that kernel and its KASAN twin
# (kernel-sampled-kasan), built first with SAMPLED_TOOLCHAIN (default
# llvm-22): its build, a boot with known work, the hooks walk, and the
# module, scale and lifecycle tests.  About an hour on 2 cores with cold
# builds, so out of make check.
SAMPLED_TOOLCHAIN ?= llvm-22
.PHONY: check-sampled
check-sampled:
	$(MAKE) -s kernel-sampled BASE=tinyconfig TOOLCHAIN=$(SAMPLED_TOOLCHAIN)
	$(MAKE) -s kernel-sampled-kasan TOOLCHAIN=$(SAMPLED_TOOLCHAIN)
	TOOLCHAIN=$(SAMPLED_TOOLCHAIN) $(KPGO_REPO)/tests/kernel/sampled.sh

# What sampled instrumentation costs and keeps, with SAMPLED_TOOLCHAIN:
# the main job with VARIANTS=sampling-table (KPGO_BUILD/report.md: the
# sampled kernel against the baseline and the fully instrumented one on
# one vCPU, its profile's overlap with the full one, the kernel optimized
# with it and the share of the full profile's gain it keeps; the same for
# the other periods and bursts of SAMPLING_SETTINGS), then
# scripts/benchmark-sharing on 1, 2 and 4 vCPUs (KPGO_BUILD/sharing.md,
# which ends with the table of period and burst, now with the model on 2
# vCPUs).  About an hour on 2 cores (nine kernels), resumable.
.PHONY: sampling-report bench-sharing
sampling-report:
	VARIANTS="sampling-table entry" TOOLCHAIN=$(SAMPLED_TOOLCHAIN) $(KPGO_REPO)/scripts/profile-kernel
	TOOLCHAIN=$(SAMPLED_TOOLCHAIN) $(KPGO_REPO)/scripts/benchmark-sharing
bench-sharing:
	TOOLCHAIN=$(SAMPLED_TOOLCHAIN) $(KPGO_REPO)/scripts/benchmark-sharing

# The lifecycle test kernel of make check: the test kernel of the default
# base plus scripts/configs/kasan.config (KASAN, lockdep, kmemleak, fault
# injection), in build/linux-kasan.
KPGO_KERNEL_TREE_KASAN := $(shell BASE=tinyconfig TOOLCHAIN='$(TOOLCHAIN)' LINUX='$(LINUX)' $(KPGO_REPO)/scripts/base-dir)/linux-kasan
.PHONY: kernel-kasan
kernel-kasan:
	export BASE=tinyconfig; $(call kpgo_prepared,$(KPGO_KERNEL_TREE_KASAN),--fragment \
		$(KPGO_REPO)/scripts/kpgo.config --fragment $(KPGO_REPO)/scripts/configs/kasan.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_KASAN) $(KPGO_REPO)/scripts/kmake

# The same with sampled instrumentation (scripts/configs/sampling.config:
# LLVM 21 or later), in linux-sampled-kasan beside linux-kasan (the
# tinyconfig base's folder): make check-sampled runs the hooks and
# lifecycle tests on it.
KPGO_KERNEL_TREE_SAMPLED_KASAN := $(patsubst %/linux-kasan,%/linux-sampled-kasan,$(KPGO_KERNEL_TREE_KASAN))
.PHONY: kernel-sampled-kasan
kernel-sampled-kasan:
	export BASE=tinyconfig; $(call kpgo_prepared,$(KPGO_KERNEL_TREE_SAMPLED_KASAN),--fragment \
		$(KPGO_REPO)/scripts/kpgo.config --fragment $(KPGO_REPO)/scripts/configs/kasan.config \
		--fragment $(KPGO_REPO)/scripts/configs/sampling.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_SAMPLED_KASAN) $(KPGO_REPO)/scripts/kmake

# Its twin with entry sampling, in linux-entry-kasan: make check-entry runs
# the hooks and lifecycle tests on it.
KPGO_KERNEL_TREE_ENTRY_KASAN := $(patsubst %/linux-kasan,%/linux-entry-kasan,$(KPGO_KERNEL_TREE_KASAN))
.PHONY: kernel-entry-kasan
kernel-entry-kasan:
	export BASE=tinyconfig; $(call kpgo_prepared,$(KPGO_KERNEL_TREE_ENTRY_KASAN),--fragment \
		$(KPGO_REPO)/scripts/kpgo.config --fragment $(KPGO_REPO)/scripts/configs/kasan.config \
		--fragment $(KPGO_REPO)/scripts/configs/entry-sampling.config)
	KPGO_TREE=$(KPGO_KERNEL_TREE_ENTRY_KASAN) $(KPGO_REPO)/scripts/kmake

KPGO_KERNEL_TESTS := boot vmlinux modules lockdown hooks rust optimized
kernel-check: kernel
	@set -e; for t in $(KPGO_KERNEL_TESTS); do \
		echo "== tests/kernel/$$t.sh"; $(KPGO_REPO)/tests/kernel/$$t.sh; done

kernel-figures:
	$(KPGO_REPO)/scripts/kernel-figures

# patches/ (7.3) and patches/linux-6.12/ from integration/ and the sources;
# series-check fails when either is not what they give.
series:
	LINUX=7.3 $(KPGO_REPO)/scripts/make-series
	LINUX=6.12 $(KPGO_REPO)/scripts/make-series
series-check:
	LINUX=7.3 $(KPGO_REPO)/scripts/make-series --check
	LINUX=6.12 $(KPGO_REPO)/scripts/make-series --check

# The whole loop on x86_64 defconfig with in-tree modules, checked and
# measured (build/defconfig/defconfig-report.md), and on Debian's cloud
# kernel with its real modules (BASE=debian-cloud, in
# ~/.cache/kpgo/out/debian-cloud; distro-report.md there): hours on 2
# cores, so not part of make check.  Each stage reuses what an earlier run
# built; the distribution's compiles go through ccache.
.PHONY: check-defconfig check-distro check-bisect
check-defconfig:
	$(KPGO_REPO)/tests/kernel/whole-loop.sh defconfig
check-distro:
	$(KPGO_REPO)/tests/kernel/whole-loop.sh debian-cloud

# The optimized-build test (tests/kernel/optimized.sh) on the toolchain's
# test kernel (TOOLCHAIN=, default llvm-19), built first, and profiled
# first by tests/kernel/vmlinux.sh (again: a profile of an older build
# would be out of date): 0 out-of-date functions, the profile note,
# boots.  About 10 minutes on 2 cores after make check, so out of it; CI
# checks the same of the main job's optimized kernel (tests/kernel/
# main-job.sh).
.PHONY: check-optimized
check-optimized:
	$(MAKE) -s kernel BASE=tinyconfig
	$(KPGO_REPO)/tests/kernel/with-toolchain.sh $(TOOLCHAIN) vmlinux.sh
	$(KPGO_REPO)/tests/kernel/with-toolchain.sh $(TOOLCHAIN) optimized.sh

# The lifecycle stress test (tests/kernel/lifecycle.sh stress) on the KASAN
# kernel, built first: 2 CPUs for KPGO_STRESS_SECONDS (default 180) of
# module loads, reads, resets and NMI backtraces.  About 6 minutes on 2
# cores, so out of make check, which runs the deterministic lifecycle
# tests (paths, faults) on the same kernel.
.PHONY: check-stress
check-stress: kernel-kasan
	$(KPGO_REPO)/tests/kernel/lifecycle.sh stress

# Another toolchain's suites (scripts/check llvm-NN): its test kernel
# (make kernel TOOLCHAIN=llvm-NN), boot, vmlinux, modules, rust and the
# hooks walk on it, judged by its own llvm-profdata, and its bindings:
# about 17 minutes on 2 cores each, past make check's time budget.
# llvm-22: clang 22 with rustc 1.96; llvm-21: sid's clang 21 with rustc
# 1.96 (LLVM 22); llvm-23: sid's clang 23 (raw version 11) with rustc 1.96.
.PHONY: check-llvm-21 check-llvm-22 check-llvm-23
check-llvm-21 check-llvm-22 check-llvm-23:
	$(KPGO_REPO)/scripts/check $(patsubst check-%,%,$@)

# The suites that guard what differs between releases, on 6.12 LTS: its
# test kernel (build/linux-6.12/linux), series, boot, vmlinux, modules,
# live, rust and kconfig; about 25 minutes on 2 cores, past make check's
# time budget.
.PHONY: check-linux-6.12
check-linux-6.12:
	$(KPGO_REPO)/scripts/check linux-6.12

# Every commit of the series builds (build/bisect/): tens of minutes.
check-bisect:
	$(KPGO_REPO)/tests/kernel/bisect.sh

# The kernel's own tests (KUnit suites and the kernel crate's doctests) on
# an instrumented kernel, the kernel optimized with that run's profile and
# a baseline, in build/kunit/: three kernel builds, about 25 minutes on 2
# cores, so not part of make check.
.PHONY: check-kunit
check-kunit:
	$(KPGO_REPO)/tests/kernel/kunit.sh

# The series on every 6.12.y the archive offers (git am, the test kernel
# built), and the oldest one's profile applied to the newest
# (build/stable.md): about an hour on 2 cores, so not part of make check.
.PHONY: check-stable
check-stable:
	$(KPGO_REPO)/tests/kernel/stable.sh

# The hooks walk on the test kernel built with PREEMPT_DYNAMIC and with
# PREEMPT_RT (build/linux-preempt-*): two vmlinux builds, about 20 minutes
# on 2 cores, so not part of make check (which walks PREEMPT_NONE and
# PREEMPT kernels).
.PHONY: check-preempt
check-preempt:
	$(KPGO_REPO)/tests/kernel/preempt.sh

# tests/kernel/scale.sh with 10,000 load/unload cycles (make check runs
# 2,000): kpgo's memory must not grow with them either.
.PHONY: check-scale-long
check-scale-long:
	KPGO_SCALE_CYCLES=10000 $(KPGO_REPO)/tests/kernel/scale.sh

# The tests against deliberate faults (tests/mutants/): each mutant of the
# tree must turn a check red (build/mutants/report.md). About an hour on
# 2 cores, so not part of make check. MUTANTS= names some of them.
.PHONY: check-mutants
check-mutants:
	$(KPGO_REPO)/tests/mutants/run.py $(MUTANTS)
