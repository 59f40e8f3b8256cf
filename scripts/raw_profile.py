# SPDX-License-Identifier: GPL-2.0
"""clang's raw profile, versions 10 (LLVM 19 to 22) and 11 (LLVM 23),
64-bit little endian: read, and written again with callee records (issue
29) added or removed. Python standard library only; for scripts/ic-targets
and the tests.

The layout (LLVM's InstrProfData.inc): a header of 16 words (19 in
version 11), binary ids, data records (64 bytes each; 72 in version 11),
counters (+ padding to 8), bitmap (+ pad), uniform counters (version 11,
GPU targets only: none here), names (+ pad), vtable records and names
(kpgo writes none: the kernel has no vtable profiling), then one value
blob per data record that has value sites.
A record's CounterPtr and BitmapPtr are relative: llvm-profdata takes
CounterPtr - (CountersDelta - i * record size) as the offset of record i's
counters in the counters section (the same for the bitmap), so records can
be added after the others without touching them.
"""
import hashlib
import struct
import zlib
from dataclasses import dataclass, field

MAGIC = 0xFF6C70726F667281
INDIRECT_CALL = 0


@dataclass(frozen=True)
class Format:
    """One raw version's header words (by name) and record layout."""
    version: int
    header: tuple
    # NameRef, FuncHash, CounterPtr, [UniformCounterPtr,] BitmapPtr,
    # FunctionPointer, Values, NumCounters, NumValueSites[3] (indirect
    # calls, memops, vtables), [OffloadDeviceWaveSize,] NumBitmapBytes.
    record: struct.Struct

    def word(self, name):
        return self.header.index(name)

    @property
    def header_words(self):
        return len(self.header)

    @property
    def record_size(self):
        return self.record.size


_V10_HEADER = ("Magic", "Version", "BinaryIdsSize", "NumData", "PaddingBytesBeforeCounters",
               "NumCounters", "PaddingBytesAfterCounters", "NumBitmapBytes",
               "PaddingBytesAfterBitmapBytes", "NamesSize", "CountersDelta", "BitmapDelta",
               "NamesDelta", "NumVTables", "VNamesSize", "ValueKindLast")
FORMATS = {
    10: Format(10, _V10_HEADER, struct.Struct("<QQqqQQIHHHxxI")),
    11: Format(11, _V10_HEADER[:9] + ("NumUniformCounters", "PaddingBytesAfterUniformCounters",
                                      "UniformCountersDelta") + _V10_HEADER[9:],
               struct.Struct("<QQqqqQQIHHHHI")),
}
assert FORMATS[10].record_size == 64 and FORMATS[11].record_size == 72
assert FORMATS[10].header_words == 16 and FORMATS[11].header_words == 19


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

    def pack(self, fmt):
        if fmt.version == 11:
            # UniformCounterPtr and OffloadDeviceWaveSize: 0 on a CPU.
            return fmt.record.pack(self.name_ref, self.func_hash, self.counter_ptr, 0,
                                   self.bitmap_ptr, self.function_pointer, self.values,
                                   self.num_counters, *self.value_sites, 0,
                                   self.num_bitmap_bytes)
        return fmt.record.pack(self.name_ref, self.func_hash, self.counter_ptr, self.bitmap_ptr,
                               self.function_pointer, self.values, self.num_counters,
                               *self.value_sites, self.num_bitmap_bytes)

    @staticmethod
    def unpack(fmt, data, at):
        f = list(fmt.record.unpack_from(data, at))
        if fmt.version == 11:
            if f[3] or f[11]:
                raise ValueError("a record with uniform counters or a wave size (an offload target's)")
            del f[11], f[3]
        return Record(*f[:7], tuple(f[7:10]), f[10])


