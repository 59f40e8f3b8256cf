// SPDX-License-Identifier: GPL-2.0

//! The C interfaces that only module support has: what kpgo reads of a
//! `struct module` (its PGO sections; `kernel::module_notifier` brings
//! the events), the module area, and with
//! `glue.c` the hooks' preemption-off sections, RCU grace periods, and the
//! rate limit of the unload warning.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr;

use kernel::bindings;
use kernel::ffi::{c_char, c_ulong};
use kernel::module_notifier::Module;
use kernel::prelude::*;

use crate::profile::check::SectionError;
use crate::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};
use crate::runtime::objects::vmlinux_version_word;

// glue.c.
extern "C" {
    fn kpgo_hook_enter();
    fn kpgo_hook_exit();
    fn kpgo_wait_for_readers();
    fn kpgo_wait_for_read_sections();
    fn kpgo_unload_warning_ratelimit() -> bool;
    static kpgo_module_area_start: c_ulong;
    static kpgo_module_area_end: c_ulong;
}

/// `MODULE_NAME_LEN`: the bytes of a module's name, its NUL included, as
/// `struct module` has them (which has no fields without modules).
pub(crate) const MODULE_NAME_LEN: usize = {
    const fn len<const N: usize>(_: fn(&bindings::module) -> &[c_char; N]) -> usize {
        N
    }
    len(|module| &module.name)
};

/// The range of addresses where the loader allocates module memory.
pub(crate) struct ModuleArea;

/// The module area (`MODULES_VADDR` to `MODULES_END`).
pub(crate) const MODULE_AREA: ModuleArea = ModuleArea;

impl ModuleArea {
    /// The first address.
    #[inline(always)]
    pub(crate) fn start(&self) -> usize {
        // SAFETY: a constant that glue.c defines.
        unsafe { kpgo_module_area_start }
    }

    /// One past the last address.
    #[inline(always)]
    pub(crate) fn end(&self) -> usize {
        // SAFETY: as for `start`.
        unsafe { kpgo_module_area_end }
    }
}

/// A section of a hook with preemption off (an RCU-sched read-side
/// section), from [`Self::enter`] to the drop, which may call the
/// scheduler: it takes a reschedule that came due in the section, as
/// `preempt_enable()` does (`glue.c`). A hook that the scheduler itself
/// calls runs with preemption off already, so it never reschedules.
pub(crate) struct HookSection(PhantomData<*mut ()>);

impl HookSection {
    /// Turns preemption off.
    #[inline(always)]
    pub(crate) fn enter() -> Self {
        // SAFETY: no precondition; the drop turns it back on, on this
        // CPU (the guard is not `Send`).
        unsafe { kpgo_hook_enter() };
        Self(PhantomData)
    }
}

impl Drop for HookSection {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `enter` disabled preemption on this CPU; a hook ends
        // with it, its work done, so the scheduler may run here.
        unsafe { kpgo_hook_exit() };
    }
}

/// Waits for an RCU grace period and for kpgo's read sections: every hook
/// section ([`HookSection`]) and read section (`ReadSection`) that began
/// before the call has ended when it returns. Sleeps.
pub(crate) fn wait_for_readers() {
    // SAFETY: no precondition beyond the caller's, who may sleep.
    unsafe { kpgo_wait_for_readers() };
}

/// Waits until every read section begun before the call has ended. Only
/// where the caller may sleep, outside any read section.
pub(crate) fn wait_for_read_sections() {
    // SAFETY: no precondition beyond the caller's.
    unsafe { kpgo_wait_for_read_sections() };
}

/// What kpgo reads of a `struct module` beyond its name (with its
/// `kernel::module_notifier` events).
pub(crate) trait ModuleExt {
    /// An address that tells this module apart from every other module
    /// loaded at the same time.
    fn id(&self) -> usize;

    /// The addresses of the module's text (`MOD_TEXT`) and of its init
    /// text (`MOD_INIT_TEXT`), as laid out before the module is formed.
    ///
    /// # Safety
    ///
    /// The module is COMING: after its LIVE notification the loader
    /// clears its init memory's `base` and `size` while kpgo may look.
    unsafe fn text(&self) -> (core::ops::Range<u64>, core::ops::Range<u64>);

    /// The addresses of the module's writable data (`MOD_DATA`).
    ///
    /// # Safety
    ///
    /// As for [`Self::text`].
    unsafe fn data(&self) -> core::ops::Range<u64>;

