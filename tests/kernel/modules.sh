#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Modules end to end on the instrumented kernel (make kernel): builds the
# test modules of tests/kernel/modules/ against it (in build/, not here),
# boots with 2 CPUs and judges their profiles with llvm-profdata-19:
# exact counts after load, reset and k runs, per-module node pools,
# concatenated kept + live profiles across unload and reload, a stress
# of dumps, resets, loads and unloads without kernel warnings, and
# indirect calls across objects named with exact counts in both
# directions.
#
# Usage: tests/kernel/modules.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
out=$out_root/qemu/modules
moddir=$out_root/test-modules
guest_bin=$out_root/guest

rm -rf "$moddir"
mkdir -p "$moddir" "$guest_bin"
cp "$here/modules/"*.c "$here/modules/Kbuild" "$moddir/"
# Copies of A named like reset's keywords.
cp "$here/modules/pgo_test_a.c" "$moddir/all.c"
cp "$here/modules/pgo_test_a.c" "$moddir/1.c"
echo 'obj-m += all.o 1.o' >>"$moddir/Kbuild"
"$root/scripts/kmake" -s M="$moddir" modules
"$llvm"/clang -static -O2 -Wall -Werror \
	-o "$guest_bin/getpid_loop" "$here/guest/getpid_loop.c"

status=0
"$root/scripts/qemu-run" --out "$out" --smp 2 --timeout 400 \
	--file "$moddir/pgo_test_a.ko" --file "$moddir/pgo_test_b.ko" \
	--file "$moddir/all.ko" --file "$moddir/1.ko" --file "$moddir/pgo_test_callees.ko" \
	--file "$guest_bin/getpid_loop" "$@" "$here/modules.guest.sh" || status=$?
if [[ $status -ne 0 ]]; then
	echo "FAIL: guest completed and its script passed (status $status)"
	echo "modules: 0 passed, 1 failed"
	exit 1
fi
python3 "$here/modules_check.py" "$out/results" "$out/console.log" "$moddir" \
	"${KPGO_TREE:-$root/build/linux}"
