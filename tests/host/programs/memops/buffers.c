// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "memops.h"

uint8_t buf_a[BUF_SIZE], buf_b[BUF_SIZE];

void copy_block(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
}

void slide_block(uint8_t *buf, size_t n, size_t by)
{
	memmove(buf + by, buf, n);
}

void fill_block(uint8_t *dst, int byte, size_t n)
{
	memset(dst, byte, n);
}

uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

void memop_never_called(uint8_t *dst, size_t n)
{
	memset(dst, 0, n);
	memcpy(dst + n, dst, n);
}
