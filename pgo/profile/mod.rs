// SPDX-License-Identifier: GPL-2.0

//! The raw-profile core of kpgo.
//!
//! Everything here depends on `core` only, so that the very same files are
//! compiled into the kernel (as a module of the `kpgo` crate) and on the host
//! (by the `host/` shell, whose tests compare it with compiler-rt).
//!
//! - [`callees`]: the targets of an object's indirect calls that are
//!   other objects' functions, and what their records say.
//! - [`format`]: raw profile layouts per version, padding rules.
//! - [`heapsort`]: a sort with no allocation and no panic path.
//! - [`md5`]: the hash that names functions in data records.
//! - [`names`]: the chunks of a names section and the names they hold.
//! - [`sections`]: the one descriptor type for an instrumented object
//!   (vmlinux, a module, a host program) and address containment.
//! - [`check`]: the one-time check of sections that are not trusted (a
//!   module's), so that hooks, reset and writer stay inside them.
//! - [`epochs`]: the counts of objects whose counters a bias moves
//!   between two sets (counter relocation): exact epochs, and resets
//!   that write no counter.
//! - [`persist`]: the counters of such an object moved into memory
//!   that a warm reboot keeps, and the previous boot's profile served.
//! - [`sink`]: where a profile is written: a measuring sink or a buffer.
//! - [`writer`]: exact sizing and serialization of a descriptor.
//! - [`value`]: lock-free value profiling with a per-object node pool.
//! - [`saved`]: the profile of an object that went away, into which later
//!   loads of the same build are merged.

pub mod callees;
pub mod check;
pub mod epochs;
pub mod format;
pub mod heapsort;
pub mod md5;
pub mod names;
pub mod persist;
pub mod saved;
pub mod sections;
pub mod sink;
pub mod value;
pub mod writer;
