#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel built with sampled instrumentation (make kernel-sampled: the
# test kernel + CONFIG_PGO_CLANG_SAMPLING, in KPGO_BUILD/linux-sampled;
# LLVM 21 or later, so make check-sampled builds and tests it with
# TOOLCHAIN=llvm-22):
#   - nothing in vmlinux or a module refers to thread-local storage, and
#     the build check that refuses it (scripts/pgo-check-tls.sh) fails on
#     an object compiled without <linux/pgo_sampling.h>;
#   - every access to the sampling state is %gs-relative, to the one
#     per-CPU __llvm_profile_sampling, which vmlinux exports; Rust
#     functions and C objects with PGO_SAMPLING := n have counters but no
#     sampling; no function keeps its frame base in %rbx (LLVM before
#     21 made entry allocas dynamic, so, and put_user() clobbers %rbx);
#     the sampled module's loop flushes no promoted count at its exit;
#   - booted (2 CPUs): stats give the period and the recorded updates;
#     the profiles merge; getpid's count after N calls, and the counts
#     and value profile of a sampled module's loop, are N times the
#     recorded share (within 25%), while the same module fully
#     instrumented counts exactly; its loop's profiling costs less
#     sampled (the guest's clock around it); a reset clears the counts;
#   - the hooks walk, and the module and scale tests on this kernel: their
#     modules stay fully instrumented (PGO_SAMPLING := n), and the 7
#     checks of vmlinux's exact counts (its value profile naming a
#     module's functions, 7 calls) cannot hold there: modules_check.py
#     says "n/a" for them;
#   - on its KASAN twin (make kernel-sampled-kasan, KPGO_BUILD/
#     linux-sampled-kasan): the hooks walk (no sanitizer in the hooks)
#     and the lifecycle tests' paths and faults parts (vmlinux's
#     start_kernel need not have its one run counted there).
#
# Usage: [TOOLCHAIN=llvm-22] tests/kernel/sampled.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tree=${KPGO_TREE:-}
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../../scripts/kernel-env.sh
BASE=tinyconfig source "$root/scripts/kernel-env.sh"
export KPGO_TREE=${tree:-$KPGO_BUILD/linux-sampled}
export KPGO_TEST_OUT=${KPGO_TEST_OUT:-$KPGO_BUILD/sampled}
export KPGO_LLVM_BIN
llvm=$KPGO_LLVM_BIN
profdata=$llvm/llvm-profdata
out=$KPGO_TEST_OUT
guest_bin=$out/guest
calls=1000000

[[ -f $KPGO_TREE/vmlinux ]] || { echo "FAIL: no kernel in $KPGO_TREE: make kernel-sampled"; exit 1; }
check "the tree is configured with CONFIG_PGO_CLANG_SAMPLING" \
	grep -qx CONFIG_PGO_CLANG_SAMPLING=y "$KPGO_TREE/.config"
period=$(sed -n 's/^CONFIG_PGO_CLANG_SAMPLING_PERIOD=//p' "$KPGO_TREE/.config")
burst=$(sed -n 's/^CONFIG_PGO_CLANG_SAMPLING_BURST=//p' "$KPGO_TREE/.config")
clang_version=$(sed -n 's/^CONFIG_CLANG_VERSION=//p' "$KPGO_TREE/.config")
# LLVM 21 and later record BURST of each PERIOD updates.
recorded=$burst effective=$period
rm -rf "$out"
mkdir -p "$out" "$guest_bin"

# --- The build ---------------------------------------------------------
check_tls() { READELF=$llvm/llvm-readelf "$KPGO_TREE/scripts/pgo-check-tls.sh" "$@"; }
check "vmlinux.o: no thread-local relocation; vmlinux: no thread-local section or segment" \
	check_tls --relocations "$KPGO_TREE/vmlinux.o" --sections "$KPGO_TREE/vmlinux"
# The check's own control: an object sampled without the header.
cat >"$out/plain.c" <<'C'
int plain_count;
void plain(int n) { for (int i = 0; i < n; i++) plain_count++; }
C
"$llvm/clang" -O2 -c -mcmodel=kernel -fprofile-generate -mllvm -sampled-instrumentation \
	-o "$out/plain.o" "$out/plain.c"
