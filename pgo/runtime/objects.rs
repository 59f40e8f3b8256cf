// SPDX-License-Identifier: GPL-2.0

//! The instrumented objects of the running kernel, as the hooks see them.
//!
//! vmlinux's descriptor is a static built from the linker's section
//! symbols, so the hooks can use it from the first instrumented call of the
//! boot, long before any initcall. It is first and fixed: the hooks ask it
//! before anything else.
//!
//! # Module slots
//!
//! Modules are published to the hooks in [`MODULE_SLOTS`] slots. A slot is
//! one atomic pointer: null (free), [`RESERVED`] (taken by a module being
//! registered) or the module's descriptor. A hook that vmlinux does not own
//! scans the slots in use, asks each descriptor whether the record is one
//! of its own (a descriptor's ranges never change after construction) and
//! goes on to the next slot until one accepts it. One pointer per slot
//! means there is no torn state to match: a reader sees a whole descriptor
//! or none.
//!
//! # Descriptors are never freed
//!
//! The hooks are lock-free and preemptible, and run in NMI context and
//! where RCU is not watching (idle, early entry code). A hook may load a
//! descriptor from a slot, be preempted, and resume after the module was
//! withdrawn, at `MODULE_STATE_GOING`; module code may also run after
//! GOING (async work the loader waits for only later, timers of a module
//! that does not cancel them, `rmmod -f`). Rather than a grace period
//! scheme that would have to hold in all those contexts, a published
//! descriptor is never freed and its slot pointer never reused for another
//! one: any pointer a hook ever loads from a slot stays valid. The cost is
//! the descriptor itself, `size_of::<Descriptor>()` bytes (240, in a
//! 256-byte slab object) per module load, counted in `pgo/stats`
//! (`descriptors=`, `descriptor_bytes=`); the registry never frees its
//! entries either. Every descriptor stays linked from a static list
//! ([`NEWEST`]), so that kmemleak, which scans static data, sees them
//! referenced rather than leaked.
//!
//! What a stale descriptor may still touch is bounded by
//! [`ProfiledObject`]'s contract: after its module's GOING it is asked only
//! by hooks, which read its sections only for a record inside its own data
//! section. Such a record is passed only by the module's own code, and a
//! module's memory is not freed while its code runs (the loader waits for
//! async work before freeing; the rest would be a bug of the module that
//! faults on its own code anyway). A record of any other live object is
//! never inside a gone module's range, since live objects do not overlap
//! freed memory. The version word, the one other field a hook could read,
//! is checked before publication (`ProfiledObject::new_checked`).

#[cfg(CONFIG_MODULES)]
use core::sync::atomic::AtomicUsize;
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::profile::sections::{ProfiledObject, SectionRange, MAX_NOTE_RANGES};

crate::linked_image!(fn vmlinux_sections, pub(crate) fn vmlinux_version_word);

extern "C" {
    static mut __start_notes: u8;
    static mut __stop_notes: u8;
}

const fn vmlinux_notes() -> [SectionRange; MAX_NOTE_RANGES] {
    let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
    notes[0] = SectionRange::new(&raw mut __start_notes, &raw mut __stop_notes);
    notes
}

// The linker script places every `__llvm_prf_*` input section of vmlinux
// between these symbols, and `.notes` between `__start_notes` and
// `__stop_notes`; all are part of the kernel image, mapped for good. The
// counters, bitmap, value nodes and site heads are written only by
// instrumented code and by the core's atomics.
static VMLINUX: ProfiledObject =
    // SAFETY: as above: the sections and version word of vmlinux itself.
    unsafe { ProfiledObject::new(vmlinux_sections(vmlinux_notes()), vmlinux_version_word()) };

/// The descriptor of the kernel image.
pub(crate) fn vmlinux() -> &'static ProfiledObject {
    &VMLINUX
}

/// Most modules profiled at the same time; a module beyond is not
/// profiled (and logged).
#[cfg(CONFIG_MODULES)]
pub(crate) const MODULE_SLOTS: usize = 256;

