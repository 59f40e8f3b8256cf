// SPDX-License-Identifier: GPL-2.0

//! Counters that survive a warm reboot, for an object built with runtime
//! counter relocation (vmlinux): its two sets of counters (`epochs`) are
//! moved into a region of memory that the next boot keeps (a
//! `reserve_mem=` region), so that after a panic, a hang or a reset the
//! next kernel serves what the counters held: the path into the crash.
//!
//! The region, in pages of the header's `page_size`:
//!
//! - the header (one page);
//! - `boot`: the counts of the boot before the move (the image's
//!   counters), part of set 0's from then on (`Epochs::base`);
//! - set 0 and set 1, each as long as the counter pages, so that live
//!   files map them as they map the object's own;
//! - the epoch words (`zero`, `taken`, `finished`; `epochs`);
//! - `previous`: the previous boot's counts since its last reset, which
//!   [`ProfiledObject::persist_in`] takes from that boot's areas before
//!   it takes them over;
//! - `sealed`: the counts since the last reset as they were when the boot
//!   ended through a panic or a reboot ([`ProfiledObject::mark_end`]),
//!   with their checksum, the header's `seal`.
//!
//! Only a region whose header is whole (magic, format, checksum) and
//! describes this object's layout is read; its profile is served only if
//! its build id is this object's, since its counters are read against
//! this object's records and names, and, if the boot sealed its counts,
//! only if they match their seal. A boot that ended without a notifier (a
//! hang, a reset, kdump) could not seal them: its counts are served as the
//! sets hold them, unchecked. Checksums find damage, not forgery: anything
//! that can write the region (another kernel, a device) can write a whole
//! header and a matching seal.

use core::ptr;
use core::sync::atomic::{AtomicU64, Ordering};

use super::epochs::{apart_from_the_rest, relocatable, Counts, WORDS_PER_COUNTER};
use super::sections::{ProfiledObject, SectionRange};
use super::writer::first_build_id;

/// The longest build id kept (a SHA-1's is 20 bytes).
pub const MAX_BUILD_ID: usize = 64;

/// What a region's header starts with.
const MAGIC: [u8; 8] = *b"KPGOPRST";
/// The layout of header and region this runtime writes.
const FORMAT: u64 = 2;

/// The region's first page.
#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    magic: [u8; 8],
    format: u64,
    /// FNV-1a of the header with `checksum`, `end`, `started`, `ended`
    /// and `seal` 0.
    checksum: u64,
    /// How the boot that wrote it ended ([`End`]); set last.
    end: u64,
    /// When the runtime of that boot started, and when it ended (0: not
    /// known), in seconds since 1970 (UTC).
    started: u64,
    ended: u64,
    /// Boots in a row that served the one before, plus 1.
    generation: u64,
    page_size: u64,
    counters_size: u64,
    counter_pages_size: u64,
    data_size: u64,
    names_size: u64,
    version_word: u64,
    build_id_len: u64,
    build_id: [u8; MAX_BUILD_ID],
    /// The checksum of the sealed counts, with the header's checksum, the
    /// end and when; 0: not sealed. Set after the end.
    seal: u64,
}

/// How a boot ended, as its region says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Nothing marked it: it was running when the machine reset (a hang,
    /// a watchdog, a triple fault, a reset button), or is still running.
    Running,
    /// It panicked (the runtime's panic notifier).
    Panic,
    /// It rebooted, halted or powered off cleanly.
    Reboot,
}

impl End {
    fn word(self) -> u64 {
        match self {
            End::Running => 1,
            End::Panic => 2,
            End::Reboot => 3,
        }
    }

    fn of(word: u64) -> Option<Self> {
        match word {
            1 => Some(End::Running),
            2 => Some(End::Panic),
            3 => Some(End::Reboot),
            _ => None,
        }
    }

