#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges what the lifecycle guest scripts took (tests/kernel/lifecycle.sh).

Usage: lifecycle_check.py PART RESULTS CONSOLE GUEST_STATUS
  PART: paths, faults or stress. Prints one line per check and closes with
  "lifecycle-PART: N passed, M failed".

The expectations are those of the kpgo user interface after issue 10
(/work/kpgo-interface.md): profile files 0400 without a write handler,
reset 0200 with `module:<name>`, stats as key=value lines, and the log
lines "kpgo: module <name>: ...; not profiled" and
"kpgo: module <name>: profile not kept (<reason>)".
"""
import collections
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from judge import GUEST_END, REPORTS, Checks, console_reports, read_console
from profile_summary import PROFDATA, Function, summarize

RAW_MAGIC = bytes.fromhex("8172666f72706cff")
# With sampled instrumentation (CONFIG_PGO_CLANG_SAMPLING), vmlinux counts
# only the updates of each CPU's bursts: start_kernel's one run may fall
# outside them (the test modules stay fully instrumented: PGO_SAMPLING
# := n, so their exact counts are checked all the same).
SAMPLED = bool(re.search(r"^CONFIG_PGO_CLANG_SAMPLING=y$",
                         (Path(os.environ["KPGO_TREE"]) / ".config").read_text(), re.M))
checks = Checks()
check = checks.check
MISSING = object()


def read(path, default=MISSING):
    """The text of PATH. A missing file fails the next check, unless a
    DEFAULT is given (for a file the guest writes only sometimes)."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        if default is MISSING:
            checks.missing.append(str(path))
            return ""
        return default


def reached(r, step):
    """Whether the guest script got to STEP (scripts/guest-lib.sh)."""
    return step in read(r / "steps", "").split()


def absent(r, name, step):
    """NAME (a file the guest writes only when something went wrong) is
    absent, and the guest got to STEP, after which it would exist."""
    if not reached(r, step):
        checks.missing.append(f"step {step}")
        return False
    return not (r / name).exists()


# --- kernel log --------------------------------------------------------

def check_console_by_kind(console):
    """One check per kind of report; each fails, too, if the console is
    not that of a whole run (a hang or a panic cuts it short)."""
    whole = GUEST_END.search(console) is not None
    found = console_reports(console)
    for kind in REPORTS:
        lines = found.get(kind, [])
        check(f"no {kind} report on the console of a whole run ({len(lines)})",
              whole and not lines, "; ".join(lines[:3]) if lines else "the run did not end")


_segments = {}


def between(console, start, end):
    """The console lines between the marker lines "lifecycle: NAME start"
    and "lifecycle: NAME end" (START and END are "NAME start" and
    "NAME end"); markers nest."""
    if not _segments:
        open_segments = {}
        for line in console.splitlines():
            m = re.search(r"lifecycle: (.*) (start|end)\b", line)
            if m and m.group(2) == "start":
                open_segments[m.group(1)] = _segments.setdefault(m.group(1), [])
                continue
            if m:
                open_segments.pop(m.group(1), None)
                continue
            for lines in open_segments.values():
                lines.append(line)
    assert start.endswith(" start") and end == start[:-len("start")] + "end"
    return _segments.get(start[:-len(" start")], [])


def not_profiled(lines, name):
    return [l for l in lines if re.search(rf"kpgo: module {re.escape(name)}: .*; not profiled", l)]


def check_kmemleak(results, console):
    report = read(results / "kmemleak", None)
    leaks = re.findall(r"^unreferenced object .*$", report or "", re.M)
    # Injected faults also hit kmemleak's own metadata allocations: it then
    # uses its reserve pool, and turns itself off if that runs out.
    off = [l for l in console.splitlines()
           if re.search(r"kmemleak: .*(disabled|Cannot allocate a kmemleak_object)", l)]
    check(f"kmemleak is clean after two scans ({len(leaks)} unreferenced objects)",
          report is not None and not leaks and not off,
          "; ".join(off[:2]) if off else
          "no kmemleak file" if report is None else (report[:1500]))


# --- profiles ----------------------------------------------------------

@dataclass
class Workload:
    """One run of a test module's known workload."""
    leaf: str
    leaf_calls: int
    run: str
    targets: dict
    sizes: dict


