// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of kpgo (kpgo.rs): its initcall; what Rust needs of static
 * inlines and macros (rescheduling, signals, the hooks' preemption
 * sections, grace periods, the module area, a rate limit, the zlib
 * inflater, the pages and mappings of live files); the export of the Rust
 * hooks to modules, which built-in Rust cannot do in 6.12, with their
 * kprobes blacklist entries; with counter relocation, vmlinux's counter
 * bias, the reserve_mem= region its counters may live in (kpgo_persist=)
 * and the wait of an epoch switch; with sampled instrumentation, the
 * per-CPU sampling state.
 *
 * Built without profiling, sanitizers or stack protector (Kbuild): the
 * hooks call into it.
 */
#define pr_fmt(fmt) "kpgo: " fmt

#include <linux/cacheflush.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/kprobes.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/panic_notifier.h>
#include <linux/pgo.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/reboot.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/preempt.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/seqlock.h>
#include <linux/srcu.h>
#include <linux/percpu.h>
#include <linux/pgtable.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/zlib.h>

#include "kpgo.h"

/*
 * fs_initcall: after debugfs (core_initcall) and before the device and
 * driver initcalls, most of which are instrumented too. No module can be
 * loaded before: the first load is a usermode helper's (request_module())
 * or init's, and usermode helpers are enabled only at rootfs_initcall
 * (populate_rootfs()), after fs_initcall. So kpgo's module notifier sees
 * every module from its COMING notification on, and there is no earlier
 * module to look for.
 */
static int __init kpgo_initcall(void)
{
	int ret = kpgo_init();

	if (!ret && IS_ENABLED(CONFIG_PGO_CLANG_SAMPLING_ENTRY))
		ret = kpgo_entry_init();
	return ret;
}
fs_initcall(kpgo_initcall);

#ifdef CONFIG_PGO_CLANG_SAMPLING_UPDATES
/*
 * The state of sampled instrumentation: where each CPU is in its period,
 * advanced by every counter update of instrumented C code, which reaches
 * it through %gs (<linux/pgo_sampling.h>) as the running CPU's copy.
 * Written on every update of its CPU only: with the per-CPU variables
 * that each start a cache line, so that no other CPU reading a neighbour
 * takes the line away. The code of every instrumented module refers to
 * it, whatever the module's license, as it calls the value-profiling
 * hooks (exported alike): the compiler put the reference there.
 */
DEFINE_PER_CPU_ALIGNED(u16, __llvm_profile_sampling);
EXPORT_PER_CPU_SYMBOL(__llvm_profile_sampling);

/* The period and how many updates of each one are recorded, for stats. */
u32 kpgo_sampling_rate(u32 *recorded)
{
	*recorded = CONFIG_PGO_CLANG_SAMPLING_BURST;
	return CONFIG_PGO_CLANG_SAMPLING_PERIOD;
}

/*
 * The link-time canary of scoped_seqlock_read(): with the sampling
 * branches, clang no longer proves its ss_done state impossible and keeps
 * the call, as with KASAN. seqlock.h is left alone, rather than made to
 * use its empty inline canary here as commit b94d45b6bbb4 ("seqlock:
 * Allow KASAN to fail optimizing") did for KASAN: that changes the
 * caller's control flow, and the profile is applied to a build without
 * sampling, whose control flow must be the one profiled, or the function
 * is out of date there. Defined only where seqlock.h declares it extern:
 * the condition mirrors seqlock.h's (its GCC branch cannot apply, as
 * PGO_CLANG needs clang), and a drift fails the build, by a redefinition
 * or an undefined reference. Exported for any module, as the sampling
 * state is: the compiler keeps the call wherever scoped_seqlock_read() is.
 */
#if !defined(CONFIG_KASAN) && !defined(CONFIG_UBSAN_ALIGNMENT)
void __scoped_seqlock_bug(void)
{
	WARN_ONCE(1, "scoped_seqlock_read() in its impossible ss_done state\n");
}
EXPORT_SYMBOL(__scoped_seqlock_bug);
#endif
#endif

