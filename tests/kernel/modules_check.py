#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges the test modules and the profiles modules.guest.sh took.

Arguments: the results folder, the guest console log, the module build
folder, the kernel tree the modules were built against.
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from judge import LLVM, check_console, guest_run
from profile_summary import Function, summarize

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from icp_remarks import allows_decls, remarks  # noqa: E402
from raw_profile import name_ref, names_chunks, parse  # noqa: E402

checks, results, console = guest_run(sys.argv[1], sys.argv[2])
check = checks.check
modules = Path(sys.argv[3])
tree = Path(sys.argv[4])
# With sampled instrumentation (CONFIG_PGO_CLANG_SAMPLING), vmlinux counts
# about one update in PERIOD/BURST: checks of its exact counts cannot
# hold (the test modules stay fully instrumented: PGO_SAMPLING := n).
SAMPLED = "vmlinux is sampled" if re.search(
    r"^CONFIG_PGO_CLANG_SAMPLING=y$", (tree / ".config").read_text(), re.M) else ""
# compiler-rt's ValueProfNode: {u64 Value, u64 Count, ValueProfNode *Next}.
VALUE_NODE_BYTES = 24


def profile(name):
    try:
        return summarize(results / name)
    except Exception as error:  # llvm-profdata refused it, or it is missing
        check(f"{name} is accepted by llvm-profdata", False, str(error))
        return {}


def section_sizes(ko):
    """{name: size} of the sections of KO, and the section types."""
    text = subprocess.run(
        [f"{LLVM}/llvm-readelf", "-S", "--wide", str(ko)],
        check=True, capture_output=True, text=True).stdout
    rows = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)",
                      text, re.M)
    return rows


# The module link merges the per-function COMDAT sections: one section of
# each kind, no section group left.
for ko in sorted(modules.glob("*.ko")):
    names = [(name, kind) for name, kind, _ in section_sizes(ko)]
    for kind in ("data", "cnts", "names", "vals", "vnds"):
        n = sum(1 for name, _ in names if name == f"__llvm_prf_{kind}")
        check(f"{ko.name} has one __llvm_prf_{kind} section (has {n})", n == 1)
    check(f"{ko.name} has no section group left",
          not any(kind == "GROUP" for _, kind in names))

# One run of pgo_test_a, as its source says.
RUN = {
    "pgo_test_a_leaf": 10,
    "targets": {"pgo_test_a_six": 6, "pgo_test_a_three": 3, "pgo_test_a_one": 1},
    "sizes": {3: 2, 8: 1, 64: 1, 65: 2},
}


def runs_of_a(name):
    """How many runs the profile shows, if it is exactly k runs."""
    functions = profile(name)
    leaf = functions.get("pgo_test_a_leaf")
    run = functions.get("pgo_test_a_run")
    if not leaf or not run:
        return None, "no pgo_test_a functions"
    k = leaf.counts[0] // RUN["pgo_test_a_leaf"] if leaf.counts else 0
    want_targets = {t: c * k for t, c in RUN["targets"].items()}
    want_sizes = {s: c * k for s, c in RUN["sizes"].items()}
    got_targets = {t: c for t, c in run.targets.items() if c}
    got_sizes = {s: c for s, c in run.sizes.items() if c}
    if k == 0:
        want_targets, want_sizes = {}, {}
    detail = f"leaf {leaf.counts}, targets {got_targets}, sizes {got_sizes}"
    if (leaf.counts == [k * RUN["pgo_test_a_leaf"]] and got_targets == want_targets
            and got_sizes == want_sizes):
        return k, detail
    return None, detail


for name, k in [("a-init", 1), ("a-reset", 0), ("a-3", 3), ("a-3-after-b", 3),
                ("a-3-after-reset-b", 3), ("a-open-across-rmmod", 3),
                ("a-kept", 3), ("a-reload", 4)]:
    got, detail = runs_of_a(f"{name}.profraw")
    check(f"{name}: pgo_test_a's profile is exactly {k} run(s)", got == k, detail)



def stats(name):
    """{object: {key: value}} of a stats file, the runtime under "runtime"."""
    figures = {}
    for line in results.text(name).splitlines():
        words = line.split()
        pairs = dict(w.split("=", 1) for w in words if "=" in w)
        key = "runtime" if words and words[0] == "runtime" else pairs.get("object")
        figures[key] = {k: int(v) if v.isdigit() else v for k, v in pairs.items()}
    return figures


