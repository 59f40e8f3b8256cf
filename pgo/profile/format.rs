// SPDX-License-Identifier: GPL-2.0

//! Layouts of clang's raw profile, per raw version.
//!
//! The authoritative description is LLVM's `InstrProfData.inc`. Four raw
//! versions are supported: 11 (LLVM 23), 10 (LLVM 19 to 22), 9 (LLVM 18)
//! and 8 (LLVM 15 to 17). Any other version is refused: writing a
//! profile in a layout the reader does not expect produces garbage that
//! `llvm-profdata` may even accept.

use core::fmt;

/// Magic number of a 64-bit raw profile: `\xfflprofr\x81`.
pub const RAW_MAGIC_64: u64 = (255 << 56)
    | ((b'l' as u64) << 48)
    | ((b'p' as u64) << 40)
    | ((b'r' as u64) << 32)
    | ((b'o' as u64) << 24)
    | ((b'f' as u64) << 16)
    | ((b'r' as u64) << 8)
    | 129;

/// The high 32 bits of the version word carry variant flags.
pub const VARIANT_MASKS_ALL: u64 = 0xffff_ffff_0000_0000;

/// Variant flags of the version word (`VARIANT_MASK_*` in LLVM).
pub mod variant {
    /// IR-level instrumentation (`-fprofile-generate`).
    pub const IR_PROF: u64 = 1 << 56;
    /// Context-sensitive IR instrumentation (`-fcs-profile-generate`).
    pub const CSIR_PROF: u64 = 1 << 57;
    /// Entry counts are instrumented.
    pub const INSTR_ENTRY: u64 = 1 << 58;
    /// Data and names live in debug info, not in the binary.
    pub const DBG_CORRELATE: u64 = 1 << 59;
    /// Counters are single bytes (coverage mode).
    pub const BYTE_COVERAGE: u64 = 1 << 60;
    /// Only function entries are instrumented.
    pub const FUNCTION_ENTRY_ONLY: u64 = 1 << 61;
    /// Memory profiling.
    pub const MEMPROF: u64 = 1 << 62;
    /// Temporal profiling (function timestamps).
    pub const TEMPORAL_PROF: u64 = 1 << 63;

    /// Flags whose meaning changes nothing in what this runtime writes.
    pub const SUPPORTED: u64 =
        IR_PROF | CSIR_PROF | INSTR_ENTRY | BYTE_COVERAGE | FUNCTION_ENTRY_ONLY;
}

/// Value kinds (`IPVK_*`): indirect-call targets, memop sizes, vtables.
pub const MAX_VALUE_KINDS: usize = 3;

/// Per-site value limit of the raw format (the site count is a byte).
pub const MAX_VALUES_PER_SITE: u32 = 255;

/// compiler-rt's default per-site value limit.
pub const DEFAULT_VALUES_PER_SITE: u32 = 24;

/// Why a version word is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// The raw version number (low 32 bits) is not 8, 9, 10 or 11.
    UnsupportedVersion(u64),
    /// A variant flag this runtime cannot honour (debug-info correlation,
    /// memory or temporal profiling).
    UnsupportedVariant(u64),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FormatError::UnsupportedVersion(raw) => write!(
                f,
                "raw profile version {} (word {:#018x}) is not supported; kpgo writes \
                 versions 8 (LLVM 15-17), 9 (LLVM 18), 10 (LLVM 19-22) and 11 (LLVM 23)",
                raw & !VARIANT_MASKS_ALL,
                raw
            ),
            FormatError::UnsupportedVariant(raw) => write!(
                f,
                "raw profile variant flags {:#x} are not supported \
                 (debug-info correlation, memory or temporal profiling)",
                raw & VARIANT_MASKS_ALL & !variant::SUPPORTED
            ),
        }
    }
}

