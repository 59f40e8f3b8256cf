# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the kernel tests (sourced): check WHAT COMMAND... runs COMMAND
# quietly and counts "ok: WHAT" or "FAIL: WHAT"; summary NAME prints the
# closing line "NAME: N passed, M failed" and returns failure if any.
#
# entry_count PROFILE FUNCTION  FUNCTION's entry count in PROFILE.
# guest_programs PROGRAM...  builds static guest programs.
# in_range N LOW HIGH  LOW <= N < HIGH.
#
# Checks of what a guest left behind (the caller sets r to the results
# folder, qemu-run's DIR/results):
#   check_after STEP WHAT COMMAND...  check WHAT, which fails without
#                     running COMMAND unless the guest script got to STEP
#                     (scripts/guest-lib.sh's step): a file that must be
#                     absent is only absent for a reason once its step ran;
#   check_console WHAT LOG  WHAT passes if LOG is the console of a guest
#                     that ran to its end with no BUG, oops, WARNING,
#                     lockdep, KASAN or other report (judge.py's list): a
#                     missing log or one cut short by a hang fails.
passed=0
failed=0
# diagnostic FILE NAME: NAME's value in a build's profile diagnostics
# (scripts/build-optimized's pgo-profile-diagnostics.txt), empty if absent.
diagnostic() { sed -n "s/^$2=//p" "$1" 2>/dev/null || true; }
lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A line of a build log that is a compiler's, clippy's or objtool's
# warning or error.
build_warnings='^(warning|error)|^[^ ]*: (warning|error):'

# no_modules_fragment FILE: writes a configuration fragment without module
# support, for configure-kernel after scripts/kpgo.config: what needs
# modules goes too (qemu.config's MODULE_UNLOAD, and the modules that the
# base's own fragment, scripts/configs/<BASE>.config, asks for, which
# would become =y).
no_modules_fragment() {
	local base=$lib_dir/../../scripts/configs/${BASE:-tinyconfig} release fragment
	# The base's fragment and its release's (NAME.linux-<release>.config).
	release=$(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LINUX"' _ "$lib_dir/../..")
	{
		echo '# CONFIG_MODULES is not set'
		echo '# CONFIG_MODULE_UNLOAD is not set'
		for fragment in "$base.config" "$base.linux-$release.config"; do
			[[ ! -f $fragment ]] || sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=m$/# \1 is not set/p' "$fragment"
		done
	} >"$1"
}

# check_no_warnings DESCRIPTION LOG: LOG is there and has no such line (how
# many it has goes into the check's name); the first ones are shown.
check_no_warnings() {
	check "$1 ($(grep -cE "$build_warnings" "$2" 2>/dev/null || true))" \
		bash -c 'test -s "$1" && ! grep -qE "$2" "$1"' _ "$2" "$build_warnings"
	grep -E -A6 "$build_warnings" "$2" 2>/dev/null | head -20 || true
}

# entry_count PROFILE FUNCTION: FUNCTION's entry count in PROFILE (its
# first counter: the kernel is built with entry counters first), or
# nothing; the caller sets profdata to llvm-profdata.
entry_count() {
	"$profdata" show --counts --function="$2" "$1" 2>/dev/null |
		awk -v f="$2" '$1 == f ":" { want = 1 } want && /Block counts:/ {
			gsub(/[][,]/, " "); print $3; exit }'
}

# static_name PROFILE FILE FUNCTION: PROFILE's name of the static FUNCTION
# of the source FILE (a module's), which clang names after the path it was
# given: absolute in 6.12, relative to the module's folder in 7.3, which
# builds external modules there.
static_name() {
	"$profdata" show --all-functions "$1" 2>/dev/null |
		awk -v f="$2;$3:" '{ n = $1 } n == f || substr(n, length(n) - length(f)) == "/" f {
			sub(/:$/, "", n); print n; exit }'
}

# in_range N LOW HIGH: LOW <= N < HIGH.
in_range() { (($1 >= $2 && $1 < $3)); }

