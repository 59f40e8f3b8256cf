// SPDX-License-Identifier: GPL-2.0

//! Every profiled object, by name: vmlinux and each instrumented module
//! that was ever loaded.
//!
//! vmlinux and modules are [`Entry`]s alike, so files, reset, stats and
//! snapshots take one path. Entries are never freed: each has its
//! `<name>.profraw` file, which names it by its address. They form a list,
//! newest first, that is only ever prepended to, so readers walk it
//! without a lock.
//!
//! # Names
//!
//! vmlinux's entry is of its own kind: a module is looked up only among
//! module entries, so no module can find, replace or reset it, and a
//! module named `vmlinux` (whose file would clash with vmlinux's) is not
//! profiled. Modules of one name loaded one after the other share one
//! entry and one file: the saved profiles of earlier loads, one per build,
//! then the live one, concatenated raw profiles that `llvm-profdata merge`
//! sums.
//!
//! # Modules
//!
//! Module entries' live descriptors and saved profiles, and the module
//! lifecycle that makes and unmakes them, are the registry's module half
//! (`modules`), built only with module support; without it, vmlinux's is
//! the only entry.
//!
//! # Locks
//!
//! Creating an entry takes the registry's mutex; what changes an entry's
//! profile (its module's load and unload, a reset) takes the entry's own
//! mutex, and marks the change in the entry's change count, odd while it
//! lasts. Readers of profiles and `stats` take no lock: they find what
//! they read in read sections (SRCU), and a profile read retries when the
//! change count moved meanwhile (`snapshot`). So no read holds a lock that
//! a load or an unload waits for. The hooks take none at all.

use core::fmt::{self, Write};
use core::ptr;
use core::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Mutex;

use super::debugfs::{self, DirWithSub, ProfileFile};
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
use super::epochs::EpochFile;
use super::kernel_api::{
    create_mapped_file, fatal_signal_pending, reschedule_point, sleep_a_while, ReadSection,
};
use super::live::LiveFile;
use super::objects::vmlinux;
#[cfg(CONFIG_PGO_CLANG_RUST_APART)]
use super::objects::vmlinux_rust;
use crate::profile::epochs::EpochFigures;
use crate::profile::sections::{ProfiledObject, Stats};

// The module half; without module support, the stand-ins at the end.
#[cfg(CONFIG_MODULES)]
mod modules;
use modules::{ModuleParts, NAME_LEN};

/// The name of an entry: `vmlinux`, or a module's name.
#[derive(Clone, Copy)]
pub(crate) struct Name {
    bytes: [u8; NAME_LEN],
    len: usize,
}

impl Name {
    fn new(name: &[u8]) -> Self {
        let len = name.len().min(NAME_LEN - 1);
        let mut bytes = [0; NAME_LEN];
        bytes[..len].copy_from_slice(&name[..len]);
        Self { bytes, len }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(core::str::from_utf8(self.as_bytes()).unwrap_or("?"))
    }
}

/// What an entry profiles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The kernel image, live for good.
    Vmlinux,
    /// The kernel image's Rust records, when rustc writes another raw
    /// version than clang (`objects::vmlinux_rust`): `vmlinux-rust`, a
    /// name no module can have (kbuild makes `-` in module names `_`).
    #[cfg(CONFIG_PGO_CLANG_RUST_APART)]
    VmlinuxRust,
    /// A module, live while it is loaded.
    Module,
}

impl Kind {
    /// The static descriptor of an entry of the image; `None` for a
    /// module's.
    fn image(self) -> Option<&'static ProfiledObject> {
        match self {
            Kind::Vmlinux => Some(vmlinux()),
            #[cfg(CONFIG_PGO_CLANG_RUST_APART)]
            Kind::VmlinuxRust => vmlinux_rust(),
            Kind::Module => None,
        }
    }
}

/// The figures of a module's last load, for `stats` once it is unloaded.
#[derive(Default)]
struct LastStats([AtomicU64; 6]);

impl LastStats {
    fn load(&self) -> Stats {
        let figure = |i: usize| self.0[i].load(Ordering::Relaxed);
        Stats {
            functions: figure(0) as usize,
            counters: figure(1) as usize,
            value_sites: figure(2) as usize,
            nodes_used: figure(3) as usize,
            nodes_capacity: figure(4) as usize,
            values_dropped: figure(5),
        }
    }
}

