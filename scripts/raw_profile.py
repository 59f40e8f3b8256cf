# SPDX-License-Identifier: GPL-2.0
"""clang's raw profile, version 10 (LLVM 19 to 22), 64-bit little endian:
read, and written again with callee records (issue 29) added or removed.
Python standard library only; for scripts/ic-targets and the tests.

The layout (LLVM's InstrProfData.inc): a header of 16 words, binary ids,
data records (64 bytes each), counters (+ padding to 8), bitmap (+ pad),
names (+ pad), vtable records and names (kpgo writes none: the kernel
has no vtable profiling), then one value blob per data record that has
value sites.
A record's CounterPtr and BitmapPtr are relative: llvm-profdata takes
CounterPtr - (CountersDelta - i * 64) as the offset of record i's counters
in the counters section (the same for the bitmap), so records can be added
after the others without touching them.
"""
import hashlib
import struct
import zlib
from dataclasses import dataclass, field

MAGIC = 0xFF6C70726F667281
VERSION = 10
HEADER_WORDS = 16
RECORD_SIZE = 64
# NameRef, FuncHash, CounterPtr, BitmapPtr, FunctionPointer, Values,
# NumCounters, NumValueSites[3] (indirect calls, memops, vtables),
# NumBitmapBytes.
RECORD = struct.Struct("<QQqqQQIHHHxxI")
assert RECORD.size == RECORD_SIZE
# Header words.
BINARY_IDS_SIZE, NUM_DATA, PADDING_BEFORE_COUNTERS, NUM_COUNTERS, COUNTERS_PAD = 2, 3, 4, 5, 6
NUM_BITMAP_BYTES, BITMAP_PAD, NAMES_SIZE, COUNTERS_DELTA, BITMAP_DELTA = 7, 8, 9, 10, 11
NUM_VTABLES, VNAMES_SIZE = 13, 14
INDIRECT_CALL = 0


def pad8(n):
    return -n % 8


def signed64(n):
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


@dataclass
class Record:
    name_ref: int
    func_hash: int
    counter_ptr: int
    bitmap_ptr: int
    function_pointer: int
    values: int
    num_counters: int
    value_sites: tuple
    num_bitmap_bytes: int

    def pack(self):
        return RECORD.pack(self.name_ref, self.func_hash, self.counter_ptr, self.bitmap_ptr,
                           self.function_pointer, self.values, self.num_counters,
                           *self.value_sites, self.num_bitmap_bytes)


@dataclass
class RawProfile:
    header: list
    binary_ids: bytes
    records: list
    counters: bytes
    bitmap: bytes
    names: bytes
    value_blobs: list  # one (record index, bytes) per record with sites
    callees_added: int = field(default=0)

    def ic_values(self):
        """(record index, site, target, count) of every recorded
        indirect-call target."""
        out = []
        for index, blob in self.value_blobs:
            _total, kinds = struct.unpack_from("<II", blob)
            at = 8
            for _ in range(kinds):
                kind, sites = struct.unpack_from("<II", blob, at)
                counts = blob[at + 8:at + 8 + sites]
                at += 8 + sites + pad8(sites)
                for site, n in enumerate(counts):
                    for _ in range(n):
                        target, count = struct.unpack_from("<QQ", blob, at)
                        at += 16
                        if kind == INDIRECT_CALL:
                            out.append((index, site, target, count))
        return out

    def function_names(self):
        """{NameRef: name} of the names this profile carries."""
        return name_refs(self.names)

    def counts(self, index):
        """The counters of record INDEX."""
        record = self.records[index]
        at = record.counter_ptr - (signed64(self.header[COUNTERS_DELTA]) - index * RECORD_SIZE)
        if at < 0 or at + 8 * record.num_counters > len(self.counters):
            return []
        return list(struct.unpack_from(f"<{record.num_counters}Q", self.counters, at))

    def with_callees(self, callees, names):
        """The bytes of this profile with, after its own records, one
        record per callee (a Record of another profile: its NameRef, hash,
        counter and value-site numbers and address, all counts zero) and
        NAMES (the names sections that name them) after its own names."""
        header = list(self.header)
        records = [r.pack() for r in self.records]
        counters = bytearray(self.counters)
        blobs = [blob for _, blob in self.value_blobs]
        for callee in callees:
            i = len(records)
            extra = Record(callee.name_ref, callee.func_hash,
                           signed64(len(counters) + header[COUNTERS_DELTA] - i * RECORD_SIZE),
                           signed64(header[BITMAP_DELTA] - i * RECORD_SIZE),
                           callee.function_pointer, 0, callee.num_counters,
                           callee.value_sites, 0)
            records.append(extra.pack())
            counters += bytes(8 * callee.num_counters)
            # Its value blob: every site with no value (the site counts of
            # the merged records must agree, or llvm-profdata drops one).
            kinds = [(k, n) for k, n in enumerate(callee.value_sites) if n]
            if kinds:
                body = b"".join(struct.pack("<II", k, n) + bytes(n + pad8(n)) for k, n in kinds)
                blobs.append(struct.pack("<II", 8 + len(body), len(kinds)) + body)
        all_names = self.names + names
        header[NUM_DATA] = len(records)
        header[NUM_COUNTERS] = len(counters) // 8
        header[COUNTERS_PAD] = pad8(len(counters))
        header[NAMES_SIZE] = len(all_names)
        return b"".join([
            struct.pack(f"<{HEADER_WORDS}Q", *header), self.binary_ids, *records,
            bytes(counters), bytes(pad8(len(counters))),
            self.bitmap, bytes(pad8(len(self.bitmap))),
            all_names, bytes(pad8(len(all_names))), *blobs])


    def without_last_records(self, n):
        """The bytes of this profile without its last N records and their
        counters (callee records, which a profile puts after its own:
        what it would be without naming those callees); the names stay."""
        if not 0 <= n <= len(self.records):
            raise ValueError(f"{n} of {len(self.records)} records")
        kept = self.records[:len(self.records) - n]
        dropped = self.records[len(kept):]
        if any(any(self.counts(i)) for i in range(len(kept), len(self.records))):
            raise ValueError("a record to drop has counts: not a callee record")
        counters = self.counters[:len(self.counters) - 8 * sum(r.num_counters for r in dropped)]
        blobs = [(i, blob) for i, blob in self.value_blobs if i < len(kept)]
        return RawProfile(self.header, self.binary_ids, kept, counters, self.bitmap,
                          self.names, blobs).with_callees([], b"")


