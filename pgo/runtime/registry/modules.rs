// SPDX-License-Identifier: GPL-2.0

//! The registry's module half (only with module support): module entries'
//! live descriptors and saved profiles, and the module lifecycle that
//! makes and unmakes them.
//!
//! # Module lifecycle
//!
//! At `MODULE_STATE_COMING`, before the module's init function runs, every
//! step that can fail comes first: the name, the check of the module's
//! sections (`ProfiledObject::new_checked`), its place in the module area,
//! the descriptor and its baselines, the map's tables, the entry and its
//! file. Publishing the descriptor to the hooks and to readers is the last
//! step and cannot fail. A module that fails any step is not profiled: one
//! log line, counted in `modules_refused`; nothing else changed but for
//! the map's tables it allocated, which stay for later modules.
//!
//! At `MODULE_STATE_GOING`, after the module's exit function, the module
//! (found by its name and identity) is withdrawn from the hooks and
//! readers, its counts are merged into the saved profile of its build
//! (created at the first unload; all saved profiles together take at most
//! `CONFIG_PGO_KEPT_PROFILES_KB`), and the notification waits for an RCU
//! grace period and for the read sections under way (`ReadSection`, which
//! may sleep: one read of a profile at most), then frees its descriptor:
//! when it returns, no hook or reader uses the descriptor or the module's
//! memory (`objects::modules`).
//!
//! The module notifier is registered before any module can load (see
//! `glue.c`), so every module comes through COMING.

use core::fmt;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use kernel::module_notifier::{self, Module, Registration};
use kernel::prelude::*;

use super::{
    for_each_profiled_object, registry, Entry, KeepsLive, Kind, LastStats, ModuleFigures, Name,
    Registry, WriterGuard,
};
use crate::profile::callees::{retired_address_in, RETIRED_TAG};
use crate::profile::check::SectionError;
use crate::profile::saved::{merge, same_build, FunctionAddress, MergeError, SavedLayout};
use crate::profile::sections::{ProfiledObject, Stats};
use crate::runtime::kernel_api::{
    unload_warning_allowed, wait_for_read_sections, ModuleExt, ReadSection, MODULE_NAME_LEN,
};
use crate::runtime::objects::{self, vmlinux, Descriptor, ModuleObject};

/// Longest entry name, with its NUL: a module's.
pub(super) const NAME_LEN: usize = MODULE_NAME_LEN;

/// Bytes of saved profiles of unloaded modules, all modules together.
const KEPT_PROFILES_LIMIT: usize = kernel::bindings::CONFIG_PGO_KEPT_PROFILES_KB as usize * 1024;

/// Module loads profiled and refused, since boot.
static MODULES_PROFILED: AtomicUsize = AtomicUsize::new(0);
static MODULES_REFUSED: AtomicUsize = AtomicUsize::new(0);
/// Modules profiled now.
static MODULES_LIVE: AtomicUsize = AtomicUsize::new(0);
/// Saved profiles and their bytes, all entries together.
static KEPT_PROFILES: AtomicUsize = AtomicUsize::new(0);
static KEPT_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The module half's figures for `stats`.
pub(super) fn figures() -> ModuleFigures {
    let figure = |counter: &AtomicUsize| counter.load(Ordering::Relaxed);
    let map_tables = figure(&objects::MAP_TABLES);
    ModuleFigures {
        live: figure(&MODULES_LIVE),
        profiled: figure(&MODULES_PROFILED),
        refused: figure(&MODULES_REFUSED),
        descriptors: figure(&objects::DESCRIPTORS),
        descriptor_bytes: figure(&objects::DESCRIPTORS_BYTES),
        map_tables,
        map_bytes: map_tables * objects::TABLE_BYTES,
        kept_profiles: figure(&KEPT_PROFILES),
        kept_bytes: figure(&KEPT_BYTES),
        kept_limit_bytes: KEPT_PROFILES_LIMIT,
    }
}

