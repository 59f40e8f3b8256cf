// SPDX-License-Identifier: GPL-2.0

//! Loaded modules' descriptors, and the map the hooks find them in (only
//! with module support).
//!
//! # The module map
//!
//! A module's value-profiling call passes the address of one of the
//! module's data records, which lies in the module's own memory. The map
//! finds the module's descriptor from that address in constant time,
//! whatever the number of modules: it has one pointer per page of the
//! module area ([`MODULE_AREA`], where the loader places every module's
//! memory), in tables of [`PAGES_PER_TABLE`] pages (8 KiB for 4 MiB of the
//! area) that are allocated when a module first needs them and kept for
//! good: at most [`TABLES`] of them, however many modules come and go. A
//! page of a module's memory belongs to that module alone until the loader
//! frees it, after the module's GOING notification, at which the module's
//! pages were withdrawn from the map; so each page maps to at most one
//! descriptor, and the descriptor then checks that the record is exactly
//! one of its own. A module's cost in the map is one pointer per page of
//! its `__llvm_prf_data`.
//!
//! # When a descriptor is freed
//!
//! The hooks take no lock, run in NMI context, and may find a descriptor
//! just before its module's GOING notification withdraws it. So a hook
//! looks up and uses a descriptor, and the module memory it describes,
//! with preemption off (an RCU-sched read-side section; [`HookSection`]).
//! Profile readers use them in a read section of kpgo's SRCU (`registry`).
//! [`retire`], in the GOING notification, waits for both after the
//! withdrawal: when it returns, every hook and reader that
//! could have found the descriptor has finished, so the descriptor is
//! freed there, and the loader may free the module's memory once the
//! notification returns, whatever else it waits for. Module code that
//! runs after GOING (async work, which the loader waits for only
//! afterwards) finds nothing in the map and its values are not recorded.
//! Module code never runs where RCU is not watching: such code (idle,
//! entry) is `noinstr`, which is never instrumented.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use kernel::prelude::*;

use crate::profile::sections::ProfiledObject;
use crate::runtime::kernel_api::{wait_for_readers, HookSection, MODULE_AREA};

/// A loaded module's descriptor and what the runtime keeps for it.
pub(crate) struct ModuleObject {
    /// The descriptor of the module's sections.
    pub(crate) object: ProfiledObject,
    /// The `struct module` it belongs to (`Module::id`).
    pub(crate) module: usize,
    /// The module's text.
    pub(crate) text: core::ops::Range<u64>,
    /// The module's init text, and whether it is gone (freed after the
    /// init function returned, from the module's LIVE notification on):
    /// then its addresses may be another module's code, and its
    /// functions are named by their retired addresses (`callees`).
    pub(crate) init_text: core::ops::Range<u64>,
    init_freed: core::sync::atomic::AtomicBool,
    /// The node pool's reset baselines, one per node.
    _baselines: KVVec<core::sync::atomic::AtomicU64>,
    /// The accounting words of its epochs (counter relocation), or none.
    _epoch_words: KVVec<core::sync::atomic::AtomicU64>,
}

/// A module's descriptor as the map holds it: freed by [`retire`].
pub(crate) type Descriptor = ModuleObject;

/// Bytes one descriptor takes (its baselines aside).
pub(crate) const DESCRIPTOR_BYTES: usize = core::mem::size_of::<Descriptor>();

/// Descriptors allocated and not yet freed, and their bytes (with their
/// baselines).
pub(crate) static DESCRIPTORS: AtomicUsize = AtomicUsize::new(0);
pub(crate) static DESCRIPTORS_BYTES: AtomicUsize = AtomicUsize::new(0);

impl ModuleObject {
    /// The descriptor of `object`, the checked sections of the module
    /// `module` whose text and init text are `text`, with its reset
    /// baselines.
    pub(crate) fn new(
        object: ProfiledObject,
        module: usize,
        (text, init_text): (core::ops::Range<u64>, core::ops::Range<u64>),
    ) -> Result<KBox<Descriptor>> {
        let capacity = object.node_capacity();
        let mut baselines = KVVec::with_capacity(capacity, GFP_KERNEL)?;
        for _ in 0..capacity {
            baselines.push(core::sync::atomic::AtomicU64::new(0), GFP_KERNEL)?;
        }
        // The buffer is the descriptor's (never resized, so never moved)
        // and freed with it; only the core's atomics touch it.
        // SAFETY: one zeroed baseline per node, valid while `object` is.
        unsafe { object.attach_baselines(baselines.as_mut_ptr()) };
        #[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
        let epoch_words = crate::runtime::epochs::attach_words(&object)?;
        #[cfg(not(CONFIG_PGO_CLANG_COUNTER_RELOCATION))]
        let epoch_words = KVVec::new();
        let bytes = DESCRIPTOR_BYTES + (capacity + epoch_words.len()) * core::mem::size_of::<u64>();
        let descriptor = KBox::new(
            Self {
                object,
                module,
                text,
                init_text,
                init_freed: core::sync::atomic::AtomicBool::new(false),
                _baselines: baselines,
                _epoch_words: epoch_words,
            },
            GFP_KERNEL,
        )?;
        DESCRIPTORS.fetch_add(1, Ordering::Relaxed);
        DESCRIPTORS_BYTES.fetch_add(bytes, Ordering::Relaxed);
        Ok(descriptor)
    }

