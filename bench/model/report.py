#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The front-end model's figures of benchmark boots (scripts/benchmark-kernels).

Usage: report.py KERNELS PAIRS LEVERS RUN...
  KERNELS  kernel names, comma-separated, the first the reference
  PAIRS    "a/b" pairs, comma-separated (may be empty)
  LEVERS   "a/b" pairs, comma-separated (may be empty): a is b with one
           more lever; its verdict is printed
  RUN      KERNEL:OPS:LOG, one per model boot: the guest's "<name> <ops>
           <guest ns>" lines and the plugin's log (-d plugin -D LOG); with
           several vCPUs, ops are the sum over them, and so are the counts
           of their windows of one id

Prints, per benchmark and kernel, each count per operation and the modeled
cycles, the ratios of modeled cycles and of front-end misses (L1i + iTLB;
none where both kernels miss less than once per operation) for the pairs with
their geomean, each lever's verdict (lever_verdict()), how far the model's
instruction counts are from -icount's (guest ns / 4 at shift=2), and, when a
kernel was booted more than once, how far its boots differ.  Several boots of
one kernel: the median.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "guest"))
from benchmark_sets import geomean, set_columns, set_geomeans  # noqa: E402

METRICS = [
    ("cycles", "modeled cycles"),
    ("insns", "instructions"),
    ("rep_repeats", "REP string repeats"),
    ("l1i_misses", "L1i misses"),
    ("itlb_misses", "iTLB misses (L1)"),
    ("itlb2_misses", "iTLB misses (L2, page walks)"),
    ("taken", "taken branches"),
    ("mispredicts", "mispredicted branches"),
    ("l1d_misses", "L1d misses"),
    ("l2_misses", "L2 misses"),
    ("transfers", "cache-line transfers (between vCPUs)"),
]
NS_PER_INSN = 4  # -icount shift=2
KEEP_GAIN, KEEP_WORST = 1.01, 0.99


def parse_run(spec):
    kernel, ops_file, log_file = spec.split(":", 2)
    names = []
    icount = {}
    for line in open(ops_file):
        name, ops, ns = line.split()
        names.append((name, int(ops)))
        icount[name] = float(ns) / NS_PER_INSN
    # A window per vCPU that ran the benchmark: their sum. Every window
    # must have been counted by as many vCPUs as every other.
    windows, vcpus = {}, {}
    for line in open(log_file):
        if line.startswith("kpgo-model window="):
            fields = dict(f.split("=") for f in line.split()[1:])
            vcpus.setdefault(int(fields["window"]), set()).add(fields.pop("vcpu", "0"))
            total = windows.setdefault(int(fields.pop("window")), {})
            for k, v in fields.items():
                total[k] = total.get(k, 0) + int(v)
        elif line.startswith("kpgo-model directory ") and " untracked=0" not in line:
            print(f"model: {log_file}: the directory of written lines was full, transfers "
                  f"are undercounted ({line.strip()})", file=sys.stderr)
    if len({len(v) for v in vcpus.values()}) > 1:
        sys.exit(f"model: {log_file}: windows counted by different numbers of vCPUs "
                 f"({ {w: len(v) for w, v in sorted(vcpus.items())} })")
    per_op = {}
    for index, (name, ops) in enumerate(names):
        if index not in windows:
            sys.exit(f"model: {log_file}: no window {index} ({name})")
        per_op[name] = {k: v / ops for k, v in windows[index].items()}
        # A log of one vCPU may have no transfers (an older plugin's).
        per_op[name].setdefault("transfers", 0.0)
        per_op[name]["icount_insns"] = icount[name] / ops
        # -icount counts every repeat of a REP string instruction.
        per_op[name]["executed"] = (windows[index]["insns"] + windows[index]["rep_repeats"]) / ops
    return kernel, per_op


def lever_verdict(ratios, spreads):
    """The verdict on a lever: "keep", "drop" or "undecided", and why.

    RATIOS: per benchmark, modeled cycles of the kernel without the lever
    over those of the kernel with it (above 1: the lever is faster).
    SPREADS: per benchmark, how far boots of one kernel differ there,
    (max - min) / median, the larger of the two kernels'; None when a
    kernel was booted once.  A lever is kept when its geomean gains at
    least 1% and no benchmark loses more than 1% (KEEP_GAIN, KEEP_WORST).
    With spreads, a gain counts only beyond the mean spread, and a loss
    decides only when the benchmark loses more than 1% even at the edge
    of its spread; what falls inside the spread is undecided, and more
    boots (MODEL_ROUNDS) can decide it.  Without spreads the verdict is
    on the medians alone, and says so.
    """
    gain = geomean(ratios)
    worst = min(ratios)
    if any(s is None for s in spreads):
        verdict = "keep" if gain >= KEEP_GAIN and worst >= KEEP_WORST else "drop"
        return verdict, "one boot per kernel: the boots' spread is not known"
    noise = sum(spreads) / len(spreads)
    if any(r * (1 + s) < KEEP_WORST for r, s in zip(ratios, spreads)):
        return "drop", "a benchmark loses more than 1%, beyond its boots' spread"
    if gain < KEEP_GAIN:
        if gain * (1 + noise) < KEEP_GAIN:
            return "drop", f"gains less than 1%, beyond the mean spread {100 * noise:.2f}%"
        return "undecided", f"gains less than 1%, within the mean spread {100 * noise:.2f}%"
    if gain - 1 <= noise:
        return "undecided", f"gains at least 1%, but within the mean spread {100 * noise:.2f}%"
    if worst < KEEP_WORST:
        return "undecided", "a benchmark loses more than 1%, within its boots' spread"
    return "keep", f"gains beyond the mean spread {100 * noise:.2f}%, no benchmark loses 1%"


