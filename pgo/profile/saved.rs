// SPDX-License-Identifier: GPL-2.0

//! Saved profiles: the counts of an object that went away, in memory of
//! the runtime's own, into which later loads of the same build are merged.
//!
//! A module's counters live in its own sections, which go when it is
//! unloaded. Its profile is kept as a copy of the object's structure (data
//! records, names, build-id notes, version word) with counters, bitmap,
//! value-site heads and a node pool of its own, all in one buffer
//! ([`SavedLayout`]), described by a [`ProfiledObject`] like any other
//! object: the writer serializes it as it serializes a live one. Each later
//! unload of the same build adds its counts ([`merge`]): a counter adds, a
//! bitmap byte ORs, a value's count adds to the same value's. So the memory
//! a module's profile keeps is its profile's size, however often the
//! module is loaded.
//!
//! Indirect-call targets are function addresses, and a module is loaded at
//! another address each time, its code gone in between: the saved copy's
//! records name their functions by their retired addresses
//! (`callees::retired_address`, the same for every load), and a target
//! that is one of the object's own functions (the `FunctionPointer` of
//! one of its records) is translated to it, since llvm-profdata names
//! targets by the records' addresses in the same profile. Other targets
//! (vmlinux's functions, other modules') are kept as they are; those in
//! code that goes later are renamed then (`ProfiledObject::rename_values`).

use core::fmt;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use core::ops::Range;

use super::callees::{function_address, retired_address};
use super::epochs::Counts;
use super::format::{FormatError, ProfileVersion, MAX_VALUES_PER_SITE};
use super::heapsort::heapsort_by_key;
use super::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};
use super::value::ValueNode;
use super::writer::{first_build_id, static_bytes};

/// Why a live object's counts cannot be merged into a saved profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeError {
    /// An object's version word is refused.
    Version(FormatError),
    /// The two are not the same build: another version, other sections'
    /// sizes, or record `record` differs (name, hash, counters, sites).
    Mismatch {
        /// The first record that differs, or the number of records if the
        /// sections do.
        record: usize,
    },
    /// The scratch space for the function addresses is too small.
    Scratch,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Version(error) => error.fmt(f),
            MergeError::Mismatch { record } => {
                write!(
                    f,
                    "not the same build as the saved profile (record {record})"
                )
            }
            MergeError::Scratch => f.write_str("no room to translate function addresses"),
        }
    }
}

/// One part of a saved profile's buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Part {
    offset: usize,
    len: usize,
}

impl Part {
    /// The range of this part in the buffer at `buffer`.
    fn range(&self, buffer: *mut u8) -> SectionRange {
        SectionRange::from_len(buffer.wrapping_add(self.offset), self.len)
    }
}

/// Where each part of an object's saved profile goes in its buffer: the
/// data records first, then counters, bitmap, names, value-site heads,
/// node pool, notes and the version word, each 8-byte aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SavedLayout {
    version: ProfileVersion,
    records: usize,
    data: Part,
    counters: Part,
    bitmap: Part,
    names: Part,
    heads: Part,
    nodes: Part,
    notes: Part,
    version_word: Part,
    size: usize,
}

impl SavedLayout {
    /// The layout of a saved copy of `object`.
    pub fn of(object: &ProfiledObject) -> Result<Self, FormatError> {
        let version = object.version()?;
        let sections = object.sections();
        let records = object.num_records(&version);
        let sites: usize = (0..records)
            .map(|i| object.record(&version, i).total_value_sites())
            .sum();
        let notes: usize = sections.notes.iter().map(SectionRange::len).sum();
        let mut size = 0;
        let mut part = |len: usize| {
            let offset = size;
            size = (offset + len).next_multiple_of(8);
            Part { offset, len }
        };
        let data = part(records * version.layout().record_size);
        let counters = part(sections.counters.len());
        let bitmap = part(sections.bitmap.len());
        let names = part(sections.names.len());
        let heads = part(sites * core::mem::size_of::<u64>());
        let nodes = part(object.node_capacity() * core::mem::size_of::<ValueNode>());
        let notes = part(notes);
        let version_word = part(core::mem::size_of::<u64>());
        Ok(Self {
            version,
            records,
            data,
            counters,
            bitmap,
            names,
            heads,
            nodes,
            notes,
            version_word,
            size,
        })
    }