#ifdef CONFIG_PGO_CLANG_SAMPLING_ENTRY
/*
 * Entry sampling: the code of every instrumented function that can be
 * entered from outside a burst tests its CPU's kpgo_entry_burst, through
 * %gs, at entry (kpgo's pass plugin, scripts/pgo/entry-sampling.cpp), and
 * runs its uninstrumented twin unless it is set. Exported to every module
 * whatever its license, as the value-profiling hooks are: the compiler put
 * the reference there. With a burst as long as the period it starts set,
 * so that the boot is counted from its first instruction, as in a fully
 * instrumented kernel.
 */
DEFINE_PER_CPU(u8, kpgo_entry_burst) =
	CONFIG_PGO_CLANG_SAMPLING_ENTRY_BURST_US ==
	CONFIG_PGO_CLANG_SAMPLING_ENTRY_PERIOD_US;
EXPORT_PER_CPU_SYMBOL(kpgo_entry_burst);

/*
 * Each CPU's burst timer, and what it measured since the figures started
 * (the last settings change or reset): written by its own CPU only, in the
 * timer's callback or an IPI's, both hardirq, or in the CPU-online
 * callback before the timer starts; read by the stats, which hold off
 * restarts but not the callback. bursts counts those begun since, the
 * one under way when they started included. gaps draws the length of
 * each gap between bursts and where a start puts the CPU in its cycle:
 * seeded once at init, in process context, so that the callback takes no
 * lock.
 */
struct kpgo_entry_cpu {
	struct hrtimer timer;
	u64 since;
	u64 switched;
	u64 burst_ns;
	u64 bursts;
	struct rnd_state gaps;
};

static DEFINE_PER_CPU(struct kpgo_entry_cpu, kpgo_entry_cpu);

/*
 * Bursts that come and go last, and are apart, at least this long: a
 * shorter one would be an interrupt storm of pinned hard timers. (The
 * first burst or gap after a start is a part of one, and can be shorter:
 * one expiry per start.)
 */
#define KPGO_ENTRY_MIN_US 100U
#define KPGO_ENTRY_MAX_PERIOD_US 60000000U

/*
 * A period of 1 to KPGO_ENTRY_MAX_PERIOD_US, and a burst of 0 (never), the
 * period (always) or between, each of burst and gap at least
 * KPGO_ENTRY_MIN_US.
 */
#define KPGO_ENTRY_VALID(period_us, burst_us)				\
	((period_us) && (period_us) <= KPGO_ENTRY_MAX_PERIOD_US &&	\
	 (!(burst_us) || (burst_us) == (period_us) ||			\
	  ((burst_us) >= KPGO_ENTRY_MIN_US &&				\
	   (burst_us) + KPGO_ENTRY_MIN_US <= (period_us))))

static_assert(KPGO_ENTRY_VALID(CONFIG_PGO_CLANG_SAMPLING_ENTRY_PERIOD_US,
			       CONFIG_PGO_CLANG_SAMPLING_ENTRY_BURST_US),
	      "PGO_CLANG_SAMPLING_ENTRY_BURST_US and the gap after it must be at least 100 us");

/*
 * The settings: changed with every CPU's timer stopped and CPU hotplug
 * held off (kpgo_entry_lock, then cpus_read_lock()). kpgo_entry_ready once
 * the timers are set up and every online CPU runs them.
 */
static unsigned int kpgo_entry_period_us = CONFIG_PGO_CLANG_SAMPLING_ENTRY_PERIOD_US;
static unsigned int kpgo_entry_burst_us = CONFIG_PGO_CLANG_SAMPLING_ENTRY_BURST_US;
static bool kpgo_entry_ready;
static DEFINE_MUTEX(kpgo_entry_lock);

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "kpgo."
module_param_named(entry_period_us, kpgo_entry_period_us, uint, 0444);
module_param_named(entry_burst_us, kpgo_entry_burst_us, uint, 0444);

/* A timer interval (6.12 has no us_to_ktime()). */
static ktime_t kpgo_entry_interval(u64 us)
{
	return ns_to_ktime(us * NSEC_PER_USEC);
}

/* Bursts that come and go: neither never (0) nor always (the period). */
static bool kpgo_entry_periodic(void)
{
	return kpgo_entry_burst_us && kpgo_entry_burst_us < kpgo_entry_period_us;
}

/*
 * The gap before this CPU's next burst: uniform between half and one and a
 * half of the period less the burst, so that the mean period is the
 * setting's but the bursts keep no phase: with a fixed period they fell
 * at the same points of a workload that every boot runs with the same
 * timing, and of any work that recurs with the period.
 */
