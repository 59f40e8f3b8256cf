#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges the Rust profiles rust.guest.sh took.

Arguments: the results folder, the guest console log, the module build
folder, the kernel tree.

Where rustc writes another raw version than clang (the tree's
CONFIG_PGO_CLANG_RUST_APART), vmlinux's Rust functions are in
vmlinux-rust.profraw, in rustc's version, and the Rust profiles are judged
with rustc's llvm-profdata (KPGO_LLVM_BIN, which rust.sh sets so); the C
profile vmlinux.profraw with clang's (KPGO_C_LLVM_BIN).

Rust functions are named in a profile by their v0-mangled symbol
(`_RNv...`), with the `<crate>.<hash>-cgu.<n>;` prefix of a local
function, as llvm-profdata shows them; the checks name them demangled
(llvm-cxxfilt-19 knows v0), e.g. `<pgo_test_rust::Six as
pgo_test_rust::Op>::apply`.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

from judge import LLVM, check_console, guest_run
from profile_summary import summarize

checks, results, console = guest_run(sys.argv[1], sys.argv[2])
check = checks.check
modules = Path(sys.argv[3])
tree = Path(sys.argv[4])
config = (tree / ".config").read_text()


def config_value(name):
    m = re.search(rf"^{name}=(\S+)$", config, re.M)
    return m.group(1) if m else None


apart = config_value("CONFIG_PGO_CLANG_RUST_APART") == "y"
# vmlinux's Rust functions: in their own profile when apart.
VMLINUX = "vmlinux-rust" if apart else "vmlinux"


def raw_version(name):
    """The raw version of a profile (the low half of its version word)."""
    data = results.bytes(name)
    return int.from_bytes(data[8:12], "little") if len(data) >= 16 else None


def demangle(names):
    """{mangled: demangled} for the Rust (v0) names among `names`."""
    rust = sorted(n for n in names if n.startswith("_R"))
    out = subprocess.run([f"{LLVM}/llvm-cxxfilt"], input="\n".join(rust) + "\n",
                         check=True, capture_output=True, text=True).stdout
    return dict(zip(rust, out.splitlines()))


def rust_profile(name):
    """{demangled: Function} of the Rust functions of a raw profile, the
    call targets demangled too."""
    try:
        functions = summarize(results / name)
    except Exception as error:  # llvm-profdata refused it
        check(f"{name} is accepted by llvm-profdata", False, str(error))
        return {}
    names = set(functions)
    for f in functions.values():
        names.update(f.targets)
    plain = demangle(names)
    rust = {}
    for mangled, f in functions.items():
        if mangled in plain:
            f.targets = {plain.get(t, t): c for t, c in f.targets.items()}
            rust[plain[mangled]] = f
    return rust


# The module link merges the per-function COMDAT sections of a Rust module
# as of a C one.
ko = modules / "pgo_test_rust.ko"
sections = subprocess.run([f"{LLVM}/llvm-readelf", "-S", "--wide", str(ko)],
                          check=True, capture_output=True, text=True).stdout
found = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)", sections, re.M)
for kind in ("data", "cnts", "names", "vals", "vnds"):
    n = sum(1 for name, _ in found if name == f"__llvm_prf_{kind}")
    check(f"{ko.name} has one __llvm_prf_{kind} section (has {n})", n == 1)
check(f"{ko.name} has no section group left", not any(k == "GROUP" for _, k in found))

# vmlinux: the kernel crate and the built-in Rust sample, with counts;
# kpgo's own crate is not instrumented.
if apart:
    rustc_version = int(config_value("CONFIG_PGO_RUSTC_RAW_VERSION"))
    clang_version = int(config_value("CONFIG_PGO_CLANG_RAW_VERSION"))
    for name, want in (("vmlinux-rust-boot.profraw", rustc_version),
                       ("rust-init.profraw", rustc_version),
                       ("vmlinux-boot.profraw", clang_version)):
        got = raw_version(name)
        check(f"{name} is raw version {want}", got == want, f"version {got}")
    # clang's llvm-profdata reads the C profile; none of its counted
    # functions is Rust.
    c_tools = os.environ["KPGO_C_LLVM_BIN"]
    shown = subprocess.run([f"{c_tools}/llvm-profdata", "show", "--all-functions",
                            "--counts", str(results / "vmlinux-boot.profraw")],
                           capture_output=True, text=True)
    check("vmlinux.profraw is accepted by clang's llvm-profdata", shown.returncode == 0,
          shown.stderr[-300:])
    c_functions = re.findall(r"^  (\S+):\n(?:    .*\n)*?    Block counts: \[(\d+)",
                             shown.stdout, re.M)
    counted_rust = [n for n, first in c_functions if int(first)
                    and re.match(r"^(\S*;)?_R", n)]
    check("vmlinux.profraw holds C functions run at boot and no Rust function",
          len(c_functions) >= 100 and not counted_rust,
          f"{len(c_functions)} functions, Rust ones counted: {counted_rust[:5]}")

boot = rust_profile(f"{VMLINUX}-boot.profraw")
if apart:
    # The live file of the Rust records: the same functions, counted.
    live = rust_profile("live-vmlinux-rust-boot.profraw")
    live_counted = {n for n, f in live.items() if f.counts and f.counts[0]}
    check("live/vmlinux-rust.profraw holds the same Rust functions, counted",
          set(live) == set(boot) and len(live_counted) >= 10,
          f"{len(live)} functions ({len(live_counted)} counted), {len(boot)} in the snapshot")
