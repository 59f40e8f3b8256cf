#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The value-profiling hooks of the instrumented kernel reach no
# instrumented code, C or Rust, and no sanitizer: hooks_callees.py walks
# their disassembly in vmlinux. No boot needed. With --kasan, the image is
# the KASAN kernel's (make kernel-kasan, build/linux-kasan), where the
# sanitizers' calls would be.
#
# Usage: tests/kernel/hooks.sh [--kasan] [VMLINUX]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=${KPGO_TREE:-$here/../../build/linux}
args=()
if [[ ${1:-} == --kasan ]]; then
	shift
	tree=${KPGO_TREE:-$here/../../build/linux-kasan}
	args+=(--sanitized)
fi
exec python3 "$here/hooks_callees.py" "${1:-$tree/vmlinux}" "${args[@]}"
