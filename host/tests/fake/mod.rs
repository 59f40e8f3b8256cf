// SPDX-License-Identifier: GPL-2.0

//! A synthetic instrumented object in heap memory, and an independent
//! reader of the raw profiles the core writes for it.

#![allow(dead_code)]

use kpgo::profile::format::{variant, ProfileVersion, RAW_MAGIC_64};
use kpgo::profile::sections::{ProfiledObject, SectionRange, Sections, MAX_NOTE_RANGES};

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

/// The memory of a fake object. Buffers are allocated once and never
/// resized, so the addresses handed to the descriptor stay valid.
pub struct FakeObject {
    pub version: ProfileVersion,
    version_word: Box<u64>,
    pub data: Vec<u64>,
    pub counters: Vec<u64>,
    pub bitmap: Vec<u8>,
    pub names: Vec<u8>,
    pub nodes: Vec<u64>,
    pub heads: Vec<usize>,
    pub notes: Vec<u8>,
    pub shapes: Vec<FunctionShape>,
    /// Index of each function's first head in `heads`.
    pub first_head: Vec<usize>,
}

pub const V10: u64 = variant::IR_PROF | 10;
pub const V8: u64 = variant::IR_PROF | 8;

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
        let version = ProfileVersion::from_word(word).expect("test version");
        let layout = version.layout();
        let record_words = layout.record_size / 8;
        let total_counters: usize = shapes.iter().map(|s| s.counters).sum();
        let total_bitmap: usize = shapes.iter().map(|s| s.bitmap_bytes).sum();
        let total_heads: usize = shapes
            .iter()
            .map(|s| s.sites.iter().map(|&n| n as usize).sum::<usize>())
            .sum();
        let mut object = FakeObject {
            version,
            version_word: Box::new(word),
            data: vec![0; shapes.len() * record_words],
            counters: vec![0; total_counters],
            bitmap: vec![0; total_bitmap],
            names: (0..names_len).map(|i| b'a' + (i % 26) as u8).collect(),
            nodes: vec![0; node_capacity * 3],
            heads: vec![0; total_heads],
            notes,
            shapes: Vec::new(),
            first_head: Vec::new(),
        };
        let (mut counter, mut bitmap, mut head) = (0, 0, 0);
        for (i, shape) in shapes.iter().enumerate() {
            let record = object.data.as_mut_ptr().wrapping_add(i * record_words) as usize;
            let words = &mut object.data[i * record_words..(i + 1) * record_words];
            words[0] = 0x1000 + i as u64; // NameRef
            words[1] = 0x2000 + i as u64; // FuncHash
            let counter_addr = object.counters.as_ptr().wrapping_add(counter) as usize;
            words[2] = counter_addr.wrapping_sub(record) as u64;
            let site_count: usize = shape.sites[..layout.value_kinds]
                .iter()
                .map(|&n| n as usize)
                .sum();
            let values = if site_count > 0 {
                object.heads.as_ptr().wrapping_add(head) as u64
            } else {
                0
            };
            let mut bytes = [0u8; 16];
            bytes[..4].copy_from_slice(&(shape.counters as u32).to_ne_bytes());
            for k in 0..layout.value_kinds {
                bytes[4 + 2 * k..6 + 2 * k].copy_from_slice(&shape.sites[k].to_ne_bytes());
            }
            if layout.version == 10 {
                let bitmap_addr = object.bitmap.as_ptr().wrapping_add(bitmap) as usize;
                words[3] = bitmap_addr.wrapping_sub(record) as u64;
                words[4] = 0x4000_0000 + i as u64; // FunctionPointer
                words[5] = values;
                bytes[12..16].copy_from_slice(&(shape.bitmap_bytes as u32).to_ne_bytes());
                words[6] = u64::from_ne_bytes(bytes[..8].try_into().unwrap());
                words[7] = u64::from_ne_bytes(bytes[8..].try_into().unwrap());
            } else {
                words[3] = 0x4000_0000 + i as u64;
                words[4] = values;
                words[5] = u64::from_ne_bytes(bytes[..8].try_into().unwrap());
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
            bitmap: Self::range_of(&self.bitmap),
            names: Self::range_of(&self.names),
            values: Self::range_of(&self.heads),
            vnodes: Self::range_of(&self.nodes),
            notes,
        };
        // SAFETY: all buffers live as long as `self`, are never resized,
        // and hold a consistent object built above; tests keep the object
        // no longer than `self`.
        unsafe { ProfiledObject::new(sections, &*self.version_word) }
    }

    /// The address of the version word.
    pub fn version_word(&self) -> *const u64 {
        &*self.version_word
    }

    /// Address of record `i`, as the hooks receive it.
    pub fn record_addr(&self, i: usize) -> usize {
        self.data.as_ptr() as usize + i * self.version.layout().record_size
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
    let word = u64_at(bytes, 8);
    let version = ProfileVersion::from_word(word).expect("version");
    let layout = version.layout();
    let header: Vec<u64> = (0..layout.header_words)
        .map(|i| u64_at(bytes, 8 * i))
        .collect();
    let v10 = layout.version == 10;
    let (ids_size, num_data, num_counters, counters_pad) =
        (header[2], header[3], header[5], header[6]);
    let (bitmap_bytes, bitmap_pad, names_size) = if v10 {
        (header[7], header[8], header[9])
    } else {
        (0, 0, header[7])
    };
    assert_eq!(header[4], 0, "padding before counters");
    assert_eq!(
        counters_pad as usize,
        (8 - (num_counters as usize * 8) % 8) % 8
    );
    assert_eq!(bitmap_pad as usize, (8 - bitmap_bytes as usize % 8) % 8);
    assert_eq!(
        *header.last().unwrap(),
        layout.value_kinds as u64 - 1,
        "value kind last"
    );
    let mut at = 8 * layout.header_words;
    let ids_end = at + ids_size as usize;
    let mut binary_ids = Vec::new();
    while at < ids_end {
        let len = u64_at(bytes, at) as usize;
        binary_ids.push(bytes[at + 8..at + 8 + len].to_vec());
        at += 8 + len + (8 - len % 8) % 8;
    }
    assert_eq!(at, ids_end, "binary ids size");
    let data_len = num_data as usize * layout.record_size;
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
        let kinds_present = sites[..layout.value_kinds]
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