    /// Its name in `stats` and the log.
    pub fn name(self) -> &'static str {
        match self {
            End::Running => "running",
            End::Panic => "panic",
            End::Reboot => "reboot",
        }
    }
}

/// A build id, as a header keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildId {
    bytes: [u8; MAX_BUILD_ID],
    len: usize,
}

impl BuildId {
    /// The first [`MAX_BUILD_ID`] bytes of `id`.
    pub fn of(id: &[u8]) -> Self {
        let len = id.len().min(MAX_BUILD_ID);
        let mut bytes = [0u8; MAX_BUILD_ID];
        bytes[..len].copy_from_slice(&id[..len]);
        Self { bytes, len }
    }

    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl core::fmt::Display for BuildId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.as_bytes()
            .iter()
            .try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

/// A time in seconds since 1970, shown as UTC (`2026-12-04 19:35:42`);
/// 0 is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallTime(pub u64);

impl core::fmt::Display for WallTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0 == 0 {
            return f.write_str("unknown");
        }
        let (days, seconds) = (self.0 / 86_400, self.0 % 86_400);
        // Days to a civil date (Howard Hinnant's algorithm), from
        // 0000-03-01, in 400-year eras of 146,097 days.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z % 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + u64::from(month <= 2);
        write!(
            f,
            "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    }
}

/// What a region held of the boot before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Previous {
    /// No profile: its first page is not a whole header of this layout
    /// (memory after a cold boot, another user's, another format).
    None,
    /// The profile of another build (its id): not served, since its
    /// counters do not match this object's records.
    OtherBuild(BuildId),
    /// The profile of this build, whose counts do not match their seal:
    /// not served.
    Damaged,
    /// The profile of this build, served.
    Served {
        /// How that boot ended.
        end: End,
        /// Whether its counts were sealed at its end and match the seal
        /// (false: they are the sets' as a hang or reset left them,
        /// unchecked).
        sealed: bool,
        /// Its generation: boots in a row that served the one before,
        /// plus 1.
        generation: u64,
        /// When its runtime started.
        started: WallTime,
        /// When it ended, if it was marked.
        ended: WallTime,
    },
}

/// Why an object's counters were not moved into a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistError {
    /// The region is shorter than the object needs.
    TooSmall {
        /// The bytes it needs.
        needed: usize,
    },
    /// The object's code does not relocate its counters, or its counters
    /// are not 8-byte words.
    NotRelocatable,
    /// The object has no build id to check a profile against.
    NoBuildId,
    /// The region is not page-aligned, overlaps the object, or the page
    /// size is not a power of two as large as the header.
    BadRegion,
    /// The object's counters were moved or given epochs already.
    AlreadyAttached,
}

impl core::fmt::Display for PersistError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PersistError::TooSmall { needed } => {
                write!(f, "the region is too small: it needs {needed} bytes")
            }
            PersistError::NotRelocatable => {
                f.write_str("the counters are not built for relocation")
            }
            PersistError::NoBuildId => f.write_str("the kernel has no build id"),
            PersistError::BadRegion => {
                f.write_str("the region is not page-aligned or overlaps the kernel")
            }
            PersistError::AlreadyAttached => f.write_str("the counters were moved already"),
        }
    }
}

/// Where each area of a region is, in bytes from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLayout {
    /// The boot-time counts.
    pub boot: usize,
    /// Set 0 and set 1, each of counter-page length.
    pub sets: [usize; 2],
    /// The epochs' words.
    pub words: usize,
    /// The previous boot's counts.
    pub previous: usize,
    /// The counts sealed at the end of the boot.
    pub sealed: usize,
    /// The region's length.
    pub len: usize,
}

