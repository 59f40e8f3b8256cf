// SPDX-License-Identifier: GPL-2.0
#include "hammer.h"

uint8_t target_schedule[SCHEDULE_LEN];
size_t size_schedule[SCHEDULE_LEN];

/* Unequal weights (they sum to SCHEDULE_LEN) so a lost or misattributed
 * count cannot hide behind symmetric totals. */
static const unsigned target_weight[NUM_TABLE_TARGETS] = { 1, 2, 4, 8, 16, 33 };
static const size_t sizes[NUM_SIZES] = { 3, 8, 24, 64, 700 };
static const unsigned size_weight[NUM_SIZES] = { 30, 17, 9, 5, 3 };

void build_schedules(void)
{
	unsigned n = 0, m = 0;

	for (unsigned k = 0; k < NUM_TABLE_TARGETS; k++)
		for (unsigned w = 0; w < target_weight[k]; w++)
			target_schedule[n++] = (uint8_t)k;
	for (unsigned k = 0; k < NUM_SIZES; k++)
		for (unsigned w = 0; w < size_weight[k]; w++)
			size_schedule[m++] = sizes[k];
	/* Interleave: a fixed permutation (37 is coprime with 64). */
	for (unsigned i = 0; i < SCHEDULE_LEN; i++) {
		unsigned j = (i * 37) % SCHEDULE_LEN;
		uint8_t t = target_schedule[i];
		size_t s = size_schedule[i];

		target_schedule[i] = target_schedule[j];
		target_schedule[j] = t;
		size_schedule[i] = size_schedule[j];
		size_schedule[j] = s;
	}
}
