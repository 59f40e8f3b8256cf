// SPDX-License-Identifier: GPL-2.0

//! The debugfs directories and files of `/sys/kernel/debug/pgo/`.
//!
//! A [`Dir`] is removed, with every file in it, when the last handle to it
//! and to its subdirectories is dropped. Files have no handle: they are
//! created in a directory and go with it. Two kinds of file here, and a
//! third, mappable one in `kernel_api`:
//!
//! - a read-only file whose contents are produced when it is opened
//!   ([`Snapshot`]), so that a reader sees one consistent state however
//!   small its reads;
//! - a write-only file that takes short commands ([`Command`]).
//!
//! Each file is created with a `key`, an opaque word that is handed back
//! to its callbacks, so that one implementation serves many files.
//!
//! Not `kernel::debugfs`: mainline's (6.18 on) ties typed data to each
//! file and formats it on every read (`Writer`), where a profile must be
//! produced once, at open, and stay attached to the open file; it has no
//! command file whose write fails with the command's error, and no
//! mappable file. These are what one built-in user needs, so they stay
//! here: kpgo is never a module, so its files need no `owner`.

// A file's `owner` pins the module that serves it while the file is open;
// these have none, which is sound only built in (`PGO_CLANG` is a bool).
#[cfg(MODULE)]
compile_error!("kpgo's debugfs files have no owner: it must be built in, not a module");

use core::{ffi::c_void, marker::PhantomData, ptr};

use kernel::{
    alloc::{KBox, KVVec},
    bindings,
    error::from_err_ptr,
    ffi::{c_char, c_int},
    prelude::*,
    sync::Arc,
};

/// The longest command a [`Command`] file takes, in bytes, a trailing
/// newline included.
pub(crate) const MAX_COMMAND_LEN: usize = 64;

/// A debugfs directory, removed with everything in it when the last `Dir`
/// of it and of its subdirectories is dropped.
#[derive(Clone)]
pub(crate) struct Dir(Arc<Entry>);

/// A directory that debugfs created.
///
/// # Invariants
///
/// `dentry` is a directory returned by `debugfs_create_dir` (not an error
/// pointer), removed only by this entry's drop. `_parent` is the entry of
/// the directory it was created in, if any, which therefore outlives it.
struct Entry {
    dentry: *mut bindings::dentry,
    _parent: Option<Arc<Entry>>,
}

// SAFETY: an `Entry` only hands its dentry to debugfs functions, which any
// thread may call, and removes it once, in its drop.
unsafe impl Send for Entry {}
// SAFETY: as for `Send`: a shared `Entry` creates files and subdirectories,
// which debugfs serializes itself.
unsafe impl Sync for Entry {}

impl Drop for Entry {
    fn drop(&mut self) {
        // debugfs removes what is in the directory too, waits for the
        // handlers that are running and fails later calls of files still open.
        // SAFETY: `self.dentry` is a live directory (type invariant), whose
        // parent, if any, is alive (`self._parent` is dropped after this).
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

impl Dir {
    /// Creates the directory `name` at the root of debugfs.
    pub(crate) fn new(name: &CStr) -> Result<Self> {
        Self::create(name, None)
    }

    /// Creates the directory `name` in this one. The new directory keeps
    /// this one alive.
    pub(crate) fn subdir(&self, name: &CStr) -> Result<Self> {
        Self::create(name, Some(self.0.clone()))
    }

    fn create(name: &CStr, parent: Option<Arc<Entry>>) -> Result<Self> {
        let parent_dentry = parent
            .as_ref()
            .map_or(ptr::null_mut(), |entry| entry.dentry);
        // SAFETY: `name` is NUL-terminated; `parent_dentry` is null (the
        // root) or a live directory (type invariant of `Entry`).
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), parent_dentry) };
        // INVARIANT: an error pointer becomes its error here; `parent` is
        // the entry the directory was created in.
        let entry = Entry {
            dentry: from_err_ptr(dentry)?,
            _parent: parent,
        };
        // On an allocation failure `entry` is dropped: the directory is
        // removed again.
        Ok(Self(Arc::new(entry, GFP_KERNEL)?))
    }

    /// Creates `name`, mode 0400, whose contents `S` produces for `key` at
    /// each open. Opening it for writing fails with `EACCES`, so that
    /// nothing is produced for a writer.
    pub(crate) fn snapshot_file<S: Snapshot>(&self, name: &CStr, key: usize) -> Result {
        self.create_file(name, 0o400, key, &SnapshotFile::<S>::FOPS)
    }

    /// Creates `name`, mode 0200, whose writes are commands for `C`. It
    /// reads as empty, so that copying the directory copies no command.
    pub(crate) fn command_file<C: Command>(&self, name: &CStr) -> Result {
        self.create_file(name, 0o200, 0, &CommandFile::<C>::FOPS)
    }

    /// The directory's dentry, for the mappable file (`kernel_api`). It is
    /// valid as long as `self` is.
    pub(crate) fn as_raw(&self) -> *mut bindings::dentry {
        self.0.dentry
    }

    fn create_file(
        &self,
        name: &CStr,
        mode: u16,
        key: usize,
        fops: &'static bindings::file_operations,
    ) -> Result {
        // glue.c. The dentry and the table only pass through: `c_void`
        // (bindgen's layouts of some of their fields are not FFI-safe).
        extern "C" {
            fn kpgo_debugfs_create_file(
                name: *const c_char,
                mode: u16,
                parent: *mut c_void,
                data: *mut c_void,
                fops: *const c_void,
            ) -> *mut c_void;
        }
        // `key` is stored in the inode as an opaque word that the handlers
        // below only turn back into a `usize`.
        // SAFETY: `name` is NUL-terminated, `self.0.dentry` a live directory
        // (type invariant of `Entry`), `fops` static.
        let dentry = unsafe {
            kpgo_debugfs_create_file(
                name.as_char_ptr(),
                mode,
                self.0.dentry.cast(),
                key as *mut c_void,
                ptr::from_ref(fops).cast(),
            )
        };
        from_err_ptr(dentry.cast::<bindings::dentry>()).map(|_| ())
    }
}

