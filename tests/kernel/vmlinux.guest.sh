# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/vmlinux.sh.
# Takes the profiles the host checks; the checks themselves run on the host
# with llvm-profdata-19.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
calls=$(sed -n "s/.*kpgo_getpid_calls=\([0-9]*\).*/\1/p" /proc/cmdline)
calls=${calls:-5000}

ls -ln $pgo >$r/ls
cat $pgo/stats >$r/stats.boot
cat $pgo/vmlinux.profraw >$r/boot.profraw
step boot
/kpgo/getpid_loop "$calls"
cat $pgo/vmlinux.profraw >$r/after-getpid.profraw
cat $pgo/stats >$r/stats.after-getpid
step getpid

# One open file, read byte by byte, then again in bulk after a seek.
/kpgo/snapshot_reads $pgo/vmlinux.profraw $r/bytewise.profraw $r/bulk.profraw
step snapshot-reads

# Reset, then the same workload: counts restart, the pool is reused.
echo 1 >$pgo/reset
cat $pgo/vmlinux.profraw >$r/after-reset.profraw
step reset
/kpgo/getpid_loop "$calls"
cat $pgo/stats >$r/stats.again
step again

# Garbage is refused and changes nothing: unknown names, the module:
# syntax for a module that does not exist (vmlinux is not a module),
# empty, a second newline, over 64 bytes, not UTF-8.
long=$(printf '%065d' 0)
for word in 2 garbage "" vmlinuxx "1 1" "vmlinux " "module:" "module:vmlinux" \
	"module:nosuch" "all
" "$long" "$(printf 'vmlinux\377')"; do
	if printf '%s\n' "$word" >$pgo/reset 2>/dev/null; then
		echo "accepted: '$word'" >>$r/reset-accepted
	fi
done
step garbage
# The profile is read only: a write, even as root, is refused at open.
if echo 1 >$pgo/vmlinux.profraw 2>/dev/null; then
	echo accepted >$r/profraw-write-accepted
fi
step profraw-write
cat $pgo/vmlinux.profraw >$r/after-garbage.profraw
cat $pgo/stats >$r/stats.after-garbage
# Reset of the kernel image by its name.
echo vmlinux >$pgo/reset
cat $pgo/vmlinux.profraw >$r/after-reset-vmlinux.profraw
cat $pgo/reset >$r/reset-read
step reset-vmlinux
# Time to read the whole profile in the guest (/proc/uptime: 10 ms steps).
start=$(cut -d' ' -f1 /proc/uptime)
cat $pgo/vmlinux.profraw >/dev/null
end=$(cut -d' ' -f1 /proc/uptime)
awk -v a="$start" -v b="$end" 'BEGIN { printf "%d\n", (b - a) * 1000 }' >$r/read-ms
step done
echo "vmlinux guest done"
