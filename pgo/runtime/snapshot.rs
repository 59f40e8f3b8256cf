// SPDX-License-Identifier: GPL-2.0

//! Raw profiles serialized in one piece, without a lock.
//!
//! A file is serialized when it is opened, so that every read of it sees
//! the same bytes whatever its read sizes and seeks, and the object (a
//! module) may go away while the file stays open. The bytes are
//! kvmalloc'ed: a module's few KiB come from the slab, not from vmalloc,
//! whose lazy purges the module loader would then pay for.
//!
//! An entry's profile is its saved profiles, then its live object, each
//! naming the other objects' functions its indirect calls reached
//! (`callees`). The read
//! takes no lock that a module's load or unload waits for: it sizes the
//! profile in a read section (with room for every value the
//! objects' pools could still list: `profile_size_bound`), allocates
//! outside it, and serializes in a second one, which keeps what it reads
//! alive (vmlinux's entry needs none: nothing of it is ever freed). If a
//! load, unload or reset of the entry changed what its profile is made of
//! meanwhile (its change count moved), the bytes may mix two states: the
//! read lets that writer finish (it sleeps a millisecond, holding nothing)
//! and starts again. A writer's change is short (a merge of one module, a
//! reset), so the read completes once the entry is quiet for as long as
//! serializing it takes; a fatal signal ends it before.

use kernel::prelude::*;

use super::callees::{name_callees, Named};
use super::kernel_api::reschedule_point;
use super::registry::Entry;
use crate::profile::sink::{Measure, Paced, Sink, SliceSink, PACE};
use crate::profile::writer::{profile_size_bound_naming_in, write_profile_naming, WriteError};

/// How often a read starts again because an object its callees live in
/// changed, before it names none.
const MAX_NAMING_RESTARTS: usize = 8;

/// Makes `bytes` at least `len` bytes long, zeroed, rescheduling on the
/// way (this runs outside read sections): vmlinux's profile is MBs.
fn grow(bytes: &mut KVVec<u8>, len: usize) -> Result {
    if bytes.len() >= len {
        return Ok(());
    }
    bytes.reserve(len - bytes.len(), GFP_KERNEL)?;
    while bytes.len() < len {
        let step = PACE.min(len - bytes.len());
        bytes.extend_with(step, 0, GFP_KERNEL)?;
        reschedule_point();
    }
    Ok(())
}

/// The raw profile of `entry`: its saved profiles, then the live one.
pub(crate) fn entry_profile(entry: &Entry) -> Result<KVVec<u8>> {
    let mut bytes = KVVec::new();
    let mut naming_restarts = 0;
    loop {
        let changes = entry.quiet_changes()?;
        // The other objects' functions it names (`callees`): looked up
        // before the profile is sized and written, in sections of their
        // own. An object among them that changed meanwhile starts it
        // again, a few times; then, or without the memory to look them
        // up, the profile names none (it is valid, and smaller).
        let named = match name_callees(entry) {
            Ok(Some(named)) => named,
            Ok(None) if naming_restarts < MAX_NAMING_RESTARTS => {
                naming_restarts += 1;
                reschedule_point();
                continue;
            }
            Ok(None) | Err(_) => Named::none(),
        };
        let mut bound = 0usize;
        {
            let section = entry.read_section();
            let mut index = 0;
            entry.for_each_object(&section, |object| {
                let mut slices = [&[][..]; 1];
                let callees = named.callees(index, &mut slices);
                index += 1;
                let mut measure = Paced::new(Measure::new(), reschedule_point);
                let size = profile_size_bound_naming_in(object, &callees, &mut measure)
                    .map_err(|_| EINVAL)?;
                bound = bound.saturating_add(size);
                Ok::<(), Error>(())
            })?;
        }
        grow(&mut bytes, bound)?;
        let mut written = 0;
        let serialized = {
            let section = entry.read_section();
            let mut index = 0;
            entry.for_each_object(&section, |object| {
                let mut slices = [&[][..]; 1];
                let callees = named.callees(index, &mut slices);
                index += 1;
                let mut sink = Paced::new(SliceSink::new(&mut bytes[written..]), reschedule_point);
                write_profile_naming(object, &callees, &mut sink)?;
                written += sink.position();
                Ok::<(), WriteError>(())
            })
        };
        let unchanged = entry.unchanged_since(changes);
        match serialized {
            Ok(()) if unchanged => {
                // The length shrinks to what was written (`KVVec` has neither
                // `truncate` in 6.12 nor `set_len` in 7.3); a `SliceSink` never
                // writes past its slice, so `written` is at most the length.
                let (pointer, _, capacity) = bytes.into_raw_parts();
                // SAFETY: the vector's own parts; its first `written` bytes are
                // initialised (`grow`) and need no drop.
                return Ok(unsafe { KVVec::from_raw_parts(pointer, written, capacity) });
            }
            // A change meanwhile, the only way past the bound: outside any
            // read section now, so a storm of loads cannot keep this CPU.
            Ok(()) | Err(WriteError::Overflow) if !unchanged => {
                reschedule_point();
                continue;
            }
            // Past the bound with no change: never, but no endless loop.
            Ok(()) | Err(WriteError::Overflow) => return Err(EIO),
            Err(WriteError::Format(_) | WriteError::NoCounts) => return Err(EINVAL),
        }
    }
}