static ktime_t kpgo_entry_gap(struct kpgo_entry_cpu *this)
{
	u64 gap_ns = (u64)(kpgo_entry_period_us - kpgo_entry_burst_us) * NSEC_PER_USEC;
	u32 draw = prandom_u32_state(&this->gaps);

	/* Never below the least gap that KPGO_ENTRY_VALID() admits. */
	return ns_to_ktime(max_t(u64, (u64)KPGO_ENTRY_MIN_US * NSEC_PER_USEC,
				 gap_ns / 2 + mul_u64_u32_shr(gap_ns, draw, 32)));
}

static enum hrtimer_restart kpgo_entry_switch(struct hrtimer *timer)
{
	struct kpgo_entry_cpu *this = container_of(timer, struct kpgo_entry_cpu, timer);
	u8 on = !this_cpu_read(kpgo_entry_burst);
	u64 now = local_clock();

	if (on)
		WRITE_ONCE(this->bursts, this->bursts + 1);
	else
		WRITE_ONCE(this->burst_ns, this->burst_ns + (now - this->switched));
	WRITE_ONCE(this->switched, now);
	this_cpu_write(kpgo_entry_burst, on);
	hrtimer_forward_now(timer, on ? kpgo_entry_interval(kpgo_entry_burst_us) :
					kpgo_entry_gap(this));
	return HRTIMER_RESTART;
}

/*
 * Where this CPU enters its cycle of gap and burst when the bursts start
 * or their settings change: the state of a CPU that had run them since
 * long before, drawn from the stationary law of the cycle. In a burst
 * with the share of time in bursts, for a uniform part of it; otherwise in
 * a gap, drawn as a gap that covers a given instant is (its length times
 * its density: sqrt(a^2 + u (b^2 - a^2)) between a = G/2 and b = 3G/2 for
 * the mean gap G, as kpgo_entry_gap() draws them but for its floor, in
 * microseconds so that the squares fit), for a uniform part of it. A
 * start at the beginning of a gap would leave at least G/2 after every
 * start with no burst on any CPU. Returns whether this CPU starts in a
 * burst, and in *left the time to its next switch (at least 1 ns).
 */
static bool kpgo_entry_phase(struct kpgo_entry_cpu *this, ktime_t *left)
{
	u64 gap_us = kpgo_entry_period_us - kpgo_entry_burst_us;
	u32 in_burst = prandom_u32_state(&this->gaps);
	u32 part = prandom_u32_state(&this->gaps);
	u64 burst_ns, covering_ns;

	if (mul_u64_u32_shr(kpgo_entry_period_us, in_burst, 32) < kpgo_entry_burst_us) {
		burst_ns = (u64)kpgo_entry_burst_us * NSEC_PER_USEC;
		*left = ns_to_ktime(max_t(u64, 1, mul_u64_u32_shr(burst_ns, part, 32)));
		return true;
	}
	covering_ns = (u64)int_sqrt64(gap_us * gap_us / 4 +
				      mul_u64_u32_shr(2 * gap_us * gap_us,
						      prandom_u32_state(&this->gaps), 32)) *
		      NSEC_PER_USEC;
	*left = ns_to_ktime(max_t(u64, 1, mul_u64_u32_shr(covering_ns, part, 32)));
	return false;
}

/*
 * Restarts this CPU's figures, a burst under way counted: with interrupts
 * off (an IPI's callback), so that its timer's callback, a hardirq of
 * this CPU, cannot run halfway through; or from the CPU-online callback
 * or kpgo_entry_start_cpu(), before its timer starts.
 */
static void kpgo_entry_restart_cpu(void *unused)
{
	struct kpgo_entry_cpu *this = this_cpu_ptr(&kpgo_entry_cpu);
	u64 now = local_clock();

	WRITE_ONCE(this->burst_ns, 0);
	WRITE_ONCE(this->bursts, kpgo_entry_periodic() && this_cpu_read(kpgo_entry_burst));
	WRITE_ONCE(this->switched, now);
	WRITE_ONCE(this->since, now);
}

/*
 * Starts this CPU's figures and bursts with the current settings, at a
 * point of the cycle drawn for this CPU alone (kpgo_entry_phase()), so
 * that the CPUs' bursts are independent of each other; or the flag for
 * good. With interrupts off (an IPI's callback), or on a CPU coming
 * online, whose timer is not running.
 */