/// The contents of a read-only file, produced when it is opened.
pub(crate) trait Snapshot {
    /// The contents of the file created with `key`, as of now. An error
    /// fails the open.
    fn snapshot(key: usize) -> Result<KVVec<u8>>;
}

/// A write-only file that takes short commands.
pub(crate) trait Command {
    /// Applies `command`: what one write gave, at most [`MAX_COMMAND_LEN`]
    /// bytes, one trailing newline removed. An error is returned to the
    /// writer.
    fn command(command: &[u8]) -> Result;
}

/// All-zero `file_operations`: every callback `None`, no owner (kpgo is
/// built in).
pub(crate) const NO_FOPS: bindings::file_operations =
    // SAFETY: `file_operations` is plain data whose fields are all valid
    // when zero (null owner, `None` callbacks, no flags).
    unsafe { core::mem::MaybeUninit::zeroed().assume_init() };

/// The `file_operations` of a [`Snapshot`] file.
struct SnapshotFile<S>(PhantomData<S>);

impl<S: Snapshot> SnapshotFile<S> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(snapshot_open::<S>),
        read: Some(snapshot_read),
        llseek: Some(bindings::default_llseek),
        release: Some(snapshot_release),
        ..NO_FOPS
    };
}

/// The `file_operations` of a [`Command`] file.
struct CommandFile<C>(PhantomData<C>);

impl<C: Command> CommandFile<C> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        read: Some(empty_read),
        write: Some(command_write::<C>),
        llseek: Some(bindings::noop_llseek),
        ..NO_FOPS
    };
}

/// The key a read-only file was created with, for its `open`: `EACCES`
/// for a writer, so that nothing is produced for one.
///
/// # Safety
///
/// `inode` and `file` are valid, as in the VFS's call of `open`, and the
/// file was created with a key in `i_private`.
pub(crate) unsafe fn reader_key(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> Result<usize> {
    // SAFETY: both are valid (the function's contract).
    let (key, mode) = unsafe { ((*inode).i_private as usize, (*file).f_mode) };
    if mode & bindings::FMODE_WRITE != 0 {
        return Err(EACCES);
    }
    Ok(key)
}

/// Refuses a writer, then produces the contents and attaches them to the
/// open file.
///
/// # Safety
///
/// Called by the VFS as `open` of a file that [`Dir::snapshot_file`]
/// created: `inode` and `file` are valid for the call.
unsafe extern "C" fn snapshot_open<S: Snapshot>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: the function's contract is `reader_key`'s.
    let contents = unsafe { reader_key(inode, file) }
        .and_then(S::snapshot)
        .and_then(|bytes| Ok(KBox::new(bytes, GFP_KERNEL)?));
    let contents = match contents {
        Ok(contents) => contents,
        Err(error) => return error.to_errno(),
    };
    // SAFETY: `file` is being opened: its `private_data` is ours until
    // `snapshot_release` takes it back.
    unsafe { (*file).private_data = KBox::into_raw(contents).cast() };
    0
}

/// The contents [`snapshot_open`] attached to `file`.
///
/// # Safety
///
/// `file` is valid and was opened by [`snapshot_open`]; the reference is
/// used only until the file's release, which the VFS never runs during
/// another call of the file.
unsafe fn contents<'a>(file: *mut bindings::file) -> &'a KVVec<u8> {
    // SAFETY: the function's contract.
    unsafe { &*((*file).private_data as *const KVVec<u8>) }
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
    // SAFETY: `snapshot_open` opened `file` (the function's contract).
    let bytes = unsafe { contents(file) };
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

/// Frees what [`snapshot_open`] attached.
///
/// # Safety
///
/// Called by the VFS as `release` of a file that [`snapshot_open`] opened
/// (a failed open is never released).
unsafe extern "C" fn snapshot_release(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` is `snapshot_open`'s `KBox::into_raw`, taken
    // back exactly once, here.
    drop(unsafe { KBox::from_raw((*file).private_data.cast::<KVVec<u8>>()) });
    0
}

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

/// Copies one command from user space and applies it.
///
/// # Safety
///
/// Called by the VFS as `write`: `buf` is a user pointer of `count` bytes.
unsafe extern "C" fn command_write<C: Command>(
    _file: *mut bindings::file,
    buf: *const c_char,
    count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    if count == 0 || count > MAX_COMMAND_LEN {
        return EINVAL.to_errno() as isize;
    }
    let mut storage = [0u8; MAX_COMMAND_LEN];
    let mut offset: bindings::loff_t = 0;
    // Each write is a whole command, from its first byte: the file
    // position is not used.
    // SAFETY: `storage` is writable for `MAX_COMMAND_LEN` bytes, `offset` a
    // valid position; `buf`/`count` are the user's (the function's contract).
    let copied = unsafe {
        bindings::simple_write_to_buffer(
            storage.as_mut_ptr().cast(),
            MAX_COMMAND_LEN,
            &mut offset,
            buf.cast(),
            count,
        )
    };
    if copied != count as isize {
        return if copied < 0 {
            copied
        } else {
            EFAULT.to_errno() as isize
        };
    }
    let command = &storage[..count];
    match C::command(command.strip_suffix(b"\n").unwrap_or(command)) {
        // All `count` bytes taken.
        Ok(()) => count as isize,
        Err(error) => error.to_errno() as isize,
    }
}
