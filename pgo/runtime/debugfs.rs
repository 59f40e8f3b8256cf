// SPDX-License-Identifier: GPL-2.0

//! The debugfs interface: `/sys/kernel/debug/pgo/`.
//!
//! - `vmlinux.profraw`, `<module>.profraw` (0600): the raw profile,
//!   snapshotted at `open()` (a module's kept profiles first); writing
//!   anything to it resets that object.
//! - `reset` (0600): `1` or `all` resets every object, `vmlinux` or a
//!   module name only that one; anything else is `-EINVAL` and changes
//!   nothing. Reading it gives 0 bytes, so a recursive copy of the
//!   directory works.
//! - `stats` (0400): one line per object.
//!
//! The files carry kernel addresses, hence root only.

use core::ffi::c_void;
use core::fmt::Write;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use kernel::bindings;
use kernel::c_str;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::uaccess::UserSlice;

use super::registry::{lock, Entry};
use super::snapshot::Snapshot;

/// Longest command `reset` accepts (a module name has at most 55 bytes).
const MAX_COMMAND: usize = 64;

/// The `pgo` directory.
static DIR: AtomicPtr<bindings::dentry> = AtomicPtr::new(ptr::null_mut());

/// Creates the directory and its `reset` and `stats` files.
pub(crate) fn create() -> Result {
    // SAFETY: a valid NUL-terminated name; a null parent is debugfs's root.
    let dir = unsafe { bindings::debugfs_create_dir(c_str!("pgo").as_char_ptr(), ptr::null_mut()) };
    check(dir)?;
    DIR.store(dir, Ordering::Release);
    create_file(c_str!("reset"), 0o600, dir, ptr::null_mut(), &RESET_FOPS)?;
    create_file(c_str!("stats"), 0o400, dir, ptr::null_mut(), &STATS_FOPS)?;
    Ok(())
}

/// Creates `<name>.profraw` for `entry`.
///
/// # Safety
///
/// `entry` is never freed.
pub(crate) unsafe fn create_profile_file(entry: *const Entry) -> Result {
    const SUFFIX: &[u8] = b".profraw\0";
    // SAFETY: the caller keeps `entry` alive for good.
    let name = unsafe { (*entry).name() };
    let mut file_name = [0u8; 64 + SUFFIX.len()];
    file_name[..name.len()].copy_from_slice(name);
    file_name[name.len()..name.len() + SUFFIX.len()].copy_from_slice(SUFFIX);
    let file_name = CStr::from_bytes_with_nul(&file_name[..name.len() + SUFFIX.len()])?;
    let dir = DIR.load(Ordering::Acquire);
    create_file(file_name, 0o600, dir, entry as *mut c_void, &PROFRAW_FOPS)
}

fn create_file(
    name: &CStr,
    mode: u16,
    dir: *mut bindings::dentry,
    data: *mut c_void,
    fops: &'static FileOps,
) -> Result {
    // SAFETY: `name` is NUL-terminated, `dir` a debugfs directory, `fops`
    // static; `data` is a never-freed registry entry or null.
    check(unsafe { bindings::debugfs_create_file(name.as_char_ptr(), mode, dir, data, &fops.0) })
}

/// debugfs returns error pointers, never null.
fn check(dentry: *mut bindings::dentry) -> Result {
    // SAFETY: `IS_ERR_VALUE` arithmetic on an address, nothing is read.
    if unsafe { bindings::IS_ERR(dentry as *const c_void) } {
        return Err(ENOMEM);
    }
    Ok(())
}

/// A `file_operations` table that can be a `static`.
#[repr(transparent)]
struct FileOps(bindings::file_operations);

// SAFETY: the tables are never written after compilation; their only
// pointer (`owner`) is null for built-in code.
unsafe impl Sync for FileOps {}

/// All-zero `file_operations`: every callback `None`, no owner (builtin).
const NO_FOPS: bindings::file_operations =
    // SAFETY: `file_operations` is plain data whose fields are all valid
    // when zero (null owner, `None` callbacks, no flags).
    unsafe { core::mem::MaybeUninit::zeroed().assume_init() };