static void kpgo_entry_start_cpu(void *unused)
{
	struct kpgo_entry_cpu *this = this_cpu_ptr(&kpgo_entry_cpu);
	ktime_t left = 0;
	bool periodic = kpgo_entry_periodic();

	if (periodic)
		this_cpu_write(kpgo_entry_burst, kpgo_entry_phase(this, &left));
	else
		this_cpu_write(kpgo_entry_burst, kpgo_entry_burst_us &&
			       kpgo_entry_burst_us == kpgo_entry_period_us);
	kpgo_entry_restart_cpu(NULL);
	if (periodic)
		hrtimer_start(&this->timer, left, HRTIMER_MODE_REL_PINNED_HARD);
}

static int kpgo_entry_cpu_online(unsigned int cpu)
{
	kpgo_entry_start_cpu(NULL);
	return 0;
}

static int kpgo_entry_cpu_offline(unsigned int cpu)
{
	hrtimer_cancel(&this_cpu_ptr(&kpgo_entry_cpu)->timer);
	this_cpu_write(kpgo_entry_burst, 0);
	return 0;
}

/*
 * Applies new settings, every CPU's figures and bursts started again, with
 * kpgo_entry_lock held.
 */
static void kpgo_entry_apply(unsigned int period_us, unsigned int burst_us)
{
	int cpu;

	lockdep_assert_held(&kpgo_entry_lock);
	cpus_read_lock();
	/* No timer runs the old settings once the new ones are in. */
	for_each_online_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&kpgo_entry_cpu, cpu)->timer);
	kpgo_entry_period_us = period_us;
	kpgo_entry_burst_us = burst_us;
	on_each_cpu(kpgo_entry_start_cpu, NULL, 1);
	cpus_read_unlock();
}

/*
 * A reset of vmlinux's counts: the figures restart, so that the weight is
 * that of the counts since. The bursts go on where they are: each CPU's
 * cycle stays whole, and no timer is cancelled and started again.
 * Nothing before the timers are set up.
 */
void kpgo_entry_reset(void)
{
	mutex_lock(&kpgo_entry_lock);
	if (kpgo_entry_ready) {
		cpus_read_lock();
		on_each_cpu(kpgo_entry_restart_cpu, NULL, 1);
		cpus_read_unlock();
	}
	mutex_unlock(&kpgo_entry_lock);
}

/*
 * pgo/entry_sampling: the settings, then per online CPU the bursts, the
 * time in them and the time since the figures started (local_clock()),
 * then the share of time in bursts and the weight that scales the counts
 * of the entry-sampled code to all the time (llvm-profdata merge
 * --weighted-input=WEIGHT,FILE; 0 when nothing was counted). A CPU gone
 * offline takes its figures with it.
 */
static int kpgo_entry_show(struct seq_file *m, void *unused)
{
	u64 all_ns = 0, all_burst_ns = 0;
	int cpu;

	mutex_lock(&kpgo_entry_lock);
	seq_printf(m, "period_us=%u burst_us=%u\n", kpgo_entry_period_us, kpgo_entry_burst_us);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct kpgo_entry_cpu *this = per_cpu_ptr(&kpgo_entry_cpu, cpu);
		u64 now = local_clock(), burst_ns = READ_ONCE(this->burst_ns);
		u64 since = READ_ONCE(this->since), ns = now > since ? now - since : 0;

		/* A burst under way counts up to now. */
		if (per_cpu(kpgo_entry_burst, cpu)) {
			u64 switched = READ_ONCE(this->switched);

			burst_ns += now > switched ? now - switched : 0;
		}
		burst_ns = min(burst_ns, ns);
		seq_printf(m, "cpu%d bursts=%llu burst_ns=%llu ns=%llu\n", cpu,
			   READ_ONCE(this->bursts), burst_ns, ns);
		all_ns += ns;
		all_burst_ns += burst_ns;
	}
	cpus_read_unlock();
	mutex_unlock(&kpgo_entry_lock);
	seq_printf(m, "burst_ppm=%llu weight=%llu\n",
		   all_ns ? mul_u64_u64_div_u64(all_burst_ns, 1000000, all_ns) : 0,
		   all_burst_ns ? div64_u64(all_ns + all_burst_ns / 2, all_burst_ns) : 0);
	return 0;
}