def main():
    kernels = sys.argv[1].split(",")
    pairs = [p.split("/") for p in sys.argv[2].split(",") if p]
    levers = [p.split("/") for p in sys.argv[3].split(",") if p]
    runs = {}
    for spec in sys.argv[4:]:
        kernel, per_op = parse_run(spec)
        runs.setdefault(kernel, []).append(per_op)
    benchmarks = list(runs[kernels[0]][0])
    med = {(k, b, m): statistics.median(r[b][m] for r in runs[k])
           for k in kernels for b in benchmarks for m in runs[k][0][b]}
    width = max(len(b) for b in benchmarks) + 2
    left = max(30, max(len(a) + len(b) + 5 for a, b in pairs) + 2 if pairs else 0,
               max(len(k) for k in kernels) + 4)
    print(f"{'modeled, per operation':<{left}}" + "".join(f"{b:>{width}}" for b in benchmarks))
    for metric, title in METRICS:
        print(title)
        for k in kernels:
            print(f"{'  ' + k:<{left}}"
                  + "".join(f"{med[k, b, metric]:>{width}.1f}" for b in benchmarks))
    print()

    columns = set_columns(benchmarks)

    def ratio_table(title, value, floor=0.0):
        """Ratios b/a of VALUE; where both are below FLOOR, none ("-");
        their geomean, over all and per set of benchmarks."""
        print(f"{title:<{left}}" + "".join(f"{b:>{width}}" for b in benchmarks)
              + f"{'geomean':>{width}}")
        per_set = []
        for a, b in pairs:
            ratios = [value(b, x) / value(a, x) if max(value(a, x), value(b, x)) >= floor
                      and value(a, x) > 0 else None for x in benchmarks]
            known = [r for r in ratios if r is not None]
            print(f"{a + ' / ' + b:<{left}}"
                  + "".join(f"{r:>{width}.3f}" if r is not None else f"{'-':>{width}}"
                            for r in ratios)
                  + (f"{geomean(known):>{width}.3f}" if known else f"{'-':>{width}}"))
            per_set.append((a, b, set_geomeans(benchmarks, ratios, columns)))
        if columns:
            print()
            print(f"{title + ', geomean per set':<{left}}"
                  + "".join(f"{t:>{width}}" for t, _ in columns))
            for a, b, means in per_set:
                print(f"{a + ' / ' + b:<{left}}"
                      + "".join(f"{g:>{width}.3f}" if g is not None else f"{'-':>{width}}"
                                for g in means))

    ratio_table("modeled cycles (above 1 faster)", lambda k, x: med[k, x, "cycles"])
    # Under one miss per operation in both kernels, a ratio says nothing;
    # none at all in one of them counts as a hundredth.
    ratio_table("L1i+iTLB misses (above 1 fewer)",
                lambda k, x: max(0.01, med[k, x, "l1i_misses"] + med[k, x, "itlb_misses"]),
                floor=1.0)
    def spread(k, x):
        values = [r[x]["cycles"] for r in runs[k]]
        return (max(values) - min(values)) / med[k, x, "cycles"] if len(values) > 1 else None

    for a, b in levers:
        ratios = [med[b, x, "cycles"] / med[a, x, "cycles"] for x in benchmarks]
        spreads = [None if spread(a, x) is None or spread(b, x) is None
                   else max(spread(a, x), spread(b, x)) for x in benchmarks]
        verdict, why = lever_verdict(ratios, spreads)
        worst_at = benchmarks[ratios.index(min(ratios))]
        print(f"lever {a} against {b}: {verdict}: {why} (modeled geomean "
              f"{geomean(ratios):.3f}, worst {min(ratios):.3f} in {worst_at}; "
              f"kept at >= {KEEP_GAIN} with none below {KEEP_WORST})")
    print()
    if os.environ.get("KPGO_MODEL_ICOUNT", "1") == "1":
        worst = max(abs(r[b]["executed"] / r[b]["icount_insns"] - 1)
                    for k in kernels for r in runs[k] for b in benchmarks)
        print(f"model against -icount: instructions and REP repeats within {100 * worst:.2f}% "
              f"of -icount's count (every window of every boot)")
    else:
        print("model boots without -icount (several vCPUs in parallel, MTTCG): "
              "no comparison with -icount's count")
    repeated = [k for k in kernels if len(runs[k]) > 1]
    if repeated:
        spread = max((max(r[b]["cycles"] for r in runs[k]) - min(r[b]["cycles"] for r in runs[k]))
                     / med[k, b, "cycles"] for k in repeated for b in benchmarks)
        print(f"boots of one kernel: modeled cycles differ by at most {100 * spread:.2f}% "
              f"({len(runs[repeated[0]])} boots each of {', '.join(repeated)})")


if __name__ == "__main__":
    main()
