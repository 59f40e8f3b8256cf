// SPDX-License-Identifier: GPL-2.0

//! Sizing and serialization of one object's raw profile.
//!
//! File layout: header, binary ids, data records (verbatim, in memory
//! order), counters, bitmap, names (each padded to 8 bytes), then one value
//! blob per data record that has any value site, even with no value
//! recorded, since the reader steps through blobs record by record.
//!
//! A profile may also name functions of other objects ([`Callees`]):
//! `llvm-profdata` names an indirect-call target only by the data records
//! of the same file. Each callee is one more record after the object's
//! own (its name, hash, counter and value-site numbers as in its own
//! object, all counts zero, so that a merge adds nothing to its counts),
//! zero counters after the object's counters, the names chunks that hold
//! the callees' names after the object's names, and an empty value blob
//! per callee with value sites. Without callees the bytes are the same.

use core::fmt;
use core::ops::Range;

use super::callees::function_address;
use super::epochs::Counts;
use super::format::{
    header, padding_to_8, value_record_header_size, FormatError, HeaderFields, Layout,
    ProfileVersion, MAX_VALUES_PER_SITE, MAX_VALUE_KINDS, VALUE_DATA_SIZE,
};
use super::sections::{DataRecord, ProfiledObject, SectionRange, Sections};
use super::sink::{Measure, Overflow, Sink, SliceSink};

/// Why a profile could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The object's version word is refused.
    Format(FormatError),
    /// The buffer is too small: the profile grew since it was measured
    /// (new values were recorded). Measure again and retry.
    Overflow,
    /// The object has none of the counts asked for (no previous boot's).
    NoCounts,
}

impl From<FormatError> for WriteError {
    fn from(error: FormatError) -> Self {
        WriteError::Format(error)
    }
}

impl From<Overflow> for WriteError {
    fn from(_: Overflow) -> Self {
        WriteError::Overflow
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Format(error) => error.fmt(f),
            WriteError::Overflow => f.write_str("the profile grew while it was being written"),
            WriteError::NoCounts => f.write_str("the object has no such counts"),
        }
    }
}

/// A function of another object that a profile names: what that
/// object's data record of it says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Callee {
    /// `NameRef`: the hash of its name.
    pub name_ref: u64,
    /// `FuncHash`: the hash of its control flow.
    pub func_hash: u64,
    /// The address that the profile's values name it by.
    pub function_pointer: u64,
    /// Its number of counters.
    pub num_counters: u32,
    /// Its value sites per kind.
    pub value_sites: [u16; MAX_VALUE_KINDS],
}

/// What a profile carries besides its object's own parts: records of
/// other objects' functions and the names chunks that name them (whole
/// chunks of those objects' names sections); and which of its own
/// functions are gone.
#[derive(Clone, Default)]
pub struct Callees<'a> {
    /// The functions, in the order their records are written.
    pub records: &'a [Callee],
    /// The names chunks, in order.
    pub names: &'a [&'a [u8]],
    /// The object's code that is gone (a module's freed init text): its
    /// functions' records are written with their retired address as
    /// `FunctionPointer` (`callees::function_address`).
    pub retired: Range<u64>,
}

impl Callees<'_> {
    /// No callee: the object's own profile.
    pub const NONE: Callees<'static> = Callees {
        records: &[],
        names: &[],
        retired: 0..0,
    };

    /// Their counters, in number.
    fn num_counters(&self) -> usize {
        self.records
            .iter()
            .fold(0usize, |sum, c| sum.saturating_add(c.num_counters as usize))
    }

    /// Their names, in bytes.
    fn names_len(&self) -> usize {
        self.names
            .iter()
            .fold(0usize, |sum, n| sum.saturating_add(n.len()))
    }
}

