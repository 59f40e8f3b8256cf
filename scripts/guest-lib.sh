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
