// SPDX-License-Identifier: GPL-2.0
/*
 * Mutant for selftest.sh: a memop hook that maps sizes 9..512 that are not
 * powers of two to the previous power of two, not to the power of two + 1 as
 * LLVM does. Replaces the runtime's own hook (weakened in the mutant's copy
 * of the runtime archive).
 */
#include <stdint.h>

void __llvm_profile_instrument_target(uint64_t value, void *data, uint32_t index);

void __llvm_profile_instrument_memop(uint64_t size, void *data, uint32_t index)
{
	uint64_t rep = size;

	if (size >= 513)
		rep = 513;
	else if (size > 8 && (size & (size - 1)))
		rep = UINT64_C(1) << (63 - __builtin_clzll(size));
	__llvm_profile_instrument_target(rep, data, index);
}
