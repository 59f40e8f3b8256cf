// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module: an init function that fails. It runs instrumented
 * code with value sites first, exactly as one run of pgo_test_a does in
 * shape (here: 4 calls of the leaf, 4 indirect calls at one site, 3 to
 * pgo_test_initfail_three and 1 to pgo_test_initfail_one, and 2 memcpy
 * calls of sizes 8 and 100, memop buckets 8 and 65), then returns -ENODEV,
 * so that every load goes through MODULE_STATE_COMING and GOING without
 * the module ever being live.
 */
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/string.h>

static char pgo_test_initfail_src[128], pgo_test_initfail_dst[128];
static long pgo_test_initfail_sink;

static noinline long pgo_test_initfail_leaf(long x)
{
	return x + 1;
}

static noinline long pgo_test_initfail_three(long x)
{
	return x * 3;
}

static noinline long pgo_test_initfail_one(long x)
{
	return x - 1;
}

static long (*pgo_test_initfail_targets[4])(long);
static size_t pgo_test_initfail_sizes[2] = { 8, 100 };

static noinline void pgo_test_initfail_run(void)
{
	int i;

	for (i = 0; i < 4; i++)
		pgo_test_initfail_sink += pgo_test_initfail_leaf(i);
	for (i = 0; i < 4; i++)
		pgo_test_initfail_sink +=
			READ_ONCE(pgo_test_initfail_targets[i])(i);
	for (i = 0; i < 2; i++) {
		memcpy(pgo_test_initfail_dst, pgo_test_initfail_src,
		       READ_ONCE(pgo_test_initfail_sizes[i]));
		pgo_test_initfail_sink += READ_ONCE(pgo_test_initfail_dst[i]);
	}
}

static int __init pgo_test_initfail_init(void)
{
	int i;

	for (i = 0; i < 4; i++)
		pgo_test_initfail_targets[i] = i < 3 ? pgo_test_initfail_three :
						       pgo_test_initfail_one;
	pgo_test_initfail_run();
	return -ENODEV;
}

module_init(pgo_test_initfail_init);
MODULE_DESCRIPTION("kpgo test module: init runs instrumented code, then fails");
MODULE_LICENSE("GPL");
