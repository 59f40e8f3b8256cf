/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HOOKS_H
#define HOOKS_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*op_fn)(uint64_t);

#define NUM_OPS 4
#define PATTERN_LEN 64

/* ops.c: the indirect-call targets, and the run-time call pattern and sizes
 * (in their own translation unit so nothing folds into the loops) */
extern op_fn const ops[NUM_OPS];
extern uint8_t op_pattern[PATTERN_LEN];
extern size_t size_pattern[PATTERN_LEN];
void build_patterns(void);

/* loops.c: the loops the driver times, exported by each shared object */
uint64_t bench_indirect(unsigned long n);
uint64_t bench_memcpy(unsigned long n);

#endif