/// Byte offsets and sizes that differ between raw versions.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    /// The raw version number.
    pub version: u32,
    /// Number of `u64` words in the file header.
    pub header_words: usize,
    /// Size of one `__llvm_profile_data` record.
    pub record_size: usize,
    /// Offset of `NameRef` (u64, the MD5 of the function's name) in a
    /// data record.
    pub name_ref_offset: usize,
    /// Offset of `FuncHash` (u64, the hash of the function's control
    /// flow) in a data record.
    pub func_hash_offset: usize,
    /// Offset of `FunctionPointer`, the function's address, in a data
    /// record.
    pub function_pointer_offset: usize,
    /// Offset of `CounterPtr` in a data record: the address of the
    /// function's counters minus the address of the record itself.
    pub counter_ptr_offset: usize,
    /// Offset of `BitmapPtr` (relative like `CounterPtr`); versions with a
    /// bitmap only.
    pub bitmap_ptr_offset: usize,
    /// Offset of `NumBitmapBytes` (u32); versions with a bitmap only.
    pub num_bitmap_bytes_offset: usize,
    /// Offset of `UniformCounterPtr` (relative like `CounterPtr`, 0 on a
    /// CPU); versions with uniform counters only.
    pub uniform_counter_ptr_offset: usize,
    /// Offset of `OffloadDeviceWaveSize` (u16, 0 on a CPU); versions with
    /// uniform counters only.
    pub wave_size_offset: usize,
    /// Offset of the `Values` pointer in a data record.
    pub values_offset: usize,
    /// Offset of `NumCounters` (u32) in a data record.
    pub num_counters_offset: usize,
    /// Offset of the `NumValueSites` array (u16 each) in a data record.
    pub num_value_sites_offset: usize,
    /// Number of value kinds, `IPVK_Last + 1`; at most 3.
    pub value_kinds: usize,
    /// Whether the header and records describe a bitmap section (MC/DC).
    pub has_bitmap: bool,
    /// Whether the header describes vtable sections (none are written).
    pub has_vtables: bool,
    /// Whether the header and records describe uniform counters
    /// (`__llvm_prf_ucnts`, which only GPU targets have; none are
    /// written).
    pub has_uniform_counters: bool,
}

/// Raw version 11: LLVM 23. Version 10's record with `UniformCounterPtr`
/// after `CounterPtr` and `OffloadDeviceWaveSize` after the site counts
/// (72 bytes); version 10's header with three uniform-counter words after
/// the bitmap's. They came with AMDGPU offload profiling (llvm-project
/// PR 190708); on a CPU they are all 0.
pub static LAYOUT_V11: Layout = Layout {
    version: 11,
    header_words: 19,
    record_size: 72,
    name_ref_offset: 0,
    func_hash_offset: 8,
    function_pointer_offset: 40,
    counter_ptr_offset: 16,
    bitmap_ptr_offset: 32,
    num_bitmap_bytes_offset: 68,
    uniform_counter_ptr_offset: 24,
    wave_size_offset: 66,
    values_offset: 48,
    num_counters_offset: 56,
    num_value_sites_offset: 60,
    value_kinds: 3,
    has_bitmap: true,
    has_vtables: true,
    has_uniform_counters: true,
};

/// Raw version 10: LLVM 19 to 22.
pub static LAYOUT_V10: Layout = Layout {
    version: 10,
    header_words: 16,
    record_size: 64,
    name_ref_offset: 0,
    func_hash_offset: 8,
    function_pointer_offset: 32,
    counter_ptr_offset: 16,
    bitmap_ptr_offset: 24,
    num_bitmap_bytes_offset: 60,
    uniform_counter_ptr_offset: 0,
    wave_size_offset: 0,
    values_offset: 40,
    num_counters_offset: 48,
    num_value_sites_offset: 52,
    value_kinds: 3,
    has_bitmap: true,
    has_vtables: true,
    has_uniform_counters: false,
};

