#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Kconfig defects of issue 10, in a tree of its own (build/linux-kconfig,
# tinyconfig + scripts/kpgo.config + one change each):
#   - CONFIG_PGO_KEPT_PROFILES_KB has a range: -1 is not taken, the
#     default (4096) is;
#   - PGO_CLANG=y with MODULES=n is a configuration Kconfig admits, and
#     kernel/pgo/ builds in it (make kernel/pgo/), without a warning;
#   - with a rustc that writes another raw version than clang
#     (TOOLCHAIN=llvm-23), Rust records apart, but not with counter
#     relocation, which the build says.
# Usage: tests/kernel/kconfig.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The release's trees (LINUX=, default 7.3).
build=$(BASE=tinyconfig "$root/scripts/base-dir")
export KPGO_TREE=$build/linux-kconfig
out=$build/kconfig
# shellcheck source=lib.sh
source "$here/lib.sh"
mkdir -p "$out"
start=$EPOCHREALTIME

"$root/scripts/prepare-kernel" >"$out/prepare.log" 2>&1 || { cat "$out/prepare.log"; exit 1; }
configure() { "$root/scripts/configure-kernel" --fragment "$root/scripts/kpgo.config" --fragment "$1"; }
option() { grep -E "^($1=|# $1 is not set)" "$KPGO_TREE/.config" || echo "$1 absent"; }

echo CONFIG_PGO_KEPT_PROFILES_KB=-1 >"$out/kept-minus-one.config"
status=0
configure "$out/kept-minus-one.config" >"$out/kept-minus-one.log" 2>&1 || status=$?
echo "PGO_KEPT_PROFILES_KB=-1 gives: $(option CONFIG_PGO_KEPT_PROFILES_KB)"
# Kconfig takes the nearest bound of the range for an out-of-range value;
# configure-kernel then fails, naming what it asked for and what it got.
check "CONFIG_PGO_KEPT_PROFILES_KB=-1 is out of range: the range's bound 0 is taken" \
	grep -qx CONFIG_PGO_KEPT_PROFILES_KB=0 "$KPGO_TREE/.config"
check "... and configure-kernel says so and fails (status $status)" \
	bash -c "test $status -ne 0 && grep -q \"wanted 'CONFIG_PGO_KEPT_PROFILES_KB=-1', got 'CONFIG_PGO_KEPT_PROFILES_KB=0'\" '$out/kept-minus-one.log'"

# 7.3's RUST_INLINE_HELPERS (C helpers as bitcode linked into every Rust
# crate) and PGO_CLANG do not go together: the option asked for is
# dropped, and configure-kernel says so.  6.12 has no such option.
if grep -q '^config RUST_INLINE_HELPERS$' "$KPGO_TREE/lib/Kconfig.debug"; then
	printf 'CONFIG_EXPERT=y\nCONFIG_RUST_INLINE_HELPERS=y\n' >"$out/inline-helpers.config"
	status=0
	configure "$out/inline-helpers.config" >"$out/inline-helpers.log" 2>&1 || status=$?
	echo "RUST_INLINE_HELPERS=y gives: $(option CONFIG_RUST_INLINE_HELPERS), $(option CONFIG_PGO_CLANG)"
	check "RUST_INLINE_HELPERS=y with PGO_CLANG=y is refused by configure-kernel (status $status)" \
		bash -c "test $status -ne 0 && grep -q 'CONFIG_RUST_INLINE_HELPERS' '$out/inline-helpers.log'"
	# It needs rustc's and clang's LLVM to match (RUSTC_CLANG_LLVM_COMPATIBLE):
	# with another toolchain's (TOOLCHAIN=llvm-23) it is what goes.
	if grep -qx CONFIG_RUSTC_CLANG_LLVM_COMPATIBLE=y "$KPGO_TREE/.config"; then
		check "... PGO_CLANG is what goes: RUST_INLINE_HELPERS=y, PGO_CLANG off" \
			bash -c "grep -qx CONFIG_RUST_INLINE_HELPERS=y '$KPGO_TREE/.config' && ! grep -qx CONFIG_PGO_CLANG=y '$KPGO_TREE/.config'"
	else
		check "... rustc's and clang's LLVM differ: RUST_INLINE_HELPERS is what goes, PGO_CLANG stays" \
			bash -c "! grep -qx CONFIG_RUST_INLINE_HELPERS=y '$KPGO_TREE/.config' && grep -qx CONFIG_PGO_CLANG=y '$KPGO_TREE/.config'"
	fi
