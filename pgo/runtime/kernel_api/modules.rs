// SPDX-License-Identifier: GPL-2.0

//! The C interfaces that only module support has: the module notifier, a
//! `struct module` and its PGO sections, the module area, and with
//! `glue.c` the hooks' preemption-off sections, RCU grace periods and
//! deferred frees (what is freed that way is a module's), and the rate
//! limit of the unload warning.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};

use kernel::bindings;
use kernel::error::to_result;
use kernel::ffi::{c_char, c_int, c_ulong};
use kernel::prelude::*;
use kernel::types::Opaque;

use crate::profile::check::SectionError;
use crate::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};
use crate::runtime::objects::vmlinux_version_word;

// glue.c.
extern "C" {
    fn kpgo_hook_enter();
    fn kpgo_hook_exit();
    fn kpgo_wait_for_readers();
    pub(super) fn kpgo_read_lock();
    pub(super) fn kpgo_read_unlock();
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
/// `preempt_enable()` does (`glue.c`).
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
        // SAFETY: `enter` turned preemption off on this CPU; the
        // hooks call this last, with their work done, so the scheduler
        // may run (and a hook the scheduler calls runs with preemption
        // off, so it does not schedule again).
        unsafe { kpgo_hook_exit() };
    }
}

/// Waits for an RCU grace period: every hook section ([`HookSection`])
/// and read section (`ReadSection`) that began before the call has
/// ended when it returns. Sleeps.
pub(crate) fn wait_for_readers() {
    // SAFETY: no precondition beyond the caller's, who may sleep.
    unsafe { kpgo_wait_for_readers() };
}

/// A `T` that is freed after an RCU grace period
/// ([`free_after_grace_period`]).
///
/// # Invariants
///
/// `head` is the first field (`repr(C)`), so that the callback finds
/// the box from it; it is used only by `call_rcu`.
#[repr(C)]
pub(crate) struct RcuBox<T> {
    head: Opaque<bindings::callback_head>,
    value: T,
}

// SAFETY: a shared `RcuBox` gives access to `value` only (`Deref`),
// which is `Sync`; `head` is never used through a shared reference:
// only `free_after_grace_period` hands it to `call_rcu`, from the
// `KBox` that owns the box, after which nothing else can reach it
// (its contract's caller withdrew it from every reader first).
unsafe impl<T: Sync> Sync for RcuBox<T> {}

impl<T> RcuBox<T> {
    /// Allocates one.
    pub(crate) fn new(value: T) -> Result<KBox<Self>> {
        // INVARIANT: `head` first, unused until `call_rcu`.
        Ok(KBox::new(
            Self {
                head: Opaque::uninit(),
                value,
            },
            GFP_KERNEL,
        )?)
    }
}

impl<T> core::ops::Deref for RcuBox<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

/// Frees `object` after an RCU grace period: after every hook section
/// and read-side section that began before this call has ended. The
/// drop runs in RCU's callback (softirq or an rcuo thread, any CPU),
/// hence `Send`, and must not sleep.
pub(crate) fn free_after_grace_period<T: Send + 'static>(object: KBox<RcuBox<T>>) {
    let object = KBox::into_raw(object);
    // `call_rcu` calls `free_rcu_box` once, after the grace period.
    // SAFETY: `object` is valid and ours; its head is unused so far.
    unsafe { bindings::call_rcu((*object).head.get(), Some(free_rcu_box::<T>)) };
}

/// # Safety
///
/// Called by RCU, once, with the head of an `RcuBox<T>` that
/// `free_after_grace_period` handed over.
unsafe extern "C" fn free_rcu_box<T: Send + 'static>(head: *mut bindings::callback_head) {
    // SAFETY: the head is the first field of the box (type invariant),
    // which `free_after_grace_period` got from `KBox::into_raw`.
    drop(unsafe { KBox::from_raw(head.cast::<RcuBox<T>>()) });
}

/// A `struct module` that the kernel keeps valid while `'a` lasts.
///
/// Only fields that do not change after the module is formed are read
/// through it (name, PGO sections), and its state with a volatile
/// read: the loader writes the rest while kpgo looks, so no Rust
/// reference to the whole struct is ever made.
///
/// # Invariants
///
/// `module` points to a `struct module` that stays valid
/// for `'a` (each constructor says why).
pub(crate) struct Module<'a> {
    module: *const bindings::module,
    _valid: PhantomData<&'a bindings::module>,
}