/// Raw version 9: LLVM 18. Version 10's record but for the value kinds
/// (two: no vtable targets), so that `NumBitmapBytes` follows the two site
/// counts at 56; version 10's header without the two vtable words.
pub static LAYOUT_V9: Layout = Layout {
    version: 9,
    header_words: 14,
    record_size: 64,
    name_ref_offset: 0,
    func_hash_offset: 8,
    function_pointer_offset: 32,
    counter_ptr_offset: 16,
    bitmap_ptr_offset: 24,
    num_bitmap_bytes_offset: 56,
    uniform_counter_ptr_offset: 0,
    wave_size_offset: 0,
    values_offset: 40,
    num_counters_offset: 48,
    num_value_sites_offset: 52,
    value_kinds: 2,
    has_bitmap: true,
    has_vtables: false,
    has_uniform_counters: false,
};

/// Raw version 8: LLVM 15 to 17.
pub static LAYOUT_V8: Layout = Layout {
    version: 8,
    header_words: 11,
    record_size: 48,
    name_ref_offset: 0,
    func_hash_offset: 8,
    function_pointer_offset: 24,
    counter_ptr_offset: 16,
    bitmap_ptr_offset: 0,
    num_bitmap_bytes_offset: 0,
    uniform_counter_ptr_offset: 0,
    wave_size_offset: 0,
    values_offset: 32,
    num_counters_offset: 40,
    num_value_sites_offset: 44,
    value_kinds: 2,
    has_bitmap: false,
    has_vtables: false,
    has_uniform_counters: false,
};

/// A validated version word, as emitted by the compiler in
/// `__llvm_profile_raw_version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfileVersion {
    word: u64,
    layout: &'static Layout,
}

impl ProfileVersion {
    /// Validates the compiler's version word.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn from_word(word: u64) -> Result<Self, FormatError> {
        let layout = match word & !VARIANT_MASKS_ALL {
            10 => &LAYOUT_V10,
            11 => &LAYOUT_V11,
            // Versions 8 and 9 in the host library only: no kernel was
            // built and tested with a clang that writes them, and a module
            // of either is refused.
            #[cfg(not(CONFIG_PGO_CLANG))]
            9 => &LAYOUT_V9,
            #[cfg(not(CONFIG_PGO_CLANG))]
            8 => &LAYOUT_V8,
            _ => return Err(FormatError::UnsupportedVersion(word)),
        };
        if word & VARIANT_MASKS_ALL & !variant::SUPPORTED != 0 {
            return Err(FormatError::UnsupportedVariant(word));
        }
        Ok(Self { word, layout })
    }

    /// The version word as written into the header, variant flags included.
    pub fn word(&self) -> u64 {
        self.word
    }

    /// The layouts of this version.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn layout(&self) -> &'static Layout {
        self.layout
    }

    /// Size of one counter: a byte in coverage mode, else a `u64`.
    pub fn counter_size(&self) -> usize {
        if self.word & variant::BYTE_COVERAGE != 0 {
            1
        } else {
            8
        }
    }

    /// Number of whole counters in `bytes` bytes of counters.
    pub fn num_counters(&self, bytes: usize) -> usize {
        if self.word & variant::BYTE_COVERAGE != 0 {
            bytes
        } else {
            bytes / 8
        }
    }

    /// The value every counter byte takes on reset: coverage mode marks
    /// "not covered" with `0xff`.
    pub fn counter_reset_byte(&self) -> u8 {
        if self.word & variant::BYTE_COVERAGE != 0 {
            0xff
        } else {
            0
        }
    }
}

/// Bytes needed after `len` bytes to reach an 8-byte boundary.
pub const fn padding_to_8(len: usize) -> usize {
    (8 - len % 8) % 8
}

/// Size of the header of a value record with `sites` sites: kind (u32),
/// site count (u32) and one count byte per site, padded to 8 bytes.
pub const fn value_record_header_size(sites: usize) -> usize {
    let size = 8 + sites;
    size + padding_to_8(size)
}

/// Size of one recorded value in the file: `{ u64 value, u64 count }`.
pub const VALUE_DATA_SIZE: usize = 16;

/// Size of the per-function value blob header: total size (u32) and number
/// of value kinds (u32).
pub const VALUE_BLOB_HEADER_SIZE: usize = 8;

