// SPDX-License-Identifier: GPL-2.0

//! `pgo/live/<object>.profraw`: an object's profile whose counter pages
//! are the object's own counters, to read or to map.
//!
//! The file is put together when it is opened, from the entry's live
//! object (`ENODEV` when its module is not loaded): `write_live` lays the
//! profile out with the counters at a page boundary of the file; those
//! pages are the object's memory, every other page a copy made at the
//! open (header, records with 0 value sites, names). A reference on each
//! counter page keeps it for the file and its mappings after a module's
//! unload, with the last counts. Reads copy the counters with word loads;
//! `mmap` maps the pages read-only, so a reader sees the counts move
//! without reopening, and a copy of the mapping at any time is a raw
//! profile. Value profiles have no fixed place and are left out: the
//! `.profraw` file of the same name has them. The kernel's linker scripts
//! give the counters pages of their own (`Sections::counter_pages`); an
//! object whose counters share a page with other data is refused
//! (`EOPNOTSUPP`), so no mapping shows anything else.

use core::ops::Range;

use kernel::page::PAGE_SIZE;
use kernel::prelude::*;

use super::kernel_api::{reschedule_point, FilePages, MappedSource, OwnedPage, PageRef};
use super::registry::{self, Entry};
use crate::profile::sections::live_chunks;
use crate::profile::sink::{Measure, Overflow, Paced, Sink};
use crate::profile::writer::{write_live, PageSize};

/// `live/<name>.profraw`; its key is its registry entry's address.
pub(crate) struct LiveFile;

impl MappedSource for LiveFile {
    fn pages(key: usize) -> Result<FilePages> {
        // SAFETY: `Registry::add` creates these files, with that key.
        live_pages(unsafe { registry::entry_of_file(key) })
    }
}

/// The pages of the live profile of `entry`.
fn live_pages(entry: &Entry) -> Result<FilePages> {
    let page = PageSize::new(PAGE_SIZE).ok_or(EINVAL)?;
    loop {
        let changes = entry.quiet_changes()?;
        // The layout, which the object's section sizes fix.
        let (len, layout) = {
            let section = entry.read_section();
            let object = entry.live(&section).ok_or(ENODEV)?;
            let mut measure = Paced::new(Measure::new(), reschedule_point);
            let layout = write_live(object, page, &mut measure).map_err(|_| EINVAL)?;
            if object.pages_of_current_set(layout, page).is_none() {
                return Err(Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32)));
            }
            (measure.position(), layout)
        };
        let live = layout.file_offset / PAGE_SIZE..(layout.file_offset + layout.len) / PAGE_SIZE;
        let copies_count = len.div_ceil(PAGE_SIZE) - live.len();
        let mut copies = KVVec::with_capacity(copies_count, GFP_KERNEL)?;
        for _ in 0..copies_count {
            copies.push(OwnedPage::zeroed()?, GFP_KERNEL)?;
            reschedule_point();
        }
        let mut live_pages = KVVec::with_capacity(live.len(), GFP_KERNEL)?;
        let complete = {
            let section = entry.read_section();
            match entry.live(&section) {
                Some(object) => {
                    let mut sink =
                        Paced::new(CopySink::new(&mut copies, live.clone()), reschedule_point);
                    let written = write_live(object, page, &mut sink);
                    // The pages of the set its bias points to now.
                    let pages = written
                        .ok()
                        .filter(|again| *again == layout)
                        .and_then(|again| object.pages_of_current_set(again, page));
                    if let Some(pages) = pages.filter(|_| sink.position() == len) {
                        for nth in 0..live.len() {
                            let address = pages.memory + nth * PAGE_SIZE;
                            // SAFETY: the object's counter memory is mapped while
                            // `section` is.
                            let page = unsafe { PageRef::of_counter_page(object, address) }?;
                            // Within the capacity: no allocation here.
                            live_pages.push(page, GFP_NOWAIT)?;
                        }
                        true
                    } else {
                        false
                    }
                }
                None => false,
            }
        };
        let unchanged = entry.unchanged_since(changes);
        if complete && unchanged {
            return FilePages::new(len, live, live_pages, copies);
        }
        // The same object laid out twice differently: never, but no
        // endless loop.
        if unchanged {
            return Err(EIO);
        }
        // A load, unload or reset meanwhile: again, with the new object.
        reschedule_point();
    }
}

/// Writes a file's bytes into its copy pages, which are zeroed, and leaves
/// out those of its live pages (`live`, page indexes), which are the
/// object's memory itself.
struct CopySink<'a> {
    copies: &'a mut [OwnedPage],
    live: Range<usize>,
    position: usize,
}

impl<'a> CopySink<'a> {
    fn new(copies: &'a mut [OwnedPage], live: Range<usize>) -> Self {
        Self {
            copies,
            live,
            position: 0,
        }
    }

    /// Calls `f` on each span of the copies that the next `len` bytes of
    /// the file fall in, with its offset in those bytes, and moves past
    /// them. `Overflow` past the last page.
    fn each_span(
        &mut self,
        len: usize,
        mut f: impl FnMut(&mut [u8], usize),
    ) -> Result<(), Overflow> {
        let end = self.position.checked_add(len).ok_or(Overflow)?;
        let mut at = self.position;
        while at < end {
            let (index, offset) = (at / PAGE_SIZE, at % PAGE_SIZE);
            let n = (PAGE_SIZE - offset).min(end - at);
            if !self.live.contains(&index) {
                let copy = if index >= self.live.end {
                    index - self.live.len()
                } else {
                    index
                };
                let page = self.copies.get_mut(copy).ok_or(Overflow)?;
                f(&mut page.bytes()[offset..offset + n], at - self.position);
            }
            at += n;
        }
        self.position = end;
        Ok(())
    }
}

impl Sink for CopySink<'_> {
    fn position(&self) -> usize {
        self.position
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        self.each_span(bytes.len(), |dst, from| {
            dst.copy_from_slice(&bytes[from..from + dst.len()])
        })
    }

    fn put_zeros(&mut self, len: usize) -> Result<(), Overflow> {
        self.each_span(len, |_, _| {})
    }

    unsafe fn put_live(&mut self, src: *const u8, len: usize) -> Result<(), Overflow> {
        self.each_span(len, |dst, from| {
            // SAFETY: a part of the `len` live bytes at `src` (the
            // caller's contract).
            let chunks = unsafe { live_chunks(src.cast_mut().wrapping_add(from), dst.len()) };
            chunks.for_each(|(offset, chunk)| chunk.copy_to(&mut dst[offset..]));
        })
    }

    fn patch(&mut self, position: usize, bytes: &[u8]) {
        let end = self.position;
        self.position = position;
        // Only over bytes already put, which exist.
        let _ = self.put(bytes);
        self.position = end;
    }
}
