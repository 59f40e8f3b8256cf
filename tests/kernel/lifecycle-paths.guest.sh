# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, KASAN kernel, 2 CPUs), started by
# tests/kernel/lifecycle.sh paths: the module failure paths. Takes
# profiles, stats and the modules' own views; the host judges them. A
# command that is expected to fail says so (status, ||); any other failure
# ends the script, and the host sees from its steps how far it got.
set -eu
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
k=/kpgo
mark() { echo "lifecycle: $*" >/dev/kmsg; }
# One finit_module() per load: busybox insmod retries a failed
# finit_module() with init_module(), which would load twice.
load() { $k/fail_nth 0 load "$1" >/dev/null; }
save() { if [ -e "$1" ]; then cat "$1" >"$r/$2"; fi; }
status() { "$@" >/dev/null 2>&1; echo $?; }
echo clear >/sys/kernel/debug/kmemleak
cat /proc/modules >$r/modules-at-start

# 1. An init that fails, 100 times: COMING and GOING, never live.
mark "initfail start"
i=0
loaded=0
while [ $i -lt 100 ]; do
	load $k/pgo_test_initfail.ko && loaded=$((loaded + 1))
	i=$((i + 1))
done
echo "$loaded" >$r/initfail-loaded
mark "initfail end"
save $pgo/pgo_test_initfail.profraw initfail.profraw
cat $pgo/stats >$r/stats-initfail
grep -c '^pgo_test_initfail ' /proc/modules >$r/initfail-in-proc-modules || true
step initfail

# 2. Timers, delayed work and async work across the unload, 10 times,
#    with a reader of the module's file and stats meanwhile.
mark "async start"
(while [ ! -e /tmp/async-stop ]; do
	# The file is there only while the module is loaded or kept.
	cat $pgo/pgo_test_async.profraw >/dev/null 2>&1 || true
	cat $pgo/stats >/dev/null
done) &
reader=$!
i=0
while [ $i -lt 10 ]; do
	insmod $k/pgo_test_async.ko || echo "insmod $i" >>$r/async-errors
	sleep 0.2
	cat /sys/kernel/debug/pgo_test_async/sink >/dev/null
	rmmod pgo_test_async || echo "rmmod $i" >>$r/async-errors
	i=$((i + 1))
done
touch /tmp/async-stop
wait $reader
mark "async end"
save $pgo/pgo_test_async.profraw async.profraw
cat $pgo/stats >$r/stats-async
step async

# 3a. A module named vmlinux (pgo_test_a renamed): never profiled,
#     vmlinux's entry untouched, also after its unload.
mark "vmlinux-named start"
save $pgo/vmlinux.profraw vmlinux-before.profraw
echo "$(status insmod $k/named/vmlinux.ko)" >$r/vmlinux-named-insmod
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
ls -ln $pgo >$r/ls-vmlinux-named
cat $pgo/stats >$r/stats-vmlinux-named
save $pgo/vmlinux.profraw vmlinux-with-module.profraw
echo "$(status rmmod vmlinux)" >$r/vmlinux-named-rmmod
save $pgo/vmlinux.profraw vmlinux-after-unload.profraw
mark "vmlinux-named end"
step vmlinux-named

# 3b. Two different .ko files with one name (pgo_test_a, then pgo_test_b,
#     both renamed pgo_same): one entry, kept profile then live one.
mark "same-name start"
insmod $k/named/pgo_same_a.ko
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
rmmod pgo_same
save $pgo/pgo_same.profraw same-kept.profraw
insmod $k/named/pgo_same_b.ko
save $pgo/pgo_same.profraw same-both.profraw
cat $pgo/stats >$r/stats-same
rmmod pgo_same
save $pgo/pgo_same.profraw same-both-unloaded.profraw
mark "same-name end"
step same-name

# 3c. A module named all (pgo_test_a renamed) next to pgo_test_a itself:
#     each resettable alone with module:<name>.
mark "all-named start"
insmod $k/named/all.ko
insmod $k/pgo_test_a.ko
echo "$(status sh -c "echo module:all >$pgo/reset")" >$r/reset-module-all
save $pgo/all.profraw all-after-reset.profraw
save $pgo/pgo_test_a.profraw a-after-reset-module-all.profraw
echo "$(status sh -c "echo module:pgo_test_a >$pgo/reset")" >$r/reset-module-a
save $pgo/pgo_test_a.profraw a-after-reset-module-a.profraw
echo "$(status sh -c "echo module:no_such_module >$pgo/reset")" >$r/reset-module-unknown
echo "$(status sh -c "echo module: >$pgo/reset")" >$r/reset-module-empty
rmmod all
rmmod pgo_test_a
mark "all-named end"
step all-named

