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
    /// `prefix` (kept profiles) followed by the raw profile of `object` as
    /// it is now.
    pub(crate) fn profile(object: &ProfiledObject, prefix: VVec<u8>) -> Result<Self> {
        Ok(Self {
            bytes: serialize_after(object, prefix)?,
        })
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

/// The raw profile of `object` as it is now.
pub(crate) fn serialize_profile(object: &ProfiledObject) -> Result<VVec<u8>> {
    serialize_after(object, VVec::new())
}

/// Appends the raw profile of `object` to `bytes`.
fn serialize_after(object: &ProfiledObject, mut bytes: VVec<u8>) -> Result<VVec<u8>> {
    let start = bytes.len();
    for _ in 0..MAX_ATTEMPTS {
        let size = profile_size(object).map_err(|_| EINVAL)?;
        bytes.extend_with(size, 0, GFP_KERNEL)?;
        match serialize(object, &mut bytes[start..]) {
            Ok(written) => {
                // SAFETY: shrinking to initialised bytes only.
                unsafe { bytes.set_len(start + written) };
                return Ok(bytes);
            }
            // SAFETY: shrinking back to the prefix, which is initialised.
            Err(WriteError::Overflow) => unsafe { bytes.set_len(start) },
            Err(WriteError::Format(_)) => return Err(EINVAL),
        }
    }
    Err(EAGAIN)
}