/// What may keep an entry's live descriptor and saved profiles while it
/// is held: a read section begun before they are loaded, or the entry's
/// writer mutex, without which they are not withdrawn.
///
/// This is a run-time check, not a proof: the types do not tie a section
/// or a guard to an entry. Each use asks [`Self::keeps`] of the entry at
/// hand and, where it says no, reads nothing (and warns: a bug of the
/// caller).
pub(crate) trait KeepsLive {
    /// Whether this keeps `entry`'s objects.
    fn keeps(&self, entry: &Entry) -> bool;
}

impl KeepsLive for ReadSection {
    /// An active section keeps any entry's; none at all keeps only
    /// vmlinux's, whose objects are never freed.
    fn keeps(&self, entry: &Entry) -> bool {
        self.is_section() || entry.kind.image().is_some()
    }
}

/// One entry's writer mutex, held.
pub(crate) struct WriterGuard<'a> {
    entry: &'a Entry,
    _guard: kernel::sync::lock::Guard<'a, (), kernel::sync::lock::mutex::MutexBackend>,
}

impl KeepsLive for WriterGuard<'_> {
    /// Only the entry whose mutex it is.
    fn keeps(&self, entry: &Entry) -> bool {
        ptr::eq(self.entry, entry)
    }
}

/// The profiled object behind one `<name>.profraw` file.
///
/// # Invariants
///
/// `changes` is odd exactly while a writer changes what the entry's
/// profile is made of (`module`'s pointers), under `writer`.
#[pin_data]
pub(crate) struct Entry {
    kind: Kind,
    name: Name,
    /// One writer at a time: a load or unload of the module, a reset.
    #[pin]
    writer: Mutex<()>,
    changes: AtomicUsize,
    /// A module's live descriptor and saved profiles (`modules`).
    module: ModuleParts,
    /// The figures of the module's last load.
    last: LastStats,
    /// Unloads merged into a saved profile, and those that were not.
    kept_unloads: AtomicUsize,
    lost_unloads: AtomicUsize,
    /// The entry created before this one.
    older: Option<&'static Entry>,
}

/// A change to an entry's profile, from [`Entry::begin_change`] to the
/// drop; its writer mutex is held meanwhile: a module's load or unload,
/// a reset.
struct Change<'a>(&'a AtomicUsize);