/// No module is ever profiled without module support.
#[cfg(not(CONFIG_MODULES))]
pub(crate) const MODULE_SLOTS: usize = 0;

/// The module slots.
///
/// INVARIANT: a slot holds null, `&RESERVED` or a descriptor leaked by
/// [`Reservation::publish`]: every non-null pointer in a slot is to a
/// `'static` descriptor that is fully initialised before the `Release`
/// store that puts it there, and is never freed. So a pointer loaded from
/// a slot (with `Acquire`) can be dereferenced at any later time.
///
/// INVARIANT: a slot goes from null to `&RESERVED` only by the
/// compare-and-swap in [`reserve`], which creates the one [`Reservation`]
/// of that slot; only that reservation, then the [`Published`] it becomes,
/// stores into the slot again, and its drop stores null last. So slots
/// need no lock, and no two modules ever share one.
static SLOTS: [AtomicPtr<ProfiledObject>; MODULE_SLOTS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; MODULE_SLOTS];

/// One past the highest slot ever reserved: the hooks scan no further.
#[cfg(CONFIG_MODULES)]
static SLOTS_USED: AtomicUsize = AtomicUsize::new(0);

/// What a reserved slot holds until the module's descriptor is published:
/// a descriptor that owns no record and reads no memory.
#[cfg(CONFIG_MODULES)]
static RESERVED: ProfiledObject = ProfiledObject::empty();

/// A module descriptor, allocated once and never freed.
#[cfg(CONFIG_MODULES)]
pub(crate) struct Descriptor {
    object: ProfiledObject,
    /// The descriptor published before this one.
    older: *const Descriptor,
}

/// The newest published descriptor; each links the one before.
///
/// INVARIANT: null or a descriptor leaked by [`Reservation::publish`];
/// only ever replaced by a newer one, whose `older` is the value it
/// replaces.
#[cfg(CONFIG_MODULES)]
static NEWEST: AtomicPtr<Descriptor> = AtomicPtr::new(core::ptr::null_mut());

/// A descriptor allocated and not yet published: dropping it frees it.
#[cfg(CONFIG_MODULES)]
pub(crate) struct Unpublished(kernel::alloc::KBox<Descriptor>);

#[cfg(CONFIG_MODULES)]
impl Unpublished {
    /// Allocates the descriptor `object` will be published in.
    pub(crate) fn new(object: ProfiledObject) -> kernel::error::Result<Self> {
        let descriptor = Descriptor {
            object,
            older: core::ptr::null(),
        };
        Ok(Self(kernel::alloc::KBox::new(
            descriptor,
            kernel::alloc::flags::GFP_KERNEL,
        )?))
    }
}

/// Records a value for a record that vmlinux does not own: the first
/// module descriptor that owns `record` takes it; if none does, the value
/// is dropped (a module that is not profiled, or one being unloaded).
#[cfg(CONFIG_MODULES)]
#[inline]
pub(crate) fn record_module_target(record: usize, index: u32, value: u64) {
    let used = SLOTS_USED.load(Ordering::Acquire).min(MODULE_SLOTS);
    for slot in &SLOTS[..used] {
        // SAFETY: by the slots' invariant, a non-null pointer in a slot is
        // a `'static`, initialised, never freed descriptor.
        let Some(object) = (unsafe { slot.load(Ordering::Acquire).as_ref() }) else {
            continue;
        };
        // A descriptor that does not own `record` says so and changes
        // nothing: go on until an owner accepts it.
        if object.record_target(record, index, value) {
            return;
        }
    }
}

/// A reserved slot, not yet published to the hooks. Dropping it frees
/// the slot.
#[cfg(CONFIG_MODULES)]
pub(crate) struct Reservation {
    index: usize,
}

