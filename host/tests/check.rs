// SPDX-License-Identifier: GPL-2.0

//! The check of untrusted sections (`ProfiledObject::new_checked`, what a
//! module's sections go through at load): well-formed objects pass, every
//! kind of malformed record is refused, the check writes nothing, and what
//! it accepts keeps hooks, reset and writer inside the object's sections.

mod fake;

use fake::{
    notes_with_build_id, variant, write_bytes, FakeObject, FunctionShape, RawFormat, Rng,
    ALL_VERSIONS, RAW_V11, V10, V11, V9,
};
use kpgo::profile::check::SectionError;
use kpgo::profile::format::FormatError;
use kpgo::profile::sections::{ProfiledObject, SectionRange, Sections};
use kpgo::profile::writer::{profile_size, serialize};

/// Bitmap bytes of a well-formed record of raw version `word`: a version
/// 9 record with any is refused (`a_version_9_record_with_bitmap_bytes_is_refused`).
fn bitmap_bytes(word: u64, bytes: usize) -> usize {
    if word & 0xffff_ffff == 9 {
        0
    } else {
        bytes
    }
}

fn shapes(rng: &mut Rng, word: u64, functions: usize) -> Vec<FunctionShape> {
    (0..functions)
        .map(|_| FunctionShape {
            counters: 1 + rng.below(5) as usize,
            bitmap_bytes: bitmap_bytes(word, rng.below(3) as usize),
            sites: [rng.below(3) as u16, rng.below(2) as u16, 0],
        })
        .collect()
}

/// A fake object whose every function has at least one value site.
fn object_with_sites(word: u64, functions: usize) -> FakeObject {
    let shapes = (0..functions)
        .map(|i| FunctionShape {
            counters: 2,
            bitmap_bytes: bitmap_bytes(word, 1),
            sites: [1 + (i % 2) as u16, 1, 0],
        })
        .collect();
    FakeObject::new(word, shapes, 8, 16, Vec::new())
}

/// Checks the fake's sections as a module's are checked.
fn checked(fake: &FakeObject) -> Result<ProfiledObject, SectionError> {
    checked_sections(fake, *fake.object().sections())
}

fn checked_sections(fake: &FakeObject, sections: Sections) -> Result<ProfiledObject, SectionError> {
    // SAFETY: the sections are `fake`'s buffers (or sub-ranges of them),
    // alive and unmoved while the tests use the object; only the core's
    // atomics and the test write them.
    let object = unsafe { ProfiledObject::new_checked(sections, fake.version_word()) }?;
    fake.attach_baselines(&object);
    Ok(object)
}

/// Every byte of every buffer of the fake.
fn memory(fake: &FakeObject) -> Vec<u8> {
    let mut bytes = Vec::new();
    for words in [&fake.data, &fake.counters, &fake.nodes] {
        bytes.extend(words.iter().flat_map(|w| w.to_ne_bytes()));
    }
    bytes.extend(fake.heads.iter().flat_map(|w| w.to_ne_bytes()));
    bytes.extend(&fake.bitmap);
    bytes.extend(&fake.names);
    bytes
}

/// Writes `bytes` at byte `offset` of record `record`.
fn patch(fake: &mut FakeObject, record: usize, offset: usize, bytes: &[u8]) {
    let at = record * fake.format.record_size + offset;
    let mut data: Vec<u8> = fake.data.iter().flat_map(|w| w.to_ne_bytes()).collect();
    data[at..at + bytes.len()].copy_from_slice(bytes);
    for (word, chunk) in fake.data.iter_mut().zip(data.chunks(8)) {
        *word = u64::from_ne_bytes(chunk.try_into().unwrap());
    }
}

fn read_u64(fake: &FakeObject, record: usize, offset: usize) -> u64 {
    let at = record * fake.format.record_size + offset;
    let data: Vec<u8> = fake.data.iter().flat_map(|w| w.to_ne_bytes()).collect();
    u64::from_ne_bytes(data[at..at + 8].try_into().unwrap())
}

fn layout(fake: &FakeObject) -> &'static RawFormat {
    fake.format
}

