#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Compares the candidate profile runtime (build/host/libkpgo.a) with
# compiler-rt's, the reference, on the programs under programs/: each is
# compiled once per toolchain, linked against each runtime, run, and the two
# raw profiles are judged by llvm-profdata of the same LLVM version.
#
# Each program is linked in two layouts:
#  - "pie": the ordinary way (PIE, -Wl,--build-id). The two executables
#    differ, so do their build ids and their addresses; each profile's binary
#    id is checked against the build id of the executable that wrote it, and
#    the llvm-profdata text of the two profiles is compared.
#  - "fixed": non-PIE, one fixed build id, and the program's code and every
#    __llvm_prf_* section at fixed addresses (its objects' .text renamed so the
#    linker can place it). Raw profiles hold absolute addresses (function
#    pointers, NamesDelta, BitmapDelta, indirect-call targets) which otherwise
#    differ because the two runtimes are of different sizes; with them pinned
#    the two profiles must be equal byte for byte, not just equivalent.
#  - "shared": a shared object (-shared -Bsymbolic) with the runtime in it,
#    run by shared_loader.c, which loads it and calls its main. The profile's
#    binary id must be the shared object's build id, and the llvm-profdata
#    text of the two profiles is compared.
#
# Usage: tests/host/compare.sh          (all programs, clang-23, 19, 21, 22 and 16)
#   HOST_TEST_PROGRAMS="memops tiny"    a subset
#   HOST_TEST_TOOLCHAINS=19             one toolchain
#   KPGO_LIB=compiler-rt                compare compiler-rt with itself (the
#                                       harness's own sanity check)
set -euo pipefail

# shellcheck source=tests/host/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Where the "fixed" layout puts things; far above the default non-PIE image
# at 0x400000, below the heap and mmap areas.
# shellcheck disable=SC2054  # commas belong to -Wl, arguments
FIXED_LAYOUT_LDFLAGS=(
	-no-pie
	-Wl,--section-start=.kpgo_text=0x10000000
	-Wl,--section-start=__llvm_prf_names=0x10800000
	-Wl,--section-start=__llvm_prf_cnts=0x11000000
	-Wl,--section-start=__llvm_prf_data=0x11100000
	-Wl,--section-start=__llvm_prf_bits=0x11200000
	-Wl,--section-start=__llvm_prf_vals=0x11300000
	-Wl,--section-start=__llvm_prf_vnds=0x11400000
)