stats_b = stats("stats-b")
b_line, a_line, v_line = (stats_b.get(o, {}) for o in ("pgo_test_b", "pgo_test_a", "vmlinux"))
print(f"stats: {b_line}\nstats: {a_line}\nstats: {v_line}")
# The pool the compiler gave pgo_test_b, from its .ko, not from the runtime
# under test.
b_vnds = [int(size, 16) for name, _, size in section_sizes(modules / "pgo_test_b.ko")
          if name == "__llvm_prf_vnds"]
b_pool = b_vnds[0] // VALUE_NODE_BYTES if len(b_vnds) == 1 else None
print(f"pgo_test_b.ko: __llvm_prf_vnds {b_vnds} bytes, {b_pool} nodes")
check(f"stats: pgo_test_b's pool is its .ko's __llvm_prf_vnds ({b_pool} nodes)",
      b_pool is not None and b_line.get("value_nodes") == b_pool, str(b_line))
check("pgo_test_b exhausted its own pool: stats shows dropped values",
      b_pool is not None and b_line.get("values_dropped", 0) > 0
      and b_line.get("value_nodes_used") == b_pool, str(b_line))
check("pgo_test_a and vmlinux dropped nothing meanwhile",
      a_line.get("values_dropped") == 0 and v_line.get("values_dropped") == 0,
      f"{a_line} / {v_line}")
runtime_b = stats_b.get("runtime", {})
# vmlinux, its Rust records where they are apart (rustc writes another raw
# version than clang), the two modules.
apart = "CONFIG_PGO_CLANG_RUST_APART=y" in (tree / ".config").read_text().splitlines()
check("stats: two modules live, profiled and described once each, the map in use",
      runtime_b.get("modules_live") == 2 and runtime_b.get("modules_profiled") == 2
      and runtime_b.get("descriptors") == 2 and runtime_b.get("modules_refused") == 0
      and runtime_b.get("map_tables", 0) >= 1 and runtime_b.get("entries") == 3 + apart,
      str(runtime_b))

b = profile("b.profraw").get("pgo_test_b_run")
check("pgo_test_b's profile holds exactly the values its pool could take",
      b is not None and b_pool is not None and len(b.sizes) == b_pool, str(b))
b_reset = profile("b-reset.profraw").get("pgo_test_b_run")
check("reset by name zeroed pgo_test_b", b_reset is not None
      and not any(b_reset.counts) and not any(b_reset.sizes.values()), str(b_reset))
vmlinux = profile("vmlinux-after-reset-b.profraw")
checks.check_unless(SAMPLED, "reset by name left vmlinux untouched (load_module counted)",
      vmlinux.get("load_module") is not None and any(vmlinux["load_module"].counts))
check("unknown module names are refused, in both syntaxes",
      results.absent("unknown-module-accepted", "unknown-resets"),
      results.optional("unknown-module-accepted") or "")
got, detail = runs_of_a("a-3-after-refused.profraw")
check("refused reset commands changed nothing (pgo_test_a still 3 runs)", got == 3, detail)
check("writing to a module's profraw file is refused",
      results.absent("a-profraw-write-accepted", "a-write-reset"))

everything = profile("all.profraw")
check("cat pgo/*.profraw merges into one profile with vmlinux and module functions",
      "start_kernel" in everything and "pgo_test_a_leaf" in everything
      and "pgo_test_b_run" in everything)

unloaded = stats("stats-unloaded").get("pgo_test_a", {})
check("stats shows pgo_test_a unloaded with its kept profile and its last figures",
      unloaded.get("state") == "unloaded" and unloaded.get("kept_profiles") == 1
      and unloaded.get("kept_unloads") == 1 and unloaded.get("kept_bytes", 0) > 0
      and unloaded.get("functions", 0) > 0, str(unloaded))
reloaded = stats("stats-reloaded").get("pgo_test_a", {})
check("stats shows pgo_test_a live again with its kept profile",
      reloaded.get("state") == "live" and reloaded.get("kept_profiles") == 1, str(reloaded))
a_raw = results.bytes("a-reload.profraw")
check("after reload the file holds two concatenated raw profiles",
      a_raw.count(bytes.fromhex("8172666f72706cff")) == 2)
after_reset_all = results / "a-after-reset-all.profraw"
check("reset all frees the kept profile of an unloaded module",
      after_reset_all.exists() and after_reset_all.stat().st_size == 0)
ls = results.text("ls-loaded")
check("module profile files are root-only and read only (0400)",
      re.search(r"^-r-------- .* pgo_test_a\.profraw$", ls, re.M) is not None, ls)

