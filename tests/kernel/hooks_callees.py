#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The value-profiling hooks reach no instrumented code.

Arguments: a linked image (vmlinux) built with CONFIG_PGO_CLANG, and
--sanitized if it is built with KASAN (tests/kernel/hooks.sh --kasan).

Disassembles __llvm_profile_instrument_target and
__llvm_profile_instrument_memop and, transitively, every function they call
or jump to, and fails if one of them is instrumented, calls a sanitizer
(KASAN, KCSAN, UBSAN, KCOV, KMSAN: a report from inside a hook would go
through printk and instrumented code), or has a panic path, or if the
walk meets an indirect call or jump (whose target it cannot follow).

The one exit allowed is the scheduler's entry for notrace preemption
sections (preempt_schedule_notrace, through its thunk or static call),
which a hook's RCU-sched section calls when it ends with a reschedule
due, as every preempt_enable() does: the walk stops there, checks that
only kpgo_hook_exit goes there, and, on a kernel with preemption
(CONFIG_PREEMPTION, which defines the function), that it does, so that
a wakeup that comes during a hook is not left pending.

On a kernel with kprobes (CONFIG_KPROBES), every function the hooks reach
must be one kprobes refuses: in .kprobes.text, entry or noinstr text, or
on the kprobes blacklist (NOKPROBE_SYMBOL).

A function is instrumented if its code updates a counter, that is, writes
into __llvm_prf_cnts: with entry counters first, every instrumented
function does so (its entry counter), whatever its language. The data
records' function pointers (__llvm_prf_data) name the instrumented
functions whose address is recorded; they must agree.

