#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What the main job (make, scripts/profile-kernel) left behind on a base
# (BASE, default tinyconfig), checked: the profile of its instrumented
# kernel applied to its optimized one with zero out-of-date functions, C
# and Rust, taken from that very build (its binary ids), holding Rust
# functions, the untrained benchmarks' paths never run by its workload and
# their ratios given apart, and the report written.  .ci/run runs it after the main job,
# which is what puts make check's optimized-build test (make
# check-optimized, the same build-optimized on the test kernel) out of
# CI's time budget without leaving the optimized path unchecked.
#
# Usage: [BASE=...] tests/kernel/main-job.sh  (after make on that base)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$("$root/scripts/base-dir")
llvm=$(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LLVM_BIN"' _ "$root")
# shellcheck source=lib.sh
source "$here/lib.sh"

counts=$build/bench/optimized/pgo-profile-diagnostics.txt
value() { diagnostic "$counts" "$1"; }
echo "main job's optimized build ($counts): out_of_date=$(value out_of_date)," \
	"rust_out_of_date=$(value rust_out_of_date), missing=$(value missing), origin=$(value origin)"
check "zero out-of-date functions in the main job's optimized build" \
	test "$(value out_of_date)" = 0
check "zero out-of-date Rust functions in it" test "$(value rust_out_of_date)" = 0
check "its profile came from the main job's instrumented build (binary ids)" \
	test "$(value origin)" = "$build/bench/instrumented"
check "... the profile it applied is the main job's" \
	test "$(value profile)" = "$build/kernel.profdata"
check "the profile holds Rust functions (v0 symbols)" \
	bash -c "'$llvm/llvm-profdata' show --all-functions '$build/kernel.profdata' | grep -q '^  \(\S*;\)\{0,1\}_R'"
check "the workload never ran the untrained benchmarks' entry functions (scripts/untrained-check)" \
	"$root/scripts/untrained-check" "$llvm/llvm-profdata" "$build/kernel.profdata"
check "the benchmark gives the trained and untrained benchmarks apart" \
	grep -Eq '^geomean per set \(above 1 is faster\) +trained +untrained$' "$build/benchmark.txt"
check "the report is written" grep -q '^Profile diagnostics of the optimized build: ' "$build/report.md"
# The cut-offs held for the optimized builds (scripts/profile-thresholds),
# read from the summary of every toolchain's llvm-profdata this machine
# has: LLVM 22 words the summary differently from LLVM 19 ("N blocks (S%)
# with count >= C account for P% ..."). Each must give the counts of the
# 99% and 99.9999% lines.
for toolchain in llvm-19 llvm-21 llvm-22 llvm-23; do
	tool=$(TOOLCHAIN=$toolchain bash -c 'source "$1/scripts/kernel-env.sh" 2>/dev/null && echo "$KPGO_LLVM_BIN/llvm-profdata"' _ "$root") || continue
	[[ -x $tool ]] || continue
	# An older llvm-profdata cannot read a newer one's indexed profile.
	"$tool" show "$build/kernel-main.profdata" >/dev/null 2>&1 || continue
	expected=$("$tool" show --detailed-summary "$build/kernel-main.profdata" | python3 -c '
import re, sys
lines = {m.group(2): m.group(1) for m in re.finditer(r"count >= (\d+) account for ([0-9.]+)", sys.stdin.read())}
hot, cold = lines.get("99"), lines.get("99.9999")
print(f"-mllvm -profile-summary-hot-count={hot} -mllvm -profile-summary-cold-count={cold}")')
	check "profile-thresholds reads $toolchain's llvm-profdata summary ($expected)" \
		test "$("$root/scripts/profile-thresholds" "$tool" "$build/kernel-main.profdata")" = "$expected"
done
summary main-job
