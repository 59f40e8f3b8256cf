// SPDX-License-Identifier: GPL-2.0

//! The one descriptor of an instrumented object.
//!
//! vmlinux, every module and a host program are all described by a
//! [`ProfiledObject`]: the address ranges of its `__llvm_prf_*` sections, its
//! build-id notes, the compiler's version word and its own value-node pool.
//! The writer, reset and value profiling take nothing else, so there is one
//! code path for every kind of object.

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::check::{check_sections, SectionError};
use super::epochs::Epochs;
use super::format::{FormatError, Layout, ProfileVersion};
use super::value::NodePool;

/// The records the hooks accept of each layout they know, in one word so
/// that one load serves any: raw version 10's count in the low half, raw
/// version 11's in the high half. Only the version word's layout has a
/// count, so a hook tests a record against one count and compares no
/// version.
///
/// Raw version 9 (the host library's only) counts as version 10: what the
/// hooks read of a record is laid out alike in both (64-byte records,
/// `Values` at 40, the indirect-call and memop site counts at 52 and 54).
/// The third count that version 10's layout reads, at 56, is version 9's
/// `NumBitmapBytes`: 0 with `-fprofile-generate` (no MC/DC), and
/// `check_sections` holds a module's list heads to it too.
///
/// Raw version 8 (the host library's only as well) shares the high half
/// with version 11, marked by the word's top bit ([`Self::HIGH_IS_V8`]):
/// counts stay below 2^31 so that the mark is never a count's bit. The
/// kernel never stores the mark (it refuses version 8), so its version 11
/// test is the shift alone.
#[derive(Clone, Copy)]
pub(crate) struct HookRecords(u64);

impl HookRecords {
    /// Marks the high half as version 8's count, not version 11's.
    const HIGH_IS_V8: u64 = 1 << 63;

    /// Accepts the first `records` records of `layout` (at most
    /// `i32::MAX`: the hooks ignore records past that), none for a layout
    /// the hooks do not know.
    fn new(layout: &Layout, records: usize) -> Self {
        let records = records.min(i32::MAX as usize) as u64;
        match layout.version {
            10 | 9 => Self(records),
            11 => Self(records << 32),
            8 => Self((records << 32) | Self::HIGH_IS_V8),
            _ => Self(0),
        }
    }

    /// The number of records of `layout` accepted.
    #[inline(always)]
    pub(crate) fn of(self, layout: &Layout) -> usize {
        let high = (self.0 >> 32) as u32 & i32::MAX as u32;
        let high_is_v8 = self.0 & Self::HIGH_IS_V8 != 0;
        match layout.version {
            10 | 9 => self.0 as u32 as usize,
            11 if cfg!(CONFIG_PGO_CLANG) => (self.0 >> 32) as usize,
            11 if !high_is_v8 => high as usize,
            8 if high_is_v8 => high as usize,
            _ => 0,
        }
    }
}

/// A half-open address range `[start, end)` of one section in memory.
///
/// Only addresses: dereferencing happens in [`ProfiledObject`], whose
/// constructor carries the safety contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRange {
    start: *mut u8,
    end: *mut u8,
}

// SAFETY: a `SectionRange` is a pair of addresses; sharing it between
// threads shares no memory. Access to the memory it names is governed by
// the contract of `ProfiledObject::new`.
unsafe impl Send for SectionRange {}
// SAFETY: as for `Send`: `&SectionRange` only reads the two addresses.
unsafe impl Sync for SectionRange {}

impl SectionRange {
    /// The empty range, for a section the object does not have.
    pub const EMPTY: Self = Self {
        start: core::ptr::null_mut(),
        end: core::ptr::null_mut(),
    };

    /// A range from linker-style start and stop addresses. Both may be null
    /// (an absent weak section); a stop below the start makes it empty.
    pub const fn new(start: *mut u8, end: *mut u8) -> Self {
        Self { start, end }
    }

    /// A range from a start address and a length in bytes.
    pub fn from_len(start: *mut u8, len: usize) -> Self {
        Self {
            start,
            end: start.wrapping_add(len),
        }
    }

