// SPDX-License-Identifier: GPL-2.0

//! The names section (`__llvm_prf_names`): which names it holds, chunk by
//! chunk.
//!
//! The compiler writes one chunk per translation unit, and the linker puts
//! them one after the other: the length of the names (ULEB128), the length
//! of their zlib-compressed form (ULEB128, 0 when they are not compressed),
//! then the names, joined by `\x01`, compressed or not. A raw profile
//! carries the section whole; any sequence of whole chunks is a valid names
//! section too, which is how a profile can carry the names of another
//! object's functions without all of its names.

use core::fmt;

/// The byte that joins the names of one chunk.
pub const NAME_SEPARATOR: u8 = 0x01;

/// Why a names section cannot be walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamesError {
    /// A length runs past the end of the section (or past 64 bits).
    Truncated {
        /// Offset of the chunk in the section.
        at: usize,
    },
    /// A compressed chunk that the caller could not inflate to its length.
    Inflate {
        /// Offset of the chunk in the section.
        at: usize,
    },
    /// A chunk's names are longer than the caller's scratch space.
    TooLong {
        /// Offset of the chunk in the section.
        at: usize,
        /// The length of its names.
        len: usize,
    },
}

impl fmt::Display for NamesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NamesError::Truncated { at } => write!(f, "names chunk at {at} is truncated"),
            NamesError::Inflate { at } => write!(f, "names chunk at {at} does not inflate"),
            NamesError::TooLong { at, len } => {
                write!(f, "names chunk at {at} holds {len} bytes of names: no room")
            }
        }
    }
}

/// One chunk of a names section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Offset of the chunk in the section.
    pub at: usize,
    /// The whole chunk, lengths included: what a profile copies.
    pub bytes: &'a [u8],
    /// The length of its names, uncompressed.
    pub names_len: usize,
    /// The names, compressed or not.
    pub payload: &'a [u8],
    /// Whether `payload` is zlib-compressed.
    pub compressed: bool,
}

/// Reads a ULEB128 at `*at`, moving `*at` past it.
fn uleb128(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// The chunks of the names section `section`, in order, up to the first
/// error (then the error). Zero bytes after the last chunk (padding) end
/// it.
pub fn chunks(section: &[u8]) -> impl Iterator<Item = Result<Chunk<'_>, NamesError>> + '_ {
    let mut at = 0usize;
    let mut failed = false;
    core::iter::from_fn(move || {
        let rest = section.get(at..).unwrap_or(&[]);
        if failed || rest.iter().all(|&b| b == 0) {
            return None;
        }
        let start = at;
        let mut chunk = || -> Option<Chunk<'_>> {
            let names_len = usize::try_from(uleb128(section, &mut at)?).ok()?;
            let compressed_len = usize::try_from(uleb128(section, &mut at)?).ok()?;
            let stored = if compressed_len == 0 {
                names_len
            } else {
                compressed_len
            };
            let payload = section.get(at..at.checked_add(stored)?)?;
            at += stored;
            Some(Chunk {
                at: start,
                bytes: section.get(start..at)?,
                names_len,
                payload,
                compressed: compressed_len != 0,
            })
        };
        let next = chunk().ok_or(NamesError::Truncated { at: start });
        failed = next.is_err();
        Some(next)
    })
}

/// Calls `f` on each name of `chunk`. A compressed chunk is inflated into
/// `scratch` by `inflate(payload, scratch)`, which returns the number of
/// bytes it wrote, or `None`; the chunk's names must fit `scratch` and
/// inflate to exactly their length.
pub fn for_each_name(
    chunk: &Chunk<'_>,
    scratch: &mut [u8],
    inflate: impl FnOnce(&[u8], &mut [u8]) -> Option<usize>,
    mut f: impl FnMut(&[u8]),
) -> Result<(), NamesError> {
    let names: &[u8] = if chunk.compressed {
        let room = scratch
            .get_mut(..chunk.names_len)
            .ok_or(NamesError::TooLong {
                at: chunk.at,
                len: chunk.names_len,
            })?;
        if inflate(chunk.payload, room) != Some(chunk.names_len) {
            return Err(NamesError::Inflate { at: chunk.at });
        }
        room
    } else {
        chunk.payload
    };
    for name in names.split(|&b| b == NAME_SEPARATOR) {
        f(name);
    }
    Ok(())
}

/// The longest names of one chunk of `section`, of the chunks before the
/// first that cannot be walked (where [`locate_names`] stops): the scratch
/// space it needs.
pub fn longest_chunk(section: &[u8]) -> usize {
    chunks(section)
        .map_while(|chunk| chunk.ok())
        .map(|chunk| chunk.names_len)
        .max()
        .unwrap_or(0)
}

/// The offset of a name that [`locate_names`] did not find in any chunk.
pub const NOT_LOCATED: u32 = u32::MAX;

/// Where the names of a set of functions are, chunk by chunk: for each
/// name of `section` whose `NameRef` is `by_name_ref[j].0` (sorted by
/// it), sets `chunk_at[by_name_ref[j].1]` to the offset of the first chunk
/// that holds it, where it is still [`NOT_LOCATED`]. Chunks are inflated
/// as [`for_each_name`] does; a chunk at an offset that does not fit in
/// `u32` locates nothing. Stops at the first error, with what it located
/// before.
///
/// Done once, this answers "which chunk names this function" without
/// inflating the section again ([`chunk_at`]).
pub fn locate_names(
    section: &[u8],
    by_name_ref: &[(u64, u32)],
    scratch: &mut [u8],
    mut inflate: impl FnMut(&[u8], &mut [u8]) -> Option<usize>,
    chunk_at: &mut [u32],
) -> Result<(), NamesError> {
    for chunk in chunks(section) {
        let chunk = chunk?;
        let Ok(at) = u32::try_from(chunk.at) else {
            continue;
        };
        for_each_name(&chunk, scratch, &mut inflate, |name| {
            let name_ref = super::md5::name_ref(name);
            // The first of the entries with this `NameRef`: functions
            // may share one (a collision, or one name in two objects'
            // records).
            let first = by_name_ref.partition_point(|&(key, _)| key < name_ref);
            for &(_, slot) in by_name_ref[first..]
                .iter()
                .take_while(|&&(key, _)| key == name_ref)
            {
                if let Some(located) = chunk_at.get_mut(slot as usize) {
                    if *located == NOT_LOCATED {
                        *located = at;
                    }
                }
            }
        })?;
    }
    Ok(())
}

/// The chunk of `section` at offset `at`, if one starts there.
pub fn chunk_at(section: &[u8], at: usize) -> Option<Chunk<'_>> {
    let chunk = chunks(section.get(at..)?).next()?.ok()?;
    Some(Chunk {
        at,
        bytes: section.get(at..at + chunk.bytes.len())?,
        ..chunk
    })
}