static int kpgo_entry_open(struct inode *inode, struct file *file)
{
	return single_open(file, kpgo_entry_show, NULL);
}

/*
 * "PERIOD_US BURST_US": new settings, every CPU's figures restarted. Bad
 * settings are -EINVAL and change nothing.
 */
static ssize_t kpgo_entry_write(struct file *file, const char __user *buf, size_t len,
				loff_t *ppos)
{
	unsigned int period_us, burst_us;
	char text[32], *period, *burst;
	int ret;

	if (!len || len >= sizeof(text))
		return -EINVAL;
	if (copy_from_user(text, buf, len))
		return -EFAULT;
	text[len] = '\0';
	if (strlen(text) != len)
		return -EINVAL;
	period = strim(text);
	burst = strchr(period, ' ');
	if (!burst)
		return -EINVAL;
	*burst++ = '\0';
	ret = kstrtouint(period, 10, &period_us);
	if (!ret)
		ret = kstrtouint(skip_spaces(burst), 10, &burst_us);
	if (!ret && !KPGO_ENTRY_VALID(period_us, burst_us))
		ret = -EINVAL;
	if (ret)
		return ret;
	mutex_lock(&kpgo_entry_lock);
	if (kpgo_entry_ready)
		kpgo_entry_apply(period_us, burst_us);
	else
		ret = -ENODEV;
	mutex_unlock(&kpgo_entry_lock);
	return ret ? ret : len;
}

static const struct file_operations kpgo_entry_fops = {
	.owner = THIS_MODULE,
	.open = kpgo_entry_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = kpgo_entry_write,
};

/*
 * After kpgo_init() made pgo/: the timers, started on every CPU as it
 * comes online, and the settings file. Bad boot settings fall back to
 * Kconfig's.
 */