    /// The first address.
    pub const fn start(&self) -> *mut u8 {
        self.start
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        (self.end as usize).saturating_sub(self.start as usize)
    }

    /// Whether the range holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many note segments a descriptor can name (a host executable may have
/// several `PT_NOTE` segments; the kernel has one).
pub const MAX_NOTE_RANGES: usize = 4;

/// The `__llvm_prf_*` sections of one object and where its build id is.
#[derive(Clone, Copy, Debug)]
pub struct Sections {
    /// `__llvm_prf_data`: one `__llvm_profile_data` record per function.
    pub data: SectionRange,
    /// `__llvm_prf_cnts`: the counters.
    pub counters: SectionRange,
    /// The counters and the zero padding after them that no other data
    /// shares: whole pages where the linker script aligned and padded
    /// them (the kernel's do), else `counters` itself.
    pub counter_pages: SectionRange,
    /// A second set of counters, as long as `counter_pages`, to which the
    /// bias can move them (`epochs`); empty without counter relocation.
    pub spare_counters: SectionRange,
    /// The counter bias, 8 bytes, that every counter address of the
    /// object's code adds; empty without counter relocation.
    pub counter_bias: SectionRange,
    /// `__llvm_prf_bits`: MC/DC bitmap bytes (raw versions 9 and 10).
    pub bitmap: SectionRange,
    /// `__llvm_prf_names`: compressed function names.
    pub names: SectionRange,
    /// `__llvm_prf_vals`: the value sites' list heads, which the data
    /// records' `Values` pointers name.
    pub values: SectionRange,
    /// `__llvm_prf_vnds`: the value-node pool.
    pub vnodes: SectionRange,
    /// ELF note areas to search for `NT_GNU_BUILD_ID` notes.
    pub notes: [SectionRange; MAX_NOTE_RANGES],
}

impl Sections {
    /// A descriptor with no section at all.
    pub const EMPTY: Self = Self {
        data: SectionRange::EMPTY,
        counters: SectionRange::EMPTY,
        counter_pages: SectionRange::EMPTY,
        spare_counters: SectionRange::EMPTY,
        counter_bias: SectionRange::EMPTY,
        bitmap: SectionRange::EMPTY,
        names: SectionRange::EMPTY,
        values: SectionRange::EMPTY,
        vnodes: SectionRange::EMPTY,
        notes: [SectionRange::EMPTY; MAX_NOTE_RANGES],
    };
}

/// Figures about one object, for `pgo/stats` and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Data records, one per instrumented function.
    pub functions: usize,
    /// Counters of its records.
    pub counters: usize,
    /// Value sites of all kinds.
    pub value_sites: usize,
    /// Value nodes taken from the pool.
    pub nodes_used: usize,
    /// Value nodes the pool holds.
    pub nodes_capacity: usize,
    /// Values not recorded for lack of a node.
    pub values_dropped: u64,
}

/// One instrumented object: its sections, its version and its node pool.
///
/// # Trust and lifetime
///
/// A descriptor names memory it does not own. Two constructors state what
/// they assume of it:
///
/// - [`ProfiledObject::new`] trusts the contents: the sections are what
///   the compiler and linker emitted for one linked object (vmlinux, a
///   host program). Nothing is checked.
/// - [`ProfiledObject::new_checked`] trusts only the memory (mapped, and
///   written only by the object's code and by this runtime's atomics), and
///   checks the contents once (see [`super::check`]): every record whole
///   and inside the data section, its counters, bitmap and value-site
///   heads inside their own sections, the node pool aligned, no site head
///   or node in use yet. A module's sections are checked this way.
///
/// The memory contract binds the calls that read the sections, not the
/// descriptor's existence. [`ProfiledObject::record_target`] reads them
/// only for a `record` that lies in this object's data section (and, for a
/// checked descriptor, never reads the version word again); everything
/// else (writer, reset, stats) reads all of them. So a descriptor could
/// outlive its object's memory, provided that after the memory goes only
/// `record_target` is called, and only with records of objects that are
/// still mapped: such a record is never inside the gone object's range.
/// (The kernel frees a module's descriptor before the module's memory:
/// both after a grace period that follows the module's withdrawal.)
///
/// # Invariants
///
/// `hook_records` is 0 until `check_hook_version` stores it, then
/// the whole-record count of the version word's layout in that layout's
/// half and 0 in the other: never changed again (racing first calls store
/// the same word). So a record is only ever tested under its object's
/// layout.
pub struct ProfiledObject {
    sections: Sections,
    version_word: *const u64,
    /// A [`HookRecords`].
    hook_records: AtomicU64,
    /// Whether the version word was checked for the hooks.
    hook_checked: AtomicBool,
    pub(crate) pool: NodePool,
    pub(crate) epochs: Epochs,
}

