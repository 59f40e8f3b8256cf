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
//! # Module lifecycle
//!
//! At `MODULE_STATE_COMING`, before the module's init function runs, every
//! step that can fail comes first: the name, the check of the module's
//! sections (`ProfiledObject::new_checked`), its place in the module area,
//! the descriptor and its baselines, the map's tables, the entry and its
//! file. Publishing the descriptor to the hooks and to readers is the last
//! step and cannot fail. A module that fails any step is not profiled: one
//! log line, nothing else changed, counted in `modules_refused`.
//!
//! At `MODULE_STATE_GOING`, after the module's exit function, the module
//! (found by its name and identity) is withdrawn from the hooks, its counts
//! are merged into the saved profile of its build (created at the first
//! unload; all saved profiles together take at most
//! `CONFIG_PGO_KEPT_PROFILES_KB`), and the notification waits for an RCU
//! grace period, then frees its descriptor: when it returns, no hook or
//! reader uses the descriptor or the module's memory (`objects`).
//!
//! The module notifier is registered before any module can load (see
//! `glue.c`), so every module comes through COMING.
//!
//! # Locks
//!
//! Creating an entry takes the registry's mutex; what changes an entry's
//! profile (its module's load and unload, a reset) takes the entry's own
//! mutex, and marks the change in the entry's change count, odd while it
//! lasts. Readers of profiles and `stats` take no lock: they find what
//! they read in RCU read-side sections, and a profile read retries when the
//! change count moved meanwhile (`snapshot`). So no read holds a lock that
//! a load or an unload waits for. The hooks take none at all.

use core::fmt::{self, Write};
use core::ptr;
use core::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Mutex;

use super::debugfs::{self, ProfileFile};
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
use super::epochs::EpochFile;
use super::kernel_api::{
    fatal_signal_pending, reschedule_point, sleep_a_while, DirWithSub, ReadSection,
};
use super::live::LiveFile;
use super::objects::vmlinux;
use crate::profile::epochs::EpochFigures;
use crate::profile::sections::{ProfiledObject, Stats};

#[cfg(CONFIG_MODULES)]
use super::kernel_api::MODULE_NAME_LEN;
#[cfg(CONFIG_MODULES)]
use super::kernel_api::{unload_warning_allowed, Module, ModuleEvents, ModuleNotifier, RcuBox};
#[cfg(CONFIG_MODULES)]
use super::objects::{self, Descriptor, ModuleObject};
#[cfg(CONFIG_MODULES)]
use crate::profile::callees::{retired_address_in, RETIRED_TAG};
#[cfg(CONFIG_MODULES)]
use crate::profile::check::SectionError;
#[cfg(CONFIG_MODULES)]
use crate::profile::saved::{merge, same_build, FunctionAddress, MergeError, SavedLayout};

/// Bytes of saved profiles of unloaded modules, all modules together.
#[cfg(CONFIG_MODULES)]
const KEPT_PROFILES_LIMIT: usize = kernel::bindings::CONFIG_PGO_KEPT_PROFILES_KB as usize * 1024;
#[cfg(not(CONFIG_MODULES))]
const KEPT_PROFILES_LIMIT: usize = 0;

/// Longest entry name, with its NUL: a module's, or without modules
/// `vmlinux`, the only entry.
#[cfg(CONFIG_MODULES)]
const NAME_LEN: usize = MODULE_NAME_LEN;
#[cfg(not(CONFIG_MODULES))]
const NAME_LEN: usize = b"vmlinux\0".len();

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
    /// A module, live while it is loaded.
    Module,
}

/// The saved profile of one build of a module, merged into at each unload
/// of that build (`profile::saved`).
#[cfg(CONFIG_MODULES)]
pub(crate) struct SavedProfile {
    object: ProfiledObject,
    /// The memory `object` describes: never resized, so never moved.
    _buffer: KVVec<u64>,
    bytes: usize,
    /// The saved profile of another build of the same name, or null.
    older: AtomicPtr<Saved>,
}

