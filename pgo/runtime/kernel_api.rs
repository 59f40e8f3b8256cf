// SPDX-License-Identifier: GPL-2.0

//! The C interfaces of the kernel that kpgo uses, behind safe wrappers.
//!
//! Every call from kpgo into C, and every callback C makes into kpgo
//! (other than the hooks), is here: debugfs directories and files with
//! their `file_operations` tables, and with `glue.c` RCU read-side
//! sections; and in `modules` (only with module support) the module
//! notifier, a `struct module` and its PGO sections, the hooks'
//! preemption-off sections, deferred frees, the module area and the rate
//! limit of the unload warning. The registry and the files are safe Rust
//! on top of these.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr;

use kernel::bindings;
use kernel::error::from_err_ptr;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::uaccess::UserSlice;

#[cfg(CONFIG_MODULES)]
mod modules;
#[cfg(CONFIG_MODULES)]
pub(crate) use modules::*;

/// Longest command a command file accepts, in bytes (a trailing newline
/// included).
pub(crate) const MAX_COMMAND: usize = 64;

/// `FMODE_WRITE` of `include/linux/fs.h` (a `__force` cast that bindgen
/// does not translate).
const FMODE_WRITE: bindings::fmode_t = 1 << 1;

/// A debugfs directory created by kpgo.
///
/// # Invariants
///
/// `self.0` is a directory returned by `debugfs_create_dir`
/// (not an error pointer), not removed while `self` exists.
pub(crate) struct Dir(*mut bindings::dentry);

// SAFETY: a `Dir` only hands its dentry to debugfs functions, which any
// thread may call.
unsafe impl Send for Dir {}

/// A read-only file whose contents are produced once, when it is opened.
pub(crate) trait SnapshotSource {
    /// The contents of the file created with `key`, as of now.
    fn snapshot(key: usize) -> Result<KVVec<u8>>;
}

/// A read-only file that can be mapped: its pages are put together once,
/// when it is opened.
pub(crate) trait MappedSource {
    /// The pages of the file created with `key`, as of now.
    fn pages(key: usize) -> Result<FilePages>;
}

/// A write-only file that takes short commands.
pub(crate) trait CommandSink {
    /// Applies `command`: what was written, at most [`MAX_COMMAND`] bytes,
    /// one trailing newline removed. An error is returned to the writer.
    fn command(command: &[u8]) -> Result;
}

impl Dir {
    /// Creates the directory `name` at the root of debugfs.
    pub(crate) fn create(name: &CStr) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; a null parent is debugfs's
        // root.
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), ptr::null_mut()) };
        // INVARIANT: an error pointer is turned into its error here; the
        // directory is removed only by `Drop`.
        Ok(Self(from_err_ptr(dentry)?))
    }

    /// Creates `name`, mode 0400, serving what `S` produces for `key` at
    /// each open. Opening it for writing is refused (`-EACCES`), so that
    /// nothing is serialized for a writer.
    pub(crate) fn snapshot_file<S: SnapshotSource>(&self, name: &CStr, key: usize) -> Result {
        self.create_file(name, 0o400, key, &SnapshotFile::<S>::FOPS)
    }

    /// Creates `name`, mode 0400, serving the pages `M` puts together for
    /// `key` at each open, to read and to map read-only. Opening it for
    /// writing is refused (`-EACCES`).
    ///
    /// debugfs's full proxy has no `mmap`: the file is created without it
    /// (`debugfs_create_file_unsafe`). Its handlers use nothing that its
    /// removal frees: the key names what is never freed (the caller's
    /// `M` says so), and an open file holds its own pages.
    pub(crate) fn mapped_file<M: MappedSource>(&self, name: &CStr, key: usize) -> Result {
        // SAFETY: `name` is NUL-terminated, `self.0` a live directory (type
        // invariant), the table static; `key` is never dereferenced here.
        let dentry = unsafe {
            bindings::debugfs_create_file_unsafe(
                name.as_char_ptr(),
                0o400,
                self.0,
                key as *mut c_void,
                &MappedFile::<M>::FOPS,
            )
        };
        from_err_ptr(dentry).map(|_| ())
    }

    /// Creates `name`, mode 0200, whose writes are commands for `C`; it
    /// reads as empty.
    pub(crate) fn command_file<C: CommandSink>(&self, name: &CStr) -> Result {
        self.create_file(name, 0o200, 0, &CommandFile::<C>::FOPS)
    }

    fn create_file(
        &self,
        name: &CStr,
        mode: u16,
        key: usize,
        fops: &'static bindings::file_operations,
    ) -> Result {
        // `key` is stored in the inode as an opaque word: the handlers below
        // only turn it back into a `usize`, never dereference it.
        // SAFETY: `name` is NUL-terminated, `self.0` a live directory (type
        // invariant), `fops` static; `key` is never dereferenced.
        let dentry = unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                mode,
                self.0,
                key as *mut c_void,
                fops,
            )
        };
        from_err_ptr(dentry).map(|_| ())
    }
}

