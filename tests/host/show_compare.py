#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compares two `llvm-profdata show --all-functions --counts --ic-targets
--memop-sizes` listings of the same program built by two compilers (clang
18 with kpgo, clang 19 with compiler-rt), function by function.

The compilers may instrument a function differently (clang 19 keeps a
branch that clang 18 folds, say): then its hash and counters differ for a
reason that is not the runtime's. So:
  - every function of one listing is in the other;
  - a function with the same hash in both has the same counters, block
    counts and value profiles (indirect-call targets, memop sizes);
  - a function whose hash differs has the same entry count (the first
    counter: both are built with -pgo-instrument-entry=true) and the same
    value profiles; it is named on a line "instrumented differently".
The summary line counts the functions of each kind. Exit status 1 on any
difference, 2 on a listing that cannot be read.

Usage: show_compare.py REFERENCE CANDIDATE
"""
import re
import sys


def functions(path):
    """{name: {"hash", "counters", "blocks", "values"}} of a listing."""
    result, current = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^  (\S.*):$", line)
        if m:
            current = result.setdefault(m.group(1), {"values": []})
            continue
        if current is None:
            continue
        m = re.match(r"^    (Hash|Counters|Block counts): (.*)$", line)
        if m:
            current[m.group(1)] = m.group(2)
        elif line.startswith("\t["):
            # Site, value, count; the percentage follows from them.
            current["values"].append(re.sub(r"\s+", " ", line.split("]")[0].strip("\t[ ")))
        elif re.match(r"^    (Indirect Target Results|Memory Intrinsic Size Results):", line):
            current["values"].append(line.strip())
    return result


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ref, cand = functions(argv[1]), functions(argv[2])
    if not ref or not cand:
        print(f"no function in {argv[1] if not ref else argv[2]}")
        return 2
    bad, alike, unlike = 0, 0, 0
    for name in sorted(set(ref) | set(cand)):
        if name not in ref or name not in cand:
            print(f"only in {'reference' if name in ref else 'candidate'}: {name}")
            bad += 1
            continue
        r, c = ref[name], cand[name]
        if r["values"] != c["values"]:
            print(f"value profiles differ: {name}: {r['values']} / {c['values']}")
            bad += 1
        if r.get("Hash") == c.get("Hash"):
            alike += 1
            for key in ("Counters", "Block counts"):
                if r.get(key) != c.get(key):
                    print(f"{key.lower()} differ: {name}: {r.get(key)} / {c.get(key)}")
                    bad += 1
        else:
            unlike += 1
            entry = [f.get("Block counts", "").strip("[]").split(",")[0] for f in (r, c)]
            print(f"instrumented differently: {name} (counters {r.get('Counters')} / "
                  f"{c.get('Counters')}), entry counts {entry[0]} / {entry[1]}")
            if entry[0] != entry[1] or not entry[0]:
                print(f"entry counts differ: {name}")
                bad += 1
    print(f"{alike} functions instrumented alike, {unlike} differently, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
