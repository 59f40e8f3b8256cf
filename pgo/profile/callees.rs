// SPDX-License-Identifier: GPL-2.0

//! The functions of other objects that an object's indirect calls reach.
//!
//! `llvm-profdata` names an indirect-call target only by the data records
//! of the same raw profile: a function of another object (a module's
//! function that vmlinux calls through a pointer, or the reverse) is
//! counted but not named, and indirect-call promotion ignores it. A
//! profile names such a target with a record of the callee
//! ([`super::writer::Callee`]). What is here finds them: the targets of an
//! object's indirect-call sites that none of its own records names
//! ([`collect_targets`], [`drop_own_targets`]), and, for another object,
//! which of them are its functions and what their records say
//! ([`for_each_callee`]).
//!
//! # Retired addresses
//!
//! A target is an address, and code goes: a module's init text is freed
//! once its init function returned, all its text at its unload, and the
//! next module may be loaded there. An address that named one function
//! would then name another. So when code goes, every value that is one of
//! its addresses is renamed, in every object, to the function's
//! [`retired_address`]: an address in the user half, which no kernel code
//! has, derived from the function's name and hash, so the same for every
//! load of it. Records of gone functions carry it as their
//! `FunctionPointer` ([`function_address`]), so that `llvm-profdata` names
//! the renamed values by them. A later call to the reused address lists a
//! value of its own.
//!
//! The caller owns every buffer: the kernel fills them inside read-side
//! sections, where it cannot allocate.

use core::ops::Range;

use super::format::ProfileVersion;
use super::heapsort::heapsort_by_key;
use super::sections::{DataRecord, ProfiledObject};
use super::writer::Callee;

/// The bits of a retired address that are not its tag.
const RETIRED_MASK: u64 = (1 << 46) - 1;

/// The tag of every retired address (bit 46: in the user half of the
/// address space, where no kernel function is); alone, it is the retired
/// address of code that was not an instrumented function's entry.
pub const RETIRED_TAG: u64 = 1 << 46;

/// The address that names the function of `name_ref` and `func_hash` once
/// its code is gone: the same for every load of the function. Two
/// functions share one with a chance of 2^-46 per pair.
pub fn retired_address(name_ref: u64, func_hash: u64) -> u64 {
    // splitmix64's finalizer over both hashes: all bits mixed.
    let mut x = name_ref ^ func_hash.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    RETIRED_TAG | (x & RETIRED_MASK)
}

/// Whether `address` is a retired address.
pub fn is_retired(address: u64) -> bool {
    address & !RETIRED_MASK == RETIRED_TAG
}

/// The address that names the function of `record` in a profile: its
/// `FunctionPointer`, or its retired address if that lies in `retired`
/// (code that is gone).
pub(crate) fn function_address(
    record: &DataRecord,
    version: &ProfileVersion,
    retired: &Range<u64>,
) -> u64 {
    let layout = version.layout();
    let function = record.read_u64(layout.function_pointer_offset);
    if retired.contains(&function) {
        retired_address(
            record.read_u64(layout.name_ref_offset),
            record.read_u64(layout.func_hash_offset),
        )
    } else {
        function
    }
}

/// The retired address of the function of `object` at `address`, which is
/// about to go (with `address` in its code): that of the record whose
/// `FunctionPointer` it is, or [`RETIRED_TAG`] if none is (code that is no
/// instrumented function's entry).
pub fn retired_address_in(object: &ProfiledObject, address: u64) -> u64 {
    let Ok(version) = object.version() else {
        return RETIRED_TAG;
    };
    let all = 0..u64::MAX;
    for i in 0..object.num_records(&version) {
        let record = object.record(&version, i);
        let layout = version.layout();
        if record.read_u64(layout.function_pointer_offset) == address {
            return function_address(&record, &version, &all);
        }
    }
    RETIRED_TAG
}

/// The value kind of indirect-call targets (`IPVK_IndirectCallTarget`);
/// their sites come first in a record's list heads.
const INDIRECT_CALL: usize = 0;