@dataclass
class RawProfile:
    fmt: Format
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
        delta = signed64(self.header[self.fmt.word("CountersDelta")])
        at = record.counter_ptr - (delta - index * self.fmt.record_size)
        if at < 0 or at + 8 * record.num_counters > len(self.counters):
            return []
        return list(struct.unpack_from(f"<{record.num_counters}Q", self.counters, at))

    def with_callees(self, callees, names):
        """The bytes of this profile with, after its own records, one
        record per callee (a Record of another profile: its NameRef, hash,
        counter and value-site numbers and address, all counts zero) and
        NAMES (the names sections that name them) after its own names."""
        fmt, header = self.fmt, list(self.header)
        size = fmt.record_size
        records = [r.pack(fmt) for r in self.records]
        counters = bytearray(self.counters)
        blobs = [blob for _, blob in self.value_blobs]
        for callee in callees:
            i = len(records)
            extra = Record(callee.name_ref, callee.func_hash,
                           signed64(len(counters) + header[fmt.word("CountersDelta")] - i * size),
                           signed64(header[fmt.word("BitmapDelta")] - i * size),
                           callee.function_pointer, 0, callee.num_counters,
                           callee.value_sites, 0)
            records.append(extra.pack(fmt))
            counters += bytes(8 * callee.num_counters)
            # Its value blob: every site with no value (the site counts of
            # the merged records must agree, or llvm-profdata drops one).
            kinds = [(k, n) for k, n in enumerate(callee.value_sites) if n]
            if kinds:
                body = b"".join(struct.pack("<II", k, n) + bytes(n + pad8(n)) for k, n in kinds)
                blobs.append(struct.pack("<II", 8 + len(body), len(kinds)) + body)
        all_names = self.names + names
        header[fmt.word("NumData")] = len(records)
        header[fmt.word("NumCounters")] = len(counters) // 8
        header[fmt.word("PaddingBytesAfterCounters")] = pad8(len(counters))
        header[fmt.word("NamesSize")] = len(all_names)
        return b"".join([
            struct.pack(f"<{fmt.header_words}Q", *header), self.binary_ids, *records,
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
        return RawProfile(self.fmt, self.header, self.binary_ids, kept, counters, self.bitmap,
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
    if len(data) < 16 or struct.unpack_from("<Q", data)[0] != MAGIC:
        raise ValueError(f"{what}: not a raw profile")
    version = struct.unpack_from("<Q", data, 8)[0] & 0xFFFFFFFF
    fmt = FORMATS.get(version)
    if fmt is None:
        raise ValueError(f"{what}: raw profile version {version}, not one of {sorted(FORMATS)}")
    header = list(struct.unpack_from(f"<{fmt.header_words}Q", data))
    word = {name: header[i] for i, name in enumerate(fmt.header)}
    # Parts this reader does not place (continuous mode's padding, vtables,
    # uniform counters).
    for name in ("PaddingBytesBeforeCounters", "NumVTables", "VNamesSize", "NumUniformCounters",
                 "PaddingBytesAfterUniformCounters"):
        if word.get(name):
            raise ValueError(f"{what}: header word {name} is {word[name]}, not 0: not supported")
    at = fmt.header_words * 8
    ids = data[at:at + word["BinaryIdsSize"]]
    at += len(ids)
    records = []
    for _ in range(word["NumData"]):
        records.append(Record.unpack(fmt, data, at))
        at += fmt.record_size
    counters = data[at:at + 8 * word["NumCounters"]]
    at += len(counters) + word["PaddingBytesAfterCounters"]
    bitmap = data[at:at + word["NumBitmapBytes"]]
    at += len(bitmap) + word["PaddingBytesAfterBitmapBytes"]
    names = data[at:at + word["NamesSize"]]
    at += len(names) + pad8(len(names))
    blobs = []
    for index, record in enumerate(records):
        if any(record.value_sites):
            (total,) = struct.unpack_from("<I", data, at)
            blobs.append((index, data[at:at + total]))
            at += total
    return RawProfile(fmt, header, ids, records, counters, bitmap, names, blobs)