impl Drop for Change<'_> {
    fn drop(&mut self) {
        // The change's writes happen before the count is even again.
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// The figures of an entry for `stats`, gathered in a read section.
struct EntryFigures {
    live: bool,
    stats: Stats,
    saved_profiles: usize,
    saved_bytes: usize,
    epochs: EpochFigures,
}

impl Entry {
    fn new(kind: Kind, name: Name, older: Option<&'static Entry>) -> impl PinInit<Self> {
        pin_init!(Self {
            kind,
            name,
            writer <- kernel::new_mutex!((), "kpgo_entry"),
            changes: AtomicUsize::new(0),
            module: ModuleParts::default(),
            last: LastStats::default(),
            kept_unloads: AtomicUsize::new(0),
            lost_unloads: AtomicUsize::new(0),
            older,
        })
    }

    /// Whether this is the entry of the modules named `name`.
    fn is_module(&self, name: &[u8]) -> bool {
        self.kind == Kind::Module && self.name.as_bytes() == name
    }

    /// Begins a change; the caller holds `writer`.
    fn begin_change(&self) -> Change<'_> {
        self.changes.fetch_add(1, Ordering::Relaxed);
        // Readers that see a write of the change see the odd count.
        fence(Ordering::Release);
        Change(&self.changes)
    }

    /// The change count, if no change is under way.
    pub(crate) fn stable_changes(&self) -> Option<usize> {
        let changes = self.changes.load(Ordering::Acquire);
        (changes % 2 == 0).then_some(changes)
    }

    /// The change count once no change is under way, letting a writer
    /// finish meanwhile ([`Self::wait_for_writer`]); `EINTR` on a fatal
    /// signal: a writer that never rests (loads and unloads in a loop,
    /// resets) could keep a reader waiting, and starting again, for good.
    pub(crate) fn quiet_changes(&self) -> Result<usize> {
        loop {
            if fatal_signal_pending() {
                return Err(EINTR);
            }
            if let Some(changes) = self.stable_changes() {
                return Ok(changes);
            }
            self.wait_for_writer();
        }
    }

    /// Whether no change began since [`Self::stable_changes`] gave
    /// `changes`: what was read in between is one state of the entry.
    pub(crate) fn unchanged_since(&self, changes: usize) -> bool {
        fence(Ordering::Acquire);
        self.changes.load(Ordering::Relaxed) == changes
    }

    /// Lets the change under way, if any, go on: sleeps a millisecond.
    /// Not on the writer mutex: a reader that took it to wait would hold
    /// up the next writer while it is not scheduled.
    fn wait_for_writer(&self) {
        sleep_a_while();
    }

    /// The read-side section in which to read the entry: none for the
    /// image's, whose objects are never freed.
    pub(crate) fn read_section(&self) -> ReadSection {
        match self.kind.image() {
            // SAFETY: the image's entries have no saved profiles and read
            // only their static descriptor.
            Some(_) => unsafe { ReadSection::for_static_objects() },
            None => ReadSection::enter(),
        }
    }

    /// Calls `f` on every object of the entry's profile, in file order:
    /// the saved profiles, then the live object.
    pub(crate) fn for_each_object<'a, E>(
        &'a self,
        section: &'a ReadSection,
        mut f: impl FnMut(&'a ProfiledObject) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_object_and_retired(section, |object, _| f(object))
    }

    /// Calls `f(object, retired)` as [`Self::for_each_object`] calls `f`,
    /// with the object's code that is gone, whose functions its profile
    /// names by their retired addresses: a live module's freed init text
    /// (`ModuleObject::retired_text`); none for vmlinux, nor for a saved
    /// profile, whose records carry their retired addresses already.
    pub(crate) fn for_each_object_and_retired<'a, E>(
        &'a self,
        section: &'a ReadSection,
        mut f: impl FnMut(&'a ProfiledObject, core::ops::Range<u64>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.kind.image() {
            Some(image) => f(image, 0..0),
            None => self.for_each_module_object(section, f),
        }
    }

    /// The live object, if any.
    pub(crate) fn live<'a>(&'a self, proof: &'a impl KeepsLive) -> Option<&'a ProfiledObject> {
        if let Some(image) = self.kind.image() {
            return Some(image);
        }
        if !proof.keeps(self) {
            pr_warn!(
                "{}: module read without a section\n",
                format_args!("{}", self.name)
            );
            return None;
        }
        self.live_module(proof)
    }

    /// Frees the saved profiles and restarts the live counts from zero.
    fn reset(&self) -> Result {
        // The saved profiles are freed when `_unlinked` drops, after the
        // writer and the change.
        let (_unlinked, result) = {
            let writer = WriterGuard {
                entry: self,
                _guard: self.writer.lock(),
            };
            // The whole reset is one change, counters included: a read that
            // overlaps any of it starts again.
            let _change = self.begin_change();
            let unlinked = self.forget_unloads();
            let result = match self.live(&writer) {
                // The baselines were attached when the object was registered.
                Some(object) => object.reset().map_err(|_| EINVAL),
                None => Ok(()),
            };
            (unlinked, result)
        };
        result
    }

    fn figures(&self) -> EntryFigures {
        let section = self.read_section();
        let live = self.live(&section);
        let (saved_profiles, saved_bytes) = self.saved_figures(&section);
        EntryFigures {
            live: live.is_some(),
            stats: live.map_or_else(|| self.last.load(), |object| object.stats()),
            saved_profiles,
            saved_bytes,
            epochs: live
                .map(|object| object.epoch_figures())
                .unwrap_or_default(),
        }
    }

    fn write_stats(&self, out: &mut impl Write) -> fmt::Result {
        let figures = self.figures();
        let stats = figures.stats;
        write!(
            out,
            "object={} state={} functions={} counters={} value_sites={} \
             value_nodes_used={} value_nodes={} values_dropped={} \
             kept_profiles={} kept_bytes={} lost_profiles={} kept_unloads={}",
            self.name,
            if figures.live { "live" } else { "unloaded" },
            stats.functions,
            stats.counters,
            stats.value_sites,
            stats.nodes_used,
            stats.nodes_capacity,
            stats.values_dropped,
            figures.saved_profiles,
            figures.saved_bytes,
            self.lost_unloads.load(Ordering::Relaxed),
            self.kept_unloads.load(Ordering::Relaxed),
        )?;
        let epochs = figures.epochs;
        if epochs.enabled {
            write!(
                out,
                " epoch={} set={} late_updates={} late_updates_total={}",
                epochs.finished_epoch, epochs.current_set, epochs.late_last, epochs.late_total
            )?;
        }
        writeln!(out)
    }
}

