// SPDX-License-Identifier: GPL-2.0
/*
 * The value-profiling hooks are defined in Rust (runtime/hooks.rs); code
 * in instrumented modules calls them too. Rust built into the kernel has
 * no way to export a symbol in 6.12, hence this file.
 */
#include <linux/export.h>

#include "kpgo.h"

EXPORT_SYMBOL(__llvm_profile_instrument_target);
EXPORT_SYMBOL(__llvm_profile_instrument_memop);
