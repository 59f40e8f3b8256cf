// SPDX-License-Identifier: GPL-2.0

//! Every profiled object, by name: vmlinux and each instrumented module
//! that was ever loaded.
//!
//! vmlinux and modules are [`Entry`]s alike, so files, reset, stats and
//! snapshots take one path. Entries are never freed: each has its
//! `<name>.profraw` file, which names it by its index.
//!
//! # Names
//!
//! vmlinux's entry is of its own kind: a module is looked up only among
//! module entries, so no module can find, replace or reset it, and a
//! module named `vmlinux` (whose file would clash with vmlinux's) is not
//! profiled. Modules of one name loaded one after the other share one
//! entry and one file: the kept profiles of earlier loads, then the live
//! one, concatenated raw profiles that `llvm-profdata merge` sums.
//!
//! # Module lifecycle
//!
//! At `MODULE_STATE_COMING`, before the module's init function runs, every
//! step that can fail comes first: the name, the check of the module's
//! sections (`ProfiledObject::new_checked`), a slot, the descriptor's
//! allocation, the entry and its file. Publishing the descriptor to the
//! hooks is the last step and cannot fail; it yields the guard whose drop
//! withdraws the slot. A module that fails any step is not profiled: one
//! log line, nothing written, counted in `modules_refused`.
//!
//! At `MODULE_STATE_GOING`, after the module's exit function, the module
//! (found by its identity, not its name) is withdrawn, its final profile
//! kept (up to `CONFIG_PGO_KEPT_PROFILES_KB` in all) and the descriptor
//! left to the hooks that may still hold it (`objects`).
//!
//! Modules loaded before kpgo's initcall are registered by a walk over the
//! live modules at init, after the notifier is registered: a module seen
//! by both is registered once (the second sees it registered, by its
//! identity). The walk leaves out modules still COMING (`pgo/glue.c` says
//! why), and a live module's GOING notification comes after the walk.
//!
//! Management (notifier, open, reset, stats) is serialized by one mutex;
//! the hooks never take it: they see modules through `objects`' slots.

use core::fmt::{self, Write};
use core::pin::Pin;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::Mutex;

use super::debugfs::{self, ProfileFile};
use super::kernel_api::Dir;
use super::objects::{self, vmlinux, MODULE_SLOTS};
use super::snapshot::append_profile;
use crate::profile::sections::{ProfiledObject, Stats};

#[cfg(CONFIG_MODULES)]
use super::kernel_api::{for_each_loaded_module, unload_warning_allowed, Module};
#[cfg(CONFIG_MODULES)]
use super::kernel_api::{ModuleEvents, ModuleNotifier};
#[cfg(CONFIG_MODULES)]
use super::snapshot::{measure_profile, serialize_profile};
#[cfg(CONFIG_MODULES)]
use crate::profile::check::SectionError;

/// Bytes of kept profiles of unloaded modules, all modules together.
#[cfg(CONFIG_MODULES)]
const KEPT_PROFILES_LIMIT: usize = kernel::bindings::CONFIG_PGO_KEPT_PROFILES_KB as usize * 1024;
#[cfg(not(CONFIG_MODULES))]
const KEPT_PROFILES_LIMIT: usize = 0;

/// Longest module name, with its NUL (`MODULE_NAME_LEN` on 64-bit).
const NAME_LEN: usize = 56;

/// The name of an entry: `vmlinux`, or a module's name.
struct Name {
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

/// A module that is loaded now.
#[cfg(CONFIG_MODULES)]
struct LiveModule {
    /// Its descriptor, published to the hooks until this is dropped.
    published: objects::Published,
    /// The `struct module` it belongs to (`Module::id`).
    id: usize,
}

/// What an entry profiles.
enum Kind {
    /// The kernel image, live for good.
    Vmlinux,
    /// A module, live while it is loaded.
    #[cfg(CONFIG_MODULES)]
    Module {
        live: Option<LiveModule>,
        /// The figures of the last load, once unloaded.
        last: Stats,
    },
}

/// The profiled object behind one `<name>.profraw` file.
pub(crate) struct Entry {
    kind: Kind,
    name: Name,
    /// Profiles of earlier loads of the module, oldest first.
    kept: KVec<VVec<u8>>,
    /// Unloads whose profile was not kept.
    lost: usize,
}

impl Entry {
    fn new(kind: Kind, name: Name) -> Self {
        Self {
            kind,
            name,
            kept: KVec::new(),
            lost: 0,
        }
    }

    /// The live object, if any.
    fn object(&self) -> Option<&ProfiledObject> {
        match &self.kind {
            Kind::Vmlinux => Some(vmlinux()),
            #[cfg(CONFIG_MODULES)]
            Kind::Module { live, .. } => live.as_ref().map(|live| live.published.object()),
        }
    }

