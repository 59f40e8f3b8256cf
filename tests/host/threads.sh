#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Concurrency test of the candidate runtime: threads/ (the "hammer" program)
# runs many threads through the same indirect-call and memop sites and
# counters, tallying its own calls; check_threads.py holds the profile to the
# runtime's contract (nothing invented, nothing lost, nothing counted more
# often than it happened; exact when single-threaded).
#
# Runs, per toolchain:
#   kpgo, THREADS threads                 values bounded, entry counts <= calls
#   kpgo, 1 thread                        values and entry counts exact
#   kpgo, atomic counters, THREADS       entry counts exact, values bounded
#   compiler-rt, THREADS threads          the same bounded checks, as the
#                                         reference the contract is drawn from
#
# Usage: tests/host/threads.sh   (HOST_TEST_THREADS, HOST_TEST_ITERATIONS,
# HOST_TEST_TOOLCHAINS and KPGO_LIB as for compare.sh)
set -euo pipefail

# shellcheck source=tests/host/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

THREADS=${HOST_TEST_THREADS:-8}
ITERATIONS=${HOST_TEST_ITERATIONS:-200000}
# Room for 8 value nodes per site: the three sites hold 6, 2 and 5 values; a
# runtime allocating only from the compiler's pool must not run short.
HAMMER_CFLAGS="-mllvm -vp-counters-per-site=8"

# -fprofile-update=atomic alone is ignored by clang-16 with -fprofile-generate
# (IR instrumentation): its counters stay plain "incq". The LLVM option below
# makes it atomic there; clang-19 honours both.
ATOMIC_CFLAGS="-fprofile-update=atomic -mllvm -instrprof-atomic-counter-update-all"

# True if every rip-relative counter increment in the objects is locked (and
# there is at least one).
counters_are_atomic() { # objects...
	"$OBJDUMP" -d --no-show-raw-insn "$@" | awk '
		$2 == "incq" && $3 ~ /\(%rip\)/ { if (prev == "lock") locked++; else plain++ }
		{ prev = $2 }
		END { exit !(locked > 0 && plain == 0) }'
}

# Compiles threads/*.c with extra flags into dir; prints the object list.
compile_hammer() { # dir extra-cflags
	local dir=$1 extra=$2 src obj
	mkdir -p "$dir"
	for src in "$HOST_TESTS_DIR"/threads/*.c; do
		obj=$dir/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		"$CC_BIN" $INSTR_CFLAGS $HAMMER_CFLAGS $extra -pthread -c "$src" -o "$obj" >> "$dir/compile.log" 2>&1 || return 1
		echo "$obj"
	done
}

# Runs one build and hands its profile to the checker.
run_and_check() { # label exe threads checker-flags...
	local label=$1 exe=$2 threads=$3 status=0
	shift 3
	local base=${exe}.t$threads
	rm -f "$base.profraw"
	LLVM_PROFILE_FILE=$base.profraw timeout 120 "$exe" "$threads" "$ITERATIONS" > "$base.tally" 2> "$base.stderr" || status=$?
	if [ $status -ne 0 ] || [ ! -s "$base.profraw" ]; then
		fail "$label: runs (exit $status) and writes a profile"
		excerpt "$base.stderr"
		return
	fi
	if ! "$PROFDATA" merge --text -o "$base.proftext" "$base.profraw" > "$base.merge.log" 2>&1 ||
		[ -s "$base.merge.log" ]; then
		fail "$label: llvm-profdata merge reads the profile cleanly"
		excerpt "$base.merge.log"
		return
	fi
	pass "$label: runs, and llvm-profdata reads the profile cleanly"
	defined_functions "$exe" > "$exe.functions"
	local line
	while IFS= read -r line; do
		case $line in
		PASS:*) pass "${line#PASS: }" ;;
		FAIL:*) fail "${line#FAIL: }" ;;
		*) echo "$line" ;;
		esac
	done < <(python3 "$HOST_TESTS_DIR/check_threads.py" "$label" "$base.tally" "$base.proftext" "$exe.functions" "$@" 2>&1 ||
		echo "FAIL: $label: check_threads.py ran to completion")
}

threads_for_toolchain() {
	local dir=$OUT_ROOT/$TOOLCHAIN/threads
	local -a plain atomic
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! mapfile -t plain < <(compile_hammer "$dir/plain" "") || [ ${#plain[@]} -eq 0 ] ||
		! mapfile -t atomic < <(compile_hammer "$dir/atomic" "$ATOMIC_CFLAGS") || [ ${#atomic[@]} -eq 0 ]; then
		fail "$TOOLCHAIN/threads: compiles"
		excerpt "$dir/plain/compile.log"
		excerpt "$dir/atomic/compile.log"
		return
	fi
	if ! link_candidate "$dir/kpgo" "${plain[@]}" -Wl,--build-id > "$dir/link.log" 2>&1 ||
		! link_candidate "$dir/kpgo.atomic" "${atomic[@]}" -Wl,--build-id >> "$dir/link.log" 2>&1 ||
		! link_compiler_rt "$dir/compiler-rt" "${plain[@]}" -pthread -Wl,--build-id >> "$dir/link.log" 2>&1; then
		fail "$TOOLCHAIN/threads: links"
		excerpt "$dir/link.log"
		return
	fi
	pass "$TOOLCHAIN/threads: compiles and links (plain and -fprofile-update=atomic)"
	# The exact-entry-count check below is only fair if the compiler really
	# emitted locked counter increments.
	if counters_are_atomic "${atomic[@]}"; then
		pass "$TOOLCHAIN/threads: the atomic build increments counters with lock-prefixed instructions"
	else
		fail "$TOOLCHAIN/threads: the atomic build increments counters with lock-prefixed instructions"
	fi

	run_and_check "$TOOLCHAIN/threads/kpgo ${THREADS} threads" "$dir/kpgo" "$THREADS"
	run_and_check "$TOOLCHAIN/threads/kpgo 1 thread" "$dir/kpgo" 1 --exact-values --exact-entries
	run_and_check "$TOOLCHAIN/threads/kpgo atomic counters ${THREADS} threads" "$dir/kpgo.atomic" "$THREADS" --exact-entries
	run_and_check "$TOOLCHAIN/threads/compiler-rt ${THREADS} threads" "$dir/compiler-rt" "$THREADS"
}

run_thread_tests() {
	local v
	snapshot_candidate
	for v in $HOST_TEST_TOOLCHAINS; do
		set_toolchain "$v"
		if [ "$KPGO_LIB" != compiler-rt ] && [ ! -f "$(candidate_lib)" ]; then
			fail "$TOOLCHAIN: candidate runtime $(candidate_lib) exists (make host-runtime)"
			continue
		fi
		threads_for_toolchain
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	run_thread_tests
	summary
fi
