/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Indirect calls through function-pointer tables. Every target is called a
 * number of times fixed by main.c, so the indirect-call value profile of each
 * site is known exactly.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include <stdint.h>

typedef uint32_t (*op_fn)(uint32_t acc, uint32_t arg);

/* ops.c: six targets of the main table */
uint32_t op_add(uint32_t acc, uint32_t arg);
uint32_t op_sub(uint32_t acc, uint32_t arg);
uint32_t op_mul(uint32_t acc, uint32_t arg);
uint32_t op_xor(uint32_t acc, uint32_t arg);
uint32_t op_rotate(uint32_t acc, uint32_t arg);
uint32_t op_mix(uint32_t acc, uint32_t arg);
#define NUM_OPS 6
extern const op_fn op_table[NUM_OPS];

/* handlers.c: event callbacks reached through a struct of pointers */
struct handlers {
	void (*on_open)(unsigned id);
	void (*on_data)(unsigned id, uint32_t value);
	void (*on_close)(unsigned id);
};
extern const struct handlers verbose_handlers, quiet_handlers;
extern uint64_t handler_checksum;

/* dispatch.c */
uint32_t run_script(const uint8_t *script, unsigned len);
uint32_t apply_twice(op_fn f, uint32_t acc, uint32_t arg);
void deliver(const struct handlers *h, unsigned id, const uint32_t *data, unsigned n);
uint32_t dispatch_never_called(op_fn f, uint32_t x); /* a value site never reached */

#endif
