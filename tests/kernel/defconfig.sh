#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-defconfig: the whole loop on x86_64 defconfig (BASE=defconfig:
# + scripts/configs/{qemu,pgo,defconfig}.config, with in-tree modules of
# several kinds), too slow for make check (several hours on 2 cores):
# the main job (scripts/profile-kernel) in build/defconfig/, then checks
#   - the instrumented build has no compiler, objtool or modpost warning
#     that the same configuration without PGO (the baseline) lacks;
#   - the instrumented kernel booted (QEMU, TCG, 2 CPUs) and served
#     vmlinux.profraw and a .profraw for every loaded instrumented module,
#     each accepted by llvm-profdata merge;
#   - the optimized build has 0 out-of-date functions and boots (the
#     benchmark boots it);
# and writes the figures (build times, sizes, profile sizes, boot time,
# modules profiled, gain table) to build/defconfig/defconfig-report.md.
#
# Usage: tests/kernel/defconfig.sh   (ROUNDS= as for make)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export BASE=defconfig
# The base's build folder and LLVM tools for the toolchain (TOOLCHAIN=).
build=$("$root/scripts/base-dir") || exit 1
llvm=$(bash -c 'source "$1/scripts/kernel-env.sh" && echo "$KPGO_LLVM_BIN"' _ "$root")
bench=$build/bench
results=$build/qemu/workload/results
report=$build/defconfig-report.md
# shellcheck source=lib.sh
source "$here/lib.sh"

status=0
"$root/scripts/profile-kernel" || status=$?
check "the main job on defconfig completed (status $status)" test "$status" -eq 0

# Warnings: compiler ("warning:"), objtool ("warning: objtool:"), modpost
# ("WARNING: modpost:"), with tree paths and column numbers dropped.
warnings() {
	grep -E 'warning:|WARNING:' "$1" | sed -E "s|$bench/[a-z]+/||g; s|:[0-9]+:[0-9]+:|:|" | sort -u
}
check "both build logs are there (instrumented, baseline)" \
	test -s "$bench/instrumented.log" -a -s "$bench/baseline.log"
warnings "$bench/instrumented.log" >"$build/warnings-instrumented.txt"
warnings "$bench/baseline.log" >"$build/warnings-baseline.txt"
comm -23 "$build/warnings-instrumented.txt" "$build/warnings-baseline.txt" >"$build/warnings-new.txt"
check "no warning that the build without PGO lacks ($(wc -l <"$build/warnings-new.txt") new)" \
	test ! -s "$build/warnings-new.txt"
# The optimized build too, but for the profile diagnostics (counted below;
# by their words, since other -Wbackend-plugin warnings must still count):
# objtool's IBT check once warned 2503 times there (patch 3).
# shellcheck source=../../scripts/profile-warnings.sh
source "$root/scripts/profile-warnings.sh"
warnings "$bench/optimized.log" | grep -vE "$kpgo_profile_warnings" \
	>"$build/warnings-optimized.txt" || true
comm -23 "$build/warnings-optimized.txt" "$build/warnings-baseline.txt" >"$build/warnings-optimized-new.txt"
check "the optimized build: no warning but profile diagnostics that the baseline lacks ($(wc -l <"$build/warnings-optimized-new.txt") new)" \
	test ! -s "$build/warnings-optimized-new.txt"

# Every loaded instrumented module has its profile, and llvm-profdata takes
# each profile.
check "the workload listed the loaded modules" test -s "$results/modules-loaded"
: >"$build/modules-unprofiled.txt"
loaded=0
while read -r name _; do
	ko=$(find "$bench/instrumented" -name "$name.ko" -print -quit)
	[[ -n $ko ]] || continue
	# grep reads to the end: with pipefail, grep -q's early exit would
	# fail the pipeline (llvm-readelf's SIGPIPE) and skip the module.
	"$llvm/llvm-readelf" -S "$ko" | grep __llvm_prf_data >/dev/null || continue
	loaded=$((loaded + 1))
	[[ -s $results/$name.profraw ]] || echo "$name" >>"$build/modules-unprofiled.txt"
done <"$results/modules-loaded"
check "every one of the $loaded loaded instrumented modules has its .profraw" \
	test ! -s "$build/modules-unprofiled.txt"
check "vmlinux.profraw served" test -s "$results/vmlinux.profraw"
bad=0
for f in "$results"/*.profraw; do
	"$llvm/llvm-profdata" merge -o /dev/null "$f" 2>>"$build/merge-errors.txt" || bad=$((bad + 1))
done
check "every profile is accepted by llvm-profdata merge ($bad refused)" test "$bad" -eq 0

counts=$bench/optimized/pgo-profile-diagnostics.txt
out_of_date=$(sed -n 's/^out_of_date=//p' "$counts" 2>/dev/null)
missing=$(sed -n 's/^missing=//p' "$counts" 2>/dev/null)
check "optimized build: 0 out-of-date functions (${out_of_date:-?})" test "${out_of_date:--1}" -eq 0
check "the optimized kernel booted and ran the benchmark" \
	test -s "$build/bench-kernels/optimized-1/results/ops"

size_of() { "$llvm/llvm-size" "$1/vmlinux" | awk 'NR == 2 { print $1 " text, " $2 " data, " $3 " bss, " $4 " total" }'; }
{
	echo "# x86_64 defconfig: the PGO loop ($(date -u +%F))"
	echo
	echo "- Time per stage (s, 2 cores; a stage that was up to date is incremental): $(sed -n 's/^Time per stage (s): //p' "$build/report.md")"
	echo "- CPU time per stage (s, user + system): $(sed -n 's/^CPU time per stage (s, user + system): //p' "$build/report.md")"
	echo "- size vmlinux (llvm-size):"
	echo "  - instrumented: $(size_of "$bench/instrumented")"
	echo "  - baseline: $(size_of "$bench/baseline")"
	echo "  - optimized: $(size_of "$bench/optimized")"
	echo "- Profiles: vmlinux.profraw $(stat -c %s "$results/vmlinux.profraw") bytes;" \
		"$(find "$results" -name '*.profraw' ! -name vmlinux.profraw | wc -l) module profiles," \
		"$(cat "$results"/*.profraw | wc -c) bytes in all; merged $(stat -c %s "$build/kernel.profdata") bytes"
	echo "- Boot to the guest script (instrumented, TCG, 2 CPUs): $(sed -n 's/^boot_to_script_s=//p' "$build/qemu/workload/timing") s"
	echo "- Modules loaded: $(wc -l <"$results/modules-loaded"), instrumented and profiled: $loaded" \
		"($(find "$results" -name '*.profraw' ! -name vmlinux.profraw -printf '%f ' | sed 's/\.profraw//g'))"
	echo "- Modules whose init failed (no such device), profiled all the same: $(cat "$results/insmod-failed" 2>/dev/null | tr '\n' ' ')"
	echo "- Profile diagnostics of the optimized build: ${out_of_date:-?} out of date, ${missing:-?} without data"
	echo "- Warnings of the instrumented build that the baseline lacks: $(wc -l <"$build/warnings-new.txt")"
	echo "- Warnings of the optimized build that the baseline lacks, profile diagnostics aside: $(wc -l <"$build/warnings-optimized-new.txt")"
	echo
	echo '```'
	cat "$build/benchmark.txt"
	echo '```'
} >"$report"
cat "$report"
summary defconfig
