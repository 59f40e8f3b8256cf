// SPDX-License-Identifier: GPL-2.0

//! kpgo test module in Rust: a deterministic workload whose profile is
//! known exactly. One run (at init, and at each read of
//! `/sys/kernel/debug/pgo_test_rust/run`) makes:
//!   - 10 calls of `leaf()`;
//!   - 10 calls through a trait object (`&dyn Op`) at one site:
//!     6 to `Six::apply`, 3 to `Three::apply`, 1 to `One::apply`;
//!   - 4 calls through a function pointer at one site: 3 to `double`,
//!     1 to `square`;
//!   - 6 copies of run-time sizes at one site (`copy_nonoverlapping`, a
//!     memcpy), sizes 3, 3, 8, 64, 100, 100 (memop buckets 3: 2, 8: 1,
//!     64: 1, 65: 2).
//!
//! `tests/kernel/rust.sh` checks these counts in `pgo_test_rust.profraw`.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::hint::black_box;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use kernel::bindings;
use kernel::c_str;
use kernel::ffi::c_char;
use kernel::prelude::*;

module! {
    type: PgoTestRust,
    name: "pgo_test_rust",
    description: "kpgo test module: a known profile from Rust",
    license: "GPL",
}

/// Results go here, so that the work is not optimized away.
static SINK: AtomicU64 = AtomicU64::new(0);

trait Op: Sync {
    fn apply(&self, x: u64) -> u64;
}

struct Six;
struct Three;
struct One;

impl Op for Six {
    #[inline(never)]
    fn apply(&self, x: u64) -> u64 {
        x * 6
    }
}

impl Op for Three {
    #[inline(never)]
    fn apply(&self, x: u64) -> u64 {
        x * 3
    }
}

impl Op for One {
    #[inline(never)]
    fn apply(&self, x: u64) -> u64 {
        x.wrapping_sub(1)
    }
}

#[inline(never)]
fn leaf(x: u64) -> u64 {
    x + 1
}

#[inline(never)]
fn double(x: u64) -> u64 {
    x * 2
}

#[inline(never)]
fn square(x: u64) -> u64 {
    x.wrapping_mul(x)
}

static OPS: [&dyn Op; 10] = [
    &Six, &Six, &Six, &Six, &Six, &Six, &Three, &Three, &Three, &One,
];
static FNS: [fn(u64) -> u64; 4] = [double, double, double, square];
static SIZES: [usize; 6] = [3, 3, 8, 64, 100, 100];

/// One run of the workload. `black_box` keeps the targets and sizes
/// run-time values: the calls stay indirect, the copies stay memcpy calls.
#[inline(never)]
fn run() {
    let mut sum = 0u64;
    for i in 0..10 {
        sum = sum.wrapping_add(leaf(black_box(i)));
    }
    let ops: &[&dyn Op] = black_box(&OPS);
    for (i, op) in ops.iter().enumerate() {
        sum = sum.wrapping_add(op.apply(i as u64));
    }
    let fns: &[fn(u64) -> u64] = black_box(&FNS);
    for (i, f) in fns.iter().enumerate() {
        sum = sum.wrapping_add(f(i as u64));
    }
    let src = [0x5au8; 128];
    let mut dst = [0u8; 128];
    for (i, &size) in black_box(&SIZES).iter().enumerate() {
        let size = size.min(dst.len());
        // SAFETY: `size` fits both arrays, which do not overlap.
        unsafe { ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr(), size) };
        sum = sum.wrapping_add(u64::from(black_box(&dst)[i]));
    }
    SINK.fetch_add(sum, Ordering::Relaxed);
}

/// `read` of the `run` file: one run per read from offset 0.
unsafe extern "C" fn run_read(
    _file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    pos: *mut bindings::loff_t,
) -> isize {
    const RAN: &[u8] = b"ran\n";
    // SAFETY: `pos` is the file position the VFS passes to `read`.
    if unsafe { *pos } == 0 {
        run();
    }
    // SAFETY: `buf` and `count` are the user buffer of this `read`, `pos`
    // its position; the source is a static of `RAN.len()` bytes.
    unsafe {
        bindings::simple_read_from_buffer(buf.cast(), count, pos, RAN.as_ptr().cast(), RAN.len())
    }
}

/// The `run` file's `file_operations`: a cell, so that `init` can set its
/// `owner` (an open file pins the module, as `.owner = THIS_MODULE` does
/// in C).
struct FileOps(UnsafeCell<bindings::file_operations>);

// SAFETY: the table is written once, by `init`, before debugfs can see it;
// afterwards it is only read.
unsafe impl Sync for FileOps {}

static RUN_FOPS: FileOps = FileOps(UnsafeCell::new(bindings::file_operations {
    read: Some(run_read),
    llseek: Some(bindings::default_llseek),
    // SAFETY: all-zero is a valid `file_operations` (null owner, no
    // callbacks, no flags).
    ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
}));

/// The `pgo_test_rust` debugfs directory.
static DIR: AtomicPtr<bindings::dentry> = AtomicPtr::new(ptr::null_mut());

struct PgoTestRust;

impl kernel::Module for PgoTestRust {
    fn init(module: &'static ThisModule) -> Result<Self> {
        // Before the module is live: these counts must be kept too.
        run();
        let fops = RUN_FOPS.0.get();
        // SAFETY: nothing else has seen `RUN_FOPS` yet (see `FileOps`).
        unsafe { (*fops).owner = module.as_ptr() };
        // SAFETY: a valid NUL-terminated name; a null parent is debugfs's
        // root. debugfs returns a dentry or an error pointer.
        let dir = unsafe {
            bindings::debugfs_create_dir(c_str!("pgo_test_rust").as_char_ptr(), ptr::null_mut())
        };
        // Without debugfs's proxy (debugfs_create_file() is a macro in 7.3,
        // which Rust cannot call): the table's owner pins the module while
        // the file is open, and its handlers free nothing.
        // SAFETY: as above, with a table that lives as long as the module;
        // in an error-pointer directory no file is created.
        unsafe {
            bindings::debugfs_create_file_unsafe(
                c_str!("run").as_char_ptr(),
                0o400,
                dir,
                ptr::null_mut::<c_void>(),
                fops,
            )
        };
        DIR.store(dir, Ordering::Release);
        Ok(PgoTestRust)
    }
}

impl Drop for PgoTestRust {
    fn drop(&mut self) {
        // SAFETY: the directory created by `init` (or an error pointer,
        // which debugfs_remove ignores); no file of it is open, since an
        // open file pins the module.
        unsafe { bindings::debugfs_remove(DIR.load(Ordering::Acquire)) };
    }
}
