# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the kernel tests (sourced): check WHAT COMMAND... runs COMMAND
# quietly and counts "ok: WHAT" or "FAIL: WHAT"; summary NAME prints the
# closing line "NAME: N passed, M failed" and returns failure if any.
passed=0
failed=0
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
summary() {
	echo "$1: $passed passed, $failed failed"
	((failed == 0))
}