/// Why an object could not be reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetError {
    /// Its version word is refused.
    Version(FormatError),
    /// Its node pool has no baselines ([`NodePool::attach_baselines`]).
    NoBaselines,
}

/// The multiplicative inverse of 3 modulo 2^64 (or 2^32 on 32-bit).
const INVERSE_OF_3: usize = usize::MAX / 3 * 2 + 1;

/// The multiplicative inverse of 9 modulo 2^64 (or 2^32 on 32-bit).
const INVERSE_OF_9: usize = inverse_of_odd(9);

/// The multiplicative inverse of the odd number `n` modulo the word size:
/// Newton's iteration doubles the correct low bits (n is its own inverse
/// modulo 8), five rounds reach 96.
const fn inverse_of_odd(n: usize) -> usize {
    let mut inverse = n;
    let mut round = 0;
    while round < 5 {
        inverse = inverse.wrapping_mul(2usize.wrapping_sub(n.wrapping_mul(inverse)));
        round += 1;
    }
    inverse
}

// SAFETY: `&ProfiledObject` gives no `&mut` to anything: its fields are
// the section addresses, set once by `new`, and atomics. Behind them:
// - Records, names, notes and the version word are only read: the linker
//   or the loader wrote them before (a saved copy's: `SavedLayout::build`),
//   and with `STRICT_{KERNEL,MODULE}_RWX` `__llvm_prf_data` is read-only
//   once boot or the module's init is done.
// - Counters and bitmap bytes are also written by instrumented code with
//   plain read-modify-writes, on any CPU and in any context. The runtime
//   uses `Relaxed` atomics only, never a reference: 8-byte words where
//   aligned, single bytes elsewhere (`live_chunks`). Rust's memory model
//   allows neither atomics racing with plain accesses nor mixed sizes; what
//   is relied on is what gcov relies on (a race costs counts: no address or
//   length is ever taken from a counter), and the single-copy atomicity of
//   aligned accesses of up to 8 bytes on x86-64, the only architecture that
//   selects ARCH_SUPPORTS_PGO_CLANG (no torn byte; "What a reset promises
//   while code runs" in Documentation/dev-tools/pgo.rst).
// - Value nodes and list heads are written by the hooks with atomic
//   compare-and-exchange and stores; a reset writes the pool's baselines
//   only; a merge writes a saved object's, which no instrumented code
//   writes, under its entry's writer lock, and readers retry on a change.
// - The counter bias (counter relocation) is loaded by instrumented code
//   and stored by the runtime only, with atomics (`epochs`).
unsafe impl Sync for ProfiledObject {}
// SAFETY: as for `Sync`; nothing in the object is tied to a thread.
unsafe impl Send for ProfiledObject {}

impl ProfiledObject {
    /// The descriptor of nothing: it owns no record, has no version (so
    /// no profile) and reads no memory at all.
    pub const fn empty() -> Self {
        let mut object = Self::describe(Sections::EMPTY, core::ptr::null());
        // No version word: the hooks' check would enable nothing.
        object.hook_checked = AtomicBool::new(true);
        object
    }

