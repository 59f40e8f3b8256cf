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
//! - `stats` (0400): `key=value` figures, space separated, a first line
//!   for the runtime, then one per object; keys never change meaning, new
//!   ones are appended:
//!
//!   ```text
//!   (each line of the file is one line here, wrapped at "\")
//!   runtime module_slots=256 module_slots_used=N modules_profiled=N \
//!     modules_refused=N descriptors=N descriptor_bytes=N kept_bytes=N \
//!     kept_limit_bytes=N
//!   object=<name> state=live|unloaded functions=N counters=N \
//!     value_sites=N value_nodes_used=N value_nodes=N values_dropped=N \
//!     kept_profiles=N kept_bytes=N lost_profiles=N
//!   ```
//!
//!   `module_slots_used` counts the modules profiled now;
//!   `modules_profiled` and `modules_refused` the instrumented module
//!   loads since boot that were and were not profiled; `descriptors` and
//!   `descriptor_bytes` the module descriptors allocated for good (one
//!   per profiled load); `kept_bytes` the kept profiles of unloaded
//!   modules, at most `kept_limit_bytes`. An unloaded module's line has
//!   the figures of its last load.
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
