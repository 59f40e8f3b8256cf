// SPDX-License-Identifier: GPL-2.0

//! Unit and property tests of the raw-profile core.

mod fake;

use fake::{
    notes_with_build_id, parse, variant, FakeObject, FunctionShape, Rng, SiteValues, ALL_VERSIONS,
    RAW_V10, RAW_V11, RAW_V8, RAW_V9, V10, V11, V8, V9,
};
use kpgo::profile::format::{
    self, memop_size_bucket, padding_to_8, value_record_header_size, FormatError, ProfileVersion,
    LAYOUT_V10, LAYOUT_V11, LAYOUT_V8,
};
use kpgo::profile::sections::{ProfiledObject, SectionRange, Sections};
use kpgo::profile::sink::{Measure, Sink, SliceSink};
use kpgo::profile::writer::{profile_size, serialize, write_live, LivePages, PageSize, WriteError};

fn random_shapes(rng: &mut Rng, functions: usize) -> Vec<FunctionShape> {
    (0..functions)
        .map(|_| FunctionShape {
            counters: 1 + rng.below(9) as usize,
            bitmap_bytes: if rng.below(4) == 0 {
                rng.below(11) as usize
            } else {
                0
            },
            sites: [
                if rng.below(2) == 0 {
                    rng.below(4) as u16
                } else {
                    0
                },
                if rng.below(3) == 0 {
                    rng.below(3) as u16
                } else {
                    0
                },
                0,
            ],
        })
        .collect()
}

/// `n` functions of one counter and one indirect-call site each.
fn one_site_functions(n: usize) -> Vec<FunctionShape> {
    (0..n)
        .map(|_| FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [1, 0, 0],
        })
        .collect()
}

fn sites_of(fake: &FakeObject) -> Vec<[u16; 3]> {
    fake.shapes.iter().map(|s| s.sites).collect()
}

fn snapshot(fake: &FakeObject) -> Vec<u8> {
    let object = fake.object();
    let size = profile_size(&object).unwrap();
    let mut buf = vec![0xa5; size + 64];
    let written = serialize(&object, &mut buf).unwrap();
    assert_eq!(written, size, "computed size equals bytes written");
    buf.truncate(written);
    buf
}

/// The sites of one function, of the kinds its raw version has.
fn total_sites(fake: &FakeObject, shape: &FunctionShape) -> usize {
    let kinds = fake.format.value_kinds;
    shape.sites[..kinds].iter().map(|&n| n as usize).sum()
}

/// compiler-rt's default per-site value limit
/// (`INSTR_PROF_DEFAULT_NUM_VAL_PER_SITE`), the core's too.
const COMPILER_RT_VALUES_PER_SITE: usize = 24;

/// compiler-rt's per-site algorithm, as a plain model.
#[derive(Default, Clone)]
struct ModelSite(Vec<(u64, u64)>);

impl ModelSite {
    /// Returns false if a node was needed and `pool` had none.
    fn record(&mut self, value: u64, limit: usize, pool: &mut usize) -> bool {
        if let Some(entry) = self.0.iter_mut().find(|e| e.0 == value) {
            entry.1 += 1;
            return true;
        }
        if self.0.len() >= limit {
            let min = self.0.iter().map(|e| e.1).min().unwrap();
            let victim = self.0.iter_mut().find(|e| e.1 == min).unwrap();
            if victim.1 <= 1 {
                *victim = (value, 1);
            } else {
                victim.1 -= 1;
            }
            return true;
        }
        if *pool == 0 {
            return false;
        }
        *pool -= 1;
        self.0.push((value, 1));
        true
    }
}

#[test]
fn padding_rules() {
    for len in 0..64usize {
        let pad = padding_to_8(len);
        assert!(pad < 8);
        assert_eq!((len + pad) % 8, 0);
        // compiler-rt's formula: 7 & (8 - len % 8).
        assert_eq!(pad, 7 & (8 - len % 8));
    }
    assert_eq!(value_record_header_size(1), 16);
    assert_eq!(value_record_header_size(8), 16);
    assert_eq!(value_record_header_size(9), 24);
    assert_eq!(value_record_header_size(0), 8);
}

#[test]
fn versions_other_than_8_to_11_are_refused() {
    for number in [0u64, 1, 5, 7, 12, 13, 0xffff_ffff] {
        let word = variant::IR_PROF | number;
        assert_eq!(
            ProfileVersion::from_word(word),
            Err(FormatError::UnsupportedVersion(word))
        );
    }
    for flag in [
        variant::DBG_CORRELATE,
        variant::MEMPROF,
        variant::TEMPORAL_PROF,
        1 << 40,
    ] {
        let word = V10 | flag;
        assert_eq!(
            ProfileVersion::from_word(word),
            Err(FormatError::UnsupportedVariant(word))
        );
    }
    let coverage = ProfileVersion::from_word(V10 | variant::BYTE_COVERAGE).unwrap();
    assert_eq!(
        (coverage.counter_size(), coverage.counter_reset_byte()),
        (1, 0xff)
    );
    let message = FormatError::UnsupportedVersion(V11 + 1).to_string();
    assert!(message.contains("version 12"), "{message}");
}