int __init kpgo_entry_init(void)
{
	struct dentry *dir;
	int cpu, ret;

	if (!KPGO_ENTRY_VALID(kpgo_entry_period_us, kpgo_entry_burst_us)) {
		pr_err("kpgo.entry_period_us=%u kpgo.entry_burst_us=%u: a period of 1 to %u us, and a burst of 0, the period, or between with it and the gap at least %u us; Kconfig's %u and %u instead\n",
		       kpgo_entry_period_us, kpgo_entry_burst_us, KPGO_ENTRY_MAX_PERIOD_US,
		       KPGO_ENTRY_MIN_US, CONFIG_PGO_CLANG_SAMPLING_ENTRY_PERIOD_US,
		       CONFIG_PGO_CLANG_SAMPLING_ENTRY_BURST_US);
		kpgo_entry_period_us = CONFIG_PGO_CLANG_SAMPLING_ENTRY_PERIOD_US;
		kpgo_entry_burst_us = CONFIG_PGO_CLANG_SAMPLING_ENTRY_BURST_US;
	}
	for_each_possible_cpu(cpu) {
		struct kpgo_entry_cpu *this = per_cpu_ptr(&kpgo_entry_cpu, cpu);

		hrtimer_setup(&this->timer, kpgo_entry_switch, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		prandom_seed_state(&this->gaps, get_random_u64());
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pgo/entry:online", kpgo_entry_cpu_online,
				kpgo_entry_cpu_offline);
	if (ret < 0)
		return ret;
	mutex_lock(&kpgo_entry_lock);
	kpgo_entry_ready = true;
	mutex_unlock(&kpgo_entry_lock);
	dir = debugfs_lookup("pgo", NULL);
	debugfs_create_file("entry_sampling", 0600, dir, NULL, &kpgo_entry_fops);
	dput(dir);
	return 0;
}
#endif

#ifdef CONFIG_PGO_CLANG_RUST_APART
/*
 * The version word of the Rust objects built into vmlinux, whose records
 * are apart: kbuild renames theirs (a COMDAT) to this. This weak one, 0,
 * stands in when none is instrumented, and kpgo then serves nothing apart.
 */
u64 __llvm_profile_raw_version_rust __weak;
#endif

#ifdef CONFIG_PGO_CLANG_COUNTER_RELOCATION
/*
 * vmlinux's counter bias: the one definition that the weak hidden copy in
 * every instrumented object resolves to. Read at the entry of every
 * instrumented function, hence read-mostly.
 */
u64 __llvm_profile_counter_bias __read_mostly;

/*
 * After an epoch switch moved every bias: waits until no update that
 * loaded an old bias is still under way, but for an activation that sleeps
 * in a call (Documentation/dev-tools/pgo.rst). synchronize_rcu()
 * covers code that cannot sleep (NMI, hardirq, softirq, preemption or
 * interrupts off) where RCU is watching, synchronize_rcu_tasks() a task
 * preempted between its load of the bias and its update (the same as
 * synchronize_rcu() without preemption). Instrumented code where RCU is
 * not watching (a CPU going offline, past its last report) may update
 * the old set later: late updates, counted, not lost.
 */
void kpgo_wait_for_old_bias(void)
{
	synchronize_rcu();
	synchronize_rcu_tasks();
}

/*
 * kpgo_persist=NAME: vmlinux's counters live in the reserve_mem= region
 * NAME (Documentation/dev-tools/pgo.rst), so that the next boot, after a
 * panic, a hang or a reset that keeps memory, serves their counts.
 */
static char kpgo_persist_name[16] __initdata;
static void *kpgo_region;
static size_t kpgo_region_used;

static int __init kpgo_persist_setup(char *name)
{
	if (strscpy(kpgo_persist_name, name) < 0) {
		pr_err("kpgo_persist=%s: a reserve_mem name has at most 15 characters\n",
		       name);
		kpgo_persist_name[0] = '\0';
	}
	return 1;
}
__setup("kpgo_persist=", kpgo_persist_setup);

/*
 * Writes [start, start + len) of the region back to memory from every
 * cache: CLFLUSH evicts a line from the caches of every CPU (a reset may
 * drop dirty lines). Works from early boot on, and takes no lock.
 */
void kpgo_flush_range(void *start, size_t len)
{
#ifdef CONFIG_X86
	while (len) {
		unsigned int chunk = min_t(size_t, len, SZ_1G);

		clflush_cache_range(start, chunk);
		start += chunk;
		len -= chunk;
	}
#endif
}

/* Seconds since 1970: lockless, from a panic too. */
u64 kpgo_wall_seconds(void)
{
	return ktime_get_real_seconds();
}

static struct notifier_block kpgo_persist_panic_block;

/*
 * At a panic or a reboot: how and when the boot ended goes into the
 * region, and the region out of every cache, including the lines that
 * CPUs stopped by the panic still hold. Takes no lock.
 */
static int kpgo_persist_end(struct notifier_block *nb, unsigned long event,
			    void *data)
{
	kpgo_persist_mark_end(nb == &kpgo_persist_panic_block);
	kpgo_flush_range(kpgo_region, kpgo_region_used);
	return NOTIFY_DONE;
}

/* Last: what the other notifiers count is in the region too. */
static struct notifier_block kpgo_persist_panic_block = {
	.notifier_call = kpgo_persist_end,
	.priority = INT_MIN,
};

static struct notifier_block kpgo_persist_reboot_block = {
	.notifier_call = kpgo_persist_end,
	.priority = INT_MIN,
};

/*
 * Called by start_kernel() once the command line is parsed, which is
 * when reserve_mem= regions exist: on the boot CPU with interrupts off,
 * before any other CPU runs. The region is memblock memory, in the
 * direct map.
 */
void __init pgo_persist_counters(void)
{
	phys_addr_t start, size;
	long used;

	if (!kpgo_persist_name[0])
		return;
	if (!reserve_mem_find_by_name(kpgo_persist_name, &start, &size)) {
		pr_err("kpgo_persist=%s: no such reserve_mem= region: counters not kept\n",
		       kpgo_persist_name);
		return;
	}
	used = kpgo_persist_counters(__va(start), size, start,
				     kpgo_persist_name);
	if (used < 0)
		return;
	kpgo_region = __va(start);
	kpgo_region_used = used;
	atomic_notifier_chain_register(&panic_notifier_list,
				       &kpgo_persist_panic_block);
	register_reboot_notifier(&kpgo_persist_reboot_block);
}
#endif

/*
 * pgo/'s snapshot and command files (runtime/kernel_api/debugfs.rs), through
 * debugfs's full proxy: debugfs_create_file() is a macro that picks the
 * proxy by the type of fops, which Rust cannot call.
 */
struct dentry *kpgo_debugfs_create_file(const char *name, umode_t mode,
					struct dentry *parent, void *data,
					const struct file_operations *fops)
{
	return debugfs_create_file(name, mode, parent, data, fops);
}

/*
 * Readers of modules' profiles (debugfs reads, live layouts, epoch
 * passes) hold an SRCU read-side section, which may sleep: over a module
 * of a million counters they reschedule every few thousand, and a
 * module's unload waits for them (runtime/kernel_api.rs, ReadSection).
 */
DEFINE_STATIC_SRCU(kpgo_read_srcu);

int kpgo_read_section_enter(void)
{
	return srcu_read_lock(&kpgo_read_srcu);
}

void kpgo_read_section_exit(int index)
{
	srcu_read_unlock(&kpgo_read_srcu, index);
}

void kpgo_wait_for_read_sections(void)
{
	synchronize_srcu(&kpgo_read_srcu);
}

/* Between two chunks of a long profile serialization. */
void kpgo_cond_resched(void)
{
	cond_resched();
}

/*
 * vmlinux's names chunks (zlib, one per translation unit) are inflated
 * when a module's profile names vmlinux functions, to find the chunks
 * that hold their names: the workspace the inflater needs,
 */
size_t kpgo_inflate_workspace_size(void)
{
	return zlib_inflate_workspacesize();
}

/* and one whole zlib stream inflated: the bytes written, or -1. */
long kpgo_inflate(const void *in, size_t in_len, void *out, size_t out_len,
		  void *workspace)
{
	struct z_stream_s stream = {
		.next_in = in,
		.avail_in = in_len,
		.next_out = out,
		.avail_out = out_len,
		.workspace = workspace,
	};
	int status;

	if (zlib_inflateInit(&stream) != Z_OK)
		return -1;
	status = zlib_inflate(&stream, Z_FINISH);
	zlib_inflateEnd(&stream);
	return status == Z_STREAM_END ? (long)stream.total_out : -1;
}

/*
 * pgo/live/ files (runtime/live.rs): pages of counters, referenced so that
 * a mapping keeps them after their module is gone, and zeroed pages for
 * the rest of the file. The counters are in vmlinux's image, in module
 * memory (vmalloc) or in a reserve_mem= region (the direct map); anything
 * else has no page here.
 */
struct page *kpgo_get_page_of(const void *addr)
{
	struct page *page;

	if (is_vmalloc_or_module_addr(addr))
		page = vmalloc_to_page(addr);
	else if (__is_kernel((unsigned long)addr))
		page = virt_to_page(lm_alias(addr));
	else if (virt_addr_valid(addr))
		page = virt_to_page(addr);
	else
		return NULL;
	/* A page being freed, or not yet in use, is not handed out. */
	if (page && !get_page_unless_zero(page))
		return NULL;
	return page;
}

struct page *kpgo_alloc_zeroed_page(void)
{
	return alloc_page(GFP_KERNEL | __GFP_ZERO);
}

void kpgo_put_page(struct page *page)
{
	put_page(page);
}

void *kpgo_page_address(struct page *page)
{
	return page_address(page);
}

/*
 * A live alias of the counter pages for read(): the linear map of a
 * module's pages goes away for a moment when the module's memory is freed
 * (vfree() resets its permissions), while the file may still be read.
 * Writable, as Rust's atomics ask of what they load; nothing writes it.
 */
void *kpgo_vmap_pages(struct page **pages, unsigned int count)
{
	return vmap(pages, count, VM_MAP, PAGE_KERNEL);
}

void kpgo_vunmap(const void *addr)
{
	vunmap(addr);
}

/* The file's size, for fstat(), once its pages are known. */
void kpgo_set_file_size(struct file *file, loff_t size)
{
	struct inode *inode = file_inode(file);

	inode_lock(inode);
	i_size_write(inode, size);
	inode_unlock(inode);
}

/*
 * A live file's mapping takes its pages from the open file at each fault
 * (runtime/kernel_api.rs), as special PTEs of a VM_PFNMAP | VM_IO mapping:
 * get_user_pages() refuses them, so /proc/<pid>/mem, process_vm_readv(),
 * ptrace and vmsplice() never reach the pages through the direct map,
 * which vfree() makes not-present for a moment when a module goes (reads
 * go through a vmap alias for that reason), and core dumps skip them. The
 * open file holds a reference on each page, and the mapping holds the
 * file: the pages stay while they are mapped.
 */
static vm_fault_t kpgo_live_fault(struct vm_fault *vmf)
{
	struct page *page = kpgo_file_page(vmf->vma->vm_file->private_data,
					   vmf->pgoff);

	if (!page)
		return VM_FAULT_SIGBUS;
	return vmf_insert_pfn(vmf->vma, vmf->address, page_to_pfn(page));
}

static const struct vm_operations_struct kpgo_live_vm_ops = {
	.fault = kpgo_live_fault,
};

/*
 * The mapping is read only and not executable for good (no mprotect() to
 * either), never grows, and lies inside the file.
 */
int kpgo_mmap_prepare(struct vm_area_struct *vma, unsigned long file_pages)
{
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EACCES;
	if (vma->vm_pgoff >= file_pages ||
	    vma_pages(vma) > file_pages - vma->vm_pgoff)
		return -EINVAL;
	vm_flags_mod(vma, VM_DONTEXPAND | VM_PFNMAP | VM_IO | VM_DONTDUMP,
		     VM_MAYWRITE | VM_MAYEXEC);
	vma->vm_ops = &kpgo_live_vm_ops;
	return 0;
}

/* A profile read that has to start again stops for a fatal signal. */
bool kpgo_fatal_signal_pending(void)
{
	return fatal_signal_pending(current);
}

#ifdef CONFIG_MODULES
/*
 * A hook's lookup of a module's descriptor runs in an RCU-sched read-side
 * section, so that a descriptor withdrawn at unload is freed (after a
 * grace period) only once every hook that found it has returned. Its end
 * takes a reschedule that became due inside it, as any preempt_enable()
 * does, so that a wakeup is not left pending until the next interrupt on
 * PREEMPT and PREEMPT_RT: the scheduler then runs outside the section,
 * with the hook's work done, as if the task had been preempted on the
 * hook's return, and a hook that the scheduler's code calls runs with
 * preemption off, so it never reschedules. Neither function is traced
 * nor probed: a tracer's or a kprobe's handler is instrumented code too,
 * and would run inside every module hook call, NMI included.
 */
void notrace kpgo_hook_enter(void)
{
	rcu_read_lock_sched_notrace();
}
NOKPROBE_SYMBOL(kpgo_hook_enter);

void notrace kpgo_hook_exit(void)
{
	rcu_read_unlock_sched_notrace();
}
NOKPROBE_SYMBOL(kpgo_hook_exit);

/*
 * A module's GOING notification waits for every hook and read section
 * that may still use the module's descriptor or memory: since the RCU
 * flavours were consolidated (v4.20), synchronize_rcu() waits for
 * RCU-sched readers, the hooks' sections, too; the read sections are
 * kpgo_read_srcu's.
 */
void kpgo_wait_for_readers(void)
{
	synchronize_srcu(&kpgo_read_srcu);
	synchronize_rcu();
}

/*
 * Where module memory is allocated, the module map's range: all of it on
 * x86_64, the one architecture that selects ARCH_SUPPORTS_PGO_CLANG.
 */
const unsigned long kpgo_module_area_start = MODULES_VADDR;
const unsigned long kpgo_module_area_end = MODULES_END;

/* kpgo's own budget, not printk_ratelimit()'s shared one. */
static DEFINE_RATELIMIT_STATE(kpgo_unload_ratelimit, 5 * HZ, 10);

bool kpgo_unload_warning_ratelimit(void)
{
	return __ratelimit(&kpgo_unload_ratelimit);
}

/* The hooks of runtime/hooks.rs, which modules' code calls too: targets */
EXPORT_SYMBOL(__llvm_profile_instrument_target);
/* and memop sizes. */
EXPORT_SYMBOL(__llvm_profile_instrument_memop);
#endif

/*
 * The hooks themselves; their Rust callees sit in .kprobes.text
 * (runtime/hooks.rs). A probe's handler inside a hook would run
 * instrumented code in every context the hooks run in.
 */
NOKPROBE_SYMBOL(__llvm_profile_instrument_target);
NOKPROBE_SYMBOL(__llvm_profile_instrument_memop);