PGO_TEST_A = Workload("pgo_test_a_leaf", 10, "pgo_test_a_run",
                      {"pgo_test_a_six": 6, "pgo_test_a_three": 3, "pgo_test_a_one": 1},
                      {3: 2, 8: 1, 64: 1, 65: 2})
INITFAIL = Workload("pgo_test_initfail_leaf", 4, "pgo_test_initfail_run",
                    {"pgo_test_initfail_three": 3, "pgo_test_initfail_one": 1},
                    {8: 1, 65: 1})


def empty(path):
    return not path.exists() or path.stat().st_size == 0


def profiles_in(path):
    return path.read_bytes().count(RAW_MAGIC) if path.exists() else 0


def functions(path):
    """llvm-profdata's view of PATH, or None if it refuses it."""
    try:
        return summarize(path)
    except (subprocess.CalledProcessError, OSError):
        return None


def runs(path, workload):
    """(k, detail): k if PATH is exactly k runs of WORKLOAD, else None."""
    if empty(path):
        return None, "no profile"
    fns = functions(path)
    if fns is None:
        return None, "refused by llvm-profdata"
    leaf, run = fns.get(workload.leaf), fns.get(workload.run)
    if not leaf or not run:
        return None, f"no {workload.run}"
    k = leaf.counts[0] // workload.leaf_calls if leaf.counts else 0
    got_targets = {t: c for t, c in run.targets.items() if c}
    got_sizes = {s: c for s, c in run.sizes.items() if c}
    detail = f"leaf {leaf.counts}, targets {got_targets}, sizes {got_sizes}"
    if (leaf.counts == [k * workload.leaf_calls]
            and got_targets == {t: c * k for t, c in workload.targets.items() if k}
            and got_sizes == {s: c * k for s, c in workload.sizes.items() if k}):
        return k, detail
    return None, detail


def check_runs(what, path, workload, k):
    got, detail = runs(path, workload)
    check(f"{what}: exactly {k} run(s) of {workload.run}", got == k, detail)


def merge_ok(path):
    return subprocess.run([PROFDATA, "merge", "-o", "/dev/null", str(path)],
                          capture_output=True).returncode == 0


# --- stats (key=value lines) -------------------------------------------

def stats_lines(text):
    """[{key: value}] of the stats file; the first word of a line that
    has no '=' is its 'kind' (the 'runtime' line)."""
    result = []
    for line in text.splitlines():
        fields = {}
        for word in line.split():
            if "=" in word:
                key, value = word.split("=", 1)
                fields[key] = value
            else:
                fields.setdefault("kind", word)
        result.append(fields)
    return result


def stats_object(text, name):
    return [f for f in stats_lines(text) if f.get("object") == name]


def stats_runtime(text):
    return next((f for f in stats_lines(text) if f.get("kind") == "runtime"), {})


# --- parts -------------------------------------------------------------

