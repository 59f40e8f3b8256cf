// SPDX-License-Identifier: GPL-2.0

//! Checking the sections of an object that is not trusted.
//!
//! The hooks follow a data record's `Values` pointer and write through it
//! (a site's list head, then nodes of the pool), reset restarts the count
//! of every node the heads lead to, and the writer reads them. For vmlinux the
//! linker is trusted. A module's sections come from a file loaded at run
//! time: a compiler or linker bug, a toolchain mismatch or a damaged `.ko`
//! would turn those accesses into writes anywhere in the kernel. So a
//! module's sections are checked once, before anything uses them, by
//! [`ProfiledObject::new_checked`](super::sections::ProfiledObject::new_checked):
//!
//! - the data section is 8-byte aligned and a whole number of records;
//! - each record's counters (`CounterPtr`, relative to the record, and
//!   `NumCounters`) lie inside `__llvm_prf_cnts`, aligned for a counter;
//! - each record's bitmap bytes (`BitmapPtr`, relative, and
//!   `NumBitmapBytes`; raw version 10) lie inside `__llvm_prf_bits`;
//! - each record's `Values` is null, or names one aligned list head per
//!   value site of the record, all inside `__llvm_prf_vals`;
//! - the node pool is aligned for a node;
//! - no site head and no node is in use yet: both sections are still
//!   zero, as the compiler emits them (a head or a node's `next` pointing
//!   anywhere would be followed).
//!
//! A range that holds nothing (no counter, no bitmap byte, no site) names
//! no memory and is accepted wherever it points.
//!
//! What is checked stays true because nothing writes the records after the
//! check: the module loader writes them (relocations) before it, and
//! nothing in the kernel writes them afterwards. As defence in depth, with
//! `STRICT_MODULE_RWX` the MMU refuses writes from the end of the module's
//! init, when its `__llvm_prf_data` becomes read-only.

use core::fmt;
use core::mem::{align_of, size_of};
use core::sync::atomic::Ordering;

use super::format::{FormatError, ProfileVersion};
use super::sections::{live_chunks, DataRecord, LiveChunk, SectionRange, Sections};
use super::value::{ValueNode, ValueNodeLink};

/// Why an object's sections are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionError {
    /// The version word is refused.
    Version(FormatError),
    /// The data section does not start on an 8-byte boundary.
    DataMisaligned,
    /// The data section is not a whole number of records.
    DataNotWholeRecords {
        /// Bytes of the data section.
        bytes: usize,
        /// Bytes of one record.
        record_size: usize,
    },
    /// A record's counters are not all inside `__llvm_prf_cnts`, or not
    /// aligned for a counter.
    Counters {
        /// The index of the record.
        record: usize,
    },
    /// A record's bitmap bytes are not all inside `__llvm_prf_bits`.
    Bitmap {
        /// The index of the record.
        record: usize,
    },
    /// A raw version 9 record has bitmap bytes (MC/DC), which the hooks
    /// would take for value sites.
    BitmapInVersion9 {
        /// The index of the record.
        record: usize,
    },
    /// A raw version 11 record has uniform counters or a wave size: it
    /// was compiled for a GPU, whose `__llvm_prf_ucnts` kpgo does not
    /// write.
    UniformCounters {
        /// The index of the record.
        record: usize,
    },
    /// A record's `Values` pointer does not name its value sites' list
    /// heads inside `__llvm_prf_vals`, aligned.
    Values {
        /// The index of the record.
        record: usize,
    },
    /// The node pool is not aligned for a node.
    PoolMisaligned,
    /// A section that must still be zero is not: a site head or a node is
    /// already in use.
    NotZero {
        /// The section's name.
        section: &'static str,
    },
}

impl fmt::Display for SectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SectionError::Version(error) => error.fmt(f),
            SectionError::DataMisaligned => {
                f.write_str("__llvm_prf_data is not aligned on 8 bytes")
            }
            SectionError::DataNotWholeRecords { bytes, record_size } => write!(
                f,
                "__llvm_prf_data holds {bytes} bytes, \
                 not a whole number of {record_size}-byte records"
            ),
            SectionError::Counters { record } => write!(
                f,
                "data record {record}: counters outside __llvm_prf_cnts or misaligned"
            ),
            SectionError::Bitmap { record } => {
                write!(f, "data record {record}: bitmap outside __llvm_prf_bits")
            }
            SectionError::BitmapInVersion9 { record } => write!(
                f,
                "data record {record}: MC/DC bitmap bytes in a raw version 9 record \
                 (kpgo profiles -fprofile-generate code, which has none)"
            ),
            SectionError::UniformCounters { record } => write!(
                f,
                "data record {record}: uniform counters or a wave size in a raw version 11 \
                 record (an offload target's; kpgo writes no __llvm_prf_ucnts)"
            ),
            SectionError::Values { record } => write!(
                f,
                "data record {record}: Values pointer does not name \
                 its value-site heads inside __llvm_prf_vals"
            ),
            SectionError::PoolMisaligned => {
                f.write_str("__llvm_prf_vnds is not aligned for value nodes")
            }
            SectionError::NotZero { section } => {
                write!(f, "{section} is not zero before the first value")
            }
        }
    }
}

