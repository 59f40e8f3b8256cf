// SPDX-License-Identifier: GPL-2.0
/*
 * The hot loops, built into one shared object per runtime: indirect calls
 * through a table of four targets (each call goes through
 * __llvm_profile_instrument_target when instrumented) and memcpy of
 * run-time sizes (__llvm_profile_instrument_memop).
 */
#include <string.h>
#include "hooks.h"

uint64_t bench_indirect(unsigned long n)
{
	uint64_t x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = ops[op_pattern[i % PATTERN_LEN]](x);
	return x;
}

uint64_t bench_memcpy(unsigned long n)
{
	static uint8_t src[512], dst[512];

	for (unsigned long i = 0; i < n; i++) {
		memcpy(dst, src, size_pattern[i % PATTERN_LEN]);
		src[i & 511] = dst[(i * 7) & 511] + 1;
	}
	return dst[100];
}
