// SPDX-License-Identifier: GPL-2.0
#include "dispatch.h"

uint32_t op_add(uint32_t acc, uint32_t arg) { return acc + arg; }
uint32_t op_sub(uint32_t acc, uint32_t arg) { return acc - arg * 3; }
uint32_t op_mul(uint32_t acc, uint32_t arg) { return acc * (arg | 1); }
uint32_t op_xor(uint32_t acc, uint32_t arg) { return acc ^ (arg * 0x9e3779b9u); }

uint32_t op_rotate(uint32_t acc, uint32_t arg)
{
	unsigned r = arg & 31;

	return r ? (acc << r) | (acc >> (32 - r)) : acc;
}

uint32_t op_mix(uint32_t acc, uint32_t arg)
{
	for (int i = 0; i < 4; i++)
		acc = (acc ^ arg) * 0x85ebca6bu + (uint32_t)i;
	return acc;
}

const op_fn op_table[NUM_OPS] = { op_add, op_sub, op_mul, op_xor, op_rotate, op_mix };
