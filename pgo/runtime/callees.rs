// SPDX-License-Identifier: GPL-2.0

//! Other objects' functions that an entry's indirect calls reached, named
//! in its profile (`profile::callees`, `writer::Callees`).
//!
//! For each object of the entry (its saved profiles, then the live one),
//! the targets of its indirect-call sites that none of its own records
//! names are looked up among all other objects: vmlinux, every live
//! module, every saved profile. A target is a function's address, or its
//! retired address once its code is gone (`profile::callees`: code that
//! goes renames the values that name it, in every object). Each target
//! found gets a callee record, and the profile carries the names of the
//! object it lives in: a module's names section, copied (the module may go
//! before the profile is written); of vmlinux's (hundreds of KiB, one zlib
//! chunk per translation unit), the chunks that hold the callees' names,
//! which an index built by the first such read tells
//! ([`VmlinuxNameChunks`]), or all of it where the index cannot.
//!
//! This runs when a profile is read, never in the hooks, and takes no
//! lock: the lookups and copies run in read sections, one per
//! entry read (hundreds of modules are not one section), the buffers are
//! allocated between them. An entry that changes between the
//! lookup and the copy of its names (a load, an unload, a reset) makes the
//! caller start again; one that is changing during the lookup names
//! nothing this time, and values recorded after the lookup are written
//! unnamed.

use core::ops::Range;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use kernel::prelude::*;

use super::kernel_api::{fatal_signal_pending, reschedule_point, sleep_a_while, Inflater};
use super::objects::vmlinux;
use super::registry::{for_each_profiled_object, Entry};
use crate::profile::callees::{collect_targets, drop_own_targets, for_each_callee, sort_unique};
use crate::profile::format::ProfileVersion;
use crate::profile::heapsort::heapsort_by_key;
use crate::profile::names::{chunk_at, locate_names, longest_chunk, NOT_LOCATED};
use crate::profile::writer::{static_bytes, Callee, Callees};

/// Where a target's function lives.
#[derive(Clone, Copy, Default)]
enum Owner {
    /// Nowhere that is profiled: no callee record.
    #[default]
    Unknown,
    /// vmlinux: the index of the function's record there.
    Vmlinux { record: usize },
    /// An object of a module's entry (live or saved): the entry, its
    /// change count then, the object's place in it, the bytes of its names
    /// section.
    Module {
        entry: &'static Entry,
        changes: usize,
        index: usize,
        names: usize,
    },
}

impl Owner {
    /// An order that groups the callees of one object together.
    fn key(&self) -> (usize, usize) {
        match self {
            Owner::Unknown => (0, 0),
            Owner::Vmlinux { .. } => (1, 0),
            Owner::Module { entry, index, .. } => (ptr::from_ref(*entry) as usize, *index),
        }
    }
}

/// A target and what names it.
#[derive(Clone, Copy, Default)]
struct Target {
    callee: Callee,
    owner: Owner,
}

/// The callees of one object of the entry.
#[derive(Clone, Default)]
struct Part {
    /// The object's version, if it has a valid one.
    version: Option<ProfileVersion>,
    /// Its targets that it does not name itself, in `name_callees`'
    /// targets.
    wanted: Range<usize>,
    /// Its callee records, in [`Named::records`]: those of the targets
    /// found, at the start of `wanted`.
    records: Range<usize>,
    /// The names that name them, in [`Named::names`]: the names sections
    /// of the module objects they live in, the chunks of vmlinux's.
    names: Range<usize>,
    /// The object's code that is gone (`Callees::retired`).
    retired: Range<u64>,
}

/// The callees of every object of an entry, in file order.
pub(crate) struct Named {
    parts: KVVec<Part>,
    records: KVVec<Callee>,
    names: KVVec<u8>,
}

impl Named {
    /// No callee for any object.
    pub(crate) fn none() -> Self {
        Self {
            parts: KVVec::new(),
            records: KVVec::new(),
            names: KVVec::new(),
        }
    }

    /// What the profile of the entry's `index`th object names besides its
    /// own functions; `slices` is room for its names.
    pub(crate) fn callees<'a>(
        &'a self,
        index: usize,
        slices: &'a mut [&'a [u8]; 1],
    ) -> Callees<'a> {
        let Some(part) = self.parts.get(index) else {
            return Callees::NONE;
        };
        slices[0] = self.names.get(part.names.clone()).unwrap_or(&[]);
        Callees {
            records: self.records.get(part.records.clone()).unwrap_or(&[]),
            names: &slices[..],
            retired: part.retired.clone(),
        }
    }
}

