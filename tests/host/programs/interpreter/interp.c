// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "vm.h"

uint64_t warmup_result;

/* The decode loop: a switch picks the "fast" opcodes, the rest go through
 * the handler table (one indirect-call site with many targets). */
int64_t run(struct vm *vm, unsigned pc)
{
	for (;;) {
		const struct insn *in = &vm->code[pc];

		vm->executed++;
		switch (in->op) {
		case OP_PUSH:
			vm->stack[vm->sp++] = in->arg;
			pc++;
			break;
		case OP_RET:
			return vm->stack[vm->sp - 1];
		default:
			if (handlers[in->op](vm, in, &pc))
				return vm->stack[vm->sp - 1];
			break;
		}
	}
}

/* CALL saves the live part of the stack (a run-time size), runs the callee
 * on a fresh frame, and restores: memcpy with variable lengths, recursion. */
int64_t call_function(struct vm *vm, unsigned entry)
{
	int64_t saved[64];
	unsigned saved_sp = vm->sp;
	int64_t arg = vm->stack[vm->sp - 1], result;

	memcpy(saved, vm->stack, saved_sp * sizeof(int64_t));
	memset(vm->stack, 0, saved_sp * sizeof(int64_t));
	vm->sp = 0;
	vm->stack[vm->sp++] = arg;
	if (++vm->depth > vm->max_depth)
		vm->max_depth = vm->depth;
	result = run(vm, entry);
	vm->depth--;
	memcpy(vm->stack, saved, saved_sp * sizeof(int64_t));
	vm->sp = saved_sp - 1;
	return result;
}

/* Value profiling inside a constructor: the runtime must already accept
 * values before main() runs. */
static const struct insn warmup_code[] = {
	{ OP_PUSH, 6 }, { OP_PUSH, 7 }, { OP_MUL, 0 }, { OP_DUP, 0 }, { OP_ADD, 0 }, { OP_RET, 0 },
};

__attribute__((constructor(102))) static void warm_up(void)
{
	struct vm vm = { .code = warmup_code };

	warmup_result = (uint64_t)run(&vm, 0);
}
