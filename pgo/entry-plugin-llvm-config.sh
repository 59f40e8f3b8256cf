#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Prints the llvm-config of the C compiler's own LLVM when kpgo's pass
# plugin (scripts/pgo/entry-sampling.cpp, CONFIG_PGO_CLANG_SAMPLING_ENTRY)
# can be built against it: the compiler is clang, an llvm-config sits among
# its programs, of clang's major version, and that LLVM's headers are
# installed (Debian: llvm-N-dev).  Prints nothing otherwise.  A plugin only
# loads into the LLVM it was built against.
#
# Usage: entry-plugin-llvm-config.sh <compiler> [<flag>...]

config=$("$@" -print-prog-name=llvm-config 2>/dev/null)
case $config in
/*) ;;
*) exit 0 ;;
esac
[ -x "$config" ] || exit 0
clang_major=$(echo __clang_major__ | "$@" -E -P -x c - 2>/dev/null | tr -d ' ')
llvm_major=$("$config" --version 2>/dev/null | cut -d. -f1)
[ -n "$clang_major" ] && [ "$clang_major" = "$llvm_major" ] || exit 0
include=$("$config" --includedir 2>/dev/null)
# llvm/Plugins/ from LLVM 22 on, llvm/Passes/ before.
[ -f "$include/llvm/Plugins/PassPlugin.h" ] || [ -f "$include/llvm/Passes/PassPlugin.h" ] || exit 0
echo "$config"