def paths(r, console):
    # 1. Init that fails.
    check("pgo_test_initfail: 100 loads, each refused by its init",
          read(r / "initfail-loaded").strip() == "0", read(r / "initfail-loaded"))
    check("pgo_test_initfail is not in /proc/modules afterwards",
          read(r / "initfail-in-proc-modules").strip() == "0")
    check_runs("pgo_test_initfail.profraw after 100 failed inits (kept profiles)",
               r / "initfail.profraw", INITFAIL, 100)
    obj = stats_object(read(r / "stats-initfail"), "pgo_test_initfail")
    check("stats: pgo_test_initfail unloaded, its 100 unloads merged into 1 kept profile",
          len(obj) == 1 and obj[0].get("state") == "unloaded"
          and obj[0].get("kept_profiles") == "1" and obj[0].get("kept_unloads") == "100"
          and obj[0].get("lost_profiles") == "0",
          str(obj) or read(r / "stats-initfail")[:300])
    check("pgo_test_initfail.profraw is one raw profile (merged in place)",
          profiles_in(r / "initfail.profraw") == 1, f"{profiles_in(r / 'initfail.profraw')}")

    # 2. Timers, work and async work across unload.
    check("pgo_test_async: 10 loads and unloads", absent(r, "async-errors", "async"),
          read(r / "async-errors", ""))
    after = [int(n) for n in re.findall(r"pgo_test_async: (\d+) workload runs after exit returned",
                                        console)]
    check("pgo_test_async ran instrumented code after its exit function returned, "
          f"at each unload (runs after exit: {after})",
          len(after) == 10 and all(n > 0 for n in after))
    fns = functions(r / "async.profraw")
    work = (fns or {}).get("pgo_test_async_work_once")
    check("pgo_test_async.profraw: accepted, workload counted",
          work is not None and work.counts and work.counts[0] > 0, str(work)[:200])
    check("pgo_test_async.profraw is one raw profile: the 10 unloads merged in place",
          profiles_in(r / "async.profraw") == 1, f"{profiles_in(r / 'async.profraw')} profiles")
    obj = stats_object(read(r / "stats-async"), "pgo_test_async")
    check("stats: pgo_test_async's 10 unloads kept in 1 profile",
          len(obj) == 1 and obj[0].get("kept_unloads") == "10"
          and obj[0].get("kept_profiles") == "1", str(obj))

    # 3a. A module named vmlinux.
    check("a module named vmlinux loads", read(r / "vmlinux-named-insmod").strip() == "0")
    lines = between(console, "vmlinux-named start", "vmlinux-named end")
    check("the module named vmlinux is not profiled, with one log line",
          len(not_profiled(lines, "vmlinux")) == 1, "; ".join(lines[-5:]))
    for name in ("vmlinux-before", "vmlinux-with-module", "vmlinux-after-unload"):
        fns = functions(r / f"{name}.profraw")
        start = (fns or {}).get("start_kernel")
        ran = "is in it, sampled" if SAMPLED else "ran once"
        check(f"{name}.profraw is vmlinux's profile (start_kernel {ran}) without "
              "the module's functions",
              start is not None and (SAMPLED or start.counts[:1] == [1])
              and "pgo_test_a_leaf" not in fns,
              "refused" if fns is None else f"start_kernel {start}")
    check("stats: one vmlinux line, live",
          [o.get("state") for o in stats_object(read(r / "stats-vmlinux-named"), "vmlinux")]
          == ["live"], read(r / "stats-vmlinux-named")[:300])

    # 3b. Two .ko files, one name.
    check_runs("pgo_same (pgo_test_a's code) after unload", r / "same-kept.profraw", PGO_TEST_A, 3)
    for name in ("same-both", "same-both-unloaded"):
        path = r / f"{name}.profraw"
        check_runs(f"{name}: the first .ko's kept profile", path, PGO_TEST_A, 3)
        b = (functions(path) or {}).get("pgo_test_b_run")
        check(f"{name}: the second .ko (pgo_test_b's code) ran once",
              b is not None and b.counts[:1] == [1], str(b)[:200])
        check(f"{name}: kept profile then live one (2 raw profiles)", profiles_in(path) == 2,
              f"{profiles_in(path)}")
    check("stats: one pgo_same line",
          len(stats_object(read(r / "stats-same"), "pgo_same")) == 1, read(r / "stats-same")[:300])

    # 3c. A module named all.
    check("echo module:all >reset is accepted", read(r / "reset-module-all").strip() == "0")
    check_runs("all.profraw after module:all", r / "all-after-reset.profraw", PGO_TEST_A, 0)
    check_runs("pgo_test_a.profraw after module:all (untouched)",
               r / "a-after-reset-module-all.profraw", PGO_TEST_A, 1)
    check("echo module:pgo_test_a >reset is accepted", read(r / "reset-module-a").strip() == "0")
    check_runs("pgo_test_a.profraw after module:pgo_test_a", r / "a-after-reset-module-a.profraw",
               PGO_TEST_A, 0)
    check("module:<unknown> and module: (empty) are refused",
          read(r / "reset-module-unknown").strip() not in ("", "0")
          and read(r / "reset-module-empty").strip() not in ("", "0"))

    # 4. Corrupted Values pointer.
    lines = between(console, "corrupt start", "corrupt end")
    check("the module with a corrupted Values pointer is refused with one log line",
          len(not_profiled(lines, "pgo_test_corrupt")) == 1, "; ".join(lines[-5:]))
    views = [read(r / f"corrupt-target-{when}") for when in ("loaded", "ran", "reset")]
    check("the memory the corrupted pointer aims at is unchanged after load, "
          "10 runs of its value sites and a reset of all",
          all(v.rstrip().endswith("intact") for v in views) and len(set(views)) == 1,
          " | ".join(v.replace("\n", " ") for v in views))
    check("no profile file for the refused module (nothing written)",
          absent(r, "corrupt.profraw", "corrupt")
          and "pgo_test_corrupt.profraw" not in read(r / "ls-corrupt"), read(r / "ls-corrupt"))
    stats = read(r / "stats-corrupt")
    check("stats counts the refusal (modules_refused >= 1), no live pgo_test_corrupt",
          int(stats_runtime(stats).get("modules_refused", "0")) >= 1
          and not any(o.get("state") == "live" for o in stats_object(stats, "pgo_test_corrupt")),
          stats[:300])
    check("the intact pgo_test_corrupt.ko is profiled, its target untouched",
          read(r / "control-target-ran").rstrip().endswith("intact"))
    victim = (functions(r / "control.profraw") or {}).get("pgo_test_corrupt_victim")
    check("the intact module's profile: one raw profile (nothing kept from the refused "
          "load), the victim's 10 indirect calls and 10 copies",
          victim is not None and profiles_in(r / "control.profraw") == 1
          and sum(victim.targets.values()) == 10 and sum(victim.sizes.values()) == 10,
          f"{profiles_in(r / 'control.profraw')} profiles, {victim}")
    lines = between(console, "corrupt-cnts start", "corrupt-cnts end")
    check("a CounterPtr outside __llvm_prf_cnts is refused with one log line, no file",
          len(not_profiled(lines, "pgo_corrupt_cnts")) == 1
          and "pgo_corrupt_cnts.profraw" not in read(r / "ls-corrupt-cnts"),
          "; ".join(lines[-5:]))
    lines = between(console, "corrupt-vnds start", "corrupt-vnds end")
    refusal = [line for line in not_profiled(lines, "pgo_corrupt_vnds")
               if "value nodes not in the module's writable data" in line]
    check("a value-node pool without SHF_WRITE is refused with one log line naming it, "
          "no file, and the module's value sites run", len(refusal) == 1
          and "pgo_corrupt_vnds.profraw" not in read(r / "ls-corrupt-vnds")
          and r.joinpath("corrupt-vnds-ran").exists() and reached(r, "corrupt-vnds"),
          "; ".join(lines[-5:]))
    lines = between(console, "corrupt-far start", "corrupt-far end")
    check("a Values pointer 1 MiB outside __llvm_prf_vals is refused with one log line, "
          "no file", len(not_profiled(lines, "pgo_corrupt_far")) == 1
          and "pgo_corrupt_far.profraw" not in read(r / "ls-corrupt-far"),
          "; ".join(lines[-5:]))

    # 4c. Kprobes.
    probes = read(r / "kprobes").split("control\n")
    hooks = [line.split() for line in probes[0].splitlines()]
    control = probes[1].split() if len(probes) == 2 else []
    rust = [h[0] for h in hooks if h[0].startswith("_R")]
    check("kprobe_events refuses the hooks, kpgo_hook_enter/exit and the Rust functions "
          f"they call ({len(rust)} found in /proc/kallsyms), each on kprobes' blacklist",
          len(hooks) >= 5 and bool(rust)
          and all(h[1:] == ["1", "listed"] for h in hooks),
          "; ".join(" ".join(h) for h in hooks))
    check("... a test that can fail: it accepts kpgo_cond_resched, off the hooks' path "
          "and off the blacklist", control == ["kpgo_cond_resched", "0", "unlisted"],
          str(control))

    check_kmemleak(r, console)
    check_console_by_kind(console)