/// The library's own tables, by which the core reads records and writes
/// headers, and its version flags are those of `InstrProfData.inc` (the
/// fake's literals).
#[test]
fn the_library_layouts_are_those_of_instrprofdata_inc() {
    for (word, inc) in [
        (V11, &RAW_V11),
        (V10, &RAW_V10),
        (V9, &RAW_V9),
        (V8, &RAW_V8),
    ] {
        let layout = ProfileVersion::from_word(word).unwrap().layout();
        let library = [
            layout.version as usize,
            layout.header_words,
            layout.record_size,
            layout.counter_ptr_offset,
            layout.values_offset,
            layout.num_counters_offset,
            layout.num_value_sites_offset,
            layout.value_kinds,
        ];
        let pinned = [
            inc.version as usize,
            inc.header_words,
            inc.record_size,
            inc.counter_ptr,
            inc.values,
            inc.num_counters,
            inc.num_value_sites,
            inc.value_kinds,
        ];
        assert_eq!(
            library, pinned,
            "raw {}: version, header words, record size, CounterPtr, Values, \
             NumCounters, NumValueSites, value kinds",
            inc.version
        );
        let bitmap = |offset| layout.has_bitmap.then_some(offset);
        assert_eq!(
            (
                bitmap(layout.bitmap_ptr_offset),
                bitmap(layout.num_bitmap_bytes_offset)
            ),
            (inc.bitmap_ptr, inc.num_bitmap_bytes),
            "raw {}: BitmapPtr, NumBitmapBytes",
            inc.version
        );
        let uniform = |offset| layout.has_uniform_counters.then_some(offset);
        assert_eq!(
            (
                uniform(layout.uniform_counter_ptr_offset),
                uniform(layout.wave_size_offset),
                layout.function_pointer_offset,
                layout.has_vtables,
            ),
            (
                inc.uniform_counter_ptr,
                inc.wave_size,
                inc.function_pointer,
                inc.header_vtables.is_some(),
            ),
            "raw {}: UniformCounterPtr, OffloadDeviceWaveSize, FunctionPointer, vtable words",
            inc.version
        );
    }
    assert_eq!(format::RAW_MAGIC_64, fake::RAW_MAGIC_64);
    let flags = [
        (format::variant::IR_PROF, variant::IR_PROF),
        (format::variant::CSIR_PROF, variant::CSIR_PROF),
        (format::variant::INSTR_ENTRY, variant::INSTR_ENTRY),
        (format::variant::DBG_CORRELATE, variant::DBG_CORRELATE),
        (format::variant::BYTE_COVERAGE, variant::BYTE_COVERAGE),
        (
            format::variant::FUNCTION_ENTRY_ONLY,
            variant::FUNCTION_ENTRY_ONLY,
        ),
        (format::variant::MEMPROF, variant::MEMPROF),
        (format::variant::TEMPORAL_PROF, variant::TEMPORAL_PROF),
    ];
    for (library, pinned) in flags {
        assert_eq!(
            library,
            pinned,
            "VARIANT_MASK bit {}",
            pinned.trailing_zeros()
        );
    }
}

#[test]
fn an_object_with_a_refused_version_writes_nothing() {
    let bad = FakeObject::new(V8, random_shapes(&mut Rng::new(1), 3), 10, 4, Vec::new());
    // Same memory, version word replaced by an unsupported one.
    // SAFETY: the sections of `bad`, which outlives `object`.
    let object = unsafe {
        kpgo::profile::sections::ProfiledObject::new(
            *bad.object().sections(),
            &(12u64 | variant::IR_PROF),
        )
    };
    assert!(matches!(
        profile_size(&object),
        Err(WriteError::Format(FormatError::UnsupportedVersion(_)))
    ));
    let mut buf = vec![0u8; 4096];
    assert!(serialize(&object, &mut buf).is_err());
    assert!(buf.iter().all(|&b| b == 0), "nothing written");
    assert!(object.reset().is_err());
    object.record_target(bad.record_addr(0), 0, 1);
    assert!(
        bad.nodes.iter().all(|&w| w == 0),
        "hooks ignore a refused object"
    );
}

#[test]
fn memop_buckets_match_llvm() {
    let cases = [
        (0, 0),
        (1, 1),
        (8, 8),
        (9, 9),
        (15, 9),
        (16, 16),
        (17, 17),
        (22, 17),
        (31, 17),
        (99, 65),
        (128, 128),
        (256, 256),
        (300, 257),
        (512, 512),
        (513, 513),
        (1001, 513),
        (u64::MAX, 513),
    ];
    for (size, bucket) in cases {
        assert_eq!(memop_size_bucket(size), bucket, "size {size}");
    }
}