check "the build check refuses an object sampled without <linux/pgo_sampling.h>" \
	bash -c '! "$@" 2>"$0" && grep -q "thread-local relocations" "$0"' "$out/plain.log" \
	env READELF="$llvm/llvm-readelf" "$KPGO_TREE/scripts/pgo-check-tls.sh" --relocations "$out/plain.o"
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$KPGO_TREE/vmlinux.o" >"$out/vmlinux.o.dis"
# sampling_uses DISASSEMBLY: "GS FS RUST_USES RUST_COUNTER_UPDATES": the
# instructions that address __llvm_profile_sampling (through %gs, through
# %fs), those in Rust functions, and the counter updates of Rust functions.
sampling_uses() {
	awk '
		/^[0-9a-f]+ <.*>:$/ { f = $2 }
		/^ *[0-9a-f]+: *\t/ { insn = $0 }
		/R_X86_64_[A-Z0-9_]+\t__llvm_profile_sampling/ {
			if (insn ~ /%gs:/) g++; else if (insn ~ /%fs:/) s++; else o++
			if (f ~ /^<_R/) r++
		}
		/R_X86_64_PC32\t(__llvm_prf_cnts|__profc_)/ { if (f ~ /^<_R/) c++ }
		END { print g + 0, s + 0 + o, r + 0, c + 0 }' "$1"
}
read -r gs other rust rust_counters < <(sampling_uses "$out/vmlinux.o.dis")
check "vmlinux: $gs sampling accesses, every one %gs-relative ($other otherwise)" \
	test "$gs" -gt 1000 -a "$other" -eq 0
check "vmlinux: Rust functions have counters ($rust_counters updates) but no sampling ($rust)" \
	test "$rust_counters" -gt 0 -a "$rust" -eq 0
