// SPDX-License-Identifier: GPL-2.0

//! The kernel side of kpgo.
//!
//! - `objects`: vmlinux's descriptor and the lock-free lookup of the object
//!   that owns a data record, for the hooks.
//! - `hooks`: the functions the compiler's instrumentation calls.
//! - `registry`: vmlinux and every module ever loaded, by name; the module
//!   notifier; kept profiles of unloaded modules.
//! - `snapshot`: a profile serialized at `open()`, so that every read sees
//!   the same bytes.
//! - `debugfs`: `pgo/<object>.profraw`, `pgo/reset`, `pgo/stats`.

use kernel::prelude::*;

mod debugfs;
mod hooks;
mod objects;
mod registry;
mod snapshot;

/// Checks vmlinux's profile version and publishes the debugfs files. An
/// unsupported version is logged once and exposes nothing.
pub(crate) fn init() -> Result {
    if let Err(error) = objects::vmlinux().version() {
        pr_err!("{error}; no profile is exposed\n");
        return Ok(());
    }
    debugfs::create()?;
    registry::init()
}
