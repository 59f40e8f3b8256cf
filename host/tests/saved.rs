// SPDX-License-Identifier: GPL-2.0

//! Saved profiles (`profile::saved`): the copy of an object that went away,
//! and the merge of later loads of the same build into it; and the reset
//! baselines, which make a reset exact against a racing hook.

mod fake;

use std::sync::atomic::AtomicU64;

use fake::{notes_with_build_id, parse, variant, FakeObject, FunctionShape, Parsed, V10, V8};
use kpgo::profile::callees::retired_address;
use kpgo::profile::saved::{merge, same_build, FunctionAddress, MergeError, SavedLayout};
use kpgo::profile::sections::ProfiledObject;
use kpgo::profile::writer::{profile_size, profile_size_bound, serialize};

/// Three functions: counters, a bitmap, indirect-call and memop sites.
fn shapes() -> Vec<FunctionShape> {
    vec![
        FunctionShape {
            counters: 3,
            bitmap_bytes: 2,
            sites: [2, 1, 0],
        },
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [0, 0, 0],
        },
        FunctionShape {
            counters: 2,
            bitmap_bytes: 1,
            sites: [1, 0, 0],
        },
    ]
}

/// The word index of `FunctionPointer` in a record (InstrProfData.inc:
/// offset 32 in raw version 10, 24 in 8).
fn function_pointer_word(word: u64) -> usize {
    if word == V10 {
        4
    } else {
        3
    }
}

/// A load of the test object: its functions at `base + i` (the fake's
/// records name `0x4000_0000 + i` otherwise), with a build id.
fn load(word: u64, base: u64, id: &[u8]) -> FakeObject {
    let mut fake = FakeObject::new(word, shapes(), 11, 16, notes_with_build_id(id));
    let record_words = fake.format.record_size / 8;
    for i in 0..fake.shapes.len() {
        fake.data[i * record_words + function_pointer_word(word)] = base + i as u64;
    }
    fake
}

/// Runs a known workload on `fake`: counters, bitmap, an indirect call to
/// its own function 2 (three times), to an address outside it (once),
/// and memcpy sizes 8 and 64.
fn run(fake: &mut FakeObject, base: u64) {
    for (counter, value) in fake.counters.iter_mut().zip([10, 20, 30, 40, 50, 60]) {
        *counter += value;
    }
    fake.bitmap[0] |= 0b01;
    fake.bitmap[2] |= 0b10;
    let object = fake.object();
    for _ in 0..3 {
        object.record_target(fake.record_addr(0), 0, base + 2);
    }
    object.record_target(fake.record_addr(0), 1, 0xffff_8000_dead_0000);
    object.record_memop(fake.record_addr(0), 2, 8);
    object.record_memop(fake.record_addr(0), 2, 64);
    object.record_memop(fake.record_addr(0), 2, 64);
}

fn sites(fake: &FakeObject) -> Vec<[u16; 3]> {
    fake.shapes.iter().map(|s| s.sites).collect()
}

fn serialized(object: &ProfiledObject) -> Vec<u8> {
    let mut bytes = vec![0; profile_size(object).unwrap()];
    let written = serialize(object, &mut bytes).unwrap();
    assert_eq!(written, bytes.len());
    bytes
}

/// A saved profile's buffer: `u64`s, so 8-byte aligned.
struct Saved {
    _buffer: Vec<u64>,
    object: ProfiledObject,
}

fn save(live: &FakeObject) -> Saved {
    let object = live.object();
    let layout = SavedLayout::of(&object).unwrap();
    let mut buffer = vec![0u64; layout.size().div_ceil(8)];
    // SAFETY: the layout is `object`'s; the buffer is zeroed, aligned,
    // large enough, written by nothing else and kept with the descriptor.
    let saved = unsafe { layout.build(&object, buffer.as_mut_ptr().cast()) };
    Saved {
        _buffer: buffer,
        object: saved,
    }
}

fn merged(saved: &Saved, live: &FakeObject) -> Result<u64, MergeError> {
    let mut scratch = vec![FunctionAddress::default(); live.shapes.len()];
    merge(&saved.object, &live.object(), &(0..0), &mut scratch).map(|stats| stats.values_dropped)
}

/// Per value kind of a record, the (value, count) pairs of each site.
type RecordValues = Vec<(u32, Vec<Vec<(u64, u64)>>)>;

/// The values of record 0.
fn record0(parsed: &Parsed) -> RecordValues {
    parsed.values[0].clone()
}

