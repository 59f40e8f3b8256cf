// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of the front-end model (tests/model/model.sh) whose answers are
 * known, run under qemu-x86_64 with the plugin:
 *   window 1: 1000 nops (1001 instructions with the end marker);
 *   window 2: a loop of 1000 dec/jnz: 1000 conditional branches, 999 taken;
 *   window 3: a hot loop that calls 96 functions, 10000 times.  Built with
 *     -DALIGN=4096 every function starts its own page, and all share one
 *     L1i set: L1i and iTLB misses on nearly every call.  With -DALIGN=16
 *     they are packed into 1.5 KiB: the same instructions, no misses;
 *   windows 4 and 5: 100 passes of loads, one per 64-byte line, over 16 KiB
 *     (fits the 32 KiB L1d: no misses after the warm pass) and over 64 KiB
 *     (does not: every load misses the L1d, and hits the L2);
 *   window 6: one rep movsb of 4096 bytes: QEMU runs it once per byte (and
 *     once more, to find the count zero), the model counts one instruction
 *     and the repeats.
 */
#include "../../bench/model/window.h"

#ifndef ALIGN
#define ALIGN 16
#endif
#define STRINGIFY(x) #x
#define STR(x) STRINGIFY(x)
#define FUNCTIONS 96
#define __aligned(x) __attribute__((aligned(x)))
#define __naked __attribute__((naked))

/* FUNCTIONS functions ALIGN bytes apart, each returning its argument + 1. */
static __naked __aligned(4096) void layout_functions(void)
{
	asm(".rept " STR(FUNCTIONS) "\n"
	    ".balign " STR(ALIGN) "\n"
	    "lea 1(%rdi), %eax\n"
	    "ret\n"
	    ".endr\n");
}

static char data[64 << 10] __aligned(4096);

static void read_lines(unsigned long bytes, int passes)
{
	for (int p = 0; p < passes; p++)
		for (unsigned long i = 0; i < bytes; i += 64)
			(void)*(volatile char *)&data[i];
}

static int call_all(int x)
{
	for (int f = 0; f < FUNCTIONS; f++)
		x = ((int (*)(int))((char *)layout_functions + f * ALIGN))(x);
	return x;
}

int main(void)
{
	char *dst = data, *src = data + (32 << 10);
	unsigned long count = 4096;
	int x = 0;

	KPGO_MODEL_START(1);
	asm volatile(".rept 1000; nop; .endr");
	KPGO_MODEL_END(1);

	KPGO_MODEL_START(2);
	asm volatile("mov $1000, %%ecx; 1: dec %%ecx; jnz 1b" : : : "ecx", "cc");
	KPGO_MODEL_END(2);

	/* Once untimed, so that window 3 sees the warm state. */
	x = call_all(x);
	KPGO_MODEL_START(3);
	for (int i = 0; i < 10000; i++)
		x = call_all(x);
	KPGO_MODEL_END(3);

	read_lines(16 << 10, 1);
	KPGO_MODEL_START(4);
	read_lines(16 << 10, 100);
	KPGO_MODEL_END(4);
	read_lines(64 << 10, 1);
	KPGO_MODEL_START(5);
	read_lines(64 << 10, 100);
	KPGO_MODEL_END(5);

	KPGO_MODEL_START(6);
	asm volatile("rep movsb"
		     : "+D" (dst), "+S" (src), "+c" (count) : : "memory");
	KPGO_MODEL_END(6);
	return x != 10001 * FUNCTIONS;
}
