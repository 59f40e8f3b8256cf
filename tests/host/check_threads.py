#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges a profile of threads/ (the hammer program) against its own tally.

    check_threads.py LABEL TALLY PROFILE_TEXT FUNCTIONS [--exact-values] [--exact-entries]

TALLY is the program's stdout (see threads/main.c), PROFILE_TEXT the output of
`llvm-profdata merge --text`, FUNCTIONS the program's function symbols (one a
line, from llvm-nm). Prints one "PASS: ..." or "FAIL: ..." line per check
(and "INFO: ..." lines); the caller counts them. A tally that lists fewer
sites or entry counts than threads/main.c prints fails.

The contract checked, which the runtime guarantees under contention:
  - no value is invented: every recorded indirect-call target is a function of
    the program and was called at that site; every recorded memop size range
    was used at that site;
  - none is lost: every target called / size range used at a site is recorded
    there (each site here has at most 6 distinct values, below any per-site
    cap: compiler-rt's is 24);
  - no value is counted more often than it happened, and a site's recorded
    counts sum to at most its calls (updates may be lost under contention);
    with --exact-values (one thread) counts equal calls;
  - entry counts of single-block functions never exceed the calls; with
    --exact-entries (one thread, or -fprofile-update=atomic) they are equal.
"""
import sys
from collections import defaultdict

# What threads/main.c tallies, at the least: its two indirect-call sites
# (call_through_table, call_pair), its memop site (copy_sized) and the entry
# counts of its 8 targets and 3 site functions. A tally with less (empty, or
# cut short) leaves the checks below unasked, so it fails.
MIN_TALLY = {"indirect": 2, "memop": 1, "entry": 11}


def memop_range(size):
    """LLVM's memop size range representative (InstrProfGetRangeRepValue)."""
    if size <= 8:
        return size
    if size >= 513:
        return 513
    if size & (size - 1) == 0:
        return size
    return (1 << (size.bit_length() - 1)) + 1


def parse_text_profile(path):
    """name -> {"counters": [...], "indirect": [{value: count}], "memop": [...]}"""
    lines = [l.rstrip("\n") for l in open(path)]
    funcs, i = {}, 0
    kinds = {"IPVK_IndirectCallTarget": "indirect", "IPVK_MemOPSize": "memop"}
    while i < len(lines):
        line = lines[i]
        if not line or line.startswith("#") or line.startswith(":"):
            i += 1
            continue
        name, i = line, i + 1
        rec = {"counters": [], "indirect": [], "memop": []}
        funcs[name] = rec
        while i < len(lines) and lines[i]:
            if lines[i] == "# Num Counters:":
                n = int(lines[i + 1])
                rec["counters"] = [int(x) for x in lines[i + 3:i + 3 + n]]
                i += 3 + n
            elif lines[i].startswith("# ValueKind = "):
                kind = kinds.get(lines[i][len("# ValueKind = "):].rstrip(":"), "other")
                nsites = int(lines[i + 3])
                i += 4
                for _ in range(nsites):
                    nvalues = int(lines[i])
                    site = {}
                    for entry in lines[i + 1:i + 1 + nvalues]:
                        value, count = entry.rsplit(":", 1)
                        site[value] = site.get(value, 0) + int(count)
                    rec.setdefault(kind, []).append(site)
                    i += 1 + nvalues
            else:
                i += 1
    return funcs


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    exact_values = "--exact-values" in argv
    exact_entries = "--exact-entries" in argv
    label, tally_path, profile_path, functions_path = args
    functions = set(open(functions_path).read().split())
    funcs = parse_text_profile(profile_path)

    want = {"indirect": defaultdict(lambda: defaultdict(int)),
            "memop": defaultdict(lambda: defaultdict(int))}
    entries = {}
    for line in open(tally_path):
        f = line.split()
        if f[0] == "indirect":
            want["indirect"][f[1]][f[2]] += int(f[3])
        elif f[0] == "memop":
            want["memop"][f[1]][str(memop_range(int(f[2])))] += int(f[3])
        elif f[0] == "entry":
            entries[f[1]] = int(f[2])

    def report(ok, what, detail=""):
        print(f"{'PASS' if ok else 'FAIL'}: {label}: {what}{'' if ok or not detail else ' -- ' + detail}")

    found = {"indirect": len(want["indirect"]), "memop": len(want["memop"]), "entry": len(entries)}
    short = {kind: n for kind, n in found.items() if n < MIN_TALLY[kind]}
    uncalled = sorted(f"{kind} {site_fn}" for kind in ("indirect", "memop")
                      for site_fn, called in want[kind].items() if not any(called.values()))
    report(not short and not uncalled,
           f"the tally lists at least {MIN_TALLY['indirect']} indirect-call sites, "
           f"{MIN_TALLY['memop']} memop site and {MIN_TALLY['entry']} entry counts, each site called",
           f"found {found}" + (f", sites never called: {uncalled}" if uncalled else ""))

    recorded_total = called_total = 0
    for kind in ("indirect", "memop"):
        for site_fn, called in sorted(want[kind].items()):
            rec = funcs.get(site_fn)
            sites = rec[kind] if rec else []
            if len(sites) != 1:
                report(False, f"{site_fn} has one {kind} site in the profile",
                       f"found {len(sites)}" + ("" if rec else f" ({site_fn} not in the profile)"))
                continue
            got = sites[0]
            called = {v: n for v, n in called.items() if n}
            if kind == "indirect":
                alien = sorted(v for v in got if v not in functions)
                report(not alien, f"{site_fn}: every recorded target is a function of the program",
                       f"unknown targets {alien}")
            invented = sorted(set(got) - set(called))
            lost = sorted(set(called) - set(got))
            report(not invented and not lost,
                   f"{site_fn}: recorded {kind} values are exactly the {len(called)} used",
                   f"invented {invented}, lost {lost}, recorded {dict(got)}")
            over = {v: (got[v], called.get(v, 0)) for v in got if got[v] > called.get(v, 0)}
            total_got, total_called = sum(got.values()), sum(called.values())
            recorded_total += total_got
            called_total += total_called
            report(not over and total_got <= total_called,
                   f"{site_fn}: no {kind} value counted more often than it happened "
                   f"(site total {total_got} <= {total_called} calls)",
                   f"over-counted (recorded, actual): {over}")
            if exact_values:
                diff = {v: (got.get(v, 0), n) for v, n in called.items() if got.get(v, 0) != n}
                report(not diff, f"{site_fn}: {kind} value counts exact", f"(recorded, actual): {diff}")

    for fn, calls in sorted(entries.items()):
        rec = funcs.get(fn)
        if not rec or len(rec["counters"]) != 1:
            report(False, f"{fn} is in the profile with one counter (its entry count)",
                   f"counters {rec['counters'] if rec else 'absent'}")
            continue
        count = rec["counters"][0]
        if exact_entries:
            report(count == calls, f"{fn}: entry count {count} equals its {calls} calls")
        else:
            report(count <= calls, f"{fn}: entry count {count} <= its {calls} calls")
    if called_total:
        print(f"INFO: {label}: value updates recorded {recorded_total} of {called_total} "
              f"({100.0 * recorded_total / called_total:.3f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
