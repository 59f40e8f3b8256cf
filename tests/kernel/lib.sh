# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the kernel tests (sourced): check WHAT COMMAND... runs COMMAND
# quietly and counts "ok: WHAT" or "FAIL: WHAT"; summary NAME prints the
# closing line "NAME: N passed, M failed" and returns failure if any.
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

# check_no_warnings DESCRIPTION LOG: LOG is there and has no such line (how
# many it has goes into the check's name); the first ones are shown.
check_no_warnings() {
	check "$1 ($(grep -cE "$build_warnings" "$2" 2>/dev/null || true))" \
		bash -c 'test -s "$1" && ! grep -qE "$2" "$1"' _ "$2" "$build_warnings"
	grep -E -A6 "$build_warnings" "$2" 2>/dev/null | head -20 || true
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