/// The saved profile of one build of a module, merged into at each unload
/// of that build (`profile::saved`).
struct SavedProfile {
    object: ProfiledObject,
    /// The memory `object` describes: never resized, so never moved.
    _buffer: KVVec<u64>,
    bytes: usize,
    /// The saved profile of another build of the same name, or null.
    older: AtomicPtr<SavedProfile>,
}

/// What a module's entry holds: its live descriptor, its saved profiles.
///
/// # Invariants
///
/// `live` is null or a descriptor leaked by [`Entry::publish`], withdrawn
/// from it (and then freed after a grace period) only under the entry's
/// `writer`; `saved` is null or the newest of a list of saved profiles
/// leaked by [`Entry::keep`], each linking the next older, unlinked only
/// under `writer` (and then freed by [`Unlinked`]'s drop).
pub(super) struct ModuleParts {
    live: AtomicPtr<Descriptor>,
    saved: AtomicPtr<SavedProfile>,
}

impl Default for ModuleParts {
    fn default() -> Self {
        // INVARIANT: no descriptor, no saved profile.
        Self {
            live: AtomicPtr::new(ptr::null_mut()),
            saved: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

impl LastStats {
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
}

/// Why a module is not profiled.
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
    /// A section written at run time is outside its writable data
    /// (`ProfiledObject::unwritable_section`).
    NotWritable(&'static str),
    /// An allocation or the debugfs file failed.
    Failed(Error),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NamedVmlinux => f.write_str("the name vmlinux is the kernel's"),
            Refusal::NameLive => f.write_str("a module of this name is already profiled"),
            Refusal::Sections(error) => error.fmt(f),
            Refusal::OutsideArea => f.write_str("its __llvm_prf_data is outside the module area"),
            Refusal::NotWritable(section) => {
                write!(f, "{section} not in the module's writable data")
            }
            Refusal::Failed(error) if *error == ENOMEM => f.write_str("out of memory"),
            Refusal::Failed(error) => write!(f, "registration failed ({error:?})"),
        }
    }
}

/// Why an unload's counts were not kept.
enum Lost {
    /// A new saved profile would take the saved profiles beyond the limit.
    OverLimit,
    /// No memory for it.
    NoMemory,
    /// The counts could not be merged.
    Merge(MergeError),
}

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

impl From<kernel::alloc::AllocError> for Lost {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Lost::NoMemory
    }
}

impl Entry {
    /// Calls `f(object, retired)` on every object of the module entry's
    /// profile, in file order (`Entry::for_each_object_and_retired`): the
    /// saved profiles, whose records carry their retired addresses
    /// already, then the live object with its freed init text
    /// (`ModuleObject::retired_text`).
    pub(super) fn for_each_module_object<'a, E>(
        &'a self,
        section: &'a ReadSection,
        mut f: impl FnMut(&'a ProfiledObject, core::ops::Range<u64>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_saved(section, |profile| f(&profile.object, 0..0))?;
        // One load of the live descriptor: its object and its gone code
        // go together.
        match self.live_descriptor(section) {
            Some(descriptor) => f(&descriptor.object, descriptor.retired_text()),
            None => Ok(()),
        }
    }