#[test]
fn random_objects_write_their_size_and_the_modelled_values() {
    for seed in 0..300 {
        let mut rng = Rng::new(seed);
        let word = ALL_VERSIONS[seed as usize % ALL_VERSIONS.len()];
        let functions = rng.below(20) as usize;
        let shapes = random_shapes(&mut rng, functions);
        let id: Vec<u8> = (0..1 + rng.below(24)).map(|_| rng.next() as u8).collect();
        let notes = if rng.below(3) == 0 {
            Vec::new()
        } else {
            notes_with_build_id(&id)
        };
        let names = rng.below(40) as usize;
        let capacity = rng.below(30) as usize;
        let fake = FakeObject::new(word, shapes, names, capacity, notes.clone());
        let object = fake.object();
        // Random values at random sites, and what compiler-rt's algorithm
        // makes of them: per record, its sites of all kinds in order.
        let mut model: Vec<Vec<ModelSite>> = fake
            .shapes
            .iter()
            .map(|s| vec![ModelSite::default(); total_sites(&fake, s)])
            .collect();
        let (mut pool, mut drops) = (capacity, 0);
        for _ in 0..rng.below(200) {
            let f = rng.below(fake.shapes.len().max(1) as u64) as usize;
            if f >= fake.shapes.len() {
                break;
            }
            let sites = model[f].len();
            if sites > 0 {
                let site = rng.below(sites as u64) as usize;
                let value = rng.below(6);
                object.record_target(fake.record_addr(f), site as u32, value);
                if !model[f][site].record(value, COMPILER_RT_VALUES_PER_SITE, &mut pool) {
                    drops += 1;
                }
            }
        }
        let bytes = snapshot(&fake);
        let parsed = parse(&bytes, &sites_of(&fake));
        assert_eq!(parsed.header[3] as usize, fake.shapes.len());
        assert_eq!(parsed.names, fake.names);
        assert_eq!(parsed.counters, fake.counters);
        let data_bytes: Vec<u8> = fake.data.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(parsed.data, data_bytes, "data records verbatim");
        if notes.is_empty() {
            assert!(parsed.binary_ids.is_empty());
        } else {
            assert_eq!(parsed.binary_ids, vec![id]);
        }
        let recorded: Vec<SiteValues> = parsed
            .values
            .iter()
            .map(|kinds| kinds.iter().flat_map(|(_, sites)| sites.clone()).collect())
            .collect();
        let expected: Vec<SiteValues> = model
            .iter()
            .filter(|sites| !sites.is_empty())
            .map(|sites| sites.iter().map(|site| site.0.clone()).collect())
            .collect();
        assert_eq!(recorded, expected, "seed {seed}: recorded values");
        let stats = object.stats();
        assert_eq!(
            (stats.nodes_used, stats.values_dropped),
            (capacity - pool, drops),
            "seed {seed}"
        );
    }
}

#[test]
fn header_addresses_are_deltas_from_the_data() {
    let fake = FakeObject::new(V10, random_shapes(&mut Rng::new(7), 5), 13, 8, Vec::new());
    let parsed = parse(&snapshot(&fake), &sites_of(&fake));
    let data = fake.data.as_ptr() as u64;
    assert_eq!(
        parsed.header[RAW_V10.header_counters_delta],
        (fake.counters.as_ptr() as u64).wrapping_sub(data)
    );
    let bitmap = if fake.bitmap.is_empty() {
        0
    } else {
        fake.bitmap.as_ptr() as u64
    };
    assert_eq!(
        parsed.header[RAW_V10.header_bitmap_delta.unwrap()],
        bitmap.wrapping_sub(data),
        "an empty bitmap is at 0"
    );
    assert_eq!(
        parsed.header[RAW_V10.header_names_delta],
        fake.names.as_ptr() as u64
    );
    assert_eq!(parsed.header[RAW_V10.header_names_size], 13, "names size");
}

#[test]
fn a_short_buffer_is_an_overflow_not_a_crash() {
    let fake = FakeObject::new(
        V10,
        random_shapes(&mut Rng::new(3), 8),
        21,
        8,
        notes_with_build_id(&[1; 20]),
    );
    let object = fake.object();
    let size = profile_size(&object).unwrap();
    for short in [0, 1, 8, size / 2, size - 1] {
        let mut buf = vec![0u8; short];
        assert_eq!(
            serialize(&object, &mut buf),
            Err(WriteError::Overflow),
            "buffer of {short}"
        );
    }
}

#[test]
fn every_record_with_value_sites_gets_a_blob_even_when_empty() {
    let shapes = vec![
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [2, 0, 0],
        },
        FunctionShape {
            counters: 2,
            bitmap_bytes: 0,
            sites: [0, 0, 0],
        },
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [1, 3, 0],
        },
    ];
    let fake = FakeObject::new(V10, shapes, 5, 4, Vec::new());
    let parsed = parse(&snapshot(&fake), &sites_of(&fake));
    assert_eq!(parsed.values.len(), 2);
    assert_eq!(parsed.values[0], vec![(0, vec![vec![], vec![]])]);
    assert_eq!(
        parsed.values[1],
        vec![(0, vec![vec![]]), (1, vec![vec![], vec![], vec![]])]
    );
}