#[test]
fn a_saved_copy_is_the_live_profile_then_sums_later_loads() {
    for word in [V10, V8] {
        let first_base = 0xffff_ffff_c000_0000;
        let mut first = load(word, first_base, b"build-A");
        run(&mut first, first_base);
        let saved = save(&first);
        assert_eq!(merged(&saved, &first), Ok(0));
        let live = parse(&serialized(&first.object()), &sites(&first));
        let kept = parse(&serialized(&saved.object), &sites(&first));
        // The same profile, but for the records' relative fields, which
        // name the copy's own counters, bitmap and heads.
        assert_eq!(kept.counters, live.counters, "{word:#x}");
        assert_eq!(kept.bitmap, live.bitmap);
        assert_eq!(kept.names, live.names);
        assert_eq!(kept.binary_ids, vec![b"build-A".to_vec()]);
        // Its code is gone: each record names its function by its retired
        // address, and the own target is translated to it.
        let retired = |i: u64| retired_address(0x1000 + i, 0x2000 + i);
        let words = first.format.record_size / 8;
        for i in 0..first.shapes.len() {
            let at = (i * words + function_pointer_word(word)) * 8;
            let pointer = u64::from_ne_bytes(kept.data[at..at + 8].try_into().unwrap());
            assert_eq!(pointer, retired(i as u64), "record {i}");
        }
        let mut own_renamed = record0(&live);
        own_renamed[0].1[0][0].0 = retired(2);
        assert_eq!(record0(&live)[0].1[0][0].0, first_base + 2);
        assert_eq!(record0(&kept), own_renamed);
        assert_eq!(kept.header[..4], live.header[..4]);

        // A second load of the same build, elsewhere: the counts add, its
        // own function's address becomes the retired one too.
        let second_base = 0xffff_ffff_c100_0000;
        let mut second = load(word, second_base, b"build-A");
        run(&mut second, second_base);
        assert!(same_build(&saved.object, &second.object()));
        assert_eq!(merged(&saved, &second), Ok(0));
        let kept = parse(&serialized(&saved.object), &sites(&first));
        let doubled: Vec<u64> = live.counters.iter().map(|c| 2 * c).collect();
        assert_eq!(kept.counters, doubled);
        assert_eq!(kept.bitmap, live.bitmap, "bitmap bytes OR");
        let want = vec![
            (
                0,
                vec![vec![(retired(2), 6)], vec![(0xffff_8000_dead_0000, 2)]],
            ),
            (1, vec![vec![(8, 2), (64, 4)]]),
        ];
        assert_eq!(record0(&kept), want);
    }
}

/// The counters' bytes of `object`.
fn counter_bytes(object: &ProfiledObject) -> Vec<u8> {
    let range = &object.sections().counters;
    // SAFETY: the range is the object's counters, alive for the call.
    unsafe { std::slice::from_raw_parts(range.start(), range.len()) }.to_vec()
}

/// In coverage mode a counter byte is 0 once covered, 0xff before: the
/// saved copy starts uncovered, so that the merge (an AND) keeps exactly
/// what some load covered.
#[test]
fn a_saved_copy_in_coverage_mode_covers_only_what_a_load_covered() {
    let word = V10 | variant::BYTE_COVERAGE;
    let mut first = load(word, 0xffff_ffff_c000_0000, b"build-C");
    first.object().reset().unwrap();
    first.counters[0] &= !0xff; // the first function's entry: covered
    let saved = save(&first);
    let uncovered = counter_bytes(&saved.object);
    assert!(uncovered.iter().all(|&b| b == 0xff), "{uncovered:?}");
    assert_eq!(merged(&saved, &first), Ok(0));
    assert_eq!(counter_bytes(&saved.object), counter_bytes(&first.object()));

    let mut second = load(word, 0xffff_ffff_c100_0000, b"build-C");
    second.object().reset().unwrap();
    second.counters[3] &= !0xff00;
    assert_eq!(merged(&saved, &second), Ok(0));
    let kept = counter_bytes(&saved.object);
    let covered: Vec<usize> = (0..kept.len()).filter(|&i| kept[i] == 0).collect();
    let zero_byte = |word: u64| word.to_ne_bytes().iter().position(|&b| b == 0).unwrap();
    assert_eq!(covered, vec![zero_byte(!0xff), 3 * 8 + zero_byte(!0xff00)]);
}

