// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "control_flow.h"

static const char source_text[] =
	"total = price * 3 + tax_2024 - discount / 7\n"
	"if x1 > 42 then y = y + 1 else y = 0\n"
	"while count < 100 do count = count + step; done!\n";

/* A fixed-seed generator: the program is fully deterministic. */
static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

int main(void)
{
	struct token_counts tc;
	uint32_t values[200], seed = 1;
	unsigned evens = 0;

	count_tokens(source_text, &tc);
	for (unsigned i = 0; i < 200; i++)
		values[i] = lcg(&seed) % 1000;
	insertion_sort(values, 200);
	for (unsigned n = 0; n < 60; n++)
		evens += is_even(n);

	printf("fib(24)=%llu ackermann(2,3)=%u evens=%u\n",
	       (unsigned long long)fib(24), ackermann(2, 3), evens);
	printf("tokens: words=%u numbers=%u operators=%u spaces=%u other=%u\n",
	       tc.words, tc.numbers, tc.operators, tc.spaces, tc.other);
	printf("sorted: min=%u median=%u max=%u crc=%08x\n",
	       values[0], values[100], values[199], crc32_of(source_text));
	return 0;
}
