// SPDX-License-Identifier: GPL-2.0

//! Every profiled object, by name: vmlinux and each instrumented module
//! that was ever loaded.
//!
//! vmlinux and modules are [`Entry`]s alike, so files, reset, stats and
//! snapshots take one path. A module is registered by the module notifier
//! at `MODULE_STATE_COMING`, before its init function runs, and published
//! to the hooks; at `MODULE_STATE_GOING`, after its exit function, its
//! profile is kept (up to `CONFIG_PGO_KEPT_PROFILES_KB` in all) and its
//! descriptor withdrawn. A module loaded again gets its kept profiles
//! followed by the live one in its file: concatenated raw profiles, which
//! `llvm-profdata merge` sums.
//!
//! Management (notifier, open, reset, stats) is serialized by one mutex;
//! the hooks never take it: they see modules through `objects`' slots.

use core::ffi::c_void;
use core::pin::Pin;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use kernel::bindings;
use kernel::error::to_result;
use kernel::ffi::{c_int, c_ulong};
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::Mutex;

use super::debugfs;
use super::objects::{self, vmlinux};
use super::snapshot::{serialize_profile, Snapshot};
use crate::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};

/// Bytes of kept profiles of unloaded modules, all modules together.
const KEPT_PROFILES_LIMIT: usize = bindings::CONFIG_PGO_KEPT_PROFILES_KB as usize * 1024;

/// Longest module name, with its NUL.
const NAME_LEN: usize = 56;

/// A module that is loaded now.
struct LiveModule {
    object: KBox<ProfiledObject>,
    slot: usize,
}

/// The profiled object behind one `<name>.profraw` file.
pub(crate) struct Entry {
    name: [u8; NAME_LEN],
    name_len: usize,
    /// vmlinux (for good) or a loaded module.
    live: Option<Live>,
    /// Profiles of earlier loads of the module, oldest first.
    kept: KVec<VVec<u8>>,
    /// Unloads whose profile was not kept: over the limit or no memory.
    lost: usize,
}

enum Live {
    Vmlinux,
    Module(LiveModule),
}

impl Entry {
    fn new(name: &[u8], live: Live) -> Self {
        let mut entry = Entry {
            name: [0; NAME_LEN],
            name_len: name.len().min(NAME_LEN - 1),
            live: Some(live),
            kept: KVec::new(),
            lost: 0,
        };
        entry.name[..entry.name_len].copy_from_slice(&name[..entry.name_len]);
        entry
    }

    /// The object or module name.
    pub(crate) fn name(&self) -> &[u8] {
        &self.name[..self.name_len]
    }

    fn object(&self) -> Option<&ProfiledObject> {
        match self.live.as_ref()? {
            Live::Vmlinux => Some(vmlinux()),
            Live::Module(module) => Some(&module.object),
        }
    }

    fn kept_bytes(&self) -> usize {
        self.kept.iter().map(|p| p.len()).sum()
    }

    /// Kept profiles, then the live one, as one file.
    pub(crate) fn snapshot(&self) -> Result<Snapshot> {
        let mut prefix = VVec::new();
        for profile in self.kept.iter() {
            prefix.extend_from_slice(profile, GFP_KERNEL)?;
        }
        match self.object() {
            Some(object) => Snapshot::profile(object, prefix),
            None => Ok(Snapshot::from_bytes(prefix)),
        }
    }

    /// Zeroes the live counters and values and forgets kept profiles.
    pub(crate) fn reset(&mut self) -> Result {
        self.kept = KVec::new();
        self.lost = 0;
        match self.object() {
            Some(object) => object.reset().map_err(|_| EINVAL),
            None => Ok(()),
        }
    }

    fn write_stats(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        let name = core::str::from_utf8(self.name()).unwrap_or("?");
        let state = if self.live.is_some() { "live" } else { "kept" };
        write!(out, "{name} {state}")?;
        if let Some(object) = self.object() {
            let s = object.stats();
            write!(
                out,
                " functions={} counters={} value_sites={} nodes={}/{} dropped={}",
                s.functions,
                s.counters,
                s.value_sites,
                s.nodes_used,
                s.nodes_capacity,
                s.values_dropped
            )?;
        }
        writeln!(
            out,
            " kept_profiles={} kept_bytes={} lost_profiles={}",
            self.kept.len(),
            self.kept_bytes(),
            self.lost
        )
    }
}

