# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh, KASAN kernel), started by
# tests/kernel/lifecycle.sh faults: loads and unloads pgo_test_a with
# allocation failures injected (/kpgo/fail_nth), and takes the module's
# profile after every attempt; the host judges them and the console.
#
#   A       fail-nth over the whole load path (slab allocations):
#           N = 1, 2, ... until a load succeeds with nothing injected.
#   B       fail-nth confined to kpgo's own allocations (failslab and
#           fail_page_alloc, stack filter on kpgo's text):
#     load-new  each attempt under a name never loaded before (pgo_n_N):
#               a first load, which creates the module's entry and file;
#     load      pgo_test_a again (its entry exists);
#     unload    pgo_test_a loaded normally, the unload faulted.
#   C       failslab with a 30% probability on the loading task, kpgo's
#           allocations only, new names (pgo_c_I): several faults a load.
#   D       reads of pgo_test_callees' profile, which names vmlinux's
#           int_sqrt (kpgo's allocations only, as B): 30 with 30% of them
#           failing, slab and pages, then fail-nth N = 1, 2, ...
#   Then a normal load must profile exactly; kmemleak must be clean.
#
# kmemleak's own metadata allocations count as fault sites too (every
# second site or so); their failure is silent and harmless.
#
# The operations under test may fail (that is their point): their status
# is recorded. Any other failure ends the script, and the host sees from
# its steps how far it got.
set -eu
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
k=/kpgo
fi=/sys/kernel/debug
mark() { echo "lifecycle: $*" >/dev/kmsg; }
mkdir -p $r/A $r/B $r/C $r/D
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
# $1: directory, $2: attempt, $3: module name.
after() {
	if [ -e $pgo/$3.profraw ]; then
		cat $pgo/$3.profraw >$r/$1/$2.profraw
	fi
	if grep -q "^$3 " /proc/modules; then
		echo "$2" >>$r/$1/loaded
		rmmod $3 || echo "$2" >>$r/$1/rmmod-failed
	fi
	echo all >$pgo/reset
}

# Loops fail_nth N=1,2,... until an attempt injects nothing.
# $1: phase, $2: load, load-new or unload.
nth_loop() {
	n=1
	while [ $n -le "$max_nth" ]; do
		name=pgo_test_a
		case $2 in
		unload) $k/fail_nth 0 load $k/pgo_test_a.ko >/dev/null ;;
		load-new) name=pgo_n_$n ;;
		esac
		mark "fault $1 $2 nth=$n start"
		# fail_nth prints its line whether the operation failed or not.
		case $2 in
		load) line=$($k/fail_nth $n load $k/pgo_test_a.ko) || true ;;
		load-new) line=$($k/fail_nth $n load-as $name $k/pgo_test_a.ko) || true ;;
		unload) line=$($k/fail_nth $n unload pgo_test_a) || true ;;
		esac
		mark "fault $1 $2 nth=$n end"
		echo "$line name=$name" >>$r/$1/attempts
		after $1 "$2-$n" $name
		case $line in
		*result=0\ fired=0) break ;;
		*fired=0) echo "$n: not injected yet failed: $line" >>$r/$1/anomalies ;;
		esac
		n=$((n + 1))
	done
	step "$1-$2"
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
nth_loop B load-new
nth_loop B load
nth_loop B unload
mark "phase B end"

# C: 30% of kpgo's allocations fail in the loading task. The task filter
# first: until it is on, the probability would apply to every task.
echo Y >$fi/failslab/task-filter
echo 1 >$fi/failslab/interval
echo -1 >$fi/failslab/times
echo 30 >$fi/failslab/probability
mark "phase C start"
i=1
while [ $i -le 30 ]; do
	mark "fault C load-new i=$i start"
	sh -c "echo 1 >/proc/self/make-it-fail
		exec $k/fail_nth 0 load-as pgo_c_$i $k/pgo_test_a.ko" >/dev/null 2>&1 || true
	mark "fault C load-new i=$i end"
	after C "load-new-$i" pgo_c_$i
	i=$((i + 1))
done
echo 0 >$fi/failslab/probability
echo N >$fi/failslab/task-filter
mark "phase C end"
step C

# D: fail-nth over a profile read that names another object's function,
# kpgo's allocations only (B's stack filter): pgo_test_callees' profile
# names vmlinux's int_sqrt, and the first such read of a boot builds the
# index of vmlinux's names. N = 1, 2, ... until a read injects nothing;
# each either fails with ENOMEM or gives a valid profile (perhaps naming
# nothing).
mark "phase D start"
insmod $k/pgo_test_callees.ko
run_callees 3
# First 30 reads with 30% of kpgo's allocations failing, slab and pages
# (kvmalloc falls back from one to the other: one fault at a time never
# reaches its caller), while the index is still to be built.
for attr in failslab fail_page_alloc; do
	echo Y >$fi/$attr/task-filter
	echo 1 >$fi/$attr/interval
	echo -1 >$fi/$attr/times
	echo 30 >$fi/$attr/probability
done
i=1
while [ $i -le 30 ]; do
	mark "fault D read-p i=$i start"
	line=$(sh -c "echo 1 >/proc/self/make-it-fail
		exec $k/fail_nth 0 read $pgo/pgo_test_callees.profraw $r/D/read-p-$i.profraw") || true
	mark "fault D read-p i=$i end"
	echo "$line name=pgo_test_callees i=$i" >>$r/D/attempts-p
	i=$((i + 1))
done
for attr in failslab fail_page_alloc; do
	echo 0 >$fi/$attr/probability
	echo N >$fi/$attr/task-filter
done
cat $pgo/stats >$r/stats-D-p
# Then fail-nth, one fault a read.
n=1
while [ $n -le "$max_nth" ]; do
	mark "fault D read nth=$n start"
	line=$($k/fail_nth $n read $pgo/pgo_test_callees.profraw $r/D/read-$n.profraw) || true
	mark "fault D read nth=$n end"
	echo "$line name=pgo_test_callees" >>$r/D/attempts
	case $line in
	*result=0\ fired=0) break ;;
	*fired=0) echo "$n: not injected yet failed: $line" >>$r/D/anomalies ;;
	esac
	n=$((n + 1))
done
cat $pgo/stats >$r/stats-D
rmmod pgo_test_callees
echo all >$pgo/reset
mark "phase D end"
step D

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
step final

mark "kmemleak start"
echo scan >$fi/kmemleak
sleep 6
echo scan >$fi/kmemleak
cat $fi/kmemleak >$r/kmemleak
mark "kmemleak end"
step done
echo "lifecycle faults guest done"
