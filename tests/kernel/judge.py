#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What every kernel test's judge shares: counted checks, the results a
guest script left, and the guest console.

A check of something the guest was to do can only pass if the guest did
it: Results.text() of a missing file fails the next check (with the file
named), Results.reached() tells whether the guest script got to a step
(scripts/guest-lib.sh's `step NAME`), and a console is judged clean only
if the guest ran to its end (scripts/qemu-run's KPGO-GUEST-END line).

As a command, for the shell tests (tests/kernel/lib.sh):
    judge.py console LOG    exit 0 if LOG is a whole run without reports
    judge.py reached RESULTS STEP...  exit 0 if the guest got to each STEP
"""
import os
import re
import sys
from pathlib import Path

# The toolchain's LLVM tools (tests/kernel/with-toolchain.sh sets
# KPGO_LLVM_BIN).
LLVM = os.environ.get("KPGO_LLVM_BIN", "/usr/lib/llvm-19/bin")

# Reports that fail a test wherever they appear on the console, by kind.
REPORTS = {
    "KASAN": r"BUG: KASAN|KASAN: |kasan_report",
    "lockdep": r"possible recursive locking|possible circular locking|"
               r"inconsistent lock state|possible irq lock inversion|"
               r"suspicious RCU usage|lock held when returning|"
               r"bad unlock balance|held lock freed|DEBUG_LOCKS_WARN_ON|"
               r"non-static key|sleeping function called from invalid context",
    "WARN": r"WARNING:|------------\[ cut here \]",
    "BUG/Oops": r"BUG:|Oops|general protection fault|kernel BUG at|"
                r"Unable to handle|Kernel panic|stack-protector",
    "RCU stall": r"rcu_.* detected stalls|self-detected stall",
    "hung task": r"INFO: task .* blocked for more than",
    "kmemleak": r"kmemleak: .*new suspected memory leaks",
}

# scripts/qemu-run's /init prints this once the guest script has returned.
GUEST_END = re.compile(r"^KPGO-GUEST-END status=", re.M)


class Checks:
    """Counted checks: "ok: WHAT" or "FAIL: WHAT (detail)" lines and a
    closing "NAME: N passed, M failed"."""

    def __init__(self):
        self.passed = self.failed = self.not_applicable = 0
        # Results files that were missing since the last check.
        self.missing = []

    def check(self, what, ok, detail=""):
        if self.missing:
            ok, detail = False, "missing: " + ", ".join(self.missing)
            self.missing = []
        if ok:
            self.passed += 1
            print(f"ok: {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what}" + (f" ({detail})" if detail else ""))
        return ok

    def check_unless(self, why_not, what, ok, detail=""):
        """check(WHAT, OK, DETAIL), or, when WHY_NOT says why it cannot
        hold on this kernel, "n/a: WHAT (WHY_NOT)": counted apart, neither
        passed nor failed."""
        if not why_not or self.missing:
            # A results file that is missing fails the check all the same.
            return self.check(what, ok, detail)
        self.not_applicable += 1
        print(f"n/a: {what} ({why_not})")
        return True

    def summary(self, name):
        if self.not_applicable:
            print(f"{name}: {self.not_applicable} checks not applicable to this kernel")
        print(f"{name}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


class Results:
    """The files a guest script left (qemu-run's DIR/results)."""

    def __init__(self, folder, checks):
        self.folder = Path(folder)
        self.checks = checks
        steps = self.folder / "steps"
        self.steps = steps.read_text().split() if steps.exists() else []

    def __truediv__(self, name):
        return self.folder / name

    def text(self, name):
        """The text of NAME; if it is missing, the next check fails."""
        try:
            return (self.folder / name).read_text(errors="replace")
        except OSError:
            self.checks.missing.append(name)
            return ""

    def bytes(self, name):
        """The bytes of NAME; if it is missing, the next check fails."""
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            self.checks.missing.append(name)
            return b""

    def optional(self, name):
        """The text of NAME, or None if the guest did not write it."""
        try:
            return (self.folder / name).read_text(errors="replace")
        except OSError:
            return None

    def reached(self, *steps):
        """Whether the guest script got to every one of STEPS."""
        return all(step in self.steps for step in steps)

    def absent(self, name, step):
        """NAME was not written, and the guest got to STEP, the point
        after which it would have been."""
        if not self.reached(step):
            self.checks.missing.append(f"step {step}")
            return False
        return not (self.folder / name).exists()


def console_reports(console):
    """{kind: [lines]} of the reports of REPORTS on the console."""
    found = {}
    for line in console.splitlines():
        for kind, pattern in REPORTS.items():
            if re.search(pattern, line):
                found.setdefault(kind, []).append(line.strip())
                break
    return found


def check_console(checks, what, console):
    """WHAT: CONSOLE is that of a whole run, without any report."""
    found = console_reports(console)
    lines = [line for kind in found.values() for line in kind]
    return checks.check(what, GUEST_END.search(console) is not None and not lines,
                        "; ".join(lines[:3]) if lines else "the run did not end")


def read_console(path, checks):
    """The console log; a missing log, or one of a guest that did not run
    to its end (a hang, a panic, the time limit), fails the next check."""
    try:
        console = Path(path).read_text(errors="replace")
    except OSError:
        checks.missing.append(str(path))
        return ""
    if not GUEST_END.search(console):
        checks.missing.append(f"the end of the guest run in {path}")
    return console


def guest_run(results_folder, console_path):
    """(checks, results, console) of one guest run: what a judge starts
    from."""
    checks = Checks()
    return checks, Results(results_folder, checks), read_console(console_path, checks)


def main(argv):
    if len(argv) >= 3 and argv[1] == "console":
        checks = Checks()
        console = read_console(argv[2], checks)
        if checks.missing:
            print(f"incomplete: {', '.join(checks.missing)}")
            return 1
        found = console_reports(console)
        for kind, lines in found.items():
            print(f"{kind}: {len(lines)}: {'; '.join(lines[:3])}")
        return 1 if found else 0
    if len(argv) >= 4 and argv[1] == "reached":
        results = Results(argv[2], Checks())
        missing = [step for step in argv[3:] if not results.reached(step)]
        if missing:
            print(f"not reached: {' '.join(missing)}")
        return 1 if missing else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
