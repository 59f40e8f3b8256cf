// SPDX-License-Identifier: GPL-2.0

//! The core's names-section walker, on a section clang wrote and on
//! sections made to break it.

use kpgo::profile::md5::name_ref;
use kpgo::profile::names::{
    chunk_at, chunks, for_each_name, locate_names, longest_chunk, Chunk, NamesError, NOT_LOCATED,
};

/// zlib's `uncompress` (the host's libz; the kernel inflates with its own
/// zlib), as the walker's inflater.
fn inflate(payload: &[u8], out: &mut [u8]) -> Option<usize> {
    #[link(name = "z")]
    extern "C" {
        fn uncompress(dest: *mut u8, dest_len: *mut u64, source: *const u8, source_len: u64)
            -> i32;
    }
    let mut len = out.len() as u64;
    // SAFETY: `out` has `len` writable bytes and `payload` is readable;
    // zlib writes at most `len` bytes and reports how many.
    let status = unsafe {
        uncompress(
            out.as_mut_ptr(),
            &mut len,
            payload.as_ptr(),
            payload.len() as u64,
        )
    };
    (status == 0).then_some(len as usize)
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// `__llvm_prf_names` of crc32c_intel.ko (clang 19, the instrumented
/// Debian cloud kernel): one compressed chunk.
const CRC32C_INTEL_NAMES: &str = "9005820178daa591d10ac2300c45f18374a020c23e2684346e61b12b5d0aeeef\
    2d147df2c1d4a7900b87704f248ac1630d45f940ca184b7aaf98691e9eb7eb40794fb6d64197331d251a2b4c5af8\
    4463cb209142cb4b0a689dec5deaf53e34c8c49b79d89649adefa7fc253f0551bb309f97ff9c6c6c0bef7e8e32fe\
    ee13e0fbfb5fe58aee20";

/// The NameRefs of that module's 13 data records.
const CRC32C_INTEL_NAME_REFS: [u64; 13] = [
    0xba915cad2292ca9e,
    0x5942c9f963816285,
    0xb0f0067036a9d874,
    0xeba0ab16df08b5f5,
    0xaad67b7832a06f95,
    0xf1654c070d49da03,
    0x71632665d68cccb4,
    0x509afcb29b65daff,
    0x2574bef86abbe6d0,
    0x589d7bcbec61f7ea,
    0x4836ed098f9c1464,
    0x3b33414ded38f4de,
    0x6e7f7da92991904b,
];

#[test]
fn every_record_of_a_real_module_is_named_once_by_its_section() {
    let section = unhex(&CRC32C_INTEL_NAMES.replace(' ', ""));
    let all: Vec<Chunk<'_>> = chunks(&section).collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), 1);
    assert!(all[0].compressed);
    assert_eq!(all[0].bytes.len(), section.len());
    let mut scratch = vec![0u8; 4096];
    let mut names = Vec::new();
    for_each_name(&all[0], &mut scratch, inflate, |name| {
        names.push(name.to_vec())
    })
    .unwrap();
    assert_eq!(names.len(), 13);
    assert_eq!(names[0], b"init_module");
    assert_eq!(
        names[2],
        b"arch/x86/crypto/crc32c-intel_glue.c;crc32c_pcl_intel_update"
    );
    for name_ref_of_record in CRC32C_INTEL_NAME_REFS {
        let matching = names
            .iter()
            .filter(|n| name_ref(n) == name_ref_of_record)
            .count();
        assert_eq!(matching, 1, "record {name_ref_of_record:#x}");
    }
}

/// An uncompressed chunk ("a;f", "g"), a compressed one, zero padding.
fn two_chunks(compressed: &[u8], names_len: u8) -> Vec<u8> {
    let mut section = vec![5, 0];
    section.extend_from_slice(b"a;f\x01g");
    section.extend_from_slice(&[names_len, compressed.len() as u8]);
    section.extend_from_slice(compressed);
    section.extend_from_slice(&[0, 0, 0]);
    section
}

fn deflate(data: &[u8]) -> Vec<u8> {
    #[link(name = "z")]
    extern "C" {
        fn compress(dest: *mut u8, dest_len: *mut u64, source: *const u8, source_len: u64) -> i32;
    }
    let mut out = vec![0u8; 256];
    let mut len = out.len() as u64;
    // SAFETY: `out` has `len` writable bytes, `data` is readable.
    assert_eq!(
        unsafe { compress(out.as_mut_ptr(), &mut len, data.as_ptr(), data.len() as u64) },
        0
    );
    out.truncate(len as usize);
    out
}

#[test]
fn chunks_in_order_each_whole_padding_ends_the_section() {
    let packed = deflate(b"h\x01i;j");
    let section = two_chunks(&packed, 5);
    let all: Vec<Chunk<'_>> = chunks(&section).collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        (all[0].at, all[0].compressed, all[0].names_len),
        (0, false, 5)
    );
    assert_eq!(all[0].bytes, &section[..7]);
    assert_eq!(
        (all[1].at, all[1].compressed, all[1].names_len),
        (7, true, 5)
    );
    assert_eq!(all[1].bytes.len(), 2 + packed.len());
    let mut names = Vec::new();
    let mut scratch = [0u8; 16];
    for chunk in &all {
        for_each_name(chunk, &mut scratch, inflate, |n| names.push(n.to_vec())).unwrap();
    }
    assert_eq!(names, [&b"a;f"[..], b"g", b"h", b"i;j"]);
    // Whole chunks copied after one another are a names section too.
    let mut copied = all[1].bytes.to_vec();
    copied.extend_from_slice(all[0].bytes);
    assert_eq!(chunks(&copied).count(), 2);
}

