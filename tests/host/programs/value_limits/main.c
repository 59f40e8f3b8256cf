// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "limits.h"

/* One size from each of 20 memop size ranges. */
static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 32, 48, 64, 100, 128, 200, 256, 600 };

int main(void)
{
	static uint8_t src[1024], dst[1024 + 128];
	uint32_t x = 1;

	/* Over the cap: targets 0..39 once each in turn, target k (k+1) times,
	 * then a hot phase on the last ten, interleaved. */
	for (unsigned k = 0; k < NUM_TARGETS; k++)
		for (unsigned n = 0; n <= k; n++)
			x = call_target(k, x);
	for (unsigned round = 0; round < 50; round++)
		for (unsigned k = NUM_TARGETS - 10; k < NUM_TARGETS; k++)
			x = call_target(k, x);

	/* Out of nodes: every size range at every site, range by range, twice
	 * (the second pass only counts what the first one placed). */
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			copy_at_every_site(dst, src, sizes[s]);

	printf("x=%08x dst=%u\n", x, dst[200]);
	return 0;
}
