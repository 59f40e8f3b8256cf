// SPDX-License-Identifier: GPL-2.0

//! The value-profiling hooks called by instrumented code.
//!
//! They run in any context, from the first instruction of `start_kernel`
//! to NMI handlers: they take no lock, allocate nothing, never sleep and
//! call no instrumented code (this crate is built without instrumentation
//! and the core only uses atomics). Data races are excluded by atomics.

use core::ffi::c_void;

use super::objects::{module_owner_of, vmlinux};
use crate::profile::sections::ProfiledObject;

/// Records through `record_in` into the object that owns `record`. vmlinux's
/// own record test decides for its records (the common case) without a
/// range lookup; only a record it rejects is looked up among the modules.
#[inline(always)]
fn record_in_owner(record: usize, record_in: impl Fn(&ProfiledObject) -> bool) {
    if !record_in(vmlinux()) {
        if let Some(module) = module_owner_of(record) {
            record_in(module);
        }
    }
}

/// Records `value` as a target of indirect-call site `index` of the
/// function whose data record is `data`.
#[no_mangle]
extern "C" fn __llvm_profile_instrument_target(value: u64, data: *mut c_void, index: u32) {
    record_in_owner(data as usize, |object| {
        object.record_target(data as usize, index, value)
    });
}

/// Records the size bucket of `size` at memop site `index` of `data`.
#[no_mangle]
extern "C" fn __llvm_profile_instrument_memop(size: u64, data: *mut c_void, index: u32) {
    record_in_owner(data as usize, |object| {
        object.record_memop(data as usize, index, size)
    });
}
