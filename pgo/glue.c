// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of kpgo's runtime (kpgo.rs): its initcall, the walk over the
 * modules loaded before it, the rate limit of its unload warnings, and the
 * export of the Rust hooks to modules (Rust built into the kernel has no
 * way to export a symbol in 6.12).
 */
#include <linux/export.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>

#ifdef CONFIG_MODULES
/* module_mutex and the list of modules */
#include "../../module/internal.h"
#endif

#include "kpgo.h"

/*
 * fs_initcall: after debugfs (core_initcall) and before the device and
 * driver initcalls, most of which are instrumented too; modules loaded
 * even earlier are found by kpgo_walk_modules().
 */
static int __init kpgo_initcall(void)
{
	return kpgo_init();
}
fs_initcall(kpgo_initcall);

#ifdef CONFIG_MODULES
/*
 * Calls kpgo_visit_module() with @context on each live module, holding
 * module_mutex: no module is freed meanwhile, and a live module stays
 * live (delete_module() marks it GOING under the mutex).
 *
 * A module still COMING is left out: either its COMING notification is
 * still to come, and kpgo's notifier (registered before this walk) gets
 * it, or it came before kpgo's notifier was registered, and then the load
 * may still fail after it (load_module() frees a module whose COMING
 * notifier chain failed without a GOING notification to notifiers that
 * never saw COMING): kpgo would keep a descriptor of freed memory. Such a
 * module is not profiled; only early boot can load one, and modules load
 * from the root file system, which comes later.
 */
void kpgo_walk_modules(void *context)
{
	struct module *mod;

	mutex_lock(&module_mutex);
	list_for_each_entry(mod, &modules, list) {
		if (mod->state == MODULE_STATE_LIVE)
			kpgo_visit_module(mod, context);
	}
	mutex_unlock(&module_mutex);
}

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
