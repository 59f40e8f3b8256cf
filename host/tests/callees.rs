// SPDX-License-Identifier: GPL-2.0

//! Profiles that name other objects' functions (issue 29): the records,
//! counters, names and value blobs the writer adds for callees, checked
//! with the fake's own record layout and the reader's rules.

mod fake;

use fake::{parse, FakeObject, FunctionShape, ALL_VERSIONS};
use kpgo::profile::sink::{Measure, Sink, SliceSink};
use kpgo::profile::writer::{
    profile_size_bound_naming_in, serialize, write_profile_naming, Callee, Callees,
};

fn shapes(specs: &[(usize, [u16; 3])]) -> Vec<FunctionShape> {
    specs
        .iter()
        .map(|&(counters, sites)| FunctionShape {
            counters,
            bitmap_bytes: 0,
            sites,
        })
        .collect()
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes(bytes[at..at + 2].try_into().unwrap())
}

#[test]
fn callee_records_follow_the_object_s_own_and_change_nothing_of_it() {
    for word in ALL_VERSIONS {
        let own = shapes(&[(3, [1, 0, 0]), (2, [0, 0, 0]), (4, [2, 1, 0])]);
        let mut fake = FakeObject::new(word, own.clone(), 21, 8, Vec::new());
        let format = fake.format;
        for (i, c) in fake.counters.iter_mut().enumerate() {
            *c = 100 + i as u64;
        }
        let object = fake.object();
        let callees = [
            Callee {
                name_ref: 0xaaaa,
                func_hash: 0xbbbb,
                function_pointer: 0xffff_ffff_c000_1000,
                num_counters: 5,
                value_sites: [2, 1, 0],
            },
            Callee {
                name_ref: 0xcccc,
                func_hash: 0xdddd,
                function_pointer: 0xffff_ffff_c000_2000,
                num_counters: 1,
                value_sites: [0, 0, 0],
            },
        ];
        let chunk: &[u8] = b"\x05\x00g\x01h;i";
        let with = Callees {
            records: &callees,
            names: &[chunk],
        };

        let mut plain = vec![0u8; 1 << 16];
        let plain_len = serialize(&object, &mut plain).unwrap();
        plain.truncate(plain_len);
        let mut named = vec![0u8; 1 << 16];
        let mut sink = SliceSink::new(&mut named);
        write_profile_naming(&object, &with, &mut sink).unwrap();
        let named_len = sink.position();
        named.truncate(named_len);
        let bound = profile_size_bound_naming_in(&object, &with, &mut Measure::new()).unwrap();
        assert!(
            named_len <= bound,
            "v{}: {named_len} > bound {bound}",
            format.version
        );

        let mut sites: Vec<[u16; 3]> = own.iter().map(|s| s.sites).collect();
        let p0 = parse(&plain, &sites);
        sites.extend(callees.iter().map(|c| c.value_sites));
        let p = parse(&named, &sites);
        let n = own.len();
        assert_eq!(p.header[3] as usize, n + 2, "v{}: records", format.version);
        // The object's own parts, unchanged.
        assert_eq!(
            &p.data[..n * format.record_size],
            &p0.data[..],
            "own records"
        );
        assert_eq!(
            &p.counters[..p0.counters.len()],
            &p0.counters[..],
            "own counters"
        );
        assert_eq!(&p.names[..p0.names.len()], &p0.names[..], "own names");
        assert_eq!(&p.names[p0.names.len()..], chunk, "callee names after");
        assert_eq!(&p.values[..p0.values.len()], &p0.values[..], "own values");
        // Callee counters: zero, after the object's.
        assert_eq!(p.counters.len(), p0.counters.len() + 6);
        assert!(p.counters[p0.counters.len()..].iter().all(|&c| c == 0));
        // Each callee record, read with the fake's layout and the reader's
        // rule for CounterPtr.
        let counters_delta = p.header[format.header_counters_delta];
        let mut expected_at = p0.counters.len() as u64 * 8;
        for (j, callee) in callees.iter().enumerate() {
            let i = n + j;
            let r = &p.data[i * format.record_size..(i + 1) * format.record_size];
            assert_eq!(u64_at(r, format.name_ref), callee.name_ref);
            assert_eq!(u64_at(r, format.func_hash), callee.func_hash);
            assert_eq!(u64_at(r, format.function_pointer), callee.function_pointer);
            assert_eq!(u32_at(r, format.num_counters), callee.num_counters);
            for kind in 0..format.value_kinds {
                assert_eq!(
                    u16_at(r, format.num_value_sites + 2 * kind),
                    callee.value_sites[kind]
                );
            }
            let offset = u64_at(r, format.counter_ptr)
                .wrapping_sub(counters_delta.wrapping_sub((i * format.record_size) as u64));
            assert_eq!(
                offset, expected_at,
                "v{}: callee {j}'s counters",
                format.version
            );
            expected_at += 8 * u64::from(callee.num_counters);
            if let (Some(ptr), Some(len)) = (format.bitmap_ptr, format.num_bitmap_bytes) {
                let bitmap_delta = p.header[format.header_bitmap_delta.unwrap()];
                let bitmap_offset = u64_at(r, ptr)
                    .wrapping_sub(bitmap_delta.wrapping_sub((i * format.record_size) as u64));
                assert_eq!((bitmap_offset, u32_at(r, len)), (0, 0));
            }
        }
        // The first callee has sites: an empty blob (checked by parse);
        // the second has none: no blob.
        assert_eq!(p.values.len(), p0.values.len() + 1);
    }
}

#[test]
fn no_callee_is_the_plain_profile() {
    for word in ALL_VERSIONS {
        let fake = FakeObject::new(
            word,
            shapes(&[(2, [1, 1, 0]), (3, [0, 0, 0])]),
            9,
            4,
            Vec::new(),
        );
        let object = fake.object();
        let mut plain = vec![0u8; 1 << 14];
        let plain_len = serialize(&object, &mut plain).unwrap();
        let mut named = vec![0u8; 1 << 14];
        let mut sink = SliceSink::new(&mut named);
        write_profile_naming(&object, &Callees::NONE, &mut sink).unwrap();
        let named_len = sink.position();
        assert_eq!(&named[..named_len], &plain[..plain_len]);
    }
}
