// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "hammer.h"

/* noinline: one copy of each site, called from every thread. */
__attribute__((noinline)) uint64_t call_through_table(unsigned k, uint64_t x)
{
	return table_targets[k](x);
}

__attribute__((noinline)) uint64_t call_pair(unsigned k, uint64_t x)
{
	return pair_targets[k](x);
}

__attribute__((noinline)) void copy_sized(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
}
