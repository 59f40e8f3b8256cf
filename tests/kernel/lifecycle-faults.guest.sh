# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, KASAN kernel), started by
# tests/kernel/lifecycle.sh faults: loads and unloads pgo_test_a with
# allocation failures injected, and takes the module's profile after
# every attempt; the host judges them and the console.
#
#   A  fail-nth over the whole finit_module() path, slab allocations:
#      N = 1, 2, ... until a load succeeds with no fault injected.
#   B  fail-nth confined to kpgo's own allocations (failslab and
#      fail_page_alloc, stack filter on kpgo's text): loads, then unloads
#      (a normal load first), N = 1, 2, ... until nothing is injected.
#   C  failslab with a probability on the insmod task, kpgo's allocations
#      only: several faults in one load.
#   Then a normal load must profile exactly; kmemleak must be clean.
set -u
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
k=/kpgo
fi=/sys/kernel/debug
mark() { echo "lifecycle: $*" >/dev/kmsg; }
mkdir -p $r/A $r/B $r/C
echo clear >$fi/kmemleak
max_nth=$(sed -n 's/.*kpgo_max_nth=\([0-9]*\).*/\1/p' /proc/cmdline)
max_nth=${max_nth:-3000}

for attr in failslab fail_page_alloc; do
	echo N >$fi/$attr/ignore-gfp-wait
	echo 2 >$fi/$attr/verbose
	echo 32 >$fi/$attr/stacktrace-depth
done
echo N >$fi/fail_page_alloc/ignore-gfp-highmem
echo 0 >$fi/fail_page_alloc/min-order
# A counts slab allocations only: page allocations (the module image, the
# shadow of vmalloc'ed memory) would multiply the attempts.
echo Y >$fi/fail_page_alloc/ignore-gfp-wait

# After an attempt: the module's file, then unload (if loaded) and reset.
# $1: directory, $2: attempt, $3: 0 if the module is loaded.
after() {
	if [ -e $pgo/pgo_test_a.profraw ]; then
		cat $pgo/pgo_test_a.profraw >$r/$1/$2.profraw
	fi
	if [ "$3" = 0 ]; then
		echo "$2" >>$r/$1/loaded
		rmmod pgo_test_a || echo "$2" >>$r/$1/rmmod-failed
	fi
	echo all >$pgo/reset
}

# Loops fail_nth N=1,2,... over OP until an attempt injects nothing.
# $1: phase (A or B), $2: load or unload.
nth_loop() {
	n=1
	while [ $n -le "$max_nth" ]; do
		if [ "$2" = unload ]; then
			insmod $k/pgo_test_a.ko
		fi
		mark "fault $1 $2 nth=$n start"
		if [ "$2" = load ]; then
			line=$(/kpgo/fail_nth $n load $k/pgo_test_a.ko)
		else
			line=$(/kpgo/fail_nth $n unload pgo_test_a)
		fi
		mark "fault $1 $2 nth=$n end"
		echo "$line" >>$r/$1/attempts
		loaded=1
		grep -q '^pgo_test_a ' /proc/modules && loaded=0
		after $1 "$2-$n" $loaded
		case $line in
		*result=0\ fired=0) break ;;
		*fired=0) echo "$n: not injected yet failed: $line" >>$r/$1/anomalies ;;
		esac
		n=$((n + 1))
	done
}

mark "phase A start"
nth_loop A load
mark "phase A end"

# B: only stacks that go through kpgo's text (range from the host).
read -r start end <$k/kpgo-text-range
for attr in failslab fail_page_alloc; do
	echo "$start" >$fi/$attr/require-start
	echo "$end" >$fi/$attr/require-end
	echo N >$fi/$attr/ignore-gfp-wait
done
mark "phase B start"
nth_loop B load
nth_loop B unload
mark "phase B end"

# C: 30% of kpgo's allocations fail in insmod's task.
echo 30 >$fi/failslab/probability
echo 1 >$fi/failslab/interval
echo -1 >$fi/failslab/times
echo Y >$fi/failslab/task-filter
echo 1 >$fi/failslab/verbose
mark "phase C start"
i=1
while [ $i -le 30 ]; do
	mark "fault C load i=$i start"
	# fail_nth 0: one finit_module() (busybox insmod would retry).
	sh -c "echo 1 >/proc/self/make-it-fail; exec /kpgo/fail_nth 0 load $k/pgo_test_a.ko" \
		>/dev/null
	mark "fault C load i=$i end"
	loaded=1
	grep -q '^pgo_test_a ' /proc/modules && loaded=0
	after C "load-$i" $loaded
	i=$((i + 1))
done
echo 0 >$fi/failslab/probability
mark "phase C end"

# A normal load after all that: exact, also after 2 more runs.
mark "final start"
insmod $k/pgo_test_a.ko
cat $pgo/pgo_test_a.profraw >$r/final-1.profraw
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
cat /sys/kernel/debug/pgo_test_a/run >/dev/null
cat $pgo/pgo_test_a.profraw >$r/final-3.profraw
rmmod pgo_test_a
cat $pgo/pgo_test_a.profraw >$r/final-kept.profraw
cat $pgo/stats >$r/stats-final
mark "final end"

mark "kmemleak start"
echo scan >$fi/kmemleak
sleep 6
echo scan >$fi/kmemleak
cat $fi/kmemleak >$r/kmemleak
mark "kmemleak end"
echo "lifecycle faults guest done"
