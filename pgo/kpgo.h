/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions kpgo's C file (glue.c) and its Rust crate
 * (kpgo.rs, runtime/) call across the language boundary.
 */
#ifndef _KERNEL_PGO_KPGO_H
#define _KERNEL_PGO_KPGO_H

#include <linux/types.h>

struct module;

/* Rust: kpgo.rs. Sets up the registry, debugfs and the module notifier. */
int kpgo_init(void);

/*
 * Rust: runtime/hooks.rs. KPGO_HOOK(name) declares __llvm_profile_<name>,
 * one of the value-profiling hooks clang's code calls (instrument_target,
 * instrument_memop): the value or size, the function's data record and
 * the value site's index. glue.c exports them to modules.
 */
#define KPGO_HOOK(name) \
	void __llvm_profile_##name(u64 value, void *data, u32 index)

#ifdef CONFIG_MODULES
/* C: glue.c, called by runtime/kernel_api.rs. */
void kpgo_walk_modules(void *context);
bool kpgo_unload_warning_ratelimit(void);

/* Rust: runtime/kernel_api.rs. Called by kpgo_walk_modules(). */
void kpgo_visit_module(struct module *mod, void *context);
#endif

#endif /* _KERNEL_PGO_KPGO_H */
