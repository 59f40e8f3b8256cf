# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, KASAN kernel, 2 CPUs), started by
# tests/kernel/lifecycle.sh stress: for kpgo_stress_seconds (kernel
# command line, default 180), all at once:
#   - insmod/rmmod loops of pgo_test_b, pgo_test_async, pgo_test_initfail
#     (whose init fails) and pgo_a2 (pgo_test_a renamed);
#   - pgo_test_a loaded throughout and run in a loop;
#   - readers of every .profraw file and of stats (every dump goes to the
#     host, which has llvm-profdata);
#   - resets of all, of vmlinux, of one module by name and with module:,
#     and writes to a .profraw file, which must fail;
#   - a syscall workload (bench/guest/syscalls.c, getpid_loop);
#   - NMI backtraces of all CPUs (echo l >/proc/sysrq-trigger) every
#     second: instrumented code, and so the hooks, in NMI context.
# Then pgo_test_a, loaded again after a reset, is run 20 times while the
# load loops go on: its profile must be exactly 21 runs.
#
# What may fail under the storm is counted (loads, reads, resets); any
# other failure ends the script, and the host sees from its steps how far
# it got.
set -eu
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
k=/kpgo
c=/tmp/counts
mark() { echo "lifecycle: $*" >/dev/kmsg; }
mkdir -p $c $r/dumps
echo clear >/sys/kernel/debug/kmemleak
seconds=$(sed -n 's/.*kpgo_stress_seconds=\([0-9]*\).*/\1/p' /proc/cmdline)
seconds=${seconds:-180}

# Counter $1 + 1. Each counter has one writer (one loop).
count() {
	n=0
	[ -e $c/$1 ] && read -r n <$c/$1
	echo $((n + 1)) >$c/$1
}

# Load loop of module file $1 (name $2); "-" as name: init fails.
load_loop() {
	while [ ! -e /tmp/$3 ]; do
		# One finit_module() per load (busybox insmod would retry a
		# failed one with init_module()).
		if $k/fail_nth 0 load "$1" >/dev/null; then
			count "loads.$2"
			rmmod "$2" && count "unloads.$2"
		else
			count "failed-loads.$2"
		fi
	done
}

# slots 0 and 1 churn; pgo_test_a keeps a later slot.
insmod $k/pgo_test_b.ko
insmod $k/pgo_test_async.ko
insmod $k/pgo_test_a.ko
rmmod pgo_test_b
rmmod pgo_test_async

mark "stress start"
start=$(cut -d. -f1 /proc/uptime)
load_loop $k/pgo_test_b.ko pgo_test_b stop &
load_loop $k/pgo_test_async.ko pgo_test_async stop &
load_loop $k/pgo_test_initfail.ko pgo_test_initfail stop &
load_loop $k/named/pgo_a2.ko pgo_a2 stop &
(while [ ! -e /tmp/stop ]; do
	cat /sys/kernel/debug/pgo_test_a/run >/dev/null && count runs.pgo_test_a
done) &
# Readers: each file in turn; the dumps go to the host.
reader() {
	i=0
	while [ ! -e /tmp/stop ]; do
		for f in $pgo/*.profraw; do
			name=${f##*/}
			if cat "$f" >/tmp/dump.$1 2>/dev/null; then
				count reads.$1
			else
				count failed-reads.$1
			fi
			mv /tmp/dump.$1 "$r/dumps/$1-$i-$name"
		done
		cat $pgo/stats >/dev/null && count stats-reads.$1
		i=$((i + 1))
	done
}
reader r1 &
reader r2 &
(while [ ! -e /tmp/stop ]; do
	for command in all vmlinux pgo_test_b module:pgo_test_async \
		module:pgo_test_initfail pgo_a2 module:pgo_test_a; do
		if echo "$command" >$pgo/reset 2>/dev/null; then
			count "resets"
		else
			# Unloaded meanwhile (never-loaded names are refused).
			count "refused-resets"
		fi
	done
	for f in $pgo/pgo_test_a.profraw $pgo/vmlinux.profraw; do
		if echo 1 >"$f" 2>/dev/null; then
			count accepted-profraw-writes
		else
			count refused-profraw-writes
		fi
	done
	sleep 1
done) &
(while [ ! -e /tmp/stop ]; do
	$k/syscalls 0.2 >/dev/null && count syscall-bench
	$k/getpid_loop 5000 && count getpid-loops
done) &
(while [ ! -e /tmp/stop ]; do
	echo l >/proc/sysrq-trigger && count sysrq-backtraces
	sleep 1
done) &

sleep "$seconds"
touch /tmp/stop
wait
end=$(cut -d. -f1 /proc/uptime)
echo $((end - start)) >$r/stress-seconds
mark "stress end"
ls -ln $pgo >$r/ls-stress
cat $pgo/stats >$r/stats-stress
# One more trigger, with no reset running: its NMI handler's counts.
echo vmlinux >$pgo/reset
echo l >/proc/sysrq-trigger
cat $pgo/vmlinux.profraw >$r/vmlinux-after-nmi.profraw
step storm

# Exact counts after the storm, while modules keep loading and unloading.
mark "exact start"
rmmod pgo_test_a
echo all >$pgo/reset
insmod $k/pgo_test_a.ko
load_loop $k/pgo_test_b.ko pgo_test_b stop2 &
load_loop $k/pgo_test_async.ko pgo_test_async stop2 &
load_loop $k/pgo_test_initfail.ko pgo_test_initfail stop2 &
i=0
while [ $i -lt 20 ]; do
	cat /sys/kernel/debug/pgo_test_a/run >/dev/null
	i=$((i + 1))
	sleep 0.2
done
touch /tmp/stop2
wait
cat $pgo/pgo_test_a.profraw >$r/a-after-storm.profraw
rmmod pgo_test_a
mark "exact end"
step exact

for f in $c/*; do echo "${f##*/}=$(cat "$f")"; done >$r/counts
mark "kmemleak start"
echo scan >/sys/kernel/debug/kmemleak
sleep 6
echo scan >/sys/kernel/debug/kmemleak
cat /sys/kernel/debug/kmemleak >$r/kmemleak
mark "kmemleak end"
step done
echo "lifecycle stress guest done"
