// SPDX-License-Identifier: GPL-2.0

//! The C interfaces of the kernel that kpgo uses and that `kernel` has no
//! abstraction for, behind safe wrappers.
//!
//! The calls from kpgo into C, and the callbacks C makes into kpgo (other
//! than the hooks, `kernel`'s abstractions, which are module notifiers,
//! the debugfs files' own, in `debugfs`, and the warm-reboot region's own,
//! in `persist`), are here: read sections (SRCU) that may be skipped,
//! the zlib inflater, the mappable debugfs file and its pages, the wait
//! for an old counter bias, the sampling rate; and in `modules` (only
//! with module support) what kpgo reads of a `struct module` (its PGO
//! sections), the hooks' preemption-off sections, the module area, RCU
//! grace periods and the rate limit of the unload warning. The registry and
//! the files are safe Rust on top of these.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr;

use kernel::bindings;
use kernel::error::from_err_ptr;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;

use crate::profile::sections::ProfiledObject;
use crate::profile::writer::PageSize;

pub(crate) mod debugfs;
use debugfs::{Dir, NO_FOPS};

#[cfg(CONFIG_MODULES)]
mod modules;
#[cfg(CONFIG_MODULES)]
pub(crate) use modules::*;

/// A read-only file that can be mapped: its pages are put together once,
/// when it is opened.
pub(crate) trait MappedSource {
    /// The pages of the file created with `key`, as of now.
    fn pages(key: usize) -> Result<FilePages>;
}

/// Creates `name` in `dir`, mode 0400, serving the pages `M` puts
/// together for `key` at each open, to read and to map read-only. Opening
/// it for writing is refused (`-EACCES`).
///
/// debugfs's full proxy has no `mmap`: the file is created without the
/// proxy (`debugfs_create_file_unsafe`). Its
/// handlers use nothing that its removal frees: the key names what is
/// never freed (the caller's `M` says so), and an open file holds its own
/// pages.
pub(crate) fn create_mapped_file<M: MappedSource>(dir: &Dir, name: &CStr, key: usize) -> Result {
    // SAFETY: `name` is NUL-terminated, `dir.as_raw()` a live directory
    // while `dir` is, the table static; `key` is never dereferenced here.
    let dentry = unsafe {
        bindings::debugfs_create_file_unsafe(
            name.as_char_ptr(),
            0o400,
            dir.as_raw(),
            key as *mut c_void,
            &MappedFile::<M>::FOPS,
        )
    };
    from_err_ptr(dentry).map(|_| ())
}

/// One reference to a page of memory that others may share: the kernel
/// code that writes it (live pages), the mappings made of it.
///
/// # Invariants
///
/// `self.0` is a page on which `self` holds one reference.
#[repr(transparent)]
pub(crate) struct PageRef(ptr::NonNull<c_void>);

// SAFETY: a reference may be dropped by any task; a shared `PageRef` only
// gives the page's address.
unsafe impl Send for PageRef {}
// SAFETY: as for `Send`.
unsafe impl Sync for PageRef {}

impl PageRef {
    /// A reference to the page at `address`, which must be a counter page
    /// of `object` (`ProfiledObject::is_counter_page`: `EFAULT` if not,
    /// whatever the caller computed, so that no slip of a layout hands
    /// other kernel memory to a mapping), in vmlinux's image, module memory
    /// or the direct map (`ENXIO` if no page is found). It keeps the page
    /// after the memory is freed (a module's, at its unload).
    ///
    /// # Safety
    ///
    /// `object`'s counter memory is mapped for the call.
    pub(crate) unsafe fn of_counter_page(object: &ProfiledObject, address: usize) -> Result<Self> {
        let page_size = PageSize::new(kernel::page::PAGE_SIZE).ok_or(EINVAL)?;
        if !object.is_counter_page(address, page_size) {
            return Err(EFAULT);
        }
        // SAFETY: `address` is a page of `object`'s counter memory, which
        // is mapped (the function's contract); `kpgo_get_page_of` takes a
        // reference if it finds a page that is in use.
        let page = unsafe { kpgo_get_page_of(address as *const c_void) };
        // INVARIANT: the reference just taken.
        ptr::NonNull::new(page).map(Self).ok_or(ENXIO)
    }