#[test]
fn another_build_is_not_the_same_and_a_mismatch_changes_nothing() {
    let base = 0xffff_ffff_c000_0000;
    let mut first = load(V10, base, b"build-A");
    run(&mut first, base);
    let saved = save(&first);
    merged(&saved, &first).unwrap();
    let before = serialized(&saved.object);
    // Another build id: kept apart.
    let other = load(V10, base, b"build-B");
    assert!(!same_build(&saved.object, &other.object()));
    // Another structure under a forced merge: refused, nothing written.
    let mut shapes = shapes();
    shapes[2].counters = 3;
    let changed = FakeObject::new(V10, shapes, 11, 16, notes_with_build_id(b"build-A"));
    let mut scratch = vec![FunctionAddress::default(); 3];
    assert_eq!(
        merge(&saved.object, &changed.object(), &(0..0), &mut scratch),
        Err(MergeError::Mismatch { record: 3 })
    );
    let mut renamed = load(V10, base, b"build-A");
    renamed.data[8] ^= 1; // record 1's NameRef
    assert_eq!(
        merge(&saved.object, &renamed.object(), &(0..0), &mut scratch),
        Err(MergeError::Mismatch { record: 1 })
    );
    assert_eq!(
        merge(&saved.object, &first.object(), &(0..0), &mut scratch[..2]),
        Err(MergeError::Scratch)
    );
    assert_eq!(serialized(&saved.object), before);
    // Without build ids, the structure decides.
    let plain = FakeObject::new(V10, self::shapes(), 11, 16, Vec::new());
    let saved_plain = save(&plain);
    assert!(same_build(&saved_plain.object, &plain.object()));
    let plain_other = FakeObject::new(V8, self::shapes(), 11, 16, Vec::new());
    assert!(!same_build(&saved_plain.object, &plain_other.object()));
}

#[test]
fn a_merge_past_the_saved_pool_drops_and_counts() {
    let base = 0x1000;
    // 16 nodes: 20 distinct targets over two loads do not all fit.
    let first = load(V10, base, b"A");
    let saved = save(&first);
    for (load_number, targets) in [(0u64, 0..10u64), (1, 10..20)] {
        let live = load(V10, base + 0x100 * load_number, b"A");
        let object = live.object();
        for value in targets {
            object.record_target(live.record_addr(2), 0, 0x9000 + value);
        }
        merged(&saved, &live).unwrap();
    }
    let kept = parse(&serialized(&saved.object), &sites(&first));
    let stats = saved.object.stats();
    assert_eq!(stats.nodes_used, 16);
    assert_eq!(stats.values_dropped, 4);
    let listed: usize = kept.values.iter().map(|r| r[0].1[0].len()).sum();
    assert_eq!(listed, 16);
}

/// A hook that loaded a count before a reset and stores it after: with
/// baselines, the store counts one call after the reset, not the whole
/// count from before it.
#[test]
fn a_store_racing_with_a_reset_counts_one_call_not_the_old_count() {
    let base = 0x1000;
    let fake = load(V10, base, b"A");
    let object = fake.object();
    for _ in 0..1000 {
        object.record_target(fake.record_addr(2), 0, 0x77);
    }
    // The node the hooks count in.
    let node = fake.nodes.as_ptr() as *mut u64;
    // SAFETY: the first node's count word, inside the fake's pool.
    let count = unsafe { AtomicU64::from_ptr(node.add(1)) };
    let loaded = count.load(std::sync::atomic::Ordering::Relaxed);
    object.reset().unwrap();
    count.store(loaded + 1, std::sync::atomic::Ordering::Relaxed);
    let parsed = parse(&serialized(&object), &sites(&fake));
    assert_eq!(parsed.values[1][0].1[0], vec![(0x77, 1)]);
    // And the counts go on from there.
    object.record_target(fake.record_addr(2), 0, 0x77);
    let parsed = parse(&serialized(&object), &sites(&fake));
    assert_eq!(parsed.values[1][0].1[0], vec![(0x77, 2)]);
}

#[test]
fn the_size_bound_holds_once_every_node_is_taken() {
    let fake = load(V10, 0x1000, b"A");
    let object = fake.object();
    let bound = profile_size_bound(&object).unwrap();
    for value in 0..100 {
        object.record_target(fake.record_addr(0), (value % 2) as u32, value);
        object.record_target(fake.record_addr(2), 0, value + 1000);
    }
    assert_eq!(object.stats().nodes_used, 16);
    assert!(profile_size(&object).unwrap() <= bound);
    assert_eq!(
        profile_size(&object).unwrap(),
        bound,
        "every node listed: the bound is tight"
    );
}
