# SPDX-License-Identifier: GPL-2.0
"""The two sets of bench/guest/syscalls.c's benchmarks: trained (the
profiling workload runs their paths) and untrained (bench/guest/untrained.txt:
it never does, scripts/untrained-check), and their geometric means, which
the tables of scripts/benchmark-kernels and bench/model/report.py give
apart."""
import math
import os

UNTRAINED_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "untrained.txt")


def untrained():
    """The names of the untrained benchmarks."""
    names = set()
    for line in open(UNTRAINED_LIST):
        words = line.split("#", 1)[0].split()
        if words:
            names.add(words[0])
    return names


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def set_columns(benchmarks):
    """The set columns a table of BENCHMARKS gets: (title, members) for
    "trained" and "untrained", or none when all are of one set."""
    apart = untrained()
    sets = [("trained", [b for b in benchmarks if b not in apart]),
            ("untrained", [b for b in benchmarks if b in apart])]
    return sets if all(members for _, members in sets) else []


def set_geomeans(benchmarks, ratios, columns):
    """Per set column, the geomean of RATIOS (per benchmark, None where
    unknown) over its members, or None when none is known."""
    out = []
    for _, members in columns:
        known = [r for b, r in zip(benchmarks, ratios) if b in members and r is not None]
        out.append(geomean(known) if known else None)
    return out