    /// The live module's object, if any; `proof` keeps the entry's
    /// objects (`Entry::live` checked).
    pub(super) fn live_module<'a>(
        &'a self,
        proof: &'a impl KeepsLive,
    ) -> Option<&'a ProfiledObject> {
        self.live_descriptor(proof)
            .map(|descriptor| &descriptor.object)
    }

    /// The saved profiles and their bytes.
    pub(super) fn saved_figures(&self, section: &ReadSection) -> (usize, usize) {
        let (mut profiles, mut bytes) = (0, 0);
        let _ = self.for_each_saved(section, |profile| {
            profiles += 1;
            bytes += profile.bytes;
            Ok::<(), ()>(())
        });
        (profiles, bytes)
    }

    /// A reset: unlinks the saved profiles and forgets the unloads. The
    /// caller holds `writer` and a change, and drops what this returns
    /// after both.
    pub(super) fn forget_unloads(&self) -> Unlinked {
        self.lost_unloads.store(0, Ordering::Relaxed);
        self.kept_unloads.store(0, Ordering::Relaxed);
        let newest = self.module.saved.swap(ptr::null_mut(), Ordering::AcqRel);
        // Off the limit now, for the unloads that come before the free.
        let mut saved = newest;
        // SAFETY: the list's profiles are freed only by `Unlinked`, which
        // this returns: valid until then.
        while let Some(profile) = unsafe { saved.as_ref() } {
            KEPT_PROFILES.fetch_sub(1, Ordering::Relaxed);
            KEPT_BYTES.fetch_sub(profile.bytes, Ordering::Relaxed);
            saved = profile.older.load(Ordering::Acquire);
        }
        // INVARIANT: unlinked under `writer`, reachable by nothing that
        // begins later (the invariant of `ModuleParts`).
        Unlinked(newest)
    }

    /// Calls `f` on every saved profile, newest first.
    fn for_each_saved<'a, E>(
        &'a self,
        proof: &'a impl KeepsLive,
        mut f: impl FnMut(&'a SavedProfile) -> Result<(), E>,
    ) -> Result<(), E> {
        if !proof.keeps(self) {
            pr_warn!(
                "{}: saved profiles read without a section\n",
                format_args!("{}", self.name)
            );
            return Ok(());
        }
        let mut saved = self.module.saved.load(Ordering::Acquire);
        // The list's profiles are freed only once the read sections under
        // way at their unlinking under `writer` have ended (the invariant of
        // `ModuleParts`, `Unlinked`).
        // SAFETY: `proof` keeps this entry (checked): a read-side section
        // begun before these loads, or this entry's `writer`.
        while let Some(profile) = unsafe { saved.as_ref() } {
            f(profile)?;
            saved = profile.older.load(Ordering::Acquire);
        }
        Ok(())
    }

    /// The live module's descriptor, if any.
    fn live_descriptor<'a>(&'a self, proof: &'a impl KeepsLive) -> Option<&'a Descriptor> {
        if self.kind != Kind::Module || !proof.keeps(self) {
            return None;
        }
        // A descriptor is freed only once the read sections under way at
        // its withdrawal under `writer` have ended (the invariant of
        // `ModuleParts`, `objects::retire`).
        // SAFETY: `proof` keeps this entry (checked above): a read-side
        // section begun before this load, or this entry's `writer`.
        unsafe { self.module.live.load(Ordering::Acquire).as_ref() }
    }

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
            core::ptr::from_ref(descriptor).cast_mut(),
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
                    pr_warn!(
                        "module {}\n",
                        format_args!("{}: profile not kept ({reason})", self.name)
                    );
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
    ) -> Result<KBox<SavedProfile>, Lost> {
        let mut buffer = KVVec::from_elem(0u64, layout.size().div_ceil(8), GFP_KERNEL)?;
        // `live`'s sections are mapped during its GOING notification; the
        // buffer moves into the saved profile with the descriptor, never
        // resized.
        // SAFETY: the layout is `live`'s; the buffer is zeroed, 8-byte
        // aligned and large enough.
        let object = unsafe { layout.build(live, buffer.as_mut_ptr().cast()) };
        merge(&object, live, retired, scratch).map_err(Lost::Merge)?;
        KBox::new(
            SavedProfile {
                object,
                _buffer: buffer,
                bytes: layout.size(),
                older: AtomicPtr::new(self.module.saved.load(Ordering::Acquire)),
            },
            GFP_KERNEL,
        )
        .map_err(|_| Lost::NoMemory)
    }
}

