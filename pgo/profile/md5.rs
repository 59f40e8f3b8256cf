// SPDX-License-Identifier: GPL-2.0

//! MD5 (RFC 1321), as the raw profile format uses it to name functions.
//!
//! A data record names its function by `NameRef`: the first 8 bytes of the
//! MD5 digest of the function's PGO name (`file;name` for a static one),
//! read as a little-endian `u64` (LLVM's `IndexedInstrProf::ComputeHash`).
//! Finding the name of a record of another object, to name an
//! indirect-call target there, means hashing that object's names. MD5 is
//! what the format uses, not a choice of security.

/// Per-round shift amounts.
const SHIFTS: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, //
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, //
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, //
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// `floor(abs(sin(i + 1)) * 2^32)`.
const SINES: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, //
    0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, //
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, //
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, //
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, //
    0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8, //
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, //
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, //
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, //
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, //
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, //
    0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, //
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, //
    0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1, //
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, //
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// Block size in bytes.
const BLOCK: usize = 64;

/// The MD5 digest of `data`.
pub fn md5(data: &[u8]) -> [u8; 16] {
    let mut state = [0x67452301u32, 0xefcdab89, 0x98badcfe, 0x10325476];
    let mut blocks = data.chunks_exact(BLOCK);
    for block in &mut blocks {
        compress(&mut state, block);
    }
    // The rest, 0x80, zeros, and the length in bits: one block, or two
    // when fewer than 9 bytes are left after the rest.
    let rest = blocks.remainder();
    let mut tail = [0u8; 2 * BLOCK];
    let tail_len = if rest.len() < BLOCK - 8 {
        BLOCK
    } else {
        2 * BLOCK
    };
    for (slot, byte) in tail.iter_mut().zip(rest.iter().chain(&[0x80])) {
        *slot = *byte;
    }
    let bits = (data.len() as u64).wrapping_mul(8).to_le_bytes();
    for (slot, byte) in tail[tail_len - 8..tail_len].iter_mut().zip(bits) {
        *slot = byte;
    }
    for block in tail[..tail_len].chunks_exact(BLOCK) {
        compress(&mut state, block);
    }
    let mut digest = [0u8; 16];
    for (out, word) in digest.chunks_exact_mut(4).zip(state) {
        out.copy_from_slice(&word.to_le_bytes());
    }
    digest
}

/// The `NameRef` of the function whose PGO name is `name`.
pub fn name_ref(name: &[u8]) -> u64 {
    let digest = md5(name);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// One 64-byte block into `state`.
fn compress(state: &mut [u32; 4], block: &[u8]) {
    let mut words = [0u32; 16];
    for (word, bytes) in words.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let [mut a, mut b, mut c, mut d] = *state;
    for (i, (&shift, &sine)) in SHIFTS.iter().zip(&SINES).enumerate() {
        let (mixed, word) = match i / 16 {
            0 => ((b & c) | (!b & d), i),
            1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
            2 => (b ^ c ^ d, (3 * i + 5) % 16),
            _ => (c ^ (b | !d), (7 * i) % 16),
        };
        let sum = mixed
            .wrapping_add(a)
            .wrapping_add(sine)
            .wrapping_add(words[word]);
        a = d;
        d = c;
        c = b;
        b = b.wrapping_add(sum.rotate_left(shift));
    }
    for (word, add) in state.iter_mut().zip([a, b, c, d]) {
        *word = word.wrapping_add(add);
    }
}
