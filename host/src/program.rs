// SPDX-License-Identifier: GPL-2.0

//! The running program as a [`ProfiledObject`], its hooks and its exit dump.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::profile::sections::{ProfiledObject, SectionRange, MAX_NOTE_RANGES};
use crate::profile::sink::{Measure, Sink, SliceSink};
use crate::profile::writer::{profile_size, serialize, write_live, PageSize, WriteError};

// Every section symbol must be defined, since Rust may assume a static's
// address is never null: empty input sections make the linker define the
// start/stop symbols of sections the program lacks (no MC/DC bitmap, no
// value site), and a weak version word of 0 stands in for the compiler's
// (refused, so nothing is written) if the program is not instrumented.
#[used]
#[link_section = "__llvm_prf_data"]
static EMPTY_DATA: [u64; 0] = [];
#[used]
#[link_section = "__llvm_prf_cnts"]
static EMPTY_COUNTERS: [u64; 0] = [];
#[used]
#[link_section = "__llvm_prf_bits"]
static EMPTY_BITMAP: [u8; 0] = [];
#[used]
#[link_section = "__llvm_prf_names"]
static EMPTY_NAMES: [u8; 0] = [];
#[used]
#[link_section = "__llvm_prf_vals"]
static EMPTY_VALUES: [u64; 0] = [];
core::arch::global_asm!(
    ".pushsection .rodata.kpgo_version_fallback, \"a\"",
    ".balign 8",
    ".weak __llvm_profile_raw_version",
    "__llvm_profile_raw_version:",
    ".quad 0",
    ".popsection",
);

crate::linked_image!(fn program_sections, fn version_word);

extern "C" {
    static __ehdr_start: ElfHeader;
    fn atexit(callback: extern "C" fn()) -> i32;
}

/// Nodes added to the compiler's pool, as compiler-rt adds them: the
/// compiler sizes the pool at one node per site, which programs with
/// several targets per site outgrow.
const EXTRA_VALUE_NODES: usize = 1024;

#[used]
#[link_section = "__llvm_prf_vnds"]
static EXTRA_NODES: [AtomicU64; 3 * EXTRA_VALUE_NODES] =
    [const { AtomicU64::new(0) }; 3 * EXTRA_VALUE_NODES];

// SAFETY: the ranges are the linker's bounds of the compiler-emitted
// sections of this very program (or null for absent ones), mapped for the
// life of the process; the version word is the compiler's.
static PROGRAM: ProfiledObject = unsafe {
    ProfiledObject::new(
        program_sections([SectionRange::EMPTY; MAX_NOTE_RANGES]),
        version_word(),
    )
};

/// The program as the hooks see it.
pub fn program_object() -> &'static ProfiledObject {
    &PROGRAM
}

/// compiler-rt's hook for indirect-call targets.
#[no_mangle]
pub extern "C" fn __llvm_profile_instrument_target(value: u64, data: *mut c_void, index: u32) {
    PROGRAM.record_target(data as usize, index, value);
}

/// compiler-rt's hook for memop sizes.
#[no_mangle]
pub extern "C" fn __llvm_profile_instrument_memop(size: u64, data: *mut c_void, index: u32) {
    PROGRAM.record_memop(data as usize, index, size);
}

/// Zeroes counters and value counts, like compiler-rt's function.
#[no_mangle]
pub extern "C" fn __llvm_profile_reset_counters() {
    let _ = PROGRAM.reset();
}

/// Writes the profile now; 0 on success, -1 on failure (compiler-rt's API).
#[no_mangle]
pub extern "C" fn __llvm_profile_write_file() -> i32 {
    match write_profile_file() {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("kpgo: {error}");
            -1
        }
    }
}

/// The symbol clang's driver asks the linker to keep (`-u`): referencing it
/// pulls in this object, whose constructor registers the exit dump.
#[no_mangle]
#[used]
pub static __llvm_profile_runtime: i32 = 0;

#[used]
#[link_section = ".init_array"]
static INITIALIZE: extern "C" fn() = initialize;

/// The reset baselines of the program's node pool (see the core's
/// `value`), allocated by `initialize`, for `PROGRAM` and the descriptor
/// that writes the profile alike.
static BASELINES: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());

/// Gives `object`, a descriptor of the program, the program's baselines.
fn attach_baselines(object: &ProfiledObject) {
    let baselines = BASELINES.load(Ordering::Acquire);
    if !baselines.is_null() {
        // SAFETY: `initialize` leaked one zeroed `AtomicU64` per node of
        // the program's pool, for the life of the process.
        unsafe { object.attach_baselines(baselines) };
    }
}