/// Single-threaded, the core behaves exactly like compiler-rt's algorithm,
/// below, at and beyond the per-site limit.
#[test]
fn value_lists_follow_compiler_rt_at_and_beyond_the_limit() {
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let limit = 1 + rng.below(6) as usize;
        let sites = 1 + rng.below(4) as u16;
        let capacity = rng.below(20) as usize;
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [sites, 0, 0],
        }];
        let fake = FakeObject::new(V10, shapes, 1, capacity, Vec::new());
        let object = fake.object();
        object.set_values_per_site(limit as u32);
        let mut model = vec![ModelSite::default(); sites as usize];
        let mut pool = capacity;
        let mut drops = 0;
        let distinct = 1 + rng.below(10);
        for _ in 0..rng.below(300) {
            let site = rng.below(sites as u64) as usize;
            // Skewed values so that eviction meets both hot and cold ones.
            let value = rng.below(distinct) * rng.below(distinct) % distinct;
            object.record_target(fake.record_addr(0), site as u32, value);
            if !model[site].record(value, limit, &mut pool) {
                drops += 1;
            }
        }
        let parsed = parse(&snapshot(&fake), &sites_of(&fake));
        let got = &parsed.values[0][0].1;
        for (site, want) in model.iter().enumerate() {
            assert_eq!(got[site], want.0, "seed {seed} site {site}");
        }
        let stats = object.stats();
        assert_eq!(stats.values_dropped, drops, "seed {seed}");
        assert_eq!(stats.nodes_used, capacity - pool, "seed {seed}");
    }
}

#[test]
fn pool_exhaustion_is_counted_and_corrupts_nothing() {
    let shapes = vec![
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [4, 0, 0],
        },
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [0, 2, 0],
        },
    ];
    let fake = FakeObject::new(V10, shapes, 1, 3, Vec::new());
    let object = fake.object();
    for site in 0..4 {
        object.record_target(fake.record_addr(0), site, 100 + site as u64);
    }
    object.record_memop(fake.record_addr(1), 0, 4000);
    object.record_memop(fake.record_addr(1), 1, 3);
    // Known values still count when the pool is empty.
    object.record_target(fake.record_addr(0), 0, 100);
    let stats = object.stats();
    assert_eq!(
        (stats.nodes_used, stats.nodes_capacity, stats.values_dropped),
        (3, 3, 3)
    );
    let parsed = parse(&snapshot(&fake), &sites_of(&fake));
    assert_eq!(
        parsed.values[0][0].1,
        vec![vec![(100, 2)], vec![(101, 1)], vec![(102, 1)], vec![]]
    );
    assert_eq!(parsed.values[1][0].1, vec![vec![], vec![]]);
}

#[test]
fn foreign_or_misaligned_records_and_unknown_sites_are_ignored() {
    for word in ALL_VERSIONS {
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [1, 0, 0],
        }];
        let fake = FakeObject::new(word, shapes, 1, 4, Vec::new());
        let object = fake.object();
        let base = fake.record_addr(0);
        let size = fake.format.record_size;
        object.record_target(base + 8, 0, 1); // inside, misaligned
        object.record_target(base + size, 0, 1); // one past the end
        object.record_target(base - size, 0, 1); // before
        object.record_target(0, 0, 1);
        object.record_target(base, 1, 1); // site out of range
        assert_eq!(object.stats().nodes_used, 0);
        assert!(fake.nodes.iter().all(|&w| w == 0));
        object.record_target(base, 0, 1);
        assert_eq!(object.stats().nodes_used, 1);
    }
}

#[test]
fn the_hooks_take_a_record_only_under_its_objects_layout() {
    // `record_target_checked_as` is vmlinux's hot path in the kernel, for
    // the layout of the compiler it was built with; `record_target_checked`
    // serves any layout. With 5 records, a raw version 10 record at offset
    // 192 is where version 8's fifth one would be.
    // Version 9's records are taken under version 10's layout, which reads
    // what the hooks need at the same offsets (`HookRecords`). Versions 8
    // and 11 share the high half of the hooks' word, told apart by its
    // mark: each is refused under the other's layout (their records
    // coincide at offsets 0 and 144).
    for (word, own, others) in [
        (V11, &LAYOUT_V11, [&LAYOUT_V10, &LAYOUT_V8]),
        (V10, &LAYOUT_V10, [&LAYOUT_V8, &LAYOUT_V11]),
        (V9, &LAYOUT_V10, [&LAYOUT_V8, &LAYOUT_V11]),
        (V8, &LAYOUT_V8, [&LAYOUT_V10, &LAYOUT_V11]),
    ] {
        let shapes = one_site_functions(5);
        let fake = FakeObject::new(word, shapes, 1, 8, Vec::new());
        let object = fake.object();
        let records: Vec<usize> = (0..5).map(|i| fake.record_addr(i)).collect();
        // Until the version word is checked, no record is taken.
        assert!(!object.record_target_checked_as(own, records[0], 0, 1));
        assert!(!object.record_target_checked(records[0], 0, 1));
        assert!(object.record_target(records[0], 0, 1));
        for (i, &record) in records.iter().enumerate() {
            for other in others {
                assert!(!object.record_target_checked_as(other, record, 0, 2));
            }
            assert!(object.record_target_checked_as(own, record, 0, 10 + i as u64));
            assert!(object.record_target_checked(record, 0, 10 + i as u64));
        }
        assert_eq!(object.stats().nodes_used, 6);
        let parsed = parse(&snapshot(&fake), &sites_of(&fake));
        assert_eq!(parsed.values[0][0].1, vec![vec![(1, 1), (10, 2)]]);
        for i in 1..5 {
            assert_eq!(parsed.values[i][0].1, vec![vec![(10 + i as u64, 2)]]);
        }
    }
}