impl RegionLayout {
    /// The layout for `counters_size` bytes of counters on
    /// `counter_pages_size` bytes of pages, with pages of `page_size`
    /// (a power of two); `None` if it overflows.
    pub fn new(counters_size: usize, counter_pages_size: usize, page_size: usize) -> Option<Self> {
        let pages = |bytes: usize| bytes.checked_next_multiple_of(page_size);
        let set = pages(counter_pages_size.max(counters_size))?;
        let counts = pages(counters_size)?;
        let words = pages(counters_size.checked_mul(WORDS_PER_COUNTER)?)?;
        let boot = page_size;
        let set0 = boot.checked_add(counts)?;
        let set1 = set0.checked_add(set)?;
        let words_at = set1.checked_add(set)?;
        let previous = words_at.checked_add(words)?;
        let sealed = previous.checked_add(counts)?;
        Some(Self {
            boot,
            sets: [set0, set1],
            words: words_at,
            previous,
            sealed,
            len: sealed.checked_add(counts)?,
        })
    }

    /// The layout of `object`'s counters.
    pub fn of(object: &ProfiledObject, page_size: usize) -> Option<Self> {
        let sections = object.sections();
        Self::new(
            sections.counters.len(),
            sections.counter_pages.len(),
            page_size,
        )
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
    })
}

/// The seal of `counts`, for the header whose checksum is `checksum`, of a
/// boot that started at `times[0]` and ended with `end` (a word of [`End`])
/// at `times[1]`: over 64-bit words, a multiply and a shift per counter
/// (from a panic too), never 0. The shift carries each word's high bits
/// down, so that damage to them is not confined to the seal's high bits,
/// as it is with FNV-1a over words (two flips of bit 63 would cancel).
fn seal_of(checksum: u64, times: [u64; 2], end: u64, counts: impl Iterator<Item = u64>) -> u64 {
    let seal = [checksum, times[0], times[1], end]
        .into_iter()
        .chain(counts)
        .fold(FNV_OFFSET, |hash, word| {
            let hash = (hash ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            hash ^ (hash >> 29)
        });
    seal.max(1)
}

impl Header {
    /// The header `object`'s counters get, of `generation`.
    fn of(object: &ProfiledObject, id: &[u8], page_size: usize, generation: u64) -> Self {
        let sections = object.sections();
        let version_word = object.version_word();
        let version_word = if version_word.is_null() {
            0
        } else {
            // SAFETY: a non-null version word is readable (contract of
            // `ProfiledObject::new`).
            unsafe { version_word.read_volatile() }
        };
        let mut header = Self {
            magic: MAGIC,
            format: FORMAT,
            checksum: 0,
            end: 0,
            started: 0,
            ended: 0,
            generation,
            page_size: page_size as u64,
            counters_size: sections.counters.len() as u64,
            counter_pages_size: sections.counter_pages.len() as u64,
            data_size: sections.data.len() as u64,
            names_size: sections.names.len() as u64,
            version_word,
            build_id_len: id.len().min(MAX_BUILD_ID) as u64,
            build_id: BuildId::of(id).bytes,
            seal: 0,
        };
        header.checksum = header.sum();
        header
    }

    fn sum(&self) -> u64 {
        let unsummed = Self {
            checksum: 0,
            end: 0,
            started: 0,
            ended: 0,
            seal: 0,
            ..*self
        };
        // SAFETY: `Header` is `repr(C)` of `u64`s and byte arrays whose
        // lengths are multiples of 8: no padding, every byte initialised.
        let bytes = unsafe {
            core::slice::from_raw_parts(
                core::ptr::from_ref(&unsummed).cast::<u8>(),
                core::mem::size_of::<Self>(),
            )
        };
        fnv1a(bytes)
    }

    /// Whether it is a whole header of this format.
    fn whole(&self) -> bool {
        self.magic == MAGIC
            && self.format == FORMAT
            && self.checksum == self.sum()
            && End::of(self.end).is_some()
            && self.build_id_len as usize <= MAX_BUILD_ID
    }

    /// Whether it describes `expected`'s layout.
    fn same_layout(&self, expected: &Self) -> bool {
        (
            self.page_size,
            self.counters_size,
            self.counter_pages_size,
            self.data_size,
            self.names_size,
            self.version_word,
        ) == (
            expected.page_size,
            expected.counters_size,
            expected.counter_pages_size,
            expected.data_size,
            expected.names_size,
            expected.version_word,
        )
    }

    fn build_id(&self) -> BuildId {
        BuildId::of(&self.build_id[..(self.build_id_len as usize).min(MAX_BUILD_ID)])
    }
}

/// The persistence figures of an object, for `stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PersistFigures {
    /// Whether its counters are in a region.
    pub persisted: bool,
    /// Whether a previous boot's profile is served.
    pub previous: bool,
    /// Updates of the image's counters since [`ProfiledObject::settle_boot_counts`]
    /// (instrumented code that loaded the bias before the move and ran
    /// after it): 0 but for a defect, since they are in no profile.
    pub boot_late: u64,
}