    /// Whether this is the entry of the modules named `name`.
    fn is_module(&self, name: &[u8]) -> bool {
        let module = match self.kind {
            Kind::Vmlinux => false,
            #[cfg(CONFIG_MODULES)]
            Kind::Module { .. } => true,
        };
        module && self.name.as_bytes() == name
    }

    fn kept_bytes(&self) -> usize {
        self.kept.iter().map(|p| p.len()).sum()
    }

    /// Kept profiles, then the live one, as one file.
    fn snapshot(&self) -> Result<VVec<u8>> {
        let mut bytes = VVec::new();
        for profile in self.kept.iter() {
            bytes.extend_from_slice(profile, GFP_KERNEL)?;
        }
        match self.object() {
            Some(object) => append_profile(object, bytes),
            None => Ok(bytes),
        }
    }

    /// Zeroes the live counters and values and forgets kept profiles.
    fn reset(&mut self) -> Result {
        self.kept = KVec::new();
        self.lost = 0;
        match self.object() {
            // The version was checked when the object was registered.
            Some(object) => object.reset().map_err(|_| EINVAL),
            None => Ok(()),
        }
    }

    fn write_stats(&self, out: &mut impl Write) -> fmt::Result {
        let (state, stats) = match (&self.kind, self.object()) {
            (_, Some(object)) => ("live", object.stats()),
            #[cfg(CONFIG_MODULES)]
            (Kind::Module { last, .. }, None) => ("unloaded", *last),
            _ => ("unloaded", Stats::default()),
        };
        writeln!(
            out,
            "object={} state={state} functions={} counters={} value_sites={} \
             value_nodes_used={} value_nodes={} values_dropped={} \
             kept_profiles={} kept_bytes={} lost_profiles={}",
            self.name,
            stats.functions,
            stats.counters,
            stats.value_sites,
            stats.nodes_used,
            stats.nodes_capacity,
            stats.values_dropped,
            self.kept.len(),
            self.kept_bytes(),
            self.lost
        )
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
    /// Every slot is taken.
    NoSlot,
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
            Refusal::NoSlot => write!(f, "all {MODULE_SLOTS} module slots are in use"),
            Refusal::Failed(error) if *error == ENOMEM => f.write_str("out of memory"),
            Refusal::Failed(error) => write!(f, "registration failed ({error:?})"),
        }
    }
}

/// Why a module's profile was not kept at unload.
#[cfg(CONFIG_MODULES)]
enum Lost {
    /// It would take the kept profiles beyond the limit.
    OverLimit,
    /// No memory for it.
    NoMemory,
    /// It could not be serialized.
    Serialization(Error),
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
            Lost::Serialization(error) => write!(f, "serialization failed: {error:?}"),
        }
    }
}

/// The final profile of a module at unload, if it fits in `budget` bytes.
#[cfg(CONFIG_MODULES)]
fn final_profile(object: &ProfiledObject, budget: usize) -> Result<VVec<u8>, Lost> {
    // Measured first: a profile over the limit is not even allocated.
    if measure_profile(object).map_err(Lost::Serialization)? > budget {
        return Err(Lost::OverLimit);
    }
    let profile = serialize_profile(object).map_err(|error| {
        if error == ENOMEM {
            Lost::NoMemory
        } else {
            Lost::Serialization(error)
        }
    })?;
    // It may have grown since it was measured.
    if profile.len() > budget {
        return Err(Lost::OverLimit);
    }
    Ok(profile)
}

/// All entries, and what the runtime as a whole reports.
pub(crate) struct Registry {
    entries: KVec<Entry>,
    /// The `pgo` directory, once its fixed files exist.
    dir: Option<Dir>,
    /// Module loads profiled, since boot.
    modules_profiled: usize,
    /// Module loads not profiled although instrumented, since boot.
    modules_refused: usize,
    /// Module descriptors published (never freed), since boot.
    descriptors: usize,
}

/// Appends `entry` and creates its file `<name>.profraw` in `dir`, which
/// names it by its index; returns the index.
fn add_entry(entries: &mut KVec<Entry>, dir: &Dir, entry: Entry) -> Result<usize> {
    const SUFFIX: &[u8] = b".profraw\0";
    entries.reserve(1, GFP_KERNEL)?;
    let index = entries.len();
    let name = entry.name.as_bytes();
    let mut file_name = [0u8; NAME_LEN + SUFFIX.len()];
    file_name[..name.len()].copy_from_slice(name);
    file_name[name.len()..name.len() + SUFFIX.len()].copy_from_slice(SUFFIX);
    let file_name = CStr::from_bytes_with_nul(&file_name[..name.len() + SUFFIX.len()])?;
    dir.snapshot_file::<ProfileFile>(file_name, index)?;
    // Cannot fail: the room was reserved above. Were it to fail, the file
    // would name no entry, and opening it would fail with ENODEV.
    entries.push(entry, GFP_KERNEL)?;
    Ok(index)
}