def uleb128(data, at):
    """(value, offset after it) of the ULEB128 at AT."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def names_chunks(data):
    """(chunk, names) of each chunk of the names section DATA: its bytes
    (lengths included) and its names (bytes). A chunk is the ULEB128
    length of its names, the ULEB128 length of their zlib-compressed form
    (0: not compressed), then the names joined by 0x01; zero bytes after
    the last are padding. Raises ValueError on a chunk that does not
    read."""
    at = 0
    while at < len(data) and any(data[at:]):
        start = at
        try:
            names_len, at = uleb128(data, at)
            compressed_len, at = uleb128(data, at)
            payload = data[at:at + (compressed_len or names_len)]
            at += compressed_len or names_len
            names = zlib.decompress(payload) if compressed_len else payload
        except (IndexError, zlib.error) as error:
            raise ValueError(f"names chunk at {start}: {error}") from error
        if at > len(data):
            raise ValueError(f"names chunk at {start} is truncated")
        yield data[start:at], names.split(b"\x01")


def name_ref(name):
    """The NameRef of NAME (bytes): the low 64 bits of its MD5."""
    return int.from_bytes(hashlib.md5(name).digest()[:8], "little")


def name_refs(data):
    """{NameRef: name} of the names section DATA."""
    return {name_ref(name): name.decode(errors="replace")
            for _, names in names_chunks(data) for name in names}


def parse(data, what="profile"):
    """The RawProfile of DATA (bytes)."""
    header = list(struct.unpack_from(f"<{HEADER_WORDS}Q", data))
    if header[0] != MAGIC or header[1] & 0xFFFFFFFF != VERSION:
        raise ValueError(f"{what}: not a raw profile of version {VERSION}")
    # Parts this reader does not place (continuous mode's padding, vtables).
    for word in (PADDING_BEFORE_COUNTERS, NUM_VTABLES, VNAMES_SIZE):
        if header[word]:
            raise ValueError(f"{what}: header word {word} is {header[word]}, not 0: not supported")
    at = HEADER_WORDS * 8
    ids = data[at:at + header[BINARY_IDS_SIZE]]
    at += len(ids)
    records = []
    for _ in range(header[NUM_DATA]):
        f = RECORD.unpack_from(data, at)
        records.append(Record(*f[:7], tuple(f[7:10]), f[10]))
        at += RECORD_SIZE
    counters = data[at:at + 8 * header[NUM_COUNTERS]]
    at += len(counters) + header[COUNTERS_PAD]
    bitmap = data[at:at + header[NUM_BITMAP_BYTES]]
    at += len(bitmap) + header[BITMAP_PAD]
    names = data[at:at + header[NAMES_SIZE]]
    at += len(names) + pad8(len(names))
    blobs = []
    for index, record in enumerate(records):
        if any(record.value_sites):
            (total,) = struct.unpack_from("<I", data, at)
            blobs.append((index, data[at:at + total]))
            at += total
    return RawProfile(header, ids, records, counters, bitmap, names, blobs)