def attempt_line(text):
    m = re.search(r"nth=(\d+) op=([\w-]+) result=(-?\d+) fired=(\d) name=(\w+)", text)
    return (int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), m.group(5)) \
        if m else None


def loaded_set(r, phase, op):
    """The attempts (numbers) of OP after which the module was loaded."""
    result = set()
    for line in read(r / phase / "loaded", "").split():
        name, _, number = line.rpartition("-")
        if name == op and number.isdigit():
            result.add(int(number))
    return result


def kpgo_faults_in(lines):
    """Injected faults in LINES, and those whose stack goes through kpgo."""
    dumps = "\n".join(lines).split("FAULT_INJECTION: forcing a failure")[1:]
    return len(dumps), sum("4kpgo" in d for d in dumps)


def judge_attempt(r, console, phase, op, nth, loaded, name, tag):
    """What is wrong after attempt NTH (marker TAG), or None."""
    lines = between(console, f"{tag} start", f"{tag} end")
    path = r / phase / f"{op}-{nth}.profraw"
    refused = not_profiled(lines, name)
    not_kept = [l for l in lines if f"kpgo: module {name}: profile not kept (" in l]
    k, detail = runs(path, PGO_TEST_A)
    blamed = [l for l in not_kept if "KEPT_PROFILES_KB" in l or "reached" in l]
    if blamed:
        return f"{tag}: an allocation failure blamed on the bound: {blamed[0].strip()}"
    if op == "unload":
        if k != 1 and not (empty(path) and not_kept):
            return f"{tag}: {detail}, 'profile not kept' logged: {bool(not_kept)}"
    elif loaded:
        # Cleanly not profiled: no file, or an empty one and a logged refusal.
        if k != 1 and path.exists() and not (empty(path) and refused):
            return f"{tag} (loaded): {detail}, refusal logged: {bool(refused)}"
    elif not empty(path) and k != 0:
        return f"{tag} (not loaded): {detail}"
    return None


