#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests the tests: compare.sh and threads.sh must fail, on the right checks,
# when the candidate runtime is subtly wrong. Each "mutant" runtime is
# compiler-rt's archive plus a small object from mutants/ that corrupts
# something, joined by a linker script passed as KPGO_LIB (so the link line
# is exactly the candidate's). A baseline with unmutated compiler-rt as the
# candidate must pass everything. clang-19 only, a few programs: ~25 s on 2
# CPUs. Needs nothing built (every candidate is compiler-rt based), so it
# runs from a clean build/; its last line is "N passed, M failed".
#
# Usage: tests/host/selftest.sh
set -euo pipefail

# shellcheck source=tests/host/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SELF_OUT=$OUT_ROOT/selftest
set_toolchain 19
rm -rf "$SELF_OUT"
mkdir -p "$SELF_OUT"

# compiler-rt with its two value hooks made weak, so a mutant's hook wins.
"$OBJCOPY" --weaken-symbol=__llvm_profile_instrument_memop \
	--weaken-symbol=__llvm_profile_instrument_target \
	"$COMPILER_RT_PROFILE" "$SELF_OUT/compiler-rt-weak-hooks.a"

for src in "$HOST_TESTS_DIR"/mutants/*.c; do
	"$CC_BIN" -O2 -Wall -Wextra -c "$src" -o "$SELF_OUT/$(basename "$src" .c).o"
done

# A linker script standing in for the runtime archive: mutant object first.
mutant_lib() { # name mutant-object runtime-archive
	printf 'INPUT(%s %s)\n' "$SELF_OUT/$2.o" "$3" > "$SELF_OUT/$1.ld"
	echo "$SELF_OUT/$1.ld"
}

# Runs a test script with a candidate; checks its exit status and that each
# expected check failed.
expect() { # name candidate script programs expect-exit(0|fail) [failing-check-pattern...]
	local name=$1 candidate=$2 script=$3 programs=$4 want=$5 status=0 pattern
	shift 5
	local log=$SELF_OUT/$name.log
	env KPGO_LIB="$candidate" HOST_TEST_TOOLCHAINS=19 HOST_TEST_PROGRAMS="$programs" \
		HOST_TESTS_OUT="$SELF_OUT/$name" HOST_TEST_ITERATIONS=50000 \
		"$HOST_TESTS_DIR/$script" > "$log" 2>&1 || status=$?
	if [ "$want" = 0 ]; then
		if [ $status -eq 0 ] && tail -n1 "$log" | grep -q ' passed, 0 failed$'; then
			pass "$name: $script passes ($(tail -n1 "$log"))"
		else
			fail "$name: $script passes (exit $status)"
			grep '^FAIL' "$log" > "$log.failures" || true
			excerpt "$log.failures"
		fi
		return
	fi
	if [ $status -ne 0 ]; then
		pass "$name: $script exits non-zero ($(tail -n1 "$log"))"
	else
		fail "$name: $script exits non-zero"
	fi
	for pattern in "$@"; do
		if grep -q "^FAIL: .*$pattern" "$log"; then
			pass "$name: fails check '$pattern'"
		else
			fail "$name: fails check '$pattern' (see $log)"
		fi
	done
}

expect baseline compiler-rt run.sh "control_flow indirect_calls memops" 0

expect flip-last-byte "$(mutant_lib flip flip_profile_byte "$COMPILER_RT_PROFILE")" \
	compare.sh "control_flow indirect_calls" fail \
	"control_flow/fixed: raw profiles byte-identical" \
	"indirect_calls/fixed: raw profiles byte-identical"

MUTANT_WHERE=counter expect flip-counter "$SELF_OUT/flip.ld" compare.sh "indirect_calls" fail \
	"indirect_calls/pie: llvm-profdata show output identical" \
	"indirect_calls/fixed: llvm-profdata show output identical" \
	"indirect_calls/fixed: raw profiles byte-identical" \
	"indirect_calls/fixed: indexed profiles read the same"

MUTANT_WHERE=binary-id expect flip-binary-id "$SELF_OUT/flip.ld" compare.sh tiny fail \
	"tiny/pie: kpgo profile's binary id is its ELF file's build id" \
	"tiny/fixed: llvm-profdata show --binary-ids output identical" \
	"tiny/fixed: raw profiles byte-identical"

expect memop-range "$(mutant_lib memop memop_range_wrong "$SELF_OUT/compiler-rt-weak-hooks.a")" \
	compare.sh memops fail \
	"memops/pie: llvm-profdata show output identical" \
	"memops/fixed: llvm-profdata show output identical"

MUTANT_TARGET=double expect target-double \
	"$(mutant_lib target target_miscounted "$SELF_OUT/compiler-rt-weak-hooks.a")" \
	threads.sh "" fail \
	"kpgo 1 thread: call_through_table: no indirect value counted more often" \
	"kpgo 1 thread: call_through_table: indirect value counts exact" \
	"kpgo 1 thread: call_pair: no indirect value counted more often"
# (Not expected with 8 threads: the mutant counts through compiler-rt's
# non-atomic updates, whose losses can hide its extra counts.)

MUTANT_TARGET=invent expect target-invent "$SELF_OUT/target.ld" threads.sh "" fail \
	"kpgo 1 thread: call_through_table: every recorded target is a function of the program" \
	"kpgo 8 threads: call_pair: recorded indirect values are exactly"

# The hammer's tally lost: no check may pass a run it has nothing to judge
# by. (compiler-rt's own run in threads.sh links no mutant, so it passes.)
TALLY_CUT_LIB=$(mutant_lib tally tally_cut "$COMPILER_RT_PROFILE")
MUTANT_TALLY=silent expect tally-silent "$TALLY_CUT_LIB" threads.sh "" fail \
	"kpgo 8 threads: the tally lists at least" \
	"kpgo 1 thread: the tally lists at least"

MUTANT_TALLY=short expect tally-short "$TALLY_CUT_LIB" threads.sh "" fail \
	"kpgo 8 threads: the tally lists at least" \
	"kpgo atomic counters 8 threads: the tally lists at least"

summary