/// Reserves a free slot; `None` if every slot is taken. Lock-free.
#[cfg(CONFIG_MODULES)]
pub(crate) fn reserve() -> Option<Reservation> {
    let reserved = &RESERVED as *const ProfiledObject as *mut ProfiledObject;
    let index = SLOTS.iter().position(|slot| {
        slot.compare_exchange(
            core::ptr::null_mut(),
            reserved,
            Ordering::AcqRel,
            Ordering::Relaxed,
        )
        .is_ok()
    })?;
    // INVARIANT: `RESERVED` is a `'static`, initialised descriptor; the
    // successful compare-and-swap made this reservation the slot's only
    // writer.
    SLOTS_USED.fetch_max(index + 1, Ordering::AcqRel);
    Some(Reservation { index })
}

#[cfg(CONFIG_MODULES)]
impl Reservation {
    /// Publishes the descriptor to the hooks, for good: it is never freed
    /// (see the module documentation). Infallible, so that it can be the
    /// last step of a registration.
    pub(crate) fn publish(self, descriptor: Unpublished) -> Published {
        let descriptor: &'static mut Descriptor = kernel::alloc::KBox::leak(descriptor.0);
        // Linked before it is published, for kmemleak: a lock-free push,
        // nothing is ever removed from the list.
        let mut older = NEWEST.load(Ordering::Acquire);
        loop {
            descriptor.older = older;
            let newest = descriptor as *mut Descriptor;
            // INVARIANT: `descriptor` is leaked and links the value it
            // replaces.
            match NEWEST.compare_exchange(older, newest, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => older = now,
            }
        }
        let descriptor: &'static Descriptor = descriptor;
        let object = &descriptor.object;
        let index = self.index;
        // The slot passes from the reservation to the publication.
        core::mem::forget(self);
        // INVARIANT: `object` is part of a leaked descriptor, hence
        // `'static` and never freed, fully initialised before this
        // `Release` store; this slot is ours (the reservation's
        // invariant, handed on).
        SLOTS[index].store(
            object as *const ProfiledObject as *mut ProfiledObject,
            Ordering::Release,
        );
        Published { index, object }
    }
}

#[cfg(CONFIG_MODULES)]
impl Drop for Reservation {
    fn drop(&mut self) {
        // INVARIANT: the reservation's slot is freed by its only writer.
        SLOTS[self.index].store(core::ptr::null_mut(), Ordering::Release);
    }
}

/// A module descriptor published to the hooks. Dropping it withdraws the
/// descriptor (which stays allocated for good).
#[cfg(CONFIG_MODULES)]
pub(crate) struct Published {
    index: usize,
    object: &'static ProfiledObject,
}

#[cfg(CONFIG_MODULES)]
impl Published {
    /// The published descriptor.
    pub(crate) fn object(&self) -> &ProfiledObject {
        self.object
    }

    /// Withdraws the descriptor from the hooks, then runs `last` on it: no
    /// hook looks it up any more (a hook that already holds it may still
    /// record into it). The borrow ends with `last`, so the descriptor
    /// cannot be used again once its module is gone.
    pub(crate) fn withdraw_then<R>(self, last: impl FnOnce(&ProfiledObject) -> R) -> R {
        let object = self.object;
        drop(self);
        last(object)
    }
}

#[cfg(CONFIG_MODULES)]
impl Drop for Published {
    fn drop(&mut self) {
        // INVARIANT: the publication's slot is freed by its only writer;
        // the descriptor it held stays allocated for hooks that loaded it.
        SLOTS[self.index].store(core::ptr::null_mut(), Ordering::Release);
    }
}

/// The size of one module descriptor.
#[cfg(CONFIG_MODULES)]
pub(crate) const DESCRIPTOR_BYTES: usize = core::mem::size_of::<Descriptor>();
#[cfg(not(CONFIG_MODULES))]
pub(crate) const DESCRIPTOR_BYTES: usize = 0;

/// Slots that hold a module now (reserved or published).
pub(crate) fn slots_in_use() -> usize {
    SLOTS
        .iter()
        .filter(|slot| !slot.load(Ordering::Relaxed).is_null())
        .count()
}