#[test]
fn record_ownership_is_exactly_start_of_a_whole_record() {
    // The hooks' one-compare test (exact division by rotation) against the
    // plain definition, at every byte near the section, and at random
    // addresses and offsets with high bits set (which rotation must not
    // fold onto a record).
    let mut rng = Rng::new(7);
    for word in ALL_VERSIONS {
        let shapes = one_site_functions(5);
        let fake = FakeObject::new(word, shapes, 1, 4, Vec::new());
        let object = fake.object();
        let version = ProfileVersion::from_word(word).unwrap();
        let size = fake.format.record_size;
        let base = fake.record_addr(0);
        let len = 5 * size;
        let expected = |addr: usize| {
            let offset = addr.wrapping_sub(base);
            offset < len && offset % size == 0
        };
        let mut addrs: Vec<usize> = (0..len + 6 * size).map(|i| base - 3 * size + i).collect();
        for _ in 0..100_000 {
            addrs.push(rng.next() as usize);
            addrs.push(base.wrapping_add((rng.next() as usize) & !63));
            addrs.push(
                base.wrapping_add(size * (rng.below(8) as usize)) ^ (1 << (58 + rng.below(6))),
            );
        }
        addrs.extend([0, usize::MAX, base.wrapping_neg()]);
        for addr in addrs {
            assert_eq!(
                object.owns_record(&version, addr),
                expected(addr),
                "raw version {}: {addr:#x} (data at {base:#x})",
                fake.format.version
            );
        }
    }
}

#[test]
fn reset_zeroes_counts_and_reuses_the_pool() {
    let shapes = vec![FunctionShape {
        counters: 3,
        bitmap_bytes: 5,
        sites: [2, 1, 0],
    }];
    let mut fake = FakeObject::new(V10, shapes, 1, 8, Vec::new());
    fake.counters.copy_from_slice(&[5, 6, 7]);
    fake.bitmap.copy_from_slice(&[1, 2, 3, 4, 5]);
    let object = fake.object();
    for v in [1, 2, 1, 3] {
        object.record_target(fake.record_addr(0), 0, v);
    }
    object.record_memop(fake.record_addr(0), 2, 64);
    let used = object.stats().nodes_used;
    object.reset().unwrap();
    let parsed = parse(&snapshot(&fake), &sites_of(&fake));
    assert_eq!(parsed.counters, vec![0, 0, 0]);
    assert_eq!(parsed.bitmap, vec![0; 5]);
    assert_eq!(parsed.values[0][0].1[0], vec![(1, 0), (2, 0), (3, 0)]);
    assert_eq!(parsed.values[0][1].1[0], vec![(64, 0)]);
    // The same values again take no new node.
    for v in [3, 2, 1] {
        object.record_target(fake.record_addr(0), 0, v);
    }
    object.record_memop(fake.record_addr(0), 2, 64);
    assert_eq!(object.stats().nodes_used, used);
    let parsed = parse(&snapshot(&fake), &sites_of(&fake));
    assert_eq!(parsed.values[0][0].1[0], vec![(1, 1), (2, 1), (3, 1)]);
}

#[test]
fn reset_in_coverage_mode_marks_counters_uncovered() {
    let shapes = vec![FunctionShape {
        counters: 3,
        bitmap_bytes: 0,
        sites: [0, 0, 0],
    }];
    let fake = FakeObject::new(V10 | variant::BYTE_COVERAGE, shapes, 1, 0, Vec::new());
    fake.object().reset().unwrap();
    assert!(fake.counters.iter().all(|&w| w == u64::MAX));
}

