#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Raw profile version 9 (clang 18) on the host: the programs under
# programs/ compiled by clang 18.1.6 (PyPI's ziglang 0.13.0 as
# "zig cc -target x86_64-linux-gnu", installed by scripts/setup), linked with
# the candidate runtime (libkpgo.a), run; the profile they write is judged
# against the same programs compiled by clang 19 and linked with
# compiler-rt 19, by llvm-profdata 19:
#   - the profile is raw version 9 and rewritten as version 10 without
#     loss by profraw_v9_to_v10.py (no llvm-profdata of LLVM 18 is packaged
#     here, and LLVM 19's reads only version 10);
#   - llvm-profdata-19 show --all-functions --counts --ic-targets
#     --memop-sizes lists the same functions, counts and value profiles as
#     for the clang 19 build (show_compare.py: where the two compilers
#     instrumented a function differently, its entry count and value
#     profiles), and llvm-profdata-19 merge takes it without a warning.
# There is no compiler-rt of LLVM 18 to compare with byte for byte.
#
# Usage: tests/host/clang18.sh   (HOST_TEST_PROGRAMS as for compare.sh)
set -euo pipefail

# shellcheck source=tests/host/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ZIG=${KPGO_ZIG:-${KPGO_CACHE:-$HOME/.cache/kpgo}/tools/ziglang-0.13.0/ziglang/zig}
# Entry counters first in both builds: the first counter is then a
# function's entry count, which the compilers must agree on even where
# they instrument a function differently.
CLANG18_CFLAGS="$INSTR_CFLAGS -mllvm -pgo-instrument-entry=true"

# Compiles program PROG's sources with COMPILER... into DIR/obj-NAME.
compile_program() { # prog dir name compiler...
	local prog=$1 dir=$2 name=$3 src extra_cflags="" value_sites=""
	shift 3
	unset -f reference_preconditions
	# shellcheck disable=SC1090
	source "$HOST_TESTS_DIR/programs/$prog/program.conf"
	mkdir -p "$dir/obj-$name"
	for src in "$HOST_TESTS_DIR/programs/$prog"/*.c; do
		# shellcheck disable=SC2086
		"$@" $CLANG18_CFLAGS $extra_cflags -c "$src" \
			-o "$dir/obj-$name/$(basename "$src" .c).o" 2>>"$dir/obj-$name.log" || return 1
	done
}

clang18_program() { # prog
	local prog=$1 dir=$OUT_ROOT/clang-18/$1 word
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! compile_program "$prog" "$dir" 18 "$ZIG" cc -target x86_64-linux-gnu ||
		! compile_program "$prog" "$dir" 19 "$CC_BIN"; then
		fail "clang-18/$prog: compiles with clang 18 and clang 19"
		excerpt "$dir/obj-18.log"
		excerpt "$dir/obj-19.log"
		return
	fi
	link_candidate "$dir/kpgo" "$dir"/obj-18/*.o -Wl,--build-id >"$dir/kpgo.link.log" 2>&1 || true
	link_compiler_rt "$dir/compiler-rt" "$dir"/obj-19/*.o -Wl,--build-id >"$dir/compiler-rt.link.log" 2>&1 || true
	local rt status
	for rt in kpgo compiler-rt; do
		status=0
		[ -x "$dir/$rt" ] && run_instrumented "$dir/$rt" "$dir/$rt.profraw" || status=$?
		if [ ! -x "$dir/$rt" ] || [ $status -ne 0 ] || [ ! -s "$dir/$rt.profraw" ]; then
			fail "clang-18/$prog: the $rt build links, runs (exit $status) and writes a profile"
			excerpt "$dir/$rt.link.log"
			excerpt "$dir/$rt.stderr"
			return
		fi
	done
	pass "clang-18/$prog: clang 18 objects with kpgo and clang 19 objects with compiler-rt run"
	if cmp -s "$dir/kpgo.stdout" "$dir/compiler-rt.stdout"; then
		pass "clang-18/$prog: program output identical"
	else
		fail "clang-18/$prog: program output identical"
	fi
	word=$(od -A n -t x8 -j 8 -N 8 "$dir/kpgo.profraw" | tr -d ' ')
	# IR instrumentation (bit 56), entry counters first (bit 58), version 9.
	if [ "$word" = 0500000000000009 ]; then
		pass "clang-18/$prog: the profile is raw version 9, IR, entry first ($word)"
	else
		fail "clang-18/$prog: the profile is raw version 9, IR, entry first (version word $word)"
	fi
	if ! python3 "$HOST_TESTS_DIR/profraw_v9_to_v10.py" "$dir/kpgo.profraw" "$dir/kpgo.v10.profraw" \
		2>"$dir/convert.log"; then
		fail "clang-18/$prog: the version 9 profile is well formed (profraw_v9_to_v10.py)"
		excerpt "$dir/convert.log"
		return
	fi
	if ! "$PROFDATA" "${SHOW_FLAGS[@]}" "$dir/kpgo.v10.profraw" >"$dir/kpgo.show" 2>"$dir/kpgo.show.err" ||
		! "$PROFDATA" "${SHOW_FLAGS[@]}" "$dir/compiler-rt.profraw" >"$dir/compiler-rt.show" 2>&1; then
		fail "clang-18/$prog: llvm-profdata show reads both profiles"
		excerpt "$dir/kpgo.show.err"
		return
	fi
	if python3 "$HOST_TESTS_DIR/show_compare.py" "$dir/compiler-rt.show" "$dir/kpgo.show" >"$dir/show.diff"; then
		pass "clang-18/$prog: same functions, counts and value profiles as clang 19 + compiler-rt ($(tail -1 "$dir/show.diff"))"
	else
		fail "clang-18/$prog: same functions, counts and value profiles as clang 19 + compiler-rt"
		excerpt "$dir/show.diff"
	fi
	if "$PROFDATA" merge -o "$dir/kpgo.profdata" "$dir/kpgo.v10.profraw" >"$dir/merge.log" 2>&1 &&
		[ ! -s "$dir/merge.log" ]; then
		pass "clang-18/$prog: llvm-profdata merge takes it without a warning"
	else
		fail "clang-18/$prog: llvm-profdata merge takes it without a warning"
		excerpt "$dir/merge.log"
	fi
}

run_clang18_tests() {
	local prog
	set_toolchain 19
	if [ ! -x "$ZIG" ] || [ "$("$ZIG" cc --version 2>/dev/null | sed -n '1s/^clang version \([0-9.]*\).*/\1/p')" != 18.1.6 ]; then
		fail "clang-18: $ZIG is clang 18.1.6 (scripts/setup installs ziglang 0.13.0)"
		return
	fi
	if [ "$KPGO_LIB" = compiler-rt ]; then
		info "clang-18: no compiler-rt of LLVM 18 to be the candidate; skipped"
		return
	fi
	snapshot_candidate
	# zig's caches go with the test outputs, not into the home folder.
	export ZIG_GLOBAL_CACHE_DIR=$OUT_ROOT/zig-cache ZIG_LOCAL_CACHE_DIR=$OUT_ROOT/zig-cache
	for prog in ${HOST_TEST_PROGRAMS:-$(cd "$HOST_TESTS_DIR/programs" && echo *)}; do
		clang18_program "$prog"
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	run_clang18_tests
	summary
fi