Each detector is tested on code where it must fire (the controls at the
end): the walk from kpgo_init, which is not instrumented, reaches
instrumented code through calls, an indirect call and a panic path.
"""
import bisect
import os
import re
import struct
import subprocess
import sys

from judge import Checks

# The toolchain's tools (tests/kernel/with-toolchain.sh sets them).
LLVM = os.environ.get("KPGO_LLVM_BIN", "/usr/lib/llvm-19/bin")
HOOKS = ["__llvm_profile_instrument_target", "__llvm_profile_instrument_memop"]
# Calls into the sanitizers' runtimes, by name prefix.
SANITIZER = re.compile(r"^(__asan_|__kasan_|__kcsan_|__tsan_|__ubsan_|__sanitizer_|__msan_|"
                       r"__kmsan_)")
image = sys.argv[1]
# --sanitized: the image is a KASAN build, where the sanitizer detector is
# tested too.
sanitized = "--sanitized" in sys.argv[2:]
checks = Checks()
check = checks.check


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
text_syms = []
for line in run(f"{LLVM}/llvm-nm", "-n", "--defined-only", image).splitlines():
    parts = line.split()
    if len(parts) == 3:
        symbols.setdefault(parts[2], int(parts[0], 16))
        if parts[1] in "tTwW":
            text_syms.append((int(parts[0], 16), parts[2]))
text_syms.sort()
starts = [a for a, _ in text_syms]


def function_at(addr):
    i = bisect.bisect_right(starts, addr) - 1
    return text_syms[i] if i >= 0 else (0, "?")


cnts_start, cnts_end = symbols["__start___llvm_prf_cnts"], symbols["__stop___llvm_prf_cnts"]
data_start, data_end = symbols["__start___llvm_prf_data"], symbols["__stop___llvm_prf_data"]
version = struct.unpack("<Q", read(symbols["__llvm_profile_raw_version"], 8))[0] & 0xffffffff
# Record size and offset of the FunctionPointer field per raw version.
size, fnptr = {8: (48, 24), 9: (64, 32), 10: (64, 32), 11: (72, 40)}[version]
records = read(data_start, data_end - data_start)
recorded = {struct.unpack_from("<Q", records, i + fnptr)[0]
            for i in range(0, len(records) - size + 1, size)} - {0}
print(f"raw version {version}: {len(records) // size} data records, "
      f"{len(recorded)} with a function address")

# llvm-objdump writes AT&T mnemonics with their size suffix: callq, jmpq.
BRANCH = re.compile(r"^\s*([0-9a-f]+):\s+(callq?|jmpq?|j[a-z]+)\s+(\S+)(?:\s+<([^>]+)>)?")
COUNTER = re.compile(r"0x([0-9a-f]{16})|# (0x[0-9a-f]+)")


class Function:
    def __init__(self):
        self.callees = set()  # by a call
        self.jumps = set()  # by a jump to another function (a tail call)
        self.indirect = []
        self.counters = []


def disassemble(names):
    """{name: Function} of the functions NAMES, disassembled at once."""
    text = run(f"{LLVM}/llvm-objdump", "-d", "--no-show-raw-insn",
               f"--disassemble-symbols={','.join(names)}", image)
    found, current = {}, None
    for line in text.splitlines():
        header = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if header:
            current = found.setdefault(header.group(2), Function())
            start = int(header.group(1), 16)
            name = header.group(2)
            continue
        if current is None:
            continue
        m = BRANCH.match(line)
        if m:
            target = m.group(3)
            if target.startswith("*"):
                current.indirect.append(line.strip())
                continue
            try:
                addr = int(target, 16)
            except ValueError:
                continue
            owner = function_at(addr)
            if owner[1] != name or addr == start:
                callee = owner[1] if owner[0] == addr else f"{owner[1]}+{addr - owner[0]:#x}"
                (current.callees if m.group(2).startswith("call") else current.jumps).add(callee)
        for m2 in COUNTER.finditer(line):
            value = int(m2.group(1) or m2.group(2), 16)
            if cnts_start <= value < cnts_end:
                current.counters.append(line.strip())
    return found


# The scheduler's entry points for a notrace preemption section's end
# (preempt_enable_notrace()): the function, the x86 thunk that saves the
# caller's registers, and the static call of PREEMPT_DYNAMIC.
PREEMPTION_POINTS = {"preempt_schedule_notrace", "preempt_schedule_notrace_thunk",
                     "__SCT__preempt_schedule_notrace"}
# Who calls or jumps to a preemption point: {point: {caller}}.
preemption_callers = {}


def walk(roots, limit=None):
    """{name: Function} of ROOTS and of every function they reach by
    direct calls and jumps, level by level; at most LIMIT functions. A
    preemption point ends a path (preemption_callers records who calls it)."""
    seen, level = {}, list(roots)
    while level and (limit is None or len(seen) < limit):
        wanted = [n for n in level if n in symbols and "+" not in n]
        for name in level:
            if name not in wanted:
                bad = Function()
                bad.indirect.append(f"target inside another symbol or unknown: {name}")
                seen[name] = bad
        found = disassemble(wanted) if wanted else {}
        for name in wanted:
            seen[name] = found.get(name, Function())
        for name, f in found.items():
            for point in (f.callees | f.jumps) & PREEMPTION_POINTS:
                preemption_callers.setdefault(point, set()).add(name)
        level = sorted({c for f in found.values() for c in f.callees | f.jumps}
                       - set(seen) - PREEMPTION_POINTS)
    return seen


def demangle(names):
    out = run(f"{LLVM}/llvm-cxxfilt", *names) if names else ""
    return dict(zip(names, out.splitlines()))


def instrumented(seen):
    return [n for n, f in seen.items() if f.counters or symbols.get(n) in recorded]


def sanitizers(seen):
    return [n for n in seen if SANITIZER.match(n)]


def panics(seen, plain):
    return [plain.get(n, n) for n in seen if "panic" in plain.get(n, n).lower()]


def indirect(seen):
    return [b for f in seen.values() for b in f.indirect]


seen = walk(HOOKS)
plain = demangle(sorted(seen))
print(f"functions the hooks reach: {len(seen)}")
for name in sorted(seen, key=lambda n: symbols.get(n, 0)):
    f = seen[name]
    mark = "INSTRUMENTED" if name in instrumented({name: f}) else "ok"
    calls = sorted(plain.get(c, c) for c in f.callees)
    jumps = sorted(plain.get(c, c) for c in f.jumps)
    print(f"  {mark:12} {plain.get(name, name)}"
          + (f"  calls {', '.join(calls)}" if calls else "")
          + (f"  jumps to {', '.join(jumps)}" if jumps else ""))
bad = instrumented(seen)
check("the hooks and all they reach are uninstrumented (no counter write, no data record)",
      not bad, ", ".join(plain.get(n, n) for n in bad))
check("the hooks call no sanitizer (KASAN, KCSAN, UBSAN, KCOV, KMSAN)",
      not sanitizers(seen), ", ".join(sanitizers(seen)[:8]))
check("the hooks make no indirect call or jump", not indirect(seen), "; ".join(indirect(seen)[:3]))
# No panic path (an overflow or bounds check) on a path that runs in NMI.
check("the hooks reach no panic path (no overflow or bounds check)", not panics(seen, plain),
      ", ".join(panics(seen, plain)))
check("both hooks are in the image", all(h in symbols for h in HOOKS))
callers = set().union(*preemption_callers.values()) if preemption_callers else set()
print(f"preemption points reached: {sorted(preemption_callers)} from {sorted(callers)}")
check("only kpgo_hook_exit (the end of a hook's RCU-sched section) enters the scheduler",
      callers <= {"kpgo_hook_exit"}, ", ".join(sorted(callers)))
if "preempt_schedule_notrace" in symbols:
    check("kpgo_hook_exit takes a reschedule that came due in the section "
          "(reaches preempt_schedule_notrace: the kernel is preemptible)",
          "kpgo_hook_exit" in seen and "kpgo_hook_exit" in callers)
else:
    print("no preempt_schedule_notrace: a kernel without preemption, where a hook "
          "section's end has no reschedule to take")

# Kprobes: every function the hooks reach is refused as a probe point.
if "__start_kprobe_blacklist" in symbols:
    refused = [(symbols[f"__{area}_text_start"], symbols[f"__{area}_text_end"])
               for area in ("kprobes", "entry", "noinstr")
               if f"__{area}_text_start" in symbols]
    black = read(symbols["__start_kprobe_blacklist"],
                 symbols["__stop_kprobe_blacklist"] - symbols["__start_kprobe_blacklist"])
    blacklisted = set(struct.unpack(f"<{len(black) // 8}Q", black))

    def probeable(names):
        return [n for n in names
                if symbols[n] not in blacklisted
                and not any(lo <= symbols[n] < hi for lo, hi in refused)]

    print(f"kprobes: {len(blacklisted)} blacklisted functions, refused areas "
          f"{[f'{lo:#x}-{hi:#x}' for lo, hi in refused]}")
    open_to_probes = probeable([n for n in seen if n in symbols])
    check("kprobes refuse every function the hooks reach (.kprobes.text, entry or noinstr "
          "text, NOKPROBE_SYMBOL)", not open_to_probes,
          ", ".join(plain.get(n, n) for n in open_to_probes))
    check("... a test that can fail: kprobes accept kpgo_init and start_kernel",
          probeable(["kpgo_init", "start_kernel"]) == ["kpgo_init", "start_kernel"])
else:
    print("no __start_kprobe_blacklist: a kernel without kprobes")

# The detectors themselves, where they must fire.
probe = "start_kernel"
start = disassemble([probe]).get(probe, Function())
check(f"the counter-write test recognizes an instrumented function ({probe})",
      bool(start.counters) and symbols[probe] in recorded)
check(f"the walk reads calls ({probe} calls setup_arch and rest_init)",
      {"setup_arch", "rest_init"} <= start.callees, str(sorted(start.callees)[:10]))
# kpgo_init is kpgo's, uninstrumented; what it calls is not all so.
control = walk(["kpgo_init"], limit=400)
control_plain = demangle(sorted(control))
print(f"control walk from kpgo_init: {len(control)} functions")
check("the walk from uninstrumented code finds the instrumented code it calls "
      "(kpgo_init, not itself instrumented)",
      "kpgo_init" not in instrumented(control) and len(instrumented(control)) > 0)
check("... and finds an indirect call or jump there", len(indirect(control)) > 0)
check("... and a panic path there", len(panics(control, control_plain)) > 0)
if sanitized:
    check("the image is built with a sanitizer (it defines __asan_load8_noabort)",
          "__asan_load8_noabort" in symbols)
    check("... and the walk from kpgo_init finds sanitizer calls there",
          len(sanitizers(control)) > 0)
sys.exit(checks.summary("hooks"))
