// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo scale test module (tests/kernel/scale.sh): loaded under many names
 * at once (pgo_s_001, pgo_s_002, ...: the guest renames the image at each
 * init_module(), as fail_nth load-as does), each a module of its own to
 * the kernel and to kpgo: its memory, sections, descriptor and file. One
 * run, at init:
 *   - 7 calls of pgo_scale_leaf();
 *   - 5 indirect calls at one site: 3 to pgo_scale_three, 2 to
 *     pgo_scale_two;
 *   - 3 memcpy calls at one site, sizes 8, 8, 64.
 */
#include <linux/compiler.h>
#include <linux/module.h>
#include <linux/string.h>

static char pgo_scale_src[64], pgo_scale_dst[64];
static long pgo_scale_sink;

static noinline long pgo_scale_leaf(long x)
{
	return x + 1;
}

static noinline long pgo_scale_three(long x)
{
	return x * 3;
}

static noinline long pgo_scale_two(long x)
{
	return x * 2;
}

static long (*pgo_scale_targets[5])(long);
static size_t pgo_scale_sizes[3] = { 8, 8, 64 };

static noinline void pgo_scale_run(void)
{
	int i;

	for (i = 0; i < 7; i++)
		pgo_scale_sink += pgo_scale_leaf(i);
	for (i = 0; i < 5; i++)
		pgo_scale_sink += READ_ONCE(pgo_scale_targets[i])(i);
	for (i = 0; i < 3; i++) {
		memcpy(pgo_scale_dst, pgo_scale_src,
		       READ_ONCE(pgo_scale_sizes[i]));
		pgo_scale_sink += READ_ONCE(pgo_scale_dst[i]);
	}
}

static int __init pgo_scale_init(void)
{
	int i;

	for (i = 0; i < 5; i++)
		pgo_scale_targets[i] = i < 3 ? pgo_scale_three : pgo_scale_two;
	pgo_scale_run();
	return 0;
}

static void __exit pgo_scale_exit(void)
{
}

module_init(pgo_scale_init);
module_exit(pgo_scale_exit);
MODULE_DESCRIPTION("kpgo scale test module: one of many");
MODULE_LICENSE("GPL");
