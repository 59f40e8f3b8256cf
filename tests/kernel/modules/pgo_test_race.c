// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo reset race test module (tests/kernel/scale.sh): hooks that run on
 * one CPU while another resets. Writing "start" to
 * /sys/kernel/debug/pgo_test_race/control starts a kernel thread on CPU 0
 * that calls pgo_test_race_target() through a pointer in a loop (one
 * indirect-call site, one value; the target's entry counter counts the
 * same calls), "stop" stops it; reading .../calls gives the number of
 * calls made so far, counted after each call.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

static struct dentry *pgo_test_race_dir;
static struct task_struct *pgo_test_race_thread;
static DEFINE_MUTEX(pgo_test_race_lock);
static atomic64_t pgo_test_race_calls = ATOMIC64_INIT(0);
static long pgo_test_race_sink;
static long (*pgo_test_race_call)(long);

static noinline long pgo_test_race_target(long x)
{
	return x + 1;
}

static int pgo_test_race_loop(void *unused)
{
	long i = 0;

	while (!kthread_should_stop()) {
		pgo_test_race_sink += READ_ONCE(pgo_test_race_call)(i);
		atomic64_inc(&pgo_test_race_calls);
		if (++i % 1024 == 0)
			cond_resched();
	}
	return 0;
}

static ssize_t pgo_test_race_control(struct file *file,
				     const char __user *buf, size_t count,
				     loff_t *pos)
{
	char word[8] = "";
	int ret = count;

	if (copy_from_user(word, buf, min(count, sizeof(word) - 1)))
		return -EFAULT;
	mutex_lock(&pgo_test_race_lock);
	if (!strncmp(word, "start", 5) && !pgo_test_race_thread) {
		pgo_test_race_thread = kthread_run_on_cpu(pgo_test_race_loop, NULL,
							  0, "pgo_test_race");
		if (IS_ERR(pgo_test_race_thread)) {
			ret = PTR_ERR(pgo_test_race_thread);
			pgo_test_race_thread = NULL;
		}
	} else if (!strncmp(word, "stop", 4) && pgo_test_race_thread) {
		kthread_stop(pgo_test_race_thread);
		pgo_test_race_thread = NULL;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&pgo_test_race_lock);
	return ret;
}

static ssize_t pgo_test_race_read_calls(struct file *file, char __user *buf,
					size_t count, loff_t *pos)
{
	char text[24];
	int len = scnprintf(text, sizeof(text), "%lld\n",
			    atomic64_read(&pgo_test_race_calls));

	return simple_read_from_buffer(buf, count, pos, text, len);
}

static const struct file_operations pgo_test_race_control_fops = {
	.owner = THIS_MODULE,
	.write = pgo_test_race_control,
	.llseek = noop_llseek,
};

static const struct file_operations pgo_test_race_calls_fops = {
	.owner = THIS_MODULE,
	.read = pgo_test_race_read_calls,
	.llseek = default_llseek,
};

static int __init pgo_test_race_init(void)
{
	pgo_test_race_call = pgo_test_race_target;
	pgo_test_race_dir = debugfs_create_dir("pgo_test_race", NULL);
	debugfs_create_file("control", 0200, pgo_test_race_dir, NULL,
			    &pgo_test_race_control_fops);
	debugfs_create_file("calls", 0400, pgo_test_race_dir, NULL,
			    &pgo_test_race_calls_fops);
	return 0;
}

static void __exit pgo_test_race_exit(void)
{
	debugfs_remove(pgo_test_race_dir);
	if (pgo_test_race_thread)
		kthread_stop(pgo_test_race_thread);
}

module_init(pgo_test_race_init);
module_exit(pgo_test_race_exit);
MODULE_DESCRIPTION("kpgo test module: hooks racing with resets");
MODULE_LICENSE("GPL");