def fault_phase(r, console, phase, op):
    """Judges the fail-nth attempts of PHASE, operation OP."""
    attempts = [a for a in map(attempt_line, read(r / phase / "attempts").splitlines())
                if a and a[1] == ("load-as" if op == "load-new" else op)]
    loaded = loaded_set(r, phase, op)
    fired = [a for a in attempts if a[3]]
    last = attempts[-1] if attempts else None
    check(f"{phase} {op}: N = 1, 2, ... until it succeeds with nothing injected "
          f"({len(attempts)} attempts, {len(fired)} faults injected)",
          last is not None and last[2] == 0 and last[3] == 0, str(last))
    check(f"{phase} {op}: every attempt either injected its fault or succeeded",
          absent(r, f"{phase}/anomalies", f"{phase}-{op}"),
          read(r / phase / "anomalies", "")[:300])
    bad, kpgo_faults, printed = [], 0, 0
    for nth, _, _, _, name in attempts:
        tag = f"fault {phase} {op} nth={nth}"
        n, in_kpgo = kpgo_faults_in(between(console, f"{tag} start", f"{tag} end"))
        printed += n
        kpgo_faults += in_kpgo
        problem = judge_attempt(r, console, phase, op, nth, nth in loaded, name, tag)
        if problem:
            bad.append(problem)
    check(f"{phase} {op}: after each attempt the module is profiled exactly, cleanly not "
          f"profiled, or not loaded ({len(attempts)} attempts, {len(bad)} bad)",
          attempts and not bad, "; ".join(bad[:4]))
    print(f"{phase} {op}: {len(attempts)} nth values, {len(fired)} faults injected "
          f"({printed} reported with a stack, {kpgo_faults} of them with kpgo on it), "
          f"{len(loaded)} attempts left the module loaded")
    return len(attempts), kpgo_faults