    /// The module's init function returned: its init text is freed next.
    pub(crate) fn init_freed(&self) {
        self.init_freed.store(true, Ordering::Release);
    }

    /// The addresses of the module's functions that are gone: its init
    /// text once freed, else none.
    pub(crate) fn retired_text(&self) -> core::ops::Range<u64> {
        if self.init_freed.load(Ordering::Acquire) {
            self.init_text.clone()
        } else {
            0..0
        }
    }

    fn bytes(&self) -> usize {
        let words = self.object.node_capacity() + self._epoch_words.len();
        DESCRIPTOR_BYTES + words * core::mem::size_of::<u64>()
    }
}

impl Drop for ModuleObject {
    fn drop(&mut self) {
        DESCRIPTORS.fetch_sub(1, Ordering::Relaxed);
        DESCRIPTORS_BYTES.fetch_sub(self.bytes(), Ordering::Relaxed);
    }
}

/// Pages of the module area per table of the map.
pub(crate) const PAGES_PER_TABLE: usize = 1024;

/// Tables of the map: with 4 KiB pages, 2 GiB of module area, more than
/// any x86_64 kernel has (at most 1.5 GiB).
pub(crate) const TABLES: usize = 512;

const PAGE_SHIFT: usize = kernel::bindings::PAGE_SHIFT as usize;

/// One table of the map: a descriptor pointer per page.
struct Table([AtomicPtr<Descriptor>; PAGES_PER_TABLE]);

/// The map's tables, each null until a module needs it, then kept.
///
/// # Invariants
///
/// A non-null entry is a table leaked by [`reserve`], never
/// freed, all of whose pointers are null or a descriptor that
/// [`publish`] put there; a descriptor is freed only by [`retire`], after
/// a grace period that follows its [`withdraw`] from every page.
struct ModuleMap([AtomicPtr<Table>; TABLES]);

/// The one map, of the whole module area.
// INVARIANT: every table null.
static MAP: ModuleMap = ModuleMap([const { AtomicPtr::new(core::ptr::null_mut()) }; TABLES]);

/// Tables allocated so far.
pub(crate) static MAP_TABLES: AtomicUsize = AtomicUsize::new(0);

/// Bytes of one table.
pub(crate) const TABLE_BYTES: usize = core::mem::size_of::<Table>();

/// The page of the module area that holds `addr`, if any.
#[inline(always)]
fn page(addr: usize) -> Option<usize> {
    let page = addr.wrapping_sub(MODULE_AREA.start()) >> PAGE_SHIFT;
    (addr < MODULE_AREA.end() && page < TABLES * PAGES_PER_TABLE).then_some(page)
}

/// The map's pointer for the page that holds `addr`, if its table exists.
#[inline(always)]
fn slot(addr: usize) -> Option<&'static AtomicPtr<Descriptor>> {
    let page = page(addr)?;
    // `page()` keeps the index below `TABLES * PAGES_PER_TABLE`, but the
    // hooks do not rely on the optimizer seeing it: no bounds check that
    // can panic.
    let table = MAP.0.get(page / PAGES_PER_TABLE)?.load(Ordering::Acquire);
    // SAFETY: a non-null table is never freed (`ModuleMap`'s invariant).
    let table = unsafe { table.as_ref() }?;
    table.0.get(page % PAGES_PER_TABLE)
}

/// The pages of a module's data records, first and last.
fn pages_of(object: &ProfiledObject) -> Option<(usize, usize)> {
    let data = &object.sections().data;
    let first = page(data.start() as usize)?;
    let last = page((data.start() as usize).wrapping_add(data.len().max(1) - 1))?;
    (first <= last).then_some((first, last))
}

