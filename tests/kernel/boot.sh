#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Smoke test: the PGO-instrumented kernel (make kernel) has its profile
# sections, boots under QEMU to the guest script, debugfs mounts there,
# and the console shows no BUG, oops or warning.
#
# Usage: tests/kernel/boot.sh [qemu-run options, e.g. --smp 2]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
tree=${KPGO_TREE:-$out_root/linux}
out=$out_root/qemu/boot

# shellcheck source=lib.sh
source "$here/lib.sh"

check "kernel built with CONFIG_PGO_CLANG=y" grep -qx CONFIG_PGO_CLANG=y "$tree/.config"
check "vmlinux has a __llvm_prf_data section" \
	bash -c "$llvm/llvm-readelf -S '$tree/vmlinux' | grep -q ' __llvm_prf_data '"

r=$out/results
status=0
"$root/scripts/qemu-run" --out "$out" "$@" "$here/boot.guest.sh" || status=$?
check "guest completed and its script passed (status $status)" test "$status" -eq 0
check "guest reached the script" grep -q '^KPGO-GUEST-START' "$out/console.log"
check "debugfs mounted at /sys/kernel/debug" test -s "$r/debugfs-mount"
check_after done "the guest script ran to its last step" true
check_console "no BUG, oops or WARNING on the console of a whole run" "$out/console.log"

summary boot