def naming_read_phase(r, console):
    """D: fail-nth over reads of pgo_test_callees' profile (3 runs), which
    names vmlinux's int_sqrt."""
    attempts = [a for a in map(attempt_line, read(r / "D" / "attempts", "").splitlines())
                if a and a[1] == "read"]
    fired = [a for a in attempts if a[3]]
    last = attempts[-1] if attempts else None
    check(f"D read: N = 1, 2, ... until a read succeeds with nothing injected "
          f"({len(attempts)} attempts, {len(fired)} faults injected)",
          last is not None and last[2] == 0 and last[3] == 0, str(last))
    check("D read: every attempt either injected its fault or succeeded",
          absent(r, "D/anomalies", "D"), read(r / "D" / "anomalies", "")[:300])
    named = {"int_sqrt": 5 * 3, "": 3 * 3}  # memcpy is not instrumented

    def judge_reads(what, reads):
        """READS: (tag, result, profile path). Each read fails with
        ENOMEM or gives the 3 runs, int_sqrt named or nothing named."""
        bad, failed, unnamed, faulted = [], 0, 0, 0
        sizes = collections.Counter()
        for tag, result, path in reads:
            faulted += kpgo_faults_in(between(console, f"{tag} start", f"{tag} end"))[1]
            if result:
                failed += 1
                if result != -12:
                    bad.append(f"{tag}: failed with {result}, not -ENOMEM")
                continue
            fns = functions(path)
            run = fns.get("pgo_test_callees_run") if fns else None
            got = {t: c for t, c in run.targets.items() if c} if run else None
            if got == {"": sum(named.values())}:
                unnamed += 1
            elif got != named:
                bad.append(f"{tag}: {got}")
            sizes[path.stat().st_size if path.exists() else 0] += 1
        check(f"D {what}: each read failed with ENOMEM or gave the 3 runs, int_sqrt named "
              f"or nothing named ({len(reads)} reads: {failed} failed, {unnamed} named "
              f"nothing, {len(bad)} bad; profile bytes {dict(sizes)}; {faulted} faults "
              "with kpgo on the stack)", reads and not bad, "; ".join(bad[:4]))
        return faulted

    probable = []
    for line in read(r / "D" / "attempts-p", "").splitlines():
        m = re.search(r"result=(-?\d+) .* i=(\d+)", line)
        if m:
            i = m.group(2)
            probable.append((f"fault D read-p i={i}", int(m.group(1)),
                             r / "D" / f"read-p-{i}.profraw"))
    check("D read, 30% of kpgo's allocations failing: 30 reads ran",
          len(probable) == 30, f"{len(probable)} reads")
    faulted = judge_reads("read, 30% failing", probable)
    check("D read, 30% failing: faults reached kpgo's allocations", faulted > 0, str(faulted))
    kpgo_faults = judge_reads("read, fail-nth", [
        (f"fault D read nth={nth}", result, r / "D" / f"read-{nth}.profraw")
        for nth, _, result, _, _ in attempts])
    final = functions(r / "D" / f"read-{last[0]}.profraw") if last else None
    run = final.get("pgo_test_callees_run") if final else None
    check("D read: the read with nothing injected names int_sqrt",
          run is not None and {t: c for t, c in run.targets.items() if c} == named,
          str(run.targets if run else None))
    runtime = stats_runtime(read(r / "stats-D", ""))
    vmlinux = (stats_object(read(r / "stats-D", ""), "vmlinux") or [{}])[0]
    check("D read: kpgo's allocations were reached and failed, and the index of vmlinux's "
          f"names was built in the end ({kpgo_faults} faults with kpgo on the stack, "
          f"{runtime.get('name_index_bytes')} bytes)",
          kpgo_faults > 0 and runtime.get("name_index_bytes") is not None
          and int(runtime["name_index_bytes"]) == 4 * int(vmlinux.get("functions", -1)),
          str(runtime))


def faults(r, console):
    fault_phase(r, console, "A", "load")
    _, kpgo_new = fault_phase(r, console, "B", "load-new")
    _, kpgo_load = fault_phase(r, console, "B", "load")
    _, kpgo_unload = fault_phase(r, console, "B", "unload")
    check("B: kpgo's own allocations were reached and failed at first load, at a later "
          f"load and at unload ({kpgo_new}, {kpgo_load} and {kpgo_unload} faults with kpgo "
          "on the stack)", kpgo_new > 0 and kpgo_load > 0 and kpgo_unload > 0)
    # C: several faults per load.
    loaded = loaded_set(r, "C", "load-new")
    bad, printed, in_kpgo = [], 0, 0
    for i in range(1, 31):
        tag = f"fault C load-new i={i}"
        n, k = kpgo_faults_in(between(console, f"{tag} start", f"{tag} end"))
        printed, in_kpgo = printed + n, in_kpgo + k
        problem = judge_attempt(r, console, "C", "load-new", i, i in loaded, f"pgo_c_{i}", tag)
        if problem:
            bad.append(problem)
    print(f"C: 30 loads, {printed} faults injected, {in_kpgo} with kpgo on the stack, "
          f"{len(loaded)} loaded")
    check(f"C: 30 loads with 30% of kpgo's allocations failing: each profiled exactly or "
          f"cleanly not ({len(bad)} bad)", reached(r, "C") and printed > 0 and not bad,
          "; ".join(bad[:4]))
    naming_read_phase(r, console)
    check_runs("a normal load afterwards", r / "final-1.profraw", PGO_TEST_A, 1)
    check_runs("the same after 2 more runs", r / "final-3.profraw", PGO_TEST_A, 3)
    check_runs("its kept profile after unload", r / "final-kept.profraw", PGO_TEST_A, 3)
    check_kmemleak(r, console)
    check_console_by_kind(console)


