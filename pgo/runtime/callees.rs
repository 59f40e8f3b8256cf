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
//! found by inflating each chunk and hashing its names, or all of it if
//! that fails.
//!
//! This runs when a profile is read, never in the hooks, and takes no
//! lock: the lookups and copies run in RCU read-side sections, the
//! buffers are allocated between them. An entry that changes between the
//! lookup and the copy of its names (a load, an unload, a reset) makes the
//! caller start again; one that is changing during the lookup names
//! nothing this time, and values recorded after the lookup are written
//! unnamed.

use core::ops::Range;
use core::ptr;

use kernel::prelude::*;

use super::kernel_api::{Inflater, ReadSection};
use super::objects::vmlinux;
use super::registry::{for_each_profiled_object, Entry};
use crate::profile::callees::{collect_targets, drop_own_targets, for_each_callee, sort_unique};
use crate::profile::heapsort::heapsort_by_key;
use crate::profile::names::{for_each_chunk_naming, longest_chunk};
use crate::profile::sections::ProfiledObject;
use crate::profile::writer::{static_bytes, Callee, Callees};

/// Where a target's function lives.
#[derive(Clone, Copy, Default)]
enum Owner {
    /// Nowhere that is profiled: no callee record.
    #[default]
    Unknown,
    /// vmlinux.
    Vmlinux,
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
            Owner::Vmlinux => (1, 0),
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
    /// Its callee records, in [`Named::records`].
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

/// Looks the targets `wanted` of `object` up among all other objects;
/// writes each found into `found` (as long as `wanted`) and returns how
/// many, compacted at the start of `found`.
fn look_up(
    section: &ReadSection,
    object: &ProfiledObject,
    wanted: &[u64],
    found: &mut [Target],
) -> usize {
    let Ok(version) = object.version() else {
        return 0;
    };
    if wanted.is_empty() {
        return 0;
    }
    for slot in found.iter_mut() {
        *slot = Target::default();
    }
    for_each_profiled_object(section, |other| {
        if ptr::eq(other.object, object) {
            return;
        }
        let owner = if ptr::eq(other.object, vmlinux()) {
            Owner::Vmlinux
        } else if let Some(changes) = other.changes {
            Owner::Module {
                entry: other.entry,
                changes,
                index: other.index,
                names: other.object.sections().names.len(),
            }
        } else {
            // Changing: named another time.
            return;
        };
        for_each_callee(
            other.object,
            &version,
            &other.retired,
            wanted,
            |i, callee| {
                if let Some(slot) = found.get_mut(i) {
                    if matches!(slot.owner, Owner::Unknown) {
                        *slot = Target { callee, owner };
                    }
                }
            },
        );
    });
    let mut kept = 0;
    for i in 0..found.len() {
        if !matches!(found[i].owner, Owner::Unknown) {
            found[kept] = found[i];
            kept += 1;
        }
    }
    kept
}

/// Copies the names section of object `index` of `entry` into `to`, if
/// the entry is as it was at `changes` and the section is as long as
/// `to`.
fn copy_names(
    section: &ReadSection,
    entry: &Entry,
    changes: usize,
    index: usize,
    to: &mut [u8],
) -> bool {
    let mut copied = false;
    let mut i = 0;
    let _ = entry.for_each_object(section, |object| {
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

/// What finds the chunks of vmlinux's names section that name functions.
struct ChunkChooser {
    inflater: Inflater,
    /// Room for the longest chunk's names.
    scratch: KVVec<u8>,
}

impl ChunkChooser {
    fn new(section: &[u8]) -> Result<Self> {
        let longest = longest_chunk(section).unwrap_or(0);
        Ok(Self {
            inflater: Inflater::new()?,
            scratch: filled(longest)?,
        })
    }

    /// The byte ranges of the chunks of `section` that hold the names of
    /// `wanted` (sorted `NameRef`s); the whole section if a chunk cannot
    /// be read (the profile is then larger, never unnamed).
    fn choose(&mut self, section: &[u8], wanted: &[u64]) -> Result<KVVec<Range<usize>>> {
        let mut chosen = KVVec::new();
        let mut no_memory = false;
        let Self { inflater, scratch } = self;
        let walked = for_each_chunk_naming(
            section,
            wanted,
            scratch,
            |input, out| inflater.inflate(input, out),
            |chunk| {
                let range = chunk.at..chunk.at + chunk.bytes.len();
                no_memory |= chosen.push(range, GFP_KERNEL).is_err();
            },
        );
        if no_memory {
            return Err(ENOMEM);
        }
        if walked.is_err() {
            let mut whole = KVVec::new();
            whole.push(0..section.len(), GFP_KERNEL)?;
            return Ok(whole);
        }
        Ok(chosen)
    }
}

/// The callees of each object of `entry`, or `None` if an entry they
/// live in changed meanwhile (the caller starts again).
pub(crate) fn name_callees(entry: &Entry) -> Result<Option<Named>> {
    // How many values there are to look at, at most (nodes handed out).
    let (mut objects, mut nodes) = (0usize, 0usize);
    {
        let section = ReadSection::enter();
        entry.for_each_object(&section, |object| {
            objects += 1;
            nodes = nodes.saturating_add(object.pool.used());
            Ok::<(), Error>(())
        })?;
    }
    let mut targets = filled::<u64>(nodes)?;
    let mut found = filled::<Target>(nodes)?;
    let mut parts = filled::<Part>(objects)?;

    // The lookups. An object or value that came since the count above
    // goes unnamed (no room for it); the entry's change count tells the
    // caller about the former.
    {
        let section = ReadSection::enter();
        let retired = entry.retired_text(&section);
        let (mut index, mut taken, mut named) = (0, 0, 0);
        entry.for_each_object(&section, |object| {
            let Some(part) = parts.get_mut(index) else {
                return Ok::<(), Error>(());
            };
            index += 1;
            // Only the live object has code that is partly gone.
            if entry
                .live(&section)
                .is_some_and(|live| ptr::eq(live, object))
            {
                part.retired = retired.clone();
            }
            let start = taken;
            collect_targets(object, &mut targets[..], &mut taken);
            let unique = sort_unique(&mut targets[start..taken]);
            let foreign =
                drop_own_targets(object, &part.retired, &mut targets[start..start + unique]);
            let wanted = &targets[start..start + foreign];
            // Within `found`: `named <= start`, since each object names
            // at most its own targets, and `start + foreign <= nodes`.
            let Some(room) = found.get_mut(named..named + foreign) else {
                return Ok(());
            };
            let kept = look_up(&section, object, wanted, room);
            let Some(callees) = room.get_mut(..kept) else {
                return Ok(());
            };
            heapsort_by_key(callees, |target| target.owner.key());
            part.records = named..named + kept;
            named += kept;
            Ok(())
        })?;
    }

    // vmlinux's names chunks that each object needs.
    let vmlinux_names = {
        let names = &vmlinux().sections().names;
        static_bytes(names, names.len())
    };
    let mut chunks = KVVec::<(usize, Range<usize>)>::new();
    let mut chooser = None;
    for (index, part) in parts.iter().enumerate() {
        let mut wanted = KVVec::new();
        for target in &found[part.records.clone()] {
            if matches!(target.owner, Owner::Vmlinux) {
                wanted.push(target.callee.name_ref, GFP_KERNEL)?;
            }
        }
        if wanted.is_empty() {
            continue;
        }
        heapsort_by_key(&mut wanted, |&name_ref| name_ref);
        let chosen = match &mut chooser {
            Some(chooser) => chooser,
            None => chooser.insert(ChunkChooser::new(vmlinux_names)?),
        }
        .choose(vmlinux_names, &wanted)?;
        for range in chosen.iter() {
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
        for target in &found[part.records.clone()] {
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
    {
        let section = ReadSection::enter();
        for part in parts.iter() {
            let mut at = part.names.start;
            let mut last = (0, 0);
            for target in &found[part.records.clone()] {
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
                if !copy_names(&section, entry, changes, index, to) {
                    return Ok(None);
                }
                at += len;
            }
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