all_programs() {
	local d
	for d in "$HOST_TESTS_DIR"/programs/*/; do
		basename "$d"
	done
}

# A build id for the fixed layout, the same for both runtimes and distinct
# per program and toolchain: 20 bytes, like the default sha1 build id.
fixed_build_id() { # program
	printf '%s/%s' "$TOOLCHAIN" "$1" | sha1sum | cut -c1-40
}

# Builds shared_loader.c for the current toolchain; sets SHARED_LOADER.
build_shared_loader() {
	SHARED_LOADER=$OUT_ROOT/$TOOLCHAIN/shared_loader
	mkdir -p "$(dirname "$SHARED_LOADER")"
	"$CC_BIN" -O2 -Wall -o "$SHARED_LOADER" "$HOST_TESTS_DIR/shared_loader.c" -ldl
}

# Compiles a program's sources; sets OBJS and FIXED_OBJS. Returns non-zero
# (after reporting) when the program cannot be built.
build_objects() { # program dir
	local prog=$1 dir=$2 src obj extra_cflags="" value_sites=""
	unset -f reference_preconditions
	# shellcheck disable=SC1090
	source "$HOST_TESTS_DIR/programs/$prog/program.conf"
	PROGRAM_VALUE_SITES=$value_sites
	OBJS=()
	FIXED_OBJS=()
	mkdir -p "$dir/obj"
	for src in "$HOST_TESTS_DIR/programs/$prog"/*.c; do
		obj=$dir/obj/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		if ! "$CC_BIN" $INSTR_CFLAGS $extra_cflags -c "$src" -o "$obj" 2> "$obj.log"; then
			fail "$TOOLCHAIN/$prog: compiles"
			excerpt "$obj.log"
			return 1
		fi
		# The fixed layout needs all of the program's code in one input
		# section it can place; clang -O2 puts it in .text unless told
		# otherwise (no -ffunction-sections, no COMDAT code in C).
		if "$READELF" -SW "$obj" | awk '$2 ~ /^\.text./ && $0 ~ / AX/ { found = 1 } END { exit !found }'; then
			fail "$TOOLCHAIN/$prog: all code of $(basename "$obj") is in .text (the fixed layout relies on it)"
			return 1
		fi
		"$OBJCOPY" --rename-section .text=.kpgo_text "$obj" "${obj%.o}.fixed.o"
		OBJS+=("$obj")
		FIXED_OBJS+=("${obj%.o}.fixed.o")
	done
	pass "$TOOLCHAIN/$prog: compiles"
}

# The program must contain the value sites its program.conf claims, as seen
# from the calls clang emitted to the value-profiling hooks.
check_value_sites() { # program
	local prog=$1 undefined want have=""
	undefined=$("$NM" -u "${OBJS[@]}" 2>/dev/null)
	grep -qw __llvm_profile_instrument_target <<< "$undefined" && have="indirect"
	grep -qw __llvm_profile_instrument_memop <<< "$undefined" && have="${have:+$have }memop"
	want=$PROGRAM_VALUE_SITES
	[ "$want" = none ] && want=""
	if [ "$have" = "$want" ]; then
		pass "$TOOLCHAIN/$prog: value sites emitted by clang are as declared (${want:-none})"
	else
		fail "$TOOLCHAIN/$prog: value sites emitted by clang are as declared (want '${want:-none}', objects call hooks for '${have:-none}')"
	fi
}

# Links and runs one variant against both runtimes. Returns non-zero when
# either does not produce a profile.
build_and_run() { # program dir layout
	local prog=$1 dir=$2 layout=$3 rt exe ok=0
	local -a objs flags
	if [ "$layout" = fixed ]; then
		objs=("${FIXED_OBJS[@]}")
		flags=("${FIXED_LAYOUT_LDFLAGS[@]}" "-Wl,--build-id=0x$(fixed_build_id "$prog")")
	elif [ "$layout" = shared ]; then
		# -Bsymbolic binds the objects' references to their own
		# definitions, which lets position-independent-executable code
		# into a shared object.
		objs=("${OBJS[@]}")
		# shellcheck disable=SC2054  # commas belong to -Wl, arguments
		flags=(-shared -Wl,-Bsymbolic -Wl,--build-id)
	else
		objs=("${OBJS[@]}")
		flags=("-Wl,--build-id")
	fi
	for rt in compiler-rt kpgo; do
		exe=$dir/$rt.$layout
		rm -f "$exe"
		if [ $rt = compiler-rt ]; then
			link_compiler_rt "$exe" "${objs[@]}" "${flags[@]}" > "$exe.link.log" 2>&1 || true
		else
			link_candidate "$exe" "${objs[@]}" "${flags[@]}" > "$exe.link.log" 2>&1 || true
		fi
		if [ ! -x "$exe" ]; then
			fail "$TOOLCHAIN/$prog/$layout: links with $rt"
			excerpt "$exe.link.log"
			ok=1
			continue
		fi
		local status=0
		run_instrumented "$exe" "$exe.profraw" || status=$?
		if [ $status -ne 0 ] || [ ! -s "$exe.profraw" ]; then
			fail "$TOOLCHAIN/$prog/$layout: $rt build runs (exit $status) and writes $(basename "$exe").profraw"
			excerpt "$exe.stderr"
			ok=1
		else
			pass "$TOOLCHAIN/$prog/$layout: $rt build runs and writes a profile"
		fi
	done
	return $ok
}

# llvm-profdata show of a profile into a file; its stderr into file.err.
show_profile() { # profraw out
	"$PROFDATA" "${SHOW_FLAGS[@]}" "$1" > "$2" 2> "$2.err"
}

# llvm-profdata's view of the two profiles must be the same text.
check_show_identical() { # program dir layout
	local prog=$1 dir=$2 layout=$3
	local ref=$dir/compiler-rt.$layout cand=$dir/kpgo.$layout
	if ! show_profile "$ref.profraw" "$ref.show"; then
		fail "$TOOLCHAIN/$prog/$layout: llvm-profdata show reads the compiler-rt profile"
		excerpt "$ref.show.err"
		return
	fi
	if ! show_profile "$cand.profraw" "$cand.show"; then
		fail "$TOOLCHAIN/$prog/$layout: llvm-profdata show reads the kpgo profile"
		excerpt "$cand.show.err"
		return
	fi
	if diff -u "$ref.show" "$cand.show" > "$dir/$layout.show.diff" && [ ! -s "$cand.show.err" ]; then
		pass "$TOOLCHAIN/$prog/$layout: llvm-profdata show output identical"
	else
		fail "$TOOLCHAIN/$prog/$layout: llvm-profdata show output identical (-compiler-rt +kpgo)"
		excerpt "$dir/$layout.show.diff" 60
		excerpt "$cand.show.err"
	fi
}

# Each profile's binary id is the build id of the ELF file (executable or
# shared object) that wrote it.
check_binary_ids() { # program dir layout
	local prog=$1 dir=$2 layout=$3 rt exe ids build_id
	for rt in compiler-rt kpgo; do
		exe=$dir/$rt.$layout
		build_id=$(elf_build_id "$exe")
		ids=$(profile_binary_ids "$exe.profraw" 2>&1 | paste -sd' ')
		if [ -n "$build_id" ] && [ "$ids" = "$build_id" ]; then
			pass "$TOOLCHAIN/$prog/$layout: $rt profile's binary id is its ELF file's build id"
		else
			fail "$TOOLCHAIN/$prog/$layout: $rt profile's binary id is its ELF file's build id (build id '$build_id', profile has '$ids')"
		fi
	done
	if [ "$layout" = fixed ]; then
		# Same build id by construction: show --binary-ids must agree verbatim.
		if diff <("$PROFDATA" show --binary-ids "$dir/compiler-rt.fixed.profraw" 2>&1) \
			<("$PROFDATA" show --binary-ids "$dir/kpgo.fixed.profraw" 2>&1) > "$dir/fixed.ids.diff"; then
			pass "$TOOLCHAIN/$prog/fixed: llvm-profdata show --binary-ids output identical"
		else
			fail "$TOOLCHAIN/$prog/fixed: llvm-profdata show --binary-ids output identical"
			excerpt "$dir/fixed.ids.diff"
		fi
	fi
}

# Both runtimes must leave the program's own behaviour alone. Their own
# diagnostics on stderr (compiler-rt warns when it runs out of value nodes)
# are reported, not compared.
check_program_output() { # program dir
	local prog=$1 dir=$2
	if diff -u "$dir/compiler-rt.pie.stdout" "$dir/kpgo.pie.stdout" > "$dir/output.diff"; then
		pass "$TOOLCHAIN/$prog: program output identical under both runtimes"
	else
		fail "$TOOLCHAIN/$prog: program output identical under both runtimes"
		excerpt "$dir/output.diff"
	fi
	if ! cmp -s "$dir/compiler-rt.pie.stderr" "$dir/kpgo.pie.stderr"; then
		info "$TOOLCHAIN/$prog: stderr differs: compiler-rt $(wc -l < "$dir/compiler-rt.pie.stderr") lines ($(head -c 60 "$dir/compiler-rt.pie.stderr" | head -n1)...), kpgo $(wc -l < "$dir/kpgo.pie.stderr") lines"
	fi
}

# A program may state what its compiler-rt run must show for it to test what
# it is meant to (value_limits: the limits were really hit).
check_reference_preconditions() { # program dir
	local prog=$1 dir=$2
	declare -F reference_preconditions > /dev/null || return 0
	if reference_preconditions "$dir/compiler-rt.pie.show" "$dir/compiler-rt.pie.stderr"; then
		pass "$TOOLCHAIN/$prog: compiler-rt's run meets the program's preconditions (program.conf)"
	else
		fail "$TOOLCHAIN/$prog: compiler-rt's run meets the program's preconditions (program.conf)"
	fi
}

# Byte identity of the fixed-layout profiles. The brief requires it for
# programs without value sites; it is asserted for the others too, since
# single-threaded value profiling is deterministic as well (node order =
# order of first use) and the bytes llvm-profdata skips (padding, the Values
# pointers, the per-site counts of empty sites) are only checked here.
check_bytes() { # program dir
	local prog=$1 dir=$2 what="raw profiles byte-identical"
	[ "$PROGRAM_VALUE_SITES" = none ] || what="$what, value data included"
	if python3 "$HOST_TESTS_DIR/profraw_diff.py" "$dir/compiler-rt.fixed.profraw" "$dir/kpgo.fixed.profraw" > "$dir/fixed.bytes.diff"; then
		pass "$TOOLCHAIN/$prog/fixed: $what"
	else
		fail "$TOOLCHAIN/$prog/fixed: $what (expected = compiler-rt)"
		excerpt "$dir/fixed.bytes.diff"
	fi
}

# Every profile must convert to an indexed profile, and the two indexed
# profiles must read back the same.
check_merge() { # program dir
	local prog=$1 dir=$2 layout rt base ok
	for layout in pie fixed shared; do
		# A missing profile has already been reported by build_and_run.
		if [ ! -s "$dir/compiler-rt.$layout.profraw" ] || [ ! -s "$dir/kpgo.$layout.profraw" ]; then
			continue
		fi
		ok=1
		for rt in compiler-rt kpgo; do
			base=$dir/$rt.$layout
			if ! "$PROFDATA" merge -o "$base.profdata" "$base.profraw" > "$base.merge.log" 2>&1; then
				fail "$TOOLCHAIN/$prog/$layout: llvm-profdata merge accepts the $rt profile"
				excerpt "$base.merge.log"
				ok=0
			elif [ -s "$base.merge.log" ]; then
				fail "$TOOLCHAIN/$prog/$layout: llvm-profdata merge accepts the $rt profile without warnings"
				excerpt "$base.merge.log"
				ok=0
			fi
			"$PROFDATA" "${SHOW_FLAGS[@]}" "$base.profdata" > "$base.profdata.show" 2>&1 || ok=0
		done
		[ $ok = 1 ] || continue
		if diff -u "$dir/compiler-rt.$layout.profdata.show" "$dir/kpgo.$layout.profdata.show" > "$dir/$layout.profdata.diff"; then
			pass "$TOOLCHAIN/$prog/$layout: llvm-profdata merge succeeds on both, indexed profiles read the same"
		else
			fail "$TOOLCHAIN/$prog/$layout: indexed profiles read the same (-compiler-rt +kpgo)"
			excerpt "$dir/$layout.profdata.diff"
		fi
	done
}

# Without LLVM_PROFILE_FILE the candidate writes default.profraw in the
# current directory (its documented contract). compiler-rt instead uses the
# name clang embeds with -fprofile-generate, default_%m.profraw ("%m": a
# module signature, and merging into an existing file); only the bytes are
# compared with it.
check_default_file_name() { # program dir
	local prog=$1 dir=$2 rt ref
	for rt in compiler-rt kpgo; do
		rm -rf "$dir/default-$rt"
		mkdir -p "$dir/default-$rt"
		(cd "$dir/default-$rt" && env -u LLVM_PROFILE_FILE timeout 60 "$dir/$rt.fixed" > /dev/null 2>&1) || true
	done
	ref=$(find "$dir/default-compiler-rt" -name '*.profraw' | head -n1)
	info "$TOOLCHAIN/$prog: compiler-rt without LLVM_PROFILE_FILE wrote ${ref:+$(basename "$ref")}"
	ls -A "$dir/default-kpgo" > "$dir/default-kpgo.ls"
	if [ "$(cat "$dir/default-kpgo.ls")" = default.profraw ]; then
		pass "$TOOLCHAIN/$prog: without LLVM_PROFILE_FILE the profile goes to default.profraw"
	else
		fail "$TOOLCHAIN/$prog: without LLVM_PROFILE_FILE the profile goes to default.profraw; files written:"
		excerpt "$dir/default-kpgo.ls"
		return
	fi
	if [ -n "$ref" ] && python3 "$HOST_TESTS_DIR/profraw_diff.py" "$ref" "$dir/default-kpgo/default.profraw" > "$dir/default.bytes.diff"; then
		pass "$TOOLCHAIN/$prog: default.profraw has the bytes of compiler-rt's $(basename "$ref")"
	else
		fail "$TOOLCHAIN/$prog: default.profraw has the bytes of compiler-rt's ${ref:+$(basename "$ref")}"
		excerpt "$dir/default.bytes.diff"
	fi
}

# The layout of a mapped profile (the core's write_live, which the kernel
# maps in place of the counters' bytes): the candidate's pie executable run
# again with KPGO_LIVE_PAGE_SIZE=4096 writes it. llvm-profdata must take it
# without a warning and read the same counts as from the plain profile
# (value data aside, which a mapped profile has not), from other bytes.
check_live_layout() { # program dir
	local prog=$1 dir=$2 exe=$2/kpgo.pie
	# (A missing plain profile has already been reported by build_and_run.)
	[ -s "$dir/kpgo.pie.profraw" ] || return 0
	rm -f "$dir/live.profraw"
	(cd "$dir" && KPGO_LIVE_PAGE_SIZE=4096 LLVM_PROFILE_FILE=$dir/live.profraw \
		timeout 60 "$exe" > /dev/null 2>&1) || true
	if ! "$PROFDATA" merge -o "$dir/live.profdata" "$dir/live.profraw" > "$dir/live.merge.log" 2>&1 ||
		[ -s "$dir/live.merge.log" ]; then
		fail "$TOOLCHAIN/$prog: llvm-profdata merge takes the mapped layout without warnings"
		excerpt "$dir/live.merge.log"
		return
	fi
	"$PROFDATA" show --all-functions --counts "$dir/live.profraw" > "$dir/live.show" 2>&1
	"$PROFDATA" show --all-functions --counts "$dir/kpgo.pie.profraw" > "$dir/plain.show" 2>&1
	if cmp -s "$dir/kpgo.pie.profraw" "$dir/live.profraw"; then
		fail "$TOOLCHAIN/$prog: KPGO_LIVE_PAGE_SIZE=4096 writes another layout (the bytes of the plain profile)"
	elif diff -u "$dir/plain.show" "$dir/live.show" > "$dir/live.diff"; then
		pass "$TOOLCHAIN/$prog: the mapped layout reads the counts of the plain profile"
	else
		fail "$TOOLCHAIN/$prog: the mapped layout reads the counts of the plain profile (-plain +mapped)"
		excerpt "$dir/live.diff"
	fi
}

compare_program() { # program
	local prog=$1 dir=$OUT_ROOT/$TOOLCHAIN/$1 layout
	rm -rf "$dir"
	mkdir -p "$dir"
	build_objects "$prog" "$dir" || return 0
	check_value_sites "$prog"
	for layout in pie fixed shared; do
		build_and_run "$prog" "$dir" "$layout" || continue
		check_show_identical "$prog" "$dir" "$layout"
		check_binary_ids "$prog" "$dir" "$layout"
	done
	if [ -s "$dir/kpgo.pie.profraw" ] && [ -s "$dir/compiler-rt.pie.profraw" ]; then
		check_program_output "$prog" "$dir"
		check_reference_preconditions "$prog" "$dir"
	fi
	if [ -s "$dir/kpgo.fixed.profraw" ] && [ -s "$dir/compiler-rt.fixed.profraw" ]; then
		check_bytes "$prog" "$dir"
		# (compiler-rt as the candidate cannot meet the default.profraw contract.)
		if [ "$prog" = tiny ] && [ "$KPGO_LIB" != compiler-rt ]; then
			check_default_file_name "$prog" "$dir"
		fi
	fi
	check_merge "$prog" "$dir"
	[ "$KPGO_LIB" = compiler-rt ] || check_live_layout "$prog" "$dir"
}

run_compare_tests() {
	local v prog programs
	snapshot_candidate
	programs=${HOST_TEST_PROGRAMS:-$(all_programs)}
	for v in $HOST_TEST_TOOLCHAINS; do
		set_toolchain "$v"
		if [ "$KPGO_LIB" != compiler-rt ] && [ ! -f "$(candidate_lib)" ]; then
			fail "$TOOLCHAIN: candidate runtime $(candidate_lib) exists (make host-runtime)"
			continue
		fi
		if ! build_shared_loader; then
			fail "$TOOLCHAIN: tests/host/shared_loader.c builds"
			continue
		fi
		for prog in $programs; do
			compare_program "$prog"
		done
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	run_compare_tests
	summary
fi
