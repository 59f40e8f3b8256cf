// SPDX-License-Identifier: GPL-2.0
/*
 * A constructor fills a CRC table before main() runs, so its counters are
 * incremented before the profile runtime is necessarily set up; nested loops
 * sort; one function is never called.
 */
#include "control_flow.h"

uint32_t crc_table[256];

__attribute__((constructor)) static void build_crc_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t crc32_of(const char *text)
{
	uint32_t crc = 0xffffffffu;

	while (*text)
		crc = crc_table[(crc ^ (uint8_t)*text++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void insertion_sort(uint32_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		uint32_t key = v[i];
		unsigned j = i;

		while (j > 0 && v[j - 1] > key) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = key;
	}
}

uint32_t never_called(uint32_t x)
{
	for (int i = 0; i < 3; i++)
		x = x * 2654435761u + (x >> 13);
	return x;
}
