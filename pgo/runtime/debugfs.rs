// SPDX-License-Identifier: GPL-2.0

//! The debugfs interface: `/sys/kernel/debug/pgo/`.
//!
//! - `vmlinux.profraw`, `<module>.profraw` (0400): the raw profile,
//!   serialized at `open()` (a module's saved profiles, one per build,
//!   then the live one), without a lock that module loading waits for
//!   (`snapshot`). Read only, with no write handler: under
//!   `lockdown=integrity` debugfs refuses files with more than 0444 or
//!   with a write handler, and profiles must stay readable there. Opening
//!   one for writing is refused (`EACCES`), so nothing is serialized for
//!   it.
//! - `live/vmlinux.profraw`, `live/<module>.profraw` (0400): the live
//!   object's profile (`live`), its counter pages the object's own, to
//!   read or to map read-only (not writable, not executable); no value
//!   profiles. Only while the module
//!   is loaded (`ENODEV`); a mapping keeps the pages, with the last counts,
//!   after an unload. Under lockdown debugfs refuses it (it has `mmap`).
//! - `reset` (0200): `1` or `all` resets every object (saved profiles
//!   freed too), `vmlinux` the kernel image, `module:<name>` the module
//!   `<name>` whatever its name, `<name>` the module `<name>` when it is
//!   not `1`, `all` or `vmlinux` and does not start with `module:`;
//!   anything else (unknown name, empty, over 64 bytes, not UTF-8) is
//!   `-EINVAL` and changes nothing. One trailing newline is allowed. It
//!   reads as empty, so that a recursive copy of the directory works.
//!   Under lockdown debugfs refuses it: no resets there.
//! - `epoch` (0200) and `epochs/<object>.profraw` (0400), with counter
//!   relocation: see `epochs`.
//! - `stats` (0400): `key=value` figures, space separated, a first line
//!   for the runtime, then one per object, vmlinux first, then modules in
//!   the order they first came:
//!
//!   ```text
//!   (each line of the file is one line here, wrapped at "\")
//!   runtime modules_live=N modules_profiled=N modules_refused=N \
//!     descriptors=N descriptor_bytes=N map_tables=N map_bytes=N \
//!     entries=N entry_bytes=N kept_profiles=N kept_bytes=N \
//!     kept_limit_bytes=N name_index_bytes=N \
//!     [epochs=N] \
//!     [persisted=0|1 previous=0|1 boot_late_updates=N] \
//!     [sampling_period=N sampling_recorded=N]
//!   object=<name> state=live|unloaded functions=N counters=N \
//!     value_sites=N value_nodes_used=N value_nodes=N values_dropped=N \
//!     kept_profiles=N kept_bytes=N lost_profiles=N kept_unloads=N \
//!     [epoch=N set=0|1 late_updates=N late_updates_total=N]
//!   ```
//!
//!   `modules_live` counts the modules profiled now; `modules_profiled`
//!   and `modules_refused` the instrumented module loads since boot that
//!   were and were not profiled; `descriptors` and `descriptor_bytes` the
//!   module descriptors allocated now (one per live module, with its
//!   reset baselines; freed a grace period after its unload);
//!   `map_tables` and `map_bytes` the hooks' module map, which only
//!   grows, to a fixed bound; `entries` and `entry_bytes` the entries, one
//!   per name ever loaded (and vmlinux's), never freed (their debugfs files
//!   aside); `kept_profiles` and `kept_bytes` the saved profiles of all
//!   modules, at most `kept_limit_bytes`; `name_index_bytes` the index
//!   of vmlinux's names that the first read naming a vmlinux function in
//!   another object's profile builds, 4 bytes per function of vmlinux,
//!   never freed (0 before). An object's `kept_profiles` and
//!   `kept_bytes` are its saved profiles (one per build), `kept_unloads`
//!   the unloads merged into them, `lost_profiles` those that were not
//!   (the limit, no memory, a layout that does not merge). An unloaded
//!   module's line has the figures of its last load.
//!
//!   With counter relocation: `epochs`, the switches completed, and per
//!   object its last finished `epoch`, the `set` its bias points to, and
//!   the late updates the last switch and all switches found (`epochs`);
//!   whether vmlinux's counters are in a `kpgo_persist=` region, whether
//!   the previous boot's profile is served, and the updates of the boot
//!   before the move that came in late (`persist`).
//!
//!   With sampled instrumentation, `sampling_period` and
//!   `sampling_recorded` say how many of a CPU's counter updates in C
//!   code the counts record: `sampling_recorded` of every
//!   `sampling_period` (Rust code records all of them).
//!
//! The files carry kernel addresses, hence root only.

use super::kernel_api::debugfs::{Command, Dir, Snapshot};
use kernel::c_str;
use kernel::prelude::*;

use super::{registry, snapshot};

/// `<name>.profraw`; its key is its registry entry's address.
pub(crate) struct ProfileFile;

impl Snapshot for ProfileFile {
    fn snapshot(key: usize) -> Result<KVVec<u8>> {
        // SAFETY: `Registry::add` creates these files, with that key.
        snapshot::entry_profile(unsafe { registry::entry_of_file(key) })
    }
}

/// `stats`.
struct StatsFile;

impl Snapshot for StatsFile {
    fn snapshot(_key: usize) -> Result<KVVec<u8>> {
        registry::stats()
    }
}

/// `reset`.
struct ResetFile;

impl Command for ResetFile {
    fn command(command: &[u8]) -> Result {
        registry::reset(command)
    }
}

/// Creates `reset` and `stats` in `dir`, and `epoch` with counter
/// relocation.
pub(crate) fn create_fixed_files(dir: &Dir) -> Result {
    dir.command_file::<ResetFile>(c_str!("reset"))?;
    #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
    dir.command_file::<super::epochs::EpochCommand>(c_str!("epoch"))?;
    dir.snapshot_file::<StatsFile>(c_str!("stats"), 0)
}

/// A directory at the root of debugfs with subdirectories, removed
/// together (each subdirectory keeps it alive).
pub(crate) struct DirWithSub {
    top: Dir,
    subs: KVec<Dir>,
}

impl DirWithSub {
    /// Creates the directory `name` and `subs` in it; on an error none is
    /// left behind.
    pub(crate) fn create(name: &CStr, subs: &[&CStr]) -> Result<Self> {
        let top = Dir::new(name)?;
        let mut made = KVec::with_capacity(subs.len(), GFP_KERNEL)?;
        for sub in subs {
            // Within the capacity: no allocation, no failure.
            made.push(top.subdir(sub)?, GFP_NOWAIT)?;
        }
        Ok(Self { top, subs: made })
    }

    /// The directory.
    pub(crate) fn top(&self) -> &Dir {
        &self.top
    }

    /// Its subdirectory `index`, in the order `create` was given them.
    pub(crate) fn sub(&self, index: usize) -> Option<&Dir> {
        self.subs.get(index)
    }
}