impl Registry {
    /// `MODULE_STATE_COMING`: registers an instrumented module.
    fn module_coming(&self, module: &Module<'_>) {
        if !module.is_instrumented() {
            return;
        }
        let Some(name) = module_name(module) else {
            MODULES_REFUSED.fetch_add(1, Ordering::Relaxed);
            pr_err!("a module whose name has no terminating NUL; not profiled\n");
            return;
        };
        match self.register(module, &name) {
            Ok(()) => {
                MODULES_PROFILED.fetch_add(1, Ordering::Relaxed);
            }
            Err(refusal) => {
                MODULES_REFUSED.fetch_add(1, Ordering::Relaxed);
                pr_err!(
                    "module {}\n",
                    format_args!("{name}: {refusal}; not profiled")
                );
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
        // SAFETY: as above, the module is COMING.
        if let Some(section) = object.unwritable_section(&unsafe { module.data() }) {
            return Err(Refusal::NotWritable(section));
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
                crate::runtime::epochs::join(object);
            }
            Ok(())
        } else {
            Err(Refusal::NameLive)
        }
    }

    /// `MODULE_STATE_LIVE`: the module's init text is freed next, so its
    /// addresses name none of its functions from now on.
    fn module_live(&self, module: &Module<'_>) {
        let Some(entry) = module_name(module).and_then(|name| self.find_module(name.as_bytes()))
        else {
            return;
        };
        entry.retire_init(module.id());
    }

    /// `MODULE_STATE_GOING`: withdraws the module and keeps its counts. A
    /// module that was not registered (not instrumented, refused) has no
    /// live entry and is ignored.
    fn module_going(&self, module: &Module<'_>) {
        if let Some(entry) = module_name(module).and_then(|name| self.find_module(name.as_bytes()))
        {
            entry.withdraw(module.id());
        }
    }
}

/// `module`'s name as an entry's (`None`: a name without a terminating
/// NUL, which no entry has).
fn module_name(module: &Module<'_>) -> Option<Name> {
    let name = module.name()?.as_char_ptr();
    // `core`'s `CStr` for its bytes, which 6.12's and 7.3's `kernel` `CStr`
    // give under different names; the bytes are the same whatever the
    // signedness of `char`.
    #[allow(clippy::disallowed_methods)]
    // SAFETY: `name` is a `CStr`'s: NUL-terminated, and valid as long as
    // `module`.
    let bytes = unsafe { core::ffi::CStr::from_ptr(name.cast()) }.to_bytes();
    Some(Name::new(bytes))
}

struct Events;

impl module_notifier::Events for Events {
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

/// A list of saved profiles that an entry unlinked, freed by the drop once
/// every read section that may have found them has ended. Dropped outside
/// the entry's `writer` and change (a read section may wait for a change
/// to end, and the drop waits for the sections).
///
/// # Invariants
///
/// Null, or the newest of a list of saved profiles leaked by
/// [`Entry::keep`] and unlinked from their entry under its `writer`: no
/// read section that begins after that finds them.
pub(super) struct Unlinked(*mut SavedProfile);

impl Drop for Unlinked {
    fn drop(&mut self) {
        if self.0.is_null() {
            return;
        }
        wait_for_read_sections();
        let mut saved = self.0;
        while !saved.is_null() {
            // SAFETY: leaked by `keep` (type invariant); no read section
            // that found it is under way any more (the wait above), and
            // the list is this one's alone.
            let profile = unsafe { KBox::from_raw(saved) };
            saved = profile.older.load(Ordering::Acquire);
        }
    }
}

/// Renames, in every object, the values that are addresses in `gone`
/// (code of `module` that goes) to the retired addresses of `module`'s
/// functions (`ProfiledObject::rename_values`).
fn retire_code(gone: &core::ops::Range<u64>, module: &ModuleObject) {
    rename_everywhere(gone, |address| retired_address_in(&module.object, address));
}

/// Renames, in every object, the values that are addresses in `range` to
/// `rename(value)`.
fn rename_everywhere(range: &core::ops::Range<u64>, rename: impl Fn(u64) -> u64) {
    if range.is_empty() {
        return;
    }
    for_each_profiled_object(|found| {
        found.object.rename_values(range, &rename);
    });
}

/// Follows modules from now on: registers the module notifier, for good
/// (kpgo is built in).
pub(super) fn register_notifier() -> Result {
    let registration = KBox::pin_init(Registration::<Events>::new(), GFP_KERNEL)?;
    // Never unregistered: the chain holds it (and kmemleak sees it there).
    core::mem::forget(registration);
    Ok(())
}