impl ProfiledObject {
    /// Moves the object's two sets of counters into `region`, after
    /// reading what the previous boot left there, and points its bias at
    /// set 0 there; `page_size` is the size of the pages live files map.
    /// `flush(start, len)` writes bytes of the region back to memory from
    /// every cache, so that what a reset keeps is in the order written.
    /// Returns what the region held, and the bytes it uses.
    ///
    /// The counts so far (the image's) become the boot-time part of set 0
    /// (`boot`). The previous boot's profile is kept (in `previous`) if
    /// its header is whole and of this layout and build; then the header
    /// is cleared and flushed, every other area written and flushed, and
    /// the header rewritten and flushed. On an error, nothing was
    /// written.
    ///
    /// # Safety
    ///
    /// `region` is `len` bytes of memory valid for good, that nothing
    /// else accesses but through this object from now on; no
    /// instrumented code of the object runs concurrently and no other
    /// function of the object was called yet, so that the counts are
    /// exact (the kernel's boot CPU, before any other runs or interrupts
    /// are enabled).
    pub unsafe fn persist_in(
        &self,
        region: *mut u8,
        len: usize,
        page_size: usize,
        mut flush: impl FnMut(*mut u8, usize),
    ) -> Result<(Previous, usize), PersistError> {
        if !relocatable(self) {
            return Err(PersistError::NotRelocatable);
        }
        if self.has_epochs() || !self.region().is_null() {
            return Err(PersistError::AlreadyAttached);
        }
        let id = first_build_id(self).ok_or(PersistError::NoBuildId)?;
        let sections = self.sections();
        // The header fits in the first page, and every area is aligned.
        if !page_size.is_power_of_two()
            || page_size < core::mem::size_of::<Header>()
            || (region as usize) % page_size != 0
            || !apart_from_the_rest(
                sections,
                &[
                    &SectionRange::from_len(region, len),
                    &sections.counter_bias,
                    &sections.spare_counters,
                ],
            )
        {
            return Err(PersistError::BadRegion);
        }
        let layout = RegionLayout::of(self, page_size).ok_or(PersistError::BadRegion)?;
        if len < layout.len {
            return Err(PersistError::TooSmall { needed: layout.len });
        }
        let n = sections.counters.len() / 8;
        let area = |offset: usize| region.wrapping_add(offset).cast::<u64>();
        // SAFETY: the region's first page (the caller's, page-aligned, as long as
        // a header); any bytes are a `Header` (integers and byte arrays).
        let old = unsafe { ptr::read(region.cast::<Header>()) };
        let fresh = Header::of(self, id, page_size, 1);
        let previous = if !old.whole() {
            Previous::None
        } else if old.build_id().as_bytes() != id {
            Previous::OtherBuild(old.build_id())
        } else if !old.same_layout(&fresh) {
            // The same build with another layout: not this runtime's.
            Previous::None
        } else if old.seal != 0
            && old.seal
                != seal_of(
                    old.checksum,
                    [old.started, old.ended],
                    old.end,
                    // SAFETY: the sealed area holds `n` words (`layout`),
                    // inside the region, which nothing writes meanwhile.
                    unsafe { core::slice::from_raw_parts(area(layout.sealed), n) }
                        .iter()
                        .copied(),
                )
        {
            Previous::Damaged
        } else {
            for k in 0..n {
                // SAFETY: every area holds `n` words at least (`layout`),
                // inside the region.
                unsafe {
                    *area(layout.previous).add(k) = if old.seal != 0 {
                        *area(layout.sealed).add(k)
                    } else {
                        // Unsealed: the sets as the boot left them, less
                        // its `zero` word, the counts at its last reset.
                        [
                            area(layout.boot),
                            area(layout.sets[0]),
                            area(layout.sets[1]),
                        ]
                        .iter()
                        .fold(0u64, |sum, at| sum.wrapping_add(*at.add(k)))
                        .wrapping_sub(*area(layout.words).add(k))
                    };
                }
            }
            Previous::Served {
                end: End::of(old.end).unwrap_or(End::Running),
                sealed: old.seal != 0,
                generation: old.generation,
                started: WallTime(old.started),
                ended: WallTime(old.ended),
            }
        };
        let served = matches!(previous, Previous::Served { .. });
        let generation = match previous {
            Previous::Served { generation, .. } => generation.wrapping_add(1),
            _ => 1,
        };
        // The header stops being whole first, in memory too, so that a
        // reset in between finds no profile.
        // SAFETY: all inside the region, the caller's.
        unsafe {
            ptr::write_bytes(region, 0, page_size);
            flush(region, page_size);
            ptr::write_bytes(region.add(layout.boot), 0, layout.previous - layout.boot);
            if !served {
                ptr::write_bytes(region.add(layout.previous), 0, layout.len - layout.previous);
            }
            ptr::copy_nonoverlapping(
                sections.counters.start().cast::<u64>(),
                area(layout.boot),
                n,
            );
            // The areas reach memory before the header that makes them
            // a profile.
            flush(region.add(page_size), layout.len - page_size);
            let header = Header {
                end: End::Running.word(),
                ..Header::of(self, id, page_size, generation)
            };
            ptr::write(region.cast::<Header>(), header);
            flush(region, page_size);
        }
        // The areas are page-aligned, apart from each other (`layout`) and
        // from every range of the object (checked above), of the lengths
        // `RegionLayout` gives: the sets of counter-page length, one word
        // per counter for the boot-time, previous and sealed counts, three
        // for the words, zeroed above; the header page is as long as a
        // `Header`.
        // SAFETY: as just said, areas of the region, the caller's for good;
        // `previous` is written no more.
        let attached = unsafe {
            self.attach_region(
                region,
                [area(layout.sets[0]), area(layout.sets[1])],
                area(layout.boot).cast(),
                if served {
                    area(layout.previous).cast()
                } else {
                    ptr::null_mut()
                },
                area(layout.sealed).cast(),
                area(layout.words).cast(),
            )
        };
        debug_assert!(attached);
        self.point_bias_at(0);
        Ok((previous, layout.len))
    }

