// SPDX-License-Identifier: GPL-2.0

//! Profiles that name other objects' functions (issue 29): the records,
//! counters, names and value blobs the writer adds for callees, checked
//! with the fake's own record layout and the reader's rules.

mod fake;

use fake::{parse, write_bytes, FakeObject, FunctionShape, ALL_VERSIONS};
use kpgo::profile::callees::{
    collect_targets, drop_own_targets, for_each_callee, is_retired, retired_address,
    retired_address_in, sort_unique, RETIRED_TAG,
};
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
            retired: 0..0,
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

/// Gives function `i` of `fake` the address `address`.
fn set_function_pointer(fake: &mut FakeObject, i: usize, address: u64) {
    let words = fake.format.record_size / 8;
    let at = fake.format.function_pointer;
    write_bytes(
        &mut fake.data[i * words..(i + 1) * words],
        at,
        &address.to_ne_bytes(),
    );
}

#[test]
fn targets_in_another_object_are_found_with_what_its_records_say() {
    for word in ALL_VERSIONS {
        // The caller: function 0 calls through a pointer (2 sites),
        // function 1 has a memop site only.
        let caller = FakeObject::new(
            word,
            shapes(&[(2, [2, 0, 0]), (1, [0, 1, 0])]),
            8,
            16,
            Vec::new(),
        );
        // The callee object: 3 functions elsewhere.
        let mut other = FakeObject::new(
            word,
            shapes(&[(1, [0, 0, 0]), (3, [1, 1, 0]), (2, [0, 0, 0])]),
            8,
            4,
            Vec::new(),
        );
        for i in 0..3 {
            set_function_pointer(&mut other, i, 0xffff_ffff_c000_0000 + 0x100 * i as u64);
        }
        let caller_object = caller.object();
        let other_object = other.object();
        let own = 0x4000_0001; // the caller's function 1
        let in_other = [0xffff_ffff_c000_0100u64, 0xffff_ffff_c000_0200];
        let unknown = 0xffff_ffff_8100_0000u64; // no record anywhere
        let record = caller.record_addr(0);
        for (site, value, times) in [
            (0, in_other[0], 3),
            (0, own, 2),
            (1, in_other[1], 1),
            (1, unknown, 4),
            (1, in_other[0], 1),
        ] {
            for _ in 0..times {
                assert!(caller_object.record_target(record, site, value));
            }
        }
        // A memop value of the same number as a target is no target.
        assert!(caller_object.record_memop(caller.record_addr(1), 0, 0x100));

        let mut targets = [0u64; 16];
        let mut len = 0;
        assert!(collect_targets(&caller_object, &mut targets, &mut len));
        assert_eq!(len, 5, "every listed indirect-call value, memops not");
        let mut small = [0u64; 3];
        let mut small_len = 0;
        assert!(
            !collect_targets(&caller_object, &mut small, &mut small_len),
            "no room is said"
        );
        assert_eq!(small_len, 3);
        let len = sort_unique(&mut targets[..len]);
        assert_eq!(&targets[..len], &[own, unknown, in_other[0], in_other[1]]);
        let len = drop_own_targets(&caller_object, &(0..0), &mut targets[..len]);
        assert_eq!(&targets[..len], &[unknown, in_other[0], in_other[1]]);

        let version = caller_object.version().unwrap();
        let mut found = Vec::new();
        for_each_callee(
            &other_object,
            &version,
            &(0..0),
            &targets[..len],
            |i, record, c| found.push((i, record, c)),
        );
        found.sort_by_key(|&(i, _, _)| i);
        assert_eq!(found.len(), 2, "v{}", caller.format.version);
        let kinds = caller.format.value_kinds;
        for (&(index, record, callee), function) in found.iter().zip([1usize, 2]) {
            assert_eq!(targets[index], in_other[function - 1]);
            assert_eq!(record, function, "the callee's record in its object");
            assert_eq!(callee.function_pointer, targets[index]);
            assert_eq!(callee.name_ref, 0x1000 + function as u64);
            assert_eq!(callee.func_hash, 0x2000 + function as u64);
            assert_eq!(
                callee.num_counters as usize,
                other.shapes[function].counters
            );
            assert_eq!(
                &callee.value_sites[..kinds],
                &other.shapes[function].sites[..kinds]
            );
        }
        // Retired code names nothing: its address may be another
        // function's now.
        let mut after_retire = 0;
        for_each_callee(
            &other_object,
            &version,
            &(0xffff_ffff_c000_0100..0xffff_ffff_c000_0200),
            &targets[..len],
            |_, _, _| after_retire += 1,
        );
        assert_eq!(after_retire, 1);
    }
}

