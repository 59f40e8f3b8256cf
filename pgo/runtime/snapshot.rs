// SPDX-License-Identifier: GPL-2.0

//! Raw profiles serialized in one piece.
//!
//! A file is serialized when it is opened, so that every read of it sees
//! the same bytes whatever its read sizes and seeks, and the object (a
//! module) may go away while the file stays open. A module's final profile
//! is serialized the same way at unload.

use kernel::prelude::*;

use crate::profile::sections::ProfiledObject;
use crate::profile::writer::{profile_size, serialize, WriteError};

/// How often to measure again when new values keep arriving between
/// measuring and writing (each retry sees a pool closer to full, so this
/// converges quickly).
const MAX_ATTEMPTS: usize = 8;

/// The size of the raw profile of `object` as it is now.
pub(crate) fn measure_profile(object: &ProfiledObject) -> Result<usize> {
    profile_size(object).map_err(|_| EINVAL)
}

/// The raw profile of `object` as it is now.
#[cfg(CONFIG_MODULES)]
pub(crate) fn serialize_profile(object: &ProfiledObject) -> Result<VVec<u8>> {
    append_profile(object, VVec::new())
}

/// Appends the raw profile of `object` to `bytes`.
pub(crate) fn append_profile(object: &ProfiledObject, mut bytes: VVec<u8>) -> Result<VVec<u8>> {
    let start = bytes.len();
    for _ in 0..MAX_ATTEMPTS {
        let size = measure_profile(object)?;
        bytes.extend_with(size, 0, GFP_KERNEL)?;
        match serialize(object, &mut bytes[start..]) {
            Ok(written) => {
                // SAFETY: `written <= size`: the length shrinks to bytes
                // that `extend_with` initialised.
                unsafe { bytes.set_len(start + written) };
                return Ok(bytes);
            }
            // SAFETY: the length shrinks back to the prefix, initialised.
            Err(WriteError::Overflow) => unsafe { bytes.set_len(start) },
            Err(WriteError::Format(_)) => return Err(EINVAL),
        }
    }
    Err(EAGAIN)
}