/// Appends the target of every value listed at an indirect-call site of
/// `object` to `targets[*len..]`, advancing `*len`; returns false if there
/// was no room for all of them (those that fit are appended). A value is
/// the address the call went to; 0 is never one, since a node's value is
/// set before the node is linked.
pub fn collect_targets(object: &ProfiledObject, targets: &mut [u64], len: &mut usize) -> bool {
    let Ok(version) = object.version() else {
        return true;
    };
    for i in 0..object.num_records(&version) {
        let record = object.record(&version, i);
        for site in 0..record.value_sites(INDIRECT_CALL) {
            let mut node = record.site_head(site).and_then(|head| head.load());
            // A site lists at most the format's limit; the walk stops
            // there even if a race made the list longer.
            let mut listed = 0;
            while let Some(current) = node {
                if listed == super::format::MAX_VALUES_PER_SITE {
                    break;
                }
                let Some(slot) = targets.get_mut(*len) else {
                    return false;
                };
                *slot = current.value();
                *len += 1;
                listed += 1;
                node = current.next();
            }
        }
    }
    true
}

/// Sorts `targets` and keeps each once, and not 0; returns how many are
/// left, at the start.
pub fn sort_unique(targets: &mut [u64]) -> usize {
    heapsort_by_key(targets, |&target| target);
    let mut kept = 0;
    for i in 0..targets.len() {
        let target = targets[i];
        if target != 0 && (kept == 0 || targets[kept - 1] != target) {
            targets[kept] = target;
            kept += 1;
        }
    }
    kept
}

/// Removes from `targets` (sorted, unique, from [`sort_unique`]) those
/// that are functions of `object` itself, which its profile names already
/// (by their [`function_address`], `retired` being its code that is
/// gone); returns how many are left, at the start, still sorted.
pub fn drop_own_targets(
    object: &ProfiledObject,
    retired: &Range<u64>,
    targets: &mut [u64],
) -> usize {
    if let Ok(version) = object.version() {
        for i in 0..object.num_records(&version) {
            let function = function_address(&object.record(&version, i), &version, retired);
            if let Ok(at) = targets.binary_search(&function) {
                targets[at] = 0;
            }
        }
    }
    let mut kept = 0;
    for i in 0..targets.len() {
        if targets[i] != 0 {
            targets[kept] = targets[i];
            kept += 1;
        }
    }
    kept
}

/// What `record` says of its function, as a callee record repeats it,
/// named by `address`.
fn callee_of(record: &DataRecord, version: &ProfileVersion, address: u64) -> Callee {
    let layout = version.layout();
    let mut callee = Callee {
        name_ref: record.read_u64(layout.name_ref_offset),
        func_hash: record.read_u64(layout.func_hash_offset),
        function_pointer: address,
        num_counters: record.num_counters() as u32,
        value_sites: [0; super::format::MAX_VALUE_KINDS],
    };
    for (kind, sites) in callee
        .value_sites
        .iter_mut()
        .enumerate()
        .take(layout.value_kinds)
    {
        *sites = record.value_sites(kind) as u16;
    }
    callee
}

/// Calls `f(index, record, callee)` for each target `targets[index]`
/// (sorted, from [`sort_unique`]) that is the [`function_address`] of a
/// function of `object` (`retired` being its code that is gone), with the
/// index of that function's record in `object` and its callee record. An
/// object whose version differs from `version` (that of the object being
/// written) names nothing: its records are laid out otherwise.
pub fn for_each_callee(
    object: &ProfiledObject,
    version: &ProfileVersion,
    retired: &Range<u64>,
    targets: &[u64],
    mut f: impl FnMut(usize, usize, Callee),
) {
    if targets.is_empty() {
        return;
    }
    match object.version() {
        Ok(own) if own == *version => {}
        _ => return,
    }
    for i in 0..object.num_records(version) {
        let record = object.record(version, i);
        let address = function_address(&record, version, retired);
        if let Ok(index) = targets.binary_search(&address) {
            f(index, i, callee_of(&record, version, address));
        }
    }
}
