#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The toolchain a kernel is built with (TOOLCHAIN=, scripts/toolchains/):
#   - bindgen makes each built tree's bindings with the libclang of that
#     tree's clang: they describe the kernel's structs, fields and all
#     (bindgen takes the newest libclang it finds unless told which, and
#     with libclang 22 beside clang 19 every struct came out opaque);
#   - bindings made with another toolchain do not survive a build;
#   - before anything is built, make refuses, saying what is wrong and how
#     to fix it: an unknown TOOLCHAIN, a toolchain file whose libclang or
#     whose rustc's LLVM is not clang's, and a bindgen that the kernel's
#     own check (scripts/rust_is_available.sh) warns about.
# Run after the kernel of the default toolchain (make kernel) and
# kconfig.sh (whose tree takes the stale-bindings test) were built, in
# make check; with llvm-22, after make kernel TOOLCHAIN=llvm-22 (make
# check-llvm-22): the bindings of its tree.
#
# Usage: tests/kernel/toolchain.sh [llvm-21 | llvm-22 | llvm-23]
set -uo pipefail
mode=${1:-default}
case $mode in
default | llvm-21 | llvm-22 | llvm-23) ;;
*) echo "usage: tests/kernel/toolchain.sh [llvm-21 | llvm-22 | llvm-23]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
logs=$root/build/check/toolchain
mkdir -p "$logs"
# shellcheck source=lib.sh
source "$here/lib.sh"

# The bindings of TREE describe task_struct with its fields (an opaque
# one has only "_address"), and the tree recorded that they were made by
# the libclang of clang VERSION.
bindings_of() { # tree clang-version
	local generated=$1/rust/bindings/bindings_generated.rs
	sed -n '/^pub struct task_struct {$/,/^}$/p' "$generated" >"$logs/task_struct"
	grep -q '^    pub pid: pid_t,$' "$logs/task_struct" &&
		grep -q "(libclang $2)\$" "$1/.kpgo/toolchain"
}
toolchain=llvm-19
[[ $mode == default ]] || toolchain=$mode
tree=$(TOOLCHAIN=$toolchain BASE=tinyconfig "$root/scripts/base-dir")/linux
clang=$(TOOLCHAIN=$toolchain bash -c 'source "$1/scripts/kernel-env.sh"; "$KPGO_LLVM_BIN/clang" -dumpversion' _ "$root")
check "$toolchain: the bindings of ${tree#"$root"/} are made by clang $clang's libclang, not opaque (task_struct has pid)" \
	bindings_of "$tree" "$clang"

if [[ $mode == default ]]; then
# An unknown TOOLCHAIN: refused by make itself, before any tree is made.
status=0
TOOLCHAIN=bogus make -C "$root" kernel >"$logs/bogus.log" 2>&1 || status=$?
check "TOOLCHAIN=bogus: make kernel is refused (status $status)" test "$status" -ne 0
check "TOOLCHAIN=bogus: the message names it and the known toolchains" \
	grep -q 'TOOLCHAIN=bogus: unknown toolchain; use one of llvm-19 llvm-21 llvm-22 llvm-23' "$logs/bogus.log"
check "TOOLCHAIN=bogus: refused before any work (no tree prepared, no build folder)" \
	bash -c '! grep -q "prepare-kernel\|kmake" "$1" && test ! -e "$2/build/bogus"' _ "$logs/bogus.log" "$root"

# Toolchain files of one's own that do not fit together: each refused
# before its tree is made, with what is wrong and what to do.
# refused NAME PATTERN VAR=VALUE...: a copy of llvm-19 (or of the file
# that REFUSED_BASE names) with VAR changed.
refused() {
	local name=$1 pattern=$2 file=$logs/$1 status=0 build
	shift 2
	cp "$root/scripts/toolchains/${REFUSED_BASE:-llvm-19}" "$file"
	printf '%s\n' "$@" >>"$file"
	build=$(TOOLCHAIN=$file BASE=tinyconfig "$root/scripts/base-dir")
	rm -rf "$build"
	TOOLCHAIN=$file make -C "$root" kernel >"$logs/$name.log" 2>&1 || status=$?
	check "$name: make kernel is refused (status $status)" test "$status" -ne 0
	check "$name: the message says what is wrong and how to fix it" grep -q "$pattern" "$logs/$name.log"
	check "$name: refused before its tree is made" test ! -e "$build/linux"
}
refused libclang-22-for-clang-19 \
	'bindgen loads libclang 22\.1\.8 from LIBCLANG_PATH=/usr/lib/llvm-22/lib, but the C compiler is clang 19\.1\.7: .* set toolchain_libclang_path to the libclang of clang.s LLVM (/usr/lib/llvm-19/lib, Debian.s libclang-19-dev)' \
	toolchain_libclang_path=/usr/lib/llvm-22/lib