# Modules named "all" and "1", reset by module:<name>.
for name, k in [("all-init", 1), ("all-after-reset-all-module", 0),
                ("1-after-reset-all-module", 1), ("1-after-reset-1-module", 0)]:
    got, detail = runs_of_a(f"{name}.profraw")
    check(f"{name}: exactly {k} run(s)", got == k, detail)
vmlinux = profile("vmlinux-after-reset-all-module.profraw")
checks.check_unless(SAMPLED, "module:all left vmlinux untouched (load_module counted)",
                    vmlinux.get("load_module") is not None
                    and any(vmlinux["load_module"].counts))
keywords = stats("stats-keywords")
check("modules named all and 1 each have their own live entry",
      keywords.get("all", {}).get("state") == "live"
      and keywords.get("1", {}).get("state") == "live", str(list(keywords)))
end = stats("stats-end")
runtime = end.get("runtime", {})
loads = 2 + 16 + 2  # A twice, B 1 + 15 times, all and 1
check(f"stats at the end: {loads} loads profiled, none refused, none live, every "
      "descriptor freed (the guest waits up to 10 s for the grace periods)",
      runtime.get("modules_profiled") == loads and runtime.get("modules_refused") == 0
      and runtime.get("modules_live") == 0 and runtime.get("descriptors") == 0
      and runtime.get("descriptor_bytes") == 0, str(runtime))
check("no module was refused on the console",
      "not profiled" not in console, "")



def ic_targets(paths, function):
    """{target: count} of the indirect calls of FUNCTION in the merge of
    PATHS (an unnamed target is ""), and llvm-profdata's warnings."""
    warnings = []
    try:
        functions = summarize(*[results / p for p in paths], warnings=warnings)
    except Exception as error:  # refused
        return {}, str(error)
    return functions.get(function, Function()).targets, "".join(warnings)


# Indirect calls across objects, 7 reads (pgo_test_callees.c): each raw
# profile names the other object's functions its calls reached.
READS = 7
for paths, what in [(["callees-vmlinux.profraw"], "vmlinux's profile alone"),
                    (["callees-vmlinux.profraw", "callees-module.profraw"], "the merge")]:
    got, said = ic_targets(paths, "full_proxy_read")
    checks.check_unless(
        SAMPLED, f"{what}: vmlinux's debugfs proxy called the module's read function exactly "
        f"{READS} times, named", got.get("pgo_test_callees_read") == READS and not said,
        f"{got} {said}")
for paths, what in [(["callees-module.profraw"], "the module's profile alone"),
                    (["callees-vmlinux.profraw", "callees-module.profraw"], "the merge")]:
    got, said = ic_targets(paths, "pgo_test_callees_run")
    check(f"{what}: the module called vmlinux's int_sqrt exactly {5 * READS} times, named, "
          f"and memcpy (not instrumented) {3 * READS} times, unnamed",
          got == {"int_sqrt": 5 * READS, "": 3 * READS} and not said, f"{got} {said}")
module = profile("callees-module.profraw")
check("a callee record adds no count: int_sqrt has none in the module's profile",
      "int_sqrt" in module and not any(module["int_sqrt"].counts), str(module.get("int_sqrt")))
got, said = ic_targets(["callees-vmlinux.profraw"], "do_one_initcall")
# Since the reset: the module's init function only (module_init()'s
# alias names it); older targets stay listed with no count.
called = {name: count for name, count in got.items() if count}
checks.check_unless(
    SAMPLED, "vmlinux's do_one_initcall called the module's init function once, named after "
    "its init text was freed", called == {"init_module": 1} and not said, f"{called} {said}")
named = stats("stats-callees")
index_bytes = named.get("runtime", {}).get("name_index_bytes")
check("the module's profile named a function of vmlinux: the index of vmlinux's names "
      "has 4 bytes per vmlinux function",
      index_bytes == 4 * named.get("vmlinux", {}).get("functions", -1),
      f"{index_bytes} bytes, {named.get('vmlinux', {}).get('functions')} functions")
got, said = ic_targets(["callees-vmlinux-unloaded.profraw"], "full_proxy_read")
checks.check_unless(
    SAMPLED, f"after the module's unload, vmlinux's profile alone still names its read "
    f"function ({READS} calls), from the kept profile",
    got.get("pgo_test_callees_read") == READS and not said, f"{got} {said}")
got, said = ic_targets(["callees-module-unloaded.profraw"], "pgo_test_callees_run")
check("the module's kept profile names vmlinux's int_sqrt",
      got == {"int_sqrt": 5 * READS, "": 3 * READS} and not said, f"{got} {said}")
