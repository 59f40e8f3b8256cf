// SPDX-License-Identifier: GPL-2.0

//! vmlinux's counters in memory that a warm reboot keeps (counter
//! relocation; `profile::persist` lays the region out).
//!
//! With `reserve_mem=SIZE:4096:NAME kpgo_persist=NAME` on the command
//! line, `start_kernel()` calls `pgo_persist_counters()` (`glue.c`) right
//! after the command line is parsed, on the boot CPU with interrupts off:
//! [`kpgo_persist_counters`] reads what the previous boot left in the
//! region, then moves vmlinux's counters there. A panic notifier and a
//! reboot notifier mark how the boot ends ([`kpgo_persist_mark_end`]).
//! After a warm reboot, `pgo/previous/vmlinux.profraw` (0400) serves the
//! previous kernel's counts since its last reset, if it was this build,
//! without value data (value profiles are not kept).

use core::ffi::c_void;

use super::kernel_api::debugfs::Snapshot;
use kernel::prelude::*;

use super::kernel_api::reschedule_point;
use super::objects::vmlinux;
use crate::profile::persist::{BuildId, End, PersistError, Previous};
use crate::profile::sink::{Measure, Paced, Sink, SliceSink};
use crate::profile::writer::{first_build_id, write_previous};

/// The size of the pages a region is laid out in: the live files'.
const PAGE_SIZE: usize = kernel::page::PAGE_SIZE;

extern "C" {
    fn kpgo_flush_range(start: *mut c_void, len: usize);
    fn kpgo_wall_seconds() -> u64;
}

/// Moves vmlinux's counters into the `len` bytes at `region` (physical
/// address `phys`, the `reserve_mem=` region `name`), logging what the
/// region held; the bytes it uses, or a negative errno and nothing
/// changed.
///
/// # Safety
///
/// `region` is the direct mapping of a `reserve_mem=` region of `len`
/// bytes, which nothing else uses; `name` is a NUL-terminated string. The
/// caller is `start_kernel()`, on the boot CPU with interrupts off, before
/// any other CPU runs and before the runtime's initcall.
#[no_mangle]
unsafe extern "C" fn kpgo_persist_counters(
    region: *mut c_void,
    len: usize,
    phys: u64,
    name: *const kernel::ffi::c_char,
) -> core::ffi::c_long {
    // SAFETY: the caller's NUL-terminated name.
    let name = unsafe { CStr::from_char_ptr(name) };
    let object = vmlinux();
    let this = BuildId::of(first_build_id(object).unwrap_or(&[]));
    // SAFETY: any bytes of the caller's region.
    let flush = |start: *mut u8, len: usize| unsafe { kpgo_flush_range(start.cast(), len) };
    // SAFETY: the caller's region, used by nothing else; one CPU runs,
    // without interrupts, and nothing of the runtime ran yet.
    match unsafe { object.persist_in(region.cast(), len, PAGE_SIZE, flush) } {
        Err(error) => {
            pr_err!(
                "counters not kept in reserve_mem '{name}': {}\n",
                format_args!("{error}")
            );
            match error {
                PersistError::TooSmall { .. } => -core::ffi::c_long::from(kernel::bindings::ENOSPC),
                _ => -core::ffi::c_long::from(kernel::bindings::EINVAL),
            }
        }
        Ok((previous, used)) => {
            pr_info!(
                "counters kept in reserve_mem '{name}' at {phys:#x} ({len} bytes, {used} used)\n"
            );
            match previous {
                Previous::None => {
                    pr_info!("reserve_mem '{name}' held no profile of an earlier boot\n")
                }
                Previous::OtherBuild(id) => pr_warn!(
                    "the profile in reserve_mem '{name}' is of build {}, this kernel is {}: not served, replaced\n",
                    format_args!("{id}"),
                    format_args!("{this}")
                ),
                Previous::Damaged => pr_warn!(
                    "the profile in reserve_mem '{name}' does not match its seal (damaged): not served, replaced\n"
                ),
                Previous::Served {
                    end,
                    sealed,
                    generation,
                    started,
                    ended,
                } => pr_info!(
                    "previous boot's profile (build {}, generation {generation}, started {}, ended: {} at {}, {}) in pgo/previous/vmlinux.profraw\n",
                    format_args!("{this}"),
                    format_args!("{started}"),
                    end.name(),
                    format_args!("{ended}"),
                    if sealed { "sealed" } else { "not sealed: unchecked" }
                ),
            }
            used as core::ffi::c_long
        }
    }
}

/// Marks how this boot ends in the region, if there is one: from the
/// panic notifier (`panic` true) or the reboot notifier. Takes no lock.
#[no_mangle]
extern "C" fn kpgo_persist_mark_end(panic: bool) {
    // SAFETY: a C function without arguments or preconditions.
    let now = unsafe { kpgo_wall_seconds() };
    vmlinux().mark_end(if panic { End::Panic } else { End::Reboot }, now);
}

/// Completes the region's boot-time counts, from the runtime's initcall
/// (see [`crate::profile::sections::ProfiledObject::settle_boot_counts`]).
pub(crate) fn settle() {
    // SAFETY: a C function without arguments or preconditions.
    vmlinux().settle_boot_counts(unsafe { kpgo_wall_seconds() });
}

/// `previous/vmlinux.profraw`.
pub(crate) struct PreviousFile;

impl Snapshot for PreviousFile {
    fn snapshot(_key: usize) -> Result<KVVec<u8>> {
        let object = vmlinux();
        let mut measure = Measure::new();
        write_previous(object, &mut measure).map_err(|_| ENODEV)?;
        let len = measure.position();
        let mut bytes = KVVec::from_elem(0u8, len, GFP_KERNEL)?;
        // The counts never change and vmlinux stays: one pass.
        let mut sink = Paced::new(SliceSink::new(&mut bytes), reschedule_point);
        write_previous(object, &mut sink).map_err(|_| EIO)?;
        if sink.position() != len {
            return Err(EIO);
        }
        Ok(bytes)
    }
}