/// The whole profile of `object`, as the writer produces it.
fn profile(object: &ProfiledObject) -> Vec<u8> {
    let size = profile_size(object).unwrap();
    let mut buf = vec![0u8; size];
    assert_eq!(serialize(object, &mut buf), Ok(size));
    buf
}

/// A checked descriptor writes, byte for byte, the profile that the trusted
/// one wrote before the check (so the check changed nothing the profile
/// shows), and both keep writing the same once values are recorded.
#[test]
fn well_formed_objects_pass_and_profile_as_before() {
    for seed in 0..100 {
        let mut rng = Rng::new(seed);
        let word = ALL_VERSIONS[(seed / 3) as usize % ALL_VERSIONS.len()];
        let functions = rng.below(12) as usize;
        let shapes = shapes(&mut rng, word, functions);
        let notes = if seed % 3 == 0 {
            Vec::new()
        } else {
            notes_with_build_id(&rng.next().to_ne_bytes())
        };
        let mut fake = FakeObject::new(word, shapes, 9, 8, notes);
        // Counts and bitmap bytes as a module has them once it has run.
        fake.counters.iter_mut().for_each(|c| *c = rng.next());
        fake.bitmap.iter_mut().for_each(|b| *b = rng.next() as u8);
        let trusted = fake.object();
        let before = profile(&trusted);
        let object = checked(&fake).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(object.stats(), trusted.stats());
        assert_eq!(profile(&object), before, "seed {seed}: checked profile");
        // The hooks are enabled at once.
        for (i, shape) in fake.shapes.iter().enumerate() {
            if shape.sites[0] > 0 {
                assert!(object.record_target(fake.record_addr(i), 0, 7));
            }
        }
        assert_eq!(profile(&object), profile(&trusted), "seed {seed}: values");
    }
}

#[test]
fn each_kind_of_malformed_record_is_refused_and_nothing_is_written() {
    type Corruption = fn(&mut FakeObject) -> SectionError;
    let corruptions: [(&str, Corruption); 10] = [
        ("Values outside __llvm_prf_vals", |f| {
            let at = f.counters.as_ptr() as u64;
            patch(f, 1, layout(f).values, &at.to_ne_bytes());
            SectionError::Values { record: 1 }
        }),
        ("Values misaligned", |f| {
            let at = read_u64(f, 2, layout(f).values) + 4;
            patch(f, 2, layout(f).values, &at.to_ne_bytes());
            SectionError::Values { record: 2 }
        }),
        ("Values heads running past the section", |f| {
            let last = f.shapes.len() - 1;
            let at = read_u64(f, last, layout(f).values) + 8;
            patch(f, last, layout(f).values, &at.to_ne_bytes());
            SectionError::Values { record: last }
        }),
        ("more value sites than heads", |f| {
            let last = f.shapes.len() - 1;
            patch(f, last, layout(f).num_value_sites, &9u16.to_ne_bytes());
            SectionError::Values { record: last }
        }),
        ("Values far outside, wrapping", |f| {
            patch(f, 0, layout(f).values, &(u64::MAX - 7).to_ne_bytes());
            SectionError::Values { record: 0 }
        }),
        ("counters outside __llvm_prf_cnts", |f| {
            let delta = read_u64(f, 1, layout(f).counter_ptr).wrapping_sub(4096);
            patch(f, 1, layout(f).counter_ptr, &delta.to_ne_bytes());
            SectionError::Counters { record: 1 }
        }),
        ("more counters than the section holds", |f| {
            patch(f, 3, layout(f).num_counters, &1000u32.to_ne_bytes());
            SectionError::Counters { record: 3 }
        }),
        ("counters misaligned", |f| {
            let delta = read_u64(f, 0, layout(f).counter_ptr) + 1;
            patch(f, 0, layout(f).counter_ptr, &delta.to_ne_bytes());
            SectionError::Counters { record: 0 }
        }),
        ("a site head already set", |f| {
            f.heads[1] = f.nodes.as_ptr() as usize;
            SectionError::NotZero {
                section: "__llvm_prf_vals",
            }
        }),
        ("a node already in use", |f| {
            f.nodes[5] = 0xdead;
            SectionError::NotZero {
                section: "__llvm_prf_vnds",
            }
        }),
    ];
    for word in ALL_VERSIONS {
        for (what, corrupt) in corruptions {
            let mut fake = object_with_sites(word, 4);
            let want = corrupt(&mut fake);
            let before = memory(&fake);
            let result = checked(&fake);
            assert_eq!(result.err(), Some(want), "raw version {word:#x}: {what}");
            assert_eq!(memory(&fake), before, "{what}: nothing written");
        }
    }
}

