# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, 2 CPUs), started by
# tests/kernel/epochs.sh: switches epochs on one CPU while the other runs a
# known workload, then reset, a module that joins after switches, and
# refusals; the host judges the profiles with llvm-profdata.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
run_a=/sys/kernel/debug/pgo_test_a/run
switches=20

if cat $pgo/epochs/vmlinux.profraw >/dev/null 2>$r/none-error; then
	echo opened >$r/none-opened
fi
step none
insmod /kpgo/pgo_test_a.ko
/kpgo/epoch_switch $switches $r $run_a >$r/switches.txt
step switches
cat $pgo/pgo_test_a.profraw >$r/a-total.profraw
cat $pgo/stats >$r/stats
# After an odd number of switches the live file maps the spare set.
cat $pgo/live/vmlinux.profraw >$r/vmlinux-live.profraw
step totals
if echo 2 >$pgo/epoch 2>$r/bad-error; then
	echo accepted >$r/bad-accepted
fi
step bad
# A reset writes no counter: the profile restarts, the epoch stays.
echo 1 >$pgo/reset
cat $pgo/pgo_test_a.profraw >$r/a-reset.profraw
cat $pgo/epochs/pgo_test_a.profraw >$r/a-epoch-after-reset.profraw
step reset
# Switches at once from both CPUs: one at a time, the other EBUSY.
/kpgo/epoch_switch busy 30 >$r/busy.txt
grep -o ' epochs=[0-9]*' $pgo/stats >$r/busy-epochs
# An odd number of switches: the spare set is the current one.
case $(cat $r/busy-epochs) in
*[02468]) echo 1 >$pgo/epoch ;;
esac
step busy
# Loaded again after the switches: its bias joins the spare set.
rmmod pgo_test_a
insmod /kpgo/pgo_test_a.ko
for i in 1 2 3; do cat $run_a >/dev/null; done
grep '^object=pgo_test_a ' $pgo/stats >$r/stats-joining
echo 1 >$pgo/epoch
cat $pgo/epochs/pgo_test_a.profraw >$r/a-joined.profraw
grep -e '^runtime ' -e '^object=pgo_test_a ' $pgo/stats >$r/stats-joined
rmmod pgo_test_a
if cat $pgo/epochs/pgo_test_a.profraw >/dev/null 2>$r/unloaded-error; then
	echo opened >$r/unloaded-opened
fi
step joined
