// SPDX-License-Identifier: GPL-2.0
/*
 * Experiment (not in the series): the burst flag that kpgo's
 * entry-sampling plugin (llvm/entry-sampling.cpp) tests where a function
 * can be entered from outside a burst, and a per-CPU hrtimer that sets it
 * for pgo_entry_burst.burst_us of every pgo_entry_burst.period_us (boot
 * parameters; both 0: never set, every call goes to its uninstrumented
 * twin; burst_us equal to period_us: always set).  Without
 * CONFIG_HIGH_RES_TIMERS the timer expires at ticks: give both in whole
 * ticks.  /sys/kernel/debug/pgo_entry_burst says, per CPU, how many
 * bursts there were and how long they and the whole run lasted
 * (local_clock()), and the weight that scales the profile to all the
 * time: what llvm-profdata merge --weighted-input takes.
 * bench/experiments/entry-sampling/build adds this file to an
 * instrumented tree built with the plugin.
 */
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>

DEFINE_PER_CPU(u8, kpgo_entry_burst);
EXPORT_PER_CPU_SYMBOL(kpgo_entry_burst);

static unsigned int period_us, burst_us;
module_param_named(period_us, period_us, uint, 0444);
module_param_named(burst_us, burst_us, uint, 0444);

/* Written by its CPU's timer only; read racily by the stats file. */
struct kpgo_entry_cpu {
	struct hrtimer timer;
	u64 started, switched, burst_ns, bursts;
};

static DEFINE_PER_CPU(struct kpgo_entry_cpu, kpgo_entry_cpu);

static enum hrtimer_restart kpgo_entry_switch(struct hrtimer *timer)
{
	struct kpgo_entry_cpu *cpu = container_of(timer, struct kpgo_entry_cpu, timer);
	u8 on = !this_cpu_read(kpgo_entry_burst);
	u64 now = local_clock();

	if (on)
		cpu->bursts++;
	else
		cpu->burst_ns += now - cpu->switched;
	cpu->switched = now;
	this_cpu_write(kpgo_entry_burst, on);
	hrtimer_forward_now(timer, us_to_ktime(on ? burst_us : period_us - burst_us));
	return HRTIMER_RESTART;
}

static int kpgo_entry_cpu_online(unsigned int cpu)
{
	struct kpgo_entry_cpu *this = this_cpu_ptr(&kpgo_entry_cpu);

	this->started = this->switched = local_clock();
	if (burst_us >= period_us) {
		this_cpu_write(kpgo_entry_burst, !!burst_us);
		return 0;
	}
	hrtimer_setup(&this->timer, kpgo_entry_switch, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	hrtimer_start(&this->timer, us_to_ktime(period_us - burst_us), HRTIMER_MODE_REL_PINNED);
	return 0;
}

static int kpgo_entry_cpu_offline(unsigned int cpu)
{
	if (burst_us < period_us)
		hrtimer_cancel(&this_cpu_ptr(&kpgo_entry_cpu)->timer);
	this_cpu_write(kpgo_entry_burst, 0);
	return 0;
}

static int kpgo_entry_stats_show(struct seq_file *m, void *unused)
{
	u64 all_ns = 0, all_burst_ns = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		struct kpgo_entry_cpu *this = per_cpu_ptr(&kpgo_entry_cpu, cpu);
		u64 now = local_clock(), burst_ns = READ_ONCE(this->burst_ns);
		u64 ns = now - READ_ONCE(this->started);

		/* A burst under way counts up to now. */
		if (per_cpu(kpgo_entry_burst, cpu))
			burst_ns += now - READ_ONCE(this->switched);
		seq_printf(m, "cpu%d bursts=%llu burst_ns=%llu ns=%llu\n", cpu,
			   READ_ONCE(this->bursts), burst_ns, ns);
		all_ns += ns;
		all_burst_ns += burst_ns;
	}
	seq_printf(m, "period_us=%u burst_us=%u weight=%llu\n", period_us, burst_us,
		   all_burst_ns ? div64_u64(all_ns + all_burst_ns / 2, all_burst_ns) : 0);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpgo_entry_stats);

static int __init kpgo_entry_init(void)
{
	debugfs_create_file("pgo_entry_burst", 0400, NULL, NULL, &kpgo_entry_stats_fops);
	if (!burst_us)
		return 0;
	return cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "kpgo/entry:online",
				 kpgo_entry_cpu_online, kpgo_entry_cpu_offline) < 0 ? -EINVAL : 0;
}
late_initcall(kpgo_entry_init);