/// [`profile_size_bound_in`] for the profile of `object` that names
/// `callees` too.
pub fn profile_size_bound_naming_in<S: Sink>(
    object: &ProfiledObject,
    callees: &Callees<'_>,
    measure: &mut S,
) -> Result<usize, WriteError> {
    write(object, callees, measure, Values::Omitted)?;
    // The pool's capacity, not its free nodes: a node taken before the
    // measure and linked behind it would be in neither figure.
    let values = object.pool.capacity().saturating_mul(VALUE_DATA_SIZE);
    Ok(measure.position().saturating_add(values))
}

/// [`write_profile`], naming `callees` too.
pub fn write_profile_naming<S: Sink>(
    object: &ProfiledObject,
    callees: &Callees<'_>,
    sink: &mut S,
) -> Result<(), WriteError> {
    write(object, callees, sink, Values::Listed)
}

/// The size in bytes of the profile of `object` as it is now.
pub fn profile_size(object: &ProfiledObject) -> Result<usize, WriteError> {
    let mut measure = Measure::new();
    write_profile(object, &mut measure)?;
    Ok(measure.position())
}

/// A size that the profile of `object` never exceeds, now or later,
/// whatever the hooks do meanwhile: its size with no value listed, plus one
/// value's room per node of its pool. Every value written is a node of the
/// pool, which is linked at most once, to one site (an eviction replaces a
/// value in its node), so no more values are written than the pool holds.
pub fn profile_size_bound(object: &ProfiledObject) -> Result<usize, WriteError> {
    profile_size_bound_in(object, &mut Measure::new())
}

/// [`profile_size_bound`], measured in `measure` (a [`Measure`], maybe
/// wrapped), which starts at 0.
pub fn profile_size_bound_in<S: Sink>(
    object: &ProfiledObject,
    measure: &mut S,
) -> Result<usize, WriteError> {
    profile_size_bound_naming_in(object, &Callees::NONE, measure)
}

/// Serializes the profile of `object` into `buf`; returns the bytes written.
pub fn serialize(object: &ProfiledObject, buf: &mut [u8]) -> Result<usize, WriteError> {
    let mut sink = SliceSink::new(buf);
    write_profile(object, &mut sink)?;
    Ok(sink.position())
}

/// Writes the profile of `object` into `sink`.
pub fn write_profile<S: Sink>(object: &ProfiledObject, sink: &mut S) -> Result<(), WriteError> {
    write(object, &Callees::NONE, sink, Values::Listed)
}

/// Which values a profile is written with.
#[derive(Clone, Copy)]
enum Values {
    /// Those listed now.
    Listed,
    /// None: every site says it has none. For [`profile_size_bound`].
    Omitted,
}