got, said = ic_targets(["callees-vmlinux-unloaded.profraw", "callees-module-unloaded.profraw"],
                       "full_proxy_read")
checks.check_unless(SAMPLED, "and the merge of both, read after the unload",
                    got.get("pgo_test_callees_read") == READS and not said, f"{got} {said}")



def names_section(elf):
    """The bytes of ELF's __llvm_prf_names."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "names"
        subprocess.run([f"{LLVM}/llvm-objcopy", f"--dump-section=__llvm_prf_names={out}",
                        str(elf), str(Path(work) / "copy")], check=True, capture_output=True)
        return out.read_bytes()


def chunk_naming(section, name):
    """The whole chunk of the names section SECTION that holds NAME."""
    return next((chunk for chunk, names in names_chunks(section) if name.encode() in names), None)


# The module's profile carries its own names and, of vmlinux's, exactly the
# chunk that names int_sqrt: not vmlinux's whole names section.
vmlinux_names = names_section(tree / "vmlinux")
chunk = chunk_naming(vmlinux_names, "int_sqrt")
own_names = names_section(modules / "pgo_test_callees.ko")
carried = parse((results / "callees-module.profraw").read_bytes()).names
check(f"the module's profile carries its own names ({len(own_names)} bytes) and the one chunk "
      f"of vmlinux's names that names int_sqrt ({len(chunk or b'')} of {len(vmlinux_names)} "
      "bytes)", chunk is not None and carried == own_names + chunk, f"{len(carried)} bytes")

# What the names are for: indirect-call promotion. The module's profile is
# applied to its source with the flags of its build: clang's remark on the
# site that called int_sqrt names the target by its md5 (0: unnamed). As
# read, the profile names int_sqrt; without its callee record (the same
# profile, that record removed) nothing does. Clang promotes only to a
# function it has the definition of, unless told -icp-allow-decls (clang
# 22 has it, clang 19 not): then the call becomes a direct call to int_sqrt.
def apply_profile(raw, allow_decls, tree):
    """(clang's remark on the int_sqrt site, whether pgo_test_callees.c
    then calls int_sqrt directly), with the raw profile RAW applied, built
    in the kernel tree TREE with its module's flags."""
    source = (modules / "pgo_test_callees.c").read_text().splitlines()
    line = next(i + 1 for i, text in enumerate(source) if "READ_ONCE(pgo_test_callees_sqrt)(" in text)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (work / "p.profraw").write_bytes(raw)
        subprocess.run([f"{LLVM}/llvm-profdata", "merge", "-o", work / "p.profdata",
                        work / "p.profraw"], check=True, capture_output=True)
        try:
            lines, assembly = remarks(tree, modules / ".pgo_test_callees.o.cmd",
                                      work / "p.profdata", allow_decls)
        except subprocess.CalledProcessError as error:
            return f"clang failed: {error.stderr[-300:]}", False
    remark = next((text for text in lines if f"pgo_test_callees.c:{line}:" in text), "")
    direct = re.search(r"^\s*callq?\s+int_sqrt\b", assembly, re.M)
    return remark, bool(direct)


allow_decls = allows_decls()
as_read = parse((results / "callees-module.profraw").read_bytes())
last = as_read.records[-1]
check("the module's profile ends with int_sqrt's callee record, no counts",
      last.name_ref == name_ref(b"int_sqrt") and last.values == 0, str(last))
for raw, what in [((results / "callees-module.profraw").read_bytes(), "as read"),
                  (as_read.without_last_records(1), "without int_sqrt's callee record")]:
    is_named = what == "as read"
    remark, direct = apply_profile(raw, allow_decls, tree)
    if allow_decls and is_named:
        ok = f"Promote indirect call to int_sqrt with count {5 * READS} " in remark and direct
        expected = "becomes a direct call to int_sqrt (-icp-allow-decls)"
    elif is_named:
        ok = f"md5sum {name_ref(b'int_sqrt')} " in remark and not direct
        expected = "names its target int_sqrt (not promoted: clang has only its declaration)"
    else:
        ok = "md5sum 0 " in remark and not direct
        expected = "names no target and is not promoted"
    check(f"the module's profile {what}, applied: the int_sqrt call site {expected}",
          ok, f"{remark!r}, direct call: {direct}")

check("the guest script ran to its last step", results.reached("done"))
check_console(checks, "no kernel warning under the 2-CPU stress, and the run ended", console)
sys.exit(checks.summary("modules"))