counted = {n: f for n, f in boot.items() if f.counts and f.counts[0]}


def crate(name):
    """The crate a demangled name's path starts in; impls on primitive
    types (`<[u8]>::...`, `<&i32 as ...>`) are core's."""
    m = re.match(r"^<?([a-z_][a-z0-9_]*)::", name)
    return m.group(1) if m else "core"


by_crate = {}
for name in boot:
    by_crate.setdefault(crate(name), [0, 0])[0] += 1
for name in counted:
    by_crate[crate(name)][1] += 1
print("vmlinux Rust functions by crate (records, run at boot): " +
      ", ".join(f"{c} {n[0]}/{n[1]}" for c, n in sorted(by_crate.items())))
for name in sorted(counted)[:8]:
    print(f"  {counted[name].counts[0]:>8}  {name}")
check(f"{VMLINUX}.profraw holds Rust functions run at boot", len(counted) >= 10,
      f"{len(counted)} of {len(boot)}")
kernel_crate = {n: f for n, f in counted.items() if crate(n) == "kernel"}
check("... among them functions of the kernel crate", len(kernel_crate) >= 1,
      ", ".join(sorted(boot)[:5]))
# kernel::Module is kernel::module::Module in 7.3, its own path.
minimal = boot.get("<rust_minimal::RustMinimal as kernel::module::Module>::init",
                   boot.get("<rust_minimal::RustMinimal as kernel::Module>::init"))
check("the built-in rust_minimal sample's init ran exactly once",
      minimal is not None and minimal.counts[:1] == [1], str(minimal))
check("kpgo's own crate is not instrumented",
      not any(crate(n) == "kpgo" for n in boot),
      ", ".join(n for n in boot if crate(n) == "kpgo")[:200])

# pgo_test_rust: one run, as its source says.
M = "pgo_test_rust"
RUN = {
    f"{M}::leaf": 10,
    "targets": {f"<{M}::Six as {M}::Op>::apply": 6, f"<{M}::Three as {M}::Op>::apply": 3,
                f"<{M}::One as {M}::Op>::apply": 1, f"{M}::double": 3, f"{M}::square": 1},
    "sizes": {3: 2, 8: 1, 64: 1, 65: 2},
}


def runs(name):
    """How many runs the profile shows, if it is exactly k runs."""
    functions = rust_profile(name)
    leaf = functions.get(f"{M}::leaf")
    run = functions.get(f"{M}::run")
    if not leaf or not run:
        return None, f"no {M} functions: {sorted(functions)[:6]}"
    k = leaf.counts[0] // RUN[f"{M}::leaf"] if leaf.counts else 0
    want_targets = {t: c * k for t, c in RUN["targets"].items()} if k else {}
    want_sizes = {s: c * k for s, c in RUN["sizes"].items()} if k else {}
    got_targets = {t: c for t, c in run.targets.items() if c}
    got_sizes = {s: c for s, c in run.sizes.items() if c}
    six = functions.get(f"<{M}::Six as {M}::Op>::apply")
    detail = (f"leaf {leaf.counts}, run {run.counts}, Six::apply "
              f"{six.counts if six else None}, targets {got_targets}, sizes {got_sizes}")
    # Entry counts (the first counter): the other counters of `leaf` and
    # `apply` are their overflow-check panic paths, 0.
    if (leaf.counts[:1] == [k * RUN[f"{M}::leaf"]] and run.counts[:1] == [k]
            and six is not None and six.counts[:1] == [6 * k]
            and got_targets == want_targets and got_sizes == want_sizes):
        return k, detail
    return None, detail


for name, k in [("rust-init", 1), ("rust-4", 4), ("rust-reset", 0), ("rust-2", 2),
                ("rust-kept", 2), ("rust-reload", 3)]:
    got, detail = runs(f"{name}.profraw")
    print(f"{name}: {detail}")
    check(f"{name}: {M}'s profile is exactly {k} run(s)", got == k, detail)
raw = results.bytes("rust-reload.profraw")
check("after reload the file holds two concatenated raw profiles (kept + live)",
      raw.count(bytes.fromhex("8172666f72706cff")) == 2)

# What users see: llvm-profdata show lists the mangled names.
shown = subprocess.run([f"{LLVM}/llvm-profdata", "show", "--all-functions",
                        str(results / "rust-init.profraw")],
                       check=True, capture_output=True, text=True).stdout
leaf_line = next((l.strip() for l in shown.splitlines() if re.search(r"4leaf:$", l)), "")
print(f"llvm-profdata show names the leaf: {leaf_line}")
check("llvm-profdata show lists the Rust functions by their v0 symbol",
      re.match(r"^(\S+;)?_R\S*13pgo_test_rust4leaf:$", leaf_line) is not None, leaf_line)

after = rust_profile(f"{VMLINUX}-after.profraw")
grew = [n for n, f in after.items() if crate(n) == "kernel" and f.counts
        and f.counts[0] > (boot[n].counts[0] if n in boot and boot[n].counts else 0)]
check("kernel crate functions in vmlinux counted the module's calls", len(grew) >= 1)

check("the guest script ran to its last step", results.reached("done"))
check_console(checks, "no kernel warning on the console, and the run ended", console)
sys.exit(checks.summary("rust"))