/// All entries. Entries are boxed and never freed, so that debugfs files
/// can name them by address.
pub(crate) struct Registry {
    entries: KVec<KBox<Entry>>,
}

impl Registry {
    fn find(&mut self, name: &[u8]) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .map(|e| &mut **e)
            .find(|e| e.name() == name)
    }

    fn kept_bytes(&self) -> usize {
        self.entries.iter().map(|e| e.kept_bytes()).sum()
    }

    /// Applies a `reset` command: `1` or `all`, `vmlinux` or a module name.
    pub(crate) fn reset(&mut self, command: &[u8]) -> Result {
        if command == b"1" || command == b"all" {
            for entry in self.entries.iter_mut() {
                entry.reset()?;
            }
            return Ok(());
        }
        self.find(command).ok_or(EINVAL)?.reset()
    }

    /// One line per entry.
    pub(crate) fn write_stats(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        self.entries.iter().try_for_each(|e| e.write_stats(out))
    }

    /// Registers vmlinux.
    fn add_vmlinux(&mut self) -> Result {
        self.add(KBox::new(
            Entry::new(b"vmlinux", Live::Vmlinux),
            GFP_KERNEL,
        )?)
    }

    /// Takes `entry` for good and gives it its file.
    fn add(&mut self, entry: KBox<Entry>) -> Result {
        let address = &*entry as *const Entry;
        self.entries.push(entry, GFP_KERNEL)?;
        // SAFETY: entries are never freed; the file may name this one.
        unsafe { debugfs::create_profile_file(address) }
    }

    /// `MODULE_STATE_COMING`: describes the module and publishes it.
    fn module_coming(&mut self, module: &bindings::module) -> Result {
        let pgo = &module.pgo;
        if pgo.data_size == 0 {
            return Ok(()); // not instrumented
        }
        let name = module_name(module);
        let object = KBox::new(
            // SAFETY: the loader placed these sections in the module's
            // memory, which stays mapped until after `MODULE_STATE_GOING`,
            // when `module_going` withdraws and frees this descriptor.
            unsafe { ProfiledObject::new(module_sections(pgo), version_word(pgo)) },
            GFP_KERNEL,
        )?;
        if let Err(error) = object.version() {
            pr_err!("module {}: {error}; not profiled\n", Name(name));
            return Ok(());
        }
        object.set_values_per_site(vmlinux().values_per_site());
        // SAFETY: `object` is withdrawn in `module_going` before it is
        // dropped.
        let Some(slot) = (unsafe { objects::publish(&object) }) else {
            pr_warn!("module {}: no free slot, not profiled\n", Name(name));
            return Ok(());
        };
        let live = Live::Module(LiveModule { object, slot });
        match self.find(name) {
            Some(entry) => entry.live = Some(live),
            None => self.add(KBox::new(Entry::new(name, live), GFP_KERNEL)?)?,
        }
        Ok(())
    }

    /// `MODULE_STATE_GOING`: keeps the final profile, withdraws the module.
    fn module_going(&mut self, module: &bindings::module) {
        let name = module_name(module);
        let budget = KEPT_PROFILES_LIMIT.saturating_sub(self.kept_bytes());
        let Some(entry) = self.find(name) else {
            return;
        };
        let Some(Live::Module(live)) = entry.live.take() else {
            return;
        };
        objects::withdraw(live.slot);
        // The module's code has stopped: its counters are final.
        match serialize_profile(&live.object) {
            Ok(profile) if profile.len() <= budget => {
                if entry.kept.push(profile, GFP_KERNEL).is_err() {
                    entry.lost += 1;
                }
            }
            _ => {
                entry.lost += 1;
                pr_warn!(
                    "module {}: profile not kept (CONFIG_PGO_KEPT_PROFILES_KB={} reached)\n",
                    Name(name),
                    bindings::CONFIG_PGO_KEPT_PROFILES_KB
                );
            }
        }
        // `live.object` is dropped here, after its withdrawal.
    }
}

