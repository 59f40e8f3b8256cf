#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Succeeds when the Rust compiler "$2..." can load kpgo's pass plugin
# (CONFIG_PGO_CLANG_SAMPLING_ENTRY_RUST), built against the LLVM whose
# llvm-config is $1 (entry-plugin-llvm-config.sh): rustc's driver links
# that very LLVM library (its SONAME, libLLVM.so.22.1 for Debian's LLVM 22,
# as Debian's rustc and clang of one LLVM do).  A plugin resolves LLVM's symbols in the
# process that loads it, so a rustc with its own LLVM (rustup's, linked
# to libLLVM-<version>-rust-<release>, or static) cannot load it, even of
# the same version.
#
# Usage: entry-plugin-rustc.sh <llvm-config> <rustc> [<flag>...]

config=$1
[ -n "$config" ] || exit 1
shift
readelf=$("$config" --bindir)/llvm-readelf
library=$("$readelf" -d "$("$config" --libdir)/libLLVM.so" 2>/dev/null |
	sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ -n "$library" ] || exit 1
# -Z flags need RUSTC_BOOTSTRAP on a stable rustc, as in the kernel build.
sysroot=$(RUSTC_BOOTSTRAP=1 "$@" --print sysroot 2>/dev/null) || exit 1
for driver in "$sysroot"/lib/librustc_driver-*.so "$sysroot"/lib/*/librustc_driver-*.so; do
	[ -f "$driver" ] || continue
	"$readelf" -d "$driver" 2>/dev/null | grep -q "(NEEDED).*\[$library\]" && exit 0
done
exit 1