read -r start var end < <(awk '$3 == "__per_cpu_start" { s = $1 } $3 == "__llvm_profile_sampling" { v = $1 }
	$3 == "__per_cpu_end" { e = $1 } END { print s, v, e }' "$KPGO_TREE/System.map")
check "__llvm_profile_sampling is a per-CPU variable (0x$var, in 0x$start..0x$end)" \
	python3 -c "import sys; s, v, e = (int(x, 16) for x in sys.argv[1:]); sys.exit(not s <= v < e)" \
	"$start" "$var" "$end"
check "vmlinux exports it to modules" grep -q ' __ksymtab___llvm_profile_sampling$' "$KPGO_TREE/System.map"
# base_pointers DISASSEMBLY: the functions that realign their stack and
# keep its base in %rbx, which they need only for dynamic allocas (LLVM
# before 21 made sampled functions' entry allocas dynamic; 413 functions
# with clang 19, none in its fully instrumented kernel).
base_pointers() {
	awk '/\tandq\t\$-0x[0-9a-f]+, %rsp$/ { n = 3; next }
		n > 0 { n--; if ($0 ~ /\tmovq\t%rsp, %rbx$/) { c++; n = 0 } }
		END { print c + 0 }' "$1"
}
count=$(base_pointers "$out/vmlinux.o.dis")
check "vmlinux: no function's frame made dynamic by sampling ($count frames based on %rbx)" \
	test "$count" -eq 0

# Two builds of the module benchmark: sampled (its own name), and with
# PGO_SAMPLING := n (tests/kernel/modules/Kbuild) fully instrumented; and
# a third, the control of the promoted-flush check below: sampled with the
# kernel's flags but for -do-counter-promotion=false.
moddir=$out/modules
hookbench_module "$moddir/full" pgo_hookbench 'PGO_SAMPLING := n'
hookbench_module "$moddir/sampled" pgo_sampledbench
# shellcheck disable=SC2016 # make's $(...), for the module's Kbuild
hookbench_module "$moddir/promoted" pgo_promotedbench \
	'CFLAGS_PGO_SAMPLING := $(subst -mllvm -do-counter-promotion=false,,$(CFLAGS_PGO_SAMPLING))'
full_ko=$moddir/full/pgo_hookbench.ko sampled_ko=$moddir/sampled/pgo_sampledbench.ko
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$sampled_ko" >"$out/sampled.ko.dis"
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$full_ko" >"$out/full.ko.dis"
read -r gs other _ < <(sampling_uses "$out/sampled.ko.dis")
check "the sampled module: $gs sampling accesses, every one %gs-relative ($other otherwise)" \
	test "$gs" -gt 0 -a "$other" -eq 0
check "the sampled module: no thread-local relocation, section, segment or symbol" \
	check_tls --relocations "$sampled_ko" --sections "$sampled_ko" --symbols "$sampled_ko"
# The control: its object before the module link has LLVM's thread-local
# copy, whose symbol "ld -r" would leave undefined if not stripped.
check "the build check refuses the module's object, with LLVM's thread-local copy" \
	bash -c '! "$@" 2>/dev/null' _ env READELF="$llvm/llvm-readelf" \
	"$KPGO_TREE/scripts/pgo-check-tls.sh" --symbols "${sampled_ko%.ko}.o"
# promoted_flushes DISASSEMBLY: the instructions of C functions that add a
# register to a counter, but for a select's 0 or 1 (setcc, movzbl): LLVM's
# counter promotion, which flushes a loop's counts at its exits outside the
# sampling test, so that every exit writes the counters' shared lines (the
# model counted 17.6 lines passed between 2 vCPUs per pipe round trip, 14
# of them counters', before CFLAGS_PGO_SAMPLING turned it off; 1.5 after).
# A heuristic that the sampled module's loop answers exactly.
promoted_flushes() {
	awk '/^[0-9a-f]+ <.*>:$/ { f = $2; insn = p1 = p2 = "" }
		/^ *[0-9a-f]+: *\t/ { p2 = p1; p1 = insn; insn = $0 }
		/R_X86_64_PC32\t(__llvm_prf_cnts|__profc_)/ {
			if (f !~ /^<_R/ && insn ~ /\tadd[lq]\t%[a-z0-9]+, / &&
			    (p1 p2) !~ /\t(set[a-z]+|movzbl)\t/) c++
		}
		END { print c + 0 }' "$1"
}
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$moddir/promoted/pgo_promotedbench.ko" \
	>"$out/promoted.ko.dis"
count=$(promoted_flushes "$out/promoted.ko.dis")
check "the control: the module sampled without -do-counter-promotion=false flushes its loop's count ($count)" \
	test "$count" -gt 0
count=$(promoted_flushes "$out/sampled.ko.dis")
check "the sampled module's loop flushes no promoted count, outside the sampling test ($count)" \
	test "$count" -eq 0
read -r gs other _ < <(sampling_uses "$out/full.ko.dis")
check "the module with PGO_SAMPLING := n: no sampling ($gs, $other)" test "$gs" -eq 0 -a "$other" -eq 0

# --- The boot ----------------------------------------------------------
guest_programs getpid_loop
sampled_boot sampled.guest.sh 600 --append "kpgo_sampled_calls=$calls" \
	--file "$full_ko" --file "$sampled_ko" --file "$guest_bin/getpid_loop"
check_after stats "stats: sampling_period=$effective sampling_recorded=$recorded" \
	grep -q " sampling_period=$effective sampling_recorded=$recorded\$" "$r/stats"

expected=$((calls * recorded / effective))
for file in getpid sampled full after-reset; do
	"$profdata" merge -o "$out/$file.profdata" "$r/$file.profraw" 2>"$out/$file.merge.log"
	check_after reset "$file.profraw: llvm-profdata merges it" test -s "$out/$file.profdata"
done
count=$(entry_count "$out/getpid.profdata" __x64_sys_getpid)
check_after getpid "getpid after $calls calls: ${count:-none}, near $expected ($recorded of $effective)" \
	near "${count:-0}" "$expected"
# The target is called by the hooked loop and by the plain one (itself
# not instrumented): 2 * calls times.
count=$(entry_count "$out/full.profdata" "$(static_name "$out/full.profdata" pgo_hookbench.c pgo_hookbench_double)")
check_after modules "the full module: its target called exactly $((2 * calls)) times (${count:-none})" \
	test "${count:-0}" -eq $((2 * calls))
count=$(entry_count "$out/sampled.profdata" "$(static_name "$out/sampled.profdata" pgo_sampledbench.c pgo_sampledbench_double)")
check_after modules "the sampled module: its target ${count:-none} times, near $((2 * expected))" \
	near "${count:-0}" $((2 * expected))
# The indirect call's value profile is sampled as the counters are.
targets=$("$profdata" show --ic-targets --function=pgo_sampledbench_hooked "$out/sampled.profdata" |
	sed -n 's/.*;pgo_sampledbench_double, *\([0-9]*\) \].*/\1/p' | head -1)
check_after modules "the sampled module: its indirect call's target recorded ${targets:-none} times, near $expected" \
	near "${targets:-0}" "$expected"
# hooked_ns - plain_ns: what the loop's counters and hooks cost.
cost() { sed -n 's/^hooked_ns=\([0-9]*\) plain_ns=\([0-9]*\).*/\1 \2/p' "$1" | awk '{ print $1 - $2 }'; }
full_cost=$(cost "$r/full-run") sampled_cost=$(cost "$r/sampled-run")
check_after modules "the sampled loop's profiling costs less than the full one's (${sampled_cost:-?} ns against ${full_cost:-?} ns)" \
	test "${sampled_cost:-1}" -lt "${full_cost:-0}"
count=$(entry_count "$out/after-reset.profdata" __x64_sys_getpid)
check_after reset "a reset clears the sampled counters (getpid: ${count:-none} after it)" \
	test "${count:-1}" -lt 10

# --- The other tests on this kernel ------------------------------------
# No clippy here: Debian's clippy-driver is rustc 1.85's, and this tree's
# crates are rustc 1.96's (rustc-web has no clippy).
status=0
"$here/hooks.sh" "$KPGO_TREE/vmlinux" || status=1
check "tests/kernel/hooks.sh on the sampled kernel" test "$status" -eq 0
status=0
"$here/modules.sh" || status=1
check "tests/kernel/modules.sh on the sampled kernel (its modules fully instrumented)" test "$status" -eq 0
status=0
"$here/scale.sh" || status=1
check "tests/kernel/scale.sh on the sampled kernel" test "$status" -eq 0
kasan_twin_tests "$KPGO_BUILD/linux-sampled-kasan" sampled

summary sampled
