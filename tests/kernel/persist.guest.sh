# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/persist.sh
# with qemu-run --reboots: vmlinux's counters in the reserve_mem= region
# 'kpgo'. Boot 1 counts a known workload, switches an epoch halfway,
# saves its results and panics (SysRq c) while another workload runs;
# boot 2 serves boot 1's profile. With persist_test=crash on the command
# line, a boot only crashes; with persist_test=other, it only records
# what it found (another kernel build crashed before it, or the region
# was refused).
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
mode=$(sed -n 's/.*persist_test=\([a-z]*\).*/\1/p' /proc/cmdline)
b=$r/boot$KPGO_BOOT
mkdir -p "$b"
dmesg | grep 'kpgo' >"$b/dmesg" || true
cat $pgo/stats >"$b/stats"
ls $pgo/previous >"$b/previous-files"
step "boot$KPGO_BOOT"

crash() {
	step crashing
	save_results
	# In the middle of a workload.
	while :; do cat /proc/uptime >/dev/null; done &
	sleep 1
	echo c >/proc/sysrq-trigger
}

case $mode.$KPGO_BOOT in
crash.*)
	crash
	;;
other.*)
	if cat $pgo/previous/vmlinux.profraw >/dev/null 2>"$b/previous-error"; then
		echo opened >"$b/previous-opened"
	fi
	cat $pgo/vmlinux.profraw >"$b/vmlinux.profraw"
	step other
	;;
.1)
	cat $pgo/vmlinux.profraw >"$b/before.profraw"
	/kpgo/getpid_loop 5000
	echo 1 >$pgo/epoch
	/kpgo/getpid_loop 3000
	cat $pgo/stats >"$b/stats-switched"
	crash
	;;
.2)
	cat $pgo/previous/vmlinux.profraw >"$b/previous.profraw"
	cat $pgo/previous/vmlinux.profraw >"$b/previous-again.profraw"
	cat $pgo/vmlinux.profraw >"$b/vmlinux.profraw"
	# The live file maps the region's set 0.
	cat $pgo/live/vmlinux.profraw >"$b/live-before.profraw"
	/kpgo/getpid_loop 1000
	cat $pgo/live/vmlinux.profraw >"$b/live-after.profraw"
	cat $pgo/stats >"$b/stats-end"
	step served
	;;
esac
