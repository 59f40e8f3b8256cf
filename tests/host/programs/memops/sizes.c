// SPDX-License-Identifier: GPL-2.0
#include "memops.h"

/* Each size and how often it is used. Representative values under LLVM's
 * range mapping: 0..8 as is, powers of two as is, others -> previous power of
 * two + 1, everything >= 513 -> 513. */
static const struct { size_t size; unsigned times; } size_mix[] = {
	{ 0, 2 }, { 1, 3 }, { 2, 1 }, { 3, 4 }, { 4, 9 }, { 5, 1 }, { 6, 2 },
	{ 7, 5 }, { 8, 11 }, { 9, 3 }, { 15, 2 }, { 16, 20 }, { 17, 1 },
	{ 31, 6 }, { 32, 14 }, { 100, 8 }, { 128, 3 }, { 255, 2 }, { 256, 7 },
	{ 257, 1 }, { 512, 4 }, { 513, 2 }, { 1000, 5 }, { 4096, 3 },
};

static size_t schedule[256];
static unsigned schedule_len;

void build_size_schedule(void)
{
	unsigned n = 0;

	/* Round-robin over the mix so sizes interleave at each call site. */
	for (unsigned round = 0; round < 20; round++)
		for (unsigned i = 0; i < sizeof(size_mix) / sizeof(size_mix[0]); i++)
			if (round < size_mix[i].times)
				schedule[n++] = size_mix[i].size;
	schedule_len = n;
}

size_t schedule_size(unsigned i) { return schedule[i % schedule_len]; }
unsigned schedule_length(void) { return schedule_len; }
