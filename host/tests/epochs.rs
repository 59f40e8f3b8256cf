// SPDX-License-Identifier: GPL-2.0

//! Counter epochs (`profile::epochs`): an object whose code adds a bias to
//! every counter address, moved between its counters and a spare set. The
//! tests play the object's code: an update goes through a bias it loaded
//! earlier, possibly before a switch (a late update).

mod fake;

use std::sync::atomic::{AtomicU64, Ordering};

use fake::{parse, two_functions, FakeObject, Rng, V10};
use kpgo::profile::epochs::WORDS_PER_COUNTER;
use kpgo::profile::sections::{ProfiledObject, SectionRange};
use kpgo::profile::writer::{serialize, write_finished_epoch, write_profile};

/// A fake object with a spare set, a bias and epoch words.
struct Relocated {
    fake: FakeObject,
    spare: Vec<u64>,
    bias: Box<u64>,
    words: Vec<AtomicU64>,
}

fn range_of<T>(v: &[T]) -> SectionRange {
    SectionRange::from_len(v.as_ptr() as *mut u8, std::mem::size_of_val(v))
}

impl Relocated {
    fn new() -> Self {
        Self::with_first(3)
    }

    /// With `first` counters in its first function.
    fn with_first(first: usize) -> Self {
        let fake = FakeObject::new(V10, two_functions(first), 20, 8, Vec::new());
        let n = fake.counters.len();
        Self {
            fake,
            spare: vec![0; n],
            bias: Box::new(0),
            words: (0..WORDS_PER_COUNTER * n)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// The descriptor, with its spare set and bias, and words attached if
    /// `attach`.
    fn object(&self, attach: bool) -> ProfiledObject {
        let plain = self.fake.object();
        let mut sections = *plain.sections();
        sections.spare_counters = range_of(&self.spare);
        sections.counter_bias = SectionRange::from_len(&*self.bias as *const u64 as *mut u8, 8);
        // SAFETY: every buffer lives as long as `self`, as the fake's do.
        let object = unsafe { ProfiledObject::new(sections, self.fake.version_word()) };
        self.fake.attach_baselines(&object);
        if attach {
            // SAFETY: `WORDS_PER_COUNTER` zeroed words per counter, living
            // as long as `self`, used by this object alone.
            assert!(unsafe { object.attach_epoch_words(self.words.as_ptr() as *mut AtomicU64) });
        }
        object
    }

    /// The bias as the object's code would load it now.
    fn load_bias(&self) -> u64 {
        // SAFETY: the bias word lives as long as `self`; the core writes
        // it through an atomic.
        unsafe { AtomicU64::from_ptr(&*self.bias as *const u64 as *mut u64) }
            .load(Ordering::Relaxed)
    }

    /// Counter `k` updated through `bias`, as instrumented code does it.
    fn update(&self, k: usize, bias: u64) {
        let address = (self.fake.counters.as_ptr().wrapping_add(k) as u64).wrapping_add(bias);
        // SAFETY: `bias` is 0 or the spare set's distance: a counter of
        // one of the two sets, which live as long as `self`.
        let counter = unsafe { AtomicU64::from_ptr(address as *mut u64) };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The bias that points at the spare set.
    fn load_bias_of_spare(&self) -> u64 {
        (self.spare.as_ptr() as u64).wrapping_sub(self.fake.counters.as_ptr() as u64)
    }

    fn counters(&self, bytes: &[u8]) -> Vec<u64> {
        parse(bytes, &[[1, 0, 0], [0, 0, 0]]).counters
    }
}

/// The counts of a profile written by `write`.
fn profile_counts(r: &Relocated, object: &ProfiledObject) -> Vec<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let len = serialize(object, &mut buf).unwrap();
    r.counters(&buf[..len])
}

fn epoch_counts(object: &ProfiledObject) -> Vec<u64> {
    let mut sink = kpgo::profile::sink::SliceSink::new(&mut [0u8; 0][..]);
    assert!(
        write_finished_epoch(object, &mut sink).is_err(),
        "an empty sink overflows"
    );
    let mut buf = vec![0u8; 1 << 20];
    let mut sink = kpgo::profile::sink::SliceSink::new(&mut buf);
    write_finished_epoch(object, &mut sink).unwrap();
    let len = kpgo::profile::sink::Sink::position(&sink);
    let parsed = parse(&buf[..len], &[[0, 0, 0], [0, 0, 0]]);
    parsed.counters
}

/// One switch, as the runtime does it around its wait.
fn switch(object: &ProfiledObject, epoch: u64, during_wait: impl FnOnce()) {
    let left = object.current_set();
    object.prepare_epoch(epoch, 1 - left, || {});
    object.point_bias_at(1 - left);
    during_wait();
    assert!(object.close_epoch(epoch, left, || {}));
}

/// Boot-time counts go to the first epoch; a late update (through a bias
/// loaded before a switch) goes to the epoch that reads it, and is
/// counted as late; a reset writes no counter and leaves epochs alone.
#[test]
fn epochs_carry_boot_counts_and_count_late_updates() {
    let r = Relocated::new();
    let object = r.object(true);
    assert!(object.has_epochs());
    for _ in 0..5 {
        r.update(0, r.load_bias());
    }
    let old_bias = r.load_bias();
    // An update in flight during the wait belongs to the epoch it ends.
    switch(&object, 1, || r.update(1, old_bias));
    assert_eq!(object.current_set(), 1);
    assert_eq!(epoch_counts(&object), [5, 1, 0, 0, 0]);
    for _ in 0..3 {
        r.update(0, r.load_bias());
    }
    // Two late updates: through the bias loaded before the switch.
    r.update(0, old_bias);
    r.update(4, old_bias);
    assert_eq!(profile_counts(&r, &object), [9, 1, 0, 0, 1]);
    switch(&object, 2, || {});
    assert_eq!(object.current_set(), 0);
    assert_eq!(epoch_counts(&object), [4, 0, 0, 0, 1]);
    let figures = object.epoch_figures();
    assert_eq!((figures.late_last, figures.late_total), (2, 2));
    assert_eq!(figures.finished_epoch, 2);
    // No counter of either set is written by a reset.
    let (counters, spare) = (r.fake.counters.clone(), r.spare.clone());
    object.reset().unwrap();
    assert_eq!((&r.fake.counters, &r.spare), (&counters, &spare));
    assert_eq!(profile_counts(&r, &object), [0; 5]);
    r.update(2, r.load_bias());
    assert_eq!(profile_counts(&r, &object), [0, 0, 1, 0, 0]);
    assert_eq!(epoch_counts(&object), [4, 0, 0, 0, 1]);
    // A switch that did not prepare this object closes nothing, nor does
    // one closed already.
    assert!(!object.close_epoch(7, 1, || {}));
    assert!(!object.close_epoch(2, 1, || {}));
    assert_eq!(object.stable_finished_epoch(), Some(2));
    object.prepare_epoch(3, 1, || {});
    assert_eq!(object.stable_finished_epoch(), None, "a switch under way");
    assert!(!object.finished_epoch_unchanged(2));
    object.point_bias_at(1);
    assert!(object.close_epoch(3, 0, || {}));
    assert_eq!(object.stable_finished_epoch(), Some(3));
}

/// An epoch is not a consistent cut: the close reads the set it left
/// counter by counter (pausing every 8,192 counters: `PAUSE_EVERY`), and
/// a late update (through the bias loaded before the switch) that lands
/// meanwhile goes to this epoch if its counter is read after it, else to
/// the next. So one function's counts are split across two epochs; every
/// update is still in exactly one, and the epochs add up to the profile.
#[test]
fn a_late_update_during_the_close_can_split_a_function_across_epochs() {
    const READ_BEFORE_PAUSE: usize = 8191;
    let r = Relocated::with_first(READ_BEFORE_PAUSE + 16);
    let object = r.object(true);
    let (early, late) = (0, READ_BEFORE_PAUSE + 8);
    let old_bias = r.load_bias();
    let left = object.current_set();
    object.prepare_epoch(1, 1 - left, || {});
    object.point_bias_at(1 - left);
    let mut paused = 0;
    assert!(object.close_epoch(1, left, || {
        // The first function's counter `early` is read, `late` is not.
        r.update(early, old_bias);
        r.update(late, old_bias);
        paused += 1;
    }));
    assert_eq!(
        paused, 1,
        "the close paused once, inside the first function"
    );
    let first = epoch_counts(&object);
    assert_eq!(
        (first[early], first[late]),
        (0, 1),
        "epoch 1 has one of the two"
    );
    switch(&object, 2, || {});
    let second = epoch_counts(&object);
    assert_eq!((second[early], second[late]), (1, 0), "epoch 2 the other");
    let total = profile_counts(&r, &object);
    assert_eq!((total[early], total[late]), (1, 1), "the epochs add up");
    assert_eq!(object.epoch_figures().late_total, 1, "the one counted late");
}

/// Random updates, current and late, and switches: every epoch's counts
/// are exactly the updates the model gives it (an update belongs to the
/// first read of its set after it: the set's prepare when the bias moves
/// to it, or its close when the bias leaves it), and their sum is every
/// update read so far.
#[test]
fn random_epochs_are_exact_and_sum_to_the_total() {
    let r = Relocated::new();
    let object = r.object(true);
    let n = r.fake.counters.len();
    let mut rng = Rng::new(30);
    // Updates not yet read, per set and counter.
    let mut pending = [vec![0u64; n], vec![0u64; n]];
    let mut summed = vec![0u64; n];
    let mut total = vec![0u64; n];
    let set_of = |bias: u64| usize::from(bias != 0);
    let mut held = Vec::new();
    for epoch in 1..=200u64 {
        for _ in 0..rng.below(50) {
            let k = rng.below(n as u64) as usize;
            // Mostly the current bias; sometimes one held from before.
            let bias = match held.get(rng.below(8) as usize) {
                Some(&old) => old,
                None => r.load_bias(),
            };
            r.update(k, bias);
            pending[set_of(bias)][k] += 1;
            total[k] += 1;
        }
        held.push(r.load_bias());
        held.retain(|_| rng.below(4) != 0);
        let next = 1 - object.current_set();
        object.prepare_epoch(epoch, next, || {});
        let mut expected = std::mem::replace(&mut pending[next], vec![0; n]);
        object.point_bias_at(next);
        let left = 1 - next;
        // Updates in flight during the wait, through the bias of before.
        for _ in 0..rng.below(5) {
            let k = rng.below(n as u64) as usize;
            r.update(k, if left == 0 { 0 } else { r.load_bias_of_spare() });
            pending[left][k] += 1;
            total[k] += 1;
        }
        assert!(object.close_epoch(epoch, left, || {}));
        for (e, p) in expected.iter_mut().zip(&mut pending[left]) {
            *e += std::mem::take(p);
        }
        assert_eq!(epoch_counts(&object), expected, "epoch {epoch}");
        for (s, e) in summed.iter_mut().zip(&expected) {
            *s += e;
        }
        let unread: Vec<u64> = (0..n).map(|k| pending[0][k] + pending[1][k]).collect();
        let read: Vec<u64> = (0..n).map(|k| total[k] - unread[k]).collect();
        assert_eq!(summed, read, "the epochs sum to every update read");
        assert_eq!(
            profile_counts(&r, &object),
            total,
            "the profile has them all"
        );
    }
}

/// An object without the words, or that cannot take part, keeps its
/// counters as they are: profiles read them, resets zero them.
#[test]
fn without_epoch_words_counters_are_plain() {
    let r = Relocated::new();
    let object = r.object(false);
    assert!(!object.has_epochs());
    r.update(0, 0);
    assert_eq!(profile_counts(&r, &object), [1, 0, 0, 0, 0]);
    object.point_bias_at(1);
    assert_eq!(r.load_bias(), 0, "no bias moves without epochs");
    object.reset().unwrap();
    assert_eq!(r.fake.counters[0], 0);
    // A spare set shorter than the counters is refused.
    let short = Relocated::new();
    let mut sections = *short.object(false).sections();
    sections.spare_counters = SectionRange::from_len(short.spare.as_ptr() as *mut u8, 8);
    // SAFETY: the fake's buffers outlive the object.
    let object = unsafe { ProfiledObject::new(sections, short.fake.version_word()) };
    // SAFETY: as in `Relocated::object`.
    assert!(!unsafe { object.attach_epoch_words(short.words.as_ptr() as *mut AtomicU64) });
    let mut buf = vec![0u8; 1 << 16];
    let mut sink = kpgo::profile::sink::SliceSink::new(&mut buf);
    write_profile(&object, &mut sink).unwrap();
}

/// A module that goes away while epochs are in use: its saved profile gets
/// its counts since the last reset, from both sets.
#[test]
fn a_saved_profile_keeps_the_counts_since_reset_of_both_sets() {
    use kpgo::profile::saved::{merge, FunctionAddress, SavedLayout};
    let r = Relocated::new();
    let object = r.object(true);
    r.update(0, r.load_bias());
    object.reset().unwrap();
    r.update(1, r.load_bias());
    switch(&object, 1, || {});
    r.update(1, r.load_bias());
    r.update(3, 0);
    let layout = SavedLayout::of(&object).unwrap();
    let mut buffer = vec![0u64; layout.size().div_ceil(8)];
    // SAFETY: the layout is `object`'s; the buffer is zeroed, aligned,
    // large enough, written by nothing else and kept with the descriptor.
    let saved = unsafe { layout.build(&object, buffer.as_mut_ptr().cast()) };
    let mut scratch = vec![FunctionAddress::default(); r.fake.shapes.len()];
    merge(&saved, &object, &(0..0), &mut scratch).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let len = serialize(&saved, &mut buf).unwrap();
    assert_eq!(r.counters(&buf[..len]), [0, 2, 0, 1, 0]);
}

/// A spare set or a bias that shares bytes with the counters, or with
/// each other, is refused: instrumented code would write there.
#[test]
fn a_spare_set_or_bias_that_overlaps_is_refused() {
    let r = Relocated::new();
    let plain = *r.object(false).sections();
    let bias = plain.counter_bias;
    let spare = plain.spare_counters;
    let cases = [
        ("spare set on the counters", plain.counters, bias),
        (
            "bias inside the counters",
            spare,
            SectionRange::from_len(plain.counters.start(), 8),
        ),
        (
            "bias inside the spare set",
            spare,
            SectionRange::from_len(spare.start(), 8),
        ),
        (
            "bias on a data record",
            spare,
            SectionRange::from_len(plain.data.start(), 8),
        ),
    ];
    for (what, spare_counters, counter_bias) in cases {
        let mut sections = plain;
        sections.spare_counters = spare_counters;
        sections.counter_bias = counter_bias;
        // SAFETY: the fake's buffers outlive the object.
        let object = unsafe { ProfiledObject::new(sections, r.fake.version_word()) };
        // SAFETY: as in `Relocated::object`.
        let attached = unsafe { object.attach_epoch_words(r.words.as_ptr() as *mut AtomicU64) };
        assert!(!attached, "{what}");
    }
    // The same object apart is taken.
    assert!(r.object(true).has_epochs());
}
