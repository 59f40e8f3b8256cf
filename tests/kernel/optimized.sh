#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The optimized build path: a profile taken from the instrumented kernel
# (by tests/kernel/vmlinux.sh, which must run first) is merged and applied
# with `make optimized`; the matching instrumented build must give zero
# out-of-date functions, C and Rust, the optimized kernel must boot, and
# it must say which profile built it (its vmlinux and, booted, its
# /sys/kernel/notes: the profile's SHA-256 and binary ids).
#
# Usage: tests/kernel/optimized.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/with-toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
tree=$out_root/linux-optimized
profile=$out_root/check-profile.profdata
out=$out_root/qemu/optimized
# shellcheck source=lib.sh
source "$here/lib.sh"

"$llvm"/llvm-profdata merge -o "$profile" \
	"$out_root/qemu/vmlinux/results/after-getpid.profraw"
# A rustc that writes another raw version than clang (TOOLCHAIN=llvm-23):
# with CONFIG_PGO_CLANG_RUST_APART, vmlinux's Rust records were apart, in
# rustc's version, merged by rustc's llvm-profdata for rustc
# (RUST_PROFILE=); without, Rust was not profiled and gets no profile.
raw_c=$(sed -n 's/^CONFIG_PGO_CLANG_RAW_VERSION=//p' "$out_root/linux/.config")
raw_rust=$(sed -n 's/^CONFIG_PGO_RUSTC_RAW_VERSION=//p' "$out_root/linux/.config")
rust_llvm=$llvm rust_profile=$profile rust_args=()
if grep -qx CONFIG_PGO_CLANG_RUST_APART=y "$out_root/linux/.config"; then
	rust_llvm=${KPGO_RUST_LLVM_BIN:?rustc writes another raw version: KPGO_RUST_LLVM_BIN names its LLVM tools}
	rust_profile=$out_root/check-profile-rust.profdata
	"$rust_llvm"/llvm-profdata merge -o "$rust_profile" \
		"$out_root/qemu/vmlinux/results/after-getpid-rust.profraw"
	rust_args=(RUST_PROFILE="$rust_profile")
fi
status=0
make -s -C "$root" optimized PROFILE="$profile" "${rust_args[@]}" 2>&1 |
	tee "$out_root/check-optimized.log" || status=$?
check "make optimized succeeded (status $status)" test "$status" -eq 0
counts=$tree/pgo-profile-diagnostics.txt
out_of_date=$(diagnostic "$counts" out_of_date)
missing=$(diagnostic "$counts" missing)
rust_out_of_date=$(diagnostic "$counts" rust_out_of_date)
rust_missing=$(diagnostic "$counts" rust_missing)
echo "profile diagnostics: ${out_of_date:-?} out-of-date, ${missing:-?} without data;" \
	"of them Rust: ${rust_out_of_date:-?} out-of-date, ${rust_missing:-?} without data"
