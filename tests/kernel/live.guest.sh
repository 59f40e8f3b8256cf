# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/live.sh:
# maps pgo/live/ files and copies the mappings around known work, without
# reopening them; the host judges the copies with llvm-profdata.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
live=$pgo/live
r=$KPGO_RESULTS
calls=5000
run_a=/sys/kernel/debug/pgo_test_a/run

ls -ln $live >$r/ls-live
/kpgo/live_map $live/vmlinux.profraw $r/vmlinux-before.profraw \
	$r/vmlinux-after.profraw $r/vmlinux-read.profraw \
	/kpgo/getpid_loop $calls >$r/vmlinux-map.txt
step vmlinux
cat $live/vmlinux.profraw >$r/vmlinux-cat.profraw
# A reset zeroes the counters a mapping shows.
/kpgo/live_map $live/vmlinux.profraw $r/reset-before.profraw \
	$r/reset-after.profraw $r/reset-read.profraw \
	sh -c "echo vmlinux >$pgo/reset" >$r/reset-map.txt
step reset

# A module's mapping outlives the module, with its last counts.
insmod /kpgo/pgo_test_a.ko
ls -ln $live >$r/ls-live-a
/kpgo/live_map $live/pgo_test_a.profraw $r/a-before.profraw \
	$r/a-after.profraw $r/a-read.profraw \
	sh -c "cat $run_a >/dev/null; cat $run_a >/dev/null; rmmod pgo_test_a" \
	>$r/a-map.txt
step module
if cat $live/pgo_test_a.profraw >/dev/null 2>$r/a-unloaded-error; then
	echo opened >$r/a-unloaded-opened
fi
step unloaded