    /// The header's word at `offset`, if the object has a region.
    fn header_word(&self, offset: usize) -> Option<&AtomicU64> {
        let region = self.region();
        if region.is_null() {
            return None;
        }
        // The region is page-aligned and `Header` is `repr(C)` of `u64`s and
        // 8-byte multiples.
        // SAFETY: a word of the region's header, valid for good (type
        // invariant of `Epochs`) and 8-byte aligned (as just said).
        Some(unsafe { AtomicU64::from_ptr(region.add(offset).cast()) })
    }

    /// Copies the image's counters into the boot-time counts again, once
    /// no code that loaded the bias before [`Self::persist_in`] can run
    /// any more (the kernel's: the rest of `start_kernel()`, up to
    /// `rest_init()`), so that those updates are in every profile too;
    /// and records `now` (seconds since 1970) as when the runtime
    /// started. Nothing without a region. Before any reader of the
    /// object.
    pub fn settle_boot_counts(&self, now: u64) {
        let Some(boot) = self.boot_counts() else {
            return;
        };
        for (k, count) in boot.iter().enumerate() {
            count.store(self.image_count(k), Ordering::Relaxed);
        }
        if let Some(started) = self.header_word(core::mem::offset_of!(Header, started)) {
            started.store(now, Ordering::Relaxed);
        }
    }

