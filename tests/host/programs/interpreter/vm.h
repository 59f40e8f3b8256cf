/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny stack machine mixing everything: opcode handlers called through a
 * table filled by a constructor, frames saved and restored with memcpy of a
 * run-time size, recursion through CALL, a switch decoder, and value
 * profiling that already happens inside a constructor, before main().
 */
#ifndef VM_H
#define VM_H

#include <stdint.h>

enum opcode { OP_PUSH, OP_ADD, OP_MUL, OP_DUP, OP_SWAP, OP_DROP, OP_CALL, OP_RET, OP_JNZ, OP_DEC, NUM_OPCODES };

struct insn {
	uint8_t op;
	int32_t arg;
};

struct vm {
	int64_t stack[64];
	unsigned sp;
	const struct insn *code;
	unsigned depth, max_depth;
	uint64_t executed;
};

typedef int (*handler_fn)(struct vm *vm, const struct insn *insn, unsigned *pc);
extern handler_fn handlers[NUM_OPCODES];

/* handlers.c */
void register_handlers(void);

/* interp.c */
int64_t run(struct vm *vm, unsigned entry);
int64_t call_function(struct vm *vm, unsigned entry);
extern uint64_t warmup_result;

#endif
