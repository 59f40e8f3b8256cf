// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "memops.h"

int main(void)
{
	unsigned len;

	build_size_schedule();
	len = schedule_length();
	for (unsigned i = 0; i < BUF_SIZE; i++)
		buf_a[i] = (uint8_t)(i * 31 + 7);

	/* Every size of the schedule once through each of the three helpers. */
	for (unsigned i = 0; i < len; i++) {
		size_t n = schedule_size(i);

		copy_block(buf_b, buf_a + (i & 63), n);
		fill_block(buf_a + 2048, (int)i, n);
		slide_block(buf_b, n / 2, i & 15);
	}
	/* A memcpy right here in main, with only the small sizes. */
	for (unsigned i = 0; i < len; i++) {
		size_t n = schedule_size(i);

		if (n <= 8)
			memcpy(buf_b + 4096, buf_a, n);
	}
	printf("schedule=%u checksum=%08x\n", len, checksum(buf_b, BUF_SIZE));
	return 0;
}