static PROFRAW_FOPS: FileOps = FileOps(bindings::file_operations {
    open: Some(profraw_open),
    read: Some(snapshot_read),
    write: Some(profraw_write),
    llseek: Some(bindings::default_llseek),
    release: Some(snapshot_release),
    ..NO_FOPS
});

static STATS_FOPS: FileOps = FileOps(bindings::file_operations {
    open: Some(stats_open),
    read: Some(snapshot_read),
    llseek: Some(bindings::default_llseek),
    release: Some(snapshot_release),
    ..NO_FOPS
});

static RESET_FOPS: FileOps = FileOps(bindings::file_operations {
    read: Some(empty_read),
    write: Some(reset_write),
    llseek: Some(bindings::noop_llseek),
    ..NO_FOPS
});

/// Hands `snapshot` to the open file.
///
/// # Safety
///
/// `file` is the file being opened.
unsafe fn attach(file: *mut bindings::file, snapshot: Result<Snapshot>) -> c_int {
    let boxed = match snapshot.and_then(|s| Ok(KBox::new(s, GFP_KERNEL)?)) {
        Ok(boxed) => boxed,
        Err(error) => return error.to_errno(),
    };
    // SAFETY: `file` is being opened and its `private_data` is ours until
    // `snapshot_release` takes it back.
    unsafe { (*file).private_data = KBox::into_raw(boxed).cast() };
    0
}

/// The registry entry a profraw file was created for.
///
/// # Safety
///
/// `inode` is the inode of a profraw file created by
/// [`create_profile_file`].
unsafe fn entry_of(inode: *mut bindings::inode) -> *mut Entry {
    // SAFETY: profraw files carry their never-freed entry as private data.
    unsafe { (*inode).i_private as *mut Entry }
}

unsafe extern "C" fn profraw_open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    let _registry = lock();
    // SAFETY: called by the VFS on a profraw file being opened; the entry
    // is only used under the registry lock.
    unsafe { attach(file, (*entry_of(inode)).snapshot()) }
}

unsafe extern "C" fn stats_open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: called by the VFS on the stats file being opened.
    unsafe { attach(file, stats_report()) }
}

/// One line per object.
fn stats_report() -> Result<Snapshot> {
    let mut text = Text(VVec::new());
    lock().write_stats(&mut text).map_err(|_| ENOMEM)?;
    Ok(Snapshot::from_bytes(text.0))
}

/// A growable text buffer for `write!`.
struct Text(VVec<u8>);

impl Write for Text {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| core::fmt::Error)
    }
}

unsafe extern "C" fn snapshot_read(
    file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    pos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `private_data` holds the snapshot attached at open, alive
    // until release, which cannot run concurrently with a read.
    let snapshot = unsafe { &*((*file).private_data as *const Snapshot) };
    let bytes = snapshot.bytes();
    // SAFETY: `buf`/`count` are the user's buffer, `pos` the file position;
    // `bytes` is readable for its length.
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

unsafe extern "C" fn snapshot_release(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` was set by `attach` from `KBox::into_raw` and
    // is released exactly once, here.
    drop(unsafe { KBox::from_raw((*file).private_data as *mut Snapshot) });
    0
}

/// `reset` reads as empty, so that copying the directory copies no command.
unsafe extern "C" fn empty_read(
    _file: *mut bindings::file,
    _buf: *mut c_char,
    _count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    0
}

/// What a `write` handler returns: all `count` bytes taken, or the error.
fn written(result: Result, count: usize) -> isize {
    match result {
        Ok(()) => count as isize,
        Err(error) => error.to_errno() as isize,
    }
}

/// Reads a short command from user space: at most [`MAX_COMMAND`] bytes,
/// one trailing newline removed.
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

unsafe extern "C" fn profraw_write(
    file: *mut bindings::file,
    _buf: *const c_char,
    count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    let _registry = lock();
    // SAFETY: the file is an open profraw file; its entry is only used
    // under the registry lock.
    written(unsafe { (*entry_of((*file).f_inode)).reset() }, count)
}

unsafe extern "C" fn reset_write(
    _file: *mut bindings::file,
    buf: *const c_char,
    count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    let mut storage = [0u8; MAX_COMMAND];
    written(
        read_command(buf, count, &mut storage).and_then(|command| lock().reset(command)),
        count,
    )
}