    /// Bytes of the buffer.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Builds in `buffer` the saved copy of `object`'s structure, with no
    /// count yet (its counters as a reset leaves them): [`merge`] adds
    /// them. Returns its descriptor.
    ///
    /// # Safety
    ///
    /// `object` is the object this layout was made [`of`](Self::of), and
    /// its memory contract holds (its sections are read). `buffer` is
    /// [`Self::size`] bytes, 8-byte aligned, zeroed and written by nothing
    /// else, and stays so, unmoved, for as long as the returned descriptor
    /// is used (through atomics only, except for what this writes now).
    pub unsafe fn build(&self, object: &ProfiledObject, buffer: *mut u8) -> ProfiledObject {
        let sections = object.sections();
        let (counters, bitmap) = (self.counters.range(buffer), self.bitmap.range(buffer));
        let heads = self.heads.range(buffer);
        // SAFETY: `buffer` is ours and `self.size` bytes (the contract), the
        // parts lie inside it, and the object's sections are readable.
        unsafe {
            copy(sections.data.start(), buffer, self.data.len);
            copy(
                sections.names.start(),
                self.names.range(buffer).start(),
                self.names.len,
            );
            let mut notes = self.notes.range(buffer).start();
            for range in &sections.notes {
                copy(range.start(), notes, range.len());
                notes = notes.wrapping_add(range.len());
            }
            copy(
                object.version_word().cast(),
                self.version_word.range(buffer).start(),
                self.version_word.len,
            );
            // No count yet: in coverage mode that is 0xff ("not covered"),
            // which `merge` ANDs with; a zeroed copy would say "covered".
            core::ptr::write_bytes(
                counters.start(),
                self.version.counter_reset_byte(),
                counters.len(),
            );
        }
        let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
        notes[0] = self.notes.range(buffer);
        let saved_sections = Sections {
            data: self.data.range(buffer),
            counters,
            counter_pages: counters,
            spare_counters: SectionRange::EMPTY,
            counter_bias: SectionRange::EMPTY,
            bitmap,
            names: self.names.range(buffer),
            values: heads,
            vnodes: self.nodes.range(buffer),
            notes,
        };
        let version_word = self.version_word.range(buffer).start().cast::<u64>();
        let layout = self.version.layout();
        // The records point at the copy's counters, bitmap and heads, at
        // the same offsets in them as the object's records in its sections.
        let mut first_head = 0;
        for i in 0..self.records {
            let live = object.record(&self.version, i);
            let saved = buffer.wrapping_add(i * layout.record_size);
            let counter = counters.start().wrapping_add(
                live.counters_address()
                    .wrapping_sub(sections.counters.start() as usize),
            );
            let bits = if live.num_bitmap_bytes() == 0 {
                bitmap.start()
            } else {
                bitmap.start().wrapping_add(
                    live.bitmap_address()
                        .wrapping_sub(sections.bitmap.start() as usize),
                )
            };
            let sites = live.total_value_sites();
            let values = if sites == 0 {
                0
            } else {
                heads.start() as usize + first_head * core::mem::size_of::<u64>()
            };
            first_head += sites;
            // Its code is gone (the saved profile outlives the module):
            // named by its retired address (`callees`).
            let address = retired_address(
                live.read_u64(layout.name_ref_offset),
                live.read_u64(layout.func_hash_offset),
            );
            // SAFETY: each field lies inside record `i` of the copy,
            // in the buffer (the contract), 8-byte aligned.
            unsafe {
                write_u64(saved, layout.function_pointer_offset, address);
                write_u64(saved, layout.counter_ptr_offset, relative(counter, saved));
                if layout.has_bitmap {
                    write_u64(saved, layout.bitmap_ptr_offset, relative(bits, saved));
                }
                write_u64(saved, layout.values_offset, values as u64);
            }
        }
        // The buffer holds the structure just built: records whose fields
        // name the copy's own counters, bitmap and heads, a zeroed pool, the
        // copied names, notes and version word.
        // SAFETY: every range is a part of the buffer, which the contract
        // keeps mapped and otherwise untouched.
        let saved = unsafe { ProfiledObject::new(saved_sections, version_word) };
        saved.set_values_per_site(MAX_VALUES_PER_SITE);
        saved
    }
}

