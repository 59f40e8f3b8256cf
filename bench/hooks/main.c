// SPDX-License-Identifier: GPL-2.0
/*
 * Hot loops for the value-profiling hooks: indirect calls through a table of
 * four targets (each call goes through __llvm_profile_instrument_target when
 * instrumented) and memcpy of run-time sizes (__llvm_profile_instrument_memop).
 * usage: bench-hooks [CALLS]; prints "<loop> <ns per call>" lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hooks.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t indirect_loop(unsigned long n)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = ops[op_pattern[i % PATTERN_LEN]](x);
	return x;
}

static uint64_t memcpy_loop(unsigned long n)
{
	static uint8_t src[512], dst[512];

	for (unsigned long i = 0; i < n; i++) {
		memcpy(dst, src, size_pattern[i % PATTERN_LEN]);
		src[i & 511] = dst[(i * 7) & 511] + 1;
	}
	return dst[100];
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000;
	volatile uint64_t sink;
	double t;

	build_patterns();
	sink = indirect_loop(n / 10); /* warm up: first-use node allocation */
	sink = memcpy_loop(n / 10);

	t = now_ns();
	sink = indirect_loop(n);
	printf("indirect %.3f\n", (now_ns() - t) / n);
	t = now_ns();
	sink = memcpy_loop(n);
	printf("memcpy %.3f\n", (now_ns() - t) / n);
	(void)sink;
	return 0;
}
