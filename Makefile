# SPDX-License-Identifier: GPL-2.0
#
# kpgo: the user's entry point (like an out-of-tree module's Makefile).
# The kernel build itself reads Kbuild and Kconfig.
#
#   make               build, boot and profile the embedded default kernel
#   make check         every test (host, kernel build, QEMU end to end)
#   make host-runtime  build/host/libkpgo.a, the core as a host runtime
#   make kernel        the instrumented kernel in build/linux
#   make bench         the hook benchmark, kpgo against compiler-rt

SHELL := /bin/bash
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(REPO)/build
CARGO ?= cargo

.PHONY: all check host-runtime host-unit host-lint
# The main job: instrumented kernel, QEMU workload, merged profile, report.
all:
	$(REPO)/scripts/profile-kernel

# Every test suite; the last line is "check: N passed, M failed".
check:
	$(REPO)/scripts/check

# The core compiled on the host, as a static library that replaces
# compiler-rt's profile runtime.
HOST_LIB := $(BUILD)/host/libkpgo.a
host-runtime: $(HOST_LIB)
$(HOST_LIB): $(shell find $(REPO)/host/src $(REPO)/pgo/profile -name '*.rs') $(REPO)/host/Cargo.toml
	$(CARGO) build --quiet --release --manifest-path $(REPO)/host/Cargo.toml \
		--target-dir $(BUILD)/host/target
	mkdir -p $(dir $@)
	# Replace atomically: tests may be linking against the old archive.
	cp $(BUILD)/host/target/release/libkpgo.a $@.tmp && mv $@.tmp $@

# Unit and property tests of the core.
host-unit:
	$(CARGO) test --quiet --manifest-path $(REPO)/host/Cargo.toml \
		--target-dir $(BUILD)/host/target

# rustfmt (the host crate, and the kernel crate from its root) and clippy,
# warnings are errors.
host-lint:
	$(CARGO) fmt --manifest-path $(REPO)/host/Cargo.toml -- --check
	rustfmt --edition 2021 --check $(REPO)/pgo/kpgo.rs
	$(CARGO) clippy --quiet --manifest-path $(REPO)/host/Cargo.toml \
		--target-dir $(BUILD)/host/target --all-targets -- -D warnings

-include $(REPO)/tests/host/host-tests.mk
-include $(REPO)/scripts/kernel.mk