/// A vector of `len` default elements, built outside any read section,
/// that a section then fills by index (it cannot allocate).
fn filled<T: Clone + Default>(len: usize) -> Result<KVVec<T>> {
    let mut v = KVVec::with_capacity(len, GFP_KERNEL)?;
    v.extend_with(len, T::default(), GFP_KERNEL)?;
    Ok(v)
}

/// Looks the targets of each part of `entry` (`targets[part.wanted]`) up
/// among all other objects, one read-side section per entry: writes each
/// found into `found` (indexed as `targets`) and sets the part's
/// `records` to those found, compacted at the start of its range and
/// grouped by owner.
///
/// An object is itself by its place in `entry` (it names its own
/// functions): places move only with a change of the entry, after which
/// the caller starts again (`snapshot`).
fn look_up(entry: &Entry, parts: &mut [Part], targets: &[u64], found: &mut [Target]) {
    for_each_profiled_object(|other| {
        let in_vmlinux = ptr::eq(other.object, vmlinux());
        // A module changing now is named another time.
        let changes = match other.changes {
            Some(changes) => changes,
            None if in_vmlinux => 0,
            None => return,
        };
        let owner = |record| {
            if in_vmlinux {
                Owner::Vmlinux { record }
            } else {
                Owner::Module {
                    entry: other.entry,
                    changes,
                    index: other.index,
                    names: other.object.sections().names.len(),
                }
            }
        };
        for (index, part) in parts.iter().enumerate() {
            if ptr::eq(other.entry, entry) && other.index == index {
                continue;
            }
            let Some(version) = part.version else {
                continue;
            };
            let (Some(wanted), Some(found)) = (
                targets.get(part.wanted.clone()),
                found.get_mut(part.wanted.clone()),
            ) else {
                continue;
            };
            for_each_callee(
                other.object,
                &version,
                &other.retired,
                wanted,
                |i, record, callee| {
                    if let Some(slot) = found.get_mut(i) {
                        if matches!(slot.owner, Owner::Unknown) {
                            *slot = Target {
                                callee,
                                owner: owner(record),
                            };
                        }
                    }
                },
            );
        }
    });
    for part in parts.iter_mut() {
        let Some(found) = found.get_mut(part.wanted.clone()) else {
            continue;
        };
        let mut kept = 0;
        for i in 0..found.len() {
            if !matches!(found[i].owner, Owner::Unknown) {
                found[kept] = found[i];
                kept += 1;
            }
        }
        heapsort_by_key(&mut found[..kept], |target| target.owner.key());
        part.records = part.wanted.start..part.wanted.start + kept;
    }
}

/// Copies the names section of object `index` of `entry` into `to`, if
/// the entry is as it was at `changes` and the section is as long as
/// `to`.
fn copy_names(entry: &Entry, changes: usize, index: usize, to: &mut [u8]) -> bool {
    let section = entry.read_section();
    let mut copied = false;
    let mut i = 0;
    let _ = entry.for_each_object(&section, |object| {
        let names = &object.sections().names;
        if i == index && names.len() == to.len() {
            to.copy_from_slice(static_bytes(names, names.len()));
            copied = true;
        }
        i += 1;
        Ok::<(), ()>(())
    });
    copied && entry.unchanged_since(changes)
}

/// Which chunk of vmlinux's names section names each of its functions.
///
/// Built by the first read that names a function of vmlinux in another
/// object's profile, which inflates the section whole and hashes every
/// name once (600 ms of guest time under TCG on the test kernel); every
/// later read looks its callees' chunks up here. vmlinux's names never
/// change, so it is kept for the life of the kernel: 4 bytes per record
/// of vmlinux. One read builds it at a time: the others wait (sleeping)
/// rather than each hold a build's worth of memory.
///
/// # Invariants
///
/// `index` is null or comes from `KBox::into_raw` of a vector with at
/// most one entry per data record of vmlinux, each the offset of the chunk
/// that names the record's function or `NOT_LOCATED` (a record without an
/// entry is not located either); the vector is never written to or freed
/// after the pointer is stored.
struct VmlinuxNameChunks {
    index: AtomicPtr<KVVec<u32>>,
    /// Whether a read is building the index now.
    building: AtomicBool,
}

static VMLINUX_NAME_CHUNKS: VmlinuxNameChunks = VmlinuxNameChunks {
    index: AtomicPtr::new(ptr::null_mut()),
    building: AtomicBool::new(false),
};

