#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Rust code in the profile, end to end on the instrumented kernel (make
# kernel): vmlinux's profile holds the kernel crate and the built-in Rust
# sample with counts, and the Rust test module pgo_test_rust
# (tests/kernel/modules/pgo_test_rust.rs) gives exact function counts,
# trait-object and function-pointer call targets, memop sizes, a reset and
# a kept profile across rmmod and reload. Judged with llvm-profdata-19.
# With a rustc that writes another raw version than clang (TOOLCHAIN=
# llvm-23), the same on vmlinux-rust.profraw and the module's profile,
# judged with rustc's llvm-profdata, after checks that the records are
# apart (below).
#
# Usage: tests/kernel/rust.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
tree=${KPGO_TREE:-$out_root/linux}
out=$out_root/qemu/rust
moddir=$out_root/test-modules-rust

rm -rf "$moddir"
mkdir -p "$moddir"
cp "$here/modules/pgo_test_rust.rs" "$moddir/"
echo "obj-m += pgo_test_rust.o" >"$moddir/Kbuild"

# A rustc that writes another raw version than clang (rustc's LLVM 22
# with clang 23): with CONFIG_PGO_CLANG_RUST_APART, the Rust objects built
# into vmlinux keep their records apart, served as vmlinux-rust.profraw in
# rustc's version, and a Rust module's profile is in rustc's version: the
# same checks then run on those, judged by rustc's llvm-profdata
# (KPGO_RUST_LLVM_BIN); the C profile by clang's. Otherwise Rust is built
# without profiling, and the build says so.
raw_c=$(sed -n 's/^CONFIG_PGO_CLANG_RAW_VERSION=//p' "$tree/.config")
raw_rust=$(sed -n 's/^CONFIG_PGO_RUSTC_RAW_VERSION=//p' "$tree/.config")
judge_llvm=$llvm
if [[ $raw_c != "$raw_rust" ]]; then
	# shellcheck source=lib.sh
	source "$here/lib.sh"
	logs=$out_root/check/rust
	mkdir -p "$logs"
	# Whether an object has a section (the list read whole: grep -q would
	# stop the pipe early).
	has_section() {
		local sections
		sections=$("$llvm/llvm-readelf" -S --wide "$1") && grep -q " $2 " <<<"$sections"
	}
	lacks_section() {
		local sections
		sections=$("$llvm/llvm-readelf" -S --wide "$1") && ! grep -q " $2 " <<<"$sections"
	}
	KPGO_TREE=$tree "$root/scripts/kmake" -s pgo-rust-raw-version >"$logs/message.log" 2>&1
	check "C objects have clang's records (init/main.o)" has_section "$tree/init/main.o" __llvm_prf_data
	if ! grep -qx CONFIG_PGO_CLANG_RUST_APART=y "$tree/.config"; then
		check "rustc writes raw version $raw_rust, clang $raw_c: the build says that Rust is built without profiling, and what would profile it" \
			grep -q "warning: PGO: .* writes raw profile version $raw_rust, .* version $raw_c (0: none found): Rust code is built without PGO; " "$logs/message.log"
		check "the kernel crate (rust/kernel.o) has no profile records" \
			lacks_section "$tree/rust/kernel.o" __llvm_prf_data
		status=0
		KPGO_TREE=$tree "$root/scripts/kmake" -s M="$moddir" modules >"$logs/module.log" 2>&1 || status=$?
		check "the Rust test module builds (status $status), without profile records" \
			lacks_section "$moddir/pgo_test_rust.ko" __llvm_prf_data
		summary rust
		exit
	fi
	check "rustc writes raw version $raw_rust, clang $raw_c: the build says where the Rust profiles are and how to merge them" \
		grep -q "note: PGO: .* writes raw profile version $raw_rust, .* version $raw_c (0: none found): vmlinux's Rust code has its own profile, pgo/vmlinux-rust.profraw, and Rust modules' profiles are version $raw_rust: merge them with rustc's llvm-profdata, for CLANG_PGO_RUST_PROFILE=" "$logs/message.log"
	check "the kernel crate's records are apart (rust/kernel.o has __llvm_prf_data_rust)" \
		has_section "$tree/rust/kernel.o" __llvm_prf_data_rust
	check "... and no __llvm_prf_data" lacks_section "$tree/rust/kernel.o" __llvm_prf_data
	check "vmlinux has clang's records" has_section "$tree/vmlinux" __llvm_prf_data
	check "... and rustc's, apart" has_section "$tree/vmlinux" __llvm_prf_data_rust
	# The guest's checks follow only if the build is as it should be.
	summary "rust (records apart)" || exit 1
	judge_llvm=${KPGO_RUST_LLVM_BIN:?rustc writes another raw version: KPGO_RUST_LLVM_BIN names its LLVM tools}
fi
"$root/scripts/kmake" -s M="$moddir" modules

status=0
"$root/scripts/qemu-run" --out "$out" --timeout 300 \
	--file "$moddir/pgo_test_rust.ko" "$@" "$here/rust.guest.sh" || status=$?
if [[ $status -ne 0 ]]; then
	echo "FAIL: guest completed and its script passed (status $status)"
	echo "rust: 0 passed, 1 failed"
	exit 1
fi
KPGO_LLVM_BIN=$judge_llvm KPGO_C_LLVM_BIN=$llvm \
	python3 "$here/rust_check.py" "$out/results" "$out/console.log" "$moddir" "$tree"
