# SPDX-License-Identifier: GPL-2.0
"""The deliberate faults of make check-mutants (tests/mutants/run.py).

Each mutant is one fault a real change could bring, as exact text edits
(path, old, new) of the project's files: OLD must occur exactly once, so
that a mutant that no longer applies is an error, not a silent pass. It
names the suites that must catch it; run.py applies it to a scratch copy
of the tree, runs those suites there and reports which checks went red.
A mutant that turns nothing red is a hole in the tests.
"""
from dataclasses import dataclass, field


@dataclass
class Mutant:
    name: str
    fault: str
    suites: list
    edits: list = field(default_factory=list)


MUTANTS = [
    Mutant(
        "read-not-killable",
        "a profile read that keeps starting again ignores fatal signals (issue 27, bug 5)",
        ["vmlinux"],
        [("pgo/runtime/registry.rs",
          "            if fatal_signal_pending() {\n                return Err(EINTR);\n",
          "            if fatal_signal_pending() && false {\n                return Err(EINTR);\n")],
    ),
    Mutant(
        "log-prefix-twice",
        "a log message repeats the crate's prefix (issue 27, bug 7)",
        ["clippy"],
        [("pgo/runtime/registry.rs",
          'pr_warn!("{}: module read without a section\\n", self.name);',
          'pr_warn!("kpgo: {}: module read without a section\\n", self.name);')],
    ),
    Mutant(
        "guest-stops-halfway",
        "the vmlinux guest script stops (with status 0) after its getpid step",
        ["vmlinux"],
        [("tests/kernel/vmlinux.guest.sh",
          "step getpid\n",
          "step getpid\nexit 0\n")],
    ),
    Mutant(
        "hook-calls-instrumented",
        "the hooks' slow path calls an instrumented kernel function (get_random_u32)",
        ["hooks"],
        [("pgo/runtime/hooks.rs",
          "fn record_target_slow(record: usize, index: u32, value: u64) {\n",
          "fn record_target_slow(record: usize, index: u32, value: u64) {\n"
          "    if value == 0x6d75_7461_6e74 {\n"
          "        // SAFETY: a mutant.\n"
          "        unsafe { kernel::bindings::get_random_u32() };\n"
          "    }\n")],
    ),
    Mutant(
        "hook-panic-path",
        "the indirect-call hook has a panic path",
        ["hooks"],
        [("pgo/runtime/hooks.rs",
          "    let record = data as usize;\n",
          "    let record = data as usize;\n"
          "    if value == 0x6d75_7461_6e74 {\n"
          "        panic!(\"mutant\");\n"
          "    }\n")],
    ),
    Mutant(
        "ownership-off-by-one",
        "the record ownership test accepts the record one past the last",
        ["unit", "modules"],
        [("pgo/profile/sections.rs",
          "(index < records).then_some(index)",
          "(index <= records).then_some(index)")],
    ),
    Mutant(
        "reset-keeps-value-counts",
        "a reset zeroes the counters and the bitmap but not the value counts",
        ["unit", "vmlinux", "modules"],
        [("pgo/profile/sections.rs",
          "        if !self.pool.restart_counts() {\n",
          "        if !true {\n")],
    ),
    Mutant(
        "live-mode-0444",
        "live files are created 0444 (readable by every user) instead of 0400 (the "
        "profile files' mode is kernel::debugfs's, in an integration patch)",
        ["live"],
        [("pgo/runtime/kernel_api.rs",
          "            0o400,\n            dir.as_raw(),\n",
          "            0o444,\n            dir.as_raw(),\n")],
    ),
    Mutant(
        "readers-block-loaders",
        "a profile read holds a mutex (the registry's) while it sizes, allocates and "
        "serializes, and every module load and unload waits for it, as before this runtime",
        ["scale"],
        [("pgo/runtime/registry.rs",
          "/// The `stats` file.\n",
          "/// A mutant's lock.\n"
          "pub(crate) fn mutant_registry_lock() -> Option<kernel::sync::lock::Guard<'static, "
          "Option<DirWithSub>, kernel::sync::lock::mutex::MutexBackend>> {\n"
          "    registry().ok().map(|registry| registry.creating.lock())\n"
          "}\n\n"
          "/// The `stats` file.\n"),
         ("pgo/runtime/registry/modules.rs",
          "    fn module_coming(&self, module: &Module<'_>) {\n",
          "    fn module_coming(&self, module: &Module<'_>) {\n"
          "        drop(self.creating.lock());\n"),
         ("pgo/runtime/registry/modules.rs",
          "    fn module_going(&self, module: &Module<'_>) {\n",
          "    fn module_going(&self, module: &Module<'_>) {\n"
          "        drop(self.creating.lock());\n"),
         ("pgo/runtime/snapshot.rs",
          "    let mut bytes = KVVec::new();\n",
          "    let _registry = super::registry::mutant_registry_lock();\n"
          "    let mut bytes = KVVec::new();\n")],
    ),
    Mutant(
        "callee-names-not-located",
        "a module's profile that names a vmlinux function carries all of vmlinux's names "
        "(165 KB on the test kernel) instead of the chunk that names it",
        ["modules"],
        [("pgo/runtime/callees.rs",
          "            .filter(|&&at| at != NOT_LOCATED)\n",
          "            .filter(|_| false)\n")],
    ),
    Mutant(
        "unload-frees-kept-profile",
        "a module's unload drops its saved profile instead of keeping it",
        ["modules", "rust"],
        [("pgo/runtime/registry/modules.rs",
          "        let kept = self.keep(&descriptor.object, &descriptor.retired_text());\n",
          "        let kept = self.keep(&descriptor.object, &descriptor.retired_text());\n"
          "        self.module.saved.store(ptr::null_mut(), Ordering::Release);\n")],
    ),
    Mutant(
        "model-end-marker-overcounts",
        "the front-end model counts the instructions that follow a window's end marker "
        "in its block",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t\tc->now.insns -= m->insns_after;\n",
          "")],
    ),
    Mutant(
        "model-loads-not-modeled",
        "the front-end model feeds its L1d with stores only (asking QEMU 7.2 for "
        "stores only would not do it: it calls the callback for loads too)",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\tc->now.l1d_accesses++;\n",
          "\tif (!qemu_plugin_mem_is_store(info))\n\t\treturn;\n\tc->now.l1d_accesses++;\n")],
    ),
    Mutant(
        "model-not-lru",
        "the front-end model's caches always evict their first way, not the least "
        "recently used",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t\tif (stamps[w] < stamps[victim])\n",
          "\t\tif (0)\n")],
    ),
    Mutant(
        "model-ignores-unknown-arguments",
        "the front-end model skips a parameter it does not know instead of refusing it",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t\t\tfprintf(stderr, \"kpgo-model: unknown argument %s\\n\", argv[i]);\n"
          "\t\t\treturn -1;\n",
          "\t\t\tcontinue;\n")],
    ),
    Mutant(
        "model-rep-repeats-as-instructions",
        "the front-end model counts every repeat of a REP string instruction as an "
        "instruction, as QEMU runs them",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\tif (b->rep_first && c->previous && c->previous->branch_pc == b->start &&\n",
          "\tif (0 && b->rep_first && c->previous && c->previous->branch_pc == b->start &&\n")],
    ),
    Mutant(
        "model-line-report-drops-misses",
        "the front-end model's line_report lists the lines a window fetched but none of "
        "their misses",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t\t\tline_record(b->line[i], !hit);\n",
          "\t\t\tline_record(b->line[i], false);\n")],
    ),
    Mutant(
        "model-transfers-on-every-write",
        "the front-end model counts a transfer whenever a line another core saw is "
        "written, not only when the writer had not seen the last write",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t\t\t\treturn !seen;\n",
          "\t\t\t\treturn !seen || (store && (old & 0xff & ~me));\n")],
    ),
    Mutant(
        "model-transfers-free",
        "the front-end model counts transfers between vCPUs but adds no cycles for them",
        ["model"],
        [("bench/model/kpgo-model.c",
          "\t       c->mispredicts * params.mispredict + c->taken * params.taken +\n"
          "\t       c->transfers * params.transfer_latency;\n",
          "\t       c->mispredicts * params.mispredict + c->taken * params.taken;\n")],
    ),
    Mutant(
        "sampling-gain-as-ratio",
        "the share of the full profile's gain that the sampled one keeps is the ratio of "
        "their speedups, not of their gains",
        ["model"],
        [("scripts/sampling-figures",
          "100 * (sampled - 1) / (full - 1)",
          "100 * sampled / full")],
    ),
]