def stress(r, console, seconds_wanted):
    counts = dict(l.split("=", 1) for l in read(r / "counts").split() if "=" in l)
    total = lambda prefix: sum(int(v) for k, v in counts.items() if k.startswith(prefix))
    seconds = int(read(r / "stress-seconds", "0").strip() or 0)
    loads = {k.split(".", 1)[1]: int(v) for k, v in counts.items() if k.startswith("loads.")}
    failed_loads = total("failed-loads.")
    print(f"stress: {seconds} s on 2 CPUs; loads {loads} (+{failed_loads} failed inits), "
          f"unloads {total('unloads.')}, profile reads {total('reads.')} "
          f"(+{total('failed-reads.')} failed), stats reads {total('stats-reads.')}, "
          f"resets {total('resets')} (+{total('refused-resets')} refused), "
          f"profraw writes refused {total('refused-profraw-writes')}, "
          f"accepted {total('accepted-profraw-writes')}, pgo_test_a runs "
          f"{total('runs.pgo_test_a')}, syscall rounds {total('syscall-bench')} + "
          f"{total('getpid-loops')} x 5000 getpid")
    check(f"the storm lasted at least {seconds_wanted} s ({seconds} s)", seconds >= seconds_wanted)
    check("insmod/rmmod loops of at least 3 instrumented modules ran",
          sum(1 for v in loads.values() if v > 0) + (failed_loads > 0) >= 3, str(counts))
    check("readers, resets and the syscall workload ran",
          total("reads.") > 0 and total("stats-reads.") > 0 and total("resets") > 0
          and total("syscall-bench") > 0)
    check("every write to a .profraw file was refused (0400, no write handler)",
          total("accepted-profraw-writes") == 0 and total("refused-profraw-writes") > 0,
          f"{total('accepted-profraw-writes')} accepted")
    ls = read(r / "ls-stress")
    modes = re.findall(r"^(\S+) .* (\S+)$", ls, re.M)
    wrong = [f"{mode} {name}" for mode, name in modes
             if (name.endswith(".profraw") or name == "stats") and mode != "-r--------"
             or name == "reset" and mode != "--w-------"]
    check("modes: .profraw and stats 0400, reset 0200", modes and not wrong, "; ".join(wrong[:4]))
    dumps = sorted((r / "dumps").glob("*.profraw")) if (r / "dumps").exists() else []
    nonempty = [d for d in dumps if d.stat().st_size]
    refused = [d.name for d in nonempty if not merge_ok(d)]
    check(f"every dump kept is accepted by llvm-profdata merge ({len(nonempty)} dumps, "
          f"{len(dumps) - len(nonempty)} empty, {sum(d.stat().st_size for d in dumps) >> 20} MiB)",
          nonempty and not refused, "; ".join(refused[:5]))
    check_runs("pgo_test_a after the storm, run while modules load and unload",
               r / "a-after-storm.profraw", PGO_TEST_A, 21)
    backtraces = len(re.findall(r"NMI backtrace for cpu", console))
    triggered = total("sysrq-backtraces")
    after = functions(r / "vmlinux-after-nmi.profraw") or {}
    handler = (after.get("nmi_cpu_backtrace_handler") or Function()).counts[:1]
    backtrace = (after.get("nmi_cpu_backtrace") or Function()).counts[:1]
    print(f"stress: {triggered} sysrq-l triggers, {backtraces} NMI backtraces on the console; "
          f"after one more: nmi_cpu_backtrace_handler {handler}, nmi_cpu_backtrace {backtrace}")
    check(f"NMI backtraces of both CPUs ran through the storm ({triggered} triggers, "
          f"{backtraces} backtraces)", triggered >= seconds_wanted // 2
          and backtraces >= triggered)
    check("... instrumented code ran in NMI context: the NMI handler "
          "nmi_cpu_backtrace_handler and nmi_cpu_backtrace are counted after a trigger",
          handler[:1] and handler[0] >= 1 and backtrace[:1] and backtrace[0] >= 2,
          f"{handler}, {backtrace}")
    check_kmemleak(r, console)
    check_console_by_kind(console)


def main():
    part, results, console_path, status = sys.argv[1:5]
    r = Path(results)
    console = read_console(console_path, checks)
    check(f"guest completed and its script ran to the end (status {status})",
          status == "0" and (r / "guest-status").exists() and reached(r, "done"))
    if part == "paths":
        paths(r, console)
    elif part == "faults":
        faults(r, console)
    elif part == "stress":
        stress(r, console, int(sys.argv[5]) if len(sys.argv) > 5 else 180)
    else:
        raise SystemExit(f"unknown part {part}")
    return checks.summary(f"lifecycle-{part}")


if __name__ == "__main__":
    sys.exit(main())