    /// A descriptor of `sections`; reads nothing.
    const fn describe(sections: Sections, version_word: *const u64) -> Self {
        // INVARIANT: `hook_records` is 0 until `check_hook_version`.
        Self {
            pool: NodePool::new(sections.vnodes),
            epochs: Epochs::new(),
            sections,
            version_word,
            hook_records: AtomicU64::new(0),
            hook_checked: AtomicBool::new(false),
        }
    }

    /// Describes an object from its sections and the address of the
    /// compiler's `__llvm_profile_raw_version` word, trusting both.
    ///
    /// # Safety
    ///
    /// Whenever a method that reads the sections is called (see the type's
    /// documentation): every non-empty range of `sections` is mapped and
    /// holds what the compiler emitted for one linked object (data records
    /// whose `Values` pointers name that object's value-site heads,
    /// counters, bitmap, names, a zero-initialised node pool aligned for
    /// value nodes, and well-formed ELF notes); `version_word` is null or
    /// points to a readable `u64`; and no one writes the counters, bitmap,
    /// value nodes or site heads except instrumented code and this module
    /// (through atomics), nor the data records, names, notes or version
    /// word at all. The spare counters and the counter bias, where not
    /// empty, are writable too, and written only by instrumented code (the
    /// spare set through the bias) and this module's atomics.
    pub const unsafe fn new(sections: Sections, version_word: *const u64) -> Self {
        Self::describe(sections, version_word)
    }

    /// Describes an object whose contents are not trusted: checks its
    /// version word and every data record against the sections once, so
    /// that the hooks, reset and the writer stay inside them. Reads the
    /// sections and writes nothing. The version word is read here and never
    /// again by the hooks.
    ///
    /// # Safety
    ///
    /// Now and whenever a method that reads the sections is called (see the
    /// type's documentation): every non-empty range of `sections` is mapped,
    /// readable, and for the counters, bitmap, site heads and node pool
    /// writable; `version_word` is null or points to a readable `u64`; the
    /// counters and bitmap are written only by the object's instrumented
    /// code and this module's atomics; the site heads and node pool only by
    /// this module's atomics; the data records, names, notes and version
    /// word not at all. The spare counters and the counter bias, where not
    /// empty, are as the counters are.
    pub unsafe fn new_checked(
        sections: Sections,
        version_word: *const u64,
    ) -> Result<Self, SectionError> {
        let object = Self::describe(sections, version_word);
        let version = object.version().map_err(SectionError::Version)?;
        // `check` reads the records only after checking that they are whole
        // and aligned inside the data section.
        // SAFETY: the memory contract is the caller's.
        unsafe { check_sections(&object.sections, &version)? };
        // Now the hooks may trust the records: enable them, so that they
        // never read the version word.
        object.check_hook_version();
        Ok(object)
    }

    /// The sections this object describes.
    pub fn sections(&self) -> &Sections {
        &self.sections
    }

    /// The address of the compiler's version word (null if none).
    pub(crate) fn version_word(&self) -> *const u64 {
        self.version_word
    }

