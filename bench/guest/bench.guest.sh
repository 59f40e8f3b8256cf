# SPDX-License-Identifier: GPL-2.0
# One benchmark boot (scripts/benchmark-kernels): the syscall suite, its
# "<name> <ops/s>" lines kept in the results.
set -e
seconds=$(sed -n 's/.*kpgo_bench_seconds=\([0-9.]*\).*/\1/p' /proc/cmdline)
/kpgo/syscalls "${seconds:-0.5}" >"$KPGO_RESULTS/ops"
cat "$KPGO_RESULTS/ops"
