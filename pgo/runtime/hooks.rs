// SPDX-License-Identifier: GPL-2.0

//! The value-profiling hooks called by instrumented code.
//!
//! They run in any context, from the first instruction of `start_kernel`
//! to NMI handlers and idle: they take no lock, allocate nothing, never
//! sleep, call no instrumented code (this crate is built without
//! instrumentation and the core only uses atomics) and have no panic path
//! (no overflow check, no bounds check that can fail). Data races are
//! excluded by atomics.

use core::ffi::c_void;

// The functions on the hooks' path that may be emitted out of line go to
// `.kprobes.text` with kprobes: a probe's handler is instrumented code, so
// every function the hooks reach in the image must be refused as a probe
// point, whatever was inlined.

use super::objects::{record_module_target, vmlinux, vmlinux_rust};
use crate::profile::format::{memop_size_bucket, Layout};

/// The layout the hooks read vmlinux's data records with: that of the C
/// compiler's raw version, which Kconfig found (`PGO_CLANG_RAW_VERSION`:
/// 10 or 11; Rust records of another version are apart, in
/// `objects::vmlinux_rust`).
/// The hot path tests no other layout.
#[cfg(not(CONFIG_PGO_CLANG_RAW_VERSION = "11"))]
pub(crate) const VMLINUX_LAYOUT: &Layout = &crate::profile::format::LAYOUT_V10;
#[cfg(CONFIG_PGO_CLANG_RAW_VERSION = "11")]
pub(crate) const VMLINUX_LAYOUT: &Layout = &crate::profile::format::LAYOUT_V11;

/// Records `value` as a target of indirect-call site `index` of the
/// function whose data record is `data`.
#[no_mangle]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
extern "C" fn __llvm_profile_instrument_target(value: u64, data: *mut c_void, index: u32) {
    let record = data as usize;
    // vmlinux's own records (the common case) are decided here, without a
    // lookup; every other path is one tail call, so this one saves no
    // registers.
    if !vmlinux().record_target_checked_as(VMLINUX_LAYOUT, record, index, value) {
        record_target_slow(record, index, value);
    }
}

/// [`__llvm_profile_instrument_target`] for the first call (which checks
/// vmlinux's version word) and for records vmlinux does not own: the
/// image's Rust records when they are apart (`objects::vmlinux_rust`),
/// then modules'. vmlinux's record test is not repeated.
#[cold]
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
fn record_target_slow(record: usize, index: u32, value: u64) {
    if vmlinux().record_target_if_unchecked(record, index, value) {
        return;
    }
    if let Some(rust) = vmlinux_rust() {
        // Its version word is checked by its first call, as vmlinux's.
        if rust.record_target_checked(record, index, value)
            || rust.record_target_if_unchecked(record, index, value)
        {
            return;
        }
    }
    record_module_target(record, index, value);
}

/// Records the size bucket of `size` at memop site `index` of `data`.
#[no_mangle]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
extern "C" fn __llvm_profile_instrument_memop(size: u64, data: *mut c_void, index: u32) {
    __llvm_profile_instrument_target(memop_size_bucket(size), data, index);
}