impl VmlinuxNameChunks {
    /// The index, if a read built it.
    fn known(&self) -> Option<&'static [u32]> {
        let index = self.index.load(Ordering::Acquire);
        // SAFETY: non-null is a filled vector never written or freed again (type
        // invariant), published by the release store this acquire load pairs with.
        unsafe { index.as_ref() }.map(|index| &index[..])
    }

    /// The chunk offsets of vmlinux's records, built now if no read built
    /// them before. Where the caller may sleep; a fatal signal ends the
    /// wait or the build.
    fn get(&self) -> Result<&'static [u32]> {
        loop {
            if let Some(index) = self.known() {
                return Ok(index);
            }
            if self
                .building
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                let built = self.build();
                self.building.store(false, Ordering::Release);
                return built;
            }
            if fatal_signal_pending() {
                return Err(EINTR);
            }
            sleep_a_while();
        }
    }

    /// Builds the index and publishes it. Only by the read that set
    /// `building`.
    fn build(&self) -> Result<&'static [u32]> {
        let built = KBox::into_raw(KBox::new(locate_vmlinux_names()?, GFP_KERNEL)?);
        // INVARIANT: `built` comes from `KBox::into_raw` of a vector with
        // an entry per vmlinux record, filled, and from now on owned by
        // `index`, which never writes to it or frees it. Only the builder
        // stores, and `index` was null when it began (`get`).
        self.index.store(built, Ordering::Release);
        // SAFETY: as in `known`: just published.
        Ok(unsafe { &*built })
    }
}

/// The bytes of the index of vmlinux's names ([`VmlinuxNameChunks`]), 0
/// until a read built it (`pgo/stats`).
pub(crate) fn name_index_bytes() -> usize {
    VMLINUX_NAME_CHUNKS
        .known()
        .map_or(0, core::mem::size_of_val)
}

/// The offset of the chunk of vmlinux's names section that names each of
/// its records (`names::locate_names`). A chunk that cannot be read
/// leaves its records, and those of the chunks after it, `NOT_LOCATED`:
/// their profiles then carry the whole section, larger but never unnamed.
/// Reschedules between chunks; a fatal signal ends it (`EINTR`).
fn locate_vmlinux_names() -> Result<KVVec<u32>> {
    let object = vmlinux();
    let names = &object.sections().names;
    let names = static_bytes(names, names.len());
    let Ok(version) = object.version() else {
        return Ok(KVVec::new());
    };
    let records = object.num_records(&version);
    let mut by_name_ref = KVVec::with_capacity(records, GFP_KERNEL)?;
    for i in 0..records {
        let Ok(slot) = u32::try_from(i) else {
            break;
        };
        let name_ref = object
            .record(&version, i)
            .read_u64(version.layout().name_ref_offset);
        by_name_ref.push((name_ref, slot), GFP_KERNEL)?;
    }
    heapsort_by_key(&mut by_name_ref, |&(name_ref, _)| name_ref);
    let mut chunk_at = KVVec::with_capacity(records, GFP_KERNEL)?;
    chunk_at.extend_with(records, NOT_LOCATED, GFP_KERNEL)?;
    let mut inflater = Inflater::new()?;
    let mut scratch = filled::<u8>(longest_chunk(names))?;
    let mut interrupted = false;
    let walked = locate_names(
        names,
        &by_name_ref,
        &mut scratch,
        |input, out| {
            reschedule_point();
            interrupted |= fatal_signal_pending();
            if interrupted {
                return None;
            }
            inflater.inflate(input, out)
        },
        &mut chunk_at,
    );
    if interrupted {
        return Err(EINTR);
    }
    if let Err(error) = walked {
        pr_warn!(
            "vmlinux's names: {}: profiles that name its functions after it carry all of its names\n",
            format_args!("{error}")
        );
    }
    Ok(chunk_at)
}

/// The byte ranges of the chunks of vmlinux's names section `section` that
/// name the functions of vmlinux's `records` (the whole section if one of
/// them is not located), in section order, each once.
fn chunks_naming(section: &[u8], records: &[usize]) -> Result<KVVec<Range<usize>>> {
    // Without the memory for the index, the whole section (tried again by
    // the next read).
    let chunk_of = match VMLINUX_NAME_CHUNKS.get() {
        Err(error) if error == ENOMEM => &[][..],
        chunk_of => chunk_of?,
    };
    let mut each = KVVec::with_capacity(records.len(), GFP_KERNEL)?;
    for &record in records {
        let chunk = chunk_of
            .get(record)
            .filter(|&&at| at != NOT_LOCATED)
            .and_then(|&at| chunk_at(section, at as usize));
        let Some(chunk) = chunk else {
            let mut whole = KVVec::new();
            whole.push(0..section.len(), GFP_KERNEL)?;
            return Ok(whole);
        };
        each.push(chunk.at..chunk.at + chunk.bytes.len(), GFP_KERNEL)?;
    }
    heapsort_by_key(&mut each, |range| range.start);
    let mut chosen = KVVec::<Range<usize>>::with_capacity(each.len(), GFP_KERNEL)?;
    for range in each.iter() {
        if chosen.last() != Some(range) {
            chosen.push(range.clone(), GFP_KERNEL)?;
        }
    }
    Ok(chosen)
}