check "zero out-of-date functions with the matching profile" test "${out_of_date:--1}" -eq 0
check "zero out-of-date Rust functions" test "${rust_out_of_date:--1}" -eq 0
rust_profiled=1
[[ $raw_c == "$raw_rust" || ${#rust_args[@]} -gt 0 ]] || rust_profiled=0
if ((rust_profiled)); then
	check "the profile holds Rust functions (v0 symbols)" \
		bash -c "$rust_llvm/llvm-profdata show --all-functions '$rust_profile' | grep -q '^  \(\S*;\)\{0,1\}_R'"
	if ((${#rust_args[@]})); then
		check "rustc writes raw version $raw_rust, clang $raw_c: make optimized said that Rust is built with RUST_PROFILE" \
			grep -q "Rust code is built with CLANG_PGO_RUST_PROFILE=" "$out_root/check-optimized.log"
		check "... and clang's profile holds no Rust function" \
			bash -c "functions=\$($llvm/llvm-profdata show --all-functions '$profile') &&
				! grep -q '^  \(\S*;\)\{0,1\}_R' <<<\"\$functions\""
	fi
else
	check "rustc writes raw version $raw_rust, clang $raw_c: the profile holds no Rust function" \
		bash -c "functions=\$($llvm/llvm-profdata show --all-functions '$profile') &&
			! grep -q '^  \(\S*;\)\{0,1\}_R' <<<\"\$functions\""
	check "... and make optimized said that Rust is built without the profile" \
		grep -q "Rust code is built without the profile; CLANG_PGO_RUST_PROFILE=" "$out_root/check-optimized.log"
fi
# The section list is read first: a vmlinux that is missing or unreadable
# has no profile section either, and must fail.
check "the optimized kernel is not instrumented" \
	bash -c "grep -q '^# CONFIG_PGO_CLANG is not set' '$tree/.config' &&
		sections=\$($llvm/llvm-readelf -S '$tree/vmlinux') &&
		grep -q ' .text ' <<<\"\$sections\" && ! grep -q __llvm_prf_data <<<\"\$sections\""
check "the profile was applied (-fprofile-use in the build commands)" \
	grep -q -- "-fprofile-use=" "$tree/kernel/.fork.o.cmd"
check "make optimized knew where the profile came from (origin=build/linux)" \
	grep -qx "origin=$out_root/linux" "$counts"
check "the profile is named by its content's hash in the flags (a new profile rebuilds)" \
	grep -q -- "-fprofile-use=$root/build/profiles/$(sha256sum "$profile" | cut -c1-16).profdata" \
	"$tree/kernel/.fork.o.cmd"
check "WERROR-proof: profile diagnostics are demoted (-Wno-error=backend-plugin)" \
	grep -q -- "-Wno-error=backend-plugin" "$tree/kernel/.fork.o.cmd"
check "... and every demoted -Wbackend-plugin warning was one of the profile's" \
	grep -qx "other_backend_plugin=0" "$counts"

# A profile from another build (a host program's) is named as such.
foreign=$out_root/check-foreign
mkdir -p "$foreign"
printf 'int main(void) { return 0; }\n' >"$foreign/main.c"
"$llvm"/clang -fprofile-generate -Wl,--build-id -o "$foreign/main" "$foreign/main.c"
LLVM_PROFILE_FILE=$foreign/main.profraw "$foreign/main"
"$llvm"/llvm-profdata merge -o "$foreign/main.profdata" "$foreign/main.profraw"
status=0
"$root/scripts/build-optimized" --origin-only --instrumented "$out_root/linux" \
	"$foreign/main.profdata" 2>"$foreign/origin.log" || status=$?
check "a profile of another build is recognized (status $status = 3)" test "$status" -eq 3
check "... and said clearly" grep -q "does not come from the instrumented build" "$foreign/origin.log"
status=0
"$root/scripts/build-optimized" --origin-only --instrumented "$out_root/linux" \
	"$profile" 2>/dev/null || status=$?
check "the test kernel's own profile is recognized (status $status = 0)" test "$status" -eq 0
if ((rust_profiled)); then
	check "the profile was applied to the kernel crate (-Cprofile-use), not to core" \
		bash -c "grep -q -- '-Cprofile-use=$root/build/profiles/$(sha256sum "$rust_profile" | cut -c1-16).profdata' '$tree/rust/.kernel.o.cmd' &&
			test -s '$tree/rust/.core.o.cmd' && ! grep -q -- '-Cprofile-use=' '$tree/rust/.core.o.cmd'"
else
	check "the profile was not given to rustc, which cannot read clang's indexed version" \
		bash -c "test -s '$tree/rust/.kernel.o.cmd' && ! grep -q -- '-Cprofile-use=' '$tree/rust/.kernel.o.cmd'"
fi

# Which profile built the kernel: the note of the series' kbuild patch, in
# vmlinux and in the running kernel's /sys/kernel/notes, is the profile's
# SHA-256 and binary ids.
profile_ids=$("$llvm/llvm-profdata" show --binary-ids "$profile" |
	sed -n 's/^ *\([0-9a-f]\{16,\}\)$/\1/p' | sort -u | paste -sd, -)
expected="pgo-profile sha256=$(sha256sum <"$profile" | cut -d' ' -f1) binary-ids=$profile_ids"
echo "expected note: $expected"
check "the profile has binary ids, among them the instrumented vmlinux's build id" \
	grep -q "$("$llvm/llvm-readelf" -n "$out_root/linux/vmlinux" | sed -n 's/^ *Build ID: *//p')" \
	<<<"${profile_ids:-none}"
# llvm-readelf lists the note's bytes; scripts/pgo-profile-note (which
# build-optimized prints from) reads them itself.
readelf_note=$("$llvm/llvm-readelf" -n "$tree/vmlinux" |
	sed -n '/Unknown note type: (0x00000102)/{n;s/^ *description data: //p}' | python3 -c 'import sys; print(bytes.fromhex(sys.stdin.read()).decode().rstrip("\0"))')
check "vmlinux has the Linux note 0x102 with the profile's SHA-256 and binary ids (llvm-readelf -n)" \
	test "$readelf_note" = "$expected"
check "scripts/pgo-profile-note reads the same from vmlinux" \
	test "$("$root/scripts/pgo-profile-note" "$tree/vmlinux")" = "$expected"
check "make optimized printed it" grep -qF "vmlinux records the profile it was built with: $expected" \
	"$out_root/check-optimized.log"

status=0
"$root/scripts/qemu-run" --kernel "$tree/arch/x86/boot/bzImage" --out "$out" \
	"$here/boot.guest.sh" || status=$?
r=$out/results
check "the optimized kernel boots to the guest script (status $status)" test "$status" -eq 0
check_console "the optimized kernel's console: a whole run, no BUG, oops or WARNING" \
	"$out/console.log"
check_after done "the running kernel's /sys/kernel/notes has the same note (no debugfs needed)" \
	test "$("$root/scripts/pgo-profile-note" "$r/notes")" = "$expected"
summary optimized