#[test]
fn a_bitmap_outside_its_section_is_refused() {
    let mut fake = object_with_sites(V10, 3);
    let offset = layout(&fake).bitmap_ptr.unwrap();
    let delta = read_u64(&fake, 2, offset).wrapping_add(1 << 20);
    patch(&mut fake, 2, offset, &delta.to_ne_bytes());
    assert_eq!(
        checked(&fake).err(),
        Some(SectionError::Bitmap { record: 2 })
    );
    let mut fake = object_with_sites(V10, 3);
    let bytes = layout(&fake).num_bitmap_bytes.unwrap();
    patch(&mut fake, 1, bytes, &3u32.to_ne_bytes());
    assert_eq!(
        checked(&fake).err(),
        Some(SectionError::Bitmap { record: 1 })
    );
}

#[test]
fn malformed_sections_are_refused() {
    for word in ALL_VERSIONS {
        let fake = object_with_sites(word, 3);
        let good = *fake.object().sections();
        let size = layout(&fake).record_size;
        let mut sections = good;
        sections.data = SectionRange::from_len(good.data.start(), good.data.len() - 8);
        assert_eq!(
            checked_sections(&fake, sections).err(),
            Some(SectionError::DataNotWholeRecords {
                bytes: 3 * size - 8,
                record_size: size
            })
        );
        sections.data = SectionRange::from_len(good.data.start().wrapping_add(4), size);
        assert_eq!(
            checked_sections(&fake, sections).err(),
            Some(SectionError::DataMisaligned)
        );
        let mut sections = good;
        sections.vnodes = SectionRange::from_len(good.vnodes.start().wrapping_add(4), 48);
        assert_eq!(
            checked_sections(&fake, sections).err(),
            Some(SectionError::PoolMisaligned)
        );
        // Heads of the last record cut off by a shorter section.
        let mut sections = good;
        sections.values = SectionRange::from_len(good.values.start(), good.values.len() - 8);
        assert_eq!(
            checked_sections(&fake, sections).err(),
            Some(SectionError::Values { record: 2 })
        );
        // No counters section at all.
        let mut sections = good;
        sections.counters = SectionRange::EMPTY;
        assert_eq!(
            checked_sections(&fake, sections).err(),
            Some(SectionError::Counters { record: 0 })
        );
    }
}

#[test]
fn an_unsupported_version_is_refused() {
    let fake = object_with_sites(V10, 2);
    for word in [0u64, variant::IR_PROF | 12, V10 | variant::MEMPROF] {
        // SAFETY: `fake`'s sections, alive for the call.
        let result = unsafe { ProfiledObject::new_checked(*fake.object().sections(), &word) };
        assert!(
            matches!(result.err(), Some(SectionError::Version(_))),
            "word {word:#x}"
        );
    }
    // SAFETY: a null version word is allowed.
    let result = unsafe { ProfiledObject::new_checked(Sections::EMPTY, core::ptr::null()) };
    assert_eq!(
        result.err(),
        Some(SectionError::Version(FormatError::UnsupportedVersion(0)))
    );
}

#[test]
fn records_that_name_nothing_are_accepted_wherever_they_point() {
    // No counter, no bitmap byte and no site: the pointers name no memory.
    let shapes = vec![
        FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [0, 0, 0],
        };
        2
    ];
    let mut fake = FakeObject::new(V10, shapes, 4, 2, Vec::new());
    let l = layout(&fake);
    patch(&mut fake, 0, l.values, &0x1234_5678u64.to_ne_bytes());
    patch(&mut fake, 1, l.bitmap_ptr.unwrap(), &u64::MAX.to_ne_bytes());
    patch(&mut fake, 1, l.num_counters, &0u32.to_ne_bytes());
    patch(&mut fake, 1, l.counter_ptr, &u64::MAX.to_ne_bytes());
    assert!(checked(&fake).is_ok());
}

