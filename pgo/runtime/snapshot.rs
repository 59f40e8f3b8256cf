// SPDX-License-Identifier: GPL-2.0

//! Profiles and reports serialized once, at `open()`.
//!
//! A reader then sees the same bytes whatever its read sizes and seeks, and
//! the object (a module) may go away while the file stays open.

use kernel::prelude::*;

use crate::profile::sections::ProfiledObject;
use crate::profile::writer::{profile_size, serialize, WriteError};

/// Serialized bytes owned by one open file.
pub(crate) struct Snapshot {
    bytes: VVec<u8>,
}

/// How often to measure again when new values keep arriving between
/// measuring and writing (each retry sees a pool closer to full, so this
/// converges quickly).
const MAX_ATTEMPTS: usize = 8;

impl Snapshot {
    /// Raw profile of `object` as it is now.
    pub(crate) fn profile(object: &ProfiledObject) -> Result<Self> {
        for _ in 0..MAX_ATTEMPTS {
            let size = profile_size(object).map_err(|_| EINVAL)?;
            let mut bytes = VVec::from_elem(0u8, size, GFP_KERNEL)?;
            match serialize(object, &mut bytes) {
                Ok(written) => {
                    // SAFETY: `written <= size`, and those bytes are
                    // initialised: shrinking only.
                    unsafe { bytes.set_len(written) };
                    return Ok(Self { bytes });
                }
                Err(WriteError::Overflow) => continue,
                Err(WriteError::Format(_)) => return Err(EINVAL),
            }
        }
        Err(EAGAIN)
    }

    /// A snapshot of prepared bytes (reports, kept profiles).
    pub(crate) fn from_bytes(bytes: VVec<u8>) -> Self {
        Self { bytes }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}
