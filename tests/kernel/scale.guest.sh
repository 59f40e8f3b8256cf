# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, 2 CPUs), started by
# tests/kernel/scale.sh: distro scale. Takes profiles, stats, memory and
# latency figures; the host judges them.
#   many      pgo_scale.ko under kpgo_modules= names at once (pgo_s_001
#             ...), their profiles; all unloaded and loaded again, their
#             profiles
#   cycles    load/unload cycles of pgo_test_a, memory sampled
#   names     loads of that many names never loaded before (with
#             counter relocation, epochs switch in a loop during cycles
#             and names)
#   race      resets in a loop on CPU 1 while pgo_test_race calls on CPU 0
#   paused    a reader of vmlinux's profile held inside its serialization
#             on CPU 1 while modules load and unload on CPU 0
# (latency and the hooks' cost are measured in scale-icount.guest.sh).
set -eu
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
k=/kpgo
arg() { sed -n "s/.*kpgo_$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
modules=$(arg modules)
cycles=$(arg cycles)
names=$(arg names)
mkdir -p $r/race

# many: load them all, take every profile; then unload all, load all
# again: each profile is then its kept load and its live one.
save_profiles() {
	mkdir -p $r/many/$1
	for f in $pgo/pgo_s_*.profraw; do cat "$f" >$r/many/$1/${f##*/}; done
}
cat $pgo/stats >$r/stats-before
$k/module_cycles load pgo_s_ 1 "$modules" $k/pgo_scale.ko
cat $pgo/stats >$r/stats-loaded
save_profiles loaded
$k/module_cycles unload pgo_s_ 1 "$modules"
cat $pgo/stats >$r/stats-unloaded
save_profiles unloaded
$k/module_cycles load pgo_s_ 1 "$modules" $k/pgo_scale.ko
cat $pgo/stats >$r/stats-reloaded
save_profiles reloaded
ls $pgo >$r/many/files
step many

# cycles and names: memory after the first cycle and after the last.
# With counter relocation, epochs switch in a loop meanwhile, so modules
# join and leave during switches.
switcher=
if [ -e $pgo/epoch ]; then
	(while :; do echo 1 >$pgo/epoch 2>/dev/null || :; done) &
	switcher=$!
fi
$k/module_cycles cycles "$cycles" pgo_test_a $k/pgo_test_a.ko >$r/cycles
step cycles
$k/module_cycles names "$names" pgo_n_ $k/pgo_test_a.ko >$r/names
if [ -n "$switcher" ]; then
	kill $switcher
	wait $switcher 2>/dev/null || :
	grep -o ' epochs=[0-9]*' $pgo/stats >$r/epochs-switched
fi
step names

# race
insmod $k/pgo_test_race.ko
echo start >/sys/kernel/debug/pgo_test_race/control
$k/reset_race 1000 $r/race >$r/race/rounds
echo stop >/sys/kernel/debug/pgo_test_race/control
rmmod pgo_test_race
step race

# paused: 5 pauses, 10 loads and unloads during each (scale_check.py).
$k/module_cycles paused 5 10 $k/pgo_scale.ko >$r/paused
step paused
cat $pgo/stats >$r/stats-end
step done
