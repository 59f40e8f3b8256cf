#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Succeeds when the Rust compiler "$2..." can load kpgo's pass plugin
# (CONFIG_PGO_CLANG_SAMPLING_ENTRY_RUST), built against the LLVM whose
# llvm-config is $1 (entry-plugin-llvm-config.sh): rustc's driver links
# that very LLVM library (libLLVM.so.<major>.<minor>, as Debian's rustc
# and clang of one LLVM do).  A plugin resolves LLVM's symbols in the
# process that loads it, so a rustc with its own LLVM (rustup's, linked
# to libLLVM-<version>-rust-<release>, or static) cannot load it, even of
# the same version.
#
# Usage: entry-plugin-rustc.sh <llvm-config> <rustc> [<flag>...]

config=$1
[ -n "$config" ] || exit 1
shift
version=$("$config" --version 2>/dev/null) || exit 1
library=libLLVM.so.${version%.*}
readelf=$("$config" --bindir)/llvm-readelf
# -Z flags need RUSTC_BOOTSTRAP on a stable rustc, as in the kernel build.
sysroot=$(RUSTC_BOOTSTRAP=1 "$@" --print sysroot 2>/dev/null) || exit 1
for driver in "$sysroot"/lib/librustc_driver-*.so "$sysroot"/lib/*/librustc_driver-*.so; do
	[ -f "$driver" ] || continue
	"$readelf" -d "$driver" 2>/dev/null | grep -q "(NEEDED).*\[$library\]" && exit 0
done
exit 1
