// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of kpgo's runtime (kpgo.rs): its initcall, what the Rust
 * side needs of static inlines and macros (rescheduling, preemption and
 * RCU read-side sections, the module area), the rate limit of its unload
 * warnings, and
 * the export of the Rust hooks to modules (Rust built into the kernel has
 * no way to export a symbol in 6.12).
 *
 * Built without profiling, sanitizers or stack protector (Kbuild): the
 * hooks call kpgo_hook_enter() and kpgo_hook_exit().
 */
#include <linux/export.h>
#include <linux/init.h>
#include <linux/kprobes.h>
#include <linux/preempt.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/pgtable.h>

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
	return kpgo_init();
}
fs_initcall(kpgo_initcall);

/* Between two chunks of a long profile serialization. */
void kpgo_cond_resched(void)
{
	cond_resched();
}

#ifdef CONFIG_MODULES
/*
 * A hook's lookup of a module's descriptor runs with preemption off: an
 * RCU-sched read-side section, so that a descriptor withdrawn at unload is
 * freed (after a grace period) only once every hook that found it has
 * returned. No reschedule on the way out: that would call the scheduler,
 * instrumented code, from inside a hook; a pending one is taken at the
 * next preemption point. Neither is traced nor probed: a tracer's or a
 * kprobe's handler is instrumented code too, and would run inside every
 * module hook call, NMI included.
 */
void notrace kpgo_hook_enter(void)
{
	preempt_disable_notrace();
}
NOKPROBE_SYMBOL(kpgo_hook_enter);

void notrace kpgo_hook_exit(void)
{
	preempt_enable_no_resched_notrace();
}
NOKPROBE_SYMBOL(kpgo_hook_exit);

/* A profile read's section: what it serializes is freed after it. */
void kpgo_read_lock(void)
{
	rcu_read_lock();
}

void kpgo_read_unlock(void)
{
	rcu_read_unlock();
}

/* Where module memory is allocated: the module map's range. */
const unsigned long kpgo_module_area_start = MODULES_VADDR;
const unsigned long kpgo_module_area_end = MODULES_END;

/* kpgo's own budget, not printk_ratelimit()'s shared one. */
static DEFINE_RATELIMIT_STATE(kpgo_unload_ratelimit, 5 * HZ, 10);

bool kpgo_unload_warning_ratelimit(void)
{
	return __ratelimit(&kpgo_unload_ratelimit);
}

KPGO_HOOK(instrument_target);
EXPORT_SYMBOL(__llvm_profile_instrument_target);

KPGO_HOOK(instrument_memop);
EXPORT_SYMBOL(__llvm_profile_instrument_memop);
#endif
