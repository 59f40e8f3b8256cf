#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges what scale.guest.sh and hookbench.guest.sh took (tests/kernel/scale.sh).

Usage: scale_check.py SCALE_OUT BENCH_OUT MODULE_DIR MODULES CYCLES NAMES
Prints one line per check, the figures, and "scale: N passed, M failed".
"""
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from judge import LLVM, Checks, Results, check_console, read_console
from profile_summary import PROFDATA, summarize

RAW_MAGIC = bytes.fromhex("8172666f72706cff")
# Growth of slab + vmalloc memory allowed between the 100th cycle and the
# last, whatever their number: the old runtime grew 4.5 KiB a cycle.
CYCLE_GROWTH_LIMIT_KB = 512
# Descriptors of unloaded modules whose grace period has not ended yet,
# at most, when memory is sampled (call_rcu: normal grace periods).
PENDING = 4
# Resets of the race test (scale.guest.sh).
RACE_ROUNDS = 1000
# Pauses of a reader inside its serialization, and the loads and unloads
# during each (scale.guest.sh's paused step).
PAUSES, PAUSED_CYCLES = 5, 10
# Worst load or unload with readers of every file over the worst without
# (guest instructions, -icount), at most: a coarse bound for what the held
# reader of vmlinux's profile cannot show (readers of module profiles and
# stats, their RCU sections). Not 2: one load or unload in a hundred can
# wait for a slice of the readers' CPU share, up to a tick (4 ms at
# HZ=250), which SCHED_IDLE tasks that read nothing get too (the spinners'
# reference, printed): 2.48 and 2.30 in CI's runs; the runtime before this
# design: 18.8.
LATENCY_LIMIT = 8

checks = Checks()
check = checks.check
scale_out, bench_out, moddir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
modules, cycles, names = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
r = Results(scale_out / "results", checks)
b = Results(bench_out / "results", checks)


def fields(line):
    """{key: int or str} of a line of key=value words."""
    out = {}
    for word in line.split():
        if "=" in word:
            key, value = word.split("=", 1)
            out[key] = int(value) if value.isdigit() else value
    return out


def stats(text):
    """(runtime, {object: fields}) of a stats file."""
    runtime, objects = {}, {}
    for line in text.splitlines():
        if line.startswith("runtime "):
            runtime = fields(line)
        elif line.startswith("object="):
            f = fields(line)
            objects[f["object"]] = f
    return runtime, objects


# --- many modules ------------------------------------------------------

names_of = [f"pgo_s_{i:03d}" for i in range(1, modules + 1)]


def runs_in(path):
    """(k, detail): k if the profile at PATH is exactly k runs of
    pgo_scale_run, else None."""
    try:
        fns = summarize(path)
        raw = path.read_bytes()
    except (subprocess.CalledProcessError, OSError) as error:
        return None, f"refused by llvm-profdata or missing: {error}"
    leaf, run = fns.get("pgo_scale_leaf"), fns.get("pgo_scale_run")
    if not leaf or not run or not leaf.counts:
        return None, "not in the profile"
    k = leaf.counts[0] // 7
    targets = {t: c for t, c in run.targets.items() if c}
    sizes = {s: c for s, c in run.sizes.items() if c}
    detail = f"{raw.count(RAW_MAGIC)} raw profiles, leaf {leaf.counts}, targets {targets}, " \
             f"sizes {sizes}"
    if leaf.counts == [7 * k] and run.counts[:1] == [k] \
            and targets == {"pgo_scale_three": 3 * k, "pgo_scale_two": 2 * k} \
            and sizes == {8: 2 * k, 64: k}:
        return k, detail
    return None, detail


def check_many(phase, k, profiles, what):
    paths = [r / f"many/{phase}/{m}.profraw" for m in names_of]
    with ThreadPoolExecutor(max_workers=4) as pool:
        judged = list(pool.map(runs_in, paths))
    raw = [p.read_bytes().count(RAW_MAGIC) if p.exists() else 0 for p in paths]
    right = [m for m, (runs, _) in zip(names_of, judged) if runs == k]
    bad = [(m, d) for m, (runs, d) in zip(names_of, judged) if runs != k]
    check(f"{what}: every one of the {modules} modules' files holds {profiles} raw "
          f"profile(s) ({sum(1 for n in raw if n == profiles)} do)",
          all(n == profiles for n in raw))
    check(f"{what}: every one of the {modules} modules' profiles is exactly {k} run(s) "
          f"({len(right)} are)", len(right) == modules,
          "; ".join(f"{m}: {d}" for m, d in bad[:3]))


before, _ = stats(r.text("stats-before"))
loaded, loaded_objects = stats(r.text("stats-loaded"))
print(f"stats with {modules} modules loaded: {loaded}")
check(f"{modules} modules loaded at once, all profiled, none refused (stats)",
      loaded.get("modules_live") == modules and loaded.get("modules_refused") == 0
      and loaded.get("modules_profiled", 0) - before.get("modules_profiled", 0) == modules
      and loaded.get("descriptors") == modules, str(loaded))
check(f"... an entry and a live line each ({loaded.get('entries')} entries)",
      all(loaded_objects.get(m, {}).get("state") == "live" for m in names_of)
      and loaded.get("entries") == before.get("entries", 0) + modules)
check(f"... their map: {loaded.get('map_tables')} tables, {loaded.get('map_bytes')} bytes",
      0 < loaded.get("map_tables", 0) <= 512)
check_many("loaded", 1, 1, f"{modules} modules loaded")
unloaded, unloaded_objects = stats(r.text("stats-unloaded"))
check(f"all {modules} unloaded: none live, one kept profile each (stats)",
      unloaded.get("modules_live") == 0
      and all(unloaded_objects.get(m, {}).get("kept_profiles") == 1
              and unloaded_objects[m].get("state") == "unloaded" for m in names_of),
      str(unloaded))
check_many("unloaded", 1, 1, "after their unload")
reloaded, _ = stats(r.text("stats-reloaded"))
check(f"loaded again: {modules} live, {2 * modules} loads profiled in all",
      reloaded.get("modules_live") == modules
      and reloaded.get("modules_profiled", 0) - before.get("modules_profiled", 0)
      == 2 * modules and reloaded.get("modules_refused") == 0, str(reloaded))
check_many("reloaded", 2, 2, "loaded again")
files = r.text("many/files").split()
check(f"one file per module, vmlinux's, reset and stats ({len(files)} files)",
      all(f"{m}.profraw" in files for m in names_of) and "vmlinux.profraw" in files)

# --- memory ------------------------------------------------------------

KPGO_BYTES = ("descriptor_bytes", "map_bytes", "entry_bytes", "kept_bytes")


def samples(name):
    return [fields(line) for line in r.text(name).splitlines() if line.startswith("cycle=")]


def memory_kb(sample):
    return sample.get("slab_kb", 0) + sample.get("vmalloc_kb", 0)


def kpgo_bytes(sample):
    return sum(sample.get(key, 0) for key in KPGO_BYTES)


cycle_samples = {s["cycle"]: s for s in samples("cycles")}
first, warm, last = cycle_samples.get(1), cycle_samples.get(100), cycle_samples.get(cycles)
check(f"{cycles} load/unload cycles of one module ran, sampled after 1, 100 and {cycles}",
      r.reached("cycles") and first and warm and last, str(sorted(cycle_samples)))
if first and warm and last:
    print("memory after cycle " + ", ".join(
        f"{c}: slab+vmalloc {memory_kb(s)} KiB, kpgo {kpgo_bytes(s)} B "
        f"(kept {s.get('kept_bytes')}, descriptors {s.get('descriptor_bytes')}, "
        f"map {s.get('map_bytes')}, entries {s.get('entry_bytes')})"
        for c, s in sorted(cycle_samples.items())))
    steady = [s for c, s in cycle_samples.items() if c >= 1]
    check("kpgo's own memory is the same after every cycle: one kept profile, the map "
          "and the entries do not grow",
          len({tuple(s.get(k) for k in ("kept_bytes", "map_bytes", "entry_bytes"))
               for s in steady}) == 1 and last.get("kept_profiles") == first.get("kept_profiles"),
          str([{k: s.get(k) for k in KPGO_BYTES} for s in steady[:3]]))
    pending = [s.get("descriptors", 10**9) - s.get("modules_live", 0) for s in steady]
    check(f"... and its descriptors are freed: the live modules' and at most {PENDING} "
          f"waiting for their grace period ({max(pending)} at most)",
          max(pending) <= PENDING)
    growth = memory_kb(last) - memory_kb(warm)
    check(f"slab + vmalloc grew {growth} KiB from cycle 100 to {cycles} "
          f"(at most {CYCLE_GROWTH_LIMIT_KB})", growth <= CYCLE_GROWTH_LIMIT_KB)

# With counter relocation, epochs switched in a loop during cycles and
# names (scale.guest.sh): modules joined and left during switches.
switched_file = scale_out / "results/epochs-switched"
if switched_file.exists():
    switched = int(switched_file.read_text().strip().split("=")[-1] or 0)
    check(f"epochs switched in a loop while modules loaded and unloaded ({switched} switches)",
          r.reached("names") and switched >= 10)

name_samples = {s["cycle"]: s for s in samples("names")}
start, one, end = name_samples.get(0), name_samples.get(1), name_samples.get(names)
check(f"{names} loads of names never loaded before ran", r.reached("names") and start and end)
if start and one and end:
    entries = end.get("entries", 0) - start.get("entries", 0)
    kept = end.get("kept_profiles", 0) - start.get("kept_profiles", 0)
    per_name_kpgo = (kpgo_bytes(end) - kpgo_bytes(one)) / max(names - 1, 1)
    per_name_kb = (memory_kb(end) - memory_kb(one)) / max(names - 1, 1)
    print(f"per name: kpgo {per_name_kpgo:.0f} bytes (an entry of "
          f"{end.get('entry_bytes', 0) // max(end.get('entries', 1), 1)} and a kept profile), "
          f"slab+vmalloc {per_name_kb:.2f} KiB (with the debugfs file and the module "
          f"loader's own)")
    check(f"... each got an entry and a kept profile ({entries} entries, {kept} kept)",
          entries == names and kept == names and end.get("modules_refused") == 0)

# --- readers and loaders -----------------------------------------------
# Whether a load or unload waits for a read of vmlinux's profile is judged
# without timing anything: a reader held inside its serialization, loads
# and unloads meanwhile (module_cycles paused). Readers of every file are
# judged by latency (-icount) against a coarse bound only: a load's worst
# case moves with the scheduler's slices for SCHED_IDLE tasks, which the
# spinners' reference shows (LATENCY_LIMIT).


def demangled(symbol):
    """SYMBOL demangled (Rust v0), or as it is."""
    try:
        return subprocess.run([f"{LLVM}/llvm-cxxfilt", symbol], capture_output=True,
                              text=True, check=True).stdout.strip() or symbol
    except (OSError, subprocess.CalledProcessError):
        return symbol


paused = [fields(line) for line in r.text("paused").splitlines()]
holds = [f for f in paused if "pause" in f]
summary = next((f for f in paused if "pauses" in f), {})
frame = demangled(str(holds[0].get("frame"))) if holds else "no pause"
check(f"a reader of vmlinux's profile was held inside its serialization {len(holds)} times "
      f"(of {PAUSES}; {summary.get('attempts')} tries, seed {summary.get('seed')})",
      r.reached("paused") and len(holds) == PAUSES, frame)
if holds:
    print(f"held at: {frame}")
check("... and stayed there: no open of it finished while held",
      holds and all(f.get("reader_opens_meanwhile") == 0 for f in holds),
      str([f.get("reader_opens_meanwhile") for f in holds]))
stuck = next((f.get("loader_stack") for f in holds if f.get("expired") != 0), None)
check(f"while it was held, {PAUSED_CYCLES} module loads and unloads ran each time, under new "
      "names and again (one that waited for the reader would end only when it was let go)",
      holds and all(f.get("cycles") == PAUSED_CYCLES and f.get("done_while_paused") == PAUSED_CYCLES
                    and f.get("expired") == 0 for f in holds),
      str([(f.get("done_while_paused"), f.get("expired")) for f in holds])
      + (f"; the loader was in: {', '.join(map(demangled, str(stuck).split(',')))}"
         if stuck else ""))
check(f"... then let go, the reader finished its open ({summary.get('opens_after')} "
      "more by the end), and none failed",
      summary.get("opens_after", 0) >= 1 and summary.get("failed") == 0, str(summary))

latency = {(f.get("readers"), f.get("kind")): f
           for f in map(fields, b.text("latency").splitlines())}
quiet, busy, spin = latency.get((0, "read")), latency.get((4, "read")), latency.get((4, "spin"))
check("load/unload latency measured without and with 4 readers, and with 4 spinners "
      "(instructions, -icount)",
      b.reached("latency") and quiet is not None and busy is not None and spin is not None)
if quiet and busy and spin:
    for f in (quiet, busy, spin):
        who = {"read": "readers", "spin": "spinners (SCHED_IDLE, reading nothing)"}[f["kind"]]
        print(f"with {f['readers']} {who}: load median {f['load_median_us']} us, "
              f"slowest three {f['load_slowest_us']} us; unload median "
              f"{f['unload_median_us']} us, slowest three {f['unload_slowest_us']} us "
              f"(1 us = 1000 guest instructions); {f['reads']} reads, "
              f"{f['failed_reads']} failed")
    ratios = {(op, f["kind"]): f[f"{op}_worst_us"] / max(quiet[f"{op}_worst_us"], 1)
              for op in ("load", "unload") for f in (busy, spin)}
    print("worst over worst without: " + "; ".join(
        f"{op} {ratios[op, 'read']:.2f} with readers, {ratios[op, 'spin']:.2f} with spinners"
        for op in ("load", "unload")))
    for op in ("load", "unload"):
        ratio = ratios[op, "read"]
        check(f"worst {op} with readers is {ratio:.2f} x the worst without (at most "
              f"{LATENCY_LIMIT}, a coarse bound: instructions under -icount)",
              ratio <= LATENCY_LIMIT)
    check(f"the readers read every file in a loop ({busy['reads']} reads) and none failed",
          busy["reads"] > 0 and busy["failed_reads"] == 0)

# --- reset race ----------------------------------------------------------


def race_counts(path):
    """(value count at the loop's indirect site, the target's entry
    count) in the profile at PATH."""
    text = subprocess.run([PROFDATA, "show", "--all-functions", "--counts", "--ic-targets",
                           str(path)], capture_output=True, text=True, check=True).stdout
    value = block = None
    current = None
    for line in text.splitlines():
        m = re.match(r"^  (\S+):$", line)
        if m:
            current = m.group(1).rsplit(";", 1)[-1]
        elif current == "pgo_test_race_target" and "Block counts:" in line:
            block = int(re.findall(r"\d+", line.split(":", 1)[1])[0])
        elif current == "pgo_test_race_loop":
            m = re.match(r"^\s*\[\s*\d+,\s*(\S+),\s*(\d+)\s*\]", line)
            if m and m.group(1).rsplit(";", 1)[-1] == "pgo_test_race_target":
                value = int(m.group(2))
    return value, block


rounds = [fields(line) for line in r.text("race/rounds").splitlines()]
check(f"{RACE_ROUNDS} resets raced with the hooks ({len(rounds)})",
      r.reached("race") and len(rounds) == RACE_ROUNDS)
value_over = block_kept = block_bad = block_beyond_round = value_zero = 0
# A racing increment keeps the count it read before the reset. The thread
# is the counter's only writer, and a kept count is one the counter had
# at that read; but under TCG a vCPU can stall between the read and the
# write (of one instruction) while the other resets several times, and a
# kept count can be kept again. So what holds however long a vCPU stalls:
# never more than the thread's calls in all (nothing invented), and the
# counter restarts in most rounds (a reset that did not clear it would
# keep every time). How often a keep went back further than one earlier
# reset is printed.
earlier_c0 = previous_c0 = 0
for rnd in rounds:
    if rnd["c0"] > previous_c0:
        earlier_c0 = previous_c0
    previous_c0 = rnd["c0"]
    try:
        value, block = race_counts(r / f"race/race-{rnd['round']}.profraw")
    except subprocess.CalledProcessError:
        value = block = None
    since = rnd["c2"] - rnd["c0"] + 1  # calls since the reset began (+1 in flight)
    if value is None or block is None:
        value_over += 1
        block_bad += 1
        continue
    value_zero += value == 0
    value_over += value > since
    if block > since:
        block_kept += 1
        block_bad += block > rnd["c2"] + 1
        block_beyond_round += block > rnd["c2"] - earlier_c0 + 1
print(f"reset race: {len(rounds)} rounds; value counts over the calls since the reset: "
      f"{value_over}; with no call counted: {value_zero}; block counters that kept a count "
      f"from before the reset: {block_kept} (from before an earlier one too: "
      f"{block_beyond_round}), more than the thread's calls: {block_bad}")
check("value counts after a racing reset count only calls since it (none over, in "
      f"{len(rounds)} rounds)", rounds and value_over == 0)
during = sum(1 for rnd in rounds if rnd["c1"] > rnd["c0"])
# The two vCPUs run at once only when the host has the cores for them.
check(f"... while the thread called: during {during} of the {len(rounds)} resets "
      "(at least 10%), and some profile counted calls",
      rounds and during >= len(rounds) // 10 and value_zero < len(rounds))
check("block counters after a racing reset restart, or keep a count from before it: "
      "never more than the thread's calls (the compiler's increments: Documentation/pgo.rst, "
      "\"What a reset promises while code runs\")",
      rounds and block_bad == 0)
check(f"... and restart in most rounds ({len(rounds) - block_kept} of {len(rounds)})",
      rounds and block_kept < len(rounds) // 2)

# --- hooks against module count (-icount) -------------------------------

bench = {}
plain = {}
for count in (1, 100, 600):
    f = fields(b.text(f"hookbench-{count}"))
    if f.get("calls"):
        bench[count] = (f["hooked_ns"] - f["plain_ns"]) / (2 * f["calls"])
        plain[count] = f["plain_ns"] / f["calls"]
        print(f"hooks with {count} other modules loaded: {f['hooked_ns'] / f['calls']:.1f} "
              f"instructions per loop with 2 hook calls, {f['plain_ns'] / f['calls']:.1f} "
              f"without; {bench[count]:.1f} per hook call")
check("the module hook benchmark ran with 1, 100 and 600 other modules", len(bench) == 3)
# The plain loop has no hook: what it costs cannot depend on the module
# count, unless other work landed in every round of it.
if len(plain) == 3:
    spread = max(plain.values()) / min(plain.values())
    check(f"... its uninstrumented loop costs the same with 1, 100 and 600 modules "
          f"(at most 2% apart: {spread:.3f})", spread <= 1.02)
if len(bench) == 3 and bench[1] > 0:
    ratio = bench[600] / bench[1]
    print(f"hook cost 600/1: {ratio:.3f}, 100/1: {bench[100] / bench[1]:.3f} "
          "(instructions, QEMU -icount: caches and branch predictors not modelled)")
    check(f"a module's hook call costs {ratio:.3f} x with 600 modules as with 1 (at most 1.10)",
          ratio <= 1.10)
bench_runtime, _ = stats(b.text("stats"))
check("... the measured module was profiled every time (no refusal)",
      bench_runtime.get("modules_refused") == 0, str(bench_runtime))

# --- both guests ---------------------------------------------------------

check("the scale guest ran to its last step", r.reached("done"))
check_console(checks, "the scale guest's console: a whole run, no report",
              read_console(scale_out / "console.log", checks))
check("the -icount guest ran to its last step", b.reached("done"))
check_console(checks, "the -icount guest's console: a whole run, no report",
              read_console(bench_out / "console.log", checks))
sys.exit(checks.summary("scale"))