/// Copies `len` bytes.
///
/// # Safety
///
/// `from` is readable and `to` writable for `len` bytes, not overlapping.
unsafe fn copy(from: *const u8, to: *mut u8, len: usize) {
    if len != 0 {
        // SAFETY: the caller's contract.
        unsafe { core::ptr::copy_nonoverlapping(from, to, len) };
    }
}

/// `to - from`, as a record's relative pointer fields hold it.
fn relative(to: *mut u8, from: *mut u8) -> u64 {
    (to as usize).wrapping_sub(from as usize) as u64
}

/// Writes the `u64` field at `offset` of the record at `record`.
///
/// # Safety
///
/// The field is inside writable memory, 8-byte aligned.
unsafe fn write_u64(record: *mut u8, offset: usize, value: u64) {
    // SAFETY: the caller's contract.
    unsafe { record.wrapping_add(offset).cast::<u64>().write(value) };
}

/// A function of an object, at its address in the live object and in the
/// saved copy: the scratch space of [`merge`], one per record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FunctionAddress {
    live: u64,
    saved: u64,
}

/// What a merge could not keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Values not kept: the saved site was at the format's limit, or the
    /// saved pool exhausted.
    pub values_dropped: u64,
}

/// Whether `saved` is a saved profile of the same build as `live`: the same
/// GNU build id, or, for objects without one, the same structure (names,
/// hashes and counter numbers of every record).
pub fn same_build(saved: &ProfiledObject, live: &ProfiledObject) -> bool {
    match (first_build_id(saved), first_build_id(live)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => check_same_structure(saved, live).is_ok(),
        _ => false,
    }
}

/// Checks that `saved` and `live` are laid out alike; returns their
/// version.
fn check_same_structure(
    saved: &ProfiledObject,
    live: &ProfiledObject,
) -> Result<ProfileVersion, MergeError> {
    let version = live.version().map_err(MergeError::Version)?;
    let layout = version.layout();
    let records = live.num_records(&version);
    let (s, l) = (saved.sections(), live.sections());
    let mismatch = MergeError::Mismatch { record: records };
    if saved.version().map_err(MergeError::Version)? != version
        || saved.num_records(&version) != records
        || s.counters.len() != l.counters.len()
        || s.bitmap.len() != l.bitmap.len()
        || static_bytes(&s.names, s.names.len()) != static_bytes(&l.names, l.names.len())
    {
        return Err(mismatch);
    }
    for i in 0..records {
        let (a, b) = (saved.record(&version, i), live.record(&version, i));
        let same = a.read_u64(layout.name_ref_offset) == b.read_u64(layout.name_ref_offset)
            && a.read_u64(layout.func_hash_offset) == b.read_u64(layout.func_hash_offset)
            && a.num_counters() == b.num_counters()
            && a.num_bitmap_bytes() == b.num_bitmap_bytes()
            && (0..layout.value_kinds).all(|kind| a.value_sites(kind) == b.value_sites(kind));
        if !same {
            return Err(MergeError::Mismatch { record: i });
        }
    }
    Ok(version)
}

