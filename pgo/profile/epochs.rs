// SPDX-License-Identifier: GPL-2.0

//! Counter epochs, for objects built with runtime counter relocation.
//!
//! Such an object's code adds the object's bias to every counter address
//! (`Sections::counter_bias`), so its counters can be moved between two
//! sets: the linked ones (set 0, `Sections::counters`) and a spare set of
//! the same size (set 1, `Sections::spare_counters`), with the bias 0 or
//! the distance between them. A switch points the bias at the other set,
//! waits until no update can still be on its way with the old bias except
//! late ones (the runtime's wait), and closes the set it left, reading it
//! counter by counter. That is not a consistent cut: a late update that
//! lands while the close reads (see below; idle and kthread loops, which
//! RCU Tasks does not wait for, make them too) goes to this epoch if its
//! counter is read after it, else to the next, so one function's counters
//! can be split across two epochs. What holds is that every update is in
//! exactly one epoch and the epochs add up to the profile.
//!
//! An instrumented function loads the bias at its entry, so an activation
//! that sleeps in a call across a switch updates the old set when it
//! wakes: a *late* update, which no wait can prevent. So the runtime never
//! writes a set, and accounts by reads only, per counter:
//!
//! - `taken`: what earlier epochs were given, set 0 plus set 1 as the last
//!   close read them;
//! - `finished`: the last closed epoch's counts, what the two sets gained
//!   between two closes: the set left, read after the wait, and the other
//!   one read just before the bias moved to it (`prepare`), so none of the
//!   new epoch's updates is in it, but every late update it got is;
//! - `zero`: the counts since boot at the last reset: a profile's counts
//!   are set 0 plus set 1 minus `zero`, and a reset writes no counter.
//!
//! Nothing is lost or counted twice: each update is in one set, and the
//! epochs' counts telescope to the sum of both sets at the last close. An
//! update is given to the epoch of the first close that reads it; the
//! late updates each switch finds are counted (`Epochs::late`).

use core::ptr;
use core::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};

use super::sections::{ProfiledObject, SectionRange, Sections};
use super::writer::{LivePages, PageSize};

/// `u64` words of accounting an object needs per counter (`zero`, `taken`,
/// `finished`).
pub const WORDS_PER_COUNTER: usize = 3;

/// The per-object state of the epoch accounting.
///
/// # Invariants
///
/// `words` is null, or (set once, by [`ProfiledObject::attach_epoch_words`]
/// or `ProfiledObject::attach_region`) points to `WORDS_PER_COUNTER`
/// zero-initialised `AtomicU64` per counter of the object, valid as long
/// as the object, that only this module and `persist` access; and then
/// the object has 8-byte counters and a bias word, and its two sets (see
/// `sets`) are 8-byte aligned, at least as long as its counters, and
/// share no byte with each other or any other range of the object.
///
/// `sets`, `base`, `previous`, `sealed` and `region` are null, or were
/// set once, together and before `words`, by
/// `ProfiledObject::attach_region`: two sets of counter-page length, one
/// boot-time count per counter, one previous count per counter (or null)
/// that nothing writes any more, one sealed count per counter that only
/// `persist` writes, and a region header, all valid as long as the object.
pub struct Epochs {
    words: AtomicPtr<AtomicU64>,
    /// Where the two sets are when they are not the object's own
    /// (`counters` and `spare_counters`): in a region that survives a
    /// reboot (`persist`).
    sets: [AtomicPtr<u64>; 2],
    /// Counts that are part of set 0's (null: none): the boot-time counts
    /// of an object whose sets are elsewhere.
    base: AtomicPtr<AtomicU64>,
    /// The counts of the previous boot's kernel (`persist`).
    previous: AtomicPtr<AtomicU64>,
    /// Where this boot's counts are sealed when it ends (`persist`).
    sealed: AtomicPtr<AtomicU64>,
    /// The region's header (`persist`), where the end of the boot is
    /// marked.
    region: AtomicPtr<u8>,
    /// The switch whose [`ProfiledObject::prepare_epoch`] read this object
    /// last.
    prepared: AtomicU64,
    /// The switch whose epoch `finished` holds; 0 before the first.
    finished_epoch: AtomicU64,
    /// Per set, the sum of its counters when it was last closed.
    closed_sums: [AtomicU64; 2],
    /// Late updates: found by the last switch, and since boot.
    late_last: AtomicU64,
    late_total: AtomicU64,
    /// Resets of the zero words begun and ended: odd while one is under
    /// way (a seqcount's sequence; `persist` seals only between two).
    resets: AtomicU64,
}