    /// Counter `k` of the image (below the number of counters).
    fn image_count(&self, k: usize) -> u64 {
        // The counters are written only by instrumented code and atomics
        // (contract of `ProfiledObject::new`).
        // SAFETY: the image's counters are 8-byte aligned words
        // (`relocatable`), and `k` is below their number.
        unsafe {
            AtomicU64::from_ptr(self.sections().counters.start().cast::<u64>().add(k))
                .load(Ordering::Relaxed)
        }
    }

    /// Marks in the region how this boot ends, and when (`now`, seconds
    /// since 1970), and seals its counts since the last reset; nothing
    /// without a region. Takes no lock and allocates nothing: from a panic
    /// notifier too. Updates after it (the rest of the panic) are in no
    /// profile the next boot serves. A machine reset before it is done
    /// leaves the region unsealed, or with a seal that does not match
    /// (refused); a counter reset under way or run meanwhile (a reboot
    /// while `pgo/reset` is written) leaves it unsealed.
    pub fn mark_end(&self, end: End, now: u64) {
        let word = |field| self.header_word(field);
        let (Some(seal), Some(checksum), Some(end_word), Some(sealed)) = (
            word(core::mem::offset_of!(Header, seal)),
            word(core::mem::offset_of!(Header, checksum)),
            word(core::mem::offset_of!(Header, end)),
            self.sealed_counts(),
        ) else {
            return;
        };
        let (Some(started), Some(ended)) = (
            word(core::mem::offset_of!(Header, started)),
            word(core::mem::offset_of!(Header, ended)),
        ) else {
            return;
        };
        // Unsealed while the counts change (a second end, a panic during a
        // reboot, seals them again).
        seal.store(0, Ordering::Relaxed);
        let resets = self.resets_settled();
        for (k, count) in sealed.iter().enumerate() {
            let since_reset = self.computed_count(Counts::SinceReset, k).unwrap_or(0);
            count.store(since_reset, Ordering::Relaxed);
        }
        ended.store(now, Ordering::Relaxed);
        end_word.store(end.word(), Ordering::Relaxed);
        // Counts from both sides of a reset are no profile: unsealed.
        if resets.is_none() || self.resets_settled() != resets {
            return;
        }
        let times = [started.load(Ordering::Relaxed), now];
        let counts = sealed.iter().map(|count| count.load(Ordering::Relaxed));
        seal.store(
            seal_of(checksum.load(Ordering::Relaxed), times, end.word(), counts),
            Ordering::Relaxed,
        );
    }

    /// Whether the previous boot's profile is served.
    pub fn has_previous(&self) -> bool {
        self.previous_counts().is_some()
    }

    /// The previous boot's count `k` since its last reset.
    pub(crate) fn previous_count(&self, k: usize) -> Option<u64> {
        Some(self.previous_counts()?.get(k)?.load(Ordering::Relaxed))
    }

    /// The persistence figures.
    pub fn persist_figures(&self) -> PersistFigures {
        let boot = self.boot_counts();
        let boot_late = boot.map_or(0, |boot| {
            boot.iter().enumerate().fold(0u64, |late, (k, count)| {
                late.wrapping_add(
                    self.image_count(k)
                        .wrapping_sub(count.load(Ordering::Relaxed)),
                )
            })
        });
        PersistFigures {
            persisted: boot.is_some(),
            previous: self.has_previous(),
            boot_late,
        }
    }
}
