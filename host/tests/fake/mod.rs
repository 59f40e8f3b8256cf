// SPDX-License-Identifier: GPL-2.0

//! A synthetic instrumented object in heap memory, and an independent
//! reader of the raw profiles the core writes for it.
//!
//! Independent: every format fact here (magic, version flags, header words,
//! record size, field offsets, value kinds) is a literal copied from LLVM's
//! `InstrProfData.inc`, never the library's own tables, which these tests
//! judge. Lines cited are of LLVM 19's copy (raw version 10) at
//! `/usr/lib/llvm-19/lib/clang/19/include/profile/InstrProfData.inc` and
//! LLVM 16's (raw version 8) at
//! `/usr/lib/llvm-16/lib/clang/16/include/profile/InstrProfData.inc`;
//! raw version 9 is LLVM 18's `compiler-rt/include/profile/InstrProfData.inc`
//! (release/18.x; not installed here, its fields are named instead).

#![allow(dead_code)]

use std::sync::atomic::AtomicU64;

use kpgo::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};

/// `INSTR_PROF_RAW_MAGIC_64`, `"\xfflprofr\x81"` (19: line 703; 16: 642).
pub const RAW_MAGIC_64: u64 = 0xff6c_7072_6f66_7281;

/// `VARIANT_MASK_*` of the version word (19: lines 730-737; 16: 669-675,
/// where temporal profiling does not exist yet).
pub mod variant {
    pub const IR_PROF: u64 = 1 << 56;
    pub const CSIR_PROF: u64 = 1 << 57;
    pub const INSTR_ENTRY: u64 = 1 << 58;
    pub const DBG_CORRELATE: u64 = 1 << 59;
    pub const BYTE_COVERAGE: u64 = 1 << 60;
    pub const FUNCTION_ENTRY_ONLY: u64 = 1 << 61;
    pub const MEMPROF: u64 = 1 << 62;
    pub const TEMPORAL_PROF: u64 = 1 << 63;
}

/// `INSTR_PROF_RAW_VERSION` (19: line 711; 16: 651) with the IR flag, as
/// clang emits it for `-fprofile-generate`.
pub const V11: u64 = variant::IR_PROF | 11;
pub const V10: u64 = variant::IR_PROF | 10;
pub const V9: u64 = variant::IR_PROF | 9;
pub const V8: u64 = variant::IR_PROF | 8;

/// Every version word the core writes, for tests that hold for all.
pub const ALL_VERSIONS: [u64; 4] = [V11, V10, V9, V8];

/// One raw version's layout, as `InstrProfData.inc` defines it. Offsets are
/// those of the C struct the `INSTR_PROF_DATA` lines declare, on a 64-bit
/// target (`IntPtrT` is 8 bytes, natural alignment); header fields are
/// word indices of the `INSTR_PROF_RAW_HEADER` lines.
#[derive(Debug, PartialEq, Eq)]
pub struct RawFormat {
    pub version: u32,
    pub header_words: usize,
    pub record_size: usize,
    pub name_ref: usize,
    pub func_hash: usize,
    pub counter_ptr: usize,
    /// `BitmapPtr`, raw versions 9 and 10.
    pub bitmap_ptr: Option<usize>,
    pub function_pointer: usize,
    pub values: usize,
    pub num_counters: usize,
    /// `NumValueSites[IPVK_Last + 1]`, one `u16` per kind.
    pub num_value_sites: usize,
    /// `NumBitmapBytes`, raw versions 9 to 11.
    pub num_bitmap_bytes: Option<usize>,
    /// `UniformCounterPtr` and `OffloadDeviceWaveSize` (u16), raw version
    /// 11: 0 on a CPU.
    pub uniform_counter_ptr: Option<usize>,
    pub wave_size: Option<usize>,
    /// `IPVK_Last + 1`.
    pub value_kinds: usize,
    /// Header words after `PaddingBytesAfterCounters`, by name.
    pub header_num_bitmap_bytes: Option<usize>,
    pub header_padding_after_bitmap: Option<usize>,
    pub header_names_size: usize,
    pub header_counters_delta: usize,
    pub header_bitmap_delta: Option<usize>,
    pub header_names_delta: usize,
    /// `NumVTables` and `VNamesSize`: vtable sections this reader does not
    /// read, so it requires both zero.
    pub header_vtables: Option<[usize; 2]>,
    /// `NumUniformCounters`, `PaddingBytesAfterUniformCounters` and
    /// `UniformCountersDelta` (raw version 11): GPU targets' only, so this
    /// reader requires all three zero.
    pub header_uniform: Option<[usize; 3]>,
}

