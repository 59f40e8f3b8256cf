#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Prints the raw profile version that the Rust compiler "$@" emits with
# -Cprofile-generate: the low 32 bits of __llvm_profile_raw_version, whose
# high bits are variant flags. Prints 0 if it cannot tell (no such rustc,
# no -Cprofile-generate, an unexpected LLVM IR listing...). The rustc
# counterpart of raw-profile-version.sh (same output): Rust objects are
# instrumented too, and their profile data lands in the same sections and
# files as the C objects': unless rustc's LLVM writes clang's raw version,
# the kernel builds Rust without PGO.
#
# The probe is built for the host (whose `core` every rustc has), not for
# the kernel's target: the raw version does not depend on the target.
#
# Usage: rustc-raw-profile-version.sh <rustc> [<flag>...]

dir=$(mktemp -d 2>/dev/null) || { echo 0; exit 0; }
trap 'rm -rf "$dir"' EXIT
echo '#![no_std] pub fn kpgo_probe() {}' >"$dir/probe.rs"
# -Z flags need RUSTC_BOOTSTRAP on a stable rustc, as in the kernel build.
RUSTC_BOOTSTRAP=1 "$@" --crate-type=lib --crate-name=kpgo_probe \
	-Cprofile-generate -Zno-profiler-runtime --emit=llvm-ir \
	-o "$dir/probe.ll" "$dir/probe.rs" >/dev/null 2>&1
word=$(sed -n 's/^@__llvm_profile_raw_version = .* i64 \([0-9]*\).*/\1/p' \
	"$dir/probe.ll" 2>/dev/null | head -n 1)

# A decimal of at most 18 digits fits the shell's arithmetic (variant flags
# of -Cprofile-generate stay below bit 60).
case $word in
'' | *[!0-9]* | ???????????????????*)
	echo 0
	;;
*)
	echo $((word % 4294967296))
	;;
esac
