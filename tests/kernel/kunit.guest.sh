# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/kunit.sh. The
# built-in KUnit suites ran at boot, before this script; it takes their
# results from debugfs, the console's test_bitmap lines and, on the
# instrumented kernel, the profile of that run.
set -e
. /kpgo/guest-lib.sh
r=$KPGO_RESULTS
mkdir -p $r/kunit
for suite in /sys/kernel/debug/kunit/*/; do
	name=$(basename "$suite")
	cat "$suite/results" >"$r/kunit/$name"
done
step kunit
dmesg | grep 'test_bitmap:' >$r/test_bitmap || true
step bitmap
if [ -e /sys/kernel/debug/pgo/vmlinux.profraw ]; then
	cat /sys/kernel/debug/pgo/vmlinux.profraw >$r/vmlinux.profraw
	step profile
fi
