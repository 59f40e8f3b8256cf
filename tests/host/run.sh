#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# All host tests of the candidate runtime against compiler-rt, with one
# closing "N passed, M failed" line: compare.sh (profiles of the programs
# under programs/), cross_version.sh (their raw version 10 and 11
# profiles merged), clang18.sh (the same programs compiled by clang 18,
# raw version 9) then threads.sh (concurrency). Exits non-zero on any
# failure. Environment as documented in compare.sh and threads.sh.
set -euo pipefail

HERE=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/host/compare.sh
source "$HERE/compare.sh"
# shellcheck source=tests/host/cross_version.sh
source "$HERE/cross_version.sh"
# shellcheck source=tests/host/clang18.sh
source "$HERE/clang18.sh"
# shellcheck source=tests/host/threads.sh
source "$HERE/threads.sh"

echo "== kpgo host tests: runtime $(candidate_lib 2>/dev/null || echo "$KPGO_LIB"), toolchains: $HOST_TEST_TOOLCHAINS"
run_compare_tests
run_cross_version_tests
run_clang18_tests
run_thread_tests
summary
