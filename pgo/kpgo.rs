// SPDX-License-Identifier: GPL-2.0

//! kpgo: clang's instrumentation-PGO runtime for the kernel.
//!
//! A kernel built with `CONFIG_PGO_CLANG` has every C object compiled with
//! `-fprofile-generate`. This runtime provides the value-profiling hooks the
//! compiler calls, and serves the counters of vmlinux and of every loaded
//! module as raw profiles in debugfs (`/sys/kernel/debug/pgo/`), ready for
//! `llvm-profdata merge`.
//!
//! - [`profile`]: the pure core (layouts, descriptor, section checks,
//!   writer, value profiling), shared with the host test shell.
//! - `runtime`: the kernel side: the object registry, the hooks, debugfs,
//!   and the safe wrappers of the C interfaces.
//!
//! It is built in, and set up by [`kpgo_init`] at `fs_initcall` time
//! (`glue.c`): after debugfs, before most drivers, and before any
//! module can be loaded.

use kernel::ffi::c_int;
use kernel::prelude::*;

pub mod profile;
mod runtime;

/// The prefix of kpgo's log lines, `kpgo: `.
const __LOG_PREFIX: &[u8] = b"kpgo\0";

/// Sets kpgo up; called once, by `kpgo_initcall()` in `glue.c`.
#[no_mangle]
pub extern "C" fn kpgo_init() -> c_int {
    match runtime::init() {
        Ok(()) => 0,
        Err(error) => {
            pr_err!("set-up failed ({error:?}); no profile is exposed\n");
            error.to_errno()
        }
    }
}