/// Displays a module name.
struct Name<'a>(&'a [u8]);

impl core::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(core::str::from_utf8(self.0).unwrap_or("?"))
    }
}

fn module_name(module: &bindings::module) -> &[u8] {
    let name = &module.name;
    let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    &name[..len]
}

fn range(start: *mut c_void, len: u32) -> SectionRange {
    SectionRange::from_len(start.cast(), len as usize)
}

fn module_sections(pgo: &bindings::module_pgo_sections) -> Sections {
    let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
    notes[0] = range(pgo.notes, pgo.notes_size);
    Sections {
        data: range(pgo.data, pgo.data_size),
        counters: range(pgo.counters, pgo.counters_size),
        bitmap: range(pgo.bitmap, pgo.bitmap_size),
        names: range(pgo.names, pgo.names_size),
        vnodes: range(pgo.vnodes, pgo.vnodes_size),
        notes,
    }
}

/// The module's own version word, or vmlinux's if the module has none
/// (a module built by the same compiler always has one).
fn version_word(pgo: &bindings::module_pgo_sections) -> *const u64 {
    if pgo.raw_version.is_null() {
        objects::vmlinux_version_word()
    } else {
        pgo.raw_version
    }
}

/// The registry, set up once at boot and never freed.
static REGISTRY: AtomicPtr<Mutex<Registry>> = AtomicPtr::new(ptr::null_mut());

/// Locks the registry. `init` must have succeeded.
pub(crate) fn lock() -> Guard<'static, Registry, MutexBackend> {
    // SAFETY: set once by `init` before any file or notifier exists, and
    // never freed.
    unsafe { &*REGISTRY.load(Ordering::Acquire) }.lock()
}

/// A `notifier_block` that can be a `static`.
#[repr(transparent)]
struct Notifier(core::cell::UnsafeCell<bindings::notifier_block>);

// SAFETY: only the notifier chain, under its own lock, writes the block.
unsafe impl Sync for Notifier {}

static MODULE_NOTIFIER: Notifier =
    Notifier(core::cell::UnsafeCell::new(bindings::notifier_block {
        notifier_call: Some(module_event),
        next: ptr::null_mut(),
        priority: 0,
    }));

unsafe extern "C" fn module_event(
    _block: *mut bindings::notifier_block,
    action: c_ulong,
    data: *mut c_void,
) -> c_int {
    // SAFETY: module notifiers are called with the `struct module` being
    // loaded or unloaded, valid for the call.
    let module = unsafe { &*(data as *const bindings::module) };
    let mut registry = lock();
    match action as bindings::module_state {
        bindings::module_state_MODULE_STATE_COMING => {
            if let Err(error) = registry.module_coming(module) {
                pr_err!(
                    "module {}: not profiled ({error:?})\n",
                    Name(module_name(module))
                );
            }
        }
        bindings::module_state_MODULE_STATE_GOING => registry.module_going(module),
        _ => {}
    }
    bindings::NOTIFY_OK as c_int
}

/// Creates the registry with vmlinux and starts following modules.
pub(crate) fn init() -> Result {
    let registry: Pin<KBox<Mutex<Registry>>> = KBox::pin_init(
        kernel::new_mutex!(
            Registry {
                entries: KVec::new()
            },
            "kpgo_registry"
        ),
        GFP_KERNEL,
    )?;
    // SAFETY: the mutex is never moved out of its box, which is never
    // freed.
    let registry = KBox::into_raw(unsafe { Pin::into_inner_unchecked(registry) });
    REGISTRY.store(registry, Ordering::Release);
    lock().add_vmlinux()?;
    // SAFETY: the block is static; the chain is its only user.
    to_result(unsafe { bindings::register_module_notifier(MODULE_NOTIFIER.0.get()) })
}