    /// Whether the module has PGO sections (was built with
    /// `-fprofile-generate`).
    fn is_instrumented(&self) -> bool;

    /// The descriptor of the module's PGO sections, checked
    /// (`ProfiledObject::new_checked`): an error says why the sections
    /// are refused.
    ///
    /// # Safety
    ///
    /// The module is coming or live, and will get its GOING
    /// notification. Once the caller's handling of it returns, the
    /// descriptor's methods that read the sections (see
    /// `ProfiledObject`) are not called any more: the loader may free
    /// the memory as soon as the GOING notifiers returned (kpgo's
    /// waits for its own hooks and readers, `objects::retire`).
    unsafe fn profiled_object(&self) -> Result<ProfiledObject, SectionError>;
}

impl ModuleExt for Module<'_> {
    fn id(&self) -> usize {
        self.as_ptr() as usize
    }

    unsafe fn text(&self) -> (core::ops::Range<u64>, core::ops::Range<u64>) {
        // SAFETY: the caller's contract.
        unsafe {
            (
                mem_range(self, bindings::mod_mem_type_MOD_TEXT),
                mem_range(self, bindings::mod_mem_type_MOD_INIT_TEXT),
            )
        }
    }

    unsafe fn data(&self) -> core::ops::Range<u64> {
        // SAFETY: the caller's contract.
        unsafe { mem_range(self, bindings::mod_mem_type_MOD_DATA) }
    }

    fn is_instrumented(&self) -> bool {
        pgo_sections(self).data_size != 0
    }

    unsafe fn profiled_object(&self) -> Result<ProfiledObject, SectionError> {
        let pgo = pgo_sections(self);
        let range =
            |start: *mut c_void, len: u32| SectionRange::from_len(start.cast(), len as usize);
        let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
        notes[0] = range(pgo.notes, pgo.notes_size);
        // The loader records a bias only where the module has one.
        let bias_size = if pgo.counter_bias.is_null() { 0 } else { 8 };
        let sections = Sections {
            data: range(pgo.data, pgo.data_size),
            counters: range(pgo.counters, pgo.counters_size),
            counter_pages: range(pgo.counters, pgo.counter_pages_size),
            spare_counters: range(pgo.spare_counters, pgo.spare_counters_size),
            counter_bias: range(pgo.counter_bias.cast(), bias_size),
            bitmap: range(pgo.bitmap, pgo.bitmap_size),
            names: range(pgo.names, pgo.names_size),
            values: range(pgo.values, pgo.values_size),
            vnodes: range(pgo.vnodes, pgo.vnodes_size),
            notes,
        };
        // A module built by the same compiler always has its own
        // word; vmlinux's stands in otherwise.
        let version_word = if pgo.raw_version.is_null() {
            vmlinux_version_word()
        } else {
            pgo.raw_version
        };
        // SAFETY: the loader's sections, freed after GOING, when the caller's reads ended;
        // counters, bitmap, heads, nodes: module code and atomics only; the rest: before COMING.
        unsafe { ProfiledObject::new_checked(sections, version_word) }
    }
}

/// The addresses of the module's memory of `kind`.
///
/// # Safety
///
/// The module is COMING (see [`ModuleExt::text`]).
unsafe fn mem_range(module: &Module<'_>, kind: bindings::mod_mem_type) -> core::ops::Range<u64> {
    // SAFETY: a valid `struct module` (`Module`), `kind` indexes `mem`, which nothing
    // writes (COMING: the caller's contract); two fields read, no reference.
    let (base, size) = unsafe {
        let mem = ptr::addr_of!((*module.as_ptr()).mem[kind as usize]);
        (
            ptr::addr_of!((*mem).base).read_volatile(),
            ptr::addr_of!((*mem).size).read_volatile(),
        )
    };
    let start = base as u64;
    start..start.saturating_add(u64::from(size))
}

/// The module's PGO sections, as the loader recorded them.
fn pgo_sections(module: &Module<'_>) -> bindings::module_pgo_sections {
    // `pgo` is written by `find_module_sections()` before the module
    // is formed and never again.
    // SAFETY: `module.as_ptr()` is valid while `module` is (`Module`).
    unsafe { ptr::addr_of!((*module.as_ptr()).pgo).read() }
}

/// Whether an unload warning may be printed now: at most 10 per 5
/// seconds, kpgo's own budget.
pub(crate) fn unload_warning_allowed() -> bool {
    // SAFETY: no precondition; `__ratelimit()` takes its own lock.
    unsafe { kpgo_unload_warning_ratelimit() }
}