/// Writes the profile of `object` naming `callees` into `sink`, with
/// `values`.
fn write<S: Sink>(
    object: &ProfiledObject,
    callees: &Callees<'_>,
    sink: &mut S,
    values: Values,
) -> Result<(), WriteError> {
    let version = object.version()?;
    let layout = version.layout();
    let sections = object.sections();
    let own = own_fields(object, &version)?;
    let num_data = own.num_data as usize;
    let counters_size = own.counters_size as usize;
    let callee_counters = callees.num_counters();
    let callee_counters_size = callee_counters.saturating_mul(version.counter_size());
    let all_counters_size = counters_size.saturating_add(callee_counters_size);
    let names_size = sections.names.len().saturating_add(callees.names_len());
    let bitmap_size = own.num_bitmap_bytes as usize;
    let fields = HeaderFields {
        num_data: own.num_data.saturating_add(callees.records.len() as u64),
        num_counters: own.num_counters.saturating_add(callee_counters as u64),
        counters_size: all_counters_size as u64,
        names_size: names_size as u64,
        padding_after_counters: padding_to_8(all_counters_size) as u64,
        ..own
    };
    put_header(object, &version, &fields, sink)?;

    // Nothing writes data records or names any more: plain copies, but
    // for the address of a function that is gone.
    let records = static_bytes(&sections.data, num_data * layout.record_size);
    if callees.retired.is_empty() {
        sink.put(records)?;
    } else {
        for (i, bytes) in records.chunks_exact(layout.record_size.max(1)).enumerate() {
            let address = function_address(&object.record(&version, i), &version, &callees.retired);
            put_changed_record(
                bytes,
                layout.function_pointer_offset,
                &address.to_ne_bytes(),
                sink,
            )?;
        }
    }
    let mut counters_at = counters_size as u64;
    for (i, callee) in (num_data..).zip(callees.records) {
        write_callee_record(layout, &fields, i, counters_at, callee, sink)?;
        counters_at = counters_at
            .wrapping_add(u64::from(callee.num_counters) * version.counter_size() as u64);
    }
    put_counts(object, Counts::SinceReset, counters_size, sink)?;
    // The bitmap is live memory of the object, written only by
    // instrumented code or through atomics (contract of
    // `ProfiledObject::new`).
    // SAFETY: the lengths stay inside the sections.
    unsafe {
        sink.put_zeros(callee_counters_size)?;
        sink.put_zeros(padding_to_8(all_counters_size))?;
        if layout.has_bitmap {
            sink.put_live(sections.bitmap.start(), bitmap_size)?;
            sink.put_zeros(padding_to_8(bitmap_size))?;
        }
    }
    sink.put(static_bytes(&sections.names, sections.names.len()))?;
    for chunk in callees.names {
        sink.put(chunk)?;
    }
    sink.put_zeros(padding_to_8(names_size))?;

    for i in 0..num_data {
        write_value_blob(object, &object.record(&version, i), &version, values, sink)?;
        sink.checkpoint();
    }
    for callee in callees.records {
        write_empty_value_blob(&callee.value_sites[..layout.value_kinds], sink)?;
    }
    Ok(())
}

/// The header fields of `object`'s own records, counters, bitmap and
/// names, with no padding but to 8 bytes.
fn own_fields(object: &ProfiledObject, version: &ProfileVersion) -> Result<HeaderFields, Overflow> {
    let layout = version.layout();
    let sections = object.sections();
    let num_counters = version.num_counters(sections.counters.len());
    let counters_size = num_counters * version.counter_size();
    let data_start = file_address(&sections.data);
    let mut ids = Measure::new();
    write_binary_ids(object, &mut ids)?;
    Ok(HeaderFields {
        binary_ids_size: ids.position() as u64,
        num_data: object.num_records(version) as u64,
        num_counters: num_counters as u64,
        counters_size: counters_size as u64,
        num_bitmap_bytes: if layout.has_bitmap {
            sections.bitmap.len() as u64
        } else {
            0
        },
        names_size: sections.names.len() as u64,
        counters_delta: file_address(&sections.counters).wrapping_sub(data_start),
        bitmap_delta: file_address(&sections.bitmap).wrapping_sub(data_start),
        names_delta: file_address(&sections.names),
        padding_before_counters: 0,
        padding_after_counters: padding_to_8(counters_size) as u64,
    })
}

/// Writes the header of `version` with `fields`, then `object`'s binary ids.
fn put_header<S: Sink>(
    object: &ProfiledObject,
    version: &ProfileVersion,
    fields: &HeaderFields,
    sink: &mut S,
) -> Result<(), Overflow> {
    let (words, used) = header(version, fields);
    for word in &words[..used] {
        sink.put_u64(*word)?;
    }
    write_binary_ids(object, sink)
}

/// Writes the data record `bytes` with `field` at offset `at` instead of
/// its own bytes there.
fn put_changed_record<S: Sink>(
    bytes: &[u8],
    at: usize,
    field: &[u8],
    sink: &mut S,
) -> Result<(), Overflow> {
    let mut record = [0u8; MAX_RECORD_SIZE];
    // Every layout's records fit (`MAX_RECORD_SIZE`), and its fields too.
    let (Some(copy), Some(end)) = (record.get_mut(..bytes.len()), at.checked_add(field.len()))
    else {
        return sink.put(bytes);
    };
    copy.copy_from_slice(bytes);
    if let Some(place) = copy.get_mut(at..end) {
        place.copy_from_slice(field);
    }
    sink.put(copy)
}

