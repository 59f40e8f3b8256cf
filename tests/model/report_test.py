#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lever verdicts of bench/model/report.py, on known inputs.

lever_verdict() on ratios and spreads whose answer is known, then the
whole report on made-up model boots (three of each kernel): a lever that
gains 3% everywhere with boots 0.5% apart is kept, one that gains 1.5%
with boots 4% apart is undecided, and one that loses 5% on one benchmark
is dropped.  Then scripts/sampling-figures on a made-up benchmark of five
kernels (the tables of both benchmark-kernels and report.py): the share
of the full profile's gain that the sampled one keeps, and the summary of
several vCPUs; and the functions whose hash differs between two profiles.  Prints "ok:"/"FAIL:" lines and "report: N passed, M failed".
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "model"))
import report  # noqa: E402

passed = failed = 0


def check(what, condition):
    global passed, failed
    print(("ok: " if condition else "FAIL: ") + what)
    if condition:
        passed += 1
    else:
        failed += 1


CASES = [
    ("a 3% gain everywhere, boots 0.5% apart", [1.03] * 6, [0.005] * 6, "keep"),
    ("a 1.5% gain, boots 3% apart", [1.015] * 6, [0.03] * 6, "undecided"),
    ("a 4% gain, but 5% lost on one benchmark, boots 0.5% apart",
     [1.04] * 5 + [0.95], [0.005] * 6, "drop"),
    ("a 4% gain, 1.5% lost on one benchmark, boots 1% apart",
     [1.04] * 5 + [0.985], [0.01] * 6, "undecided"),
    ("no gain, boots 0.2% apart", [1.0] * 6, [0.002] * 6, "drop"),
    ("a 0.5% gain, boots 2% apart", [1.005] * 6, [0.02] * 6, "undecided"),
    ("a 3% gain, one boot each", [1.03] * 6, [None] * 6, "keep"),
    ("a 0.5% gain, one boot each", [1.005] * 6, [None] * 6, "drop"),
]
for what, ratios, spreads, want in CASES:
    got, why = report.lever_verdict(ratios, spreads)
    check(f"lever_verdict: {what}: {want} (got {got}: {why})", got == want)

BENCHMARKS = ["getpid", "pipe", "fork", "open", "mmap", "write"]
OPS = 1000


def boot(folder, name, cycles_per_op):
    """One made-up model boot: its ops file and plugin log."""
    ops, log = folder / f"{name}.ops", folder / f"{name}.log"
    ops.write_text("".join(f"{b} {OPS} {OPS * 400}\n" for b in BENCHMARKS))
    log.write_text("".join(
        f"kpgo-model window={i} cycles={int(c * OPS)} insns={OPS * 100} rep_repeats=0 "
        f"l1i_misses={OPS} itlb_misses=0 itlb2_misses=0 taken={OPS * 10} "
        f"mispredicts={OPS} l1d_misses={OPS} l2_misses=0\n"
        for i, c in enumerate(cycles_per_op)))
    return f"{ops}:{log}"


with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp)
    runs = []
    # Base: 1000 cycles per operation, boots within +-0.25% (or +-2%).
    kernels = {
        "base": ([1000] * 6, 0.0025),
        "gains": ([1000 / 1.03] * 6, 0.0025),
        "noisy": ([1000 / 1.015] * 6, 0.02),
        "loses": ([1000 / 1.04] * 5 + [1000 / 0.95], 0.0025),
    }
    for name, (cycles, jitter) in kernels.items():
        for index, factor in enumerate((1 - jitter, 1.0, 1 + jitter)):
            spec = boot(folder, f"{name}-{index}", [c * factor for c in cycles])
            runs.append(f"{name}:{spec}")
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench/model/report.py"), ",".join(kernels), "",
         "gains/base,noisy/base,loses/base", *runs], capture_output=True, text=True)
    check(f"report.py runs on three boots per kernel (status {result.returncode})",
          result.returncode == 0)
    lines = {line.split(":")[0]: line for line in result.stdout.splitlines()
             if line.startswith("lever ")}
    for lever, want in (("gains", "keep"), ("noisy", "undecided"), ("loses", "drop")):
        line = lines.get(f"lever {lever} against base", "")
        check(f"report.py: lever {lever}: {want} ({line or 'no verdict line'})",
              line.startswith(f"lever {lever} against base: {want}:"))


# scripts/sampling-figures on a made-up benchmark of five kernels: the
# -icount table as scripts/benchmark-kernels prints it, then report.py's
# on model boots whose cycles and transfers are known.
ICOUNT_GEOMEANS = {"optimized": 1.08, "optimized-sampled": 1.06, "instrumented": 0.86,
                   "instrumented-sampled": 0.97}
MODEL_SPEEDUPS = {"baseline": 1.0, "optimized": 1.10, "optimized-sampled": 1.095,
                  "instrumented": 0.5, "instrumented-sampled": 0.98}
