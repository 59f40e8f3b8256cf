# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, 2 CPUs), started by
# tests/kernel/modules.sh. Takes the profiles; the host judges them.
set -e
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
run_a() { cat /sys/kernel/debug/pgo_test_a/run >/dev/null; }

insmod /kpgo/pgo_test_a.ko
ls -ln $pgo >$r/ls-loaded
cat $pgo/pgo_test_a.profraw >$r/a-init.profraw
# Writing to a module's file resets that module only.
echo 1 >$pgo/pgo_test_a.profraw
cat $pgo/pgo_test_a.profraw >$r/a-reset.profraw
run_a
run_a
run_a
cat $pgo/pgo_test_a.profraw >$r/a-3.profraw

# B exhausts its own node pool.
insmod /kpgo/pgo_test_b.ko
cat /sys/kernel/debug/pgo_test_b/run >/dev/null
cat $pgo/stats >$r/stats-b
cat $pgo/pgo_test_a.profraw >$r/a-3-after-b.profraw
cat $pgo/pgo_test_b.profraw >$r/b.profraw
cat $pgo/*.profraw >$r/all.profraw

# A reset by name touches that module only.
echo pgo_test_b >$pgo/reset
cat $pgo/pgo_test_b.profraw >$r/b-reset.profraw
cat $pgo/pgo_test_a.profraw >$r/a-3-after-reset-b.profraw
cat $pgo/vmlinux.profraw >$r/vmlinux-after-reset-b.profraw
if echo no_such_module >$pgo/reset 2>/dev/null; then
	echo accepted >$r/unknown-module-accepted
fi

# Unload keeps the profile, also for a file opened before; reload appends.
exec 3<$pgo/pgo_test_a.profraw
rmmod pgo_test_a
cat <&3 >$r/a-open-across-rmmod.profraw
exec 3<&-
cat $pgo/pgo_test_a.profraw >$r/a-kept.profraw
cat $pgo/stats >$r/stats-unloaded
insmod /kpgo/pgo_test_a.ko
cat $pgo/pgo_test_a.profraw >$r/a-reload.profraw
cat $pgo/stats >$r/stats-reloaded

rmmod pgo_test_b

# Stress on 2 CPUs: workloads in the background while dumps, resets,
# loads and unloads go on; the host then reads the console for warnings.
(while [ ! -e /tmp/stop ]; do run_a; /kpgo/getpid_loop 200; done) &
(while [ ! -e /tmp/stop ]; do cat $pgo/vmlinux.profraw >/dev/null; done) &
i=0
while [ $i -lt 15 ]; do
	insmod /kpgo/pgo_test_b.ko
	cat $pgo/*.profraw >/dev/null
	cat $pgo/stats >/dev/null
	echo all >$pgo/reset
	rmmod pgo_test_b
	echo pgo_test_a >$pgo/reset
	i=$((i + 1))
done
touch /tmp/stop
wait
cat $pgo/stats >$r/stats-stress
rmmod pgo_test_a
echo all >$pgo/reset
cat $pgo/pgo_test_a.profraw >$r/a-after-reset-all.profraw
echo "modules guest done"
