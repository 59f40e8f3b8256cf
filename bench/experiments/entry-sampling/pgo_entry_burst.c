// SPDX-License-Identifier: GPL-2.0
/*
 * Experiment (not in the series): the burst flag that kpgo's
 * entry-sampling plugin (llvm/entry-sampling.cpp) tests at every
 * instrumented function's entry, and a per-CPU hrtimer that sets it for
 * pgo_entry_burst.burst_us of every pgo_entry_burst.period_us (boot
 * parameters; both 0: never set, every call goes to its uninstrumented
 * twin; burst_us equal to period_us: always set).  bench/experiments/entry-sampling/build adds this file to
 * an instrumented tree built with the plugin.
 */
#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>

DEFINE_PER_CPU(u8, kpgo_entry_burst);
EXPORT_PER_CPU_SYMBOL(kpgo_entry_burst);

static unsigned int period_us, burst_us;
module_param_named(period_us, period_us, uint, 0444);
module_param_named(burst_us, burst_us, uint, 0444);

static DEFINE_PER_CPU(struct hrtimer, kpgo_entry_timer);

static enum hrtimer_restart kpgo_entry_switch(struct hrtimer *timer)
{
	u8 on = !this_cpu_read(kpgo_entry_burst);

	this_cpu_write(kpgo_entry_burst, on);
	hrtimer_forward_now(timer, us_to_ktime(on ? burst_us : period_us - burst_us));
	return HRTIMER_RESTART;
}

static int kpgo_entry_cpu_online(unsigned int cpu)
{
	struct hrtimer *timer = this_cpu_ptr(&kpgo_entry_timer);

	if (burst_us >= period_us) {
		this_cpu_write(kpgo_entry_burst, !!burst_us);
		return 0;
	}
	hrtimer_setup(timer, kpgo_entry_switch, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	hrtimer_start(timer, us_to_ktime(period_us - burst_us), HRTIMER_MODE_REL_PINNED);
	return 0;
}

static int kpgo_entry_cpu_offline(unsigned int cpu)
{
	if (burst_us < period_us)
		hrtimer_cancel(this_cpu_ptr(&kpgo_entry_timer));
	this_cpu_write(kpgo_entry_burst, 0);
	return 0;
}

static int __init kpgo_entry_init(void)
{
	if (!burst_us)
		return 0;
	return cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "kpgo/entry:online",
				 kpgo_entry_cpu_online, kpgo_entry_cpu_offline) < 0 ? -EINVAL : 0;
}
late_initcall(kpgo_entry_init);
