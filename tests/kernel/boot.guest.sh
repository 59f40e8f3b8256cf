# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/boot.sh.
set -e
. /kpgo/guest-lib.sh
# The harness mounted debugfs; the profile files will live there.
grep ' /sys/kernel/debug debugfs ' /proc/mounts >"$KPGO_RESULTS/debugfs-mount"
ls -la /sys/kernel/debug >"$KPGO_RESULTS/debugfs-ls"
uname -a >"$KPGO_RESULTS/uname"
cat /proc/cmdline >"$KPGO_RESULTS/cmdline"
# The notes of the running kernel (tests/kernel/optimized.sh reads its
# profile note there).
cat /sys/kernel/notes >"$KPGO_RESULTS/notes"
step done
echo "guest script reached"
