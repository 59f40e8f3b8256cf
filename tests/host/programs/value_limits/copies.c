// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "limits.h"

/* 64 functions, one memcpy site each. noinline keeps them 64 functions with
 * their own records; all are called directly, adding no indirect site. */
#define COPY(i) __attribute__((noinline)) static void copy_##i(uint8_t *d, const uint8_t *s, size_t n) \
	{ memcpy(d + i, s, n); }
#define EIGHT_COPIES(d) COPY(d##0) COPY(d##1) COPY(d##2) COPY(d##3) COPY(d##4) COPY(d##5) COPY(d##6) COPY(d##7)
EIGHT_COPIES(1) EIGHT_COPIES(2) EIGHT_COPIES(3) EIGHT_COPIES(4)
EIGHT_COPIES(5) EIGHT_COPIES(6) EIGHT_COPIES(7) EIGHT_COPIES(8)

#define CALL(i) copy_##i(dst, src, n);
#define EIGHT_CALLS(d) CALL(d##0) CALL(d##1) CALL(d##2) CALL(d##3) CALL(d##4) CALL(d##5) CALL(d##6) CALL(d##7)

void copy_at_every_site(uint8_t *dst, const uint8_t *src, size_t n)
{
	EIGHT_CALLS(1) EIGHT_CALLS(2) EIGHT_CALLS(3) EIGHT_CALLS(4)
	EIGHT_CALLS(5) EIGHT_CALLS(6) EIGHT_CALLS(7) EIGHT_CALLS(8)
}
