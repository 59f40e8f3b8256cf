// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module A: a deterministic workload whose profile is known
 * exactly. One run (at init, and at each read of
 * /sys/kernel/debug/pgo_test_a/run) makes:
 *   - 10 calls of pgo_test_a_leaf();
 *   - 10 indirect calls at one site: 6 to pgo_test_a_six, 3 to
 *     pgo_test_a_three, 1 to pgo_test_a_one;
 *   - 6 memcpy calls at one site, sizes 3, 3, 8, 64, 100, 100 (memop
 *     buckets 3: 2, 8: 1, 64: 1, 65: 2).
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>

static struct dentry *pgo_test_a_dir;
static char pgo_test_a_src[128], pgo_test_a_dst[128];
static long pgo_test_a_sink;

static noinline long pgo_test_a_leaf(long x)
{
	return x + 1;
}

static noinline long pgo_test_a_six(long x)
{
	return x * 6;
}

static noinline long pgo_test_a_three(long x)
{
	return x * 3;
}

static noinline long pgo_test_a_one(long x)
{
	return x - 1;
}

/* Written once at init: the calls and sizes stay run-time values. */
static long (*pgo_test_a_targets[10])(long);
static size_t pgo_test_a_sizes[6] = { 3, 3, 8, 64, 100, 100 };

static noinline void pgo_test_a_run(void)
{
	int i;

	for (i = 0; i < 10; i++)
		pgo_test_a_sink += pgo_test_a_leaf(i);
	for (i = 0; i < 10; i++)
		pgo_test_a_sink += READ_ONCE(pgo_test_a_targets[i])(i);
	for (i = 0; i < 6; i++) {
		memcpy(pgo_test_a_dst, pgo_test_a_src,
		       READ_ONCE(pgo_test_a_sizes[i]));
		/* A use of the copy, so that it is not optimized away. */
		pgo_test_a_sink += READ_ONCE(pgo_test_a_dst[i]);
	}
}

static ssize_t pgo_test_a_read(struct file *file, char __user *buf,
			       size_t count, loff_t *pos)
{
	if (*pos == 0)
		pgo_test_a_run();
	return simple_read_from_buffer(buf, count, pos, "ran\n", 4);
}

static const struct file_operations pgo_test_a_fops = {
	.owner = THIS_MODULE,
	.read = pgo_test_a_read,
	.llseek = default_llseek,
};

static int __init pgo_test_a_init(void)
{
	int i;

	for (i = 0; i < 10; i++)
		pgo_test_a_targets[i] = i < 6 ? pgo_test_a_six :
					i < 9 ? pgo_test_a_three :
						pgo_test_a_one;
	/* Before the module is live: these counts must be kept too. */
	pgo_test_a_run();
	pgo_test_a_dir = debugfs_create_dir("pgo_test_a", NULL);
	debugfs_create_file("run", 0400, pgo_test_a_dir, NULL,
			    &pgo_test_a_fops);
	return 0;
}

static void __exit pgo_test_a_exit(void)
{
	debugfs_remove(pgo_test_a_dir);
}

module_init(pgo_test_a_init);
module_exit(pgo_test_a_exit);
MODULE_DESCRIPTION("kpgo test module: a known profile");
MODULE_LICENSE("GPL");
