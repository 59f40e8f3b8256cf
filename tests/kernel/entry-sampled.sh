#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel built with entry sampling (make kernel-entry: the test kernel
# + CONFIG_PGO_CLANG_SAMPLING_ENTRY, in KPGO_BUILD/linux-entry; kpgo's pass
# plugin needs the headers of the compiler's LLVM, so make check-entry
# builds and tests it with TOOLCHAIN=llvm-22):
#   - kbuild built the plugin and compiled vmlinux with it: twins, entry
#     tests of the per-CPU kpgo_entry_burst (every one %gs-relative; in
#     Rust functions too where rustc loads the plugin,
#     CONFIG_PGO_CLANG_SAMPLING_ENTRY_RUST, else none), which vmlinux
#     exports; the objects depend on the header that changes with the
#     plugin, Rust's command lines on its hash;
#   - booted (2 CPUs) with bursts always on: getpid's count after N calls
#     is N, and a module built with the plugin has the same counts, value
#     profile included, as the same module fully instrumented;
#   - with the plugin in Rust: Rust functions of vmlinux counted with
#     bursts always on and not at all with bursts never on, and
#     tests/kernel/rust.sh's exact counts of its Rust module with bursts
#     always on;
#   - never on: those counts are 0; a quarter of the time (one tick in
#     four): getpid's count is N times the share of time in bursts that
#     pgo/entry_sampling measured (within 25%), and its weight is that
#     share's inverse;
#   - work at once after a reset, or after new settings, is counted at
#     about the share of time in bursts (a reset leaves the bursts as
#     they are; a start puts each CPU at a random point of its cycle);
#   - pgo/entry_sampling refuses bad settings and changes nothing; no
#     warning, oops or lockdep report on the console;
#   - the hooks walk on this vmlinux; on its KASAN twin (make
#     kernel-entry-kasan, KPGO_BUILD/linux-entry-kasan) the hooks walk
#     (no sanitizer in the hooks) and the lifecycle tests' paths and
#     faults parts (KASAN, lockdep, kmemleak, fault injection).
#
# Usage: [TOOLCHAIN=llvm-22] tests/kernel/entry-sampled.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tree=${KPGO_TREE:-}
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../../scripts/kernel-env.sh
BASE=tinyconfig source "$root/scripts/kernel-env.sh"
export KPGO_TREE=${tree:-$KPGO_BUILD/linux-entry}
export KPGO_TEST_OUT=${KPGO_TEST_OUT:-$KPGO_BUILD/entry-sampled}
export KPGO_LLVM_BIN
llvm=$KPGO_LLVM_BIN
profdata=$llvm/llvm-profdata
out=$KPGO_TEST_OUT
guest_bin=$out/guest
calls=1000000

[[ -f $KPGO_TREE/vmlinux ]] || { echo "FAIL: no kernel in $KPGO_TREE: make kernel-entry"; exit 1; }
check "the tree is configured with CONFIG_PGO_CLANG_SAMPLING_ENTRY" \
	grep -qx CONFIG_PGO_CLANG_SAMPLING_ENTRY=y "$KPGO_TREE/.config"
rm -rf "$out"
mkdir -p "$out" "$guest_bin"

# --- The build ---------------------------------------------------------
check "kbuild built the plugin (scripts/pgo/entry-sampling.so)" \
	test -s "$KPGO_TREE/scripts/pgo/entry-sampling.so"
check "an instrumented object depends on the header that changes with the plugin" \
	grep -q 'include/generated/pgo-entry-plugin.h' "$KPGO_TREE/kernel/.fork.o.cmd"
check "an object of kernel/pgo (never instrumented) does not" \
	bash -c '! grep -q pgo-entry-plugin.h "$0"' "$KPGO_TREE/kernel/pgo/.glue.o.cmd"
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$KPGO_TREE/vmlinux.o" >"$out/vmlinux.o.dis"
# burst_uses DISASSEMBLY: "GS OTHER RUST TWINS": the instructions of
# compiled code (not the runtime's own kpgo_* functions, whose stats read
# other CPUs' copies) that address kpgo_entry_burst through %gs,
# otherwise, in Rust functions; and the twins (F.kpgo_twin).
burst_uses() {
	awk '
		/^[0-9a-f]+ <.*>:$/ { f = $2; if (f ~ /\.kpgo_twin>:$/) t++ }
		/^ *[0-9a-f]+: *\t/ { insn = $0 }
		/R_X86_64_[A-Z0-9_]+\tkpgo_entry_burst/ && f !~ /^<kpgo_/ {
			if (insn ~ /%gs:/) g++; else o++
			if (f ~ /^<_R/) r++
		}
		END { print g + 0, o + 0, r + 0, t + 0 }' "$1"
}
read -r gs other rust twins < <(burst_uses "$out/vmlinux.o.dis")
check "vmlinux: $twins twins, $gs tests of kpgo_entry_burst, every one %gs-relative ($other otherwise)" \
	test "$twins" -gt 1000 -a "$gs" -gt 1000 -a "$other" -eq 0