/// A debugfs directory at the root of debugfs with subdirectories,
/// removed together.
///
/// # Invariants
///
/// Each of `subs` is a directory created in `top`. It is removed with
/// `top`, which removes what is in it, and never on its own
/// (`ManuallyDrop`): nothing can reach it once `top` is removed, since
/// all go with `self`.
pub(crate) struct DirWithSub {
    top: Dir,
    subs: KVec<core::mem::ManuallyDrop<Dir>>,
}

impl DirWithSub {
    /// Creates the directory `name` and `subs` in it; on an error none is
    /// left behind.
    pub(crate) fn create(name: &CStr, subs: &[&CStr]) -> Result<Self> {
        let top = Dir::create(name)?;
        let mut made = KVec::with_capacity(subs.len(), GFP_KERNEL)?;
        for sub in subs {
            // SAFETY: `sub` is NUL-terminated, `top.0` a live directory
            // (type invariant of `Dir`).
            let dentry = unsafe { bindings::debugfs_create_dir(sub.as_char_ptr(), top.0) };
            // INVARIANT: created in `top`; an error pointer becomes its
            // error, and `top` is then dropped, removed with what is in it.
            let dir = core::mem::ManuallyDrop::new(Dir(from_err_ptr(dentry)?));
            // Within the capacity: no allocation, no failure.
            made.push(dir, GFP_NOWAIT)?;
        }
        Ok(Self { top, subs: made })
    }

    /// The directory.
    pub(crate) fn top(&self) -> &Dir {
        &self.top
    }

    /// Its subdirectory `index`, in the order `create` was given them.
    pub(crate) fn sub(&self, index: usize) -> Option<&Dir> {
        self.subs.get(index).map(|dir| &**dir)
    }
}

impl Drop for Dir {
    /// Removes the directory and every file in it, so that no failure path
    /// leaves it behind. debugfs waits for the handlers that are running
    /// and fails the later calls of files that are still open.
    fn drop(&mut self) {
        // SAFETY: `self.0` is a live directory (type invariant), removed
        // once: this is its drop.
        unsafe { bindings::debugfs_remove(self.0) };
    }
}

/// All-zero `file_operations`: every callback `None`, no owner (built-in
/// code).
const NO_FOPS: bindings::file_operations =
    // SAFETY: `file_operations` is plain data whose fields are all valid
    // when zero (null owner, `None` callbacks, no flags).
    unsafe { core::mem::MaybeUninit::zeroed().assume_init() };

/// The `file_operations` of a [`SnapshotSource`] file.
struct SnapshotFile<S>(PhantomData<S>);

impl<S: SnapshotSource> SnapshotFile<S> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(snapshot_open::<S>),
        read: Some(snapshot_read),
        llseek: Some(bindings::default_llseek),
        release: Some(release_attached::<KVVec<u8>>),
        ..NO_FOPS
    };
}

/// The `file_operations` of a [`CommandSink`] file.
struct CommandFile<C>(PhantomData<C>);

