#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The value-profiling hooks of the instrumented kernel (make kernel) reach
# no instrumented code, C or Rust: hooks_callees.py walks their
# disassembly in vmlinux. No boot needed.
#
# Usage: tests/kernel/hooks.sh [VMLINUX]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=${KPGO_TREE:-$here/../../build/linux}
exec python3 "$here/hooks_callees.py" "${1:-$tree/vmlinux}"
