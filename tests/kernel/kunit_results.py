#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The KUnit results one kernel's guest brought back, as one table.

Usage: kunit_results.py RESULTS_DIR >TABLE

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


def suite_table(text):
    """(result, cases, passed, failed, skipped) of one suite's KTAP."""
    lines = [line.rstrip("\n") for line in text.splitlines()]
    parsed = []
    for line in lines:
        m = RESULT.match(line)
        if m:
            parsed.append((len(m.group(1).expandtabs(8)), m.group(2), m.group(5)))
    if not parsed:
        return ("missing", 0, 0, 0, 0)
    # The suite's own line is the least indented one, last.
    top = min(indent for indent, _, _ in parsed)
    own = [p for p in parsed if p[0] == top][-1]
    result = "skip" if own[2] == "SKIP" else own[1].replace(" ", "-")
    cases = passed = failed = skipped = 0
    # A result line is a leaf when the line before it is not a deeper
    # result (subtests print before their parent's line).
    for i, (indent, status, directive) in enumerate(parsed):
        if indent == top:
            continue
        if i > 0 and parsed[i - 1][0] > indent:
            continue  # a parent: its children were counted
        cases += 1
        if directive == "SKIP":
            skipped += 1
        elif status == "ok":
            passed += 1
        else:
            failed += 1
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
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    rows = {}
    kunit = os.path.join(results, "kunit")
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