impl<C: CommandSink> CommandFile<C> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        read: Some(empty_read),
        write: Some(command_write::<C>),
        llseek: Some(bindings::noop_llseek),
        ..NO_FOPS
    };
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
    /// A reference to the page of kernel memory at `address`: vmlinux's
    /// image, module memory or the direct map (`ENXIO` for anything
    /// else). It keeps the
    /// page after the memory is freed (a module's, at its unload).
    ///
    /// # Safety
    ///
    /// `address` is mapped for the call.
    pub(crate) unsafe fn of_memory(address: usize) -> Result<Self> {
        // SAFETY: `address` is mapped (the function's contract);
        // `kpgo_get_page_of` takes a reference if it finds a page.
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
        // SAFETY: a page of `PAGE_SIZE` bytes, mapped in the linear map,
        // which only this reference reaches (type invariant) and `&mut
        // self` borrows.
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
    /// the live pages (each `PageRef::of_memory` of memory written only
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
            // SAFETY: `count` pointers to pages that `pages` holds
            // (`PageRef` is a transparent page pointer), which outlive the
            // alias: the drop unmaps it first.
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
                // SAFETY: `n` bytes inside a live page, which `alias` maps
                // until the drop, written only by kernel code and atomics
                // (type invariant).
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
        release: Some(release_attached::<FilePages>),
        ..NO_FOPS
    };
}

/// Puts the pages together and hands them to the open file.
///
/// # Safety
///
/// Called by the VFS as `open` of a file created by [`Dir::mapped_file`]:
/// `inode` and `file` are valid for the call.
unsafe extern "C" fn mapped_open<M: MappedSource>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    let make = |key| {
        let pages = M::pages(key)?;
        // SAFETY: `file` is being opened (the function's contract).
        unsafe { kpgo_set_file_size(file.cast(), pages.len as bindings::loff_t) };
        Ok(pages)
    };
    // SAFETY: the function's contract; the release is
    // `release_attached::<FilePages>`.
    unsafe { attach_on_open(inode, file, make) }
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
    let (pages, start) = unsafe { (attached::<FilePages>(file), *pos) };
    let Ok(start) = usize::try_from(start) else {
        return EINVAL.to_errno() as isize;
    };
    let mut writer = UserSlice::new(buf as usize, count).writer();
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
        if let Err(error) = writer.write_slice(&chunk[..got]) {
            if done == 0 {
                return error.to_errno() as isize;
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
    let pages = unsafe { attached::<FilePages>(file) };
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
    let len = unsafe { attached::<FilePages>(file) }.len;
    // SAFETY: `file` is valid (the function's contract).
    unsafe { bindings::fixed_size_llseek(file, offset, whence, len as bindings::loff_t) }
}

/// What `open` attached to `file` (see [`attach_on_open`]).
///
/// # Safety
///
/// `file` is valid, and an [`attach_on_open`] for `T` opened it: the
/// reference lives until the release, which the VFS never runs during
/// another call of the file.
unsafe fn attached<'a, T>(file: *mut bindings::file) -> &'a T {
    // SAFETY: the function's contract.
    unsafe { &*((*file).private_data as *const T) }
}

/// The common part of `open`: refuses a writer (`-EACCES`), makes the
/// file's `T` from the key it was created with and attaches it.
///
/// # Safety
///
/// Called from the VFS's `open`: `inode` and `file` are valid for the
/// call, and the file's `release` is [`release_attached::<T>`].
unsafe fn attach_on_open<T>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
    make: impl FnOnce(usize) -> Result<T>,
) -> c_int {
    // SAFETY: both are valid for the call (the function's contract);
    // `i_private` holds the key the file was created with.
    let (key, mode) = unsafe { ((*inode).i_private as usize, (*file).f_mode) };
    if mode & FMODE_WRITE != 0 {
        return EACCES.to_errno();
    }
    let attached = match make(key).and_then(|value| Ok(KBox::new(value, GFP_KERNEL)?)) {
        Ok(attached) => attached,
        Err(error) => return error.to_errno(),
    };
    // SAFETY: `file` is being opened: its `private_data` is ours until
    // `release_attached` takes it back.
    unsafe { (*file).private_data = KBox::into_raw(attached).cast() };
    0
}