/// Without module support there are no saved profiles (none is ever
/// made; the type keeps one code path for entries).
#[cfg(not(CONFIG_MODULES))]
pub(crate) struct SavedProfile {
    object: ProfiledObject,
    bytes: usize,
}

/// A saved profile as an entry holds it: freed after a grace period.
#[cfg(CONFIG_MODULES)]
type Saved = RcuBox<SavedProfile>;

/// The figures of a module's last load, for `stats` once it is unloaded.
#[derive(Default)]
struct LastStats([AtomicU64; 6]);

impl LastStats {
    #[cfg(CONFIG_MODULES)]
    fn store(&self, stats: &Stats) {
        let figures = [
            stats.functions as u64,
            stats.counters as u64,
            stats.value_sites as u64,
            stats.nodes_used as u64,
            stats.nodes_capacity as u64,
            stats.values_dropped,
        ];
        for (slot, figure) in self.0.iter().zip(figures) {
            slot.store(figure, Ordering::Relaxed);
        }
    }

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

/// What a module's entry holds: its live descriptor, its saved profiles.
///
/// # Invariants
///
/// `live` is null or a descriptor leaked by [`Entry::publish`], withdrawn
/// from it (and then freed after a grace period) only under the entry's
/// `writer`; `saved` is null or the newest of a list of saved profiles
/// leaked by [`Entry::keep`], each linking the next older, unlinked (and
/// then freed after a grace period) only under `writer`.
#[cfg(CONFIG_MODULES)]
struct ModuleParts {
    live: AtomicPtr<Descriptor>,
    saved: AtomicPtr<Saved>,
}

/// Without module support, entries have nothing of a module's.
#[cfg(not(CONFIG_MODULES))]
struct ModuleParts;

impl ModuleParts {
    const fn new() -> Self {
        #[cfg(CONFIG_MODULES)]
        {
            Self {
                live: AtomicPtr::new(ptr::null_mut()),
                saved: AtomicPtr::new(ptr::null_mut()),
            }
        }
        #[cfg(not(CONFIG_MODULES))]
        {
            Self
        }
    }
}

/// What may keep an entry's live descriptor and saved profiles while it
/// is held: an RCU read-side section begun before they are loaded, or the
/// entry's writer mutex, without which they are not withdrawn.
///
/// This is a run-time check, not a proof: the types do not tie a section
/// or a guard to an entry. Each use asks [`Self::keeps`] of the entry at
/// hand and, where it says no, reads nothing (and warns: a bug of the
/// caller). (Without modules nothing asks: vmlinux's objects are never
/// freed.)
#[cfg_attr(not(CONFIG_MODULES), allow(dead_code))]
pub(crate) trait KeepsLive {
    /// Whether this keeps `entry`'s objects.
    fn keeps(&self, entry: &Entry) -> bool;
}

impl KeepsLive for ReadSection {
    /// An active section keeps any entry's; none at all keeps only
    /// vmlinux's, whose objects are never freed.
    fn keeps(&self, entry: &Entry) -> bool {
        !self.may_sleep() || matches!(entry.kind, Kind::Vmlinux)
    }
}

/// One entry's writer mutex, held.
#[cfg_attr(not(CONFIG_MODULES), allow(dead_code))]
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
            module: ModuleParts::new(),
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

