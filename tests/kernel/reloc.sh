#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel built with LLVM's runtime counter relocation (make
# kernel-reloc: the test kernel + CONFIG_PGO_CLANG_COUNTER_RELOCATION, in
# build/linux-reloc):
#   - every counter update of vmlinux, of a C module and of a Rust module
#     goes through the object's bias (no update addresses __llvm_prf_cnts
#     directly, which a move of the counters would miss), Rust objects
#     included;
#   - vmlinux has one bias, kernel/pgo's; each module one of its own, in
#     __llvm_prf_bias, aligned to and as long as a cache line;
#   - the end-to-end tests give the same exact profiles as without the
#     option: tests/kernel/vmlinux.sh, modules.sh, rust.sh and live.sh on
#     this kernel (their outputs in build/reloc);
#   - the scale test, with epochs switching in a loop while modules load
#     and unload (tests/kernel/scale.sh);
#   - exact epochs: tests/kernel/epochs.sh; clippy of kernel/pgo/ as
#     this configuration builds it;
#   - profiles that survive a crash: tests/kernel/persist.sh (last: it
#     relinks the kernel, for one of another build id).
#
# Usage: tests/kernel/reloc.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=${KPGO_TREE:-$root/build/linux-reloc}
export KPGO_TEST_OUT=${KPGO_TEST_OUT:-$root/build/reloc}
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../../scripts/kernel-env.sh
source "$root/scripts/kernel-env.sh"
llvm=$KPGO_LLVM_BIN

[[ -f $KPGO_TREE/vmlinux ]] || { echo "FAIL: no kernel in $KPGO_TREE: make kernel-reloc"; exit 1; }
check "the tree is configured with CONFIG_PGO_CLANG_COUNTER_RELOCATION" \
	grep -qx CONFIG_PGO_CLANG_COUNTER_RELOCATION=y "$KPGO_TREE/.config"
mkdir -p "$KPGO_TEST_OUT"

# updates OBJECT: "BIAS_LOADS DIRECT_UPDATES RUST_BIAS_LOADS" of OBJECT's code.
# A direct update addresses the counters RIP-relative: __llvm_prf_cnts, or
# the __profc_ symbol of a COMDAT function's own counters.
updates() {
	"$llvm/llvm-objdump" -dr --no-show-raw-insn "$1" | awk '
		/^[0-9a-f]+ <.*>:$/ { f = $2 }
		/R_X86_64_PC32\t__llvm_profile_counter_bias/ { b++; if (f ~ /^<_R/) r++ }
		/R_X86_64_PC32\t(__llvm_prf_cnts|__profc_)/ { d++ }
		END { print b + 0, d + 0, r + 0 }'
}
read -r loads direct rust < <(updates "$KPGO_TREE/vmlinux.o")
check "vmlinux: every counter update goes through the bias ($loads bias loads, $direct direct updates)" \
	test "$loads" -gt 0 -a "$direct" -eq 0
check "vmlinux: the kernel crate's Rust functions load the bias too ($rust loads)" test "$rust" -gt 0
# One, kernel/pgo's (initialized data, .data..read_mostly): without it, the
# linker would keep a copy of the objects' weak hidden .bss definition.
defs=$("$llvm/llvm-nm" "$KPGO_TREE/vmlinux" | grep ' __llvm_profile_counter_bias$' | tr '\n' ' ')
glue=$("$llvm/llvm-readelf" -s --wide "$KPGO_TREE/kernel/pgo/glue.o" |
	awk '$8 == "__llvm_profile_counter_bias" { print $5, $7 }')
section=$("$llvm/llvm-readelf" -S --wide "$KPGO_TREE/kernel/pgo/glue.o" |
	sed -n "s/^ *\[ *${glue#* }\] \([^ ]*\) .*/\1/p")
check "vmlinux has one __llvm_profile_counter_bias, initialized data ($defs)" \
	bash -c '[[ $1 =~ ^[0-9a-f]+\ [dD]\ __llvm_profile_counter_bias\ $ ]]' _ "$defs"
check "kernel/pgo/glue.o defines it, global, read-mostly (${glue%% *} in ${section:-?})" \
	test "${glue%% *}" = GLOBAL -a "$section" = .data..read_mostly
orphans=$("$llvm/llvm-readelf" -S --wide "$KPGO_TREE/vmlinux" | grep -c ' \.bss\.__llvm_profile_counter_bias ')
check "the objects' weak copies of the bias go to .bss, no orphan section of their own ($orphans)" \
	test "$orphans" -eq 0

# The test modules, C and Rust, built against this tree by the end-to-end
# tests below; each then checked.
status=0
"$here/vmlinux.sh" || status=1
check "tests/kernel/vmlinux.sh on the relocation kernel" test "$status" -eq 0
status=0
"$here/modules.sh" || status=1
check "tests/kernel/modules.sh on the relocation kernel" test "$status" -eq 0
status=0
"$here/rust.sh" || status=1
check "tests/kernel/rust.sh on the relocation kernel" test "$status" -eq 0
status=0
"$here/live.sh" || status=1
check "tests/kernel/live.sh on the relocation kernel" test "$status" -eq 0
status=0
"$here/scale.sh" || status=1
check "tests/kernel/scale.sh on the relocation kernel (epochs switch during its load cycles)" test "$status" -eq 0
status=0
"$here/epochs.sh" || status=1
check "tests/kernel/epochs.sh: exact epochs on 2 CPUs" test "$status" -eq 0
status=0
"$here/clippy.sh" || status=1
check "tests/kernel/clippy.sh on this tree (kernel/pgo/runtime/epochs.rs is built only here)" test "$status" -eq 0
status=0
"$here/persist.sh" || status=1
check "tests/kernel/persist.sh: a crashed kernel's profile served after a warm reboot" test "$status" -eq 0

shift=$(sed -n 's/^CONFIG_X86_L1_CACHE_SHIFT=//p' "$KPGO_TREE/.config")
check "the tree's cache line is configured (CONFIG_X86_L1_CACHE_SHIFT=${shift:-?})" test -n "$shift"
line=$((1 << ${shift:-6}))
for ko in "$KPGO_TEST_OUT/test-modules/pgo_test_a.ko" "$KPGO_TEST_OUT/test-modules-rust/pgo_test_rust.ko"; do
	name=$(basename "$ko")
	read -r loads direct _ < <(updates "$ko")
	check "$name: every counter update goes through the bias ($loads bias loads, $direct direct updates)" \
		test "$loads" -gt 0 -a "$direct" -eq 0
	# [Nr] Name Type Address Off Size ES Flg Lk Inf Al
	section=$("$llvm/llvm-readelf" -S --wide "$ko" | sed -n 's/^ *\[ *\([0-9]*\)\] __llvm_prf_bias */\1 /p')
	read -r index _ _ _ size _ _ _ _ align <<<"$section"
	check "$name: __llvm_prf_bias is one cache line, aligned to it (size 0x${size:-?}, alignment ${align:-?}, line $line)" \
		test "$((16#${size:-0}))" -eq "$line" -a "${align:-0}" -eq "$line"
	symbol=$("$llvm/llvm-readelf" -s --wide "$ko" | awk '$8 == "__llvm_profile_counter_bias" { print $5, $6, $7 }')
	check "$name: its bias is the module's own, a weak hidden definition in __llvm_prf_bias ($symbol; section $index)" \
		test "$symbol" = "WEAK HIDDEN ${index:-?}"
done
summary reloc
