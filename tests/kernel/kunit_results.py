#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The KUnit results one kernel's guest brought back, as one table.

Usage: kunit_results.py [--failed] RESULTS_DIR >TABLE

With --failed, the failed cases instead, one "<suite> <case>" per line.

RESULTS_DIR is tests/kernel/kunit.guest.sh's results: kunit/<suite> (the
KTAP of /sys/kernel/debug/kunit/<suite>/results) and test_bitmap (its
console lines). Each line of the table is

    <suite> <result> cases=<N> passed=<P> failed=<F> skipped=<S>

with <result> the suite's own line (ok, not-ok, skip; missing when the
suite printed none), and the cases counted at every nesting level that has
no subtests of its own (a parameterized case counts each parameter).  The
table is sorted, so two kernels' tables are equal exactly when every suite
gave the same result with the same cases.
"""
import os
import re
import sys

RESULT = re.compile(r"^(\s*)(ok|not ok) (\d+) (\S.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$")


def parse(text):
    """(the suite's own (status, directive), its leaf cases as (status,
    directive, name)) of one suite's KTAP; None for the first when the
    suite printed no result."""
    parsed = []
    for line in text.splitlines():
        m = RESULT.match(line.rstrip("\n"))
        if m:
            parsed.append((len(m.group(1).expandtabs(8)), m.group(2), m.group(5), m.group(4)))
    if not parsed:
        return None, []
    # The suite's own line is the least indented one, last.  A result line
    # is a leaf when the line before it is not a deeper result (subtests
    # print before their parent's line).
    top = min(p[0] for p in parsed)
    own = [p for p in parsed if p[0] == top][-1]
    leaves = [(status, directive, name) for i, (indent, status, directive, name) in enumerate(parsed)
              if indent != top and not (i > 0 and parsed[i - 1][0] > indent)]
    return (own[1], own[2]), leaves


def failed_cases(text):
    """The names of the failed leaf cases of one suite's KTAP."""
    return [name for status, directive, name in parse(text)[1]
            if status == "not ok" and directive != "SKIP"]


def suite_table(text):
    """(result, cases, passed, failed, skipped) of one suite's KTAP."""
    own, leaves = parse(text)
    if own is None:
        return ("missing", 0, 0, 0, 0)
    result = "skip" if own[1] == "SKIP" else own[0].replace(" ", "-")
    skipped = sum(1 for _, directive, _ in leaves if directive == "SKIP")
    passed = sum(1 for status, directive, _ in leaves if status == "ok" and directive != "SKIP")
    failed = len(leaves) - skipped - passed
    cases = len(leaves)
    # debugfs prints the suite's line without a SKIP directive even when
    # every case was skipped: such a suite did not pass.
    if result == "ok" and cases and skipped == cases:
        result = "skip"
    return (result, cases, passed, failed, skipped)


def bitmap_table(path):
    """test_bitmap's console line as a table row, or None."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return None
    m = re.search(r"test_bitmap: all (\d+) tests passed", text)
    if m:
        n = int(m.group(1))
        return ("ok", n, n, 0, 0)
    m = re.search(r"test_bitmap: failed (\d+) out of (\d+) tests", text)
    if m:
        f, n = int(m.group(1)), int(m.group(2))
        return ("not-ok", n, n - f, f, 0)
    return ("missing", 0, 0, 0, 0)


def main():
    args = sys.argv[1:]
    failed = args[:1] == ["--failed"]
    if failed:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    results = args[0]
    rows = {}
    kunit = os.path.join(results, "kunit")
    if failed:
        for name in sorted(os.listdir(kunit)) if os.path.isdir(kunit) else []:
            with open(os.path.join(kunit, name), encoding="utf-8", errors="replace") as f:
                for case in failed_cases(f.read()):
                    print(name, case)
        return
    if os.path.isdir(kunit):
        for name in os.listdir(kunit):
            with open(os.path.join(kunit, name), encoding="utf-8", errors="replace") as f:
                rows[name] = suite_table(f.read())
    bitmap = bitmap_table(os.path.join(results, "test_bitmap"))
    if bitmap:
        rows["test_bitmap"] = bitmap
    for name in sorted(rows):
        result, cases, passed, failed, skipped = rows[name]
        print(f"{name} {result} cases={cases} passed={passed} failed={failed} skipped={skipped}")


if __name__ == "__main__":
    main()