/// Raw version 11 (LLVM 23.1.4's `InstrProfData.inc`). Record: NameRef,
/// FuncHash, CounterPtr, UniformCounterPtr, BitmapPtr, FunctionPointer,
/// Values (8 bytes each, 0..56), NumCounters (u32, 56), NumValueSites[3]
/// (u16s, 60..66), OffloadDeviceWaveSize (u16, 66), NumBitmapBytes (u32,
/// 68): 72 bytes; clang 23's IR agrees (`@__profd_*` is a `{ i64, i64,
/// i64, i64, i64, ptr, ptr, i32, [3 x i16], i16, i32 }`). Header: version
/// 10's with NumUniformCounters, PaddingBytesAfterUniformCounters and
/// UniformCountersDelta after PaddingBytesAfterBitmapBytes: 19 words.
pub static RAW_V11: RawFormat = RawFormat {
    version: 11,
    header_words: 19,
    record_size: 72,
    name_ref: 0,
    func_hash: 8,
    counter_ptr: 16,
    bitmap_ptr: Some(32),
    function_pointer: 40,
    values: 48,
    num_counters: 56,
    num_value_sites: 60,
    num_bitmap_bytes: Some(68),
    uniform_counter_ptr: Some(24),
    wave_size: Some(66),
    value_kinds: 3,
    header_num_bitmap_bytes: Some(7),
    header_padding_after_bitmap: Some(8),
    header_names_size: 12,
    header_counters_delta: 13,
    header_bitmap_delta: Some(14),
    header_names_delta: 15,
    header_vtables: Some([16, 17]),
    header_uniform: Some([9, 10, 11]),
};

/// Raw version 10 (LLVM 19). Record, lines 74-95: NameRef, FuncHash,
/// CounterPtr, BitmapPtr, FunctionPointer, Values (8 bytes each, 0..48),
/// NumCounters (u32, 48), NumValueSites[3] (u16s, 52..58), NumBitmapBytes
/// (u32, aligned to 60): 64 bytes. Header, lines 154-171: 16 words.
/// Value kinds, lines 209-231: indirect call target, memop size, vtable
/// target; `IPVK_Last` is 2.
pub static RAW_V10: RawFormat = RawFormat {
    version: 10,
    header_words: 16,
    record_size: 64,
    name_ref: 0,
    func_hash: 8,
    counter_ptr: 16,
    bitmap_ptr: Some(24),
    function_pointer: 32,
    values: 40,
    num_counters: 48,
    num_value_sites: 52,
    num_bitmap_bytes: Some(60),
    uniform_counter_ptr: None,
    wave_size: None,
    value_kinds: 3,
    header_num_bitmap_bytes: Some(7),
    header_padding_after_bitmap: Some(8),
    header_names_size: 9,
    header_counters_delta: 10,
    header_bitmap_delta: Some(11),
    header_names_delta: 12,
    header_vtables: Some([13, 14]),
    header_uniform: None,
};