with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp)
    runs = []
    for name, speedup in MODEL_SPEEDUPS.items():
        spec = boot(folder, name, [1000 / speedup] * 6)
        log = Path(spec.split(":")[1])
        # Transfers per operation: 7 in the instrumented kernel, else 1.
        per_op = 7 if name == "instrumented" else 1
        log.write_text(log.read_text().replace("\n", f" transfers={per_op * OPS}\n"))
        runs.append(f"{name}:{spec}")
    pairs = [f"{k}/baseline" for k in list(MODEL_SPEEDUPS)[1:]]
    model = subprocess.run(
        [sys.executable, str(ROOT / "bench/model/report.py"), ",".join(MODEL_SPEEDUPS),
         ",".join(pairs + ["instrumented-sampled/instrumented"]), "", *runs],
        capture_output=True, text=True, env={**os.environ, "KPGO_MODEL_ICOUNT": "0"})
    check(f"report.py runs on five kernels (status {model.returncode}: {model.stderr[-200:]})",
          model.returncode == 0)
    left = 44
    icount = [f"{'ratio (above 1 is faster)':<{left}}"
              + "".join(f"{b:>10}" for b in BENCHMARKS) + f"{'geomean':>10}"]
    for name, value in ICOUNT_GEOMEANS.items():
        icount.append(f"{name + ' / baseline':<{left}}" + f"{value:>10.3f}" * 7)
    sampled_over_full = ICOUNT_GEOMEANS["instrumented-sampled"] / ICOUNT_GEOMEANS["instrumented"]
    icount.append(f"{'instrumented-sampled / instrumented':<{left}}"
                  + f"{sampled_over_full:>10.3f}" * 7)
    (folder / "benchmark.txt").write_text("\n".join(icount) + "\n\n" + model.stdout)
    # benchmark-sharing ends its table with the kernels it measured.
    (folder / "sharing-2.txt").write_text("\n".join(icount) + "\n\n" + model.stdout
                                          + "".join(f"kernel {k}\n" for k in MODEL_SPEEDUPS))
    figures = ROOT / "scripts/sampling-figures"
    gain = subprocess.run([sys.executable, str(figures), "gain", str(folder)],
                          capture_output=True, text=True).stdout
    check(f"sampling-figures gain: 75% in -icount (0.06 of 0.08), 95% modeled ({gain.strip()})",
          "-icount 75% (1.060 against 1.080)" in gain
          and "modeled cycles 95% (1.095 against 1.100)" in gain)
    sharing = subprocess.run([sys.executable, str(figures), "sharing", str(folder), "2"],
                             capture_output=True, text=True).stdout
    check("sampling-figures sharing: the geometric means of both tables, by pair",
          "| 2 | -icount ops/s | 0.860 | 0.970 | 1.128 |" in sharing
          and "| 2 | modeled cycles | 0.500 | 0.980 | 1.960 |" in sharing)
    transfers = [line.split() for line in sharing.splitlines() if line.startswith("  instrumented ")]
    check(f"sampling-figures sharing: 7 transfers per operation in instrumented ({transfers})",
          transfers and set(transfers[0][1:]) == {"7.0"})

# sampling-figures hashes on two profiles made by llvm-profdata from text:
# one function's hash differs (compiled from other source), one function
# is in one profile only.
PROFDATA = os.environ.get("KPGO_LLVM_BIN", "/usr/lib/llvm-19/bin") + "/llvm-profdata"


def text_profile(folder, name, functions):
    text = "# IR level Instrumentation Flag\n:ir\n" + "".join(
        f"{fn}\n{fn_hash}\n1\n7\n\n" for fn, fn_hash in functions)
    (folder / f"{name}.proftext").write_text(text)
    subprocess.run([PROFDATA, "merge", "-o", str(folder / f"{name}.profdata"),
                    str(folder / f"{name}.proftext")], check=True)
    return str(folder / f"{name}.profdata")


with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp)
    full = text_profile(folder, "full", [("same", 11), ("changed", 22), ("only_full", 33)])
    sampled = text_profile(folder, "sampled", [("same", 11), ("changed", 23)])
    same = text_profile(folder, "same", [("same", 11), ("changed", 22)])
    figures = [sys.executable, str(ROOT / "scripts/sampling-figures"), "hashes", PROFDATA]
    result = subprocess.run([*figures, full, sampled], capture_output=True, text=True)
    check(f"sampling-figures hashes: 1 of 2 functions, changed ({result.stdout.strip()})",
          result.returncode == 1 and result.stdout.strip() == "1 of 2 functions: changed")
    result = subprocess.run([*figures, full, same], capture_output=True, text=True)
    check(f"sampling-figures hashes: 0 of 2 when they agree ({result.stdout.strip()})",
          result.returncode == 0 and result.stdout.strip() == "0 of 2 functions")

print(f"report: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