/// Eight threads on the same sites: nothing invented, never beyond the
/// limit, never over-counted; a site that never filled up lists no value
/// twice and lists every value seen. (A full site may list a value twice
/// after concurrent evictions: see `value.rs`.)
#[test]
fn concurrent_recording_keeps_the_documented_promise() {
    const THREADS: u64 = 8;
    const CALLS: u64 = 20_000;
    for (distinct, limit) in [(5u64, 24u32), (40, 8)] {
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [2, 0, 0],
        }];
        let fake = FakeObject::new(V10, shapes, 1, 512, Vec::new());
        let object = fake.object();
        object.set_values_per_site(limit);
        let addr = fake.record_addr(0);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let object = &object;
                s.spawn(move || {
                    let mut rng = Rng::new(t + 1);
                    for _ in 0..CALLS {
                        let site = rng.below(2) as u32;
                        object.record_target(addr, site, 1000 + rng.below(distinct));
                    }
                });
            }
        });
        let parsed = parse(&snapshot(&fake), &sites_of(&fake));
        let sites = &parsed.values[0][0].1;
        let total: u64 = sites.iter().flatten().map(|p| p.1).sum();
        for site in sites {
            assert!(
                site.iter().all(|p| (1000..1000 + distinct).contains(&p.0)),
                "no invented value"
            );
            assert!(site.len() <= limit as usize, "never beyond the limit");
        }
        assert!(total <= THREADS * CALLS, "never over-counted");
        if distinct < limit as u64 {
            for site in sites {
                assert_eq!(distinct_values(site), site.len(), "no value listed twice");
            }
            // Every value seen is listed; only simultaneous increments of
            // one value may be lost: under 1% measured with 8 threads on 2
            // CPUs, bounded loosely here so that a loaded CI stays green.
            assert!(sites.iter().all(|s| s.len() == distinct as usize));
            assert!(
                total * 10 >= THREADS * CALLS * 9,
                "lost {} of {}",
                THREADS * CALLS - total,
                THREADS * CALLS
            );
        }
    }
}

fn distinct_values(site: &[(u64, u64)]) -> usize {
    let mut seen: Vec<u64> = site.iter().map(|p| p.0).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// The promise where it is hardest to keep: threads that append the same
/// new values at the same moment, up to exactly the limit, on fresh sites,
/// round after round. No value is ever listed twice at a site that has not
/// been full.
#[test]
fn racing_appends_below_the_limit_never_list_a_value_twice() {
    const THREADS: usize = 8;
    const SITES: u16 = 64;
    let limit = 6u32;
    for round in 0..20u64 {
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [SITES, 0, 0],
        }];
        let fake = FakeObject::new(V10, shapes, 1, 4096, Vec::new());
        let object = fake.object();
        object.set_values_per_site(limit);
        let addr = fake.record_addr(0);
        let start = std::sync::Barrier::new(THREADS);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (object, start) = (&object, &start);
                s.spawn(move || {
                    start.wait();
                    // The same values in the same order on every thread
                    // (each thread starting at another site): they race
                    // to append each one. Exactly `limit` distinct values
                    // per site, so that no site ever evicts.
                    for i in 0..SITES as usize {
                        let site = ((i + t * 8) % SITES as usize) as u32;
                        for value in 0..u64::from(limit) {
                            object.record_target(addr, site, round * 100 + value);
                        }
                    }
                });
            }
        });
        let parsed = parse(&snapshot(&fake), &sites_of(&fake));
        for (i, site) in parsed.values[0][0].1.iter().enumerate() {
            assert_eq!(
                site.len(),
                limit as usize,
                "round {round} site {i}: {site:?}"
            );
            assert_eq!(
                distinct_values(site),
                site.len(),
                "round {round} site {i}: {site:?}"
            );
        }
    }
}

/// A paced sink writes the same bytes, and pauses about every `PACE`
/// bytes: between chunks of a large section and between records.
#[test]
fn a_paced_sink_writes_the_same_bytes_and_pauses_on_the_way() {
    use kpgo::profile::sink::{Paced, Sink, SliceSink, PACE};
    use kpgo::profile::writer::write_profile;
    let shapes = (0..2000)
        .map(|i| FunctionShape {
            counters: 1 + i % 40,
            bitmap_bytes: 0,
            sites: [1, 0, 0],
        })
        .collect();
    let fake = FakeObject::new(V10, shapes, 5000, 64, Vec::new());
    let object = fake.object();
    for i in 0..2000 {
        object.record_target(fake.record_addr(i), 0, i as u64);
    }
    let plain = snapshot(&fake);
    let mut bytes = vec![0u8; plain.len()];
    let mut pauses = 0;
    {
        let mut sink = Paced::new(SliceSink::new(&mut bytes), || pauses += 1);
        write_profile(&object, &mut sink).unwrap();
        assert_eq!(sink.position(), plain.len());
    }
    assert_eq!(bytes, plain);
    assert!(
        pauses >= plain.len() / PACE - 1,
        "{pauses} pauses for {} bytes",
        plain.len()
    );
    assert!(
        pauses <= plain.len() / PACE + 4,
        "{pauses} pauses for {} bytes",
        plain.len()
    );
}

