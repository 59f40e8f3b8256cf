# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/module.sh.
set -e
insmod /kpgo/kpgo_test.ko iterations=1000
cat /sys/kernel/debug/kpgo_test/run >"$KPGO_RESULTS/run"
grep kpgo_test /proc/modules >"$KPGO_RESULTS/modules"
ls -la /sys/kernel/debug/pgo >"$KPGO_RESULTS/pgo-ls" 2>&1 || true
rmmod kpgo_test
if grep -q kpgo_test /proc/modules; then
	echo "kpgo_test still loaded"
	exit 1
fi
echo unloaded >"$KPGO_RESULTS/unloaded"