/// What a `reset` command names.
#[derive(Debug, PartialEq, Eq)]
enum ResetTarget<'a> {
    /// `1` or `all`: every entry.
    All,
    /// `vmlinux`: the kernel image only (its Rust records apart too).
    Vmlinux,
    /// `module:<name>`, or `<name>` if it is none of the words above and
    /// does not start with `module:`.
    Module(&'a [u8]),
}

impl<'a> ResetTarget<'a> {
    fn parse(command: &'a [u8]) -> Result<Self> {
        if core::str::from_utf8(command).is_err() {
            return Err(EINVAL);
        }
        let target = match command {
            b"1" | b"all" => ResetTarget::All,
            b"vmlinux" => ResetTarget::Vmlinux,
            _ => ResetTarget::Module(command.strip_prefix(b"module:").unwrap_or(command)),
        };
        match target {
            ResetTarget::Module(b"") => Err(EINVAL),
            target => Ok(target),
        }
    }
}

/// Entries (vmlinux's and one per module name).
static ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// The module half's figures for `stats`: module loads, descriptors, the
/// module map, saved profiles. All zero without module support.
#[derive(Default)]
struct ModuleFigures {
    live: usize,
    profiled: usize,
    refused: usize,
    descriptors: usize,
    descriptor_bytes: usize,
    map_tables: usize,
    map_bytes: usize,
    kept_profiles: usize,
    kept_bytes: usize,
    kept_limit_bytes: usize,
}

/// All entries: created under `creating`, which also holds `pgo/` and
/// `pgo/live/`, where their files are made.
///
/// # Invariants
///
/// `newest` is null or an entry leaked by [`Registry::add`], never freed;
/// it is only ever replaced, under `creating`, by a newer one that links
/// it.
#[pin_data]
struct Registry {
    #[pin]
    creating: Mutex<Option<DirWithSub>>,
    /// The newest entry; each links the one before.
    newest: AtomicPtr<Entry>,
}