    /// The page's address in the kernel's linear map.
    fn address(&self) -> *mut u8 {
        // SAFETY: `self.0` is a page we hold (type invariant).
        unsafe { kpgo_page_address(self.0.as_ptr()) }.cast()
    }
}

impl Drop for PageRef {
    fn drop(&mut self) {
        // SAFETY: drops the reference `self` holds (type invariant).
        unsafe { kpgo_put_page(self.0.as_ptr()) };
    }
}

/// A zeroed page that nothing else refers to yet: it is written through
/// [`Self::bytes`], then shared ([`Self::share`]) and never written again.
///
/// # Invariants
///
/// `self.0` holds the only reference to its page.
pub(crate) struct OwnedPage(PageRef);

impl OwnedPage {
    /// A new zeroed page. Where the caller may sleep.
    pub(crate) fn zeroed() -> Result<Self> {
        // SAFETY: no precondition beyond the caller's, who may sleep.
        let page = unsafe { kpgo_alloc_zeroed_page() };
        // INVARIANT: a new page has one reference, this one.
        ptr::NonNull::new(page)
            .map(|page| Self(PageRef(page)))
            .ok_or(ENOMEM)
    }

    /// Its bytes.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: a linear-map page only this reference reaches (type
        // invariant), borrowed by `&mut self`.
        unsafe { core::slice::from_raw_parts_mut(self.0.address(), kernel::page::PAGE_SIZE) }
    }

    /// The page, shared from now on and read only.
    pub(crate) fn share(self) -> PageRef {
        self.0
    }
}

/// The pages of a mapped file ([`MappedSource`]): live pages, which kernel
/// code writes while the file is open and which are read with atomic
/// loads, and copies, written before they were shared and never after.
///
/// # Invariants
///
/// `pages` holds `len.div_ceil(PAGE_SIZE)` pages; those at the indexes of
/// `live` are live pages, every other one is a shared [`OwnedPage`].
/// `alias` maps the live pages, in order, until the drop (null
/// if there is none): reads go through it, not through the linear map,
/// whose entries of a module's pages vanish for a moment when the module's
/// memory is freed (`vfree()` resets their permissions).
pub(crate) struct FilePages {
    pages: KVVec<PageRef>,
    live: core::ops::Range<usize>,
    len: usize,
    alias: *mut u8,
}

// SAFETY: the alias is only read, through atomics; the pages are `Send`
// and `Sync`; the drop may run in any task.
unsafe impl Send for FilePages {}
// SAFETY: as for `Send`.
unsafe impl Sync for FilePages {}

impl FilePages {
    /// The pages of a file of `len` bytes, in order: `live` first with
    /// the live pages (each `PageRef::of_counter_page` of memory written only
    /// by kernel code and atomics), then `copies` for the other indexes,
    /// in order. `EINVAL` if the counts do not fit.
    pub(crate) fn new(
        len: usize,
        live: core::ops::Range<usize>,
        live_pages: KVVec<PageRef>,
        copies: KVVec<OwnedPage>,
    ) -> Result<Self> {
        let count = len.div_ceil(kernel::page::PAGE_SIZE);
        if live_pages.len() != live.len() || live.end > count || copies.len() != count - live.len()
        {
            return Err(EINVAL);
        }
        let mut pages = KVVec::with_capacity(count, GFP_KERNEL)?;
        let mut copies = copies.into_iter();
        let mut live_pages = live_pages.into_iter();
        for index in 0..count {
            let page = if live.contains(&index) {
                live_pages.next()
            } else {
                copies.next().map(OwnedPage::share)
            };
            pages.push(page.ok_or(EINVAL)?, GFP_KERNEL)?;
        }
        let alias = if live.is_empty() {
            ptr::null_mut()
        } else {
            let first = pages[live.start..].as_mut_ptr().cast::<*mut c_void>();
            let count = u32::try_from(live.len()).map_err(|_| EINVAL)?;
            // SAFETY: `count` page pointers held by `pages` (transparent
            // `PageRef`s), which outlive the alias: the drop unmaps it first.
            let alias = unsafe { kpgo_vmap_pages(first, count) };
            if alias.is_null() {
                return Err(ENOMEM);
            }
            alias.cast()
        };
        // INVARIANT: `count` pages, live ones at `live`, copies elsewhere,
        // the live ones mapped at `alias`.
        Ok(Self {
            pages,
            live,
            len,
            alias,
        })
    }