impl Epochs {
    /// No accounting yet.
    pub const fn new() -> Self {
        // INVARIANT: `words`, `sets`, `base`, `previous`, `sealed` and
        // `region` are null.
        Self {
            words: AtomicPtr::new(ptr::null_mut()),
            sets: [
                AtomicPtr::new(ptr::null_mut()),
                AtomicPtr::new(ptr::null_mut()),
            ],
            base: AtomicPtr::new(ptr::null_mut()),
            previous: AtomicPtr::new(ptr::null_mut()),
            sealed: AtomicPtr::new(ptr::null_mut()),
            region: AtomicPtr::new(ptr::null_mut()),
            prepared: AtomicU64::new(0),
            finished_epoch: AtomicU64::new(0),
            closed_sums: [AtomicU64::new(0), AtomicU64::new(0)],
            late_last: AtomicU64::new(0),
            late_total: AtomicU64::new(0),
            resets: AtomicU64::new(0),
        }
    }
}

impl Default for Epochs {
    fn default() -> Self {
        Self::new()
    }
}

/// Counters a switch reads between two calls of its `pause` (where the
/// kernel may reschedule: vmlinux has hundreds of thousands).
const PAUSE_EVERY: usize = 8192;

/// Which counts of an object a profile carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counts {
    /// The counter memory as it is: set 0 (what a mapping of it shows).
    Memory,
    /// The counts since the last reset: what the object's profile is.
    SinceReset,
    /// The last closed epoch's counts.
    FinishedEpoch,
    /// The counts since reset of the previous boot's kernel, which a
    /// region that survived the reboot kept (`persist`).
    Previous,
}

/// The epoch figures of one object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EpochFigures {
    /// Whether the object takes part in epochs.
    pub enabled: bool,
    /// The set its bias points to.
    pub current_set: usize,
    /// The switch whose epoch its finished counts are (0: none yet).
    pub finished_epoch: u64,
    /// Late updates the last switch found.
    pub late_last: u64,
    /// Late updates all switches found.
    pub late_total: u64,
}

/// Whether `a` and `b` share no byte.
pub(crate) fn disjoint(a: &SectionRange, b: &SectionRange) -> bool {
    let (a_start, b_start) = (a.start() as usize, b.start() as usize);
    a.is_empty()
        || b.is_empty()
        || a_start.saturating_add(a.len()) <= b_start
        || b_start.saturating_add(b.len()) <= a_start
}

/// Whether `ranges` share no byte with each other or with any other range
/// of `sections`.
pub(crate) fn apart_from_the_rest(sections: &Sections, ranges: &[&SectionRange]) -> bool {
    let others = [
        &sections.data,
        &sections.counters,
        &sections.counter_pages,
        &sections.bitmap,
        &sections.names,
        &sections.values,
        &sections.vnodes,
    ];
    ranges.iter().enumerate().all(|(i, m)| {
        ranges[i + 1..].iter().all(|o| disjoint(m, o))
            && others.iter().all(|o| disjoint(m, o))
            && sections.notes.iter().all(|note| disjoint(m, note))
    })
}

/// Whether `sections` has what epochs need of the code: 8-byte aligned
/// counters, a whole number of them, and an aligned bias word.
pub(crate) fn relocatable(object: &ProfiledObject) -> bool {
    let sections = object.sections();
    object.version().is_ok_and(|v| v.counter_size() == 8)
        && sections.counters.len() % 8 == 0
        && (sections.counters.start() as usize) % 8 == 0
        && sections.counter_bias.len() == 8
        && (sections.counter_bias.start() as usize) % 8 == 0
}

/// The accounting words of an object: `zero`, `taken`, `finished`.
struct Words<'a> {
    zero: &'a [AtomicU64],
    taken: &'a [AtomicU64],
    finished: &'a [AtomicU64],
}

