#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What llvm-profdata-19 makes of raw profiles, as Python data.

summarize(paths) merges the raw profiles (a file may hold several
concatenated profiles, as a module's file does after a reload) and returns
{function: Function}, keyed by the function name without its "file;" prefix
(static functions) so that tests can name them plainly.
"""
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

# The toolchain's llvm-profdata (tests/kernel/toolchain.sh sets KPGO_LLVM_BIN).
PROFDATA = os.environ.get("KPGO_LLVM_BIN", "/usr/lib/llvm-19/bin") + "/llvm-profdata"


@dataclass
class Function:
    counts: list = field(default_factory=list)
    targets: dict = field(default_factory=dict)  # callee name -> count
    sizes: dict = field(default_factory=dict)  # memop bucket -> count


def plain(name):
    return name.rsplit(";", 1)[-1]


def summarize(*paths, warnings=None):
    """WARNINGS, a list, gets what llvm-profdata merge printed on stderr."""
    with tempfile.NamedTemporaryFile(suffix=".profdata") as merged:
        run = subprocess.run([PROFDATA, "merge", "-o", merged.name, *paths],
                             check=True, capture_output=True, text=True)
        if warnings is not None and run.stderr:
            warnings.append(run.stderr)
        text = subprocess.run(
            [PROFDATA, "show", "--all-functions", "--counts", "--ic-targets",
             "--memop-sizes", "--value-cutoff=0", merged.name],
            check=True, capture_output=True, text=True).stdout
    functions = {}
    current = None
    section = None
    for line in text.splitlines():
        if re.match(r"^  \S.*:$", line):
            current = functions.setdefault(plain(line.strip()[:-1]), Function())
            section = None
        elif current is None:
            continue
        elif "Block counts:" in line:
            current.counts = [int(c) for c in re.findall(r"\d+", line.split(":", 1)[1])]
        elif "Indirect Target Results:" in line:
            section = "targets"
        elif "Memory Intrinsic Size Results:" in line:
            section = "sizes"
        elif section and (m := re.match(r"^\s*\[\s*\d+,\s*([^,]+),\s*(\d+)\s*\]", line)):
            key, count = m.group(1).strip(), int(m.group(2))
            if section == "targets":
                current.targets[plain(key)] = current.targets.get(plain(key), 0) + count
            else:
                current.sizes[int(key)] = current.sizes.get(int(key), 0) + count
    return functions
