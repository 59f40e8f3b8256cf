// SPDX-License-Identifier: GPL-2.0

//! kpgo: clang's instrumentation-PGO runtime for the kernel.
//!
//! Work in progress: the value-profiling hooks are defined so that an
//! instrumented kernel links; they record nothing yet.

use core::ffi::c_void;

/// Records `value` as a target of indirect-call site `index` of `data`.
#[no_mangle]
pub extern "C" fn __llvm_profile_instrument_target(_value: u64, _data: *mut c_void, _index: u32) {}

/// Records `size` at memory-operation site `index` of `data`.
#[no_mangle]
pub extern "C" fn __llvm_profile_instrument_memop(_size: u64, _data: *mut c_void, _index: u32) {}
