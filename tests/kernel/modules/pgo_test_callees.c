// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module of indirect calls across objects. Each read of
 * /sys/kernel/debug/pgo_test_callees/run at offset 0 is one call of
 * pgo_test_callees_read() by vmlinux (debugfs's proxy calls the file's
 * read function through a pointer), and makes, through pointers, at the
 * two sites of pgo_test_callees_run():
 *   - 5 calls of int_sqrt() (vmlinux, instrumented);
 *   - 3 calls of memcpy() (vmlinux, assembly: not instrumented).
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/math.h>
#include <linux/module.h>
#include <linux/string.h>

static struct dentry *pgo_test_callees_dir;
/* Written once at init: the calls stay indirect. */
static unsigned long (*pgo_test_callees_sqrt)(unsigned long);
static void *(*pgo_test_callees_copy)(void *to, const void *from, size_t len);
static char pgo_test_callees_buf[16];
static unsigned long pgo_test_callees_sink;

static noinline void pgo_test_callees_run(void)
{
	int i;

	for (i = 0; i < 5; i++)
		pgo_test_callees_sink += READ_ONCE(pgo_test_callees_sqrt)(i * 100);
	for (i = 0; i < 3; i++)
		READ_ONCE(pgo_test_callees_copy)(pgo_test_callees_buf,
						 pgo_test_callees_buf + 8, 8);
}

static ssize_t pgo_test_callees_read(struct file *file, char __user *buf,
				     size_t count, loff_t *pos)
{
	if (*pos == 0)
		pgo_test_callees_run();
	return simple_read_from_buffer(buf, count, pos, "ran\n", 4);
}

static const struct file_operations pgo_test_callees_fops = {
	.owner = THIS_MODULE,
	.read = pgo_test_callees_read,
	.llseek = default_llseek,
};

static int __init pgo_test_callees_init(void)
{
	pgo_test_callees_sqrt = int_sqrt;
	/* The function, not the fortified macro: memcpy is not followed by (. */
	pgo_test_callees_copy = memcpy;
	pgo_test_callees_dir = debugfs_create_dir("pgo_test_callees", NULL);
	debugfs_create_file("run", 0400, pgo_test_callees_dir, NULL,
			    &pgo_test_callees_fops);
	return 0;
}

static void __exit pgo_test_callees_exit(void)
{
	debugfs_remove(pgo_test_callees_dir);
}

module_init(pgo_test_callees_init);
module_exit(pgo_test_callees_exit);
MODULE_DESCRIPTION("kpgo test module: indirect calls across objects");
MODULE_LICENSE("GPL");
