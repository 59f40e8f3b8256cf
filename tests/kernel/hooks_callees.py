#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The value-profiling hooks reach no instrumented code.

Arguments: a linked image (vmlinux) built with CONFIG_PGO_CLANG.

Disassembles __llvm_profile_instrument_target and
__llvm_profile_instrument_memop and, transitively, every function they call
or jump to, and fails if one of them is instrumented, or if the walk meets
an indirect call or jump (whose target it cannot follow).

A function is instrumented if its code updates a counter, that is, writes
into __llvm_prf_cnts: with entry counters first, every instrumented
function does so (its entry counter), whatever its language. The data
records' function pointers (__llvm_prf_data) name the instrumented
functions whose address is recorded; they must agree.
"""
import bisect
import re
import struct
import subprocess
import sys

LLVM = "/usr/lib/llvm-19/bin"
HOOKS = ["__llvm_profile_instrument_target", "__llvm_profile_instrument_memop"]
image = sys.argv[1]
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}" + (f" ({detail})" if detail else ""))


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


# Sections: name -> (address, file offset, size).
sections = {}
for m in re.finditer(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)",
                     run(f"{LLVM}/llvm-readelf", "-S", "--wide", image), re.M):
    sections[m.group(1)] = tuple(int(m.group(i), 16) for i in (2, 3, 4))
data = open(image, "rb").read()


def read(addr, size):
    for start, offset, length in sections.values():
        if start <= addr and addr + size <= start + length and start:
            return data[offset + addr - start:offset + addr - start + size]
    raise ValueError(f"{addr:#x} is in no section")


# Symbols: function starts, sorted, to name any code address.
symbols = {}
for line in run(f"{LLVM}/llvm-nm", "-n", "--defined-only", image).splitlines():
    parts = line.split()
    if len(parts) == 3:
        symbols.setdefault(parts[2], int(parts[0], 16))
text_syms = sorted((int(p[0], 16), p[2]) for p in
                   (l.split() for l in run(f"{LLVM}/llvm-nm", "-n", "--defined-only", image).splitlines())
                   if len(p) == 3 and p[1] in "tTwW")
starts = [a for a, _ in text_syms]


def function_at(addr):
    i = bisect.bisect_right(starts, addr) - 1
    return text_syms[i] if i >= 0 else (0, "?")


cnts_start, cnts_end = symbols["__start___llvm_prf_cnts"], symbols["__stop___llvm_prf_cnts"]
data_start, data_end = symbols["__start___llvm_prf_data"], symbols["__stop___llvm_prf_data"]
version = struct.unpack("<Q", read(symbols["__llvm_profile_raw_version"], 8))[0] & 0xffffffff
# Record size and offset of the FunctionPointer field per raw version.
size, fnptr = {8: (48, 24), 9: (64, 32), 10: (64, 32)}[version]
records = read(data_start, data_end - data_start)
recorded = {struct.unpack_from("<Q", records, i + fnptr)[0]
            for i in range(0, len(records) - size + 1, size)} - {0}
print(f"raw version {version}: {len(records) // size} data records, "
      f"{len(recorded)} with a function address")

CALL = re.compile(r"^\s*([0-9a-f]+):\s+(call|jmp|j[a-z]+)\s+(\S+)(?:\s+<([^>]+)>)?")
COUNTER = re.compile(r"0x([0-9a-f]{16})|# (0x[0-9a-f]+)")


def disassemble(name):
    """(callees, indirect branches, counter writes) of function `name`."""
    text = run(f"{LLVM}/llvm-objdump", "-d", "--no-show-raw-insn",
               f"--disassemble-symbols={name}", image)
    start = symbols[name]
    callees, indirect, counters = set(), [], []
    for line in text.splitlines():
        m = CALL.match(line)
        if m:
            target = m.group(3)
            if target.startswith("*"):
                indirect.append(line.strip())
                continue
            try:
                addr = int(target, 16)
            except ValueError:
                continue
            owner = function_at(addr)
            if owner[1] != name or addr == start:
                callees.add(owner[1] if owner[0] == addr else f"{owner[1]}+{addr - owner[0]:#x}")
        for m2 in COUNTER.finditer(line):
            value = int(m2.group(1) or m2.group(2), 16)
            if cnts_start <= value < cnts_end:
                counters.append(line.strip())
    return callees, indirect, counters


def demangle(names):
    out = run(f"{LLVM}/llvm-cxxfilt", *names) if names else ""
    return dict(zip(names, out.splitlines()))


seen, todo = {}, list(HOOKS)
while todo:
    name = todo.pop()
    if name in seen:
        continue
    if name not in symbols or "+" in name:
        seen[name] = (set(), [f"target inside another symbol: {name}"], [])
        continue
    seen[name] = disassemble(name)
    todo.extend(sorted(seen[name][0] - set(seen)))

plain = demangle(sorted(seen))
print(f"functions the hooks reach: {len(seen)}")
for name in sorted(seen, key=lambda n: symbols.get(n, 0)):
    callees, indirect, counters = seen[name]
    instrumented = bool(counters) or symbols.get(name) in recorded
    print(f"  {'INSTRUMENTED' if instrumented else 'ok':12} {plain.get(name, name)}"
          + (f"  -> {', '.join(sorted(plain.get(c, c) for c in callees))}" if callees else ""))
bad = [n for n, (_, _, c) in seen.items() if c or symbols.get(n) in recorded]
branches = [b for _, (_, i, _) in seen.items() for b in i]
check("the hooks and all they reach are uninstrumented (no counter write, no data record)",
      not bad, ", ".join(plain.get(n, n) for n in bad))
check("the hooks make no indirect call or jump", not branches, "; ".join(branches[:3]))
# No panic path (an overflow or bounds check) on a path that runs in NMI.
panics = [plain.get(n, n) for n in seen if "panic" in plain.get(n, n).lower()]
check("the hooks reach no panic path (no overflow or bounds check)", not panics,
      ", ".join(panics))
check("both hooks are in the image", all(h in symbols for h in HOOKS))
# The detector itself: it sees instrumented code where there is some.
probe = "start_kernel"
_, _, counters = disassemble(probe)
check(f"the counter-write test recognizes an instrumented function ({probe})",
      bool(counters) and symbols[probe] in recorded)
print(f"hooks: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