#[test]
fn the_empty_descriptor_owns_nothing() {
    let empty = ProfiledObject::empty();
    let fake = object_with_sites(V10, 2);
    for addr in [0, fake.record_addr(0), usize::MAX] {
        assert!(!empty.record_target(addr, 0, 1));
    }
    assert!(profile_size(&empty).is_err());
    assert_eq!(empty.stats().functions, 0);
}

/// What the check must decide, computed independently from the fake's
/// buffers: every field of every record against the buffers the
/// fake allocated for them.
fn oracle(fake: &FakeObject) -> bool {
    let l = layout(fake);
    let inside = |start: u64, len: u64, low: usize, bytes: usize, align: u64| {
        len == 0
            || (start % align == 0
                && start >= low as u64
                && start
                    .checked_add(len)
                    .is_some_and(|end| end <= (low + bytes) as u64))
    };
    let data: Vec<u8> = fake.data.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let u16_at = |at: usize| u16::from_ne_bytes(data[at..at + 2].try_into().unwrap()) as u64;
    let u32_at = |at: usize| u32::from_ne_bytes(data[at..at + 4].try_into().unwrap()) as u64;
    let u64_at = |at: usize| u64::from_ne_bytes(data[at..at + 8].try_into().unwrap());
    (0..fake.shapes.len()).all(|i| {
        let base = i * l.record_size;
        let addr = fake.record_addr(i) as u64;
        let counters = addr.wrapping_add(u64_at(base + l.counter_ptr));
        let counters_ok = inside(
            counters,
            8 * u32_at(base + l.num_counters),
            fake.counters.as_ptr() as usize,
            8 * fake.counters.len(),
            8,
        );
        let bitmap_ok = match (l.bitmap_ptr, l.num_bitmap_bytes) {
            (Some(ptr), Some(len)) => inside(
                addr.wrapping_add(u64_at(base + ptr)),
                u32_at(base + len),
                fake.bitmap.as_ptr() as usize,
                fake.bitmap.len(),
                1,
            ),
            _ => true,
        };
        let sites: u64 = (0..l.value_kinds)
            .map(|k| u16_at(base + l.num_value_sites + 2 * k))
            .sum();
        let values = u64_at(base + l.values);
        let values_ok = values == 0
            || inside(
                values,
                8 * sites,
                fake.heads.as_ptr() as usize,
                8 * fake.heads.len(),
                8,
            );
        // Version 9: no bitmap bytes (the hooks' view, see the check).
        let version_9_ok = fake.format.version != 9
            || l.num_bitmap_bytes.is_none_or(|len| u32_at(base + len) == 0);
        counters_ok && bitmap_ok && values_ok && version_9_ok
    })
}

