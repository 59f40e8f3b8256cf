// SPDX-License-Identifier: GPL-2.0

//! kpgo: clang's instrumentation-PGO runtime for the kernel.
//!
//! A kernel built with `CONFIG_PGO_CLANG` has every C object compiled with
//! `-fprofile-generate`. This runtime provides the value-profiling hooks the
//! compiler calls, and serves the counters of vmlinux and of every loaded
//! module as raw profiles in debugfs (`/sys/kernel/debug/pgo/`), ready for
//! `llvm-profdata merge`.
//!
//! - [`profile`]: the pure core (layouts, descriptor, writer, value
//!   profiling), shared with the host test shell.
//! - `runtime`: the kernel side: the object registry, the hooks, debugfs.

use kernel::prelude::*;

pub mod profile;
mod runtime;

module! {
    type: Kpgo,
    name: "kpgo",
    author: "kpgo developers",
    description: "clang instrumentation-PGO profile runtime",
    license: "GPL",
}

struct Kpgo;

impl kernel::Module for Kpgo {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        runtime::init()?;
        Ok(Kpgo)
    }
}