impl Registry {
    const fn new() -> Self {
        Self {
            entries: KVec::new(),
            dir: None,
            modules_profiled: 0,
            modules_refused: 0,
            descriptors: 0,
        }
    }

    fn kept_bytes(&self) -> usize {
        self.entries.iter().map(|e| e.kept_bytes()).sum()
    }

    /// The contents of the `.profraw` file of entry `index`.
    pub(crate) fn profile(&self, index: usize) -> Result<VVec<u8>> {
        self.entries.get(index).ok_or(ENODEV)?.snapshot()
    }

    /// Applies a `reset` command (see [`ResetTarget`]); an unknown name or
    /// a malformed command is `EINVAL` and changes nothing.
    pub(crate) fn reset(&mut self, command: &[u8]) -> Result {
        let target = ResetTarget::parse(command)?;
        let mut entries = self.entries.iter_mut();
        let entry = match target {
            ResetTarget::All => return entries.try_for_each(|entry| entry.reset()),
            ResetTarget::Vmlinux => entries.find(|entry| matches!(entry.kind, Kind::Vmlinux)),
            ResetTarget::Module(name) => entries.find(|entry| entry.is_module(name)),
        };
        entry.ok_or(EINVAL)?.reset()
    }

    /// The `stats` file: the runtime, then one line per entry.
    pub(crate) fn stats(&self) -> Result<VVec<u8>> {
        let mut text = Text(VVec::new());
        self.write_stats(&mut text).map_err(|_| ENOMEM)?;
        Ok(text.0)
    }

    fn write_stats(&self, out: &mut impl Write) -> fmt::Result {
        writeln!(
            out,
            "runtime module_slots={MODULE_SLOTS} module_slots_used={} modules_profiled={} \
             modules_refused={} descriptors={} descriptor_bytes={} kept_bytes={} \
             kept_limit_bytes={KEPT_PROFILES_LIMIT}",
            objects::slots_in_use(),
            self.modules_profiled,
            self.modules_refused,
            self.descriptors,
            self.descriptors * objects::DESCRIPTOR_BYTES,
            self.kept_bytes(),
        )?;
        self.entries.iter().try_for_each(|e| e.write_stats(out))
    }
}

#[cfg(CONFIG_MODULES)]
impl Registry {
    /// The entry of the module `id` if it is live.
    fn live_module(&self, id: usize) -> Option<usize> {
        self.entries.iter().position(|entry| match &entry.kind {
            Kind::Module {
                live: Some(live), ..
            } => live.id == id,
            _ => false,
        })
    }

    /// A live module found by the walk at init: registered as at COMING.
    fn module_loaded(&mut self, module: &Module<'_>) {
        // Checked again under the registry lock, which GOING takes too.
        if module.is_live() {
            self.module_coming(module);
        }
    }

    /// `MODULE_STATE_COMING` (or a module found by the walk): registers an
    /// instrumented module once.
    fn module_coming(&mut self, module: &Module<'_>) {
        if !module.is_instrumented() || self.live_module(module.id()).is_some() {
            return;
        }
        let name = Name::new(module.name());
        match self.register(module, &name) {
            Ok(()) => self.modules_profiled += 1,
            Err(refusal) => {
                self.modules_refused += 1;
                pr_err!("module {name}: {refusal}; not profiled\n");
            }
        }
    }

    /// Registers and publishes `module`: every fallible step first,
    /// publication last.
    fn register(&mut self, module: &Module<'_>, name: &Name) -> Result<(), Refusal> {
        if name.as_bytes() == b"vmlinux" {
            return Err(Refusal::NamedVmlinux);
        }
        let existing = self
            .entries
            .iter()
            .position(|entry| entry.is_module(name.as_bytes()));
        if existing.is_some_and(|index| self.entries[index].object().is_some()) {
            return Err(Refusal::NameLive);
        }
        // The descriptor's sections are read only through the `LiveModule`
        // below, which `module_going` takes out of its entry when it handles
        // the module's GOING notification (found by `id`, under the registry
        // lock) and ends with `withdraw_then`; the hooks read them as
        // `ProfiledObject` allows. If a later step fails, the descriptor is
        // dropped unused.
        // SAFETY: the module is COMING (notifier) or live (walk, under
        // `module_mutex`), and kpgo's notifier, registered before either
        // call, gets its GOING notification; reads end there, as above.
        let object = unsafe { module.profiled_object() }.map_err(Refusal::Sections)?;
        object.set_values_per_site(vmlinux().values_per_site());
        let slot = objects::reserve().ok_or(Refusal::NoSlot)?;
        let descriptor = objects::Unpublished::new(object).map_err(Refusal::Failed)?;
        let index = match existing {
            Some(index) => index,
            None => {
                let dir = self.dir.as_ref().ok_or(Refusal::Failed(ENODEV))?;
                let kind = Kind::Module {
                    live: None,
                    last: Stats::default(),
                };
                add_entry(
                    &mut self.entries,
                    dir,
                    Entry::new(kind, Name::new(name.as_bytes())),
                )
                .map_err(Refusal::Failed)?
            }
        };
        // The last step, which cannot fail.
        let live = LiveModule {
            published: slot.publish(descriptor),
            id: module.id(),
        };
        self.descriptors += 1;
        if let Kind::Module { live: place, .. } = &mut self.entries[index].kind {
            *place = Some(live);
        }
        Ok(())
    }