impl ProfiledObject {
    /// Its number of 8-byte counters.
    fn counter_words(&self) -> usize {
        self.sections().counters.len() / 8
    }

    /// Gives the object the accounting words of its epochs. False, and
    /// nothing changes, if it has them already or cannot take part: its
    /// counters are not 8 bytes each, it has no aligned bias word, its
    /// spare set is shorter than its counters or not aligned, or the spare
    /// set or the bias shares a byte with any other range of the object
    /// (instrumented code would write there through the bias).
    ///
    /// # Safety
    ///
    /// `words` points to `WORDS_PER_COUNTER` zeroed `AtomicU64` per 8-byte
    /// counter of the object, valid and accessed by nothing else as long as
    /// the object is used.
    pub unsafe fn attach_epoch_words(&self, words: *mut AtomicU64) -> bool {
        let sections = self.sections();
        let fits = sections.spare_counters.len() >= sections.counters.len()
            && (sections.spare_counters.start() as usize) % 8 == 0
            && apart_from_the_rest(
                sections,
                &[&sections.spare_counters, &sections.counter_bias],
            );
        // SAFETY: checked above; the caller's words.
        relocatable(self) && fits && unsafe { self.attach_words_once(words) }
    }

    /// Moves the object's sets into a region (`persist`): `sets`, with
    /// `base`, the boot-time counts read as part of set 0's, `previous`,
    /// the previous boot's counts (or null), `sealed`, where the counts
    /// are sealed at the end, and `words`, the epochs' words; `region` is
    /// its header. False, and nothing changes, if the
    /// object has epoch words or a region already.
    ///
    /// # Safety
    ///
    /// - Each of `sets` is as long as the object's counter pages; `base`,
    ///   `sealed` and a non-null `previous` hold one `u64` per counter; `words`
    ///   holds `WORDS_PER_COUNTER` zeroed `u64` per counter; `region` is
    ///   at least as long as the persist header (`persist::Header`).
    /// - All are valid for good, 8-byte aligned, and share no byte with
    ///   each other or any range of the object; nothing but this object
    ///   accesses them from now on, and nothing writes `previous` any
    ///   more.
    /// - The object is [`relocatable`], and no other function of it runs
    ///   concurrently.
    pub(crate) unsafe fn attach_region(
        &self,
        region: *mut u8,
        sets: [*mut u64; 2],
        base: *mut AtomicU64,
        previous: *mut AtomicU64,
        sealed: *mut AtomicU64,
        words: *mut AtomicU64,
    ) -> bool {
        if self.has_epochs() || !self.epochs.region.load(Ordering::Acquire).is_null() {
            return false;
        }
        // INVARIANT: set once, together, before the words; the caller's
        // memory, as the type invariant asks.
        self.epochs.sets[0].store(sets[0], Ordering::Release);
        self.epochs.sets[1].store(sets[1], Ordering::Release);
        self.epochs.base.store(base, Ordering::Release);
        self.epochs.previous.store(previous, Ordering::Release);
        self.epochs.sealed.store(sealed, Ordering::Release);
        self.epochs.region.store(region, Ordering::Release);
        // SAFETY: the caller's zeroed words, `WORDS_PER_COUNTER` per
        // counter; the sets are as `attach_words_once` asks (the caller's
        // contract).
        unsafe { self.attach_words_once(words) }
    }

    /// The region's header (null: none).
    pub(crate) fn region(&self) -> *mut u8 {
        self.epochs.region.load(Ordering::Acquire)
    }

    /// The boot-time counts of an object whose sets are in a region.
    pub(crate) fn boot_counts(&self) -> Option<&[AtomicU64]> {
        let base = self.epochs.base.load(Ordering::Acquire);
        if base.is_null() {
            return None;
        }
        // SAFETY: one count per counter, valid as long as the object
        // (type invariant of `Epochs`).
        Some(unsafe { core::slice::from_raw_parts(base, self.counter_words()) })
    }

    /// The previous boot's counts, if a region kept them.
    pub(crate) fn previous_counts(&self) -> Option<&[AtomicU64]> {
        let previous = self.epochs.previous.load(Ordering::Acquire);
        if previous.is_null() {
            return None;
        }
        // SAFETY: one count per counter, valid as long as the object and
        // written no more (type invariant of `Epochs`).
        Some(unsafe { core::slice::from_raw_parts(previous, self.counter_words()) })
    }

