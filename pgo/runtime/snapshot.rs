// SPDX-License-Identifier: GPL-2.0

//! Raw profiles serialized in one piece, without a lock.
//!
//! A file is serialized when it is opened, so that every read of it sees
//! the same bytes whatever its read sizes and seeks, and the object (a
//! module) may go away while the file stays open.
//!
//! An entry's profile is its saved profiles, then its live object. The
//! read takes no lock that a module's load or unload waits for: it sizes
//! the profile in an RCU read-side section (with room for every value the
//! objects' pools could still list: `profile_size_bound`), allocates
//! outside it, and serializes in a second one, which keeps what it reads
//! alive. If a load, unload or reset of the entry changed what its profile
//! is made of meanwhile (its change count moved), the bytes may mix two
//! states: the read waits for that writer to finish, without holding
//! anything, and starts again. A writer's change is short (a merge of one
//! module), so the read completes once the entry is quiet for as long as
//! serializing it takes.

use kernel::prelude::*;

use super::kernel_api::ReadSection;
use super::registry::Entry;
use crate::profile::writer::{profile_size_bound, serialize, WriteError};

/// The raw profile of `entry`: its saved profiles, then the live one.
pub(crate) fn entry_profile(entry: &Entry) -> Result<VVec<u8>> {
    let mut bytes = VVec::new();
    loop {
        let Some(changes) = entry.stable_changes() else {
            entry.wait_for_writer();
            continue;
        };
        let mut bound = 0usize;
        {
            let section = ReadSection::enter();
            entry.for_each_object(&section, |object| {
                bound = bound.saturating_add(profile_size_bound(object).map_err(|_| EINVAL)?);
                Ok::<(), Error>(())
            })?;
        }
        if bytes.len() < bound {
            bytes.extend_with(bound - bytes.len(), 0, GFP_KERNEL)?;
        }
        let mut written = 0;
        let serialized = {
            let section = ReadSection::enter();
            entry.for_each_object(&section, |object| {
                written += serialize(object, &mut bytes[written..])?;
                Ok::<(), WriteError>(())
            })
        };
        let unchanged = entry.unchanged_since(changes);
        match serialized {
            Ok(()) if unchanged => {
                // SAFETY: `written <= bound`: the length shrinks to bytes
                // that `extend_with` initialised.
                unsafe { bytes.set_len(written) };
                return Ok(bytes);
            }
            // A change meanwhile, the only way past the bound.
            Ok(()) | Err(WriteError::Overflow) if !unchanged => continue,
            // Past the bound with no change: never, but no endless loop.
            Ok(()) | Err(WriteError::Overflow) => return Err(EIO),
            Err(WriteError::Format(_)) => return Err(EINVAL),
        }
    }
}
