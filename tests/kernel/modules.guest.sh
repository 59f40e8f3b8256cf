# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, 2 CPUs), started by
# tests/kernel/modules.sh. Takes the profiles; the host judges them.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
run_a() { cat /sys/kernel/debug/pgo_test_a/run >/dev/null; }

insmod /kpgo/pgo_test_a.ko
ls -ln $pgo >$r/ls-loaded
cat $pgo/pgo_test_a.profraw >$r/a-init.profraw
# A module's profile is read only; module:<name> resets that module only.
if echo 1 >$pgo/pgo_test_a.profraw 2>/dev/null; then
	echo accepted >$r/a-profraw-write-accepted
fi
echo module:pgo_test_a >$pgo/reset
cat $pgo/pgo_test_a.profraw >$r/a-reset.profraw
step a-write-reset
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
# (clang's raw version: vmlinux-rust.profraw, where the image's Rust
# records are apart, is rustc's, for its llvm-profdata.)
for f in $pgo/*.profraw; do
	[ "$f" = $pgo/vmlinux-rust.profraw ] || cat "$f"
done >$r/all.profraw

# A reset by name touches that module only.
echo pgo_test_b >$pgo/reset
cat $pgo/pgo_test_b.profraw >$r/b-reset.profraw
cat $pgo/pgo_test_a.profraw >$r/a-3-after-reset-b.profraw
cat $pgo/vmlinux.profraw >$r/vmlinux-after-reset-b.profraw
for word in no_such_module module:no_such_module module:pgo_test_ module:; do
	if echo "$word" >$pgo/reset 2>/dev/null; then
		echo "accepted: $word" >>$r/unknown-module-accepted
	fi
done
step unknown-resets
cat $pgo/pgo_test_a.profraw >$r/a-3-after-refused.profraw

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
step stress
rmmod pgo_test_a
echo all >$pgo/reset
cat $pgo/pgo_test_a.profraw >$r/a-after-reset-all.profraw

# Modules named like reset's keywords (copies of A: one run at init
# each), resettable by module:<name> only; "all" stays every object.
insmod /kpgo/all.ko
insmod /kpgo/1.ko
cat $pgo/stats >$r/stats-keywords
cat $pgo/all.profraw >$r/all-init.profraw
echo module:all >$pgo/reset
cat $pgo/all.profraw >$r/all-after-reset-all-module.profraw
cat $pgo/1.profraw >$r/1-after-reset-all-module.profraw
cat $pgo/vmlinux.profraw >$r/vmlinux-after-reset-all-module.profraw
echo module:1 >$pgo/reset
cat $pgo/1.profraw >$r/1-after-reset-1-module.profraw
rmmod all
rmmod 1
# Descriptors are freed a grace period after their unload.
i=0
while [ $i -lt 100 ] && ! grep -q ' descriptors=0 ' $pgo/stats; do
	sleep 0.1
	i=$((i + 1))
done
cat $pgo/stats >$r/stats-end

# Indirect calls across objects: vmlinux calls the module's init function
# (do_one_initcall) and its read function (debugfs's proxy, once per
# read); the module calls vmlinux's int_sqrt (5 per read) and memcpy (3,
# not instrumented) through pointers.
echo all >$pgo/reset
insmod /kpgo/pgo_test_callees.ko
run_callees 7
cat $pgo/vmlinux.profraw >$r/callees-vmlinux.profraw
cat $pgo/pgo_test_callees.profraw >$r/callees-module.profraw
cat $pgo/stats >$r/stats-callees
rmmod pgo_test_callees
cat $pgo/vmlinux.profraw >$r/callees-vmlinux-unloaded.profraw
cat $pgo/pgo_test_callees.profraw >$r/callees-module-unloaded.profraw
step callees
step done
echo "modules guest done"