/// A page size a mapped profile can be laid out for: a power of two, at
/// least 8 bytes (the counters' alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSize(usize);

impl PageSize {
    /// `bytes` as a page size, if it can be one.
    pub const fn new(bytes: usize) -> Option<Self> {
        if bytes.is_power_of_two() && bytes >= 8 {
            Some(Self(bytes))
        } else {
            None
        }
    }

    /// Its bytes.
    pub fn bytes(self) -> usize {
        self.0
    }

    /// Whether `bytes` is a whole number of pages.
    pub fn aligned(self, bytes: usize) -> bool {
        bytes & self.mask() == 0
    }

    fn mask(self) -> usize {
        self.0 - 1
    }
}

/// Where the counters of a profile written by [`write_live`] are: the
/// file's bytes `file_offset..file_offset + len` are the object's memory
/// `memory..memory + len`, whole pages that hold its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivePages {
    /// Offset of the first page in the file.
    pub file_offset: usize,
    /// Address of the first page in memory.
    pub memory: usize,
    /// Bytes of the pages: 0 if the object has no counter.
    pub len: usize,
}

impl LivePages {
    /// Whether these pages hold nothing but the counters of `sections`
    /// and the padding after them that no other data shares
    /// (`Sections::counter_pages`): only then may they be mapped.
    pub fn only_counters(&self, sections: &Sections) -> bool {
        let pages = &sections.counter_pages;
        let start = pages.start() as usize;
        self.len == 0
            || (self.memory >= start
                && self
                    .memory
                    .checked_add(self.len)
                    .is_some_and(|end| end <= start.saturating_add(pages.len())))
    }
}

/// Writes the profile of `object` laid out so that the pages of memory
/// that hold its counters can be mapped in place of their bytes: at a file
/// offset congruent to their address modulo `page_size`,
/// with the header's padding before and after the counters filling the
/// rest of their first and last page, as compiler-rt's continuous mode
/// lays out a file on Apple. The bytes of those pages that are not
/// counters are padding to a reader: zeros here, and in a mapping what the
/// memory holds, so a mapping must only be made of counters that have
/// their pages to themselves.
///
/// Without value data, which has no fixed place: the records are copied
/// with 0 value sites, since `llvm-profdata` refuses a record with value
/// sites and no value data. Nor does it name other objects' functions.
pub fn write_live<S: Sink>(
    object: &ProfiledObject,
    page_size: PageSize,
    sink: &mut S,
) -> Result<LivePages, WriteError> {
    write_paged(object, page_size, Counts::Memory, sink)
}

/// Writes the profile of `object`'s last finished epoch (`epochs`): as
/// [`write_live`] lays it out with no page to align to, the counters being
/// the epoch's counts.
pub fn write_finished_epoch<S: Sink>(
    object: &ProfiledObject,
    sink: &mut S,
) -> Result<(), WriteError> {
    write_paged(object, PageSize(8), Counts::FinishedEpoch, sink).map(|_| ())
}

/// Writes the profile of the previous boot's kernel that a region kept
/// (`persist`): as [`write_finished_epoch`], with that boot's counts
/// since its last reset and no bitmap bytes (a region keeps none); an
/// error for an object without one.
pub fn write_previous<S: Sink>(object: &ProfiledObject, sink: &mut S) -> Result<(), WriteError> {
    if !object.has_previous() {
        return Err(WriteError::NoCounts);
    }
    write_paged(object, PageSize(8), Counts::Previous, sink).map(|_| ())
}