/// Whether `object`'s data records lie in the module area, which the map
/// covers.
pub(crate) fn in_module_area(object: &ProfiledObject) -> bool {
    pages_of(object).is_some()
}

/// Allocates the tables that `object`'s data records need, if they do not
/// exist yet: the fallible part of publishing it.
pub(crate) fn reserve(object: &ProfiledObject) -> Result {
    let (first, last) = pages_of(object).ok_or(EINVAL)?;
    for table_slot in &MAP.0[first / PAGES_PER_TABLE..=last / PAGES_PER_TABLE] {
        if !table_slot.load(Ordering::Acquire).is_null() {
            continue;
        }
        // Zeroed where it is allocated: 8 KiB do not go through the stack.
        let table = KBox::<Table>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
        // SAFETY: all-zero bytes are a table of null pointers.
        let table = KBox::into_raw(unsafe { table.assume_init() });
        // INVARIANT: a fresh table of null pointers, leaked if installed.
        match table_slot.compare_exchange(
            core::ptr::null_mut(),
            table,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                MAP_TABLES.fetch_add(1, Ordering::Relaxed);
            }
            // SAFETY: another module installed its table first; ours was
            // never published.
            Err(_) => drop(unsafe { KBox::from_raw(table) }),
        }
    }
    Ok(())
}

/// Publishes `descriptor` to the hooks on every page of its data records.
/// [`reserve`] made its tables. A page that holds another descriptor (a
/// loader bug: a module's pages are its own) keeps it, with a warning;
/// the hooks then do not find `descriptor` there.
///
/// # Safety
///
/// `descriptor` is freed only by [`retire`], after it was withdrawn
/// ([`withdraw`]).
pub(crate) unsafe fn publish(descriptor: &'static Descriptor) {
    let new = core::ptr::from_ref(descriptor).cast_mut();
    let mut taken = 0usize;
    for_each_slot(&descriptor.object, |slot| {
        // INVARIANT: stored only where the slot was null; `descriptor`
        // lives until a grace period after `withdraw` (the caller's
        // contract).
        if slot
            .compare_exchange(ptr::null_mut(), new, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            taken += 1;
        }
    });
    if taken != 0 {
        pr_warn!("{taken} page(s) of a module's profile data already belong to another module\n");
    }
}

/// Withdraws `descriptor` from the hooks: none finds it any more. Free it
/// with [`retire`].
pub(crate) fn withdraw(descriptor: &Descriptor) {
    for_each_slot(&descriptor.object, |slot| {
        // INVARIANT: the slot goes back to null only if it holds
        // `descriptor`: another module's stays.
        let _ = slot.compare_exchange(
            core::ptr::from_ref(descriptor).cast_mut(),
            core::ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    });
}

/// Waits until no hook or reader can hold a withdrawn descriptor, or the
/// module memory it describes, and frees it: when this returns, the
/// loader may free the module's memory. Sleeps (a grace period).
///
/// # Safety
///
/// `descriptor` was withdrawn ([`withdraw`]) from every page it was
/// published on, and nothing that begins from now on can reach it.
pub(crate) unsafe fn retire(descriptor: KBox<Descriptor>) {
    // Every hook section and read section that began before the
    // withdrawal has ended when this returns.
    wait_for_readers();
    drop(descriptor);
}

fn for_each_slot(object: &ProfiledObject, mut f: impl FnMut(&AtomicPtr<Descriptor>)) {
    let Some((first, last)) = pages_of(object) else {
        return;
    };
    for page in first..=last {
        let table = MAP.0[page / PAGES_PER_TABLE].load(Ordering::Acquire);
        // SAFETY: tables are never freed (`ModuleMap`'s invariant).
        if let Some(table) = unsafe { table.as_ref() } {
            f(&table.0[page % PAGES_PER_TABLE]);
        }
    }
}

/// Records a value for a record that vmlinux does not own: the module
/// whose memory holds `record` takes it, if it is one of its records; if
/// none does, the value is dropped (a module that is not profiled, or one
/// being unloaded). Constant time: one lookup in the map.
#[inline]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub(crate) fn record_module_target(record: usize, index: u32, value: u64) {
    let Some(slot) = slot(record) else {
        return;
    };
    let _section = HookSection::enter();
    // Loaded inside the section: a descriptor withdrawn before it began may
    // already be freed, one withdrawn after it is freed only after it ends
    // (`ModuleMap`'s invariant: a grace period after its withdrawal).
    // SAFETY: the read-side section began before the load.
    if let Some(descriptor) = unsafe { slot.load(Ordering::Acquire).as_ref() } {
        descriptor.object.record_target(record, index, value);
    }
}
