// SPDX-License-Identifier: GPL-2.0

//! kpgo's host shell: the kernel's raw-profile core as a drop-in replacement
//! for compiler-rt's profile runtime.
//!
//! A program compiled with `clang -fprofile-generate` and linked with
//! `libkpgo.a -Wl,-u,__llvm_profile_runtime` (instead of compiler-rt) gets
//! the same value-profiling hooks the kernel uses and writes its raw profile
//! at exit to `$LLVM_PROFILE_FILE` (`%p` expands to the process id), or to
//! `default.profraw`. The whole program is one [`ProfiledObject`], exactly as
//! vmlinux or a module is in the kernel.

#[path = "../../pgo/profile/mod.rs"]
pub mod profile;

mod program;

pub use program::{program_object, write_profile_file};
