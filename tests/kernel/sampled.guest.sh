# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/sampled.sh,
# on the kernel with sampled instrumentation: known work in vmlinux and in
# two builds of one module, one sampled and one fully instrumented, and
# the profiles of each; the host judges them.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
calls=$(sed -n 's/.*kpgo_sampled_calls=\([0-9]*\).*/\1/p' /proc/cmdline)

cat $pgo/stats >$r/stats
step stats
echo 1 >$pgo/reset
/kpgo/getpid_loop "$calls"
cat $pgo/vmlinux.profraw >$r/getpid.profraw
step getpid

# Both modules' loops: the same calls, counted in full and sampled.
insmod /kpgo/pgo_hookbench.ko calls="$calls"
insmod /kpgo/pgo_sampledbench.ko calls="$calls"
cat /sys/kernel/debug/pgo_hookbench/run >$r/full-run
cat /sys/kernel/debug/pgo_sampledbench/run >$r/sampled-run
cat $pgo/pgo_hookbench.profraw >$r/full.profraw
cat $pgo/pgo_sampledbench.profraw >$r/sampled.profraw
cat $pgo/stats >$r/stats-modules
rmmod pgo_sampledbench
rmmod pgo_hookbench
step modules

# A reset clears sampled counters as any other.
echo 1 >$pgo/reset
cat $pgo/vmlinux.profraw >$r/after-reset.profraw
step reset
