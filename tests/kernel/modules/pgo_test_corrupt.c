// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module for a hostile __llvm_prf_data: built normally, then
 * tests/kernel/ko_edit.py rewrites the relocation of the Values field of
 * pgo_test_corrupt_victim()'s data record so that it points at
 * pgo_test_corrupt_target, in .data, instead of the function's value-site
 * heads in __llvm_prf_vals. The target looks like a list of value nodes
 * (its first "head" points at a "node"), so that a runtime that trusted
 * the pointer would write into it when the victim's value sites run
 * (linking a node), and when it resets (zeroing the node's count), instead
 * of faulting. The runtime must refuse the module at load: the target must
 * keep the bytes it was built with, which /sys/kernel/debug/<name>/target
 * shows (as 64-bit words in hex; "intact" on the last line if unchanged).
 * Reading /sys/kernel/debug/<name>/run runs the victim's value sites 10
 * times, and those of pgo_test_corrupt_other(), whose record is left
 * correct, 10 times.
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/types.h>

#define PGO_TEST_CORRUPT_VALUE 0x5a5a5a5a5a5a5a5aULL
#define PGO_TEST_CORRUPT_COUNT 0x1234ULL
#define PGO_TEST_CORRUPT_CANARY 0xc0ffee00c0ffee00ULL

/* The layout of a value node of the profile runtime: value, count, next. */
struct pgo_test_corrupt_node {
	u64 value;
	u64 count;
	struct pgo_test_corrupt_node *next;
};

struct pgo_test_corrupt_target {
	struct pgo_test_corrupt_node *heads[4];
	struct pgo_test_corrupt_node node;
	u64 canary[4];
};

static struct pgo_test_corrupt_target pgo_test_corrupt_target = {
	.heads = { &pgo_test_corrupt_target.node },
	.node = {
		.value = PGO_TEST_CORRUPT_VALUE,
		.count = PGO_TEST_CORRUPT_COUNT,
	},
	.canary = {
		PGO_TEST_CORRUPT_CANARY, PGO_TEST_CORRUPT_CANARY,
		PGO_TEST_CORRUPT_CANARY, PGO_TEST_CORRUPT_CANARY,
	},
};

static struct dentry *pgo_test_corrupt_dir;
static char pgo_test_corrupt_src[128], pgo_test_corrupt_dst[128];
static long pgo_test_corrupt_sink;

static noinline long pgo_test_corrupt_add(long x)
{
	return x + 3;
}

static noinline long pgo_test_corrupt_sub(long x)
{
	return x - 3;
}

static long (*pgo_test_corrupt_targets[2])(long);
static size_t pgo_test_corrupt_sizes[2] = { 7, 77 };

/* One indirect-call site and one memop site: two value-site heads. */
static noinline void pgo_test_corrupt_victim(int i)
{
	pgo_test_corrupt_sink += READ_ONCE(pgo_test_corrupt_targets[i & 1])(i);
	memcpy(pgo_test_corrupt_dst, pgo_test_corrupt_src,
	       READ_ONCE(pgo_test_corrupt_sizes[i & 1]));
	pgo_test_corrupt_sink += READ_ONCE(pgo_test_corrupt_dst[1]);
}

/* The same with a correct record. */
static noinline void pgo_test_corrupt_other(int i)
{
	pgo_test_corrupt_sink += READ_ONCE(pgo_test_corrupt_targets[i & 1])(i);
	memcpy(pgo_test_corrupt_dst, pgo_test_corrupt_src,
	       READ_ONCE(pgo_test_corrupt_sizes[i & 1]));
	pgo_test_corrupt_sink += READ_ONCE(pgo_test_corrupt_dst[2]);
}

static bool pgo_test_corrupt_intact(void)
{
	const struct pgo_test_corrupt_target *t = &pgo_test_corrupt_target;
	int i;

	if (READ_ONCE(t->heads[0]) != &t->node)
		return false;
	for (i = 1; i < ARRAY_SIZE(t->heads); i++)
		if (READ_ONCE(t->heads[i]))
			return false;
	if (READ_ONCE(t->node.value) != PGO_TEST_CORRUPT_VALUE ||
	    READ_ONCE(t->node.count) != PGO_TEST_CORRUPT_COUNT ||
	    READ_ONCE(t->node.next))
		return false;
	for (i = 0; i < ARRAY_SIZE(t->canary); i++)
		if (READ_ONCE(t->canary[i]) != PGO_TEST_CORRUPT_CANARY)
			return false;
	return true;
}

static int pgo_test_corrupt_target_show(struct seq_file *m, void *v)
{
	const u64 *word = (const u64 *)&pgo_test_corrupt_target;
	int i;

	for (i = 0; i < sizeof(pgo_test_corrupt_target) / sizeof(u64); i++)
		seq_printf(m, "%016llx\n", READ_ONCE(word[i]));
	seq_puts(m, pgo_test_corrupt_intact() ? "intact\n" : "changed\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pgo_test_corrupt_target);

static ssize_t pgo_test_corrupt_run(struct file *file, char __user *buf,
				    size_t count, loff_t *pos)
{
	int i;

	if (*pos == 0)
		for (i = 0; i < 10; i++) {
			pgo_test_corrupt_victim(i);
			pgo_test_corrupt_other(i);
		}
	return simple_read_from_buffer(buf, count, pos, "ran\n", 4);
}

static const struct file_operations pgo_test_corrupt_run_fops = {
	.owner = THIS_MODULE,
	.read = pgo_test_corrupt_run,
	.llseek = default_llseek,
};

static int __init pgo_test_corrupt_init(void)
{
	pgo_test_corrupt_targets[0] = pgo_test_corrupt_add;
	pgo_test_corrupt_targets[1] = pgo_test_corrupt_sub;
	/* Named after the module, which ko_edit.py may rename. */
	pgo_test_corrupt_dir = debugfs_create_dir(THIS_MODULE->name, NULL);
	debugfs_create_file("target", 0400, pgo_test_corrupt_dir, NULL,
			    &pgo_test_corrupt_target_fops);
	debugfs_create_file("run", 0400, pgo_test_corrupt_dir, NULL,
			    &pgo_test_corrupt_run_fops);
	return 0;
}

static void __exit pgo_test_corrupt_exit(void)
{
	debugfs_remove(pgo_test_corrupt_dir);
}

module_init(pgo_test_corrupt_init);
module_exit(pgo_test_corrupt_exit);
MODULE_DESCRIPTION("kpgo test module: a data record with a hostile Values pointer");
MODULE_LICENSE("GPL");