/// Raw version 9 (LLVM 18). Record (`INSTR_PROF_DATA`): NameRef,
/// FuncHash, CounterPtr, BitmapPtr, FunctionPointer, Values (8 bytes each,
/// 0..48), NumCounters (u32, 48), NumValueSites[2] (u16s, 52..56),
/// NumBitmapBytes (u32, 56): 60 bytes, 64 with the struct's alignment.
/// Header (`INSTR_PROF_RAW_HEADER`): Magic, Version, BinaryIdsSize,
/// DataSize, PaddingBytesBeforeCounters, CountersSize,
/// PaddingBytesAfterCounters, NumBitmapBytes, PaddingBytesAfterBitmapBytes,
/// NamesSize, CountersDelta, BitmapDelta, NamesDelta, ValueKindLast: 14
/// words. Value kinds: indirect call target and memop size (`IPVK_Last`
/// is 1). clang 18.1.6's IR agrees on the record: `@__profd_*` is a
/// `{ i64, i64, i64, i64, ptr, ptr, i32, [2 x i16], i32 }`.
pub static RAW_V9: RawFormat = RawFormat {
    version: 9,
    header_words: 14,
    record_size: 64,
    name_ref: 0,
    func_hash: 8,
    counter_ptr: 16,
    bitmap_ptr: Some(24),
    function_pointer: 32,
    values: 40,
    num_counters: 48,
    num_value_sites: 52,
    num_bitmap_bytes: Some(56),
    uniform_counter_ptr: None,
    wave_size: None,
    value_kinds: 2,
    header_num_bitmap_bytes: Some(7),
    header_padding_after_bitmap: Some(8),
    header_names_size: 9,
    header_counters_delta: 10,
    header_bitmap_delta: Some(11),
    header_names_delta: 12,
    header_vtables: None,
    header_uniform: None,
};

/// Raw version 8 (LLVM 16). Record, lines 72-90: NameRef, FuncHash,
/// CounterPtr, FunctionPointer, Values (8 bytes each, 0..40), NumCounters
/// (u32, 40), NumValueSites[2] (u16s, 44..48): 48 bytes. Header, lines
/// 128-141: 11 words. Value kinds, lines 179-188: indirect call target and
/// memop size; `IPVK_Last` is 1.
pub static RAW_V8: RawFormat = RawFormat {
    version: 8,
    header_words: 11,
    record_size: 48,
    name_ref: 0,
    func_hash: 8,
    counter_ptr: 16,
    bitmap_ptr: None,
    function_pointer: 24,
    values: 32,
    num_counters: 40,
    num_value_sites: 44,
    num_bitmap_bytes: None,
    uniform_counter_ptr: None,
    wave_size: None,
    value_kinds: 2,
    header_num_bitmap_bytes: None,
    header_padding_after_bitmap: None,
    header_names_size: 7,
    header_counters_delta: 8,
    header_bitmap_delta: None,
    header_names_delta: 9,
    header_vtables: None,
    header_uniform: None,
};

/// The layout of a version word: `GET_VERSION` keeps the low 32 bits (19:
/// lines 728-729; 16's, lines 667-668, keeps 56, which for the words clang
/// emits is the same number).
pub fn raw_format(word: u64) -> &'static RawFormat {
    match word & 0xffff_ffff {
        11 => &RAW_V11,
        10 => &RAW_V10,
        9 => &RAW_V9,
        8 => &RAW_V8,
        other => panic!("raw version {other}: the tests know only 8 to 11"),
    }
}

/// Writes `bytes` at byte `at` of `words`, in memory order.
pub fn write_bytes(words: &mut [u64], at: usize, bytes: &[u8]) {
    for (i, &byte) in bytes.iter().enumerate() {
        let (word, lane) = ((at + i) / 8, (at + i) % 8);
        let mut lanes = words[word].to_ne_bytes();
        lanes[lane] = byte;
        words[word] = u64::from_ne_bytes(lanes);
    }
}

/// Small deterministic PRNG (xorshift64*), so failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one function of the fake object has.
#[derive(Clone, Debug)]
pub struct FunctionShape {
    pub counters: usize,
    pub bitmap_bytes: usize,
    /// Value sites per kind.
    pub sites: [u16; 3],
}

/// Two functions: `first` counters and an indirect-call site, then 2
/// counters and no site (the relocated objects of `epochs` and `persist`).
#[allow(dead_code)]
pub fn two_functions(first: usize) -> Vec<FunctionShape> {
    vec![
        FunctionShape {
            counters: first,
            bitmap_bytes: 0,
            sites: [1, 0, 0],
        },
        FunctionShape {
            counters: 2,
            bitmap_bytes: 0,
            sites: [0, 0, 0],
        },
    ]
}