    /// The read-side section in which to read the entry: none for
    /// vmlinux's, whose objects are never freed.
    pub(crate) fn read_section(&self) -> ReadSection {
        match self.kind {
            // SAFETY: vmlinux's entry has no saved profiles and reads only
            // the static `VMLINUX`.
            Kind::Vmlinux => unsafe { ReadSection::for_static_objects() },
            Kind::Module => ReadSection::enter(),
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
        self.for_each_saved(section, |profile| f(&profile.object, 0..0))?;
        match self.kind {
            Kind::Vmlinux => f(vmlinux(), 0..0),
            // One load of the live descriptor: its object and its gone
            // code go together.
            #[cfg(CONFIG_MODULES)]
            Kind::Module => match self.live_descriptor(section) {
                Some(descriptor) => f(&descriptor.object, descriptor.retired_text()),
                None => Ok(()),
            },
            #[cfg(not(CONFIG_MODULES))]
            Kind::Module => Ok(()),
        }
    }

    /// Calls `f` on every saved profile, newest first.
    #[cfg(CONFIG_MODULES)]
    fn for_each_saved<'a, E>(
        &'a self,
        proof: &'a impl KeepsLive,
        mut f: impl FnMut(&'a SavedProfile) -> Result<(), E>,
    ) -> Result<(), E> {
        if !proof.keeps(self) {
            pr_warn!("{}: saved profiles read without a section\n", self.name);
            return Ok(());
        }
        let mut saved = self.module.saved.load(Ordering::Acquire);
        // The list's profiles are freed only after a grace period that
        // follows their unlinking under `writer` (the invariant of
        // `ModuleParts`).
        // SAFETY: `proof` keeps this entry (checked): a read-side section
        // begun before these loads, or this entry's `writer`.
        while let Some(profile) = unsafe { saved.as_ref() } {
            f(profile)?;
            saved = profile.older.load(Ordering::Acquire);
        }
        Ok(())
    }

    #[cfg(not(CONFIG_MODULES))]
    fn for_each_saved<'a, E>(
        &'a self,
        _proof: &'a impl KeepsLive,
        _f: impl FnMut(&'a SavedProfile) -> Result<(), E>,
    ) -> Result<(), E> {
        Ok(())
    }

    /// The live object, if any.
    pub(crate) fn live<'a>(&'a self, proof: &'a impl KeepsLive) -> Option<&'a ProfiledObject> {
        #[cfg(not(CONFIG_MODULES))]
        let _ = proof;
        match self.kind {
            Kind::Vmlinux => Some(vmlinux()),
            #[cfg(CONFIG_MODULES)]
            Kind::Module if !proof.keeps(self) => {
                pr_warn!("{}: module read without a section\n", self.name);
                None
            }
            #[cfg(CONFIG_MODULES)]
            Kind::Module => self
                .live_descriptor(proof)
                .map(|descriptor| &descriptor.object),
            #[cfg(not(CONFIG_MODULES))]
            Kind::Module => None,
        }
    }

    /// The live module's descriptor, if any.
    #[cfg(CONFIG_MODULES)]
    pub(crate) fn live_descriptor<'a>(
        &'a self,
        proof: &'a impl KeepsLive,
    ) -> Option<&'a Descriptor> {
        if self.kind != Kind::Module || !proof.keeps(self) {
            return None;
        }
        // A descriptor is freed only after a grace period that follows its
        // withdrawal under `writer` (the invariant of `ModuleParts`).
        // SAFETY: `proof` keeps this entry (checked above): a read-side
        // section begun before this load, or this entry's `writer`.
        unsafe { self.module.live.load(Ordering::Acquire).as_ref() }
    }

    /// Frees the saved profiles and restarts the live counts from zero.
    fn reset(&self) -> Result {
        let writer = WriterGuard {
            entry: self,
            _guard: self.writer.lock(),
        };
        // The whole reset is one change, counters included: a read that
        // overlaps any of it starts again.
        let _change = self.begin_change();
        #[cfg(CONFIG_MODULES)]
        {
            let mut saved = self.module.saved.swap(ptr::null_mut(), Ordering::AcqRel);
            while !saved.is_null() {
                // Unlinked under `writer`, reachable by nothing that begins
                // later (the invariant of `ModuleParts`).
                // SAFETY: the list's profiles were leaked by `keep`.
                let profile = unsafe { KBox::from_raw(saved) };
                saved = profile.older.load(Ordering::Acquire);
                KEPT_PROFILES.fetch_sub(1, Ordering::Relaxed);
                KEPT_BYTES.fetch_sub(profile.bytes, Ordering::Relaxed);
                super::kernel_api::free_after_grace_period(profile);
            }
            self.lost_unloads.store(0, Ordering::Relaxed);
            self.kept_unloads.store(0, Ordering::Relaxed);
        }
        match self.live(&writer) {
            // The baselines were attached when the object was registered.
            Some(object) => object.reset().map_err(|_| EINVAL),
            None => Ok(()),
        }
    }

    fn figures(&self) -> EntryFigures {
        let section = self.read_section();
        let live = self.live(&section);
        let mut figures = EntryFigures {
            live: live.is_some(),
            stats: live.map_or_else(|| self.last.load(), |object| object.stats()),
            saved_profiles: 0,
            saved_bytes: 0,
            epochs: live
                .map(|object| object.epoch_figures())
                .unwrap_or_default(),
        };
        let _ = self.for_each_saved(&section, |profile| {
            figures.saved_profiles += 1;
            figures.saved_bytes += profile.bytes;
            Ok::<(), ()>(())
        });
        figures
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
    /// `vmlinux`: the kernel image only.
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

/// Module loads profiled and refused, since boot.
static MODULES_PROFILED: AtomicUsize = AtomicUsize::new(0);
static MODULES_REFUSED: AtomicUsize = AtomicUsize::new(0);
/// Modules profiled now.
static MODULES_LIVE: AtomicUsize = AtomicUsize::new(0);
/// Entries (vmlinux's and one per module name).
static ENTRIES: AtomicUsize = AtomicUsize::new(0);
/// Saved profiles and their bytes, all entries together.
static KEPT_PROFILES: AtomicUsize = AtomicUsize::new(0);
static KEPT_BYTES: AtomicUsize = AtomicUsize::new(0);

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
        let file_name = CStr::from_bytes_with_nul(&file_name[..name.len() + SUFFIX.len()])?;
        // The file names the entry by its address: pinned, and leaked
        // below if the file exists (on failure no file can name it).
        let key = &*entry as *const Entry as usize;
        dirs.top().snapshot_file::<ProfileFile>(file_name, key)?;
        // The entry is usable without them: its profile file exists.
        let live = dirs.sub(SUB_LIVE).ok_or(ENOENT);
        if let Err(error) = live.and_then(|dir| dir.mapped_file::<LiveFile>(file_name, key)) {
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
            .store(entry as *const Entry as *mut Entry, Ordering::Release);
        ENTRIES.fetch_add(1, Ordering::Relaxed);
        Ok(entry)
    }

    /// Applies a `reset` command (see [`ResetTarget`]); an unknown name or
    /// a malformed command is `EINVAL` and changes nothing.
    fn reset(&self, command: &[u8]) -> Result {
        let target = ResetTarget::parse(command)?;
        let mut entries = self.entries();
        let entry = match target {
            ResetTarget::All => return entries.try_for_each(|entry| entry.reset()),
            ResetTarget::Vmlinux => entries.find(|entry| entry.kind == Kind::Vmlinux),
            ResetTarget::Module(name) => entries.find(|entry| entry.is_module(name)),
        };
        entry.ok_or(EINVAL)?.reset()
    }

    /// The `stats` file: the runtime, then one line per entry, oldest
    /// first.
    fn stats(&self) -> Result<KVVec<u8>> {
        let mut text = Text(KVVec::new());
        self.write_stats(&mut text).map_err(|_| ENOMEM)?;
        Ok(text.0)
    }

    fn write_stats(&self, out: &mut impl Write) -> fmt::Result {
        let figure = |counter: &AtomicUsize| counter.load(Ordering::Relaxed);
        #[cfg(CONFIG_MODULES)]
        let (descriptors, descriptor_bytes, tables) = (
            figure(&objects::DESCRIPTORS),
            figure(&objects::DESCRIPTORS_BYTES),
            figure(&objects::MAP_TABLES),
        );
        #[cfg(CONFIG_MODULES)]
        let table_bytes = objects::TABLE_BYTES;
        #[cfg(not(CONFIG_MODULES))]
        let (descriptors, descriptor_bytes, tables, table_bytes) = (0, 0, 0, 0);
        write!(
            out,
            "runtime modules_live={} modules_profiled={} modules_refused={} descriptors={} \
             descriptor_bytes={} map_tables={} map_bytes={} entries={} entry_bytes={} \
             kept_profiles={} kept_bytes={} kept_limit_bytes={KEPT_PROFILES_LIMIT} \
             name_index_bytes={}",
            figure(&MODULES_LIVE),
            figure(&MODULES_PROFILED),
            figure(&MODULES_REFUSED),
            descriptors,
            descriptor_bytes,
            tables,
            tables * table_bytes,
            figure(&ENTRIES),
            figure(&ENTRIES) * core::mem::size_of::<Entry>(),
            figure(&KEPT_PROFILES),
            figure(&KEPT_BYTES),
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
        #[cfg(CONFIG_PGO_CLANG_SAMPLING)]
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

/// Why a module is not profiled.
#[cfg(CONFIG_MODULES)]
enum Refusal {
    /// Its name is vmlinux's.
    NamedVmlinux,
    /// A module of the same name is live (cannot happen: the loader
    /// refuses a second module of a name).
    NameLive,
    /// Its sections failed the check.
    Sections(SectionError),
    /// Its data records are outside the module area, which the hooks'
    /// map covers.
    OutsideArea,
    /// An allocation or the debugfs file failed.
    Failed(Error),
}

#[cfg(CONFIG_MODULES)]
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NamedVmlinux => f.write_str("the name vmlinux is the kernel's"),
            Refusal::NameLive => f.write_str("a module of this name is already profiled"),
            Refusal::Sections(error) => error.fmt(f),
            Refusal::OutsideArea => f.write_str("its __llvm_prf_data is outside the module area"),
            Refusal::Failed(error) if *error == ENOMEM => f.write_str("out of memory"),
            Refusal::Failed(error) => write!(f, "registration failed ({error:?})"),
        }
    }
}