fi

# Without modules (and what needs them: lib.sh's no_modules_fragment).
no_modules_fragment "$out/no-modules.config"
status=0
configure "$out/no-modules.config" >"$out/no-modules.log" 2>&1 || status=$?
echo "MODULES=n gives: $(option CONFIG_MODULES), $(option CONFIG_PGO_CLANG)"
check "a configuration with MODULES=n is configured (status $status)" test "$status" -eq 0
check "MODULES=n took" grep -qx '# CONFIG_MODULES is not set' "$KPGO_TREE/.config"
# Kconfig admits PGO without modules (PGO_CLANG depends on
# "!MODULES || ..."): so the runtime must build without them.
check "PGO_CLANG=y stays with MODULES=n" grep -qx CONFIG_PGO_CLANG=y "$KPGO_TREE/.config"
status=0
# Built again whatever an earlier run left: an object of this very
# configuration is what the checks below are about.
rm -f "$KPGO_TREE/kernel/pgo/kpgo.o"
# (MAKEFLAGS: under "make -s check" the build would log nothing.)
MAKEFLAGS= "$root/scripts/kmake" kernel/pgo/ >"$out/no-modules-build.log" 2>&1 || status=$?
grep -E "^error|error:" "$out/no-modules-build.log" | head -5 || true
check "PGO_CLANG=y with MODULES=n: kernel/pgo/ builds (status $status)" test "$status" -eq 0
check "... and it is kpgo that was built (kernel/pgo/kpgo.o)" \
	test -s "$KPGO_TREE/kernel/pgo/kpgo.o" -a "$KPGO_TREE/kernel/pgo/kpgo.o" -nt "$out/no-modules.config"
# Without a warning: CONFIG_WERROR makes rustc's warnings errors, and the
# module-only parts of the registry once left dead code behind here.
check_no_warnings "... without a warning" "$out/no-modules-build.log"

# A rustc that writes another raw version than clang (TOOLCHAIN=llvm-23):
# the configuration above (MODULES=n) keeps vmlinux's Rust records apart,
# and kernel/pgo/ built in it, without a warning; with counter relocation
# they cannot be (the two descriptors share counters that move), so Rust is
# built without PGO, and the build says why.
raw_version() { sed -n "s/^CONFIG_PGO_$1_RAW_VERSION=//p" "$KPGO_TREE/.config"; }
if [[ $(raw_version RUSTC) != "$(raw_version CLANG)" ]]; then
	check "rustc writes another raw version: PGO_CLANG_RUST_APART=y" \
		grep -qx CONFIG_PGO_CLANG_RUST_APART=y "$KPGO_TREE/.config"
	printf '%s\n' CONFIG_PGO_CLANG_COUNTER_RELOCATION=y >"$out/reloc.config"
	status=0
	configure "$out/reloc.config" >"$out/reloc.log" 2>&1 || status=$?
	check "... with counter relocation (configured, status $status): not apart" \
		bash -c "grep -qx CONFIG_PGO_CLANG_COUNTER_RELOCATION=y '$KPGO_TREE/.config' &&
			! grep -q '^CONFIG_PGO_CLANG_RUST_APART=y' '$KPGO_TREE/.config'"
	MAKEFLAGS= "$root/scripts/kmake" -s pgo-rust-raw-version >"$out/reloc-message.log" 2>&1 || true
	check "... and the build says that Rust is built without PGO, and that counter relocation is why" \
		grep -q "warning: PGO: .* Rust code is built without PGO; without CONFIG_PGO_CLANG_COUNTER_RELOCATION it would be profiled apart" \
		"$out/reloc-message.log"
fi
echo "kconfig: $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
summary kconfig
