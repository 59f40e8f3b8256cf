#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-mutants: do the tests catch the faults they are for?

The working tree (uncommitted changes included, build outputs excluded)
is copied once, at the start, to build/mutants/tree. Then for the
unmutated copy first (the baseline: every suite must pass), and for each
mutant of tests/mutants/mutants.py (or those named on the command line),
one at a time:
  1. build/mutants/src becomes a copy of build/mutants/tree with the
     mutant's edits applied;
  2. if a suite boots or reads the kernel and the kernel's sources (pgo/,
     Kbuild, Kconfig) differ from what build/mutants/linux was last built
     from, that tree is rebuilt from the copy (scripts/kmake syncs the
     copy's kernel/pgo/): build/mutants/linux is the test kernel (make
     kernel's configuration), prepared once and then rebuilt incrementally;
  3. the mutant's suites run in the copy, against that tree; their logs go
     to build/mutants/logs/<mutant>/<suite>.log.
It prints, and writes to build/mutants/report.md, a table of the checks
that went red for each mutant. The exit status is 0 when the baseline is
green and every mutant turned at least one check red; a mutant that does
not apply (its text is gone) or does not build is an error too.

Usage: tests/mutants/run.py [MUTANT...]
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import MUTANTS, Mutant  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "mutants"
SNAPSHOT = WORK / "tree"
SRC = WORK / "src"
TREE = WORK / "linux"
LOGS = WORK / "logs"
# Suites: the command run in the copy, and whether it needs the kernel.
SUITES = {
    "unit": (["make", "-s", "-C", str(SRC), "host-unit"], False),
    "hooks": ([str(SRC / "tests/kernel/hooks.sh")], True),
    "vmlinux": ([str(SRC / "tests/kernel/vmlinux.sh")], True),
    "modules": ([str(SRC / "tests/kernel/modules.sh")], True),
    "lockdown": ([str(SRC / "tests/kernel/lockdown.sh")], True),
    "live": ([str(SRC / "tests/kernel/live.sh")], True),
    "rust": ([str(SRC / "tests/kernel/rust.sh")], True),
    "scale": ([str(SRC / "tests/kernel/scale.sh")], True),
    "model": ([str(SRC / "tests/model/model.sh")], True),
    "clippy": ([str(SRC / "tests/kernel/clippy.sh")], True),
}
# What scripts/kmake copies into the tree (integration/series' copy=
# items): a mutant may change these, the tests and the benchmarks' tools
# (bench/), nothing that needs the tree prepared again.
KERNEL_INPUTS = ["Kconfig", "Kbuild", "pgo"]
# Lines that say a check failed: the kernel tests' "FAIL: ...", cargo's
# failed tests.
RED = re.compile(r"^(FAIL: .*|test \S+ \.\.\. FAILED|---- \S+ stdout ----)$")
ENV = dict(os.environ, KPGO_TREE=str(TREE), BASE="tinyconfig")


def log(message):
    print(f"check-mutants: {message}", flush=True)


def run(command, logfile=None, **kwargs):
    """Runs COMMAND; its output goes to LOGFILE (or is shown)."""
    if logfile is None:
        return subprocess.run(command, env=ENV, **kwargs).returncode
    with open(logfile, "w") as out:
        return subprocess.run(command, env=ENV, stdout=out, stderr=subprocess.STDOUT,
                              **kwargs).returncode


def copy(source, dest):
    """DEST: a copy of the project tree SOURCE, build outputs excluded; what
    DEST builds in its own build/ is kept."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["rsync", "-a", "--delete", "--exclude=/build/", "--exclude=/host/target/",
                    "--exclude=/.git/", "--exclude=__pycache__", f"{source}/", f"{dest}/"],
                   check=True)


def apply(mutant):
    """Applies MUTANT's edits to SRC; a message if one does not apply."""
    for path, old, new in mutant.edits:
        if Path(path).parts[0] not in KERNEL_INPUTS + ["tests", "bench"]:
            return f"{path} is not among what a mutant may change"
        file = SRC / path
        text = file.read_text()
        if text.count(old) != 1:
            return f"{path}: the text to change occurs {text.count(old)} times, not once"
        file.write_text(text.replace(old, new))
    return None


def kernel_inputs_hash():
    digest = hashlib.sha256()
    for name in KERNEL_INPUTS:
        for file in sorted((SRC / name).rglob("*") if (SRC / name).is_dir() else [SRC / name]):
            if file.is_file():
                digest.update(str(file.relative_to(SRC)).encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()


def prepare_tree():
    """TREE prepared and configured as make kernel's test kernel."""
    status = run([str(ROOT / "scripts/prepare-kernel")], LOGS / "prepare.log")
    if status == 0:
        status = run([str(ROOT / "scripts/configure-kernel"), "--if-changed", "--fragment",
                      str(ROOT / "scripts/kpgo.config")], LOGS / "configure.log")
    return status


def build_kernel(name):
    """Builds TREE from SRC if its kernel sources changed; None or why not."""
    stamp = WORK / "built-from"
    wanted = kernel_inputs_hash()
    if stamp.exists() and stamp.read_text() == wanted and (TREE / "vmlinux").exists():
        return None
    stamp.unlink(missing_ok=True)
    start = time.time()
    status = run([str(SRC / "scripts/kmake")], LOGS / name / "kernel-build.log")
    log(f"{name}: kernel build {'ok' if status == 0 else 'FAILED'} in {time.time() - start:.0f} s")
    if status != 0:
        return f"the kernel does not build (see {LOGS / name / 'kernel-build.log'})"
    stamp.write_text(wanted)
    return None


def run_suite(name, suite):
    """(status, red lines, seconds) of SUITE in SRC."""
    command, _ = SUITES[suite]
    logfile = LOGS / name / f"{suite}.log"
    start = time.time()
    status = run(command, logfile, cwd=SRC)
    red = [line for line in logfile.read_text(errors="replace").splitlines()
           if RED.match(line)]
    return status, red, time.time() - start


def trial(mutant):
    """{suite: (status, red, seconds)}, or an error message."""
    (LOGS / mutant.name).mkdir(parents=True, exist_ok=True)
    copy(SNAPSHOT, SRC)
    problem = apply(mutant)
    if problem:
        return problem
    if any(SUITES[s][1] for s in mutant.suites):
        problem = build_kernel(mutant.name)
        if problem:
            return problem
    results = {}
    for suite in mutant.suites:
        results[suite] = run_suite(mutant.name, suite)
        status, red, seconds = results[suite]
        log(f"{mutant.name}: {suite}: status {status}, {len(red)} red, {seconds:.0f} s")
    return results


def main(argv):
    wanted = argv[1:]
    unknown = [n for n in wanted if n not in {m.name for m in MUTANTS}]
    if unknown:
        log(f"unknown mutant(s): {' '.join(unknown)}; known: "
            f"{' '.join(m.name for m in MUTANTS)}")
        return 2
    mutants = [m for m in MUTANTS if not wanted or m.name in wanted]
    suites = sorted({s for m in mutants for s in m.suites}, key=list(SUITES).index)
    baseline = Mutant("baseline", "none: the tree as it is", suites)
    shutil.rmtree(LOGS, ignore_errors=True)
    LOGS.mkdir(parents=True)
    # One snapshot of the working tree: edits made while this runs are
    # not mixed into later mutants.
    copy(ROOT, SNAPSHOT)
    if prepare_tree() != 0:
        log(f"cannot prepare {TREE}: see {LOGS}/prepare.log and configure.log")
        return 1
    rows, ok, start = [], True, time.time()
    for mutant in [baseline] + mutants:
        began = time.time()
        outcome = trial(mutant)
        seconds = time.time() - began
        if isinstance(outcome, str):
            ok = False
            rows.append((mutant, "ERROR", outcome, seconds))
            log(f"{mutant.name}: ERROR: {outcome}")
            continue
        red = {s: r for s, (status, r, _) in outcome.items() if status != 0 or r}
        if mutant is baseline:
            verdict = "green" if not red else "RED"
            ok &= not red
        else:
            verdict = "caught" if red else "SURVIVED"
            ok &= bool(red)
        detail = "; ".join(
            f"{s}: {len(r)} red" + (f" ({', '.join(l[:90] for l in r[:3])})" if r else
                                    f" (exit {outcome[s][0]}, no FAIL line)")
            for s, r in red.items()) or "all suites green"
        rows.append((mutant, verdict, detail, seconds))
        log(f"{mutant.name}: {verdict}: {detail}")
    lines = ["# make check-mutants", "",
             f"{len(mutants)} mutants, {time.time() - start:.0f} s in all; logs in {LOGS}.", "",
             "| mutant | fault | suites | verdict | checks that went red | s |",
             "|---|---|---|---|---|---|"]
    for mutant, verdict, detail, seconds in rows:
        lines.append(f"| {mutant.name} | {mutant.fault} | {' '.join(mutant.suites)} | "
                     f"{verdict} | {detail.replace('|', '/')} | {seconds:.0f} |")
    report = "\n".join(lines) + "\n"
    (WORK / "report.md").write_text(report)
    print(report)
    caught = sum(1 for m, v, _, _ in rows if v == "caught")
    print(f"check-mutants: {caught} of {len(mutants)} mutants caught, baseline "
          f"{rows[0][1]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
