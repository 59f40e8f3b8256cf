// SPDX-License-Identifier: GPL-2.0

//! The kernel side of kpgo.
//!
//! - `objects`: vmlinux's descriptor (and that of its Rust records, when
//!   rustc writes another raw version than clang); `objects/modules.rs`,
//!   the module map the hooks look a record's module up in (constant
//!   time), and module descriptors, freed a grace period after their
//!   module's unload.
//! - `hooks`: the functions the compiler's instrumentation calls.
//! - `registry`: vmlinux and every module ever loaded, by name: entries,
//!   their files, reset and stats; `registry/modules.rs`, module
//!   registration (fallible steps first, publication last) and unload,
//!   saved profiles of unloaded modules, one per build, merged into.
//! - `snapshot`: a profile serialized in one piece, without a lock.
//! - `callees`: the other objects' functions a profile names, looked up
//!   when it is read.
//! - `debugfs`: `pgo/<object>.profraw`, `pgo/reset`, `pgo/stats`.
//! - `live`: `pgo/live/<object>.profraw`, whose counter pages are the
//!   object's counters, to read or map.
//! - `epochs` (counter relocation): `pgo/epoch`, which switches every
//!   object's counters to their other set, and
//!   `pgo/epochs/<object>.profraw`, the last finished epoch.
//! - `persist` (counter relocation): vmlinux's counters in a
//!   `reserve_mem=` region that a warm reboot keeps, and
//!   `pgo/previous/vmlinux.profraw`, the previous boot's profile.
//! - `kernel_api`: the C interfaces that `kernel` has no abstraction for,
//!   behind safe wrappers (the mappable live file and its pages, the
//!   profile reads' SRCU sections, which may sleep, and be skipped for
//!   vmlinux);
//!   `kernel_api/modules.rs`, those only module support has (what kpgo
//!   reads of a `struct module`, the module area, the hooks'
//!   preemption-off sections, grace periods); with `glue.c`, the C side.
//!   Debugfs directories and files are
//!   `kernel_api/debugfs.rs`; module notifiers are `kernel`'s
//!   (`kernel::module_notifier`).
//!
//! What exists only for modules is in the `modules.rs` file of each
//! folder, declared `#[cfg(CONFIG_MODULES)]`: without module support the
//! rest builds alone, with vmlinux as the only object.

use kernel::prelude::*;

mod callees;
mod debugfs;
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
mod epochs;
mod hooks;
mod kernel_api;
mod live;
mod objects;
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
mod persist;
mod registry;
mod snapshot;

/// Checks vmlinux's profile version and sets up the registry and its
/// files. A version whose layout is not the one the hooks read
/// (`hooks::VMLINUX_LAYOUT`, Kconfig's) is logged once and exposes nothing.
pub(crate) fn init() -> Result {
    match objects::vmlinux().version() {
        Err(error) => {
            pr_err!("{}; no profile is exposed\n", format_args!("{error}"));
            return Ok(());
        }
        Ok(version) if !core::ptr::eq(version.layout(), hooks::VMLINUX_LAYOUT) => {
            pr_err!(
                "vmlinux's records are raw version {}, but the hooks read version {}'s (CONFIG_PGO_CLANG_RAW_VERSION); no profile is exposed\n",
                version.layout().version,
                hooks::VMLINUX_LAYOUT.version
            );
            return Ok(());
        }
        Ok(_) => {}
    }
    registry::init()
}