/// The memory of a fake object. Buffers are allocated once and never
/// resized, so the addresses handed to the descriptor stay valid.
pub struct FakeObject {
    /// The version word, as the compiler emits it.
    pub word: u64,
    pub format: &'static RawFormat,
    version_word: Box<u64>,
    pub data: Vec<u64>,
    pub counters: Vec<u64>,
    pub bitmap: Vec<u8>,
    pub names: Vec<u8>,
    pub nodes: Vec<u64>,
    /// The pool's reset baselines, one per node (the core's `NodePool`).
    pub baselines: Vec<AtomicU64>,
    pub heads: Vec<usize>,
    pub notes: Vec<u8>,
    pub shapes: Vec<FunctionShape>,
    /// Index of each function's first head in `heads`.
    pub first_head: Vec<usize>,
}

/// An ELF note area with one GNU build id (and one other note before it).
pub fn notes_with_build_id(id: &[u8]) -> Vec<u8> {
    let mut notes = Vec::new();
    let mut push_note = |kind: u32, name: &[u8], desc: &[u8]| {
        notes.extend_from_slice(&(name.len() as u32).to_ne_bytes());
        notes.extend_from_slice(&(desc.len() as u32).to_ne_bytes());
        notes.extend_from_slice(&kind.to_ne_bytes());
        notes.extend_from_slice(name);
        notes.resize(notes.len().next_multiple_of(4), 0);
        notes.extend_from_slice(desc);
        notes.resize(notes.len().next_multiple_of(4), 0);
    };
    push_note(
        1,
        b"GNU\0",
        &[0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
    );
    push_note(3, b"GNU\0", id);
    notes
}

impl FakeObject {
    pub fn new(
        word: u64,
        shapes: Vec<FunctionShape>,
        names_len: usize,
        node_capacity: usize,
        notes: Vec<u8>,
    ) -> Self {
        let format = raw_format(word);
        let record_words = format.record_size / 8;
        let total_counters: usize = shapes.iter().map(|s| s.counters).sum();
        let total_bitmap: usize = shapes.iter().map(|s| s.bitmap_bytes).sum();
        let total_heads: usize = shapes
            .iter()
            .map(|s| s.sites.iter().map(|&n| n as usize).sum::<usize>())
            .sum();
        let mut object = FakeObject {
            word,
            format,
            version_word: Box::new(word),
            data: vec![0; shapes.len() * record_words],
            counters: vec![0; total_counters],
            bitmap: vec![0; total_bitmap],
            names: (0..names_len).map(|i| b'a' + (i % 26) as u8).collect(),
            nodes: vec![0; node_capacity * 3],
            baselines: (0..node_capacity).map(|_| AtomicU64::new(0)).collect(),
            heads: vec![0; total_heads],
            notes,
            shapes: Vec::new(),
            first_head: Vec::new(),
        };
        let (mut counter, mut bitmap, mut head) = (0, 0, 0);
        for (i, shape) in shapes.iter().enumerate() {
            let record = object.record_addr(i);
            let site_count: usize = shape.sites[..format.value_kinds]
                .iter()
                .map(|&n| n as usize)
                .sum();
            let values = if site_count > 0 {
                object.heads.as_ptr().wrapping_add(head) as u64
            } else {
                0
            };
            let counter_addr = object.counters.as_ptr().wrapping_add(counter) as u64;
            let bitmap_addr = object.bitmap.as_ptr().wrapping_add(bitmap) as u64;
            let words = &mut object.data[i * record_words..(i + 1) * record_words];
            let mut put = |at: usize, bytes: &[u8]| write_bytes(words, at, bytes);
            put(format.name_ref, &(0x1000 + i as u64).to_ne_bytes());
            put(format.func_hash, &(0x2000 + i as u64).to_ne_bytes());
            // Relative to the record, as LLVM 19 and 16 emit them.
            let counter_delta = counter_addr.wrapping_sub(record as u64);
            put(format.counter_ptr, &counter_delta.to_ne_bytes());
            if let (Some(ptr), Some(len)) = (format.bitmap_ptr, format.num_bitmap_bytes) {
                let bitmap_delta = bitmap_addr.wrapping_sub(record as u64);
                put(ptr, &bitmap_delta.to_ne_bytes());
                put(len, &(shape.bitmap_bytes as u32).to_ne_bytes());
            }
            put(
                format.function_pointer,
                &(0x4000_0000 + i as u64).to_ne_bytes(),
            );
            put(format.values, &values.to_ne_bytes());
            put(format.num_counters, &(shape.counters as u32).to_ne_bytes());
            for (kind, &sites) in shape.sites[..format.value_kinds].iter().enumerate() {
                put(format.num_value_sites + 2 * kind, &sites.to_ne_bytes());
            }
            object.first_head.push(head);
            counter += shape.counters;
            bitmap += shape.bitmap_bytes;
            head += site_count;
        }
        object.shapes = shapes;
        object
    }

    fn range_of<T>(v: &[T]) -> SectionRange {
        let start = v.as_ptr() as *mut u8;
        SectionRange::from_len(start, std::mem::size_of_val(v))
    }

    /// The descriptor of this memory.
    pub fn object(&self) -> ProfiledObject {
        let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
        notes[0] = Self::range_of(&self.notes);
        let sections = Sections {
            data: Self::range_of(&self.data),
            counters: Self::range_of(&self.counters),
            counter_pages: Self::range_of(&self.counters),
            spare_counters: SectionRange::EMPTY,
            counter_bias: SectionRange::EMPTY,
            bitmap: Self::range_of(&self.bitmap),
            names: Self::range_of(&self.names),
            values: Self::range_of(&self.heads),
            vnodes: Self::range_of(&self.nodes),
            notes,
        };
        // SAFETY: all buffers live as long as `self`, are never resized,
        // and hold a consistent object built above; tests keep the object
        // no longer than `self`.
        let object = unsafe { ProfiledObject::new(sections, &*self.version_word) };
        self.attach_baselines(&object);
        object
    }

    /// Gives `object`, a descriptor of this memory, the fake's baselines.
    pub fn attach_baselines(&self, object: &ProfiledObject) {
        assert_eq!(object.node_capacity(), self.baselines.len());
        // SAFETY: one per node, zeroed at creation, living as long as
        // `self`, accessed only through atomics.
        let attached =
            unsafe { object.attach_baselines(self.baselines.as_ptr() as *mut AtomicU64) };
        assert!(attached);
    }

    /// The address of the version word.
    pub fn version_word(&self) -> *const u64 {
        &*self.version_word
    }

    /// Address of record `i`, as the hooks receive it.
    pub fn record_addr(&self, i: usize) -> usize {
        self.data.as_ptr() as usize + i * self.format.record_size
    }
}

/// The `{value, count}` pairs of each site of one value kind.
pub type SiteValues = Vec<Vec<(u64, u64)>>;

/// A raw profile as an independent reader sees it.
#[derive(Debug)]
pub struct Parsed {
    pub header: Vec<u64>,
    pub binary_ids: Vec<Vec<u8>>,
    pub data: Vec<u8>,
    pub counters: Vec<u64>,
    pub bitmap: Vec<u8>,
    pub names: Vec<u8>,
    /// Per record with value sites: per kind present, per site, the pairs.
    pub values: Vec<Vec<(u32, SiteValues)>>,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().unwrap())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
}

