#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Under lockdown=integrity debugfs serves only files whose mode stays within
# 0444 and that are not opened for writing: on the test kernel (make kernel;
# its kpgo.config has the lockdown LSM), booted with lockdown=integrity,
# vmlinux.profraw and stats stay readable and give a valid profile, while
# reset is refused (EPERM) and says so in the log.
#
# Usage: tests/kernel/lockdown.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
tree=${KPGO_TREE:-$out_root/linux}
out=$out_root/qemu/lockdown
# shellcheck source=lib.sh
source "$here/lib.sh"

check "the test kernel has the lockdown LSM" grep -qx CONFIG_SECURITY_LOCKDOWN_LSM=y "$tree/.config"
status=0
"$root/scripts/qemu-run" --kernel "$tree/arch/x86/boot/bzImage" --out "$out" \
	--append "lockdown=integrity" "$@" "$here/lockdown.guest.sh" || status=$?
r=$out/results
check "guest completed and its script passed (status $status)" test "$status" -eq 0
check_after done "the guest script ran to its last step" true
check "the kernel is locked down (integrity)" grep -q '\[integrity\]' "$r/lockdown"
check "profile files are 0400, reset 0200" \
	bash -c "grep -Eq '^-r-------- .* vmlinux.profraw$' '$r/ls' && grep -Eq '^--w------- .* reset$' '$r/ls'"
check "vmlinux.profraw is readable under lockdown" grep -qx 'read=0' "$r/status"
check "... and llvm-profdata takes it" "$llvm/llvm-profdata" show "$r/vmlinux.profraw"
check "stats is readable under lockdown" grep -qx 'stats=0' "$r/status"
check "live/vmlinux.profraw (it can be mapped) is refused under lockdown, with EPERM" \
	bash -c "grep -qx 'live=1' '$r/status' && grep -q 'not permitted' '$r/live.err'"
check "reset is refused under lockdown" grep -qx 'reset=1' "$r/status"
check "... with EPERM (Operation not permitted)" grep -q 'not permitted' "$r/reset.err"
check "... and lockdown says why in the log" grep -q 'debugfs access' "$r/dmesg-lockdown"
check_console "no BUG, oops or WARNING on the console of a whole run" "$out/console.log"
summary lockdown