/// Why an unload's counts were not kept.
#[cfg(CONFIG_MODULES)]
enum Lost {
    /// A new saved profile would take the saved profiles beyond the limit.
    OverLimit,
    /// No memory for it.
    NoMemory,
    /// The counts could not be merged.
    Merge(MergeError),
}

#[cfg(CONFIG_MODULES)]
impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::OverLimit => write!(
                f,
                "kept profiles would exceed CONFIG_PGO_KEPT_PROFILES_KB={}",
                KEPT_PROFILES_LIMIT / 1024
            ),
            Lost::NoMemory => f.write_str("out of memory"),
            Lost::Merge(error) => error.fmt(f),
        }
    }
}

#[cfg(CONFIG_MODULES)]
impl From<kernel::alloc::AllocError> for Lost {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Lost::NoMemory
    }
}

#[cfg(CONFIG_MODULES)]
impl Entry {
    /// Publishes `descriptor`, the last step of a registration; false if
    /// a module of this name is live (then `descriptor` is dropped).
    fn publish(&self, descriptor: KBox<Descriptor>) -> bool {
        let _writer = self.writer.lock();
        if !self.module.live.load(Ordering::Acquire).is_null() {
            return false;
        }
        let _change = self.begin_change();
        let descriptor: &'static Descriptor = KBox::leak(descriptor);
        // INVARIANT: leaked, published under `writer`.
        self.module.live.store(
            descriptor as *const Descriptor as *mut Descriptor,
            Ordering::Release,
        );
        // Its records lie in its module's pages (`register` checked the
        // module area), and only `withdraw` below frees it, after
        // `objects::withdraw`.
        // SAFETY: as just said, `publish`'s contract.
        unsafe { objects::publish(descriptor) };
        MODULES_LIVE.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Module `id`'s init function returned and its init text is freed
    /// next: from now on its functions there are named by their retired
    /// addresses, in its profile and in every value that named them. One
    /// change of the entry: a read that overlaps it starts again.
    fn retire_init(&self, id: usize) {
        let writer = WriterGuard {
            entry: self,
            _guard: self.writer.lock(),
        };
        let Some(descriptor) = self.live_descriptor(&writer) else {
            return;
        };
        if descriptor.module != id {
            return;
        }
        let _change = self.begin_change();
        descriptor.init_freed();
        retire_code(&descriptor.init_text, descriptor);
    }

    /// Withdraws the live descriptor of module `id`, keeps its counts, and
    /// frees it after a grace period. Nothing if `id` is not live here.
    fn withdraw(&self, id: usize) {
        let writer = self.writer.lock();
        let live = self.module.live.load(Ordering::Acquire);
        // SAFETY: a published descriptor, freed only below, under `writer`
        // (type invariant).
        match unsafe { live.as_ref() } {
            Some(descriptor) if descriptor.module == id => {}
            _ => return,
        }
        let change = self.begin_change();
        // SAFETY: as above.
        let descriptor = unsafe { &*live };
        // Withdrawn first: its exit function has run, the counters are
        // final but for code that outlives it (async work), whose values are
        // no longer recorded.
        objects::withdraw(descriptor);
        let kept = self.keep(&descriptor.object, &descriptor.retired_text());
        // Its code goes: the values that name it, in every other object,
        // are renamed to its functions' retired addresses, as the kept
        // profile names them (its own were, by the merge).
        retire_code(&descriptor.text, descriptor);
        if descriptor.retired_text().is_empty() {
            // Its init failed: its init text goes only now.
            retire_code(&descriptor.init_text, descriptor);
        }
        self.last.store(&descriptor.object.stats());
        // INVARIANT: unpublished under `writer`; freed below, after a grace
        // period.
        self.module.live.store(ptr::null_mut(), Ordering::Release);
        drop(change);
        drop(writer);
        MODULES_LIVE.fetch_sub(1, Ordering::Relaxed);
        // Leaked by `publish`, withdrawn from the map above and from the
        // entry under `writer`: nothing that begins from now on reaches it.
        // SAFETY: as just said, `retire`'s contract and `from_raw`'s.
        unsafe { objects::retire(KBox::from_raw(live)) };
        match kept {
            Ok(()) => {
                self.kept_unloads.fetch_add(1, Ordering::Relaxed);
            }
            Err(reason) => {
                self.lost_unloads.fetch_add(1, Ordering::Relaxed);
                if unload_warning_allowed() {
                    pr_warn!("module {}: profile not kept ({reason})\n", self.name);
                }
            }
        }
    }

    /// Merges the counts of `live`, a module being unloaded, into the
    /// saved profile of its build, created if there is none. The caller
    /// holds `writer` and a change.
    fn keep(&self, live: &ProfiledObject, retired: &core::ops::Range<u64>) -> Result<(), Lost> {
        let records = live.record_count();
        let mut scratch = KVVec::with_capacity(records, GFP_KERNEL)?;
        for _ in 0..records {
            scratch.push(FunctionAddress::default(), GFP_KERNEL)?;
        }
        let mut saved = self.module.saved.load(Ordering::Acquire);
        // SAFETY: the list's profiles are freed only under `writer`, which
        // the caller holds (type invariant).
        while let Some(profile) = unsafe { saved.as_ref() } {
            if same_build(&profile.object, live) {
                return merge(&profile.object, live, retired, &mut scratch)
                    .map(|_| ())
                    .map_err(Lost::Merge);
            }
            saved = profile.older.load(Ordering::Acquire);
        }
        // The first unload of this build: a saved profile of its own.
        let layout = SavedLayout::of(live).map_err(|e| Lost::Merge(MergeError::Version(e)))?;
        let bytes = layout.size();
        KEPT_BYTES
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                kept.checked_add(bytes)
                    .filter(|&total| total <= KEPT_PROFILES_LIMIT)
            })
            .map_err(|_| Lost::OverLimit)?;
        let profile = self.new_saved(live, retired, &layout, &mut scratch);
        let profile = match profile {
            Ok(profile) => profile,
            Err(lost) => {
                KEPT_BYTES.fetch_sub(bytes, Ordering::Relaxed);
                return Err(lost);
            }
        };
        KEPT_PROFILES.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: leaked, linked in front of the list under `writer`.
        self.module
            .saved
            .store(KBox::into_raw(profile), Ordering::Release);
        Ok(())
    }

    /// A saved profile of `live`'s build, holding `live`'s counts.
    fn new_saved(
        &self,
        live: &ProfiledObject,
        retired: &core::ops::Range<u64>,
        layout: &SavedLayout,
        scratch: &mut [FunctionAddress],
    ) -> Result<KBox<Saved>, Lost> {
        let mut buffer = KVVec::from_elem(0u64, layout.size().div_ceil(8), GFP_KERNEL)?;
        // `live`'s sections are mapped during its GOING notification; the
        // buffer moves into the saved profile with the descriptor, never
        // resized.
        // SAFETY: the layout is `live`'s; the buffer is zeroed, 8-byte
        // aligned and large enough.
        let object = unsafe { layout.build(live, buffer.as_mut_ptr().cast()) };
        merge(&object, live, retired, scratch).map_err(Lost::Merge)?;
        RcuBox::new(SavedProfile {
            object,
            _buffer: buffer,
            bytes: layout.size(),
            older: AtomicPtr::new(self.module.saved.load(Ordering::Acquire)),
        })
        .map_err(|_| Lost::NoMemory)
    }
}