/// `object`'s profile as `write_live` lays it out for pages of `page`
/// bytes, written twice: the measure and the bytes must agree.
fn live_bytes(object: &ProfiledObject, page: usize) -> (Vec<u8>, LivePages) {
    let page = PageSize::new(page).unwrap();
    let mut measure = Measure::new();
    let measured = write_live(object, page, &mut measure).unwrap();
    let mut bytes = vec![0xa5u8; measure.position()];
    let mut sink = SliceSink::new(&mut bytes);
    let pages = write_live(object, page, &mut sink).unwrap();
    assert_eq!((sink.position(), pages), (measure.position(), measured));
    (bytes, pages)
}

/// A profile laid out to be mapped (`write_live`): every version, several
/// page sizes. Its counters sit at a file offset congruent to their address
/// modulo a page, the header's paddings fill their first and last pages,
/// the records are the plain profile's but for their value sites (0, and
/// no value data), and the names follow. Written again after counting
/// went on, only the counters' bytes differ: a mapping of their pages in
/// place reads as a profile of the counts of the moment.
#[test]
fn a_live_profile_puts_the_counters_pages_in_place() {
    let mut rng = Rng::new(30);
    for word in ALL_VERSIONS {
        for page in [8usize, 64, 4096] {
            let fake = FakeObject::new(
                word,
                random_shapes(&mut rng, 40),
                23,
                8,
                notes_with_build_id(&[7; 20]),
            );
            let set_counters = |f: &dyn Fn(usize) -> u64| {
                for (i, c) in fake.counters.iter().enumerate() {
                    // SAFETY: the counters are the fake's; nothing else runs.
                    unsafe { (c as *const u64 as *mut u64).write(f(i)) };
                }
            };
            set_counters(&|i| 10 + i as u64);
            let object = fake.object();
            let (bytes, pages) = live_bytes(&object, page);
            let f = fake.format;
            let word_at =
                |b: &[u8], i: usize| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
            let (ids, num_data, before, num_counters, after) = (
                word_at(&bytes, 2) as usize,
                word_at(&bytes, 3) as usize,
                word_at(&bytes, 4) as usize,
                word_at(&bytes, 5) as usize,
                word_at(&bytes, 6) as usize,
            );
            let data = 8 * f.header_words + ids;
            let counters_at = data + num_data * f.record_size + before;
            let address = fake.counters.as_ptr() as usize;
            assert_eq!(num_counters, fake.counters.len());
            assert_eq!(
                counters_at % page,
                address % page,
                "counters congruent to their address"
            );
            assert_eq!(
                (counters_at + 8 * num_counters + after) % page,
                0,
                "padded to a page"
            );
            assert!(before < page && after < page);
            assert_eq!(pages.memory, address & !(page - 1));
            assert_eq!(pages.file_offset, counters_at - address % page);
            assert_eq!(pages.file_offset % page, 0);
            assert_eq!(
                pages.file_offset + pages.len,
                counters_at + 8 * num_counters + after
            );
            for (i, c) in fake.counters.iter().enumerate() {
                assert_eq!(word_at(&bytes[counters_at..], i), *c);
            }
            assert!(bytes[data + num_data * f.record_size..counters_at]
                .iter()
                .all(|&b| b == 0));
            let end = counters_at + 8 * num_counters;
            assert!(bytes[end..end + after].iter().all(|&b| b == 0));
            // The plain profile's header and records, but for the paddings
            // and the value sites.
            let plain = snapshot(&fake);
            for i in (0..f.header_words).filter(|&i| i != 4 && i != 6) {
                assert_eq!(word_at(&bytes, i), word_at(&plain, i), "header word {i}");
            }
            for r in 0..num_data {
                let (live, whole) = (
                    &bytes[data + r * f.record_size..],
                    &plain[data + r * f.record_size..],
                );
                let sites = f.num_value_sites..f.num_value_sites + 2 * f.value_kinds;
                assert!(
                    live[sites.clone()].iter().all(|&b| b == 0),
                    "record {r}'s value sites"
                );
                assert_eq!(live[..sites.start], whole[..sites.start], "record {r}");
                assert_eq!(
                    live[sites.end..f.record_size],
                    whole[sites.end..f.record_size],
                    "record {r}"
                );
            }
            let mut at = end + after;
            if let Some(index) = f.header_num_bitmap_bytes {
                at += (word_at(&bytes, index) as usize).next_multiple_of(8);
            }
            let names = word_at(&bytes, f.header_names_size) as usize;
            assert_eq!(&bytes[at..at + names], &fake.names[..]);
            assert_eq!(
                bytes.len(),
                at + names.next_multiple_of(8),
                "ends after the names"
            );
            // Counting goes on: only the counters' bytes change.
            set_counters(&|i| 3 * (10 + i as u64) + 1);
            let (again, pages_again) = live_bytes(&object, page);
            assert_eq!(pages_again, pages);
            assert_eq!(again[..counters_at], bytes[..counters_at]);
            assert_eq!(again[end..], bytes[end..]);
            for (i, c) in fake.counters.iter().enumerate() {
                assert_eq!(word_at(&again[counters_at..], i), *c);
            }
        }
    }
}

