#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rewrites a raw profile of version 9 (LLVM 18) as version 10, so that
llvm-profdata 19, which reads only version 10, can judge it.

No llvm-profdata of LLVM 18 is packaged here, and LLVM 19's refuses any
other raw version ("raw profile version mismatch"). The two versions hold
the same information in nearly the same places (InstrProfData.inc of each):
  - header: version 10 adds NumVTables and VNamesSize (both 0 here: no
    vtable profiling) before ValueKindLast, which becomes IPVK_Last = 2;
  - data record: 64 bytes in both; version 10's NumValueSites has a third
    u16 (vtable targets, 0), so NumBitmapBytes moves from 56 to 60;
  - counters, bitmap, names and value data are the same bytes, and the
    header's deltas are addresses in memory, which do not move.
Nothing else is touched: every count, value, name, hash and address of the
version 9 file reaches llvm-profdata as written. The whole file is walked
(each profile of a concatenation in turn), and any field that does not add
up stops the conversion with an error.

Usage: profraw_v9_to_v10.py IN.profraw OUT.profraw
"""
import struct
import sys

MAGIC = 0xFF6C70726F667281
V9_HEADER_WORDS = 14
RECORD_SIZE = 64


def pad8(n):
    return (8 - n % 8) % 8


def convert_one(data, at):
    """Converts the profile at offset AT; returns (bytes, offset after it)."""
    words = list(struct.unpack_from("<14Q", data, at))
    magic, version = words[0], words[1]
    if magic != MAGIC:
        raise ValueError(f"offset {at}: not a raw profile (magic {magic:#x})")
    if version & 0xFFFFFFFF != 9:
        raise ValueError(f"offset {at}: raw version {version & 0xFFFFFFFF}, not 9")
    (ids_size, num_data, pad_before, num_counters, pad_counters, bitmap_bytes,
     pad_bitmap, names_size) = words[2:10]
    if pad_before or pad_counters != pad8(8 * num_counters) or pad_bitmap != pad8(bitmap_bytes):
        raise ValueError(f"offset {at}: padding words do not match the sizes")
    if words[13] != 1:
        raise ValueError(f"offset {at}: ValueKindLast {words[13]}, version 9 has 1")
    header = words[:13] + [0, 0, 2]
    header[1] = (version & ~0xFFFFFFFF) | 10
    pos = at + 8 * V9_HEADER_WORDS
    out = bytearray(struct.pack("<16Q", *header))
    out += data[pos:pos + ids_size]
    pos += ids_size
    sites = []
    for _ in range(num_data):
        record = data[pos:pos + RECORD_SIZE]
        if len(record) != RECORD_SIZE:
            raise ValueError("truncated data records")
        icall, memop = struct.unpack_from("<2H", record, 52)
        (bitmap,) = struct.unpack_from("<I", record, 56)
        if struct.unpack_from("<I", record, 60)[0] != 0:
            raise ValueError("a version 9 record's padding is not zero")
        out += record[:52] + struct.pack("<3HHI", icall, memop, 0, 0, bitmap)
        sites.append((icall, memop))
        pos += RECORD_SIZE
    rest = 8 * num_counters + pad_counters + bitmap_bytes + pad_bitmap
    rest += names_size + pad8(names_size)
    out += data[pos:pos + rest]
    pos += rest
    for icall, memop in sites:
        if icall == 0 and memop == 0:
            continue
        (total,) = struct.unpack_from("<I", data, pos)
        if total % 8 or pos + total > len(data):
            raise ValueError(f"offset {pos}: value data size {total}")
        out += data[pos:pos + total]
        pos += total
    return bytes(out), pos


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    data = open(argv[1], "rb").read()
    out, at = b"", 0
    try:
        while at < len(data):
            converted, at = convert_one(data, at)
            out += converted
    except (ValueError, struct.error) as error:
        print(f"{argv[1]}: {error}", file=sys.stderr)
        return 1
    open(argv[2], "wb").write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
