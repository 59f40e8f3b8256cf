# SPDX-License-Identifier: GPL-2.0
#
# Kernel targets of kpgo, included by the top Makefile.  None of them runs
# scripts/setup: run it once on a new machine.
#
#   make kernel         build/linux: Linux 6.12 with the patches of patches/,
#                       this project in kernel/pgo/, tinyconfig +
#                       scripts/kpgo.config (PGO_CLANG=y); builds
#                       arch/x86/boot/bzImage, vmlinux and the modules.
#   make kernel-nopgo   build/linux-nopgo: the same without PGO_CLANG, to
#                       compare (a separate tree: kbuild cannot build a
#                       second configuration O= from a tree built in place).
#   make kernel-kasan   build/linux-kasan: the same plus scripts/configs/kasan.config
#                       (KASAN, lockdep, kmemleak, fault injection), the
#                       kernel of tests/kernel/lifecycle.sh.
#   make kernel-check   the QEMU tests of tests/kernel/ on build/linux:
#                       boot.sh (smoke), module.sh (instrumented module).
#   make kernel-figures both builds from scratch, measured, written to
#                       build/figures-kernel.txt (about 15 minutes).
#
# scripts/kmake runs make in the prepared tree with the right toolchain,
# for anything else: scripts/kmake menuconfig, scripts/kmake M=dir modules.

KPGO_REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
KPGO_KERNEL_TREE := $(KPGO_REPO)/build/linux
KPGO_KERNEL_TREE_NOPGO := $(KPGO_REPO)/build/linux-nopgo
KPGO_KERNEL_TREE_OPTIMIZED := $(KPGO_REPO)/build/linux-optimized
KPGO_KERNEL_TREE_KASAN := $(KPGO_REPO)/build/linux-kasan
# The profile that `make optimized` applies: by default the main job's.
PROFILE ?= $(KPGO_REPO)/build/kernel.profdata
KPGO_KERNEL_CONFIG_INPUTS := $(KPGO_REPO)/scripts/kpgo.config \
	$(KPGO_REPO)/scripts/configure-kernel $(KPGO_REPO)/patches/series

.PHONY: kernel kernel-nopgo kernel-prepare kernel-prepare-nopgo kernel-check \
	kernel-figures optimized baseline kernel-prepare-optimized \
	kernel-kasan kernel-prepare-kasan

# Preparing is idempotent and quick when nothing changed: always run it.
kernel-prepare:
	$(KPGO_REPO)/scripts/prepare-kernel
kernel-prepare-nopgo:
	KPGO_TREE=$(KPGO_KERNEL_TREE_NOPGO) $(KPGO_REPO)/scripts/prepare-kernel

# The configuration is written again when its inputs change.
$(KPGO_KERNEL_TREE)/.config: $(KPGO_KERNEL_CONFIG_INPUTS) | kernel-prepare
	$(KPGO_REPO)/scripts/configure-kernel
$(KPGO_KERNEL_TREE_NOPGO)/.config: $(KPGO_KERNEL_CONFIG_INPUTS) | kernel-prepare-nopgo
	KPGO_TREE=$(KPGO_KERNEL_TREE_NOPGO) $(KPGO_REPO)/scripts/configure-kernel --no-pgo

kernel: $(KPGO_KERNEL_TREE)/.config | kernel-prepare
	$(KPGO_REPO)/scripts/kmake

kernel-nopgo: $(KPGO_KERNEL_TREE_NOPGO)/.config | kernel-prepare-nopgo
	KPGO_TREE=$(KPGO_KERNEL_TREE_NOPGO) $(KPGO_REPO)/scripts/kmake

# The baseline: same tree and configuration, no instrumentation, no profile.
baseline: kernel-nopgo

# The optimized kernel: same configuration without PGO_CLANG, PROFILE applied
# (build/linux-optimized/arch/x86/boot/bzImage).
kernel-prepare-optimized:
	KPGO_TREE=$(KPGO_KERNEL_TREE_OPTIMIZED) $(KPGO_REPO)/scripts/prepare-kernel
$(KPGO_KERNEL_TREE_OPTIMIZED)/.config: $(KPGO_KERNEL_CONFIG_INPUTS) | kernel-prepare-optimized
	KPGO_TREE=$(KPGO_KERNEL_TREE_OPTIMIZED) $(KPGO_REPO)/scripts/configure-kernel --no-pgo
optimized: $(KPGO_KERNEL_TREE_OPTIMIZED)/.config | kernel-prepare-optimized
	$(KPGO_REPO)/scripts/build-optimized $(PROFILE)

# The lifecycle test kernel: the test configuration plus KASAN, kmemleak
# and fault injection (build/linux-kasan/arch/x86/boot/bzImage).
# KASAN + PGO needs an objtool fix that the series does not have yet
# (scripts/configs/objtool-group-signature.patch): applied here, once.
KPGO_KASAN_OBJTOOL_FIX := $(KPGO_REPO)/scripts/configs/objtool-group-signature.patch
kernel-prepare-kasan:
	KPGO_TREE=$(KPGO_KERNEL_TREE_KASAN) $(KPGO_REPO)/scripts/prepare-kernel
	patch -d $(KPGO_KERNEL_TREE_KASAN) -p1 -R -s -f --dry-run <$(KPGO_KASAN_OBJTOOL_FIX) \
		>/dev/null 2>&1 || patch -d $(KPGO_KERNEL_TREE_KASAN) -p1 -s -N <$(KPGO_KASAN_OBJTOOL_FIX)
$(KPGO_KERNEL_TREE_KASAN)/.config: $(KPGO_KERNEL_CONFIG_INPUTS) \
		$(KPGO_REPO)/scripts/configs/kasan.config | kernel-prepare-kasan
	KPGO_TREE=$(KPGO_KERNEL_TREE_KASAN) $(KPGO_REPO)/scripts/configure-kernel \
		--fragment $(KPGO_REPO)/scripts/kpgo.config \
		--fragment $(KPGO_REPO)/scripts/configs/kasan.config
kernel-kasan: $(KPGO_KERNEL_TREE_KASAN)/.config | kernel-prepare-kasan
	KPGO_TREE=$(KPGO_KERNEL_TREE_KASAN) $(KPGO_REPO)/scripts/kmake

KPGO_KERNEL_TESTS := boot vmlinux modules optimized
kernel-check: kernel
	@set -e; for t in $(KPGO_KERNEL_TESTS); do \
		echo "== tests/kernel/$$t.sh"; $(KPGO_REPO)/tests/kernel/$$t.sh; done

kernel-figures:
	$(KPGO_REPO)/scripts/kernel-figures
