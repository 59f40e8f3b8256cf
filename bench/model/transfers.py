#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a kernel's cache-line transfers between vCPUs come from, per
benchmark window of a model boot with several vCPUs run with the plugin's
transfer_report=N (scripts/model-boot --smp 2 BZIMAGE OUT SYSCALLS
"PLUGIN,transfer_report=20").

Usage: transfers.py [--top N] [--nm LLVM_NM] VMLINUX OPS LOG
  --top N  places shown per benchmark (default 10)
  --nm     the llvm-nm to read symbols with (default: llvm-nm on PATH)
  VMLINUX  the booted kernel's vmlinux (its symbols name code and data)
  OPS      the guest's model-ops ("<benchmark> <operations> <guest ns>")
  LOG      the plugin's log (-D)

For each benchmark: the transfers per operation that the vCPUs took, then
the places with the most, summed over the vCPUs: the function that took
them and the data whose line moved: a symbol, "counters" for the
profile's counters (LLVM gives them no symbol), or the address of a line
outside the kernel image (a per-CPU area, the direct map).  A model's view, in QEMU's order of accesses.
"""
import bisect
import collections
import re
import sys

from lines import name_of, options, symbols

KERNEL_IMAGE = 0xffffffff80000000


def data_name(addr, table):
    """The data symbol at ADDR; the counters have none (LLVM makes them
    private): named by their section, whose function is the code's."""
    if addr < KERNEL_IMAGE:
        return hex(addr)
    addrs, names = table
    where = dict(zip(names, addrs))
    start, stop = where.get("__start___llvm_prf_cnts"), where.get("__stop___llvm_prf_cnts")
    if start is not None and stop is not None and start <= addr < stop:
        return f"counters (__llvm_prf_cnts+{addr - start:#x})"
    i = bisect.bisect_right(addrs, addr) - 1
    return f"{names[i]}+{addr - addrs[i]:#x}" if i >= 0 else hex(addr)


def main():
    top, llvm_nm, args = options(sys.argv[1:], 10)
    if len(args) != 3:
        sys.exit(__doc__)
    vmlinux, ops_file, log = args
    code = symbols(vmlinux, llvm_nm)
    data = symbols(vmlinux, llvm_nm, "dDbBrR")
    ops = [(line.split()[0], int(line.split()[1])) for line in open(ops_file)]
    totals = collections.Counter()
    places = collections.defaultdict(collections.Counter)
    window = re.compile(r"kpgo-model window=(\d+) vcpu=\d+ .* transfers=(\d+) ")
    place = re.compile(r"kpgo-model transfer window=(\d+) vcpu=\d+ pc=(\S+) addr=(\S+) "
                       r"store=(\d) count=(\d+)")
    for line in open(log):
        if m := window.match(line):
            totals[int(m.group(1))] += int(m.group(2))
        elif m := place.match(line):
            where = (name_of(int(m.group(2), 16), code),
                     data_name(int(m.group(3), 16), data),
                     "store" if m.group(4) == "1" else "load")
            places[int(m.group(1))][where] += int(m.group(5))
    if not places:
        sys.exit(f"transfers: {log}: no transfer report: transfer_report=0, or one vCPU?")
    for index, (bench, n) in enumerate(ops):
        listed = sum(places[index].values())
        counters = sum(c for (_, line, _), c in places[index].items() if line.startswith("counters"))
        print(f"== {bench}: {totals[index] / n:.1f} transfers/op; the places listed (transfer_report)"
              f" {listed / n:.1f}/op, {counters / n:.1f}/op of them on counters")
        for (func, line, kind), count in places[index].most_common(top):
            print(f"  {count / n:6.2f}/op  {kind:5} in {func}: {line}")


if __name__ == "__main__":
    main()
