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
# vmlinux's Rust records, where they are apart (rustc writes another raw
# version than clang): tests/kernel/optimized.sh applies them to Rust.
if [ -e $pgo/vmlinux-rust.profraw ]; then
	cat $pgo/vmlinux-rust.profraw >$r/after-getpid-rust.profraw
fi
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
# Resets back to back: a read that any of them overlaps starts again (a
# reset is a change of the entry), so none completes while they go on;
# SIGKILL ends it (it checks at each new start). Then a read completes.
state() { cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null || echo gone; }
(while [ ! -e /tmp/resets-stop ]; do echo vmlinux >$pgo/reset; done) &
resets=$!
sleep 1
cat $pgo/vmlinux.profraw >/tmp/during-resets.profraw &
reader=$!
sleep 3
case $(state $reader) in Z | gone) ;; *) echo running >$r/reader-during-resets ;; esac
kill -9 $reader
i=0
while [ $i -lt 50 ]; do
	case $(state $reader) in Z | gone) echo "$i" >$r/reader-killed-ds; break ;; esac
	sleep 0.1
	i=$((i + 1))
done
case $(state $resets) in Z | gone) ;; *) echo running >$r/resets-ran-on ;; esac
touch /tmp/resets-stop
wait $resets || true
wait $reader 2>/dev/null || true
cat $pgo/vmlinux.profraw >$r/after-resets.profraw
step reset-storm
# Time to read the whole profile in the guest (/proc/uptime: 10 ms steps).
start=$(cut -d' ' -f1 /proc/uptime)
cat $pgo/vmlinux.profraw >/dev/null
end=$(cut -d' ' -f1 /proc/uptime)
awk -v a="$start" -v b="$end" 'BEGIN { printf "%d\n", (b - a) * 1000 }' >$r/read-ms
step done
echo "vmlinux guest done"