/// [`write_live`] with the object's `counts` in place of its counters.
fn write_paged<S: Sink>(
    object: &ProfiledObject,
    page_size: PageSize,
    counts: Counts,
    sink: &mut S,
) -> Result<LivePages, WriteError> {
    let version = object.version()?;
    let layout = version.layout();
    let sections = object.sections();
    let mut fields = own_fields(object, &version)?;
    let counters_size = fields.counters_size as usize;
    let page_mask = page_size.mask();
    let counters = sections.counters.start() as usize;
    let counters_end = counters.wrapping_add(counters_size);
    let before = (layout.header_words * 8)
        .saturating_add(fields.binary_ids_size as usize)
        .saturating_add((fields.num_data as usize).saturating_mul(layout.record_size));
    // The counters at a file offset that is their address modulo a page;
    // no page at all without counters.
    let (padding_before, padding_after) = if counters_size == 0 {
        (0, 0)
    } else {
        (
            counters.wrapping_sub(before) & page_mask,
            page_size.0.wrapping_sub(counters_end & page_mask) & page_mask,
        )
    };
    fields.padding_before_counters = padding_before as u64;
    fields.padding_after_counters = padding_after as u64;
    put_header(object, &version, &fields, sink)?;
    let num_data = fields.num_data as usize;
    let records = static_bytes(&sections.data, num_data * layout.record_size);
    let no_sites = [0u8; 2 * MAX_VALUE_KINDS];
    let no_sites = no_sites.get(..2 * layout.value_kinds).unwrap_or(&no_sites);
    for bytes in records.chunks_exact(layout.record_size.max(1)) {
        put_changed_record(bytes, layout.num_value_sites_offset, no_sites, sink)?;
    }
    sink.put_zeros(padding_before)?;
    let file_offset = sink.position().wrapping_sub(counters & page_mask);
    put_counts(object, counts, counters_size, sink)?;
    // SAFETY: the lengths stay inside the sections, live memory of the
    // object (contract of `ProfiledObject::new`).
    unsafe {
        sink.put_zeros(padding_after)?;
        if layout.has_bitmap {
            let bitmap_size = fields.num_bitmap_bytes as usize;
            if counts == Counts::Previous {
                sink.put_zeros(bitmap_size)?;
            } else {
                sink.put_live(sections.bitmap.start(), bitmap_size)?;
            }
            sink.put_zeros(padding_to_8(bitmap_size))?;
        }
    }
    sink.put(static_bytes(&sections.names, sections.names.len()))?;
    sink.put_zeros(padding_to_8(sections.names.len()))?;
    let len = if counters_size == 0 {
        0
    } else {
        (counters & page_mask)
            .saturating_add(counters_size)
            .saturating_add(padding_after)
    };
    Ok(LivePages {
        file_offset,
        memory: counters & !page_mask,
        len,
    })
}

/// Appends `len` bytes of `object`'s counters, as `counts` has them.
fn put_counts<S: Sink>(
    object: &ProfiledObject,
    counts: Counts,
    len: usize,
    sink: &mut S,
) -> Result<(), Overflow> {
    if !object.counts_computed(counts) {
        // The counters are live memory of the object, written only by
        // instrumented code or through atomics (contract of
        // `ProfiledObject::new`).
        // SAFETY: `len` is at most the counters' length (`own_fields`).
        return unsafe { sink.put_live(object.sections().counters.start(), len) };
    }
    // 8-byte counters, a whole number of them (`attach_epoch_words`).
    let mut words = [0u8; 256];
    let mut k = 0;
    while k < len / 8 {
        let batch = (len / 8 - k).min(words.len() / 8);
        for (j, word) in words.chunks_exact_mut(8).take(batch).enumerate() {
            let count = object.computed_count(counts, k + j).unwrap_or(0);
            word.copy_from_slice(&count.to_ne_bytes());
        }
        sink.put(&words[..batch * 8])?;
        k += batch;
    }
    Ok(())
}

