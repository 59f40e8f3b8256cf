/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A program with loops, switches, recursion, a constructor and a function
 * that is never called -- and, on purpose, no value-profiling site at all:
 * no call through a pointer and no memcpy/memmove/memset of a run-time size.
 * Its raw profile therefore has no value data, and a correct runtime must
 * write it byte for byte like compiler-rt does.
 */
#ifndef CONTROL_FLOW_H
#define CONTROL_FLOW_H

#include <stdint.h>

/* recursion.c */
uint64_t fib(unsigned n);
unsigned ackermann(unsigned m, unsigned n);
int is_even(unsigned n);
int is_odd(unsigned n);

/* tokens.c */
struct token_counts {
	unsigned words, numbers, operators, spaces, other;
};
void count_tokens(const char *text, struct token_counts *out);

/* tables.c */
extern uint32_t crc_table[256];
uint32_t crc32_of(const char *text);
void insertion_sort(uint32_t *v, unsigned n);
uint32_t never_called(uint32_t x); /* defined, never called: all-zero counters */

#endif