    /// The validated version word, or why it is refused.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn version(&self) -> Result<ProfileVersion, FormatError> {
        if self.version_word.is_null() {
            return Err(FormatError::UnsupportedVersion(0));
        }
        // SAFETY: non-null `version_word` is readable (contract of `new`).
        ProfileVersion::from_word(unsafe { self.version_word.read_volatile() })
    }

    /// The records the hooks accept.
    #[inline(always)]
    pub(crate) fn hook_records(&self) -> HookRecords {
        HookRecords(self.hook_records.load(Ordering::Relaxed))
    }

    /// Whether [`Self::check_hook_version`] ran.
    #[inline(always)]
    pub(crate) fn hook_checked(&self) -> bool {
        self.hook_checked.load(Ordering::Acquire)
    }

    /// Validates the version word for the hooks, once: the compiler's word
    /// never changes. After a refused word the hooks accept no record.
    #[cold]
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub(crate) fn check_hook_version(&self) {
        if let Ok(version) = self.version() {
            let accepted = HookRecords::new(version.layout(), self.num_records(&version));
            // INVARIANT: the count of the word's layout in that layout's
            // half, 0 in the other; racing first calls store the same word,
            // and the compiler's word never changes.
            self.hook_records.store(accepted.0, Ordering::Relaxed);
        }
        self.hook_checked.store(true, Ordering::Release);
    }

    /// Number of whole data records (0 if the version word is refused).
    pub fn record_count(&self) -> usize {
        self.version()
            .map_or(0, |version| self.num_records(&version))
    }

    /// Whether `addr` is a data record of this object, given its version.
    pub fn owns_record(&self, version: &ProfileVersion, addr: usize) -> bool {
        self.record_index(version.layout(), self.num_records(version), addr)
            .is_some()
    }

    /// The index of the data record at `addr`, if `addr` is the start of
    /// one of the first `records` records of this object.
    #[inline(always)]
    pub(crate) fn record_index(
        &self,
        layout: &Layout,
        records: usize,
        addr: usize,
    ) -> Option<usize> {
        let offset = addr.wrapping_sub(self.sections.data.start() as usize);
        // The hooks ask this on every call, so it is one exact-division
        // test (Granlund and Montgomery): rotating `offset * (size / 2^k)^-1`
        // right by `k` gives `offset / size` when `size` divides `offset`,
        // and a value above `usize::MAX / size`, so above any record count,
        // when it does not.
        let index = match layout.record_size {
            64 => offset.rotate_right(6),
            72 => offset.wrapping_mul(INVERSE_OF_9).rotate_right(3),
            48 => offset.wrapping_mul(INVERSE_OF_3).rotate_right(4),
            // The records of `LAYOUT_V10`, `LAYOUT_V11` and `LAYOUT_V8`
            // are the only sizes.
            _ => usize::MAX,
        };
        (index < records).then_some(index)
    }

    /// Number of whole data records.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub(crate) fn num_records(&self, version: &ProfileVersion) -> usize {
        // `checked_div`: no division-by-zero panic path in the kernel.
        (self.sections.data.len())
            .checked_div(version.layout().record_size)
            .unwrap_or(0)
    }

    /// The `i`-th data record; `i` must be below [`Self::num_records`].
    pub(crate) fn record(&self, version: &ProfileVersion, i: usize) -> DataRecord {
        debug_assert!(i < self.num_records(version));
        DataRecord {
            addr: self.sections.data.start() as usize + i * version.layout().record_size,
            layout: version.layout(),
        }
    }

    /// Zeroes the counters and the bitmap, and restarts the count of every
    /// recorded value from 0 (through the pool's baselines: see
    /// [`super::value`]). Value nodes stay linked to their sites, so the
    /// pool is reused by the same values rather than leaked, and hooks
    /// running at the same time never see a node change sites. Without
    /// baselines nothing is changed.
    pub fn reset(&self) -> Result<(), ResetError> {
        let version = self.version().map_err(ResetError::Version)?;
        if !self.pool.restart_counts() {
            return Err(ResetError::NoBaselines);
        }
        // Counters a bias moves are never written: their zero moves.
        if self.reset_epoch_counts() {
            // SAFETY: the bitmap is live memory of this object (contract
            // of `new`), written only through atomics here.
            unsafe { fill_live(&self.sections.bitmap, 0) };
            return Ok(());
        }
        // SAFETY: counters and bitmap are live memory of this object
        // (contract of `new`), written only through atomics here.
        unsafe {
            fill_live(&self.sections.counters, version.counter_reset_byte());
            fill_live(&self.sections.bitmap, 0);
        }
        Ok(())
    }

    /// The first of the sections that are written at run time (counters,
    /// their spare set and bias, bitmap, site heads, node pool) that does
    /// not lie wholly in `writable` (addresses), by name; `None` if all
    /// do. A module's must be in its writable data: a section that lost
    /// `SHF_WRITE` is laid out with the read-only data, and the first write
    /// to it (the bias when the module is registered, its counter updates
    /// after a switch, a value node) would fault.
    pub fn unwritable_section(&self, writable: &core::ops::Range<u64>) -> Option<&'static str> {
        let s = &self.sections;
        [
            ("counters", &s.counters),
            ("spare counters", &s.spare_counters),
            ("counter bias", &s.counter_bias),
            ("bitmap", &s.bitmap),
            ("value sites", &s.values),
            ("value nodes", &s.vnodes),
        ]
        .into_iter()
        .find(|(_, range)| {
            let start = range.start() as u64;
            let inside = start >= writable.start
                && start
                    .checked_add(range.len() as u64)
                    .is_some_and(|end| end <= writable.end);
            !range.is_empty() && !inside
        })
        .map(|(name, _)| name)
    }

    /// Counts functions, counters, value sites and node usage.
    pub fn stats(&self) -> Stats {
        let mut stats = Stats {
            nodes_used: self.pool.used(),
            nodes_capacity: self.pool.capacity(),
            values_dropped: self.pool.dropped(),
            ..Stats::default()
        };
        if let Ok(version) = self.version() {
            stats.functions = self.num_records(&version);
            // Those of its records: the counters section may hold others'
            // (the image's Rust records, apart, share it).
            for i in 0..stats.functions {
                let record = self.record(&version, i);
                stats.counters += record.num_counters();
                stats.value_sites += record.total_value_sites();
            }
        }
        stats
    }
}

