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
# llvm-23), it checks instead that Rust is built without profiling and
# that the build says so.
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
# with clang 23): Rust is built without profiling, and the build says so;
# C is profiled (the other suites check its profile).
raw_c=$(sed -n 's/^CONFIG_PGO_CLANG_RAW_VERSION=//p' "$tree/.config")
raw_rust=$(sed -n 's/^CONFIG_PGO_RUSTC_RAW_VERSION=//p' "$tree/.config")
if [[ $raw_c != "$raw_rust" ]]; then
	# shellcheck source=lib.sh
	source "$here/lib.sh"
	logs=$out_root/check/rust
	mkdir -p "$logs"
	# (The section list read whole: grep -q would stop the pipe early.)
	profiled() {
		local sections
		sections=$("$llvm/llvm-readelf" -S "$1") && grep -q ' __llvm_prf_data ' <<<"$sections"
	}
	unprofiled() {
		local sections
		sections=$("$llvm/llvm-readelf" -S "$1") && ! grep -q ' __llvm_prf_data ' <<<"$sections"
	}
	KPGO_TREE=$tree "$root/scripts/kmake" -s pgo-rust-raw-version >"$logs/warning.log" 2>&1
	check "rustc writes raw version $raw_rust, clang $raw_c: the build says that Rust is built without profiling, and what would profile it" \
		grep -q "warning: PGO: .* writes raw profile version $raw_rust, .* version $raw_c (0: none found): Rust code is built without PGO; a rustc whose LLVM writes version $raw_c would take part" "$logs/warning.log"
	check "the kernel crate (rust/kernel.o) has no profile records" unprofiled "$tree/rust/kernel.o"
	check "C objects have (init/main.o)" profiled "$tree/init/main.o"
	status=0
	KPGO_TREE=$tree "$root/scripts/kmake" -s M="$moddir" modules >"$logs/module.log" 2>&1 || status=$?
	check "the Rust test module builds (status $status), without profile records" \
		unprofiled "$moddir/pgo_test_rust.ko"
	summary rust
	exit
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
python3 "$here/rust_check.py" "$out/results" "$out/console.log" "$moddir" "$tree"
