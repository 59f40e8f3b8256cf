# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest booted with lockdown=integrity, started by
# tests/kernel/lockdown.sh. Records what works and what is refused: the
# status of each attempt goes to $r/status, so that an attempt that must
# fail does not stop the script, and anything else that fails does.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
# attempt NAME COMMAND...: runs COMMAND, records "NAME=status".
attempt() {
	name=$1
	shift
	status=0
	"$@" || status=$?
	echo "$name=$status" >>$r/status
}
if ! cat /sys/kernel/security/lockdown >$r/lockdown 2>/dev/null; then
	mount -t securityfs none /sys/kernel/security
	cat /sys/kernel/security/lockdown >$r/lockdown
fi
ls -ln $pgo >$r/ls
step lockdown
attempt read sh -c "cat $pgo/vmlinux.profraw >$r/vmlinux.profraw 2>$r/vmlinux.err"
attempt stats sh -c "cat $pgo/stats >$r/stats 2>$r/stats.err"
# A file that can be mapped is not a plain read-only file to debugfs.
attempt live sh -c "cat $pgo/live/vmlinux.profraw >/dev/null 2>$r/live.err"
# A subshell: busybox applies 2> only after the > that fails.
attempt reset sh -c "(echo 1 >$pgo/reset) 2>$r/reset.err"
step attempts
dmesg | grep -i lockdown >$r/dmesg-lockdown
step done