    /// The page at `index`, if the file has one there.
    fn page(&self, index: usize) -> Option<&PageRef> {
        self.pages.get(index)
    }

    /// Copies the file's bytes from `pos` into `out`: how many (0 at the
    /// end). A counter split across two reads may mix two values.
    fn read_at(&self, pos: usize, out: &mut [u8]) -> usize {
        let mut done = 0;
        while done < out.len() && pos.saturating_add(done) < self.len {
            let at = pos + done;
            let (index, offset) = (at / kernel::page::PAGE_SIZE, at % kernel::page::PAGE_SIZE);
            let n = (kernel::page::PAGE_SIZE - offset)
                .min(out.len() - done)
                .min(self.len - at);
            let dst = &mut out[done..done + n];
            if self.live.contains(&index) {
                let src = self
                    .alias
                    .wrapping_add((index - self.live.start) * kernel::page::PAGE_SIZE + offset);
                // SAFETY: `n` bytes of a live page that `alias` maps until
                // the drop, written by kernel code and atomics only (invariant).
                let chunks = unsafe { crate::profile::sections::live_chunks(src, n) };
                chunks.for_each(|(offset, chunk)| chunk.copy_to(&mut dst[offset..]));
            } else {
                let src = self.pages[index].address().wrapping_add(offset);
                // SAFETY: `n` bytes inside a copy, which nothing writes
                // once shared (type invariant), in the linear map.
                dst.copy_from_slice(unsafe { core::slice::from_raw_parts(src, n) });
            }
            done += n;
        }
        done
    }
}

impl Drop for FilePages {
    fn drop(&mut self) {
        if !self.alias.is_null() {
            // SAFETY: the alias `new` made (type invariant), unmapped once,
            // before the pages go.
            unsafe { kpgo_vunmap(self.alias.cast()) };
        }
    }
}

/// The page at `index` of the open file whose `private_data` is
/// `file_pages`, or null past its end: what `glue.c`'s fault handler maps
/// (it takes its own reference).
///
/// # Safety
///
/// `file_pages` is the `private_data` of a file that [`mapped_open`]
/// opened and that is not released (a mapping holds its file).
#[no_mangle]
unsafe extern "C" fn kpgo_file_page(
    file_pages: *const c_void,
    index: core::ffi::c_ulong,
) -> *mut c_void {
    // SAFETY: the function's contract.
    let pages = unsafe { &*file_pages.cast::<FilePages>() };
    usize::try_from(index)
        .ok()
        .and_then(|index| pages.page(index))
        .map_or(ptr::null_mut(), |page| page.0.as_ptr())
}

/// The `file_operations` of a [`MappedSource`] file.
struct MappedFile<M>(PhantomData<M>);

impl<M: MappedSource> MappedFile<M> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(mapped_open::<M>),
        read: Some(mapped_read),
        llseek: Some(mapped_llseek),
        mmap: Some(mapped_mmap),
        release: Some(mapped_release),
        ..NO_FOPS
    };
}

