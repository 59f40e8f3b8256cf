// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module B: exhausts its own value-node pool. The compiler gives
 * a module about one node per value site (at least 10); one run (at init
 * and at each read of /sys/kernel/debug/pgo_test_b/run) copies with a
 * size in each of the 22 memop buckets, at one site.
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>

static struct dentry *pgo_test_b_dir;
static char pgo_test_b_src[1024], pgo_test_b_dst[1024];
static long pgo_test_b_sink;
/* One size in each of the 22 memop buckets. */
static size_t pgo_test_b_sizes[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32, 33, 64, 65, 128, 129, 256,
	257, 512, 513,
};

static noinline void pgo_test_b_run(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(pgo_test_b_sizes); i++) {
		memcpy(pgo_test_b_dst, pgo_test_b_src,
		       READ_ONCE(pgo_test_b_sizes[i]));
		/* A use of the copy, so that it is not optimized away. */
		pgo_test_b_sink += READ_ONCE(pgo_test_b_dst[i]);
	}
}

static ssize_t pgo_test_b_read(struct file *file, char __user *buf,
			       size_t count, loff_t *pos)
{
	if (*pos == 0)
		pgo_test_b_run();
	return simple_read_from_buffer(buf, count, pos, "ran\n", 4);
}

static const struct file_operations pgo_test_b_fops = {
	.owner = THIS_MODULE,
	.read = pgo_test_b_read,
	.llseek = default_llseek,
};

static int __init pgo_test_b_init(void)
{
	pgo_test_b_run();
	pgo_test_b_dir = debugfs_create_dir("pgo_test_b", NULL);
	debugfs_create_file("run", 0400, pgo_test_b_dir, NULL,
			    &pgo_test_b_fops);
	return 0;
}

static void __exit pgo_test_b_exit(void)
{
	debugfs_remove(pgo_test_b_dir);
}

module_init(pgo_test_b_init);
module_exit(pgo_test_b_exit);
MODULE_DESCRIPTION("kpgo test module: exhausts its value-node pool");
MODULE_LICENSE("GPL");
