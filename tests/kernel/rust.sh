#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Rust code in the profile, end to end on the instrumented kernel (make
# kernel): vmlinux's profile holds the kernel crate and the built-in Rust
# sample with counts, and the Rust test module pgo_test_rust
# (tests/kernel/modules/pgo_test_rust.rs) gives exact function counts,
# trait-object and function-pointer call targets, memop sizes, a reset and
# a kept profile across rmmod and reload. Judged with llvm-profdata-19.
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
