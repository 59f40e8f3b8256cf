// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo module hook benchmark (tests/kernel/scale.sh): the cost of a
 * module's value-profiling calls, however many modules are loaded. Each
 * read of /sys/kernel/debug/pgo_hookbench/run runs, `calls` times
 * (module parameter, default 20000):
 *   - the hooked loop: an indirect call (one target, so the hook finds its
 *     value at the first node) and a memcpy of a run-time size (the memop
 *     hook);
 *   - the plain loop: the same loop in a function that is not
 *     instrumented (__no_profile: no counter, no hook);
 * both `rounds` times (module parameter, default 1), and prints
 * "hooked_ns=N plain_ns=N calls=N", the guest clock around each loop, the
 * least of its rounds: an interrupt or deferred work that lands in one
 * round (an RCU callback of the module load before) is not the loop's.
 * Under QEMU -icount shift=0 a guest nanosecond is one instruction, so
 * (hooked - plain) / (2 * calls) is the instructions one hook call takes,
 * with its share of the loop's counter increments.
 */
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/string.h>

static unsigned int calls = 20000;
module_param(calls, uint, 0444);
static unsigned int rounds = 1;
module_param(rounds, uint, 0444);

static struct dentry *pgo_hookbench_dir;
static char pgo_hookbench_src[64], pgo_hookbench_dst[64];
static long pgo_hookbench_sink;
static long (*pgo_hookbench_target)(long);
static size_t pgo_hookbench_size = 16;

static noinline long pgo_hookbench_double(long x)
{
	return 2 * x;
}

static noinline void pgo_hookbench_hooked(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pgo_hookbench_sink += READ_ONCE(pgo_hookbench_target)(i);
		memcpy(pgo_hookbench_dst, pgo_hookbench_src,
		       READ_ONCE(pgo_hookbench_size));
		pgo_hookbench_sink += READ_ONCE(pgo_hookbench_dst[1]);
	}
}

/* The same loop, not instrumented: no counter, no hook. */
static noinline __no_profile void pgo_hookbench_plain(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pgo_hookbench_sink += READ_ONCE(pgo_hookbench_target)(i);
		memcpy(pgo_hookbench_dst, pgo_hookbench_src,
		       READ_ONCE(pgo_hookbench_size));
		pgo_hookbench_sink += READ_ONCE(pgo_hookbench_dst[1]);
	}
}

static ssize_t pgo_hookbench_read(struct file *file, char __user *buf,
				  size_t count, loff_t *pos)
{
	char text[96];
	u64 start, hooked = U64_MAX, plain = U64_MAX;
	unsigned int round;
	int len;

	if (*pos)
		return 0;
	for (round = 0; round < max(rounds, 1U); round++) {
		start = ktime_get_ns();
		pgo_hookbench_hooked(calls);
		hooked = min(hooked, ktime_get_ns() - start);
		start = ktime_get_ns();
		pgo_hookbench_plain(calls);
		plain = min(plain, ktime_get_ns() - start);
	}
	len = scnprintf(text, sizeof(text), "hooked_ns=%llu plain_ns=%llu calls=%u\n",
			hooked, plain, calls);
	return simple_read_from_buffer(buf, count, pos, text, len);
}

static const struct file_operations pgo_hookbench_fops = {
	.owner = THIS_MODULE,
	.read = pgo_hookbench_read,
	.llseek = default_llseek,
};

static int __init pgo_hookbench_init(void)
{
	pgo_hookbench_target = pgo_hookbench_double;
	pgo_hookbench_dir = debugfs_create_dir("pgo_hookbench", NULL);
	debugfs_create_file("run", 0400, pgo_hookbench_dir, NULL,
			    &pgo_hookbench_fops);
	return 0;
}

static void __exit pgo_hookbench_exit(void)
{
	debugfs_remove(pgo_hookbench_dir);
}

module_init(pgo_hookbench_init);
module_exit(pgo_hookbench_exit);
MODULE_DESCRIPTION("kpgo test module: the cost of a module's hooks");
MODULE_LICENSE("GPL");