#[cfg(CONFIG_MODULES)]
impl Registry {
    /// `MODULE_STATE_COMING`: registers an instrumented module.
    fn module_coming(&self, module: &Module<'_>) {
        if !module.is_instrumented() {
            return;
        }
        let name = Name::new(module.name());
        match self.register(module, &name) {
            Ok(()) => {
                MODULES_PROFILED.fetch_add(1, Ordering::Relaxed);
            }
            Err(refusal) => {
                MODULES_REFUSED.fetch_add(1, Ordering::Relaxed);
                pr_err!("module {name}: {refusal}; not profiled\n");
            }
        }
    }

    /// Registers and publishes `module`: every fallible step first,
    /// publication last.
    fn register(&self, module: &Module<'_>, name: &Name) -> Result<(), Refusal> {
        if name.as_bytes() == b"vmlinux" {
            return Err(Refusal::NamedVmlinux);
        }
        // The descriptor's sections are read by the hooks and by readers
        // only as `profiled_object` allows: `module_going` withdraws it
        // from both when it handles the module's GOING notification, and
        // frees it after a grace period. If a later step fails, it is
        // dropped unused.
        // SAFETY: the module is COMING, and kpgo's notifier, registered
        // before any module could load, gets its GOING notification.
        let object = unsafe { module.profiled_object() }.map_err(Refusal::Sections)?;
        if !objects::in_module_area(&object) {
            return Err(Refusal::OutsideArea);
        }
        object.set_values_per_site(vmlinux().values_per_site());
        // SAFETY: `register` is called by `module_coming` only, for the
        // module of a COMING notification.
        let text = unsafe { module.text() };
        let descriptor = ModuleObject::new(object, module.id(), text).map_err(Refusal::Failed)?;
        objects::reserve(&descriptor.object).map_err(Refusal::Failed)?;
        let entry = self.add(Kind::Module, name).map_err(Refusal::Failed)?;
        // None of its code has run: a value at one of its addresses was
        // recorded for code that was there before (whose going was not
        // seen: an unprofiled module, async init code that ran after its
        // LIVE notification, a BPF program) and names no function of it.
        for range in [&descriptor.text, &descriptor.init_text] {
            rename_everywhere(range, |_| RETIRED_TAG);
        }
        // The last step, which cannot fail but for a name that is live.
        if entry.publish(descriptor) {
            // Published, before any of its code runs: its bias joins the
            // switches'.
            #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
            if let Some(object) = entry.live(&entry.read_section()) {
                super::epochs::join(object);
            }
            Ok(())
        } else {
            Err(Refusal::NameLive)
        }
    }