/// Stores `byte` into every byte of `range` with atomic stores.
///
/// # Safety
///
/// As for [`live_chunks`], for `range`.
unsafe fn fill_live(range: &SectionRange, byte: u8) {
    let word = u64::from_ne_bytes([byte; 8]);
    // SAFETY: the caller's contract.
    let chunks = unsafe { live_chunks(range.start(), range.len()) };
    chunks.for_each(|(_, chunk)| match chunk {
        LiveChunk::Word(word_at) => word_at.store(word, Ordering::Relaxed),
        LiveChunk::Byte(byte_at) => byte_at.store(byte, Ordering::Relaxed),
    });
}

/// One access of a [`live_chunks`] walk.
pub(crate) enum LiveChunk<'a> {
    /// 8 bytes, aligned.
    Word(&'a AtomicU64),
    /// One byte.
    Byte(&'a AtomicU8),
}

impl LiveChunk<'_> {
    /// Loads it (relaxed) into the first bytes of `dst`, which has room.
    #[inline(always)]
    pub(crate) fn copy_to(&self, dst: &mut [u8]) {
        match self {
            Self::Word(word) => {
                dst[..8].copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes())
            }
            Self::Byte(byte) => dst[0] = byte.load(Ordering::Relaxed),
        }
    }
}

/// The walk over the `len` bytes at `start`, memory that others may be
/// writing at the same time (counters, bitmap, site heads, node pool),
/// with atomics: single bytes up to the first 8-byte boundary, aligned
/// 8-byte words, then the bytes after the last whole word; each with its
/// offset. Three plain loops when consumed by `for_each` or `all` (which
/// fold each part on its own).
///
/// # Safety
///
/// `len` is 0, or the bytes are mapped and writable, stay so for `'a`, and
/// are accessed only through atomics or by instrumented code (what a race
/// with the latter means: the `Sync` implementation of [`ProfiledObject`]).
#[inline(always)]
pub(crate) unsafe fn live_chunks<'a>(
    start: *mut u8,
    len: usize,
) -> impl Iterator<Item = (usize, LiveChunk<'a>)> {
    let head = ((start as usize).wrapping_neg() % 8).min(len);
    let words = (len - head) / 8;
    let words_end = head + words * 8;
    let byte = move |offset: usize| {
        // SAFETY: one byte inside the range (the caller's contract).
        let byte = unsafe { AtomicU8::from_ptr(start.wrapping_add(offset)) };
        (offset, LiveChunk::Byte(byte))
    };
    let word = move |index: usize| {
        let offset = head + index * 8;
        // SAFETY: 8 bytes inside the range (the caller's contract), aligned:
        // `start + head` is.
        let word = unsafe { AtomicU64::from_ptr(start.wrapping_add(offset).cast()) };
        (offset, LiveChunk::Word(word))
    };
    (0..head)
        .map(byte)
        .chain((0..words).map(word))
        .chain((words_end..len).map(byte))
}

