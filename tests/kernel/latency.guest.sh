# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/latency.sh:
# loads a module of about a million counters and, with the timerlat
# tracer waking its SCHED_FIFO thread every millisecond on the one CPU,
# reads the module's profile, lays out and reads its live file, switches
# an epoch and reads it; the longest thread latency of each, and of an
# idle stretch, go to the results.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
t=/sys/kernel/tracing
r=$KPGO_RESULTS
mount -t tracefs nodev $t 2>/dev/null || true
cat /proc/cmdline >$r/cmdline
insmod /kpgo/pgo_huge.ko
grep '^object=pgo_huge ' $pgo/stats >$r/stats
step loaded

echo 8192 >$t/buffer_size_kb
echo 1000 >$t/osnoise/timerlat_period_us
# The longest thread latency (ns) of `$@`'s run.
measure() {
	name=$1
	shift
	echo >$t/trace
	echo timerlat >$t/current_tracer
	echo 1 >$t/tracing_on
	sleep 1
	start=$(cut -d' ' -f1 /proc/uptime)
	"$@" >/dev/null
	end=$(cut -d' ' -f1 /proc/uptime)
	sleep 1
	echo 0 >$t/tracing_on
	# The longest latency (ns), the wakeups, and how long the work took (s).
	awk -v took="$start $end" '/context +thread/ { for (i = 1; i < NF; i++) if ($i == "timer_latency" && $(i + 1) > max) max = $(i + 1); n++ }
		END { split(took, t, " "); printf "%d %d %.2f\n", max, n, t[2] - t[1] }' $t/trace >$r/$name
	echo nop >$t/current_tracer
	step "$name"
}
measure idle sleep 3
measure read cat $pgo/pgo_huge.profraw
measure live cat $pgo/live/pgo_huge.profraw
measure epoch sh -c "echo 1 >$pgo/epoch"
measure epoch-read cat $pgo/epochs/pgo_huge.profraw
rmmod pgo_huge
step done