# 4. A corrupted Values pointer (into the module's .data): refused at
#    load, nothing written, before and after its value sites run and a
#    reset of everything. Then the same module, intact, is profiled.
mark "corrupt start"
insmod $k/corrupt/pgo_test_corrupt.ko
ls -ln $pgo >$r/ls-corrupt
cat $pgo/stats >$r/stats-corrupt
d=/sys/kernel/debug/pgo_test_corrupt
cat $d/target >$r/corrupt-target-loaded
cat $d/run >/dev/null
cat $d/run >/dev/null
cat $d/target >$r/corrupt-target-ran
echo all >$pgo/reset
cat $d/target >$r/corrupt-target-reset
save $pgo/pgo_test_corrupt.profraw corrupt.profraw
rmmod pgo_test_corrupt
mark "corrupt end"
step corrupt
mark "corrupt control start"
insmod $k/pgo_test_corrupt.ko
cat $d/run >/dev/null
cat $d/target >$r/control-target-ran
save $pgo/pgo_test_corrupt.profraw control.profraw
rmmod pgo_test_corrupt
mark "corrupt control end"
step corrupt-control

# 4b. A CounterPtr aimed at the module's .data: refused too.
mark "corrupt-cnts start"
insmod $k/corrupt/pgo_corrupt_cnts.ko
ls -ln $pgo >$r/ls-corrupt-cnts
cat /sys/kernel/debug/pgo_corrupt_cnts/run >/dev/null
rmmod pgo_corrupt_cnts
mark "corrupt-cnts end"
step corrupt-cnts

# 4b'. A value-node pool without SHF_WRITE (read-only memory from COMING
#      on): refused, so that no hook writes a node there; the module runs.
mark "corrupt-vnds start"
insmod $k/corrupt/pgo_corrupt_vnds.ko
ls -ln $pgo >$r/ls-corrupt-vnds
cat /sys/kernel/debug/pgo_corrupt_vnds/run >/dev/null
cat /sys/kernel/debug/pgo_corrupt_vnds/run >$r/corrupt-vnds-ran
rmmod pgo_corrupt_vnds
mark "corrupt-vnds end"
step corrupt-vnds

# 4c. Kprobes: the hooks and the Rust functions they call are refused as
#     probe points (NOKPROBE_SYMBOL, .kprobes.text); kpgo's other code is
#     not. Each line: the symbol, 0 if the probe was accepted, and
#     whether kprobes' blacklist lists it.
mark "kprobes start"
events=/sys/kernel/tracing/kprobe_events
[ -e $events ] || mount -t tracefs nodev /sys/kernel/tracing
probe() {
	listed=unlisted
	# "0xSTART-0xEND<tab>NAME" per function.
	grep -qE "[[:space:]]$1\$" /sys/kernel/debug/kprobes/blacklist && listed=listed
	if echo "p:kpgo_probe $1" >>$events 2>/dev/null; then
		echo "$1 0 $listed" >>$r/kprobes
		echo "-:kpgo_probe" >>$events
	else
		echo "$1 1 $listed" >>$r/kprobes
	fi
}
: >$r/kprobes
for sym in __llvm_profile_instrument_target __llvm_profile_instrument_memop \
	kpgo_hook_enter kpgo_hook_exit \
	$(grep -E ' [tT] _R.*4kpgo.*(18record_target_slow|19record_target_first|18check_hook_version|9add_value|14least_frequent)$' \
		/proc/kallsyms | cut -d' ' -f3); do
	probe "$sym"
done
# The control: a function of kpgo off the hooks' path.
echo control >>$r/kprobes
probe kpgo_cond_resched
mark "kprobes end"
step kprobes

# 5. kmemleak: two scans (reported objects must be 5 s old).
mark "kmemleak start"
echo scan >/sys/kernel/debug/kmemleak
sleep 6
echo scan >/sys/kernel/debug/kmemleak
cat /sys/kernel/debug/kmemleak >$r/kmemleak
mark "kmemleak end"
step kmemleak

# 6. Last, since a runtime that trusted it would fault on any walk of its
#    value heads (reset, read, unload): a Values pointer 1 MiB past the
#    module's heads. It must be refused at load; it stays loaded.
mark "corrupt-far start"
insmod $k/corrupt/pgo_corrupt_far.ko
ls -ln $pgo >$r/ls-corrupt-far
cat $pgo/stats >$r/stats-corrupt-far
mark "corrupt-far end"
step done
echo "lifecycle paths guest done"