/// Adds the counts of `live` into `saved`, a saved profile of the same
/// build (see [`same_build`]): counters add, bitmap bytes OR (coverage
/// counters, where 0 is "covered", AND), each value's count since the last
/// reset adds to the same value's at the same site. Changes nothing if the
/// two are not laid out alike. `scratch` has room for one
/// [`FunctionAddress`] per record.
///
/// The saved profile may be read meanwhile (its counts are atomics), but
/// only one merge at a time may write it.
pub fn merge(
    saved: &ProfiledObject,
    live: &ProfiledObject,
    live_retired: &Range<u64>,
    scratch: &mut [FunctionAddress],
) -> Result<MergeStats, MergeError> {
    let version = check_same_structure(saved, live)?;
    let layout = version.layout();
    let records = live.num_records(&version);
    let targets = scratch.get_mut(..records).ok_or(MergeError::Scratch)?;
    for (i, target) in targets.iter_mut().enumerate() {
        *target = FunctionAddress {
            // A function in code of `live` that is gone (`live_retired`)
            // is named by its retired address: the raw one may be another
            // module's function now.
            live: function_address(&live.record(&version, i), &version, live_retired),
            saved: saved
                .record(&version, i)
                .read_u64(layout.function_pointer_offset),
        };
    }
    heapsort_by_key(targets, |target| target.live);
    let translate = |value: u64| match targets.binary_search_by_key(&value, |t| t.live) {
        Ok(at) if value != 0 => targets[at].saved,
        _ => value,
    };

    let (s, l) = (saved.sections(), live.sections());
    if version.counter_size() == 1 {
        // SAFETY: both ranges are their objects' live counters, of equal
        // lengths (checked), accessed through atomics.
        unsafe { combine_bytes(&s.counters, &l.counters, |a, b| a & b) };
    } else {
        for k in 0..version.num_counters(l.counters.len()) {
            // Both counter sections have equal lengths (checked), and are
            // aligned (the object's contract, the saved layout).
            // SAFETY: counter `k` is inside both, accessed through atomics.
            let (to, from) = unsafe {
                (
                    AtomicU64::from_ptr(s.counters.start().cast::<u64>().add(k)),
                    AtomicU64::from_ptr(l.counters.start().cast::<u64>().add(k)),
                )
            };
            let count = live
                .computed_count(Counts::SinceReset, k)
                .unwrap_or_else(|| from.load(Ordering::Relaxed));
            let sum = to.load(Ordering::Relaxed).wrapping_add(count);
            to.store(sum, Ordering::Relaxed);
        }
    }
    // SAFETY: both are their objects' live bitmaps, of equal lengths.
    unsafe { combine_bytes(&s.bitmap, &l.bitmap, |a, b| a | b) };

    let mut stats = MergeStats::default();
    for i in 0..records {
        let (to, from) = (saved.record(&version, i), live.record(&version, i));
        let mut site = 0;
        for kind in 0..layout.value_kinds {
            for _ in 0..from.value_sites(kind) {
                let (Some(to_head), Some(from_head)) = (to.site_head(site), from.site_head(site))
                else {
                    site += 1;
                    continue;
                };
                let mut node = from_head.load();
                while let Some(current) = node {
                    let count = live.pool.count_of(current);
                    // Indirect-call targets (kind 0) are addresses.
                    let value = if kind == 0 {
                        translate(current.value())
                    } else {
                        current.value()
                    };
                    if count != 0 && !saved.add_count(to_head, value, count) {
                        stats.values_dropped += 1;
                    }
                    node = current.next();
                }
                site += 1;
            }
        }
    }
    Ok(stats)
}

/// `to[i] = combine(to[i], from[i])` for every byte of two ranges of equal
/// length.
///
/// # Safety
///
/// Both ranges are mapped writable memory accessed only through atomics,
/// of equal lengths.
unsafe fn combine_bytes(to: &SectionRange, from: &SectionRange, combine: impl Fn(u8, u8) -> u8) {
    for i in 0..to.len().min(from.len()) {
        // SAFETY: byte `i` is inside both ranges (the caller's contract).
        let (a, b) = unsafe {
            (
                AtomicU8::from_ptr(to.start().add(i)),
                AtomicU8::from_ptr(from.start().add(i)),
            )
        };
        a.store(
            combine(a.load(Ordering::Relaxed), b.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
    }
}