# Twins call other objects' functions' twins by name (F.kpgo_twin, external
# in vmlinux's objects); the link makes each name that no object defines
# the function itself, and leaves those aliases out of System.map (kallsyms
# is made from the same list).
external_twins=$(nm "$KPGO_TREE/vmlinux.o" | grep -c ' T .*\.kpgo_twin$')
check "vmlinux.o: $external_twins external twins" test "$external_twins" -gt 1000
aliases=$KPGO_TREE/.tmp_vmlinux.kpgo_twins
check "the link made $(wc -l <"$aliases") names of functions without a twin, F.kpgo_twin = F" \
	bash -c 'nm "$0" | awk -v list="$1" "
		BEGIN { while ((getline name < list) > 0) alias[name] }
		{ address[\$3] = \$1 }
		END { for (a in alias) { f = a; sub(/\\.kpgo_twin\$/, \"\", f)
			if (!(a in address) || address[a] != address[f]) exit 1; n++ }
			exit !n }"' "$KPGO_TREE/vmlinux" "$aliases"
check "... and none of them is in System.map (nor kallsyms)" \
	bash -c '! awk "NR == FNR { alias[\$0]; next } \$3 in alias { found = 1 } END { exit !found }" "$0" "$1"' \
	"$aliases" "$KPGO_TREE/System.map"
rust_twins=$(grep -c '^[0-9a-f]* <_R.*\.kpgo_twin>:$' "$out/vmlinux.o.dis")
if grep -qx CONFIG_PGO_CLANG_SAMPLING_ENTRY_RUST=y "$KPGO_TREE/.config"; then
	entry_rust=1
	check "vmlinux: Rust functions have twins ($rust_twins) and test it ($rust)" \
		test "$rust_twins" -gt 100 -a "$rust" -gt 100
	check "a Rust object's command line has the plugin and its hash" \
		grep -q -- "-Zllvm-plugins=.*--cfg=kpgo_entry_plugin_$(md5sum <"$KPGO_TREE/scripts/pgo/entry-sampling.so" | cut -d' ' -f1)" \
		"$KPGO_TREE/rust/.kernel.o.cmd"
else
	entry_rust=0
	check "vmlinux: no Rust function tests it or has a twin ($rust, $rust_twins): rustc cannot load the plugin" \
		test "$rust" -eq 0 -a "$rust_twins" -eq 0
fi
read -r start var end < <(awk '$3 == "__per_cpu_start" { s = $1 } $3 == "kpgo_entry_burst" { v = $1 }
	$3 == "__per_cpu_end" { e = $1 } END { print s, v, e }' "$KPGO_TREE/System.map")
check "kpgo_entry_burst is a per-CPU variable (0x$var, in 0x$start..0x$end)" \
	python3 -c "import sys; s, v, e = (int(x, 16) for x in sys.argv[1:]); sys.exit(not s <= v < e)" \
	"$start" "$var" "$end"
check "vmlinux exports it to modules" grep -q ' __ksymtab_kpgo_entry_burst$' "$KPGO_TREE/System.map"

# Two builds of the module benchmark: with the plugin (its own name), and
# with PGO_SAMPLING := n fully instrumented.
moddir=$out/modules
hookbench_module "$moddir/full" pgo_hookbench 'PGO_SAMPLING := n'
hookbench_module "$moddir/entry" pgo_entrybench
full_ko=$moddir/full/pgo_hookbench.ko entry_ko=$moddir/entry/pgo_entrybench.ko
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$entry_ko" >"$out/entry.ko.dis"
"$llvm/llvm-objdump" -dr --no-show-raw-insn "$full_ko" >"$out/full.ko.dis"
read -r gs other _ twins < <(burst_uses "$out/entry.ko.dis")
check "the module with the plugin: $twins twins, $gs tests, every one %gs-relative ($other otherwise)" \
	test "$twins" -gt 0 -a "$gs" -gt 0 -a "$other" -eq 0
read -r gs other _ twins < <(burst_uses "$out/full.ko.dis")
check "the module with PGO_SAMPLING := n: no twin, no test ($twins, $gs, $other)" \
	test "$twins" -eq 0 -a "$gs" -eq 0 -a "$other" -eq 0

# --- The boot ----------------------------------------------------------
guest_programs getpid_loop
sampled_boot entry-sampled.guest.sh 900 \
	--append "kpgo_entry_calls=$calls kpgo.entry_period_us=1000 kpgo.entry_burst_us=1000" \
	--file "$full_ko" --file "$entry_ko" --file "$guest_bin/getpid_loop"
check_after settings "the boot parameters set bursts always on (period_us=1000 burst_us=1000)" \
	grep -qx 'period_us=1000 burst_us=1000' "$r/settings-boot"

for mode in always never quarter; do
	for file in vmlinux entry full; do
		"$profdata" merge -o "$out/$mode-$file.profdata" "$r/$mode-$file.profraw" \
			2>"$out/$mode-$file.merge.log"
		check_after "$mode" "$mode-$file.profraw: llvm-profdata merges it" \
			test -s "$out/$mode-$file.profdata"
	done
done
# counts PROFDATA: every function's hash, counters and value profile, one
# line each, sorted, the module's name made one (and a static function's
# file without its folder, which 6.12 names in full for M= modules).
counts() {
	"$profdata" show --all-functions --counts --ic-targets "$1" 2>/dev/null |
		sed -e 's/pgo_entrybench/pgo_hookbench/g' -e 's|^  [^ ;]*/\([^/ ;]*\.c;\)|  \1|' |
		awk '/^  [^ ].*:$/ { if (f != "") print f; f = $0; next }
			/^    / && f != "" { f = f " |" $0 }
			END { if (f != "") print f }' | sort
}
count=$(entry_count "$out/always-vmlinux.profdata" __x64_sys_getpid)
check_after always "bursts always on: getpid after $calls calls counted ${count:-none} times, exactly" \
	test "${count:-0}" -eq "$calls"
counts "$out/always-entry.profdata" >"$out/always-entry.counts"
counts "$out/always-full.profdata" >"$out/always-full.counts"
check_after always "bursts always on: the module with the plugin has the fully instrumented one's counts and value profile" \
	diff "$out/always-entry.counts" "$out/always-full.counts"
count=$(entry_count "$out/always-entry.profdata" "$(static_name "$out/always-entry.profdata" pgo_entrybench.c pgo_entrybench_double)")
check_after always "bursts always on: the module's target called exactly $((2 * calls)) times (${count:-none})" \
	test "${count:-0}" -eq $((2 * calls))

count=$(entry_count "$out/never-vmlinux.profdata" __x64_sys_getpid)
check_after never "bursts never on: getpid not counted (${count:-none})" test "${count:-1}" -eq 0
count=$(entry_count "$out/never-entry.profdata" "$(static_name "$out/never-entry.profdata" pgo_entrybench.c pgo_entrybench_double)")
check_after never "bursts never on: the module's target not counted (${count:-none})" test "${count:-1}" -eq 0
count=$(entry_count "$out/never-full.profdata" "$(static_name "$out/never-full.profdata" pgo_hookbench.c pgo_hookbench_double)")
check_after never "the fully instrumented module counts regardless: $((2 * calls)) (${count:-none})" \
	test "${count:-0}" -eq $((2 * calls))

# rust_counted PROFDATA: how many of its Rust functions (v0 symbols) have
# a count that is not 0.
rust_counted() {
	"$profdata" show --all-functions --counts "$1" 2>/dev/null |
		awk '/^  [^ ].*:$/ { rust = ($1 ~ /^(.*;)?_R/) }
			rust && (/Function count: [1-9]/ || /Block counts: \[/ && /[1-9]/) { n++; rust = 0 }
			END { print n + 0 }'
}
if ((entry_rust)); then
	counted=$(rust_counted "$out/always-vmlinux.profdata")
	check_after always "with the plugin in Rust, bursts always on: $counted Rust functions of vmlinux counted" \
		test "$counted" -gt 0
	counted=$(rust_counted "$out/never-vmlinux.profdata")
	check_after never "with the plugin in Rust, bursts never on: no Rust function of vmlinux counted ($counted)" \
		test "$counted" -eq 0
fi

ppm=$(sed -n 's/^burst_ppm=\([0-9]*\) weight=.*/\1/p' "$r/quarter-settings")
weight=$(sed -n 's/^burst_ppm=[0-9]* weight=\([0-9]*\)$/\1/p' "$r/quarter-settings")
# The timer expires at ticks, late under a loaded host: the weight comes
# from the measured share, which need only be a quarter roughly.
check_after quarter "a quarter: pgo/entry_sampling measured ${ppm:-?} ppm of the time in bursts (a quarter: 125000 to 500000)" \
	test "${ppm:-0}" -ge 125000 -a "${ppm:-0}" -le 500000
check_after quarter "a quarter: its weight ${weight:-?} is the inverse of that share" \
	python3 -c "import sys; p, w = map(int, sys.argv[1:]); sys.exit(not p or abs(w - 1e6 / p) > 0.5)" \
	"${ppm:-0}" "${weight:-0}"
count=$(entry_count "$out/quarter-vmlinux.profdata" __x64_sys_getpid)
expected=$((calls * ${ppm:-0} / 1000000))
check_after quarter "a quarter: getpid counted ${count:-none} times, near $expected (the measured share)" \
	near "${count:-0}" "$((expected > 0 ? expected : 1))"
check_after quarter "a quarter: each CPU had bursts" \
	bash -c 'test "$(grep -c "^cpu[0-9]* bursts=[1-9]" "$0")" -eq 2' "$r/quarter-settings"

check_after refusals "pgo/entry_sampling refuses every bad setting (bursts or gaps under 100 us among them)" \
	bash -c '! grep -q "^accepted" "$0" && test "$(wc -l <"$0")" -eq 9' "$r/refusals"
check_after refusals "and they changed nothing (period_us=16000 burst_us=4000)" \
	grep -qx 'period_us=16000 burst_us=4000' "$r/settings-after"
# cpu_ns FILE: the least of the CPUs' time since their figures started.
cpu_ns() { sed -n 's/^cpu[0-9]* bursts=[0-9]* burst_ns=[0-9]* ns=\([0-9]*\)$/\1/p' "$1" | sort -n | head -1; }
before=$(cpu_ns "$r/before-reset") after=$(cpu_ns "$r/after-reset")
check_after reset "a reset restarts every CPU's figures (${before:-?} ns before it, ${after:-?} ns after)" \
	test "${after:-1}" -lt $((${before:-0} / 10))

# Of 48 resets, and of 48 writes of the settings, each followed at once
# by the module's work, about a quarter find its CPU in a burst: the
# bursts go on through a reset, and new settings put each CPU at a random
# point of its cycle. A reset that restarted the timers, or a start at the
# beginning of a gap, would give no burst for 300 ms, hence no count.
for restart in reset settings; do
	counted=0 profiles=0
	for raw in "$r"/after-$restart-*.profraw; do
		[[ -f $raw ]] || continue
		profiles=$((profiles + 1))
		"$profdata" merge -o "$out/after-$restart.profdata" "$raw" 2>/dev/null || continue
		count=$(entry_count "$out/after-$restart.profdata" \
			"$(static_name "$out/after-$restart.profdata" pgo_entrybench.c pgo_entrybench_double)")
		((${count:-0} == 0)) || counted=$((counted + 1))
	done
	what=${restart/settings/write of the settings}
	check_after "after-$restart" "work at once after a $what: counted after $counted of $profiles (48 expected; a quarter of them: 2 to 30)" \
		bash -c 'test "$0" -eq 48 && test "$1" -ge 2 && test "$1" -le 30' "$profiles" "$counted"
done

# --- The other tests on this kernel and its KASAN twin -----------------
# The Rust module's exact counts, through the plugin, with bursts always on.
if ((entry_rust)); then
	status=0
	KPGO_TEST_OUT=$out/rust "$here/rust.sh" --append "kpgo.entry_period_us=1000 kpgo.entry_burst_us=1000" ||
		status=1
	check "tests/kernel/rust.sh with bursts always on: the Rust module's exact counts through the plugin" \
		test "$status" -eq 0
	rust_ko=$out/rust/test-modules-rust/pgo_test_rust.ko
	check "... a module built with the plugin: pgo_test_rust.ko has $(nm "$rust_ko" 2>/dev/null | grep -c '\.kpgo_twin$') twins" \
		bash -c 'nm "$0" | grep -q "\.kpgo_twin$"' "$rust_ko"
fi
status=0
"$here/hooks.sh" "$KPGO_TREE/vmlinux" || status=1
check "tests/kernel/hooks.sh on the entry-sampled kernel" test "$status" -eq 0
kasan_twin_tests "$KPGO_BUILD/linux-entry-kasan" entry-sampled

summary entry-sampled
