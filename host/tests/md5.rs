// SPDX-License-Identifier: GPL-2.0

//! The core's MD5 against RFC 1321's test suite and LLVM's `NameRef`.

use kpgo::profile::md5::{md5, name_ref};

fn hex(digest: [u8; 16]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn rfc1321_test_suite() {
    let cases: [(&[u8], &str); 7] = [
        (b"", "d41d8cd98f00b204e9800998ecf8427e"),
        (b"a", "0cc175b9c0f1b6a831c399e269772661"),
        (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
        (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        (
            b"abcdefghijklmnopqrstuvwxyz",
            "c3fcd3d76192e4007dfb496cca67e13b",
        ),
        (
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "d174ab98d277d9f5a5611c2c9f419d9f",
        ),
        (
            b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            hex(md5(input)),
            expected,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// Every length around the padding's block boundaries (55, 56, 63, 64,
/// 119, 120...), against digests computed by Python's hashlib.
#[test]
fn lengths_around_block_boundaries() {
    // hashlib.md5(bytes(range(n))).hexdigest() for these n.
    let cases: [(usize, &str); 8] = [
        (55, "6912ee65fff2d9f9ce2508cddf8bcda0"),
        (56, "51fdd1acda72405dfdfa03fcb85896d7"),
        (57, "5320ef4c17ef34a0cf2db763338d25eb"),
        (63, "48a6295221902e8e0938f773a7185e72"),
        (64, "b2d3f56bc197fd985d5965079b5e7148"),
        (65, "8bd7053801c768420faf816fadba971c"),
        (119, "1c772251899a7ff007400b888d6b2042"),
        (120, "b7ba1efc6022e9ed272f00b8831e26e6"),
    ];
    for (n, expected) in cases {
        let input: Vec<u8> = (0..n).map(|i| i as u8).collect();
        assert_eq!(hex(md5(&input)), expected, "length {n}");
    }
}

/// `NameRef`s of two data records of a real profile: blake2b_generic.ko
/// of the instrumented Debian cloud kernel (clang 19), a static function
/// (`file;name`) and a global one.
#[test]
fn name_refs_of_real_records() {
    assert_eq!(
        name_ref(b"crypto/blake2b_generic.c;crypto_blake2b_init"),
        0x215ad221bb259520
    );
    assert_eq!(name_ref(b"blake2b_compress_generic"), 0x861c1a70418eaba9);
}