# hookbench_module DIR NAME [KBUILD_LINE...]: builds tests/kernel/modules/
# pgo_hookbench.c renamed NAME (its debugfs folder and profile file with
# it) as an external module of KPGO_TREE in DIR, with these lines in its
# Kbuild (PGO_SAMPLING := n, flags): DIR/NAME.ko, or the test stops.
hookbench_module() {
	local dir=$1 name=$2
	shift 2
	mkdir -p "$dir"
	sed "s/pgo_hookbench/$name/g" "$lib_dir/modules/pgo_hookbench.c" >"$dir/$name.c"
	printf '%s\n' "obj-m := $name.o" "$@" >"$dir/Kbuild"
	"$lib_dir/../../scripts/kmake" -s M="$dir" modules >"$dir.log" 2>&1 ||
		{ cat "$dir.log"; echo "FAIL: the module $name builds in $dir"; exit 1; }
}

# kasan_twin_tests TREE WHAT: the hooks walk (no sanitizer in the hooks)
# and the lifecycle tests' paths and faults parts (KASAN, lockdep,
# kmemleak, fault injection) on the KASAN kernel in TREE, a twin of WHAT.
kasan_twin_tests() {
	local tree=$1 what=$2 part status=0
	KPGO_TREE=$tree "$lib_dir/hooks.sh" --kasan || status=1
	check "tests/kernel/hooks.sh --kasan on the $what KASAN kernel" test "$status" -eq 0
	for part in paths faults; do
		status=0
		KPGO_TREE=$tree "$lib_dir/lifecycle.sh" "$part" || status=1
		check "tests/kernel/lifecycle.sh $part on the $what KASAN kernel" test "$status" -eq 0
	done
}

# near COUNT EXPECTED: COUNT within 25% of EXPECTED (a sampled count).
near() { python3 -c "import sys; c, e = map(float, sys.argv[1:]); sys.exit(not abs(c / e - 1) <= 0.25)" "$1" "$2"; }

# sampled_boot SCRIPT TIMEOUT QEMU_RUN_ARGUMENTS...: boots KPGO_TREE's
# kernel on 2 CPUs with tests/kernel/SCRIPT as the guest script, into
# $out/qemu; checks that it ran to its end with a clean console, and sets r
# to its results.
sampled_boot() {
	local script=$1 timeout=$2 status=0
	shift 2
	"$lib_dir/../../scripts/qemu-run" --out "$out/qemu" --smp 2 --timeout "$timeout" "$@" \
		"$lib_dir/$script" || status=$?
	check "the guest ran to its end (status $status)" test "$status" -eq 0
	r=$out/qemu/results
	check_console "no warning, oops or lockdep report on the console" "$out/qemu/console.log"
}

# guest_programs PROGRAM...: builds tests/kernel/guest/PROGRAM.c, static,
# into $guest_bin; the caller sets guest_bin and llvm.
guest_programs() {
	local program
	mkdir -p "$guest_bin"
	for program; do
		"$llvm"/clang -static -O2 -Wall -Werror \
			-o "$guest_bin/$program" "$lib_dir/guest/$program.c"
	done
}

check() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "ok: $what"
		passed=$((passed + 1))
	else
		echo "FAIL: $what"
		failed=$((failed + 1))
	fi
}
check_after() {
	local step=$1 what=$2
	shift 2
	if python3 "$lib_dir/judge.py" reached "$r" "$step" >/dev/null; then
		check "$what" "$@"
	else
		echo "FAIL: $what (the guest did not get to step $step)"
		failed=$((failed + 1))
	fi
}
check_console() {
	local what=$1 log=$2 detail
	if detail=$(python3 "$lib_dir/judge.py" console "$log"); then
		check "$what" true
	else
		echo "FAIL: $what ($(echo "$detail" | head -3 | tr '\n' ' '))"
		failed=$((failed + 1))
	fi
}
summary() {
	echo "$1: $passed passed, $failed failed"
	((failed == 0))
}