/// Reads a profile the way llvm-profdata does, checking every size and
/// padding rule; panics on the first inconsistency.
pub fn parse(bytes: &[u8], sites_per_record: &[[u16; 3]]) -> Parsed {
    assert_eq!(u64_at(bytes, 0), RAW_MAGIC_64, "magic");
    let format = raw_format(u64_at(bytes, 8));
    let header: Vec<u64> = (0..format.header_words)
        .map(|i| u64_at(bytes, 8 * i))
        .collect();
    // Words 2 to 6 are the same in both versions.
    let (ids_size, num_data, num_counters, counters_pad) =
        (header[2], header[3], header[5], header[6]);
    let word = |index: Option<usize>| index.map_or(0, |i| header[i]);
    let bitmap_bytes = word(format.header_num_bitmap_bytes);
    let bitmap_pad = word(format.header_padding_after_bitmap);
    let names_size = header[format.header_names_size];
    assert_eq!(header[4], 0, "padding before counters");
    assert_eq!(
        counters_pad as usize,
        (8 - (num_counters as usize * 8) % 8) % 8
    );
    assert_eq!(bitmap_pad as usize, (8 - bitmap_bytes as usize % 8) % 8);
    for index in format.header_vtables.into_iter().flatten() {
        assert_eq!(header[index], 0, "no vtable section (header word {index})");
    }
    for index in format.header_uniform.into_iter().flatten() {
        assert_eq!(
            header[index], 0,
            "no uniform counters (header word {index})"
        );
    }
    assert_eq!(
        *header.last().unwrap(),
        format.value_kinds as u64 - 1,
        "value kind last"
    );
    let mut at = 8 * format.header_words;
    let ids_end = at + ids_size as usize;
    let mut binary_ids = Vec::new();
    while at < ids_end {
        let len = u64_at(bytes, at) as usize;
        binary_ids.push(bytes[at + 8..at + 8 + len].to_vec());
        at += 8 + len + (8 - len % 8) % 8;
    }
    assert_eq!(at, ids_end, "binary ids size");
    let data_len = num_data as usize * format.record_size;
    let data = bytes[at..at + data_len].to_vec();
    at += data_len;
    let counters = (0..num_counters as usize)
        .map(|i| u64_at(bytes, at + 8 * i))
        .collect();
    at += num_counters as usize * 8 + counters_pad as usize;
    let bitmap = bytes[at..at + bitmap_bytes as usize].to_vec();
    at += (bitmap_bytes + bitmap_pad) as usize;
    let names = bytes[at..at + names_size as usize].to_vec();
    at += names_size as usize;
    assert!(
        bytes[at..at + (8 - names_size as usize % 8) % 8]
            .iter()
            .all(|&b| b == 0),
        "names padding"
    );
    at += (8 - names_size as usize % 8) % 8;
    let mut values = Vec::new();
    for sites in sites_per_record.iter().take(num_data as usize) {
        let kinds_present = sites[..format.value_kinds]
            .iter()
            .filter(|&&n| n > 0)
            .count();
        if kinds_present == 0 {
            continue;
        }
        let blob_start = at;
        let total = u32_at(bytes, at) as usize;
        assert_eq!(
            u32_at(bytes, at + 4) as usize,
            kinds_present,
            "kinds in blob"
        );
        assert_eq!(total % 8, 0, "blob size multiple of 8");
        at += 8;
        let mut kinds = Vec::new();
        for _ in 0..kinds_present {
            let kind = u32_at(bytes, at);
            let n = u32_at(bytes, at + 4) as usize;
            assert_eq!(n, sites[kind as usize] as usize, "sites of kind {kind}");
            let counts: Vec<usize> = bytes[at + 8..at + 8 + n]
                .iter()
                .map(|&c| c as usize)
                .collect();
            at += (8 + n).next_multiple_of(8);
            let mut per_site = Vec::new();
            for c in counts {
                per_site.push(
                    (0..c)
                        .map(|j| (u64_at(bytes, at + 16 * j), u64_at(bytes, at + 16 * j + 8)))
                        .collect(),
                );
                at += 16 * c;
            }
            kinds.push((kind, per_site));
        }
        assert_eq!(at - blob_start, total, "blob total size");
        values.push(kinds);
    }
    assert_eq!(at, bytes.len(), "profile ends after the last value blob");
    Parsed {
        header,
        binary_ids,
        data,
        counters,
        bitmap,
        names,
        values,
    }
}