/// Random corruption of the fields the hooks, reset and writer follow:
/// the check agrees with the oracle, and whatever it accepts is used
/// without touching anything but the heads and the pool.
#[test]
fn random_corruptions_are_judged_like_the_oracle_and_accepted_ones_stay_inside() {
    let mut refused = 0;
    for seed in 0..2000 {
        let mut rng = Rng::new(seed);
        let word = ALL_VERSIONS[seed as usize % ALL_VERSIONS.len()];
        let mut fake = object_with_sites(word, 1 + rng.below(5) as usize);
        let l = layout(&fake);
        let record = rng.below(fake.shapes.len() as u64) as usize;
        let mut fields = vec![
            (l.values, 8),
            (l.counter_ptr, 8),
            (l.num_counters, 4),
            (l.num_value_sites, 2 * l.value_kinds),
        ];
        if let (Some(ptr), Some(len)) = (l.bitmap_ptr, l.num_bitmap_bytes) {
            fields.extend([(ptr, 8), (len, 4)]);
        }
        let (offset, len) = fields[rng.below(fields.len() as u64) as usize];
        let at = rng.below(len as u64) as usize;
        // Small nudges (which may stay valid) or any byte value.
        let byte = if rng.below(2) == 0 {
            1u8 << rng.below(8)
        } else {
            rng.next() as u8
        };
        let mut data: Vec<u8> = fake.data.iter().flat_map(|w| w.to_ne_bytes()).collect();
        data[record * l.record_size + offset + at] ^= byte;
        patch(&mut fake, 0, 0, &data);
        let before = memory(&fake);
        let result = checked(&fake);
        assert_eq!(
            memory(&fake),
            before,
            "seed {seed}: the check writes nothing"
        );
        assert_eq!(
            result.is_ok(),
            oracle(&fake),
            "seed {seed}: {:?}",
            result.as_ref().err()
        );
        let Ok(object) = result else {
            refused += 1;
            continue;
        };
        let frozen = |f: &FakeObject| {
            (
                f.data.clone(),
                f.counters.clone(),
                f.bitmap.clone(),
                f.names.clone(),
            )
        };
        let fixed = frozen(&fake);
        for i in 0..fake.shapes.len() {
            for site in 0..12 {
                for value in 0..20 {
                    object.record_target(fake.record_addr(i), site, value % (3 + site as u64));
                }
            }
        }
        let size = profile_size(&object).unwrap();
        let mut buf = vec![0u8; size];
        assert_eq!(serialize(&object, &mut buf), Ok(size));
        object.reset().unwrap();
        let counters_after_reset = fake.counters.clone();
        assert!(counters_after_reset.iter().all(|&c| c == 0));
        let (data, _, _, names) = frozen(&fake);
        assert_eq!(
            (data, names),
            (fixed.0, fixed.3),
            "seed {seed}: records and names untouched"
        );
        // Heads hold only nodes of the pool.
        let pool =
            fake.nodes.as_ptr() as usize..fake.nodes.as_ptr() as usize + 8 * fake.nodes.len();
        assert!(fake.heads.iter().all(|&h| h == 0 || pool.contains(&h)));
    }
    assert!(refused > 500, "only {refused} corruptions refused");
}

#[test]
fn a_version_9_record_with_bitmap_bytes_is_refused() {
    // The hooks read a version 9 record through version 10's layout, whose
    // third site count is version 9's NumBitmapBytes: a module record with
    // bitmap bytes would have sites without heads there, and is refused;
    // the same record without bitmap bytes is taken, and so is a version
    // 10 record with them.
    for (word, bitmap_bytes, taken) in [(V9, 0, true), (V9, 4, false), (V10, 4, true)] {
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes,
            sites: [1, 0, 0],
        }];
        let fake = FakeObject::new(word, shapes, 1, 4, Vec::new());
        let result = checked(&fake);
        assert_eq!(
            result.is_ok(),
            taken,
            "{word:#x}, bitmap bytes {bitmap_bytes}"
        );
        if !taken {
            assert!(matches!(
                result.err(),
                Some(SectionError::BitmapInVersion9 { record: 0 })
            ));
        }
    }
}

#[test]
fn a_version_11_record_of_an_offload_target_is_refused() {
    // Uniform counters (`__llvm_prf_ucnts`) and a wave size come only with
    // GPU targets, whose uniform counters kpgo does not write: a record
    // with either is refused; with both 0 (as clang 23 emits for a CPU)
    // it is taken.
    for (field, value, taken) in [
        (RAW_V11.uniform_counter_ptr, 0u64, true),
        (RAW_V11.uniform_counter_ptr, 0x40, false),
        (RAW_V11.wave_size, 64, false),
    ] {
        let shapes = vec![FunctionShape {
            counters: 1,
            bitmap_bytes: 0,
            sites: [1, 0, 0],
        }];
        let mut fake = FakeObject::new(V11, shapes, 1, 4, Vec::new());
        let at = field.unwrap();
        // The wave size is a u16, the pointer a u64.
        let bytes = value.to_ne_bytes();
        let width = if Some(at) == RAW_V11.wave_size { 2 } else { 8 };
        write_bytes(&mut fake.data, at, &bytes[..width]);
        let result = checked(&fake);
        assert_eq!(result.is_ok(), taken, "field at {at} = {value:#x}");
        if !taken {
            assert_eq!(
                result.err(),
                Some(SectionError::UniformCounters { record: 0 })
            );
        }
    }
}