    /// `MODULE_STATE_LIVE`: the module's init text is freed next, so its
    /// addresses name none of its functions from now on.
    fn module_live(&self, module: &Module<'_>) {
        let Some(entry) = self.find_module(Name::new(module.name()).as_bytes()) else {
            return;
        };
        entry.retire_init(module.id());
    }

    /// `MODULE_STATE_GOING`: withdraws the module and keeps its counts. A
    /// module that was not registered (not instrumented, refused) has no
    /// live entry and is ignored.
    fn module_going(&self, module: &Module<'_>) {
        if let Some(entry) = self.find_module(Name::new(module.name()).as_bytes()) {
            entry.withdraw(module.id());
        }
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

#[cfg(CONFIG_MODULES)]
struct Events;

#[cfg(CONFIG_MODULES)]
impl ModuleEvents for Events {
    fn coming(module: &Module<'_>) {
        if let Ok(registry) = registry() {
            registry.module_coming(module);
        }
    }

    fn live(module: &Module<'_>) {
        if let Ok(registry) = registry() {
            registry.module_live(module);
        }
    }

    fn going(module: &Module<'_>) {
        if let Ok(registry) = registry() {
            registry.module_going(module);
        }
    }
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

/// Renames, in every object, the values that are addresses in `gone`
/// (code of `module` that goes) to the retired addresses of `module`'s
/// functions (`ProfiledObject::rename_values`).
#[cfg(CONFIG_MODULES)]
fn retire_code(gone: &core::ops::Range<u64>, module: &ModuleObject) {
    rename_everywhere(gone, |address| retired_address_in(&module.object, address));
}

/// Renames, in every object, the values that are addresses in `range` to
/// `rename(value)`.
#[cfg(CONFIG_MODULES)]
fn rename_everywhere(range: &core::ops::Range<u64>, rename: impl Fn(u64) -> u64) {
    if range.is_empty() {
        return;
    }
    for_each_profiled_object(|found| {
        found.object.rename_values(range, &rename);
    });
}

#[cfg(CONFIG_MODULES)]
static MODULE_NOTIFIER: ModuleNotifier = ModuleNotifier::new::<Events>();

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

/// Calls `f(object, may_sleep)` on every live object, vmlinux's and each
/// loaded module's, each in a read-side section of its own, in which `f`
/// may sleep if `may_sleep` (vmlinux's). Where the caller may sleep.
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
pub(crate) fn for_each_live_object(mut f: impl FnMut(&ProfiledObject, bool)) {
    let Ok(registry) = registry() else {
        return;
    };
    for entry in registry.entries() {
        reschedule_point();
        let section = entry.read_section();
        if let Some(object) = entry.live(&section) {
            f(object, section.may_sleep());
        }
    }
}

/// vmlinux's reset baselines: allocated once, never freed.
fn attach_vmlinux_baselines() -> Result {
    let capacity = vmlinux().node_capacity();
    let mut baselines = KVVec::with_capacity(capacity, GFP_KERNEL)?;
    for _ in 0..capacity {
        baselines.push(AtomicU64::new(0), GFP_KERNEL)?;
    }
    let (baselines, _, _) = baselines.into_raw_parts();
    // Leaked: valid for good, and referenced from `VMLINUX` for kmemleak.
    // SAFETY: one zeroed baseline per node of vmlinux's pool, accessed
    // only through atomics.
    unsafe { vmlinux().attach_baselines(baselines) };
    Ok(())
}

/// Creates the debugfs directory, the registry that holds it, then the
/// files, then follows modules. On an error, what was created is removed
/// again (the directory is removed when it is dropped; a registry that was
/// published stays, unused).
pub(crate) fn init() -> Result {
    // First: whatever fails below, the region gets the rest of the
    // boot's counts.
    #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
    super::persist::settle();
    attach_vmlinux_baselines()?;
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
    #[cfg(CONFIG_MODULES)]
    let files = files.and_then(|()| MODULE_NOTIFIER.register());
    if let Err(error) = files {
        // Dropping the directory removes it, which waits for running
        // handlers; none takes this lock.
        drop(registry.creating.lock().take());
        return Err(error);
    }
    Ok(())
}