#[test]
fn heapsort_sorts_as_the_standard_sort_does() {
    let mut rng = fake::Rng::new(29);
    for len in [0usize, 1, 2, 3, 7, 64, 1000] {
        let mut v: Vec<u64> = (0..len).map(|_| rng.below(50)).collect();
        let mut expected = v.clone();
        expected.sort();
        kpgo::profile::heapsort::heapsort_by_key(&mut v, |&x| x);
        assert_eq!(v, expected, "{len} items");
        let mut unique = expected.clone();
        unique.dedup();
        unique.retain(|&x| x != 0);
        let kept = sort_unique(&mut v);
        assert_eq!(&v[..kept], &unique[..], "sort_unique of {len}");
    }
}

#[test]
fn code_that_goes_is_renamed_to_its_retired_addresses_everywhere_it_is_named() {
    for word in ALL_VERSIONS {
        // A caller whose one site reached two functions of `gone` and one
        // of vmlinux, and a memop site with a size equal to an address.
        let caller = FakeObject::new(word, shapes(&[(1, [1, 1, 0])]), 8, 8, Vec::new());
        let mut gone = FakeObject::new(
            word,
            shapes(&[(1, [0, 0, 0]), (2, [0, 0, 0])]),
            8,
            2,
            Vec::new(),
        );
        let text = 0xffff_ffff_c000_0000u64..0xffff_ffff_c000_1000;
        set_function_pointer(&mut gone, 0, text.start + 0x10);
        set_function_pointer(&mut gone, 1, text.start + 0x80);
        let (caller_object, gone_object) = (caller.object(), gone.object());
        let record = caller.record_addr(0);
        let vmlinux_function = 0xffff_ffff_8123_4560;
        for (value, times) in [
            (text.start + 0x10, 2),
            (text.start + 0x80, 1),
            (text.start + 0x44, 1), // inside, no function's entry
            (vmlinux_function, 3),
        ] {
            for _ in 0..times {
                assert!(caller_object.record_target(record, 0, value));
            }
        }
        assert!(caller_object.record_memop(record, 1, 64));

        let renamed =
            caller_object.rename_values(&text, |address| retired_address_in(&gone_object, address));
        assert_eq!(renamed, 3);
        let bytes = {
            let mut b = vec![0u8; 1 << 14];
            let n = serialize(&caller_object, &mut b).unwrap();
            b.truncate(n);
            b
        };
        let parsed = parse(&bytes, &[[1, 1, 0]]);
        let site = &parsed.values[0][0].1[0];
        let want = [
            (retired_address(0x1000, 0x2000), 2),
            (retired_address(0x1001, 0x2001), 1),
            (RETIRED_TAG, 1),
            (vmlinux_function, 3),
        ];
        assert_eq!(site.as_slice(), &want[..], "v{}", caller.format.version);
        assert!(want[..3].iter().all(|&(v, _)| is_retired(v)));
        assert!(!is_retired(vmlinux_function) && !is_retired(64));
        // A later call to the reused address lists a value of its own.
        assert!(caller_object.record_target(record, 0, text.start + 0x10));
        let mut targets = [0u64; 8];
        let mut len = 0;
        assert!(collect_targets(&caller_object, &mut targets, &mut len));
        assert_eq!(len, 5);

        // The records of gone functions carry their retired addresses,
        // so that the renamed values name them: in a callee record, and
        // in the profile of the object itself (a module's freed init
        // text, `Callees::retired`).
        let version = gone_object.version().unwrap();
        let len = sort_unique(&mut targets[..len]);
        let mut named = Vec::new();
        for_each_callee(&gone_object, &version, &text, &targets[..len], |i, _, c| {
            named.push((targets[i], c.function_pointer))
        });
        named.sort();
        let mut expected = vec![(want[0].0, want[0].0), (want[1].0, want[1].0)];
        expected.sort();
        assert_eq!(named, expected);
        let mut own = vec![0u8; 1 << 14];
        let mut sink = SliceSink::new(&mut own);
        let retiring = Callees {
            retired: text.clone(),
            ..Callees::NONE
        };
        write_profile_naming(&gone_object, &retiring, &mut sink).unwrap();
        let n = sink.position();
        let own = parse(&own[..n], &[[0, 0, 0], [0, 0, 0]]);
        let size = gone.format.record_size;
        for i in 0..2 {
            let r = &own.data[i * size..(i + 1) * size];
            assert_eq!(
                u64_at(r, gone.format.function_pointer),
                retired_address(0x1000 + i as u64, 0x2000 + i as u64)
            );
            assert_eq!(u64_at(r, gone.format.name_ref), 0x1000 + i as u64);
        }
        let mut plain = vec![0u8; 1 << 14];
        let plain_len = serialize(&gone_object, &mut plain).unwrap();
        assert_eq!(plain_len, n, "the same size");
    }
}