    /// Where the counts are sealed at the end of the boot, if the object
    /// has a region.
    pub(crate) fn sealed_counts(&self) -> Option<&[AtomicU64]> {
        let sealed = self.epochs.sealed.load(Ordering::Acquire);
        if sealed.is_null() {
            return None;
        }
        // SAFETY: one count per counter, valid as long as the object (type
        // invariant of `Epochs`).
        Some(unsafe { core::slice::from_raw_parts(sealed, self.counter_words()) })
    }

    /// Attaches `words` unless the object has some already.
    ///
    /// # Safety
    ///
    /// As for [`Self::attach_epoch_words`], and the object has what
    /// epochs need: it is [`relocatable`], and its two sets ([`Self::set_start`])
    /// are 8-byte aligned, as long as its counters, and share no byte
    /// with each other or any other range of the object.
    pub(crate) unsafe fn attach_words_once(&self, words: *mut AtomicU64) -> bool {
        // INVARIANT: set once; the caller's words, and checks.
        self.epochs
            .words
            .compare_exchange(ptr::null_mut(), words, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether the object takes part in epochs.
    pub fn has_epochs(&self) -> bool {
        !self.epochs.words.load(Ordering::Acquire).is_null()
    }

    fn words(&self) -> Option<Words<'_>> {
        let words = self.epochs.words.load(Ordering::Acquire);
        if words.is_null() {
            return None;
        }
        let n = self.counter_words();
        // SAFETY: `WORDS_PER_COUNTER * n` atomics, valid as long as `self`
        // (type invariant of `Epochs`).
        let all = unsafe { core::slice::from_raw_parts(words, WORDS_PER_COUNTER * n) };
        let (zero, rest) = all.split_at(n);
        let (taken, finished) = rest.split_at(n);
        Some(Words {
            zero,
            taken,
            finished,
        })
    }

    /// The bias word.
    fn bias(&self) -> &AtomicU64 {
        // SAFETY: only called with words attached: an aligned bias word of
        // the object (type invariant of `Epochs`), which its code reads
        // and only this module writes.
        unsafe { AtomicU64::from_ptr(self.sections().counter_bias.start().cast()) }
    }

    /// The first counter of `set` (0 or 1).
    pub(crate) fn set_start(&self, set: usize) -> *mut u64 {
        let moved = self.epochs.sets[set & 1].load(Ordering::Acquire);
        if !moved.is_null() {
            return moved;
        }
        let sections = self.sections();
        if set & 1 == 0 {
            sections.counters.start().cast()
        } else {
            sections.spare_counters.start().cast()
        }
    }

    /// The memory of `set`: its counter pages.
    fn set_pages(&self, set: usize) -> SectionRange {
        let sections = self.sections();
        if !self.epochs.sets[set & 1].load(Ordering::Acquire).is_null() {
            SectionRange::from_len(self.set_start(set).cast(), sections.counter_pages.len())
        } else if set & 1 == 0 {
            sections.counter_pages
        } else {
            sections.spare_counters
        }
    }

    /// The bias that points set 0's counter addresses at `set`.
    pub(crate) fn bias_of(&self, set: usize) -> u64 {
        (self.set_start(set) as u64).wrapping_sub(self.sections().counters.start() as u64)
    }

    /// Counter `k` of `set`'s memory; only with words attached.
    fn set_counter(&self, set: usize, k: usize) -> &AtomicU64 {
        // Both sets hold every counter, 8-byte aligned (checked by
        // `attach_epoch_words` or `persist_in`), and counter memory is
        // written only by instrumented code and atomics (contract of
        // `ProfiledObject::new`, and of `persist_in` for sets elsewhere).
        // SAFETY: called only with words attached, for `k` below the
        // number of counters: a word of a set, as just said.
        unsafe { AtomicU64::from_ptr(self.set_start(set).add(k)) }
    }

    /// Counter `k` of `set`, with the boot-time counts for set 0 where
    /// they are apart (`base`); only with words attached.
    fn read_set(&self, set: usize, k: usize) -> u64 {
        let count = self.set_counter(set, k).load(Ordering::Relaxed);
        match self.boot_counts().and_then(|boot| boot.get(k)) {
            Some(boot) if set & 1 == 0 => count.wrapping_add(boot.load(Ordering::Relaxed)),
            _ => count,
        }
    }

    /// The set the bias points to: 0 without epochs, or when the bias is
    /// neither set's.
    pub fn current_set(&self) -> usize {
        if !self.has_epochs() {
            return 0;
        }
        let bias = self.bias().load(Ordering::Relaxed);
        usize::from(bias != self.bias_of(0) && bias == self.bias_of(1))
    }

    /// Points the bias at `set` (0 or 1); nothing without epochs. The
    /// object's code uses it from its next load of the bias on.
    pub fn point_bias_at(&self, set: usize) {
        if self.has_epochs() {
            self.bias().store(self.bias_of(set & 1), Ordering::Release);
        }
    }

    /// The first half of switch `epoch`, before the bias moves to set
    /// `next`; one switch at a time (callers serialize them): reads that
    /// set, counting the late updates it got since it was last closed.
    ///
    /// `pause` is called every few thousand counters.
    ///
    /// The sets are the caller's (the runtime's, for every object), not
    /// read from the bias: the accounting holds wherever the bias points,
    /// as long as a switch prepares one set and closes the other.
    pub fn prepare_epoch(&self, epoch: u64, next: usize, mut pause: impl FnMut()) {
        let Some(words) = self.words() else {
            return;
        };
        let next = next & 1;
        // A seqlock's write side: readers of `finished` see `prepared` move
        // past `finished_epoch` before any word changes.
        self.epochs.prepared.store(epoch, Ordering::Relaxed);
        fence(Ordering::Release);
        let mut sum = 0u64;
        for (k, finished) in words.finished.iter().enumerate() {
            if k % PAUSE_EVERY == PAUSE_EVERY - 1 {
                pause();
            }
            let count = self.read_set(next, k);
            finished.store(count, Ordering::Relaxed);
            sum = sum.wrapping_add(count);
        }
        let late = sum.wrapping_sub(self.epochs.closed_sums[next].load(Ordering::Relaxed));
        self.epochs.late_last.store(late, Ordering::Relaxed);
        self.epochs.late_total.fetch_add(late, Ordering::Relaxed);
    }

    /// The second half of switch `epoch`, after the bias moved away from
    /// set `left` and the wait: closes that set, so the finished counts
    /// are the epoch's. False, and nothing changes, for an object that
    /// switch did not prepare (it came in between) or closed already.
    pub fn close_epoch(&self, epoch: u64, left: usize, mut pause: impl FnMut()) -> bool {
        let Some(words) = self.words() else {
            return false;
        };
        if self.epochs.prepared.load(Ordering::Relaxed) != epoch
            || self.epochs.finished_epoch.load(Ordering::Relaxed) == epoch
        {
            return false;
        }
        let left = left & 1;
        let mut sum = 0u64;
        for (k, (taken, finished)) in words.taken.iter().zip(words.finished).enumerate() {
            if k % PAUSE_EVERY == PAUSE_EVERY - 1 {
                pause();
            }
            let count = self.read_set(left, k);
            sum = sum.wrapping_add(count);
            let total = count.wrapping_add(finished.load(Ordering::Relaxed));
            finished.store(
                total.wrapping_sub(taken.load(Ordering::Relaxed)),
                Ordering::Relaxed,
            );
            taken.store(total, Ordering::Relaxed);
        }
        self.epochs.closed_sums[left].store(sum, Ordering::Relaxed);
        self.epochs.finished_epoch.store(epoch, Ordering::Release);
        true
    }

    /// Makes the counts since boot the new zero, writing no counter. False
    /// without epochs.
    pub(crate) fn reset_epoch_counts(&self) -> bool {
        let Some(words) = self.words() else {
            return false;
        };
        // Odd while the words change (callers are serialized by the entry's
        // writer); pairs with `resets_settled`.
        self.epochs.resets.fetch_add(1, Ordering::AcqRel);
        for (k, zero) in words.zero.iter().enumerate() {
            zero.store(self.since_boot(k), Ordering::Relaxed);
        }
        self.epochs.resets.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// The resets' sequence, if no reset is under way: read before and
    /// after reading counts since reset, which no reset tore if both are
    /// the same `Some`.
    pub(crate) fn resets_settled(&self) -> Option<u64> {
        let resets = self.epochs.resets.load(Ordering::Acquire);
        (resets % 2 == 0).then_some(resets)
    }

    fn since_boot(&self, k: usize) -> u64 {
        self.read_set(0, k).wrapping_add(self.read_set(1, k))
    }

    /// Counter `k` (below the object's number of counters) as `counts`
    /// has it, where that is not simply its counter memory: `None` for
    /// [`Counts::Memory`] and without epochs.
    pub(crate) fn computed_count(&self, counts: Counts, k: usize) -> Option<u64> {
        if counts == Counts::Previous {
            return self.previous_count(k);
        }
        let words = self.words()?;
        // Bounds first: `since_boot` indexes the sets unchecked.
        words.zero.get(k)?;
        match counts {
            Counts::Memory | Counts::Previous => None,
            Counts::SinceReset => Some(
                self.since_boot(k)
                    .wrapping_sub(words.zero[k].load(Ordering::Relaxed)),
            ),
            Counts::FinishedEpoch => Some(words.finished[k].load(Ordering::Relaxed)),
        }
    }

    /// Whether `counts` of this object are not simply its counter memory.
    pub(crate) fn counts_computed(&self, counts: Counts) -> bool {
        match counts {
            Counts::Memory => false,
            Counts::Previous => self.has_previous(),
            Counts::SinceReset | Counts::FinishedEpoch => self.has_epochs(),
        }
    }

    /// The epoch whose counts `finished` holds, when no switch is
    /// changing them: a seqlock's read side, with
    /// [`Self::finished_epoch_unchanged`] after the reads.
    pub fn stable_finished_epoch(&self) -> Option<u64> {
        let finished = self.epochs.finished_epoch.load(Ordering::Acquire);
        let prepared = self.epochs.prepared.load(Ordering::Relaxed);
        (prepared == finished && finished != 0).then_some(finished)
    }

    /// Whether `finished`, read since [`Self::stable_finished_epoch`] gave
    /// `epoch`, still holds that epoch's counts.
    pub fn finished_epoch_unchanged(&self, epoch: u64) -> bool {
        fence(Ordering::Acquire);
        self.epochs.prepared.load(Ordering::Relaxed) == epoch
    }

    /// `pages`, which [`write_live`] laid out for this object's counters
    /// with `page_size`, moved to the set the bias points to now: `None`
    /// unless they hold nothing but that set's counters and padding, and
    /// the sets are a whole number of pages apart.
    ///
    /// [`write_live`]: super::writer::write_live
    pub fn pages_of_current_set(&self, pages: LivePages, page_size: PageSize) -> Option<LivePages> {
        let sections = self.sections();
        let set = self.current_set();
        let (shift, own) = (self.bias_of(set) as usize, self.set_pages(set));
        let moved = LivePages {
            memory: pages.memory.wrapping_add(shift),
            ..pages
        };
        let own = Sections {
            counter_pages: own,
            ..*sections
        };
        (page_size.aligned(shift) && moved.only_counters(&own)).then_some(moved)
    }

    /// Whether the page of `page_size` bytes at `address` is wholly
    /// counter memory of this object, of either set, with the padding
    /// after it that no other data shares: the only memory a live file
    /// may map. The runtime asks it of each page it takes for a live file,
    /// whatever the layout computed.
    pub fn is_counter_page(&self, address: usize, page_size: PageSize) -> bool {
        let page = LivePages {
            file_offset: 0,
            memory: address,
            len: page_size.bytes(),
        };
        page_size.aligned(address)
            && (0..2).any(|set| {
                page.only_counters(&Sections {
                    counter_pages: self.set_pages(set),
                    ..*self.sections()
                })
            })
    }

    /// The epoch figures.
    pub fn epoch_figures(&self) -> EpochFigures {
        EpochFigures {
            enabled: self.has_epochs(),
            current_set: self.current_set(),
            finished_epoch: self.epochs.finished_epoch.load(Ordering::Acquire),
            late_last: self.epochs.late_last.load(Ordering::Relaxed),
            late_total: self.epochs.late_total.load(Ordering::Relaxed),
        }
    }
}
