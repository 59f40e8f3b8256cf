// SPDX-License-Identifier: GPL-2.0
/*
 * Mutant for selftest.sh: an indirect-call hook that, once in a while,
 * counts a call twice (MUTANT_TARGET=double) or records an address one byte
 * past the real target, which is no function (MUTANT_TARGET=invent).
 * Replaces the runtime's own hook (weakened in the mutant's copy of the
 * runtime archive); counts through compiler-rt's
 * __llvm_profile_instrument_target_value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void __llvm_profile_instrument_target_value(uint64_t value, void *data, uint32_t index, uint64_t count);

static unsigned long calls;

void __llvm_profile_instrument_target(uint64_t value, void *data, uint32_t index)
{
	static int mode = -1;

	if (mode < 0) {
		const char *m = getenv("MUTANT_TARGET");

		mode = m && !strcmp(m, "invent") ? 2 : 1;
	}
	if (__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) % 997 == 5)
		__llvm_profile_instrument_target_value(value + (mode == 2), data, index, mode == 2 ? 1 : 2);
	else
		__llvm_profile_instrument_target_value(value, data, index, 1);
}
