#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Small edits of a kernel module (.ko, ELF64 little endian, x86_64), for
the lifecycle tests and check-distro's bad input; Python standard library
only.

  ko_edit.py rename IN.ko OUT.ko NAME
      Gives the module another name: the name field of its struct module
      (.gnu.linkonce.this_module) and its "name=" modinfo, which is what
      the loader and the module notifiers see (a module named "vmlinux",
      two different .ko files with one name...).

  ko_edit.py other-kernel IN.ko OUT.ko
      Makes it a module built for another kernel: the release in its
      vermagic modinfo differs in its last digit (one less, 0 becomes 9),
      which the loader refuses ("version magic ... should be ...").
      Refused for a module with symbol versions (__versions): with
      CONFIG_MODVERSIONS the loader ignores the release.

  ko_edit.py corrupt-values IN.ko OUT.ko FUNCTION (--to SYMBOL | --addend N)
      Rewrites the relocation of the Values field of FUNCTION's profile
      data record (__llvm_prf_data, raw version 10: 64-byte records,
      Values at offset 40) so that it points at SYMBOL (e.g. a variable in
      the module's .data) or at its own target plus N bytes (N large: far
      outside the module's __llvm_prf_vals). Prints what it changed.

  ko_edit.py corrupt-counters IN.ko OUT.ko FUNCTION (--to SYMBOL | --addend N)
      The same for the record's CounterPtr (offset 16, relative to the
      record), so that it names counters outside __llvm_prf_cnts.

  ko_edit.py read-only IN.ko OUT.ko SECTION
      Clears SHF_WRITE of the section SECTION (e.g. __llvm_prf_vnds), as a
      mis-built or edited module would have it: the loader then lays it
      out with the read-only data, which is read-only from COMING on.
