# SPDX-License-Identifier: GPL-2.0
# One benchmark boot (scripts/benchmark-kernels): the syscall suite, its
# "<name> <ops/s>" lines kept in the results; with kpgo_bench_model on the
# command line, its fixed-count windows for the front-end model instead
# ("<name> <ops> <guest ns>"); with kpgo_bench_cpus=N, on each of N CPUs
# at once (sums over them).
set -e
cpus=$(sed -n 's/.*kpgo_bench_cpus=\([0-9]*\).*/\1/p' /proc/cmdline)
cpus=${cpus:-1}
online=$(grep -c '^processor' /proc/cpuinfo)
[ "$online" -ge "$cpus" ] || { echo "bench: $online CPUs online, not $cpus" >&2; exit 1; }
if grep -qw kpgo_bench_model /proc/cmdline; then
	/kpgo/syscalls --cpus "$cpus" --model >"$KPGO_RESULTS/model-ops"
	cat "$KPGO_RESULTS/model-ops"
	exit 0
fi
# The clock the benchmarks are timed with (scripts/benchmark-kernels checks it).
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$KPGO_RESULTS/clocksource"
seconds=$(sed -n 's/.*kpgo_bench_seconds=\([0-9.]*\).*/\1/p' /proc/cmdline)
/kpgo/syscalls --cpus "$cpus" "${seconds:-0.5}" >"$KPGO_RESULTS/ops"
cat "$KPGO_RESULTS/ops"
