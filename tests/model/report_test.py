#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lever verdicts of bench/model/report.py, on known inputs.

lever_verdict() on ratios and spreads whose answer is known, then the
whole report on made-up model boots (three of each kernel): a lever that
gains 3% everywhere with boots 0.5% apart is kept, one that gains 1.5%
with boots 4% apart is undecided, and one that loses 5% on one benchmark
is dropped.  Prints "ok:"/"FAIL:" lines and "report: N passed, M failed".
"""
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

print(f"report: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
