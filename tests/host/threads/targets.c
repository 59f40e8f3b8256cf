// SPDX-License-Identifier: GPL-2.0
#include "hammer.h"

/* Straight-line bodies: one basic block, one counter, no calls. */
uint64_t table_target_0(uint64_t x) { return x * 3 + 1; }
uint64_t table_target_1(uint64_t x) { return x ^ (x >> 7); }
uint64_t table_target_2(uint64_t x) { return x + 0x9e3779b97f4a7c15ull; }
uint64_t table_target_3(uint64_t x) { return (x << 13) | (x >> 51); }
uint64_t table_target_4(uint64_t x) { return x * 0xff51afd7ed558ccdull; }
uint64_t table_target_5(uint64_t x) { return ~x + 5; }
uint64_t pair_target_even(uint64_t x) { return x + 2; }
uint64_t pair_target_odd(uint64_t x) { return x - 1; }

target_fn const table_targets[NUM_TABLE_TARGETS] = {
	table_target_0, table_target_1, table_target_2, table_target_3, table_target_4, table_target_5,
};
const char *const table_target_names[NUM_TABLE_TARGETS] = {
	"table_target_0", "table_target_1", "table_target_2", "table_target_3", "table_target_4", "table_target_5",
};
target_fn const pair_targets[NUM_PAIR_TARGETS] = { pair_target_even, pair_target_odd };
const char *const pair_target_names[NUM_PAIR_TARGETS] = { "pair_target_even", "pair_target_odd" };
