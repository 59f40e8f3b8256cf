// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "dispatch.h"

/* How often each op_table entry runs: op_add 1, op_sub 7, ..., op_mix 522. */
static const unsigned op_frequency[NUM_OPS] = { 1, 7, 50, 120, 300, 522 };
#define SCRIPT_LEN 1000 /* the sum of op_frequency */

int main(void)
{
	static uint8_t script[SCRIPT_LEN];
	static const uint32_t payload[5] = { 3, 1, 4, 1, 5 };
	unsigned n = 0, seed = 7;
	uint32_t acc;

	for (unsigned op = 0; op < NUM_OPS; op++)
		for (unsigned k = 0; k < op_frequency[op]; k++)
			script[n++] = (uint8_t)op;
	/* Deterministic shuffle so targets interleave at the site. */
	for (unsigned i = SCRIPT_LEN - 1; i > 0; i--) {
		unsigned j;
		uint8_t t;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		t = script[i];
		script[i] = script[j];
		script[j] = t;
	}

	acc = run_script(script, SCRIPT_LEN);
	for (unsigned i = 0; i < 40; i++)
		acc = apply_twice(i % 4 ? op_xor : op_add, acc, i);
	for (unsigned id = 0; id < 30; id++)
		deliver(id % 3 ? &verbose_handlers : &quiet_handlers, id, payload, id % 6);

	printf("acc=%08x handlers=%llu\n", acc, (unsigned long long)handler_checksum);
	return 0;
}