/// The callees of each object of `entry`, or `None` if an entry they
/// live in changed meanwhile (the caller starts again).
pub(crate) fn name_callees(entry: &Entry) -> Result<Option<Named>> {
    // How many values there are to look at, at most (nodes handed out).
    let (mut objects, mut nodes) = (0usize, 0usize);
    {
        let section = entry.read_section();
        entry.for_each_object(&section, |object| {
            objects += 1;
            nodes = nodes.saturating_add(object.pool.used());
            Ok::<(), Error>(())
        })?;
    }
    let mut targets = filled::<u64>(nodes)?;
    let mut parts = filled::<Part>(objects)?;

    // The targets of each object that it does not name itself, packed
    // one part after the other. An object or value that came since the
    // count above goes unnamed (no room for it); the entry's change count
    // tells the caller about the former.
    let (mut index, mut taken) = (0, 0);
    {
        let section = entry.read_section();
        entry.for_each_object_and_retired(&section, |object, retired| {
            let Some(part) = parts.get_mut(index) else {
                return Ok::<(), Error>(());
            };
            index += 1;
            part.retired = retired;
            part.version = object.version().ok();
            // Each part keeps its foreign targets where it took them,
            // and the next part takes from there on.
            let start = taken;
            collect_targets(object, &mut targets[..], &mut taken);
            let unique = sort_unique(&mut targets[start..taken]);
            let foreign =
                drop_own_targets(object, &part.retired, &mut targets[start..start + unique]);
            part.wanted = start..start + foreign;
            taken = start + foreign;
            Ok(())
        })?;
    }
    let wanted = taken;
    let mut found = filled::<Target>(wanted)?;
    if wanted > 0 {
        look_up(entry, &mut parts, &targets, &mut found);
    }

    // vmlinux's names chunks that each object needs.
    let vmlinux_names = {
        let names = &vmlinux().sections().names;
        static_bytes(names, names.len())
    };
    let mut chunks = KVVec::<(usize, Range<usize>)>::new();
    for (index, part) in parts.iter().enumerate() {
        let mut wanted = KVVec::new();
        for target in found.get(part.records.clone()).unwrap_or(&[]) {
            if let Owner::Vmlinux { record } = target.owner {
                wanted.push(record, GFP_KERNEL)?;
            }
        }
        if wanted.is_empty() {
            continue;
        }
        for range in chunks_naming(vmlinux_names, &wanted)?.iter() {
            chunks.push((index, range.clone()), GFP_KERNEL)?;
        }
    }

    // The module objects' names, each once per object that names some of
    // their functions, copied in a section of their own; then vmlinux's
    // chunks.
    let mut names_len = 0usize;
    for (index, part) in parts.iter_mut().enumerate() {
        let start = names_len;
        let mut last = (0, 0);
        for target in found.get(part.records.clone()).unwrap_or(&[]) {
            if let Owner::Module { names, .. } = target.owner {
                if target.owner.key() != last {
                    last = target.owner.key();
                    names_len = names_len.saturating_add(names);
                }
            }
        }
        for (_, range) in chunks.iter().filter(|(part, _)| *part == index) {
            names_len = names_len.saturating_add(range.len());
        }
        part.names = start..names_len;
    }
    let mut names = filled::<u8>(names_len)?;
    for part in parts.iter() {
        let mut at = part.names.start;
        let mut last = (0, 0);
        for target in found.get(part.records.clone()).unwrap_or(&[]) {
            let Owner::Module {
                entry,
                changes,
                index,
                names: len,
            } = target.owner
            else {
                continue;
            };
            if target.owner.key() == last {
                continue;
            }
            last = target.owner.key();
            let Some(to) = names.get_mut(at..at + len) else {
                return Ok(None);
            };
            reschedule_point();
            if !copy_names(entry, changes, index, to) {
                return Ok(None);
            }
            at += len;
        }
    }

    for (index, part) in parts.iter().enumerate() {
        // After the part's module names.
        let mut at = part.names.end;
        for (_, range) in chunks.iter().rev().filter(|(part, _)| *part == index) {
            at -= range.len();
            if let (Some(to), Some(from)) = (
                names.get_mut(at..at + range.len()),
                vmlinux_names.get(range.clone()),
            ) {
                to.copy_from_slice(from);
            }
        }
    }

    let total = parts.iter().map(|part| part.records.end).max().unwrap_or(0);
    let mut records = filled::<Callee>(total)?;
    for (record, target) in records.iter_mut().zip(found.iter()) {
        *record = target.callee;
    }
    Ok(Some(Named {
        parts,
        records,
        names,
    }))
}
