// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo test module: instrumented code with value sites (indirect calls and
 * memcpy) that keeps running in other contexts across the module's unload:
 *   - a timer that re-arms itself every jiffy (softirq context);
 *   - a delayed work item that re-queues itself every jiffy;
 *   - async work (async_schedule()): queued at init, and queued again by
 *     the exit function, which does not wait for it.
 *
 * The kernel sets MODULE_STATE_GOING before it calls the exit function, so
 * the timer and the work item race with rmmod until the exit function
 * stops them, and the async work queued at exit runs after the exit
 * function has returned, concurrently with the MODULE_STATE_GOING
 * notifiers: delete_module() only waits for it (async_synchronize_full())
 * after them, before it frees the module. The module itself is correct: no
 * code of it runs after it is freed.
 */
#include <linux/async.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

static unsigned int exit_jobs = 4;
module_param(exit_jobs, uint, 0400);
MODULE_PARM_DESC(exit_jobs, "async jobs queued by the exit function");
static unsigned int exit_runs = 2000;
module_param(exit_runs, uint, 0400);
MODULE_PARM_DESC(exit_runs, "workload runs of each async job queued at exit");

static char pgo_test_async_src[256], pgo_test_async_dst[256];
static atomic_long_t pgo_test_async_sink;
static atomic_t pgo_test_async_runs_after_exit;
static atomic_t pgo_test_async_jobs_left;
static bool pgo_test_async_stopping;
static bool pgo_test_async_exited;
static struct timer_list pgo_test_async_timer;
static struct delayed_work pgo_test_async_dwork;
static struct dentry *pgo_test_async_dir;

static noinline long pgo_test_async_even(long x)
{
	return x * 2;
}

static noinline long pgo_test_async_odd(long x)
{
	return x * 2 + 1;
}

/* Written at init: the calls stay indirect. */
static long (*pgo_test_async_targets[2])(long);

static size_t pgo_test_async_sizes[4] = { 1, 16, 40, 200 };

/* One run: 4 indirect calls and 4 memcpy calls of run-time sizes. */
static noinline void pgo_test_async_work_once(long seed)
{
	long sum = 0;
	int i;

	for (i = 0; i < 4; i++) {
		sum += READ_ONCE(pgo_test_async_targets[(seed + i) & 1])(seed + i);
		memcpy(pgo_test_async_dst, pgo_test_async_src,
		       READ_ONCE(pgo_test_async_sizes[i]));
		sum += READ_ONCE(pgo_test_async_dst[i]);
	}
	atomic_long_add(sum, &pgo_test_async_sink);
}

static void pgo_test_async_timer_fn(struct timer_list *timer)
{
	pgo_test_async_work_once(jiffies);
	if (!READ_ONCE(pgo_test_async_stopping))
		mod_timer(timer, jiffies + 1);
}

static void pgo_test_async_dwork_fn(struct work_struct *work)
{
	pgo_test_async_work_once(jiffies);
	if (!READ_ONCE(pgo_test_async_stopping))
		schedule_delayed_work(&pgo_test_async_dwork, 1);
}

/*
 * Async work: runs the workload until the exit function has returned (at
 * most 10 seconds), then @data more times, concurrently with the
 * MODULE_STATE_GOING notifiers of the unload. A job queued at init runs
 * @data times.
 */
static void pgo_test_async_job(void *data, async_cookie_t cookie)
{
	unsigned long runs = (unsigned long)data;
	unsigned long deadline = jiffies + 10 * HZ;
	bool at_exit = READ_ONCE(pgo_test_async_stopping);
	unsigned long i;

	while (at_exit && !READ_ONCE(pgo_test_async_exited) &&
	       time_before(jiffies, deadline)) {
		pgo_test_async_work_once(jiffies);
		cond_resched();
	}
	for (i = 0; i < runs; i++) {
		pgo_test_async_work_once(i);
		cond_resched();
	}
	if (!at_exit)
		return;
	if (READ_ONCE(pgo_test_async_exited))
		atomic_add(runs, &pgo_test_async_runs_after_exit);
	if (atomic_dec_and_test(&pgo_test_async_jobs_left))
		pr_info("pgo_test_async: %d workload runs after exit returned\n",
			atomic_read(&pgo_test_async_runs_after_exit));
}

static int pgo_test_async_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%ld\n", atomic_long_read(&pgo_test_async_sink));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pgo_test_async);

static int __init pgo_test_async_init(void)
{
	pgo_test_async_targets[0] = pgo_test_async_even;
	pgo_test_async_targets[1] = pgo_test_async_odd;
	timer_setup(&pgo_test_async_timer, pgo_test_async_timer_fn, 0);
	INIT_DELAYED_WORK(&pgo_test_async_dwork, pgo_test_async_dwork_fn);
	mod_timer(&pgo_test_async_timer, jiffies + 1);
	schedule_delayed_work(&pgo_test_async_dwork, 1);
	async_schedule(pgo_test_async_job, (void *)20UL);
	pgo_test_async_dir = debugfs_create_dir("pgo_test_async", NULL);
	debugfs_create_file("sink", 0400, pgo_test_async_dir, NULL,
			    &pgo_test_async_fops);
	return 0;
}

static void __exit pgo_test_async_exit(void)
{
	unsigned int i;

	debugfs_remove(pgo_test_async_dir);
	/*
	 * Async work first, while the timer and the work item still run (they
	 * only stop re-arming): it goes on after this function returns, and
	 * delete_module() waits for it before freeing the module.
	 */
	atomic_set(&pgo_test_async_jobs_left, exit_jobs);
	WRITE_ONCE(pgo_test_async_stopping, true);
	for (i = 0; i < exit_jobs; i++)
		async_schedule(pgo_test_async_job, (void *)(unsigned long)exit_runs);
	/* Timers and work items are not waited for by the kernel: stop them. */
	timer_shutdown_sync(&pgo_test_async_timer);
	cancel_delayed_work_sync(&pgo_test_async_dwork);
	WRITE_ONCE(pgo_test_async_exited, true);
}

module_init(pgo_test_async_init);
module_exit(pgo_test_async_exit);
MODULE_DESCRIPTION("kpgo test module: instrumented code running across unload");
MODULE_LICENSE("GPL");
