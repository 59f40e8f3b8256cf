# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, 1 CPU, QEMU -icount shift=0: a guest
# nanosecond is one instruction, whatever the host is doing), started by
# tests/kernel/scale.sh:
#   hookbench  the cost of a module's hooks with 1, 100 and 600 other
#              modules loaded, the measured module (pgo_hookbench) loaded
#              last each time;
#   latency    with the 600 loaded, load/unload latency of a 601st (pgo_scale)
#              without and with 4 readers (SCHED_IDLE) of every file in
#              pgo/, and, the reference, with 4 SCHED_IDLE tasks that spin
#              in user mode and read nothing. The module cycled makes no
#              debugfs file of its own: pgo_test_a's, created at its load and removed at its
#              unload, makes the unload wait now and then for debugfs
#              readers, kpgo's or any other (seen with readers of
#              /sys/kernel/debug/bdi), which is not what this measures.
set -eu
. /kpgo/guest-lib.sh
r=$KPGO_RESULTS
k=/kpgo
modules=$(sed -n 's/.*kpgo_modules=\([0-9]*\).*/\1/p' /proc/cmdline)
loaded=0
measure() {
	# Each loop's least of 5 rounds: deferred work of the loads before
	# (seen: 730,000 instructions in one loop) is not the hooks' cost.
	insmod $k/pgo_hookbench.ko rounds=5
	# The first run lists the values; the second is measured.
	cat /sys/kernel/debug/pgo_hookbench/run >/dev/null
	cat /sys/kernel/debug/pgo_hookbench/run >$r/hookbench-$loaded
	rmmod pgo_hookbench
}
for want in 1 100 "$modules"; do
	$k/module_cycles load pgo_s_ $((loaded + 1)) "$want" $k/pgo_scale.ko
	loaded=$want
	measure
	step "hookbench-$want"
done
cat /sys/kernel/debug/pgo/stats >$r/stats
# The last one, cycled under its own name (the image is renamed at each
# load, so the .ko on disk is never the module's).
last=$(printf 'pgo_s_%03d' "$modules")
rmmod "$last"
$k/module_cycles latency 100 pgo_scale $k/pgo_scale.ko 0 >$r/latency
$k/module_cycles latency 100 pgo_scale $k/pgo_scale.ko 4 >>$r/latency
$k/module_cycles latency 100 pgo_scale $k/pgo_scale.ko 4 spin >>$r/latency
step latency
step done
