#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs a kernel test (boot.sh, vmlinux.sh, modules.sh, rust.sh,
# optimized.sh) on the trees of another toolchain (scripts/toolchains/):
# its instrumented kernel (make kernel TOOLCHAIN=NAME), its LLVM tools
# (llvm-profdata judges the profiles), its outputs under its build folder.
#
# Usage: tests/kernel/with-toolchain.sh NAME TEST [ARGS...]
#   e.g. tests/kernel/with-toolchain.sh llvm-22 vmlinux.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
toolchain=${1:?usage: with-toolchain.sh NAME TEST [ARGS...]}
test=${2:?usage: with-toolchain.sh NAME TEST [ARGS...]}
shift 2
export TOOLCHAIN=$toolchain
KPGO_TEST_OUT=$(BASE=tinyconfig "$root/scripts/base-dir")
KPGO_LLVM_BIN=$(BASE=tinyconfig bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LLVM_BIN"' _ "$root")
KPGO_RUST_LLVM_BIN=$(BASE=tinyconfig bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_RUST_LLVM_BIN"' _ "$root")
export KPGO_TEST_OUT KPGO_LLVM_BIN KPGO_RUST_LLVM_BIN KPGO_TREE=$KPGO_TEST_OUT/linux
echo "toolchain $TOOLCHAIN: tree $KPGO_TREE, LLVM tools $KPGO_LLVM_BIN, rustc's $KPGO_RUST_LLVM_BIN"
exec "$here/$test" "$@"
