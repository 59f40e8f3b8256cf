// SPDX-License-Identifier: GPL-2.0
#include "hooks.h"

static uint64_t op_inc(uint64_t x) { return x + 1; }
static uint64_t op_mul(uint64_t x) { return x * 3; }
static uint64_t op_xor(uint64_t x) { return x ^ 0x5555; }
static uint64_t op_rot(uint64_t x) { return (x << 7) | (x >> 57); }

op_fn const ops[NUM_OPS] = { op_inc, op_mul, op_xor, op_rot };
uint8_t op_pattern[PATTERN_LEN];
size_t size_pattern[PATTERN_LEN];

void build_patterns(void)
{
	/* Skewed like real call sites (the first target hottest); sizes spread
	 * over several memop ranges. */
	static const size_t sizes[] = { 4, 8, 16, 24, 40, 64, 100, 256 };
	uint32_t seed = 1;

	for (unsigned i = 0; i < PATTERN_LEN; i++) {
		seed = seed * 1103515245u + 12345u;
		op_pattern[i] = (seed >> 16) % 8 < 5 ? 0 : 1 + (seed >> 20) % 3;
		size_pattern[i] = sizes[(seed >> 24) % 8];
	}
}
