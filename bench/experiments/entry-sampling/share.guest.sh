# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by
# bench/experiments/entry-sampling/share: the same work (system calls of
# tests/kernel/guest/neighbours.c and a getpid loop, eight times) sampled
# at 4 ms in 256 twice, "cold" (the first time it runs in the boot) and
# "warm", then once with bursts always on ("full"), each since a reset,
# with pgo/entry_sampling's figures.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
ip link set lo up
work() {
	for i in 1 2 3 4 5 6 7 8; do
		/kpgo/neighbours 3000
		/kpgo/getpid_loop 300000
	done
}
echo "256000 4000" >$pgo/entry_sampling
sleep 1
for phase in cold warm; do
	echo 1 >$pgo/reset
	work
	cat $pgo/vmlinux.profraw >$r/$phase.profraw
	cat $pgo/entry_sampling >$r/$phase.settings
done
echo "256000 256000" >$pgo/entry_sampling
echo 1 >$pgo/reset
/kpgo/neighbours 3000
/kpgo/getpid_loop 300000
cat $pgo/vmlinux.profraw >$r/full.profraw
step done