/// Maps a memop size to the representative value of its range, as
/// `InstrProfGetRangeRepValue`: 0..=8 and powers of two stand for
/// themselves, 513 and above for 513, anything else for the previous power
/// of two plus one.
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub const fn memop_size_bucket(size: u64) -> u64 {
    // Written as selects, not branches: the hooks see sizes in random
    // order, and one body (no copy per branch) stays small.
    // `size | 1` is not 0, so it has at most 63 leading zeros: the shift
    // is below 64 and `floor` at most 2^63. Wrapping operations, so that
    // the hooks have no overflow check for the optimizer to remove.
    let floor = 1u64.wrapping_shl(63u32.wrapping_sub((size | 1).leading_zeros()));
    let bucket = if size == floor {
        size
    } else {
        floor.wrapping_add(1)
    };
    let bucket = if size <= 8 { size } else { bucket };
    if size >= 513 {
        513
    } else {
        bucket
    }
}

/// Section sizes and addresses that the header describes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderFields {
    /// Bytes of binary ids (with their length words and padding).
    pub binary_ids_size: u64,
    /// Number of data records.
    pub num_data: u64,
    /// Number of counters.
    pub num_counters: u64,
    /// Bytes of the counters section as written.
    pub counters_size: u64,
    /// Bytes of the bitmap section.
    pub num_bitmap_bytes: u64,
    /// Bytes of the names section.
    pub names_size: u64,
    /// Address of the counters minus address of the data.
    pub counters_delta: u64,
    /// Address of the bitmap minus address of the data.
    pub bitmap_delta: u64,
    /// Address of the names.
    pub names_delta: u64,
    /// Bytes between the data records and the counters: 0 but in a
    /// profile laid out to be mapped ([`super::writer::write_live`]).
    pub padding_before_counters: u64,
    /// Bytes between the counters and the bitmap: those that pad the
    /// counters to 8 bytes, or to a page in a profile laid out to be
    /// mapped.
    pub padding_after_counters: u64,
}

/// The largest header of any supported version, in words.
pub const MAX_HEADER_WORDS: usize = 19;

/// Builds the header of `version` from `fields`. Returns the words and how
/// many of them the version uses.
pub fn header(version: &ProfileVersion, fields: &HeaderFields) -> ([u64; MAX_HEADER_WORDS], usize) {
    let layout = version.layout();
    let bitmap_pad = padding_to_8(fields.num_bitmap_bytes as usize) as u64;
    // The `INSTR_PROF_RAW_HEADER` lines of version 11, each with whether
    // the layout has it: version 10 lacks the uniform-counter words,
    // version 9 the vtable words too, version 8 the bitmap words too.
    let bitmap = layout.has_bitmap;
    let vtables = layout.has_vtables;
    let uniform = layout.has_uniform_counters;
    let all = [
        (true, RAW_MAGIC_64),
        (true, version.word()),
        (true, fields.binary_ids_size),
        (true, fields.num_data),
        (true, fields.padding_before_counters),
        (true, fields.num_counters),
        (true, fields.padding_after_counters),
        (bitmap, fields.num_bitmap_bytes),
        (bitmap, bitmap_pad),
        (uniform, 0), // number of uniform counters: GPU targets only
        (uniform, 0), // their padding
        (uniform, 0), // their address minus the data's
        (true, fields.names_size),
        (true, fields.counters_delta),
        (bitmap, fields.bitmap_delta),
        (true, fields.names_delta),
        (vtables, 0), // number of vtable records: vtable profiling is not written
        (vtables, 0), // size of vtable names
        (true, (layout.value_kinds - 1) as u64),
    ];
    let mut words = [0u64; MAX_HEADER_WORDS];
    let mut used = 0;
    for (_, word) in all.iter().filter(|(present, _)| *present) {
        // `all` has MAX_HEADER_WORDS entries: every word has a slot.
        if let Some(slot) = words.get_mut(used) {
            *slot = *word;
            used += 1;
        }
    }
    debug_assert_eq!(used, layout.header_words);
    (words, used)
}