/// Writes the data record of `callee`, the `index`th record of the file,
/// whose counters are at `counters_at` bytes into the counters section.
/// The reader takes `CounterPtr - (CountersDelta - index * record size)`
/// as that offset (and the same for the bitmap: offset 0, no bytes).
fn write_callee_record<S: Sink>(
    layout: &Layout,
    fields: &HeaderFields,
    index: usize,
    counters_at: u64,
    callee: &Callee,
    sink: &mut S,
) -> Result<(), Overflow> {
    let mut record = [0u8; MAX_RECORD_SIZE];
    let record_offset = (index as u64).wrapping_mul(layout.record_size as u64);
    let mut field = |offset: usize, bytes: &[u8]| {
        if let Some(slot) = record.get_mut(offset..offset + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    };
    field(layout.name_ref_offset, &callee.name_ref.to_ne_bytes());
    field(layout.func_hash_offset, &callee.func_hash.to_ne_bytes());
    let counter_ptr = counters_at
        .wrapping_add(fields.counters_delta)
        .wrapping_sub(record_offset);
    field(layout.counter_ptr_offset, &counter_ptr.to_ne_bytes());
    if layout.has_bitmap {
        let bitmap_ptr = fields.bitmap_delta.wrapping_sub(record_offset);
        field(layout.bitmap_ptr_offset, &bitmap_ptr.to_ne_bytes());
    }
    field(
        layout.function_pointer_offset,
        &callee.function_pointer.to_ne_bytes(),
    );
    field(
        layout.num_counters_offset,
        &callee.num_counters.to_ne_bytes(),
    );
    for (kind, sites) in callee
        .value_sites
        .iter()
        .take(layout.value_kinds)
        .enumerate()
    {
        field(
            layout.num_value_sites_offset + 2 * kind,
            &sites.to_ne_bytes(),
        );
    }
    sink.put(record.get(..layout.record_size).unwrap_or(&[]))
}

/// The largest data record of a supported version.
const MAX_RECORD_SIZE: usize = 72;

/// Writes the value blob of a record whose `sites` (per kind) list no
/// value: nothing if it has no site.
fn write_empty_value_blob<S: Sink>(sites: &[u16], sink: &mut S) -> Result<(), Overflow> {
    let kinds_with_sites = sites.iter().filter(|&&n| n > 0).count();
    if kinds_with_sites == 0 {
        return Ok(());
    }
    let total: usize = 8 + sites
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| value_record_header_size(n as usize))
        .sum::<usize>();
    sink.put_u32(total as u32)?;
    sink.put_u32(kinds_with_sites as u32)?;
    for (kind, &n) in sites.iter().enumerate().filter(|(_, &n)| n > 0) {
        sink.put_u32(kind as u32)?;
        sink.put_u32(u32::from(n))?;
        sink.put_zeros(value_record_header_size(n as usize) - 8)?;
    }
    Ok(())
}

/// The address the header gives for a section: an empty one is at 0, as
/// compiler-rt's undefined weak start symbols are, so that both runtimes
/// write the same bytes.
fn file_address(range: &SectionRange) -> u64 {
    if range.is_empty() {
        0
    } else {
        range.start() as u64
    }
}

/// The first `len` bytes of a section that no one writes while its object
/// is described: data records, names or notes.
pub(crate) fn static_bytes(range: &SectionRange, len: usize) -> &[u8] {
    debug_assert!(len <= range.len());
    if len == 0 {
        return &[];
    }
    // The range is mapped and no one writes it (contract of
    // `ProfiledObject::new`; for data records, why that holds is given at
    // the `Sync` implementation of `ProfiledObject`); the borrow of `range`,
    // part of the object, bounds the lifetime.
    // SAFETY: `len` bytes lie inside the range.
    unsafe { core::slice::from_raw_parts(range.start(), len) }
}

