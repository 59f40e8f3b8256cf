// SPDX-License-Identifier: GPL-2.0
/*
 * A small module for the kpgo kernel tests: its code runs at load time and
 * whenever /sys/kernel/debug/kpgo_test/run is read, with an indirect call
 * and a variable-size memcpy, so that its profile has counters, indirect
 * call targets and memop sizes.  "iterations" sets how often.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>

static unsigned int iterations = 100;
module_param(iterations, uint, 0644);
MODULE_PARM_DESC(iterations, "loop iterations per run");

static struct dentry *kpgo_test_dir;

static noinline int kpgo_test_square(int x)
{
	return x * x;
}

static noinline int kpgo_test_negate(int x)
{
	return -x;
}

/* Not static const: the indirect call must stay indirect. */
static int (*kpgo_test_ops[])(int) = { kpgo_test_square, kpgo_test_negate };

static noinline long kpgo_test_run(unsigned int n)
{
	static char src[64], dst[64];
	long sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		/* Sizes 1..64, the memop value profile. */
		memcpy(dst, src, 1 + i % sizeof(dst));
		/* Two targets, three times as often the first one. */
		sum += kpgo_test_ops[(i % 4) == 3](i) + dst[0];
	}
	return sum;
}

static ssize_t kpgo_test_read(struct file *file, char __user *buf,
			      size_t count, loff_t *pos)
{
	char text[32];
	int len = scnprintf(text, sizeof(text), "%ld\n",
			    kpgo_test_run(iterations));

	return simple_read_from_buffer(buf, count, pos, text, len);
}

static const struct file_operations kpgo_test_fops = {
	.owner = THIS_MODULE,
	.read = kpgo_test_read,
	.llseek = default_llseek,
};

static int __init kpgo_test_init(void)
{
	/* Runs before the module is live: these counts must not be lost. */
	pr_info("kpgo_test: init run: %ld\n", kpgo_test_run(iterations));
	kpgo_test_dir = debugfs_create_dir("kpgo_test", NULL);
	debugfs_create_file("run", 0400, kpgo_test_dir, NULL, &kpgo_test_fops);
	return 0;
}

static void __exit kpgo_test_exit(void)
{
	debugfs_remove(kpgo_test_dir);
}

module_init(kpgo_test_init);
module_exit(kpgo_test_exit);
MODULE_DESCRIPTION("kpgo test module: code to profile");
MODULE_LICENSE("GPL");