/// Frees what [`attach_on_open`] attached. Mappings keep their own page
/// references.
///
/// # Safety
///
/// Called by the VFS as `release` of a file that an [`attach_on_open`]
/// for `T` opened (a failed open is never released).
unsafe extern "C" fn release_attached<T>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` is `attach_on_open`'s `KBox::into_raw`,
    // released exactly once, here.
    drop(unsafe { KBox::from_raw((*file).private_data as *mut T) });
    0
}

/// Produces the snapshot and hands it to the open file.
///
/// # Safety
///
/// Called by the VFS as `open` of a file created by
/// [`Dir::snapshot_file`]: `inode` and `file` are valid for the call.
unsafe extern "C" fn snapshot_open<S: SnapshotSource>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: the function's contract; the release is
    // `release_attached::<KVVec<u8>>`.
    unsafe { attach_on_open(inode, file, S::snapshot) }
}

/// # Safety
///
/// Called by the VFS as `read` of a file opened by [`snapshot_open`]:
/// `file` and `pos` are valid, `buf` is a user pointer of `count` bytes.
unsafe extern "C" fn snapshot_read(
    file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    pos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `snapshot_open` attached the bytes (the function's contract).
    let bytes = unsafe { attached::<KVVec<u8>>(file) };
    // SAFETY: `buf`/`count` are the user's buffer and `pos` the position
    // (the function's contract); `bytes` is readable for its length.
    unsafe {
        bindings::simple_read_from_buffer(
            buf.cast(),
            count,
            pos,
            bytes.as_ptr().cast(),
            bytes.len(),
        )
    }
}

/// A command file reads as empty, so that copying the directory copies no
/// command.
///
/// # Safety
///
/// None beyond the VFS's `read` contract: no argument is used.
unsafe extern "C" fn empty_read(
    _file: *mut bindings::file,
    _buf: *mut c_char,
    _count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    0
}

/// Reads one command from user space and applies it.
///
/// # Safety
///
/// Called by the VFS as `write`: `buf` is a user pointer of `count` bytes.
unsafe extern "C" fn command_write<C: CommandSink>(
    _file: *mut bindings::file,
    buf: *const c_char,
    count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    let mut storage = [0u8; MAX_COMMAND];
    match read_command(buf, count, &mut storage).and_then(C::command) {
        // All `count` bytes taken.
        Ok(()) => count as isize,
        Err(error) => error.to_errno() as isize,
    }
}

/// Copies a command of at most [`MAX_COMMAND`] bytes from user space and
/// removes one trailing newline.
fn read_command(
    buf: *const c_char,
    count: usize,
    storage: &mut [u8; MAX_COMMAND],
) -> Result<&[u8]> {
    if count == 0 || count > MAX_COMMAND {
        return Err(EINVAL);
    }
    UserSlice::new(buf as usize, count)
        .reader()
        .read_slice(&mut storage[..count])?;
    let command = &storage[..count];
    Ok(command.strip_suffix(b"\n").unwrap_or(command))
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
        // SAFETY: `input` is readable and `out` writable for their lengths,
        // which zlib does not go past; the workspace is this inflater's,
        // of the size zlib asked for, and used by one call at a time
        // (`&mut self`).
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

/// With sampled instrumentation: the period, and how many updates of each
/// period the compiled code records (`glue.c`).
#[cfg(CONFIG_PGO_CLANG_SAMPLING)]
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

/// An RCU read-side section, from [`Self::enter`] to the drop: what was
/// found in it and is freed after a grace period (`free_after_grace_period`)
/// stays valid until it ends. It must not sleep. (Without modules nothing
/// is freed that way, and it is empty.)
pub(crate) struct ReadSection {
    active: bool,
    _not_send: PhantomData<*mut ()>,
}

impl ReadSection {
    /// Begins the section.
    pub(crate) fn enter() -> Self {
        // The drop ends it, in this task: the guard is not `Send`.
        #[cfg(CONFIG_MODULES)]
        // SAFETY: no precondition.
        unsafe {
            modules::kpgo_read_lock()
        };
        Self {
            active: true,
            _not_send: PhantomData,
        }
    }

    /// No section at all, where only objects that are never freed are
    /// read (vmlinux's): serializing a whole kernel image's profile in an
    /// RCU read-side section would hold every grace period up, and with
    /// them every module unload.
    ///
    /// # Safety
    ///
    /// What is read while it is held is never freed.
    pub(crate) unsafe fn for_static_objects() -> Self {
        Self {
            active: false,
            _not_send: PhantomData,
        }
    }
}

impl ReadSection {
    /// Whether sleeping is allowed while this is held: only without a
    /// section at all.
    pub(crate) fn may_sleep(&self) -> bool {
        !self.active
    }
}

impl Drop for ReadSection {
    fn drop(&mut self) {
        if self.active {
            // SAFETY: `enter` began the section in this task.
            #[cfg(CONFIG_MODULES)]
            unsafe {
                modules::kpgo_read_unlock()
            };
        }
    }
}
