#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Distro scale on the instrumented kernel (make kernel), issue 18:
#   - 600 distinct instrumented modules loaded at once, from one source
#     (tests/kernel/modules/pgo_scale.c) built once and loaded under 600
#     names (pgo_s_001 ...; the image renamed at each init_module()): each
#     has its exact profile, stats agree; unloaded and loaded again: each
#     profile holds both loads, exactly;
#   - KPGO_SCALE_CYCLES (default 2000) load/unload cycles of one module:
#     kpgo's memory (its stats, /proc/meminfo) does not grow with them;
#     KPGO_SCALE_NAMES (default 2000) loads of names never loaded before:
#     what one name costs;
#   - resets in a loop on one CPU while a module's hooks run on the other:
#     what Documentation/pgo.rst ("What a reset promises while code
#     runs") promises of value counts and counters;
#   - a reader held inside vmlinux's serialization on CPU 1 (a SCHED_FIFO
#     task takes the CPU from it where it reschedules), module loads and
#     unloads on CPU 0: all finish while it is held;
#   - under QEMU -icount (guest time is instructions, whatever the host's
#     load), a module's hook calls with 1, 100 and 600 other modules
#     loaded, the measured one loaded last: the cost of 600 over that of 1
#     at most 1.10; then, with the 600 loaded, load and unload latency
#     without and with 4 readers of every profile and stats, and with 4
#     SCHED_IDLE tasks that read nothing (the reference: what the
#     scheduler's share costs): the worst case with readers at most 8
#     times the worst without (a coarse bound, in instructions), and no
#     read fails.
# Both guests boot with rcupdate.rcu_expedited=1: every unload waits for
# RCU grace periods (the loader's and kpgo's), which under TCG take tens
# of milliseconds of idle waiting when detected from the tick; expedited
# ones end as soon as every CPU leaves its read-side section, so the
# figures show what kpgo's locks and sections cost, not the tick.
# Judged by scale_check.py (llvm-profdata-19), last line
# "scale: N passed, M failed".
#
# Its outputs are in build/ (KPGO_TEST_OUT when set).
#
# Usage: tests/kernel/scale.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out_root=${KPGO_TEST_OUT:-$root/build}
moddir=$out_root/test-modules-scale
guest_bin=$out_root/guest
out=$out_root/qemu/scale
icount_out=$out_root/qemu/scale-icount
modules=600
cycles=${KPGO_SCALE_CYCLES:-2000}
names=${KPGO_SCALE_NAMES:-2000}
start=$EPOCHREALTIME
seconds() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }

# The modules (incrementally: sources copied with their times).
mkdir -p "$moddir" "$guest_bin"
cp -p "$here/modules/pgo_scale.c" "$here/modules/pgo_hookbench.c" \
	"$here/modules/pgo_test_race.c" "$here/modules/pgo_test_a.c" "$moddir/"
# Exact counts: fully instrumented on a sampled kernel too.
printf 'obj-m += pgo_scale.o pgo_hookbench.o pgo_test_race.o pgo_test_a.o\nPGO_SAMPLING := n\n' \
	>"$moddir/Kbuild.new"
cmp -s "$moddir/Kbuild.new" "$moddir/Kbuild" || mv "$moddir/Kbuild.new" "$moddir/Kbuild"
rm -f "$moddir/Kbuild.new"
"$root/scripts/kmake" -s M="$moddir" modules >"$moddir/build.log" 2>&1 ||
	{ tail -30 "$moddir/build.log"; echo "scale: 0 passed, 1 failed"; exit 1; }
for program in module_cycles reset_race; do
	/usr/lib/llvm-19/bin/clang -static -O2 -Wall -Werror \
		-o "$guest_bin/$program" "$here/guest/$program.c"
done

files=(--file "$guest_bin/module_cycles" --file "$guest_bin/reset_race"
	--file "$moddir/pgo_scale.ko"
	--file "$moddir/pgo_test_a.ko" --file "$moddir/pgo_test_race.ko"
	--file "$moddir/pgo_hookbench.ko")

status=0
guest_start=$EPOCHREALTIME
"$root/scripts/qemu-run" --out "$out" --smp 2 --mem 2G --timeout 2400 --disk-size 512 \
	--append "kpgo_modules=$modules kpgo_cycles=$cycles kpgo_names=$names rcupdate.rcu_expedited=1" \
	"${files[@]}" "$@" "$here/scale.guest.sh" || status=$?
echo "scale: the scale guest took $(seconds "$guest_start") s (status $status)"
icount_status=0
guest_start=$EPOCHREALTIME
"$root/scripts/qemu-run" --out "$icount_out" --smp 1 --mem 2G --timeout 2400 \
	--append "kpgo_modules=$modules rcupdate.rcu_expedited=1" \
	--qemu-arg -icount --qemu-arg shift=0,sleep=off \
	"${files[@]}" "$@" "$here/scale-icount.guest.sh" || icount_status=$?
echo "scale: the -icount guest took $(seconds "$guest_start") s (status $icount_status)"
status=0
python3 "$here/scale_check.py" "$out" "$icount_out" "$moddir" "$modules" "$cycles" "$names" ||
	status=$?
echo "scale: $(seconds "$start") s in all"
exit $status