/// No page size but a power of two of 8 bytes or more.
#[test]
fn a_live_profile_needs_a_page_size_of_8_bytes_or_a_larger_power_of_two() {
    for bytes in [0usize, 1, 2, 4, 12, 4095, 4097] {
        assert_eq!(PageSize::new(bytes), None, "{bytes}");
    }
    for bytes in [8usize, 64, 4096, 1 << 21] {
        assert!(PageSize::new(bytes).is_some(), "{bytes}");
    }
}

/// An object without counters: no page, no padding.
#[test]
fn a_live_profile_without_counters_has_no_page() {
    let shapes = vec![FunctionShape {
        counters: 0,
        bitmap_bytes: 0,
        sites: [0, 0, 0],
    }];
    let fake = FakeObject::new(V10, shapes, 5, 0, Vec::new());
    let object = fake.object();
    let (bytes, pages) = live_bytes(&object, 4096);
    assert_eq!(pages.len, 0);
    let word_at = |i: usize| u64::from_ne_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
    assert_eq!((word_at(4), word_at(6)), (0, 0), "no padding");
}

/// Each page a live file takes is checked to be counter memory of its
/// object (`ProfiledObject::is_counter_page`), whatever the layout said:
/// the page after the counters, the one before, and any unaligned or
/// unrelated address are refused.
#[test]
fn only_the_objects_counter_pages_are_taken() {
    let mut rng = Rng::new(52);
    let page = PageSize::new(8).unwrap();
    for word in ALL_VERSIONS {
        let fake = FakeObject::new(
            word,
            random_shapes(&mut rng, 12),
            23,
            8,
            notes_with_build_id(&[7; 20]),
        );
        let object = fake.object();
        let pages = object.sections().counter_pages;
        let (start, end) = (pages.start() as usize, pages.start() as usize + pages.len());
        assert!(end > start, "the fake has counters");
        for address in (start..end).step_by(8) {
            assert!(object.is_counter_page(address, page), "{address:#x}");
        }
        assert!(!object.is_counter_page(end, page), "one page more");
        assert!(!object.is_counter_page(start - 8, page), "one page before");
        assert!(!object.is_counter_page(start + 4, page), "unaligned");
        assert!(!object.is_counter_page(usize::MAX & !7, page), "wraps");
        assert!(!object.is_counter_page(0, page), "elsewhere");
    }
}

/// A module's sections written at run time must lie in its writable data
/// (`ProfiledObject::unwritable_section`): the first one outside is named.
#[test]
fn sections_written_at_run_time_must_be_writable() {
    let mut rng = Rng::new(53);
    let fake = FakeObject::new(
        ALL_VERSIONS[0],
        random_shapes(&mut rng, 12),
        23,
        8,
        notes_with_build_id(&[7; 20]),
    );
    let object = fake.object();
    let s = object.sections();
    assert!(!s.counters.is_empty() && !s.values.is_empty() && !s.vnodes.is_empty());
    assert_eq!(object.unwritable_section(&(0..u64::MAX)), None);
    assert_eq!(object.unwritable_section(&(0..0)), Some("counters"));
    let only = |r: &SectionRange| r.start() as u64..r.start() as u64 + r.len() as u64;
    let after_counters = if s.bitmap.is_empty() {
        "value sites"
    } else {
        "bitmap"
    };
    assert_eq!(
        object.unwritable_section(&only(&s.counters)),
        Some(after_counters)
    );
    let counters = only(&s.counters);
    assert_eq!(
        object.unwritable_section(&(counters.start..counters.end - 1)),
        Some("counters"),
        "one byte short"
    );
}

/// Pages may be mapped only if they lie inside the counters' own pages
/// (`Sections::counter_pages`): a page that starts before the counters,
/// or ends past their padding, holds other data.
#[test]
fn live_pages_are_mapped_only_inside_the_counters_own_pages() {
    let at = |address: usize| address as *mut u8;
    let sections = |start: usize, len: usize| Sections {
        counter_pages: SectionRange::from_len(at(start), len),
        ..Sections::EMPTY
    };
    let pages = |memory: usize, len: usize| LivePages {
        file_offset: 0,
        memory,
        len,
    };
    let padded = sections(0x10000, 0x3000);
    assert!(pages(0x10000, 0x3000).only_counters(&padded));
    assert!(pages(0x10000, 0x1000).only_counters(&padded));
    assert!(
        !pages(0xf000, 0x2000).only_counters(&padded),
        "starts before"
    );
    assert!(!pages(0x10000, 0x4000).only_counters(&padded), "ends past");
    assert!(
        !pages(usize::MAX - 0xfff, 0x2000).only_counters(&padded),
        "wraps"
    );
    // Counters at 0x10008 that are not padded: their first page begins
    // with 8 bytes of something else.
    let unaligned = sections(0x10008, 0xff8);
    assert!(!pages(0x10000, 0x1000).only_counters(&unaligned));
    assert!(
        pages(0x10000, 0).only_counters(&unaligned),
        "no page, nothing shown"
    );
}