extern "C" fn initialize() {
    let baselines: Vec<AtomicU64> = (0..PROGRAM.node_capacity())
        .map(|_| AtomicU64::new(0))
        .collect();
    BASELINES.store(
        Box::leak(baselines.into_boxed_slice()).as_mut_ptr(),
        Ordering::Release,
    );
    attach_baselines(&PROGRAM);
    if let Some(limit) = std::env::var("LLVM_VP_MAX_NUM_VALS_PER_SITE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        PROGRAM.set_values_per_site(limit);
    }
    // SAFETY: `dump_at_exit` is an `extern "C" fn()` valid for the life of
    // the process.
    unsafe { atexit(dump_at_exit) };
}

extern "C" fn dump_at_exit() {
    // A program that is not instrumented at all (the weak fallback word
    // is 0) has nothing to write and nothing to complain about.
    // SAFETY: the version word is always defined (see its fallback).
    if unsafe { version_word().read_volatile() } != 0 {
        __llvm_profile_write_file();
    }
}

/// Serializes the program's profile and writes it to its file.
pub fn write_profile_file() -> Result<(), String> {
    // SAFETY: the same sections as `PROGRAM`, plus the build-id notes of
    // the program's loaded `PT_NOTE` segments.
    let object = unsafe { ProfiledObject::new(program_sections(note_segments()), version_word()) };
    attach_baselines(&object);
    // KPGO_LIVE_PAGE_SIZE=N: the layout of a mapped profile (write_live),
    // for tests of it with llvm-profdata.
    let bytes = match std::env::var("KPGO_LIVE_PAGE_SIZE") {
        Ok(page) => {
            let size = page.parse().ok().and_then(PageSize::new);
            let size = size.ok_or(format!(
                "KPGO_LIVE_PAGE_SIZE={page}: not a power of two of 8 bytes or more"
            ))?;
            live_snapshot(&object, size)
        }
        Err(_) => snapshot(&object),
    }
    .map_err(|e| e.to_string())?;
    let path = profile_path();
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {path}: {e}"))
}

/// Measures, then serializes; measures again if the profile grew meanwhile
/// (other threads still recording values).
fn snapshot(object: &ProfiledObject) -> Result<Vec<u8>, WriteError> {
    loop {
        let mut buf = vec![0u8; profile_size(object)?];
        match serialize(object, &mut buf) {
            Ok(len) => {
                buf.truncate(len);
                return Ok(buf);
            }
            Err(WriteError::Overflow) => continue,
            Err(error) => return Err(error),
        }
    }
}

/// The profile laid out to be mapped with pages of `page`.
fn live_snapshot(object: &ProfiledObject, page: PageSize) -> Result<Vec<u8>, WriteError> {
    let mut measure = Measure::new();
    write_live(object, page, &mut measure)?;
    let mut buf = vec![0u8; measure.position()];
    let mut sink = SliceSink::new(&mut buf);
    write_live(object, page, &mut sink)?;
    Ok(buf)
}

/// `$LLVM_PROFILE_FILE` with `%p` replaced by the process id, or
/// `default.profraw`.
fn profile_path() -> String {
    match std::env::var("LLVM_PROFILE_FILE") {
        Ok(pattern) if !pattern.is_empty() => {
            pattern.replace("%p", &std::process::id().to_string())
        }
        _ => "default.profraw".to_string(),
    }
}

#[repr(C)]
struct ElfHeader {
    ident: [u8; 16],
    kind: u16,
    machine: u16,
    version: u32,
    entry: u64,
    program_headers_offset: u64,
    section_headers_offset: u64,
    flags: u32,
    header_size: u16,
    program_header_size: u16,
    program_headers: u16,
}

#[repr(C)]
struct ProgramHeader {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    paddr: u64,
    file_size: u64,
    memory_size: u64,
    align: u64,
}

const PT_NOTE: u32 = 4;

/// The loaded `PT_NOTE` segments of the executable or shared object the
/// runtime is linked into, found through its ELF header as compiler-rt does.
fn note_segments() -> [SectionRange; MAX_NOTE_RANGES] {
    let mut notes = [SectionRange::EMPTY; MAX_NOTE_RANGES];
    let header = &raw const __ehdr_start;
    // SAFETY: the linker defines `__ehdr_start` at the loaded ELF header of
    // the program; its program headers are loaded with it.
    let phdrs = unsafe {
        let base = header
            .cast::<u8>()
            .add((*header).program_headers_offset as usize);
        core::slice::from_raw_parts(
            base.cast::<ProgramHeader>(),
            (*header).program_headers as usize,
        )
    };
    for (slot, p) in notes
        .iter_mut()
        .zip(phdrs.iter().filter(|p| p.kind == PT_NOTE))
    {
        // Notes are loaded with the ELF header, at their file offset from
        // it, in an executable as in a shared object (which has no PT_PHDR
        // to compute a load bias from).
        let start = header
            .cast::<u8>()
            .wrapping_add(p.offset as usize)
            .cast_mut();
        *slot = SectionRange::from_len(start, p.memory_size as usize);
    }
    notes
}