# A rustc of an older LLVM than clang's cannot read the profile that
# clang's llvm-profdata indexes (a newer one can: llvm-21 pairs clang 21
# with rustc's LLVM 22); both write raw version 10 here, so the kernel
# would give rustc that profile.
REFUSED_BASE=llvm-22 refused rustc-1.85-for-clang-22 \
	'rustc has LLVM 19\.1\.7 but clang is 22\.1\.8: .* set toolchain_rustc to a rustc whose LLVM is 22 or later' \
	toolchain_rust_unpack= toolchain_rustc=/usr/bin/rustc toolchain_rustdoc=/usr/bin/rustdoc \
	toolchain_rust_lib_src=/usr/lib/rustlib/src/rust/library

# Bindings made by another toolchain go before a build: build/linux-kconfig
# (tests/kernel/kconfig.sh) is told its bindings came from another one.
kconfig_tree=$root/build/linux-kconfig
generated=$kconfig_tree/rust/bindings/bindings_generated.rs
check "build/linux-kconfig has bindings to lose (kconfig.sh ran)" test -s "$generated"
echo "clang 18.1.6, rustc 1.78.0 (LLVM 18.1.2), bindgen 0.65.1 (libclang 18.1.6)" \
	>"$kconfig_tree/.kpgo/toolchain"
KPGO_TREE=$kconfig_tree "$root/scripts/kmake" -s kernelversion >"$logs/stale.log" 2>&1
check "a tree whose bindings another toolchain made: kmake removes them before make" \
	test ! -e "$generated" -a ! -e "$kconfig_tree/rust/uapi/uapi_generated.rs"
check "... and says why" grep -q 'toolchain changed since the last build (clang 18.1.6.*): removing the generated bindings' \
	"$logs/stale.log"
check "... and records the toolchain they will be made with" \
	grep -q '^clang 19\.1\.7, rustc 1\.85\.0 .*(libclang 19\.1\.7)$' "$kconfig_tree/.kpgo/toolchain"

# A bindgen that the kernel warns about: a stand-in for bindgen < 0.72.1,
# which loses the fields of structs that libclang 22 reports as it does
# the kernel's probe (scripts/rust_is_available_bindgen_libclang_22.h);
# otherwise the real bindgen.  kmake stops on the kernel's warning,
# before the tree is touched: build/linux, whose bindings another
# toolchain made, keeps them (they are removed only after the checks).
stub=$logs/old-bindgen
bindgen=$(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_BINDGEN"' _ "$root")
cat >"$stub" <<STUB
#!/bin/sh
# Test stand-in for a bindgen older than 0.72.1 (tests/kernel/toolchain.sh).
case "\$*" in
--version*) echo "bindgen 0.71.1"; exit 0 ;;
*rust_is_available_bindgen_libclang_22.h*) "$bindgen" "\$@" | grep -v 'pub foo'; exit 0 ;;
esac
exec "$bindgen" "\$@"
STUB
chmod +x "$stub"
cp "$root/scripts/toolchains/llvm-22" "$logs/old-bindgen-llvm-22"
echo "toolchain_bindgen=$stub" >>"$logs/old-bindgen-llvm-22"
tree=$root/build/linux
before=$(stat -c %Y "$tree/rust/bindings/bindings_generated.rs" 2>/dev/null)
status=0
TOOLCHAIN=$logs/old-bindgen-llvm-22 KPGO_TREE=$tree "$root/scripts/kmake" -s kernelversion \
	>"$logs/old-bindgen.log" 2>&1 || status=$?
check "bindgen 0.71.1 with libclang 22: kmake is refused (status $status)" test "$status" -ne 0
check "... on the kernel's own warning, named as such" \
	bash -c 'grep -q "Rust bindings generator .* < 0.72.1 together with libclang >= 22" "$1" &&
		grep -q "rust_is_available.sh warns (above); kpgo builds only with a Rust toolchain it accepts without a warning" "$1"' \
	_ "$logs/old-bindgen.log"
check "... before the tree was touched (its bindings stay)" \
	test -n "$before" -a "$before" = "$(stat -c %Y "$tree/rust/bindings/bindings_generated.rs" 2>/dev/null)"
fi

summary toolchain