impl From<FormatError> for SectionError {
    fn from(error: FormatError) -> Self {
        SectionError::Version(error)
    }
}

/// Whether `len` bytes at `start`, aligned on `align`, lie inside `range`.
/// An empty span names no memory: it is accepted wherever it points. `None`
/// (a length that overflowed) is refused.
fn holds(range: &SectionRange, start: usize, len: Option<usize>, align: usize) -> bool {
    let Some(len) = len else {
        return false;
    };
    if len == 0 {
        return true;
    }
    let low = range.start() as usize;
    let high = low.wrapping_add(range.len());
    start % align == 0 && start >= low && start.checked_add(len).is_some_and(|end| end <= high)
}

/// Whether every byte of `range` is zero. Atomic loads: once the object is
/// published, the hooks write these sections.
///
/// # Safety
///
/// As for [`live_chunks`], for `range`.
unsafe fn all_zero(range: &SectionRange) -> bool {
    // SAFETY: the caller's contract.
    unsafe { live_chunks(range.start(), range.len()) }.all(|(_, chunk)| match chunk {
        LiveChunk::Word(word) => word.load(Ordering::Relaxed) == 0,
        LiveChunk::Byte(byte) => byte.load(Ordering::Relaxed) == 0,
    })
}

/// Checks `sections` for `version` as the module documentation says.
/// Reads, never writes.
///
/// # Safety
///
/// Every non-empty range of `sections` is mapped and readable; the site
/// heads and the node pool are also writable, and accessed only through
/// atomics (the contract of `ProfiledObject::new_checked`).
pub(crate) unsafe fn check_sections(
    sections: &Sections,
    version: &ProfileVersion,
) -> Result<(), SectionError> {
    let layout = version.layout();
    let data = &sections.data;
    if data.start() as usize % 8 != 0 {
        return Err(SectionError::DataMisaligned);
    }
    if data.len() % layout.record_size != 0 {
        return Err(SectionError::DataNotWholeRecords {
            bytes: data.len(),
            record_size: layout.record_size,
        });
    }
    let counter_size = version.counter_size();
    for index in 0..data.len() / layout.record_size {
        // A whole, aligned record inside the data section (checked above),
        // which the caller's contract makes readable.
        let record = DataRecord::at(data.start() as usize + index * layout.record_size, layout);
        let counters = record.num_counters().checked_mul(counter_size);
        if !holds(
            &sections.counters,
            record.counters_address(),
            counters,
            counter_size,
        ) {
            return Err(SectionError::Counters { record: index });
        }
        // The hooks read a version 9 record through version 10's layout
        // (`HookRecords`), whose third site count is version 9's
        // `NumBitmapBytes`: with bitmap bytes, that view would count sites
        // the record has no heads for. `-fprofile-generate` makes none
        // (only MC/DC coverage does).
        if layout.version == 9 && record.num_bitmap_bytes() != 0 {
            return Err(SectionError::BitmapInVersion9 { record: index });
        }
        if record.has_offload_fields() {
            return Err(SectionError::UniformCounters { record: index });
        }
        let bitmap = Some(record.num_bitmap_bytes());
        if !holds(&sections.bitmap, record.bitmap_address(), bitmap, 1) {
            return Err(SectionError::Bitmap { record: index });
        }
        let heads = record.site_heads() as usize;
        let heads_len = record
            .total_value_sites()
            .checked_mul(size_of::<ValueNodeLink>());
        if heads != 0
            && !holds(
                &sections.values,
                heads,
                heads_len,
                align_of::<ValueNodeLink>(),
            )
        {
            return Err(SectionError::Values { record: index });
        }
    }
    let pool = &sections.vnodes;
    if !pool.is_empty() && pool.start() as usize % align_of::<ValueNode>() != 0 {
        return Err(SectionError::PoolMisaligned);
    }
    // SAFETY: both ranges are empty or mapped writable memory accessed
    // only through atomics (caller's contract).
    if !unsafe { all_zero(&sections.values) } {
        return Err(SectionError::NotZero {
            section: "__llvm_prf_vals",
        });
    }
    // SAFETY: as above.
    if !unsafe { all_zero(pool) } {
        return Err(SectionError::NotZero {
            section: "__llvm_prf_vnds",
        });
    }
    Ok(())
}
