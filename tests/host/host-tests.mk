# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the runtime against compiler-rt, included by the root
# Makefile, which defines host-runtime (building build/host/libkpgo.a).
#
#   make host-compare    tests/host/run.sh: profiles of real programs compared
#                        with compiler-rt's (clang-23, 19, 21, 22 and 16; clang 18's
#                        against clang-19's), and the
#                        many-threads test; ends "N passed, M failed"
#   make host-selftest   the harness's own mutation test (needs only
#                        compiler-rt, not libkpgo.a)
#   make bench           bench/run: cost of the value hooks, kpgo against
#                        compiler-rt (a measurement, not a test)

HOST_TESTS_REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
# The archive under test: the root Makefile's HOST_LIB when it names one.
HOST_TESTS_LIB := $(or $(HOST_LIB),$(HOST_TESTS_REPO)/build/host/libkpgo.a)

.PHONY: host-compare host-selftest bench

host-compare: host-runtime
	KPGO_LIB=$(HOST_TESTS_LIB) $(HOST_TESTS_REPO)/tests/host/run.sh

host-selftest:
	$(HOST_TESTS_REPO)/tests/host/selftest.sh

bench: host-runtime
	KPGO_LIB=$(HOST_TESTS_LIB) $(HOST_TESTS_REPO)/bench/run