impl Registry {
    /// The entries, newest first.
    fn entries(&self) -> impl Iterator<Item = &'static Entry> {
        // SAFETY: entries are never freed (the invariant of `newest`).
        let newest = unsafe { self.newest.load(Ordering::Acquire).as_ref() };
        core::iter::successors(newest, |entry| entry.older)
    }

    fn find_module(&self, name: &[u8]) -> Option<&'static Entry> {
        self.entries().find(|entry| entry.is_module(name))
    }

    /// Creates the entry `name` of `kind` and its file, under `creating`;
    /// returns an existing module entry of that name instead.
    fn add(&self, kind: Kind, name: &Name) -> Result<&'static Entry> {
        const SUFFIX: &[u8] = b".profraw\0";
        let dir = self.creating.lock();
        if kind == Kind::Module {
            if let Some(entry) = self.find_module(name.as_bytes()) {
                return Ok(entry);
            }
        }
        let dirs = dir.as_ref().ok_or(ENODEV)?;
        let older = self.entries().next();
        let entry = KBox::pin_init(Entry::new(kind, *name, older), GFP_KERNEL)?;
        let mut file_name = [0u8; NAME_LEN + SUFFIX.len()];
        let name = name.as_bytes();
        file_name[..name.len()].copy_from_slice(name);
        file_name[name.len()..name.len() + SUFFIX.len()].copy_from_slice(SUFFIX);
        let file_name = CStr::from_bytes_with_nul(&file_name[..name.len() + SUFFIX.len()])
            .map_err(|_| EINVAL)?;
        // The file names the entry by its address: pinned, and leaked
        // below if the file exists (on failure no file can name it).
        let key = core::ptr::from_ref::<Entry>(&entry) as usize;
        dirs.top().snapshot_file::<ProfileFile>(file_name, key)?;
        // The entry is usable without them: its profile file exists.
        let live = dirs.sub(SUB_LIVE).ok_or(ENOENT);
        if let Err(error) = live.and_then(|dir| create_mapped_file::<LiveFile>(dir, file_name, key))
        {
            pr_warn!("no live/{file_name}: error {}\n", error.to_errno());
        }
        #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
        {
            let epochs = dirs.sub(SUB_EPOCHS).ok_or(ENOENT);
            let file = epochs.and_then(|dir| dir.snapshot_file::<EpochFile>(file_name, key));
            if let Err(error) = file {
                pr_warn!("no epochs/{file_name}: error {}\n", error.to_errno());
            }
        }
        // SAFETY: the entry is never moved out of its allocation, which is
        // leaked.
        let entry: &'static Entry = KBox::leak(unsafe { Pin::into_inner_unchecked(entry) });
        // INVARIANT: leaked, and it links the newest entry of before.
        self.newest
            .store(core::ptr::from_ref(entry).cast_mut(), Ordering::Release);
        ENTRIES.fetch_add(1, Ordering::Relaxed);
        Ok(entry)
    }

    /// Applies a `reset` command (see [`ResetTarget`]); an unknown name or
    /// a malformed command is `EINVAL` and changes nothing.
    fn reset(&self, command: &[u8]) -> Result {
        let target = ResetTarget::parse(command)?;
        let mut entries = self.entries();
        match target {
            ResetTarget::All => entries.try_for_each(|entry| entry.reset())?,
            // The image's Rust records share its counters: one reset.
            ResetTarget::Vmlinux => entries
                .filter(|entry| entry.kind.image().is_some())
                .try_for_each(|entry| entry.reset())?,
            ResetTarget::Module(name) => {
                return entries
                    .find(|entry| entry.is_module(name))
                    .ok_or(EINVAL)?
                    .reset()
            }
        }
        // vmlinux's counts start again: so do the figures of their weight.
        super::kernel_api::entry_sampling_restart();
        Ok(())
    }

    /// The `stats` file: the runtime, then one line per entry, oldest
    /// first.
    fn stats(&self) -> Result<KVVec<u8>> {
        let mut text = Text(KVVec::new());
        self.write_stats(&mut text).map_err(|_| ENOMEM)?;
        Ok(text.0)
    }

    fn write_stats(&self, out: &mut impl Write) -> fmt::Result {
        let modules = modules::figures();
        let entries = ENTRIES.load(Ordering::Relaxed);
        write!(
            out,
            "runtime modules_live={} modules_profiled={} modules_refused={} descriptors={} \
             descriptor_bytes={} map_tables={} map_bytes={} entries={} entry_bytes={} \
             kept_profiles={} kept_bytes={} kept_limit_bytes={} name_index_bytes={}",
            modules.live,
            modules.profiled,
            modules.refused,
            modules.descriptors,
            modules.descriptor_bytes,
            modules.map_tables,
            modules.map_bytes,
            entries,
            entries * core::mem::size_of::<Entry>(),
            modules.kept_profiles,
            modules.kept_bytes,
            modules.kept_limit_bytes,
            super::callees::name_index_bytes(),
        )?;
        #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
        {
            let persist = vmlinux().persist_figures();
            write!(
                out,
                " epochs={} persisted={} previous={} boot_late_updates={}",
                super::epochs::finished(),
                u8::from(persist.persisted),
                u8::from(persist.previous),
                persist.boot_late,
            )?;
        }
        #[cfg(CONFIG_PGO_CLANG_SAMPLING_UPDATES)]
        {
            let (period, recorded) = super::kernel_api::sampling_rate();
            write!(
                out,
                " sampling_period={period} sampling_recorded={recorded}"
            )?;
        }
        writeln!(out)?;
        // Oldest first: vmlinux, then modules in the order they came.
        let mut entries = KVec::new();
        for entry in self.entries() {
            entries.push(entry, GFP_KERNEL).map_err(|_| fmt::Error)?;
        }
        entries.iter().rev().try_for_each(|entry| {
            reschedule_point();
            entry.write_stats(out)
        })
    }
}

/// A growable text buffer for `write!`.
struct Text(KVVec<u8>);

impl Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

/// The registry: set once by [`init`], never freed.
static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(ptr::null_mut());

/// The registry; `ENODEV` before [`init`] created it.
fn registry() -> Result<&'static Registry> {
    // `init` stores it once, from `KBox::into_raw`, and never frees it.
    // SAFETY: null or an initialised, pinned registry, never moved.
    unsafe { REGISTRY.load(Ordering::Acquire).as_ref() }.ok_or(ENODEV)
}

/// The entry a `.profraw` file was created with.
///
/// # Safety
///
/// `key` is the key of a file that [`Registry::add`] created: the address
/// of an entry that is never freed.
pub(crate) unsafe fn entry_of_file(key: usize) -> &'static Entry {
    // SAFETY: the function's contract.
    unsafe { &*(key as *const Entry) }
}