"""
import argparse
import hashlib
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from raw_profile import names_chunks  # noqa: E402

RECORD_SIZE = 64  # raw version 10 (LLVM 19)
FUNCTION_POINTER_OFFSET = 32
VALUES_OFFSET = 40
COUNTER_PTR_OFFSET = 16
R_X86_64_64 = 1
R_X86_64_PC64 = 24
SHT_SYMTAB = 2
SHT_RELA = 4
STT_SECTION = 3
MODULE_NAME_LEN = 56  # 64 - sizeof(unsigned long)


class Elf:
    def __init__(self, data):
        self.data = bytearray(data)
        if self.data[:4] != b"\x7fELF" or self.data[4] != 2 or self.data[5] != 1:
            raise SystemExit("not an ELF64 little-endian file")
        (self.shoff,) = struct.unpack_from("<Q", self.data, 0x28)
        self.shentsize, self.shnum, self.shstrndx = struct.unpack_from("<HHH", self.data, 0x3A)
        self.sections = []
        for i in range(self.shnum):
            fields = struct.unpack_from("<IIQQQQIIQQ", self.data, self.shoff + i * self.shentsize)
            self.sections.append(dict(zip(
                ("name", "type", "flags", "addr", "offset", "size", "link", "info",
                 "addralign", "entsize"), fields)))
        strtab = self.sections[self.shstrndx]
        for section in self.sections:
            section["name"] = self.cstring(strtab["offset"] + section["name"])

    def cstring(self, offset):
        end = self.data.index(b"\0", offset)
        return self.data[offset:end].decode()

    def section(self, name):
        found = [i for i, s in enumerate(self.sections) if s["name"] == name]
        if len(found) != 1:
            raise SystemExit(f"{len(found)} sections named {name}")
        return found[0]

    def bytes_of(self, index):
        s = self.sections[index]
        return self.data[s["offset"]:s["offset"] + s["size"]]

    def symbols(self):
        """(index, name, value, size, info, shndx) of every symbol."""
        symtab_index = next(i for i, s in enumerate(self.sections) if s["type"] == SHT_SYMTAB)
        symtab = self.sections[symtab_index]
        strtab = self.sections[symtab["link"]]
        result = []
        for i in range(symtab["size"] // 24):
            name, info, _other, shndx, value, size = struct.unpack_from(
                "<IBBHQQ", self.data, symtab["offset"] + i * 24)
            result.append((i, self.cstring(strtab["offset"] + name), value, size, info, shndx))
        return result

    def relocations_of(self, index):
        """[(file offset of the entry, r_offset, symbol, type, addend)]."""
        result = []
        for s in self.sections:
            if s["type"] == SHT_RELA and s["info"] == index:
                for i in range(s["size"] // 24):
                    at = s["offset"] + i * 24
                    r_offset, r_info, addend = struct.unpack_from("<QQq", self.data, at)
                    result.append((at, r_offset, r_info >> 32, r_info & 0xffffffff, addend))
        return result


def modinfo_value(elf, key):
    """(file offset, bytes) of the value of KEY= in .modinfo (once)."""
    modinfo = elf.section(".modinfo")
    info = bytes(elf.bytes_of(modinfo))
    tag = key.encode() + b"="
    starts = [i for i in range(len(info)) if info.startswith(tag, i) and (i == 0 or info[i - 1] == 0)]
    if len(starts) != 1:
        raise SystemExit(f"{len(starts)} {key}= entries in .modinfo")
    start = starts[0] + len(tag)
    end = info.index(b"\0", start)
    return elf.sections[modinfo]["offset"] + start, info[start:end]


def rename(elf, new_name):
    at, old_name = modinfo_value(elf, "name")
    new = new_name.encode()
    if not 0 < len(new) <= len(old_name):
        raise SystemExit(f"the new name must be 1 to {len(old_name)} bytes (the old one's length)")
    # modinfo strings are NUL-separated; the loader skips runs of NULs.
    elf.data[at:at + len(old_name)] = new.ljust(len(old_name), b"\0")

    this_module = elf.section(".gnu.linkonce.this_module")
    body = bytes(elf.bytes_of(this_module))
    field = body.find(old_name + b"\0")
    if field < 0 or body.find(old_name + b"\0", field + 1) >= 0:
        raise SystemExit("the module name is not found once in struct module")
    at = elf.sections[this_module]["offset"] + field
    elf.data[at:at + MODULE_NAME_LEN] = new.ljust(MODULE_NAME_LEN, b"\0")
    print(f"renamed module {old_name.decode()} to {new_name}")


def other_kernel(elf):
    """The vermagic of another kernel release, of the same length: the
    last digit of the release one less (0 wrapping to 9), as a module
    built for the previous stable update says."""
    if any(s["name"] == "__versions" for s in elf.sections):
        raise SystemExit("the module has __versions: with MODVERSIONS the loader ignores the release")
    at, magic = modinfo_value(elf, "vermagic")
    release = magic.split(b" ")[0]
    digits = [i for i, c in enumerate(release) if chr(c).isdigit()]
    if not digits:
        raise SystemExit(f"vermagic {magic.decode()!r}: no release number")
    i = digits[-1]
    other = bytearray(release)
    other[i] = ord(str((int(chr(release[i])) - 1) % 10))
    elf.data[at:at + len(release)] = other
    print(f"vermagic {magic.decode()!r}: release {release.decode()} -> {other.decode()}")


def pgo_names(elf):
    """The PGO names of the profiled functions (__llvm_prf_names)."""
    data = bytes(elf.bytes_of(elf.section("__llvm_prf_names")))
    return [name.decode() for _, names in names_chunks(data) for name in names]


def corrupt_field(elf, field, function, to_symbol, addend):
    """Field "values" or "counters" of FUNCTION's record."""
    offset, section, rtypes = {
        "values": (VALUES_OFFSET, "__llvm_prf_vals", (R_X86_64_64,)),
        "counters": (COUNTER_PTR_OFFSET, "__llvm_prf_cnts", (R_X86_64_PC64, R_X86_64_64)),
    }[field]
    data_index = elf.section("__llvm_prf_data")
    size = elf.sections[data_index]["size"]
    if size % RECORD_SIZE:
        raise SystemExit(f"__llvm_prf_data is {size} bytes: not 64-byte records")
    symbols = elf.symbols()
    # A record is known by its NameRef: the MD5 of the function's PGO name
    # ("file;function" for a static one), first 8 bytes.
    names = [n for n in pgo_names(elf) if n.split(";")[-1] == function]
    if len(names) != 1:
        raise SystemExit(f"{len(names)} profiled functions named {function}")
    name_ref = hashlib.md5(names[0].encode()).digest()[:8]
    data = elf.bytes_of(data_index)
    records = [i for i in range(size // RECORD_SIZE)
               if data[i * RECORD_SIZE:i * RECORD_SIZE + 8] == name_ref]
    if len(records) != 1:
        raise SystemExit(f"{len(records)} data records for {names[0]}")
    record = records[0]
    relocations = elf.relocations_of(data_index)
    found = [r for r in relocations if r[1] == record * RECORD_SIZE + offset]
    if len(found) != 1:
        raise SystemExit(f"record {record} of {function} has no {field} relocation")
    at, r_offset, sym, rtype, old_addend = found[0]
    if symbols[sym][5] != elf.section(section) or rtype not in rtypes:
        raise SystemExit(f"record {record}'s {field} field does not point into {section}")
    if to_symbol is not None:
        targets = [s for s in symbols if s[1] == to_symbol]
        if len(targets) != 1:
            raise SystemExit(f"{len(targets)} symbols named {to_symbol}")
        # A relative field (PC64, relative to the record) gets the field's
        # offset back, so that it names the symbol itself.
        new_sym, new_addend = targets[0][0], offset if rtype == R_X86_64_PC64 else 0
        where = f"{to_symbol} (section {elf.sections[targets[0][5]]['name']})"
    else:
        new_sym, new_addend = sym, old_addend + addend
        where = f"{symbols[sym][1] or section} + {new_addend:#x}"
    struct.pack_into("<QQq", elf.data, at, r_offset, (new_sym << 32) | rtype, new_addend)
    print(f"record {record} ({function}): {field} now points at {where}, was "
          f"{symbols[sym][1] or section} + {old_addend:#x}")


SHF_WRITE = 1


def read_only(elf, name):
    index = elf.section(name)
    at = elf.shoff + index * elf.shentsize + 8
    (flags,) = struct.unpack_from("<Q", elf.data, at)
    if not flags & SHF_WRITE:
        raise SystemExit(f"{name} is read-only already")
    struct.pack_into("<Q", elf.data, at, flags & ~SHF_WRITE)
    print(f"{name}: flags {flags:#x} -> {flags & ~SHF_WRITE:#x} (SHF_WRITE cleared)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("rename")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("name")
    p = commands.add_parser("other-kernel")
    p.add_argument("input")
    p.add_argument("output")
    p = commands.add_parser("read-only")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("section")
    for field in ("values", "counters"):
        p = commands.add_parser(f"corrupt-{field}")
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument("function")
        target = p.add_mutually_exclusive_group(required=True)
        target.add_argument("--to")
        target.add_argument("--addend", type=lambda s: int(s, 0))
    args = parser.parse_args()
    with open(args.input, "rb") as f:
        elf = Elf(f.read())
    if args.command == "rename":
        rename(elf, args.name)
    elif args.command == "other-kernel":
        other_kernel(elf)
    elif args.command == "read-only":
        read_only(elf, args.section)
    else:
        corrupt_field(elf, args.command.split("-")[1], args.function, args.to, args.addend)
    with open(args.output, "wb") as f:
        f.write(elf.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