    /// `MODULE_STATE_GOING`: withdraws the module, keeps its final
    /// profile. A module that was not registered (not instrumented,
    /// refused) has no live entry and is ignored.
    fn module_going(&mut self, module: &Module<'_>) {
        let Some(index) = self.live_module(module.id()) else {
            return;
        };
        let budget = KEPT_PROFILES_LIMIT.saturating_sub(self.kept_bytes());
        let entry = &mut self.entries[index];
        let Kind::Module { live, last } = &mut entry.kind else {
            return;
        };
        let Some(gone) = live.take() else {
            return;
        };
        // Withdrawn first: its exit function has run, the counters are
        // final but for code that outlives it (async work, timers), whose
        // values are no longer recorded.
        let profile = gone.published.withdraw_then(|object| {
            *last = object.stats();
            final_profile(object, budget)
        });
        let kept = profile.and_then(|profile| {
            entry
                .kept
                .push(profile, GFP_KERNEL)
                .map_err(|_| Lost::NoMemory)
        });
        if let Err(reason) = kept {
            entry.lost += 1;
            if unload_warning_allowed() {
                pr_warn!("module {}: profile not kept ({reason})\n", entry.name);
            }
        }
    }
}

/// A growable text buffer for `write!`.
struct Text(VVec<u8>);

impl Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

/// The registry: set once by [`init`], never freed.
static REGISTRY: AtomicPtr<Mutex<Registry>> = AtomicPtr::new(ptr::null_mut());

/// Locks the registry; `ENODEV` before [`init`] created it.
pub(crate) fn lock() -> Result<Guard<'static, Registry, MutexBackend>> {
    let registry = REGISTRY.load(Ordering::Acquire);
    // SAFETY: `REGISTRY` is null or, stored once by `init`, a pointer from
    // `KBox::into_raw` to an initialised, pinned mutex that is never freed
    // nor moved.
    let registry = unsafe { registry.as_ref() }.ok_or(ENODEV)?;
    Ok(registry.lock())
}

#[cfg(CONFIG_MODULES)]
struct Events;

#[cfg(CONFIG_MODULES)]
impl ModuleEvents for Events {
    fn coming(module: &Module<'_>) {
        if let Ok(mut registry) = lock() {
            registry.module_coming(module);
        }
    }

    fn going(module: &Module<'_>) {
        if let Ok(mut registry) = lock() {
            registry.module_going(module);
        }
    }
}

#[cfg(CONFIG_MODULES)]
static MODULE_NOTIFIER: ModuleNotifier = ModuleNotifier::new::<Events>();

/// Creates the registry, then the debugfs directory and its files, then
/// follows modules (the notifier, then the modules already loaded). On an
/// error, what was created is removed again (the registry stays, unused).
pub(crate) fn init() -> Result {
    let registry = KBox::pin_init(
        kernel::new_mutex!(Registry::new(), "kpgo_registry"),
        GFP_KERNEL,
    )?;
    // SAFETY: the mutex is never moved out of its allocation: the box
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

    let dir = Dir::create(c_str!("pgo"))?;
    let files = lock().and_then(|mut registry| {
        let vmlinux = Entry::new(Kind::Vmlinux, Name::new(b"vmlinux"));
        add_entry(&mut registry.entries, &dir, vmlinux)?;
        Ok(())
    });
    // Without the registry lock: removing waits for running handlers,
    // which take it.
    if let Err(error) = files.and_then(|()| debugfs::create_fixed_files(&dir)) {
        dir.remove();
        return Err(error);
    }
    lock()?.dir = Some(dir);

    #[cfg(CONFIG_MODULES)]
    {
        if let Err(error) = MODULE_NOTIFIER.register() {
            let dir = lock()?.dir.take();
            if let Some(dir) = dir {
                dir.remove();
            }
            return Err(error);
        }
        for_each_loaded_module(|module| {
            if let Ok(mut registry) = lock() {
                registry.module_loaded(module);
            }
        });
    }
    Ok(())
}