/// The `stats` file.
pub(crate) fn stats() -> Result<KVVec<u8>> {
    registry()?.stats()
}

/// A `reset` command.
pub(crate) fn reset(command: &[u8]) -> Result {
    registry()?.reset(command)
}

/// An object of some entry, as [`for_each_profiled_object`] finds it.
pub(crate) struct FoundObject<'a> {
    pub(crate) entry: &'static Entry,
    /// The entry's change count when it was found (`Entry::stable_changes`),
    /// `None` while a change is under way.
    pub(crate) changes: Option<usize>,
    /// Its place in the entry's profile (`Entry::for_each_object`).
    pub(crate) index: usize,
    pub(crate) object: &'a ProfiledObject,
    /// Its code that is gone (a live module's freed init text), whose
    /// functions its profile names by their retired addresses.
    pub(crate) retired: core::ops::Range<u64>,
}

/// Calls `f` on every object of every entry, vmlinux's included: live
/// objects and saved profiles. Each entry is read in a read-side section
/// of its own, and the scheduler may run between two: hundreds of
/// modules are not one section. Where the caller may sleep.
pub(crate) fn for_each_profiled_object(mut f: impl FnMut(FoundObject<'_>)) {
    let Ok(registry) = registry() else {
        return;
    };
    for entry in registry.entries() {
        reschedule_point();
        let section = entry.read_section();
        let section = &section;
        let changes = entry.stable_changes();
        let mut index = 0;
        let _ = entry.for_each_object_and_retired(section, |object, retired| {
            f(FoundObject {
                entry,
                changes,
                index,
                object,
                retired,
            });
            index += 1;
            Ok::<(), ()>(())
        });
    }
}

/// `pgo/`'s subdirectories, and the indexes of each.
#[cfg(not(CONFIG_PGO_CLANG_COUNTER_RELOCATION))]
const SUBDIRECTORIES: &[&CStr] = &[c_str!("live")];
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
const SUBDIRECTORIES: &[&CStr] = &[c_str!("live"), c_str!("epochs"), c_str!("previous")];
const SUB_LIVE: usize = 0;
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
const SUB_EPOCHS: usize = 1;
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
const SUB_PREVIOUS: usize = 2;

/// Calls `f(object)` on every live object, vmlinux's and each loaded
/// module's, each in a read section of its own, in which `f` may sleep.
/// Where the caller may sleep.
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
pub(crate) fn for_each_live_object(mut f: impl FnMut(&ProfiledObject)) {
    let Ok(registry) = registry() else {
        return;
    };
    for entry in registry.entries() {
        reschedule_point();
        let section = entry.read_section();
        if let Some(object) = entry.live(&section) {
            f(object);
        }
    }
}

/// The reset baselines of a descriptor of the image: allocated once, never
/// freed.
fn attach_image_baselines(image: &'static ProfiledObject) -> Result {
    let capacity = image.node_capacity();
    let mut baselines = KVVec::with_capacity(capacity, GFP_KERNEL)?;
    for _ in 0..capacity {
        baselines.push(AtomicU64::new(0), GFP_KERNEL)?;
    }
    let (baselines, _, _) = baselines.into_raw_parts();
    // Leaked: valid for good, and referenced from the static descriptor
    // for kmemleak.
    // SAFETY: one zeroed baseline per node of the descriptor's pool,
    // accessed only through atomics.
    unsafe { image.attach_baselines(baselines) };
    Ok(())
}

/// The entry of the image's Rust records, when they are apart
/// (`objects::vmlinux_rust`): `vmlinux-rust.profraw`, in rustc's raw
/// version. Without it vmlinux's profile is whole still: a failure is
/// logged, not returned.
#[cfg(CONFIG_PGO_CLANG_RUST_APART)]
fn add_vmlinux_rust(registry: &Registry) {
    let Some(rust) = vmlinux_rust() else {
        return;
    };
    // No built-in Rust object is instrumented (glue.c's weak word, 0).
    if rust.sections().data.is_empty() {
        return;
    }
    if let Err(error) = rust.version() {
        pr_err!(
            "vmlinux's Rust records: {}; not exposed\n",
            format_args!("{error}")
        );
        return;
    }
    let added = attach_image_baselines(rust)
        .and_then(|()| registry.add(Kind::VmlinuxRust, &Name::new(b"vmlinux-rust")));
    if let Err(error) = added {
        pr_err!(
            "no vmlinux-rust.profraw (error {}): vmlinux's Rust records are not exposed\n",
            error.to_errno()
        );
    }
}

/// The image's Rust records, if any, are vmlinux's.
#[cfg(not(CONFIG_PGO_CLANG_RUST_APART))]
fn add_vmlinux_rust(_registry: &Registry) {}

/// Creates the debugfs directory, the registry that holds it, then the
/// files, then follows modules. On an error, what was created is removed
/// again (the directory is removed when it is dropped; a registry that was
/// published stays, unused).
pub(crate) fn init() -> Result {
    // First: whatever fails below, the region gets the rest of the
    // boot's counts.
    #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
    super::persist::settle();
    attach_image_baselines(vmlinux())?;
    #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
    match super::epochs::attach_words(vmlinux()) {
        // Leaked: vmlinux's for good, and referenced from `VMLINUX` for
        // kmemleak.
        Ok(words) => drop(words.into_raw_parts()),
        Err(error) => pr_warn!(
            "no memory for vmlinux's epochs (error {}): its counters stay put\n",
            error.to_errno()
        ),
    }
    let dirs = DirWithSub::create(c_str!("pgo"), SUBDIRECTORIES)?;
    let registry = KBox::pin_init(
        pin_init!(Registry {
            creating <- kernel::new_mutex!(Some(dirs), "kpgo_registry"),
            newest: AtomicPtr::new(ptr::null_mut()),
        }),
        GFP_KERNEL,
    )?;
    // SAFETY: the registry is never moved out of its allocation: the box
    // becomes a raw pointer that is never freed.
    let registry = KBox::into_raw(unsafe { Pin::into_inner_unchecked(registry) });
    REGISTRY
        .compare_exchange(
            ptr::null_mut(),
            registry,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .map_err(|_| EBUSY)?;
    let registry = self::registry()?;
    let files = registry
        .add(Kind::Vmlinux, &Name::new(b"vmlinux"))
        .and_then(|_| match registry.creating.lock().as_ref() {
            Some(dirs) => {
                #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
                if vmlinux().has_previous() {
                    dirs.sub(SUB_PREVIOUS)
                        .ok_or(ENOENT)?
                        .snapshot_file::<super::persist::PreviousFile>(
                            c_str!("vmlinux.profraw"),
                            0,
                        )?;
                }
                debugfs::create_fixed_files(dirs.top())
            }
            None => Err(ENODEV),
        });
    if files.is_ok() {
        add_vmlinux_rust(registry);
    }
    let files = files.and_then(|()| modules::register_notifier());
    if let Err(error) = files {
        // Dropping the directory removes it, which waits for running
        // handlers; none takes this lock.
        drop(registry.creating.lock().take());
        return Err(error);
    }
    Ok(())
}

/// Without module support, vmlinux's is the only entry: nothing of a
/// module's to hold, follow or count.
#[cfg(not(CONFIG_MODULES))]
mod modules {
    use kernel::prelude::*;

    use super::{Entry, KeepsLive, ModuleFigures, ProfiledObject, ReadSection};

    /// Longest entry name, with its NUL: `vmlinux-rust`.
    pub(super) const NAME_LEN: usize = b"vmlinux-rust\0".len();

    /// Nothing of a module's in an entry.
    pub(super) type ModuleParts = ();

    /// No saved profiles to free.
    pub(super) struct Unlinked;

    pub(super) fn figures() -> ModuleFigures {
        ModuleFigures::default()
    }

    pub(super) fn register_notifier() -> Result {
        Ok(())
    }

    /// vmlinux's entry has no module's objects, saved profiles or unloads.
    impl Entry {
        pub(super) fn for_each_module_object<'a, E>(
            &'a self,
            _section: &'a ReadSection,
            _f: impl FnMut(&'a ProfiledObject, core::ops::Range<u64>) -> Result<(), E>,
        ) -> Result<(), E> {
            Ok(())
        }

        pub(super) fn live_module<'a>(
            &'a self,
            _proof: &'a impl KeepsLive,
        ) -> Option<&'a ProfiledObject> {
            None
        }

        pub(super) fn saved_figures(&self, _section: &ReadSection) -> (usize, usize) {
            (0, 0)
        }

        pub(super) fn forget_unloads(&self) -> Unlinked {
            Unlinked
        }
    }
}
