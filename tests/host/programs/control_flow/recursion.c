// SPDX-License-Identifier: GPL-2.0
/* Plain and mutual recursion: entry counts are large and exactly known. */
#include "control_flow.h"

uint64_t fib(unsigned n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

unsigned ackermann(unsigned m, unsigned n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}
