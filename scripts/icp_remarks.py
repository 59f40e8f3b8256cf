#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What clang's indirect-call promotion does with a profile (issue 29).

  scripts/icp_remarks.py TREE PROFDATA OBJECT.o... [--allow-decls]

Compiles the source of each OBJECT (a path relative to TREE, or absolute
for an external module) again with the command line kbuild recorded for
it in TREE (its .cmd file, made by the instrumented build), instrumentation
replaced by -fprofile-use=PROFDATA and clang's remarks on indirect-call
promotion asked for, to assembly in a scratch folder, and prints each
remark: the site, then "promoted NAME" or "declined MD5 (NAME): why",
NAME read from the profile (llvm-profdata show --ic-targets). The clang is
the toolchain's (KPGO_LLVM_BIN). --allow-decls adds -mllvm
-icp-allow-decls (clang 22 has it, clang 19 not): promotion to a function
the unit only declares.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_profile import name_ref  # noqa: E402

LLVM = os.environ.get("KPGO_LLVM_BIN", "/usr/lib/llvm-19/bin")


def profile_use_command(cmd_file, profdata, out, allow_decls=False):
    """The clang command that compiles the object of CMD_FILE (kbuild's
    .o.cmd) to assembly OUT with PROFDATA applied and promotion remarks."""
    saved = Path(cmd_file).read_text()
    words = shlex.split(re.search(r"^savedcmd_\S+ := ([^;\n]*)", saved, re.M).group(1))
    while words and not words[0].endswith("clang"):  # "ccache clang ..."
        words = words[1:]
    command, skip = [f"{LLVM}/clang"], False
    for word, following in zip(words[1:], words[2:] + [""]):
        if skip:
            skip = False
        elif word == "-mllvm" and following.startswith("-pgo-instrument"):
            skip = True
        elif word == "-o":
            command += ["-o", str(out)]
            skip = True
        elif not (word == "-fprofile-generate" or word.startswith("-Wp,-MMD")):
            command.append("-S" if word == "-c" else word)
    command += [f"-fprofile-use={profdata}", "-Rpass=pgo-icall-prom",
                "-Rpass-missed=pgo-icall-prom"]
    return command + (["-mllvm", "-icp-allow-decls"] if allow_decls else [])


def remarks(tree, cmd_file, profdata, allow_decls=False):
    """(remark lines, assembly text) of compiling CMD_FILE's object in TREE
    with PROFDATA; raises CalledProcessError if clang fails."""
    # Where kbuild ran the compile: the tree, but for an external module
    # from 7.3 on (M=), which it builds in the module's folder with the
    # source's path relative to it.
    cwd = tree
    source = re.search(r"^source_\S+ := (\S+)", Path(cmd_file).read_text(), re.M)
    if source and not Path(source.group(1)).is_absolute() and \
            (Path(cmd_file).parent / source.group(1)).exists():
        cwd = Path(cmd_file).parent
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "out.s"
        run = subprocess.run(profile_use_command(cmd_file, profdata, out, allow_decls),
                             cwd=cwd, capture_output=True, text=True)
        if run.returncode:
            raise subprocess.CalledProcessError(run.returncode, "clang", run.stdout, run.stderr)
        lines = [line for line in run.stderr.splitlines() if "remark:" in line]
        return lines, out.read_text()


def allows_decls():
    """Whether the toolchain's clang has -icp-allow-decls."""
    return subprocess.run([f"{LLVM}/clang", "-mllvm", "-icp-allow-decls", "-x", "c", "-c",
                           "/dev/null", "-o", "/dev/null"], capture_output=True).returncode == 0


def target_names(profdata):
    """{md5: name} of the indirect-call targets PROFDATA names."""
    text = subprocess.run([f"{LLVM}/llvm-profdata", "show", "--all-functions",
                           "--ic-targets", str(profdata)],
                          check=True, capture_output=True, text=True).stdout
    return {name_ref(name.encode()): name
            for name in set(re.findall(r"^\s*\[\s*\d+, ([^,]+),", text, re.M))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("profdata", type=Path)
    parser.add_argument("objects", nargs="+")
    parser.add_argument("--allow-decls", action="store_true")
    args = parser.parse_args()
    names = target_names(args.profdata)
    for obj in args.objects:
        path = args.tree / obj
        cmd_file = path.parent / f".{path.name}.cmd"
        lines, _ = remarks(args.tree, cmd_file, args.profdata.resolve(), args.allow_decls)
        for line in lines:
            site = line.split(": remark:")[0]
            promoted = re.search(r"Promote indirect call to (\S+)", line)
            declined = re.search(r"target with md5sum (\d+) (not found|definition not available)",
                                 line)
            if promoted:
                print(f"{site}: promoted {promoted.group(1)}")
            elif declined:
                md5 = int(declined.group(1))
                name = names.get(md5, "unnamed" if md5 == 0 else "?")
                print(f"{site}: declined {md5} ({name}): {declined.group(2)}")
            else:
                print(f"{site}: {line.split('remark: ')[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