/// A view of one `__llvm_profile_data` record of a [`ProfiledObject`].
#[derive(Clone, Copy)]
pub(crate) struct DataRecord {
    addr: usize,
    layout: &'static Layout,
}

impl DataRecord {
    /// A view of the record at `addr`, which [`ProfiledObject::record_index`]
    /// accepted for an object whose contract holds.
    #[inline(always)]
    pub(crate) fn at(addr: usize, layout: &'static Layout) -> Self {
        Self { addr, layout }
    }

    /// The address of the field at `offset`, inside the record, which lies
    /// inside the data section: no overflow, so no overflow check.
    #[inline(always)]
    fn field(&self, offset: usize) -> usize {
        self.addr.wrapping_add(offset)
    }

    #[inline(always)]
    fn read_u16(&self, offset: usize) -> u16 {
        // SAFETY: `offset` is inside the record (from `Layout`), the record
        // is inside the data section, which nothing writes any more (see
        // the `Sync` implementation of `ProfiledObject`).
        unsafe { (self.field(offset) as *const u16).read() }
    }

    fn read_u32(&self, offset: usize) -> u32 {
        // SAFETY: as in `read_u16`; the field is a `u32`.
        unsafe { (self.field(offset) as *const u32).read() }
    }

    pub(crate) fn read_u64(&self, offset: usize) -> u64 {
        // SAFETY: as in `read_u16`; the field is pointer-sized.
        unsafe { (self.field(offset) as *const u64).read() }
    }

    /// Number of counters.
    pub(crate) fn num_counters(&self) -> usize {
        self.read_u32(self.layout.num_counters_offset) as usize
    }

    /// The address of the first counter: `CounterPtr` is relative to the
    /// record.
    pub(crate) fn counters_address(&self) -> usize {
        self.addr
            .wrapping_add(self.read_u64(self.layout.counter_ptr_offset) as usize)
    }

    /// Whether the record has uniform counters or a wave size: an offload
    /// target's record (0 on a CPU, and absent from older layouts).
    pub(crate) fn has_offload_fields(&self) -> bool {
        self.layout.has_uniform_counters
            && (self.read_u64(self.layout.uniform_counter_ptr_offset) != 0
                || self.read_u16(self.layout.wave_size_offset) != 0)
    }

    /// Number of bitmap bytes (0 for versions without a bitmap).
    pub(crate) fn num_bitmap_bytes(&self) -> usize {
        if self.layout.has_bitmap {
            self.read_u32(self.layout.num_bitmap_bytes_offset) as usize
        } else {
            0
        }
    }

    /// The address of the first bitmap byte, relative like the counters'.
    pub(crate) fn bitmap_address(&self) -> usize {
        if self.layout.has_bitmap {
            self.addr
                .wrapping_add(self.read_u64(self.layout.bitmap_ptr_offset) as usize)
        } else {
            0
        }
    }

    /// Number of value sites of kind `kind`, which is below the layout's
    /// `value_kinds`.
    #[inline(always)]
    pub(crate) fn value_sites(&self, kind: usize) -> usize {
        // A field of the record (`kind` is below 3): no overflow.
        let offset = self
            .layout
            .num_value_sites_offset
            .wrapping_add(kind.wrapping_mul(2));
        self.read_u16(offset) as usize
    }

    /// Number of value sites of all kinds.
    #[inline(always)]
    pub(crate) fn total_value_sites(&self) -> usize {
        // Straight-line over the at most 3 kinds (`Layout`): this is on
        // the hooks' path, which must fold to a few loads in the kernel too
        // (no loop, no overflow check; three `u16` counts cannot overflow).
        let sites = |kind| {
            if kind < self.layout.value_kinds {
                self.value_sites(kind)
            } else {
                0
            }
        };
        sites(0).wrapping_add(sites(1)).wrapping_add(sites(2))
    }

