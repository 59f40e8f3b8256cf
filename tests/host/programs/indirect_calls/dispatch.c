// SPDX-License-Identifier: GPL-2.0
#include "dispatch.h"

/* One site, six targets, frequencies fixed by the script. */
uint32_t run_script(const uint8_t *script, unsigned len)
{
	uint32_t acc = 1;

	for (unsigned i = 0; i < len; i++)
		acc = op_table[script[i]](acc, i);
	return acc;
}

/* Two sites with the same single target per call. */
uint32_t apply_twice(op_fn f, uint32_t acc, uint32_t arg)
{
	return f(f(acc, arg), arg + 1);
}

/* Three sites (open, data, close), each with one or two targets. */
void deliver(const struct handlers *h, unsigned id, const uint32_t *data, unsigned n)
{
	h->on_open(id);
	for (unsigned i = 0; i < n; i++)
		h->on_data(id, data[i]);
	h->on_close(id);
}

/* Its value site is instrumented but never reached: a value-profile record with
 * sites and no values must still be written. */
uint32_t dispatch_never_called(op_fn f, uint32_t x)
{
	return f(x, x);
}
