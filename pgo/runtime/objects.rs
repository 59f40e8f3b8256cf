// SPDX-License-Identifier: GPL-2.0

//! The instrumented objects of the running kernel, as the hooks see them.
//!
//! vmlinux's descriptor is a static built from the linker's section
//! symbols, so the hooks can use it from the first instrumented call of the
//! boot, long before any initcall. It is first and fixed: the hooks ask it
//! before anything else.
//!
//! A module's records are another object's: with module support, the
//! hooks find the module's descriptor in the module map (`modules`, which
//! also says when a descriptor is freed); without, only vmlinux has
//! records.

use crate::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};

#[cfg(CONFIG_MODULES)]
mod modules;
#[cfg(CONFIG_MODULES)]
pub(crate) use modules::*;

crate::linked_image!(fn vmlinux_sections, pub(crate) fn vmlinux_version_word);

extern "C" {
    static mut __start_notes: u8;
    static mut __stop_notes: u8;
    static mut __pages_end___llvm_prf_cnts: u8;
}

const fn vmlinux_notes() -> [SectionRange; MAX_NOTE_RANGES] {
    let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
    notes[0] = SectionRange::new(&raw mut __start_notes, &raw mut __stop_notes);
    notes
}

#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
extern "C" {
    static mut __start___llvm_prf_cnts_spare: u8;
    static mut __stop___llvm_prf_cnts_spare: u8;
    static mut __llvm_profile_counter_bias: u64;
}

/// vmlinux's spare counters (in `.bss`, `vmlinux.lds.h`) and its bias
/// (`glue.c`).
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
const fn vmlinux_spare_and_bias() -> (SectionRange, SectionRange) {
    let bias = &raw mut __llvm_profile_counter_bias;
    (
        SectionRange::new(
            &raw mut __start___llvm_prf_cnts_spare,
            &raw mut __stop___llvm_prf_cnts_spare,
        ),
        SectionRange::new(bias.cast(), bias.wrapping_add(1).cast()),
    )
}

#[cfg(not(CONFIG_PGO_CLANG_COUNTER_RELOCATION))]
const fn vmlinux_spare_and_bias() -> (SectionRange, SectionRange) {
    (SectionRange::EMPTY, SectionRange::EMPTY)
}

/// vmlinux's sections; its counters fill pages of their own, up to
/// `__pages_end___llvm_prf_cnts` (`vmlinux.lds.h`).
const fn vmlinux_sections_with_pages() -> Sections {
    let sections = vmlinux_sections(vmlinux_notes());
    let (spare_counters, counter_bias) = vmlinux_spare_and_bias();
    Sections {
        counter_pages: SectionRange::new(
            sections.counters.start(),
            &raw mut __pages_end___llvm_prf_cnts,
        ),
        spare_counters,
        counter_bias,
        ..sections
    }
}

// The linker script places every `__llvm_prf_*` input section of vmlinux
// between these symbols, and `.notes` between `__start_notes` and
// `__stop_notes`; all are part of the kernel image, mapped for good. The
// counters, bitmap, value nodes and site heads are written only by
// instrumented code and by the core's atomics.
static VMLINUX: ProfiledObject =
    // SAFETY: as above: the sections and version word of vmlinux itself.
    unsafe { ProfiledObject::new(vmlinux_sections_with_pages(), vmlinux_version_word()) };

/// The descriptor of the kernel image.
pub(crate) fn vmlinux() -> &'static ProfiledObject {
    &VMLINUX
}

// When rustc writes another raw version than clang (`PGO_CLANG_RUST_APART`),
// kbuild moves the records and value-node pools of the Rust objects built
// into vmlinux to sections of their own, under a version word of their own
// (the top Makefile). They make a second descriptor of the image, whose
// records are rustc's layout; it shares the image's counters, bitmap,
// names and site heads, which both layouts reach by the records' relative
// pointers, and has its own node pool, so that each descriptor hands out
// nodes of its own. Counters fixed in place keep the shared counters one
// state (Kconfig: not with counter relocation).
#[cfg(CONFIG_PGO_CLANG_RUST_APART)]
extern "C" {
    static mut __start___llvm_prf_data_rust: u8;
    static mut __stop___llvm_prf_data_rust: u8;
    static mut __start___llvm_prf_vnds_rust: u8;
    static mut __stop___llvm_prf_vnds_rust: u8;
    static __llvm_profile_raw_version_rust: u64;
}

#[cfg(CONFIG_PGO_CLANG_RUST_APART)]
static VMLINUX_RUST: ProfiledObject =
    // SAFETY: as for `VMLINUX`: sections of vmlinux itself, which the
    // linker script places (`__llvm_prf_data_rust` with the records,
    // `__llvm_prf_vnds_rust` with the node pools), and the Rust objects'
    // version word, which the linker keeps once (glue.c's weak 0 if no
    // built-in Rust object is instrumented).
    unsafe {
        ProfiledObject::new(
            Sections {
                data: SectionRange::new(
                    &raw mut __start___llvm_prf_data_rust,
                    &raw mut __stop___llvm_prf_data_rust,
                ),
                vnodes: SectionRange::new(
                    &raw mut __start___llvm_prf_vnds_rust,
                    &raw mut __stop___llvm_prf_vnds_rust,
                ),
                ..vmlinux_sections_with_pages()
            },
            &raw const __llvm_profile_raw_version_rust,
        )
    };

/// The descriptor of the Rust records of the kernel image, apart from
/// vmlinux's because rustc writes another raw version than clang.
#[cfg(CONFIG_PGO_CLANG_RUST_APART)]
#[inline(always)]
pub(crate) fn vmlinux_rust() -> Option<&'static ProfiledObject> {
    Some(&VMLINUX_RUST)
}

/// None: the Rust records of the kernel image, if any, are vmlinux's.
#[cfg(not(CONFIG_PGO_CLANG_RUST_APART))]
#[inline(always)]
pub(crate) fn vmlinux_rust() -> Option<&'static ProfiledObject> {
    None
}

/// Without module support, only vmlinux has records: a value for any
/// other record is dropped.
#[cfg(not(CONFIG_MODULES))]
#[inline(always)]
pub(crate) fn record_module_target(_record: usize, _index: u32, _value: u64) {}
