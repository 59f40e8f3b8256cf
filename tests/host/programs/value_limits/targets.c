// SPDX-License-Identifier: GPL-2.0
#include "limits.h"

#define TARGET(i) static uint32_t target_##i(uint32_t x) { return x * (2u * i + 1) + i; }
#define TEN_TARGETS(d) TARGET(d##0) TARGET(d##1) TARGET(d##2) TARGET(d##3) TARGET(d##4) \
	TARGET(d##5) TARGET(d##6) TARGET(d##7) TARGET(d##8) TARGET(d##9)
TEN_TARGETS(1) TEN_TARGETS(2) TEN_TARGETS(3) TEN_TARGETS(4)

#define REF(i) target_##i,
#define TEN_REFS(d) REF(d##0) REF(d##1) REF(d##2) REF(d##3) REF(d##4) \
	REF(d##5) REF(d##6) REF(d##7) REF(d##8) REF(d##9)
target_fn const targets[NUM_TARGETS] = { TEN_REFS(1) TEN_REFS(2) TEN_REFS(3) TEN_REFS(4) };

uint32_t call_target(unsigned k, uint32_t x)
{
	return targets[k](x);
}
