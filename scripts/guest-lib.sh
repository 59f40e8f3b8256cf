# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# The guest side of scripts/qemu-run (busybox sh), which puts this file at
# /kpgo/guest-lib.sh; guest scripts source it first:
#
#   step NAME   records that the script got to NAME, a line of
#               $KPGO_RESULTS/steps.  A check on the host of what a step
#               was to leave (or not leave) behind first requires that the
#               step was reached (tests/kernel/lib.sh check_after,
#               tests/kernel/judge.py Results.reached): a guest that died
#               before it fails the check instead of passing it.
step() {
	echo "$1" >>"$KPGO_RESULTS/steps"
}

# run_callees N: N reads of pgo_test_callees' run file
# (tests/kernel/modules/pgo_test_callees.c), one read() each: one call of
# its read function by vmlinux per read.
run_callees() {
	i=0
	while [ $i -lt "$1" ]; do
		dd if=/sys/kernel/debug/pgo_test_callees/run of=/dev/null bs=64 count=1 2>/dev/null
		i=$((i + 1))
	done
}

# save_results: under qemu-run --reboots, writes $KPGO_RESULTS onto the
# results disk now, where the next boot starts from (before a crash on
# purpose; qemu-run's /init writes them at the end otherwise).
save_results() {
	tar -c -f - -C "$KPGO_RESULTS" . >/dev/vda && sync
}
