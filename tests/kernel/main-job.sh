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
summary main-job