/// Refuses a writer, then puts the pages together and hands them to the
/// open file.
///
/// # Safety
///
/// Called by the VFS as `open` of a file created by
/// [`create_mapped_file`]: `inode` and `file` are valid for the call.
unsafe extern "C" fn mapped_open<M: MappedSource>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: the function's contract is `reader_key`'s.
    let pages = unsafe { debugfs::reader_key(inode, file) }
        .and_then(M::pages)
        .and_then(|pages| Ok(KBox::new(pages, GFP_KERNEL)?));
    let pages = match pages {
        Ok(pages) => pages,
        Err(error) => return error.to_errno(),
    };
    // SAFETY: `file` is being opened (the function's contract); its
    // `private_data` is ours until `mapped_release` takes it back.
    unsafe {
        kpgo_set_file_size(file.cast(), pages.len as bindings::loff_t);
        (*file).private_data = KBox::into_raw(pages).cast();
    }
    0
}

/// # Safety
///
/// Called by the VFS as `read` of a file opened by [`mapped_open`]:
/// `file` and `pos` are valid, `buf` is a user pointer of `count` bytes.
unsafe extern "C" fn mapped_read(
    file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    pos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `mapped_open` attached the pages, `pos` is valid (the
    // function's contract).
    let (pages, start) = unsafe { (attached_pages(file), *pos) };
    let Ok(start) = usize::try_from(start) else {
        return EINVAL.to_errno() as isize;
    };
    let mut chunk = [0u8; 256];
    let mut done = 0;
    while done < count {
        // vmlinux's file is MBs.
        if done % kernel::page::PAGE_SIZE == 0 {
            reschedule_point();
        }
        let want = chunk.len().min(count - done);
        let got = pages.read_at(start.saturating_add(done), &mut chunk[..want]);
        if got == 0 {
            break;
        }
        // `_copy_to_user()` checks the range (`access_ok()`), as
        // `UserSlice` would; it is called directly because `UserSlice`
        // takes the user pointer as `usize` in 6.12 and as `UserPtr` in 7.3.
        // A user address is no Rust allocation: `wrapping_add`. `read_at`
        // fills at most its slice: `done + got <= count`.
        let to = buf.wrapping_add(done);
        // SAFETY: `to` has `got` bytes of the user's buffer (the function's
        // contract) after it; `chunk` is readable for `got` bytes.
        let left = unsafe { bindings::_copy_to_user(to.cast(), chunk.as_ptr().cast(), got) };
        if left != 0 {
            if done == 0 {
                return EFAULT.to_errno() as isize;
            }
            break;
        }
        done += got;
    }
    // SAFETY: `pos` is valid (the function's contract).
    unsafe { *pos += done as bindings::loff_t };
    done as isize
}

/// Maps the file read-only: each page is the file's page at a fault
/// (`glue.c`), so the live pages are the memory the kernel writes and the
/// mapping sees it change.
///
/// # Safety
///
/// Called by the VFS as `mmap` of a file opened by [`mapped_open`], with
/// `vma`'s mmap lock held for writing.
unsafe extern "C" fn mapped_mmap(
    file: *mut bindings::file,
    vma: *mut bindings::vm_area_struct,
) -> c_int {
    // SAFETY: `mapped_open` attached the pages (the function's contract).
    let pages = unsafe { attached_pages(file) };
    // SAFETY: `vma` is being set up under its mmap lock (the function's
    // contract); its file is `file`, whose pages the fault handler finds.
    unsafe { kpgo_mmap_prepare(vma.cast(), pages.pages.len() as core::ffi::c_ulong) }
}

/// Seeks within this open file's length (`fixed_size_llseek`): the
/// inode's size is the last open's.
///
/// # Safety
///
/// Called by the VFS as `llseek` of a file opened by [`mapped_open`].
unsafe extern "C" fn mapped_llseek(
    file: *mut bindings::file,
    offset: bindings::loff_t,
    whence: c_int,
) -> bindings::loff_t {
    // SAFETY: `mapped_open` attached the pages (the function's contract).
    let len = unsafe { attached_pages(file) }.len;
    // SAFETY: `file` is valid (the function's contract).
    unsafe { bindings::fixed_size_llseek(file, offset, whence, len as bindings::loff_t) }
}

/// The pages [`mapped_open`] attached to `file`.
///
/// # Safety
///
/// `file` is valid and was opened by [`mapped_open`]; the reference is
/// used only until the file's release, which the VFS never runs during
/// another call of the file.
unsafe fn attached_pages<'a>(file: *mut bindings::file) -> &'a FilePages {
    // SAFETY: the function's contract.
    unsafe { &*((*file).private_data as *const FilePages) }
}

/// Frees what [`mapped_open`] attached. Mappings keep their own page
/// references.
///
/// # Safety
///
/// Called by the VFS as `release` of a file that [`mapped_open`] opened
/// (a failed open is never released).
unsafe extern "C" fn mapped_release(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` is `mapped_open`'s `KBox::into_raw`, taken
    // back exactly once, here.
    drop(unsafe { KBox::from_raw((*file).private_data.cast::<FilePages>()) });
    0
}

// glue.c. A `struct page`, `struct file` or `struct vm_area_struct` is
// only passed back to C: `c_void` (bindgen's layouts of some of their
// fields are not FFI-safe).
extern "C" {
    fn kpgo_get_page_of(address: *const c_void) -> *mut c_void;
    fn kpgo_alloc_zeroed_page() -> *mut c_void;
    fn kpgo_put_page(page: *mut c_void);
    fn kpgo_page_address(page: *mut c_void) -> *mut c_void;
    fn kpgo_vmap_pages(pages: *mut *mut c_void, count: u32) -> *mut c_void;
    fn kpgo_vunmap(address: *const c_void);
    fn kpgo_set_file_size(file: *mut c_void, size: bindings::loff_t);
    fn kpgo_mmap_prepare(vma: *mut c_void, file_pages: core::ffi::c_ulong) -> c_int;
    fn kpgo_cond_resched();
    fn kpgo_fatal_signal_pending() -> bool;
    fn kpgo_inflate_workspace_size() -> usize;
    fn kpgo_inflate(
        input: *const c_void,
        input_len: usize,
        out: *mut c_void,
        out_len: usize,
        workspace: *mut c_void,
    ) -> core::ffi::c_long;
}

/// The kernel's zlib inflater (lib/zlib_inflate) with its workspace.
pub(crate) struct Inflater {
    /// `zlib_inflate_workspacesize()` bytes, in `u64`s: aligned for
    /// zlib's `struct inflate_workspace`.
    workspace: KVVec<u64>,
}

impl Inflater {
    /// An inflater and its workspace. Where the caller may sleep.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: no precondition.
        let bytes = unsafe { kpgo_inflate_workspace_size() };
        let mut workspace = KVVec::with_capacity(bytes.div_ceil(8), GFP_KERNEL)?;
        workspace.extend_with(bytes.div_ceil(8), 0, GFP_KERNEL)?;
        Ok(Self { workspace })
    }

    /// Inflates the zlib stream `input` into `out`: the bytes written, or
    /// `None` if it is not a whole stream that fits.
    pub(crate) fn inflate(&mut self, input: &[u8], out: &mut [u8]) -> Option<usize> {
        // SAFETY: zlib stays within `input` and `out`; the workspace has
        // zlib's size and one user at a time (`&mut self`).
        let written = unsafe {
            kpgo_inflate(
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
                self.workspace.as_mut_ptr().cast(),
            )
        };
        usize::try_from(written).ok()
    }
}

/// Whether the current task was sent a fatal signal: a loop that may
/// have to start again (a profile read) stops then.
pub(crate) fn fatal_signal_pending() -> bool {
    // SAFETY: no precondition; reads the current task's signal state.
    unsafe { kpgo_fatal_signal_pending() }
}

/// Lets the scheduler run another task if one should (`cond_resched()`).
/// Only where the caller may sleep.
pub(crate) fn reschedule_point() {
    // SAFETY: no precondition beyond the caller's, who may sleep.
    unsafe { kpgo_cond_resched() };
}

/// With entry sampling: restarts the figures of time spent in bursts, which
/// give the weight of the counts since (`glue.c`, `pgo/entry_sampling`), as
/// a reset of vmlinux's counts must. Without it, nothing. Where the caller
/// may sleep.
pub(crate) fn entry_sampling_restart() {
    #[cfg(CONFIG_PGO_CLANG_SAMPLING_ENTRY)]
    {
        extern "C" {
            fn kpgo_entry_reset();
        }
        // SAFETY: no precondition beyond the caller's, who may sleep.
        unsafe { kpgo_entry_reset() };
    }
}

/// With sampled instrumentation: the period, and how many updates of each
/// period the compiled code records (`glue.c`).
#[cfg(CONFIG_PGO_CLANG_SAMPLING_UPDATES)]
pub(crate) fn sampling_rate() -> (u32, u32) {
    extern "C" {
        fn kpgo_sampling_rate(recorded: *mut u32) -> u32;
    }
    let mut recorded = 0;
    // SAFETY: `recorded` is a valid, writable `u32` for the call, which only
    // stores to it.
    let period = unsafe { kpgo_sampling_rate(&mut recorded) };
    (period, recorded)
}

/// Waits until no counter update that loaded a bias from before the call
/// is still under way, except in an activation that sleeps in a call
/// (`glue.c`). Only where the caller may sleep.
#[cfg(CONFIG_PGO_CLANG_COUNTER_RELOCATION)]
pub(crate) fn wait_for_old_bias() {
    extern "C" {
        fn kpgo_wait_for_old_bias();
    }
    // SAFETY: no precondition beyond the caller's, who may sleep.
    unsafe { kpgo_wait_for_old_bias() };
}

/// Sleeps a millisecond or so. Only where the caller may sleep.
pub(crate) fn sleep_a_while() {
    // SAFETY: no precondition beyond the caller's, who may sleep.
    unsafe { bindings::msleep(1) };
}

extern "C" {
    fn kpgo_read_section_enter() -> c_int;
    fn kpgo_read_section_exit(index: c_int);
}

/// A read-side section of kpgo's SRCU (`glue.c`), from [`Self::enter`] to
/// the drop: what was found in it stays valid until it ends, since a
/// module's descriptor, memory and saved profiles are freed only after
/// [`wait_for_read_sections`]. It may sleep, so that work over a module
/// of millions of counters reschedules as it goes: an unload waits for
/// the sections under way, not the other way round. A section leaked
/// (`mem::forget`) never ends: every later unload and reset would wait
/// for good.
///
/// # Invariants
///
/// `index` is `None`, or what `kpgo_read_section_enter()` returned for a
/// section that the drop ends.
pub(crate) struct ReadSection {
    /// `None` for [`Self::for_static_objects`].
    index: Option<c_int>,
    /// Not `Send`: the section ends in the task that began it.
    _not_send: PhantomData<*mut ()>,
}

impl ReadSection {
    /// Begins the section.
    pub(crate) fn enter() -> Self {
        // SAFETY: no precondition; the section ends in the drop.
        let index = unsafe { kpgo_read_section_enter() };
        // INVARIANT: the index of the section just begun.
        Self {
            index: Some(index),
            _not_send: PhantomData,
        }
    }

    /// No section at all, where only objects that are never freed are
    /// read (vmlinux's).
    ///
    /// # Safety
    ///
    /// What is read while it is held is never freed.
    pub(crate) unsafe fn for_static_objects() -> Self {
        // INVARIANT: no section.
        Self {
            index: None,
            _not_send: PhantomData,
        }
    }

    /// Whether it is a section (not [`Self::for_static_objects`]).
    pub(crate) fn is_section(&self) -> bool {
        self.index.is_some()
    }
}

impl Drop for ReadSection {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            // SAFETY: the index of the section this began (type invariant),
            // ended once, here, in the task that began it (not `Send`).
            unsafe { kpgo_read_section_exit(index) };
        }
    }
}
