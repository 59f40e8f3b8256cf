// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "vm.h"

/*
 * f(n) at 0: f(0) = 1, f(n) = n + 2 * f(n - 1), followed by a small counted
 * loop; main at 16 sums f(1), f(5), f(8), f(11) -- CALL recursion at several
 * depths with frames of several sizes.
 */
static const struct insn program[] = {
	/* 0 */ { OP_DUP, 0 }, { OP_JNZ, 4 }, { OP_PUSH, 1 }, { OP_RET, 0 },
	/* 4 */ { OP_DUP, 0 }, { OP_DEC, 0 }, { OP_CALL, 0 }, { OP_PUSH, 2 }, { OP_MUL, 0 }, { OP_ADD, 0 },
	/* 10 */ { OP_PUSH, 3 },
	/* 11: count the 3 down */ { OP_DEC, 0 }, { OP_DUP, 0 }, { OP_JNZ, 11 }, { OP_DROP, 0 }, { OP_RET, 0 },
	/* 16: main */
	{ OP_PUSH, 1 }, { OP_CALL, 0 }, { OP_PUSH, 5 }, { OP_CALL, 0 }, { OP_ADD, 0 },
	{ OP_PUSH, 8 }, { OP_CALL, 0 }, { OP_ADD, 0 }, { OP_PUSH, 11 }, { OP_CALL, 0 },
	{ OP_ADD, 0 }, { OP_RET, 0 },
};

int main(void)
{
	struct vm vm = { .code = program };
	int64_t result = 0;

	for (int round = 0; round < 25; round++) {
		vm.sp = 0;
		result = run(&vm, 16);
	}
	printf("warmup=%llu result=%lld executed=%llu max_depth=%u\n",
	       (unsigned long long)warmup_result, (long long)result,
	       (unsigned long long)vm.executed, vm.max_depth);
	return 0;
}