impl Module<'_> {
    /// An address that tells this module apart from every other
    /// module loaded at the same time.
    pub(crate) fn id(&self) -> usize {
        self.module as usize
    }

    /// The module's name.
    pub(crate) fn name(&self) -> &[u8] {
        // SAFETY: `self.module` is valid for `'a` (type invariant); its
        // name is written before the module is formed and never again.
        let name = unsafe { &*ptr::addr_of!((*self.module).name) };
        let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
        &name[..len]
    }

    /// The addresses of the module's text (`MOD_TEXT`) and of its init
    /// text (`MOD_INIT_TEXT`), as laid out before the module is formed.
    ///
    /// # Safety
    ///
    /// The module is COMING: after its LIVE notification the loader
    /// clears its init memory's `base` and `size` while kpgo may look.
    pub(crate) unsafe fn text(&self) -> (core::ops::Range<u64>, core::ops::Range<u64>) {
        let range = |kind: bindings::mod_mem_type| {
            // SAFETY: `self.module` is valid for `'a` (type invariant),
            // `kind` is an index of `mem`; a COMING module's `mem[]`
            // (the caller's contract) is written by nothing: only its
            // `base` and `size` are read, no reference is made.
            let (base, size) = unsafe {
                let mem = ptr::addr_of!((*self.module).mem[kind as usize]);
                (
                    ptr::addr_of!((*mem).base).read_volatile(),
                    ptr::addr_of!((*mem).size).read_volatile(),
                )
            };
            let start = base as u64;
            start..start.saturating_add(u64::from(size))
        };
        (
            range(bindings::mod_mem_type_MOD_TEXT),
            range(bindings::mod_mem_type_MOD_INIT_TEXT),
        )
    }

    /// Whether the module has PGO sections (was built with
    /// `-fprofile-generate`).
    pub(crate) fn is_instrumented(&self) -> bool {
        self.pgo().data_size != 0
    }

    fn pgo(&self) -> bindings::module_pgo_sections {
        // `pgo` is written by `find_module_sections()` before the module
        // is formed and never again.
        // SAFETY: `self.module` is valid for `'a` (type invariant).
        unsafe { ptr::addr_of!((*self.module).pgo).read() }
    }

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
    /// waits for its own readers, `objects::retire`).
    pub(crate) unsafe fn profiled_object(&self) -> Result<ProfiledObject, SectionError> {
        let pgo = self.pgo();
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
        // The ranges are the module's sections as the loader placed them
        // (`find_module_pgo_sections()`), mapped until `free_module()`
        // (or the failed load's cleanup), which for a module that got
        // (or will get) its GOING notification frees them only after the
        // GOING notifiers returned. The counters, bitmap, heads and nodes
        // are writable (the loader keeps `__llvm_prf_vnds` out of
        // ro_after_init) and written only by the module's code and the
        // core's atomics; the records, names, notes and version word
        // (the module's, or vmlinux's) are written by the loader's
        // relocations before COMING and by nothing after, and the
        // loader makes `__llvm_prf_data` read-only once init returned.
        // SAFETY: as above; the caller's reads end before its GOING
        // handling returns (this function's contract).
        unsafe { ProfiledObject::new_checked(sections, version_word) }
    }
}

/// What kpgo does on module events.
pub(crate) trait ModuleEvents {
    /// `MODULE_STATE_COMING`: the module is formed, its init function
    /// has not run yet.
    fn coming(module: &Module<'_>);
    /// `MODULE_STATE_LIVE`: its init function returned; its init
    /// text is freed next.
    fn live(module: &Module<'_>);
    /// `MODULE_STATE_GOING`: its exit function has run (or its init
    /// or its load failed after COMING); its memory is still mapped.
    fn going(module: &Module<'_>);
}

/// A module notifier that can be a `static`, registered at most once
/// and never unregistered (kpgo is built in).
pub(crate) struct ModuleNotifier {
    block: UnsafeCell<bindings::notifier_block>,
    registered: AtomicBool,
}

// SAFETY: `block` is written only by the notifier chain, under the
// chain's own lock; `registered` is atomic.
unsafe impl Sync for ModuleNotifier {}

impl ModuleNotifier {
    /// A notifier that calls `E`.
    pub(crate) const fn new<E: ModuleEvents>() -> Self {
        Self {
            block: UnsafeCell::new(bindings::notifier_block {
                notifier_call: Some(module_event::<E>),
                next: ptr::null_mut(),
                priority: 0,
            }),
            registered: AtomicBool::new(false),
        }
    }

    /// Starts the notifications. `EBUSY` if already registered.
    pub(crate) fn register(&'static self) -> Result {
        if self.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: the block is static, so it outlives its registration,
        // and it is not on the chain (`registered` was false).
        let result = to_result(unsafe { bindings::register_module_notifier(self.block.get()) });
        if result.is_err() {
            self.registered.store(false, Ordering::Release);
        }
        result
    }
}

/// # Safety
///
/// Called by the module notifier chain with the `struct module` an
/// event is about.
unsafe extern "C" fn module_event<E: ModuleEvents>(
    _block: *mut bindings::notifier_block,
    action: c_ulong,
    data: *mut c_void,
) -> c_int {
    // INVARIANT: the chain passes a `struct module` that stays valid
    // during the call (the loader frees it only after the GOING calls
    // returned).
    let module = Module {
        module: data as *const bindings::module,
        _valid: PhantomData,
    };
    match action as bindings::module_state {
        bindings::module_state_MODULE_STATE_COMING => E::coming(&module),
        bindings::module_state_MODULE_STATE_LIVE => E::live(&module),
        bindings::module_state_MODULE_STATE_GOING => E::going(&module),
        _ => {}
    }
    bindings::NOTIFY_OK as c_int
}

/// Whether an unload warning may be printed now: at most 10 per 5
/// seconds, kpgo's own budget.
pub(crate) fn unload_warning_allowed() -> bool {
    // SAFETY: no precondition; `__ratelimit()` takes its own lock.
    unsafe { kpgo_unload_warning_ratelimit() }
}
