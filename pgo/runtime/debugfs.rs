// SPDX-License-Identifier: GPL-2.0

//! The debugfs interface: `/sys/kernel/debug/pgo/`.
//!
//! - `vmlinux.profraw`, `<module>.profraw` (0400): the raw profile,
//!   serialized at `open()` (a module's kept profiles first, then the live
//!   one). Read only, with no write handler: under `lockdown=integrity`
//!   debugfs refuses files with more than 0444 or with a write handler,
//!   and profiles must stay readable there. Opening one for writing is
//!   refused (`EACCES`), so nothing is serialized for it.
//! - `reset` (0200): `1` or `all` resets every object (kept profiles
//!   too), `vmlinux` the kernel image, `module:<name>` the module
//!   `<name>` whatever its name, `<name>` the module `<name>` when it is
//!   not `1`, `all` or `vmlinux` and does not start with `module:`;
//!   anything else (unknown name, empty, over 64 bytes, not UTF-8) is
//!   `-EINVAL` and changes nothing. One trailing newline is allowed. It
//!   reads as empty, so that a recursive copy of the directory works.
//!   Under lockdown debugfs refuses it: no resets there.
//! - `stats` (0400): `key=value` figures, a first line for the runtime,
//!   then one per object (see `Registry::stats`).
//!
//! The files carry kernel addresses, hence root only.

use kernel::c_str;
use kernel::prelude::*;

use super::kernel_api::{CommandSink, Dir, SnapshotSource};
use super::registry;

/// `<name>.profraw`; its key is the index of its registry entry.
pub(crate) struct ProfileFile;

impl SnapshotSource for ProfileFile {
    fn snapshot(key: usize) -> Result<VVec<u8>> {
        registry::lock()?.profile(key)
    }
}

/// `stats`.
struct StatsFile;

impl SnapshotSource for StatsFile {
    fn snapshot(_key: usize) -> Result<VVec<u8>> {
        registry::lock()?.stats()
    }
}

/// `reset`.
struct ResetFile;

impl CommandSink for ResetFile {
    fn command(command: &[u8]) -> Result {
        registry::lock()?.reset(command)
    }
}

/// Creates `reset` and `stats` in `dir`.
pub(crate) fn create_fixed_files(dir: &Dir) -> Result {
    dir.command_file::<ResetFile>(c_str!("reset"))?;
    dir.snapshot_file::<StatsFile>(c_str!("stats"), 0)
}