/// Writes the value blob of one record: a header `{total size, kinds}`,
/// then per kind with sites `{kind, sites, count per site (padded)}` and
/// the `{value, count}` pairs of every site in list order (none if
/// `values` omits them).
fn write_value_blob<S: Sink>(
    object: &ProfiledObject,
    record: &DataRecord,
    version: &ProfileVersion,
    values: Values,
    sink: &mut S,
) -> Result<(), Overflow> {
    let kinds = version.layout().value_kinds;
    let kinds_with_sites = (0..kinds).filter(|&k| record.value_sites(k) > 0).count();
    if kinds_with_sites == 0 {
        return Ok(());
    }
    let blob_start = sink.position();
    sink.put_u32(0)?; // total size, patched below
    sink.put_u32(kinds_with_sites as u32)?;
    let mut first_site = 0;
    for kind in 0..kinds {
        let sites = record.value_sites(kind);
        if sites == 0 {
            continue;
        }
        sink.put_u32(kind as u32)?;
        sink.put_u32(sites as u32)?;
        let site_counts = sink.position();
        sink.put_zeros(value_record_header_size(sites) - 8)?;
        for site in 0..sites {
            // Count while writing: the list may grow meanwhile, and the
            // count byte must describe exactly the pairs that follow.
            let mut written = 0u32;
            let mut node = match values {
                Values::Listed => record.site_head(first_site + site).and_then(|h| h.load()),
                Values::Omitted => None,
            };
            while let Some(current) = node {
                if written == MAX_VALUES_PER_SITE {
                    break;
                }
                sink.put_u64(current.value())?;
                sink.put_u64(object.pool.count_of(current))?;
                written += 1;
                node = current.next();
            }
            sink.patch(site_counts + site, &[written as u8]);
        }
        first_site += sites;
    }
    let total = (sink.position() - blob_start) as u32;
    sink.patch(blob_start, &total.to_ne_bytes());
    Ok(())
}

/// `NT_GNU_BUILD_ID`.
const NOTE_GNU_BUILD_ID: u32 = 3;

/// The GNU build ids in the object's notes, in order.
fn build_ids(object: &ProfiledObject) -> impl Iterator<Item = &[u8]> {
    object.sections().notes.iter().flat_map(|notes| {
        let mut rest = static_bytes(notes, notes.len());
        core::iter::from_fn(move || {
            while let Some((note, next)) = Note::split(rest) {
                rest = next;
                if note.kind == NOTE_GNU_BUILD_ID && note.name == b"GNU\0" {
                    return Some(note.desc);
                }
            }
            None
        })
    })
}

/// The first GNU build id in the object's notes, if any.
pub fn first_build_id(object: &ProfiledObject) -> Option<&[u8]> {
    build_ids(object).next()
}

/// Writes every GNU build id found in the object's notes as
/// `{u64 length, bytes, padding to 8}`, as compiler-rt does.
fn write_binary_ids<S: Sink>(object: &ProfiledObject, sink: &mut S) -> Result<(), Overflow> {
    for id in build_ids(object) {
        sink.put_u64(id.len() as u64)?;
        sink.put(id)?;
        sink.put_zeros(padding_to_8(id.len()))?;
    }
    Ok(())
}

/// One ELF note.
pub struct Note<'a> {
    /// `n_type`.
    pub kind: u32,
    /// The name, with its NUL.
    pub name: &'a [u8],
    /// The descriptor (for a build id: the id).
    pub desc: &'a [u8],
}

impl<'a> Note<'a> {
    /// Splits the first note off `notes`, returning it and the notes after
    /// it; `None` at the end or on a truncated note. Name and descriptor
    /// are padded to 4 bytes, as in compiler-rt.
    pub fn split(notes: &'a [u8]) -> Option<(Self, &'a [u8])> {
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(notes.get(at..at + 4)?.try_into().ok()?))
        };
        let round4 = |len: usize| len.checked_add(3).map(|l| l & !3);
        let (name_size, desc_size, kind) = (word(0)? as usize, word(4)? as usize, word(8)?);
        let desc_at = 12usize.checked_add(round4(name_size)?)?;
        let next_at = desc_at.checked_add(round4(desc_size)?)?;
        let note = Note {
            kind,
            name: notes.get(12..12 + name_size)?,
            desc: notes.get(desc_at..desc_at.checked_add(desc_size)?)?,
        };
        Some((note, notes.get(next_at..).unwrap_or(&[])))
    }
}
