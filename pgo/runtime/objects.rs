// SPDX-License-Identifier: GPL-2.0

//! The instrumented objects of the running kernel.
//!
//! vmlinux's descriptor is a static built from the linker's section
//! symbols, so the hooks can use it from the first instrumented call of the
//! boot, long before any initcall.

use crate::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};

extern "C" {
    static mut __start___llvm_prf_data: u8;
    static mut __stop___llvm_prf_data: u8;
    static mut __start___llvm_prf_cnts: u8;
    static mut __stop___llvm_prf_cnts: u8;
    static mut __start___llvm_prf_bits: u8;
    static mut __stop___llvm_prf_bits: u8;
    static mut __start___llvm_prf_names: u8;
    static mut __stop___llvm_prf_names: u8;
    static mut __start___llvm_prf_vnds: u8;
    static mut __stop___llvm_prf_vnds: u8;
    static mut __start_notes: u8;
    static mut __stop_notes: u8;
    static __llvm_profile_raw_version: u64;
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
static VMLINUX: ProfiledObject = unsafe {
    ProfiledObject::new(
        Sections {
            data: SectionRange::new(&raw mut __start___llvm_prf_data, &raw mut __stop___llvm_prf_data),
            counters: SectionRange::new(&raw mut __start___llvm_prf_cnts, &raw mut __stop___llvm_prf_cnts),
            bitmap: SectionRange::new(&raw mut __start___llvm_prf_bits, &raw mut __stop___llvm_prf_bits),
            names: SectionRange::new(&raw mut __start___llvm_prf_names, &raw mut __stop___llvm_prf_names),
            vnodes: SectionRange::new(&raw mut __start___llvm_prf_vnds, &raw mut __stop___llvm_prf_vnds),
            notes: vmlinux_notes(),
        },
        &raw const __llvm_profile_raw_version,
    )
};

/// The descriptor of the kernel image.
pub(crate) fn vmlinux() -> &'static ProfiledObject {
    &VMLINUX
}

/// The object whose data section holds `record`. Lock-free: called by the
/// hooks.
#[inline]
pub(crate) fn owner_of(record: usize) -> Option<&'static ProfiledObject> {
    if VMLINUX.sections().data.contains(record) {
        return Some(&VMLINUX);
    }
    None
}
