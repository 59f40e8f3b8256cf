# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest booted with lockdown=integrity, started by
# tests/kernel/lockdown.sh. Records what works and what is refused.
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
cat /sys/kernel/security/lockdown >$r/lockdown 2>&1 ||
	{ mount -t securityfs none /sys/kernel/security && cat /sys/kernel/security/lockdown >$r/lockdown; }
ls -ln $pgo >$r/ls 2>&1
cat $pgo/vmlinux.profraw >$r/vmlinux.profraw 2>$r/vmlinux.err
echo "read=$?" >>$r/status
cat $pgo/stats >$r/stats 2>$r/stats.err
echo "stats=$?" >>$r/status
(echo 1 >$pgo/reset) 2>$r/reset.err
echo "reset=$?" >>$r/status
dmesg | grep -i lockdown >$r/dmesg-lockdown
true
