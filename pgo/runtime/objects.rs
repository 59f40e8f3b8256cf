// SPDX-License-Identifier: GPL-2.0

//! The instrumented objects of the running kernel.
//!
//! vmlinux's descriptor is a static built from the linker's section
//! symbols, so the hooks can use it from the first instrumented call of the
//! boot, long before any initcall.

use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

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

// SAFETY: the linker script places every `__llvm_prf_*` input section of
// vmlinux between these symbols, and `.notes` between `__start_notes` and
// `__stop_notes`; all are part of the kernel image, mapped for good. The
// counters, bitmap, value nodes and site heads are written only by
// instrumented code and by the core's atomics.
static VMLINUX: ProfiledObject =
    unsafe { ProfiledObject::new(vmlinux_sections(vmlinux_notes()), vmlinux_version_word()) };

/// The descriptor of the kernel image.
pub(crate) fn vmlinux() -> &'static ProfiledObject {
    &VMLINUX
}

/// Most modules profiled at the same time; a module beyond is not
/// profiled (and logged).
const MODULE_SLOTS: usize = 256;

/// A published module descriptor, as the hooks see it: its data range
/// (to find the owner of a record) and the descriptor itself.
struct Slot {
    data_start: AtomicUsize,
    data_end: AtomicUsize,
    object: AtomicPtr<ProfiledObject>,
}

impl Slot {
    const FREE: Slot = Slot {
        data_start: AtomicUsize::new(0),
        data_end: AtomicUsize::new(0),
        object: AtomicPtr::new(core::ptr::null_mut()),
    };
}

static SLOTS: [Slot; MODULE_SLOTS] = [Slot::FREE; MODULE_SLOTS];

/// One past the highest slot ever used: the hooks scan no further.
static SLOTS_USED: AtomicUsize = AtomicUsize::new(0);

/// The module whose data section holds `record`. Lock-free: called by the
/// hooks.
#[inline]
pub(crate) fn module_owner_of(record: usize) -> Option<&'static ProfiledObject> {
    let used = SLOTS_USED.load(Ordering::Acquire).min(MODULE_SLOTS);
    for slot in &SLOTS[..used] {
        if record >= slot.data_start.load(Ordering::Acquire)
            && record < slot.data_end.load(Ordering::Acquire)
        {
            // SAFETY: a record inside a published module's data is passed
            // by that module's code, which runs only between `publish` (at
            // MODULE_STATE_COMING) and `withdraw` (at MODULE_STATE_GOING,
            // after its exit function); the descriptor is freed only after
            // `withdraw`. A torn range read can only name another live
            // descriptor, whose own ownership check then rejects the record.
            return unsafe { slot.object.load(Ordering::Acquire).as_ref() };
        }
    }
    None
}

/// Publishes a module's descriptor to the hooks; `None` if every slot is
/// taken. Callers serialize publish and withdraw (the registry lock).
///
/// # Safety
///
/// `object` stays valid until [`withdraw`] of the returned slot returns.
pub(crate) unsafe fn publish(object: &ProfiledObject) -> Option<usize> {
    let index = SLOTS
        .iter()
        .position(|slot| slot.object.load(Ordering::Relaxed).is_null())?;
    let slot = &SLOTS[index];
    let data = object.sections().data;
    // Descriptor first, range last: a hook that sees the range sees the
    // descriptor.
    slot.object.store(
        object as *const ProfiledObject as *mut ProfiledObject,
        Ordering::Release,
    );
    slot.data_end
        .store(data.start() as usize + data.len(), Ordering::Release);
    slot.data_start
        .store(data.start() as usize, Ordering::Release);
    SLOTS_USED.fetch_max(index + 1, Ordering::Release);
    Some(index)
}

/// Withdraws the descriptor published in `index`.
pub(crate) fn withdraw(index: usize) {
    let slot = &SLOTS[index];
    // Range first: no hook matches it any more.
    slot.data_end.store(0, Ordering::Release);
    slot.data_start.store(0, Ordering::Release);
    slot.object.store(core::ptr::null_mut(), Ordering::Release);
}