    /// The array of list heads, one per value site of all kinds, or null.
    #[inline(always)]
    pub(crate) fn site_heads(&self) -> *const ValueNodeLink {
        // SAFETY: as in `read_u16`; `Values` is a pointer-sized field.
        unsafe { (self.field(self.layout.values_offset) as *const *const ValueNodeLink).read() }
    }

    /// The list head of value site `site` (counted across kinds).
    #[inline(always)]
    pub(crate) fn site_head(&self, site: usize) -> Option<&ValueNodeLink> {
        let heads = self.site_heads();
        if heads.is_null() || site >= self.total_value_sites() {
            return None;
        }
        // SAFETY: `Values` names one head per value site (contract of
        // `ProfiledObject::new`) and `site` is below their number.
        Some(unsafe { &*heads.add(site) })
    }
}

pub(crate) use super::value::ValueNodeLink;

/// Declares the linker's `__start_`/`__stop_` symbols of the
/// `__llvm_prf_*` sections and `__llvm_profile_raw_version`, and defines
/// `const fn $sections(notes) -> Sections` and `fn $version() -> *const u64`
/// for the image being linked: vmlinux in the kernel, the program on the
/// host. The linker defines every symbol (the kernel's linker script, or
/// the host shell's empty sections), so none is ever null.
#[macro_export]
macro_rules! linked_image {
    ($vis:vis fn $sections:ident, $vis2:vis fn $version:ident) => {
        extern "C" {
            static mut __start___llvm_prf_data: u8;
            static mut __stop___llvm_prf_data: u8;
            static mut __start___llvm_prf_cnts: u8;
            static mut __stop___llvm_prf_cnts: u8;
            static mut __start___llvm_prf_bits: u8;
            static mut __stop___llvm_prf_bits: u8;
            static mut __start___llvm_prf_names: u8;
            static mut __stop___llvm_prf_names: u8;
            static mut __start___llvm_prf_vals: u8;
            static mut __stop___llvm_prf_vals: u8;
            static mut __start___llvm_prf_vnds: u8;
            static mut __stop___llvm_prf_vnds: u8;
            static __llvm_profile_raw_version: u64;
        }

        /// The image's `__llvm_prf_*` sections; `notes` are its build-id
        /// note areas.
        $vis const fn $sections(
            notes: [
                $crate::profile::sections::SectionRange;
                $crate::profile::sections::MAX_NOTE_RANGES
            ],
        ) -> $crate::profile::sections::Sections {
            use $crate::profile::sections::{SectionRange, Sections};
            Sections {
                data: SectionRange::new(
                    &raw mut __start___llvm_prf_data,
                    &raw mut __stop___llvm_prf_data,
                ),
                counters: SectionRange::new(
                    &raw mut __start___llvm_prf_cnts,
                    &raw mut __stop___llvm_prf_cnts,
                ),
                counter_pages: SectionRange::new(
                    &raw mut __start___llvm_prf_cnts,
                    &raw mut __stop___llvm_prf_cnts,
                ),
                spare_counters: SectionRange::EMPTY,
                counter_bias: SectionRange::EMPTY,
                bitmap: SectionRange::new(
                    &raw mut __start___llvm_prf_bits,
                    &raw mut __stop___llvm_prf_bits,
                ),
                names: SectionRange::new(
                    &raw mut __start___llvm_prf_names,
                    &raw mut __stop___llvm_prf_names,
                ),
                values: SectionRange::new(
                    &raw mut __start___llvm_prf_vals,
                    &raw mut __stop___llvm_prf_vals,
                ),
                vnodes: SectionRange::new(
                    &raw mut __start___llvm_prf_vnds,
                    &raw mut __stop___llvm_prf_vnds,
                ),
                notes,
            }
        }

        /// The address of the compiler's version word of the image.
        $vis2 const fn $version() -> *const u64 {
            &raw const __llvm_profile_raw_version
        }
    };
}
