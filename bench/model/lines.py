#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a kernel's L1i misses come from, per benchmark window of model boots
run with the plugin's line_report=N (scripts/model-boot BZIMAGE OUT SYSCALLS
"PLUGIN,line_report=100000" prints every line a window fetched).

Usage: lines.py [--top N] [--nm LLVM_NM] KERNEL:VMLINUX:OPS:LOG...
  --top N  functions shown per kernel and benchmark (default 8)
  --nm     the llvm-nm to read symbols with (default: llvm-nm on PATH;
           Debian's is /usr/lib/llvm-19/bin/llvm-nm)
  KERNEL   a name for the boot
  VMLINUX  that kernel's vmlinux (its symbols name the lines)
  OPS      the guest's model-ops ("<benchmark> <operations> <guest ns>")
  LOG      the plugin's log (-D)

For each benchmark and kernel it prints, per operation, the L1i misses and
the code footprint: the lines fetched, and the hot ones (fetched at least
once per operation); then how the hot lines fall on the cache's sets (64
sets of 8 ways for 32 KiB, 64-byte lines: a set with more hot lines than
ways evicts one of them on every pass: conflict misses, which layout
decides), and the functions with the most misses per operation.  It is a
model's view (LRU, no prefetch), not hardware's.
"""
import bisect
import collections
import re
import subprocess
import sys

LINE = 64


def parse_params(log):
    for line in open(log):
        if line.startswith("kpgo-model params "):
            return {k: int(v) for k, v in (f.split("=") for f in line.split()[2:])}
    sys.exit(f"lines: {log}: no params line")


def symbols(vmlinux, llvm_nm, kinds="tTwW"):
    out = subprocess.run([llvm_nm, "-n", "--defined-only", vmlinux], capture_output=True,
                         text=True, check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in kinds:
            addrs.append(int(parts[0], 16))
            names.append(parts[2])
    return addrs, names


def name_of(addr, table):
    addrs, names = table
    if addr < 1 << 47:
        return "[user]"
    i = bisect.bisect_right(addrs, addr + LINE - 1) - 1
    return names[i] if i >= 0 else "?"


def parse_boot(spec, llvm_nm):
    kernel, vmlinux, ops_file, log = spec.split(":", 3)
    params = parse_params(log)
    sets = params["l1i_size"] // LINE // params["l1i_ways"]
    table = symbols(vmlinux, llvm_nm)
    ops = [(line.split()[0], int(line.split()[1])) for line in open(ops_file)]
    windows = collections.defaultdict(lambda: {"lines": {}, "fetched": 0, "untracked": 0})
    pattern = re.compile(r"kpgo-model (lines?) window=(\d+) (.*)")
    for line in open(log):
        m = pattern.match(line)
        if not m:
            continue
        fields = {k: int(v, 0) for k, v in (f.split("=") for f in m.group(3).split())}
        w = windows[int(m.group(2))]
        if m.group(1) == "lines":
            w["fetched"], w["untracked"] = fields["fetched"], fields["untracked"]
        else:
            w["lines"][fields["addr"]] = (fields["fetches"], fields["misses"])
    result = {}
    for index, (bench, n) in enumerate(ops):
        w = windows.get(index)
        if w is None or not w["lines"]:
            sys.exit(f"lines: {log}: no line report for window {index} ({bench}): line_report=0?")
        hot = [a for a, (f, _) in w["lines"].items() if f >= n]
        per_set = collections.Counter((a // LINE) % sets for a in hot)
        misses = collections.Counter()
        for a, (_, m) in w["lines"].items():
            misses[name_of(a, table)] += m
        result[bench] = {
            "ops": n,
            "fetched": w["fetched"],
            "listed": len(w["lines"]),
            "untracked": w["untracked"],
            "hot": len(hot),
            "misses": sum(m for _, m in w["lines"].values()) / n,
            "over": sum(1 for c in per_set.values() if c > params["l1i_ways"]),
            "max_set": max(per_set.values(), default=0),
            "ways": params["l1i_ways"],
            "sets": sets,
            "functions": [(f, m / n) for f, m in misses.most_common()],
        }
    return kernel, result


def options(args, top):
    """--top N and --nm LLVM_NM at the front of ARGS: (top, llvm_nm, the rest)."""
    llvm_nm = "llvm-nm"
    while args[:1] in (["--top"], ["--nm"]) and len(args) > 1:
        if args[0] == "--top":
            top = int(args[1])
        else:
            llvm_nm = args[1]
        args = args[2:]
    return top, llvm_nm, args


def main():
    top, llvm_nm, args = options(sys.argv[1:], 8)
    if not args or any(a.startswith("--") for a in args):
        sys.exit(__doc__)
    boots = [parse_boot(spec, llvm_nm) for spec in args]
    benches = list(boots[0][1])
    for bench in benches:
        print(f"== {bench}")
        for kernel, result in boots:
            r = result[bench]
            note = "" if r["listed"] == r["fetched"] else f" (only {r['listed']} of them listed: raise line_report)"
            if r["untracked"]:
                note += f" (and {r['untracked']} fetches of lines past the plugin's table)"
            print(f"{kernel}: {r['misses']:.1f} L1i misses/op; lines fetched {r['fetched']}{note},"
                  f" hot (>= 1 fetch/op) {r['hot']} = {r['hot'] * LINE // 1024} KiB;"
                  f" sets with more hot lines than its {r['ways']} ways: {r['over']} of {r['sets']}"
                  f" (fullest: {r['max_set']})")
            shown = [f"{f} {m:.2f}" for f, m in r["functions"][:top] if m > 0]
            print(f"  misses/op by function: {', '.join(shown) or 'none'}")
        print()


if __name__ == "__main__":
    main()