#[test]
fn bad_chunks_are_errors_not_panics() {
    let packed = deflate(b"h\x01i;j");
    // Cut inside the second chunk's payload: an error, then the end.
    let section = two_chunks(&packed, 5);
    let cut = &section[..9];
    let all: Vec<_> = chunks(cut).collect();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1], Err(NamesError::Truncated { at: 7 }));
    // A ULEB128 that never ends.
    assert_eq!(
        chunks(&[0x80; 12]).next(),
        Some(Err(NamesError::Truncated { at: 0 }))
    );
    // A compressed chunk claiming more names than it inflates to.
    let section = two_chunks(&packed, 6);
    let liar = chunks(&section).nth(1).unwrap().unwrap();
    let mut scratch = [0u8; 16];
    assert_eq!(
        for_each_name(&liar, &mut scratch, inflate, |_| {}),
        Err(NamesError::Inflate { at: 7 })
    );
    // No room for the names.
    let section = two_chunks(&packed, 5);
    let chunk = chunks(&section).nth(1).unwrap().unwrap();
    let mut small = [0u8; 4];
    assert_eq!(
        for_each_name(&chunk, &mut small, inflate, |_| {}),
        Err(NamesError::TooLong { at: 7, len: 5 })
    );
}

/// `locate_names` for `names`, in the order given: the offset of the
/// chunk of each, or `NOT_LOCATED`; and the walk's result.
fn locate(section: &[u8], names: &[&[u8]]) -> (Vec<u32>, Result<(), NamesError>) {
    let mut by_name_ref: Vec<(u64, u32)> = names
        .iter()
        .enumerate()
        .map(|(slot, n)| (name_ref(n), slot as u32))
        .collect();
    by_name_ref.sort();
    let mut scratch = vec![0u8; longest_chunk(section)];
    let mut at = vec![NOT_LOCATED; names.len()];
    let walked = locate_names(section, &by_name_ref, &mut scratch, inflate, &mut at);
    (at, walked)
}

#[test]
fn each_name_is_located_in_the_first_chunk_that_holds_it() {
    let packed = deflate(b"h\x01i;j\x01g");
    let section = two_chunks(&packed, 7);
    assert_eq!(longest_chunk(&section), 7);
    assert_eq!(
        longest_chunk(&section[..section.len() - 5]),
        5,
        "a cut chunk does not count: the walk stops before it"
    );
    let (at, walked) = locate(&section, &[b"g", b"i;j", b"a;f", b"h", b"nowhere"]);
    walked.unwrap();
    assert_eq!(
        at,
        [0, 7, 0, 7, NOT_LOCATED],
        "g is in both chunks: the first; i;j only in the compressed one"
    );
    // Two functions of one name (a collision): both located.
    let (at, _) = locate(&section, &[b"h", b"h"]);
    assert_eq!(at, [7, 7]);
    // What a chunk offset gives back: that chunk, whole.
    let first = chunks(&section).next().unwrap().unwrap();
    assert_eq!(chunk_at(&section, 0), Some(first));
    let second = chunk_at(&section, 7).unwrap();
    assert_eq!(
        (second.at, second.bytes),
        (7, &section[7..section.len() - 3])
    );
    assert_eq!(chunk_at(&section, section.len() - 3), None, "padding");
    assert!(second.compressed);
    assert_eq!(chunk_at(&section, section.len()), None, "past the end");
    assert_eq!(chunk_at(&section, 1_000_000), None);
    // A chunk that does not inflate is an error, not a silent skip; what
    // came before it is located.
    let liar = two_chunks(&packed, 8);
    let (at, walked) = locate(&liar, &[b"a;f", b"h"]);
    assert_eq!(walked, Err(NamesError::Inflate { at: 7 }));
    assert_eq!(at, [0, NOT_LOCATED]);
    // The module of a real kernel: every record's name is in its chunk.
    let real = unhex(&CRC32C_INTEL_NAMES.replace(' ', ""));
    let mut by_name_ref: Vec<(u64, u32)> = CRC32C_INTEL_NAME_REFS
        .iter()
        .enumerate()
        .map(|(slot, &n)| (n, slot as u32))
        .collect();
    by_name_ref.sort();
    let mut big = vec![0u8; longest_chunk(&real)];
    let mut at = vec![NOT_LOCATED; by_name_ref.len()];
    locate_names(&real, &by_name_ref, &mut big, inflate, &mut at).unwrap();
    assert!(at.iter().all(|&a| a == 0), "{at:?}");
}
