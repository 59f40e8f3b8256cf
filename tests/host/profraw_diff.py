#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Byte comparison of two raw profiles that names what differs.

    profraw_diff.py EXPECTED ACTUAL [--max N]   exit 0 if identical, 1 if not
    profraw_diff.py --layout FILE               print the file's regions

A bare "differs at byte 0x68" says little; this maps each differing byte to
the header field, binary id, data record field (with the function's name),
counter, names or value-profile blob it belongs to, using the layout of raw
versions 8 (LLVM 15-17), 10 (LLVM 19-22) and 11 (LLVM 23) from
InstrProfData.inc.
"""
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from raw_profile import name_ref, names_chunks  # noqa: E402

MAGIC = 0xFF6C70726F667281

HEADER_V8 = ["Magic", "Version", "BinaryIdsSize", "NumData", "PaddingBytesBeforeCounters",
             "NumCounters", "PaddingBytesAfterCounters", "NamesSize", "CountersDelta",
             "NamesDelta", "ValueKindLast"]
HEADER_V10 = ["Magic", "Version", "BinaryIdsSize", "NumData", "PaddingBytesBeforeCounters",
              "NumCounters", "PaddingBytesAfterCounters", "NumBitmapBytes",
              "PaddingBytesAfterBitmapBytes", "NamesSize", "CountersDelta", "BitmapDelta",
              "NamesDelta", "NumVTables", "VNamesSize", "ValueKindLast"]
HEADER_V11 = (HEADER_V10[:9] + ["NumUniformCounters", "PaddingBytesAfterUniformCounters",
                                "UniformCountersDelta"] + HEADER_V10[9:])

# (name, offset, size) of the fields of one data record.
RECORD_V8 = [("NameRef", 0, 8), ("FuncHash", 8, 8), ("CounterPtr", 16, 8),
             ("FunctionPointer", 24, 8), ("Values", 32, 8), ("NumCounters", 40, 4),
             ("NumValueSites[indirect]", 44, 2), ("NumValueSites[memop]", 46, 2)]
RECORD_V10 = [("NameRef", 0, 8), ("FuncHash", 8, 8), ("CounterPtr", 16, 8),
              ("BitmapPtr", 24, 8), ("FunctionPointer", 32, 8), ("Values", 40, 8),
              ("NumCounters", 48, 4), ("NumValueSites[indirect]", 52, 2),
              ("NumValueSites[memop]", 54, 2), ("NumValueSites[vtable]", 56, 2),
              ("(padding)", 58, 2), ("NumBitmapBytes", 60, 4)]
RECORD_V11 = [("NameRef", 0, 8), ("FuncHash", 8, 8), ("CounterPtr", 16, 8),
              ("UniformCounterPtr", 24, 8), ("BitmapPtr", 32, 8), ("FunctionPointer", 40, 8),
              ("Values", 48, 8), ("NumCounters", 56, 4), ("NumValueSites[indirect]", 60, 2),
              ("NumValueSites[memop]", 62, 2), ("NumValueSites[vtable]", 64, 2),
              ("OffloadDeviceWaveSize", 66, 2), ("NumBitmapBytes", 68, 4)]
VTABLE_RECORD_SIZE = 24  # {u64 name hash, ptr, u32 size} padded


def pad8(n):
    return (-n) & 7


def function_names(names):
    """NameRef (MD5 low 64 bits) -> name, from the (maybe zlib) names
    section; up to a chunk that does not read."""
    out = {}
    try:
        for _, chunk in names_chunks(names):
            out.update({name_ref(n): n.decode(errors="replace") for n in chunk if n})
    except ValueError:
        pass
    return out


def layout(buf):
    """List of (start, end, label) covering the file, in order."""
    if len(buf) < 16 or struct.unpack_from("<Q", buf, 0)[0] != MAGIC:
        raise ValueError("not a raw profile (bad magic)")
    version = struct.unpack_from("<Q", buf, 8)[0] & 0xFFFFFFFF
    if version == 8:
        hnames, rfields, rsize = HEADER_V8, RECORD_V8, 48
    elif version == 10:
        hnames, rfields, rsize = HEADER_V10, RECORD_V10, 64
    elif version == 11:
        hnames, rfields, rsize = HEADER_V11, RECORD_V11, 72
    else:
        raise ValueError(f"raw version {version} not handled")
    h = dict(zip(hnames, struct.unpack_from(f"<{len(hnames)}Q", buf, 0)))
    regions, pos = [], 0

    def add(size, label):
        nonlocal pos
        if size:
            regions.append((pos, pos + size, label))
        pos += size

    for name in hnames:
        add(8, f"header.{name} (0x{h[name]:x})")
    end_ids, k = pos + h["BinaryIdsSize"], 0
    while pos + 8 <= end_ids:
        n = struct.unpack_from("<Q", buf, pos)[0]
        add(8, f"binary_id[{k}].length ({n})")
        add(min(n, end_ids - pos), f"binary_id[{k}].bytes")
        add(min(pad8(n), end_ids - pos), f"binary_id[{k}].padding")
        k += 1
    add(end_ids - pos, "binary ids (rest)")

    data_start = pos
    names_start = (data_start + h["NumData"] * rsize + h["PaddingBytesBeforeCounters"]
                   + h["NumCounters"] * 8 + h["PaddingBytesAfterCounters"]
                   + h.get("NumBitmapBytes", 0) + h.get("PaddingBytesAfterBitmapBytes", 0)
                   + h.get("NumUniformCounters", 0) * 8
                   + h.get("PaddingBytesAfterUniformCounters", 0))
    fnames = function_names(buf[names_start:names_start + h["NamesSize"]])
    records = []
    for i in range(h["NumData"]):
        base = data_start + i * rsize
        fields = {}
        for fname, off, size in rfields:
            fields[fname] = int.from_bytes(buf[base + off:base + off + size], "little")
        fn = fnames.get(fields["NameRef"], f"NameRef 0x{fields['NameRef']:x}")
        records.append((fn, fields))
        for fname, off, size in rfields:
            regions.append((base + off, base + off + size, f"data[{i}] ({fn}).{fname}"))
    pos = data_start + h["NumData"] * rsize
    add(h["PaddingBytesBeforeCounters"], "padding before counters")

    # A record's counters start at its own address + CounterPtr.
    owner = {}
    for i, (fn, f) in enumerate(records):
        first = (i * rsize + f["CounterPtr"] - h["CountersDelta"]) % (1 << 64)
        if first % 8 == 0 and first // 8 < h["NumCounters"]:
            for j in range(f["NumCounters"]):
                owner[first // 8 + j] = f"{fn} counter {j}"
    for c in range(h["NumCounters"]):
        add(8, f"counters[{c}] ({owner.get(c, '?')})")
    add(h["PaddingBytesAfterCounters"], "padding after counters")
    add(h.get("NumBitmapBytes", 0), "bitmap")
    add(h.get("PaddingBytesAfterBitmapBytes", 0), "padding after bitmap")
    add(h.get("NumUniformCounters", 0) * 8, "uniform counters")
    add(h.get("PaddingBytesAfterUniformCounters", 0), "padding after uniform counters")
    add(h["NamesSize"], "names")
    add(pad8(h["NamesSize"]), "padding after names")
    add(h.get("NumVTables", 0) * VTABLE_RECORD_SIZE, "vtables")
    add(h.get("VNamesSize", 0), "vtable names")
    add(pad8(h.get("VNamesSize", 0)), "padding after vtable names")

    # One value-profile blob per record with any value site, in record order.
    for fn, f in records:
        if not any(v for k, v in f.items() if k.startswith("NumValueSites")):
            continue
        if pos + 8 > len(buf):
            regions.append((pos, pos + 8, f"value data of {fn} (missing: file ends)"))
            break
        blob_end = pos + struct.unpack_from("<I", buf, pos)[0]
        nkinds = struct.unpack_from("<I", buf, pos + 4)[0]
        add(4, f"value data of {fn}: TotalSize")
        add(4, f"value data of {fn}: NumValueKinds ({nkinds})")
        # ValueProfRecord: u32 Kind, u32 NumValueSites, u8 per-site value
        # counts padded to 8, then {u64 Value, u64 Count} per value.
        for _ in range(nkinds):
            if pos + 8 > min(blob_end, len(buf)):
                break
            kind, nsites = struct.unpack_from("<II", buf, pos)
            kname = {0: "indirect", 1: "memop", 2: "vtable"}.get(kind, f"kind {kind}")
            add(4, f"value data of {fn}: Kind ({kname})")
            add(4, f"value data of {fn}: {kname} NumValueSites ({nsites})")
            counts = buf[pos:pos + nsites]
            add(nsites, f"value data of {fn}: {kname} per-site value counts")
            add(pad8(8 + nsites), f"value data of {fn}: {kname} padding")
            for site, count in enumerate(counts):
                for v in range(count):
                    add(8, f"value data of {fn}: {kname} site {site} value {v}.Value")
                    add(8, f"value data of {fn}: {kname} site {site} value {v}.Count")
        if pos != blob_end:
            if pos < blob_end:
                add(blob_end - pos, f"value data of {fn}: bytes beyond its records")
            else:
                regions.append((blob_end, pos, f"value data of {fn}: records overrun TotalSize"))
                pos = blob_end
    if pos < len(buf):
        add(len(buf) - pos, "bytes after the last value-profile blob")
    return regions


def label_at(regions, offset):
    for start, end, label in regions:
        if start <= offset < end:
            return start, end, label
    return offset, offset + 1, "beyond the described layout"


def main(argv):
    if len(argv) == 3 and argv[1] == "--layout":
        for start, end, label in layout(open(argv[2], "rb").read()):
            print(f"0x{start:06x}-0x{end:06x} {label}")
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    max_report = int(argv[4]) if len(argv) > 4 and argv[3] == "--max" else 12
    a, b = open(argv[1], "rb").read(), open(argv[2], "rb").read()
    if a == b:
        print(f"identical ({len(a)} bytes)")
        return 0
    print(f"differ: {argv[1]} has {len(a)} bytes, {argv[2]} has {len(b)} bytes")
    try:
        ra = layout(a)
    except (ValueError, struct.error) as e:
        print(f"  cannot lay out {argv[1]}: {e}")
        return 1
    try:
        rb = layout(b)
        if [(s, e) for s, e, _ in ra] != [(s, e) for s, e, _ in rb]:
            print("  the headers describe different layouts; regions of the second file:")
            for (s, e, la), (s2, e2, lb) in zip(ra, rb):
                if (s, e, la) != (s2, e2, lb):
                    print(f"    first layout difference: 0x{s:x}-0x{e:x} {la}  vs  0x{s2:x}-0x{e2:x} {lb}")
                    break
    except (ValueError, struct.error) as e:
        print(f"  cannot lay out {argv[2]}: {e}")
    reported, offset, n = 0, 0, min(len(a), len(b))
    while offset < n and reported < max_report:
        if a[offset] == b[offset]:
            offset += 1
            continue
        start, end, label = label_at(ra, offset)
        end = min(end, n)
        va, vb = a[start:end], b[start:end]
        if len(va) in (2, 4, 8):
            sa = f"0x{int.from_bytes(va, 'little'):x}"
            sb = f"0x{int.from_bytes(vb, 'little'):x}"
        else:
            first = offset - start
            sa, sb = va[first:first + 16].hex(), vb[first:first + 16].hex()
            label += f" +0x{first:x}"
        print(f"  0x{offset:06x} {label}: expected {sa}, got {sb}")
        reported += 1
        offset = max(end, offset + 1)
    if reported == max_report:
        print("  (further differences not listed)")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
