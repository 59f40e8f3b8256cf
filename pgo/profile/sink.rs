// SPDX-License-Identifier: GPL-2.0

//! Where the writer puts a profile.
//!
//! The writer runs the same code to measure a profile ([`Measure`]) and to
//! serialize it ([`SliceSink`]), so the computed size is the written size by
//! construction, as long as the object did not change in between.

use super::sections::live_chunks;

/// The buffer was too small for the profile (it grew since it was
/// measured, or the caller passed a short buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// A byte sink that can patch what it wrote earlier.
pub trait Sink {
    /// Bytes written so far.
    fn position(&self) -> usize;

    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<(), Overflow>;

    /// Appends `len` zero bytes.
    fn put_zeros(&mut self, len: usize) -> Result<(), Overflow>;

    /// Appends `len` bytes of memory that other CPUs may be writing at the
    /// same time (counters, bitmap), reading it with atomic loads.
    ///
    /// # Safety
    ///
    /// `src..src + len` is mapped writable memory that is accessed only
    /// through atomics or by instrumented code.
    unsafe fn put_live(&mut self, src: *const u8, len: usize) -> Result<(), Overflow>;

    /// Overwrites bytes written earlier at `position`.
    fn patch(&mut self, position: usize, bytes: &[u8]);

    /// A point between two parts of the profile (the writer passes one
    /// after each record's values), where a [`Paced`] sink may pause.
    fn checkpoint(&mut self) {}

    /// Appends a native-endian `u64`.
    fn put_u64(&mut self, word: u64) -> Result<(), Overflow> {
        self.put(&word.to_ne_bytes())
    }

    /// Appends a native-endian `u32`.
    fn put_u32(&mut self, word: u32) -> Result<(), Overflow> {
        self.put(&word.to_ne_bytes())
    }
}

/// Counts bytes without storing them.
#[derive(Debug, Default)]
pub struct Measure {
    len: usize,
}

impl Measure {
    /// A sink that has counted nothing yet.
    pub const fn new() -> Self {
        Self { len: 0 }
    }
}

impl Sink for Measure {
    fn position(&self) -> usize {
        self.len
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        self.put_zeros(bytes.len())
    }

    fn put_zeros(&mut self, len: usize) -> Result<(), Overflow> {
        self.len = self.len.checked_add(len).ok_or(Overflow)?;
        Ok(())
    }

    unsafe fn put_live(&mut self, _src: *const u8, len: usize) -> Result<(), Overflow> {
        self.put_zeros(len)
    }

    fn patch(&mut self, _position: usize, _bytes: &[u8]) {}
}

/// Writes into a caller-provided buffer; never allocates.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceSink<'a> {
    /// A sink writing from the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    fn claim(&mut self, len: usize) -> Result<&mut [u8], Overflow> {
        let end = self.len.checked_add(len).ok_or(Overflow)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(Overflow)?;
        self.len = end;
        Ok(dst)
    }
}

impl Sink for SliceSink<'_> {
    fn position(&self) -> usize {
        self.len
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        self.claim(bytes.len())?.copy_from_slice(bytes);
        Ok(())
    }

    fn put_zeros(&mut self, len: usize) -> Result<(), Overflow> {
        self.claim(len)?.fill(0);
        Ok(())
    }

    unsafe fn put_live(&mut self, src: *const u8, len: usize) -> Result<(), Overflow> {
        let dst = self.claim(len)?;
        // SAFETY: the caller's contract is the walk's.
        let chunks = unsafe { live_chunks(src.cast_mut(), len) };
        chunks.for_each(|(offset, chunk)| chunk.copy_to(&mut dst[offset..]));
        Ok(())
    }

    fn patch(&mut self, position: usize, bytes: &[u8]) {
        self.buf[position..position + bytes.len()].copy_from_slice(bytes);
    }
}

/// Bytes a [`Paced`] sink writes between two pauses.
pub const PACE: usize = 64 * 1024;

/// A sink that calls `pause` after about every [`PACE`] bytes: between
/// chunks of a large part, and at the writer's checkpoints. The kernel
/// reschedules there, so that serializing a large profile (vmlinux's: MBs)
/// does not hold a CPU for as long as that takes.
pub struct Paced<S, F> {
    inner: S,
    pause: F,
    since: usize,
}

impl<S: Sink, F: FnMut()> Paced<S, F> {
    /// Wraps `inner`.
    pub fn new(inner: S, pause: F) -> Self {
        Self {
            inner,
            pause,
            since: 0,
        }
    }

    /// The sink it wraps.
    pub fn into_inner(self) -> S {
        self.inner
    }

    fn wrote(&mut self, len: usize) {
        self.since = self.since.saturating_add(len);
    }
}

impl<S: Sink, F: FnMut()> Sink for Paced<S, F> {
    fn position(&self) -> usize {
        self.inner.position()
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        for chunk in bytes.chunks(PACE) {
            self.inner.put(chunk)?;
            self.wrote(chunk.len());
            self.checkpoint();
        }
        Ok(())
    }

    fn put_zeros(&mut self, len: usize) -> Result<(), Overflow> {
        self.inner.put_zeros(len)?;
        self.wrote(len);
        Ok(())
    }

    unsafe fn put_live(&mut self, src: *const u8, len: usize) -> Result<(), Overflow> {
        let mut offset = 0;
        while offset < len {
            let chunk = PACE.min(len - offset);
            // SAFETY: a part of the caller's range.
            unsafe { self.inner.put_live(src.wrapping_add(offset), chunk)? };
            offset += chunk;
            self.wrote(chunk);
            self.checkpoint();
        }
        Ok(())
    }

    fn patch(&mut self, position: usize, bytes: &[u8]) {
        self.inner.patch(position, bytes);
    }

    fn checkpoint(&mut self) {
        if self.since >= PACE {
            self.since = 0;
            (self.pause)();
        }
    }
}
