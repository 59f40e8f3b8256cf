// SPDX-License-Identifier: GPL-2.0
#include "vm.h"

handler_fn handlers[NUM_OPCODES];

static int h_push(struct vm *vm, const struct insn *in, unsigned *pc) { vm->stack[vm->sp++] = in->arg; (*pc)++; return 0; }
static int h_add(struct vm *vm, const struct insn *in, unsigned *pc) { (void)in; vm->sp--; vm->stack[vm->sp - 1] += vm->stack[vm->sp]; (*pc)++; return 0; }
static int h_mul(struct vm *vm, const struct insn *in, unsigned *pc) { (void)in; vm->sp--; vm->stack[vm->sp - 1] *= vm->stack[vm->sp]; (*pc)++; return 0; }
static int h_dup(struct vm *vm, const struct insn *in, unsigned *pc) { (void)in; vm->stack[vm->sp] = vm->stack[vm->sp - 1]; vm->sp++; (*pc)++; return 0; }

static int h_swap(struct vm *vm, const struct insn *in, unsigned *pc)
{
	int64_t t = vm->stack[vm->sp - 1];

	(void)in;
	vm->stack[vm->sp - 1] = vm->stack[vm->sp - 2];
	vm->stack[vm->sp - 2] = t;
	(*pc)++;
	return 0;
}

static int h_drop(struct vm *vm, const struct insn *in, unsigned *pc) { (void)in; vm->sp--; (*pc)++; return 0; }

static int h_call(struct vm *vm, const struct insn *in, unsigned *pc)
{
	int64_t r = call_function(vm, (unsigned)in->arg);

	vm->stack[vm->sp++] = r;
	(*pc)++;
	return 0;
}

static int h_ret(struct vm *vm, const struct insn *in, unsigned *pc) { (void)vm; (void)in; (void)pc; return 1; }

/* Pops its operand, jumps if it was not zero. */
static int h_jnz(struct vm *vm, const struct insn *in, unsigned *pc)
{
	if (vm->stack[--vm->sp] != 0)
		*pc = (unsigned)in->arg;
	else
		(*pc)++;
	return 0;
}

static int h_dec(struct vm *vm, const struct insn *in, unsigned *pc) { (void)in; vm->stack[vm->sp - 1]--; (*pc)++; return 0; }

/* Runs before main() (priority 101 < interp.c's 102): the table must be full
 * before the warm-up constructor interprets anything. */
__attribute__((constructor(101))) void register_handlers(void)
{
	handler_fn table[NUM_OPCODES] = {
		[OP_PUSH] = h_push, [OP_ADD] = h_add, [OP_MUL] = h_mul, [OP_DUP] = h_dup,
		[OP_SWAP] = h_swap, [OP_DROP] = h_drop, [OP_CALL] = h_call, [OP_RET] = h_ret,
		[OP_JNZ] = h_jnz, [OP_DEC] = h_dec,
	};

	for (int i = 0; i < NUM_OPCODES; i++)
		handlers[i] = table[i];
}
