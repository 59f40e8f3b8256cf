# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/entry-sampled.sh,
# on the kernel with entry sampling, booted with bursts always on: known
# work with bursts always on, never on and a quarter of the time, in
# vmlinux and in two builds of one module (with the plugin, and fully
# instrumented); then what pgo/entry_sampling refuses.  The host judges.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
calls=$(sed -n 's/.*kpgo_entry_calls=\([0-9]*\).*/\1/p' /proc/cmdline)

cat $pgo/entry_sampling >$r/settings-boot
step settings

# profile NAME: known work since a reset, and its profiles.
profile() {
	echo 1 >$pgo/reset
	/kpgo/getpid_loop "$calls"
	insmod /kpgo/pgo_entrybench.ko calls="$calls"
	insmod /kpgo/pgo_hookbench.ko calls="$calls"
	cat /sys/kernel/debug/pgo_entrybench/run >$r/$1-entry-run
	cat /sys/kernel/debug/pgo_hookbench/run >$r/$1-full-run
	cat $pgo/vmlinux.profraw >$r/$1-vmlinux.profraw
	cat $pgo/pgo_entrybench.profraw >$r/$1-entry.profraw
	cat $pgo/pgo_hookbench.profraw >$r/$1-full.profraw
	cat $pgo/entry_sampling >$r/$1-settings
	rmmod pgo_entrybench
	rmmod pgo_hookbench
}
profile always
step always
echo "1000 0" >$pgo/entry_sampling
profile never
step never
echo "16000 4000" >$pgo/entry_sampling
profile quarter
step quarter

# Bad settings: each write refused, nothing changed.
for bad in "16000 16001" "0 0" "60000001 1" "abc 1" "16000" "16000 -1" "1 2 3" "2 1" \
	"16000 15950"; do
	if echo "$bad" >$pgo/entry_sampling 2>/dev/null; then
		echo "accepted: $bad" >>$r/refusals
	else
		echo "refused: $bad" >>$r/refusals
	fi
done
cat $pgo/entry_sampling >$r/settings-after
step refusals

# A reset of vmlinux's counts restarts the figures of their weight.
sleep 1
cat $pgo/entry_sampling >$r/before-reset
echo 1 >$pgo/reset
cat $pgo/entry_sampling >$r/after-reset
step reset

# Work at once after a reset, or after new settings, is counted as work
# at any other time. Bursts of a quarter (200 ms in 800); 48 times a reset
# and at once the module's work, its profile each time, then 48 times the
# same with the settings written again instead of the reset; 50 ms apart,
# so that the loops span several cycles.
insmod /kpgo/pgo_entrybench.ko calls=20000
for restart in reset settings; do
	echo "800000 200000" >$pgo/entry_sampling
	i=0
	while [ $i -lt 48 ]; do
		if [ $restart = reset ]; then
			echo 1 >$pgo/reset
		else
			echo "800000 200000" >$pgo/entry_sampling
			echo 1 >$pgo/reset
		fi
		cat /sys/kernel/debug/pgo_entrybench/run >/dev/null
		cat $pgo/pgo_entrybench.profraw >$r/after-$restart-$i.profraw
		sleep 0.05
		i=$((i + 1))
	done
	step after-$restart
done
rmmod pgo_entrybench
