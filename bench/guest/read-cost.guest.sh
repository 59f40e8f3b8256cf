# SPDX-License-Identifier: GPL-2.0
# One boot of bench/read-cost: loads the callee test module and pgo_test_a,
# runs the callee module 7 times, then reads the callee module's profile
# once (its first read), vmlinux's profile 20 times and each module's 200
# times; "<file> <bytes> <reads> <uptime before>
# <uptime after>" lines in read-cost (guest time: under -icount, the
# instructions).
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
insmod /kpgo/pgo_test_a.ko
insmod /kpgo/pgo_test_callees.ko
run_callees 7
# The first read of a module calling vmlinux's functions: it may pay for
# what later reads reuse (the runtime's index of vmlinux's names).
t0=$(cut -d' ' -f1 /proc/uptime)
bytes=$(cat $pgo/pgo_test_callees.profraw | wc -c)
t1=$(cut -d' ' -f1 /proc/uptime)
echo "pgo_test_callees(1st) $bytes 1 $t0 $t1" >>$r/read-cost
for spec in vmlinux:20 pgo_test_callees:200 pgo_test_a:200; do
	f=${spec%%:*} n=${spec##*:}
	bytes=$(cat $pgo/$f.profraw | wc -c)
	t0=$(cut -d' ' -f1 /proc/uptime)
	i=0
	while [ $i -lt "$n" ]; do
		cat $pgo/$f.profraw >/dev/null
		i=$((i + 1))
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$f $bytes $n $t0 $t1" >>$r/read-cost
done
cat $r/read-cost
