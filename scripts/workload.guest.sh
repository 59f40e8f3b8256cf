# SPDX-License-Identifier: GPL-2.0
# The profiling workload of `make` (scripts/profile-kernel), in the guest:
# the in-tree modules of the build (if any), system calls, files, pipes
# and processes, the modules' own work, then every profile file.
# kpgo_workload_quarters=N (1 to 4, default 4) on the kernel command line
# runs every loop N quarters of its full length (profile convergence).
# The profiles of that main work go to main/, then the system calls of
# tests/kernel/guest/neighbours.c run, next to the untrained benchmarks'
# (they share their code without entering them), and the profiles of it
# all are read: the optimized build applies those, with the hot and cold
# counts of main/ (scripts/profile-kernel).
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
quarters=$(sed -n 's/.*kpgo_workload_quarters=\([1-4]\).*/\1/p' /proc/cmdline)
quarters=${quarters:-4}
scaled() { echo $(($1 * quarters / 4)); }
echo 1 >$pgo/reset # profile the workload, not the boot
step reset

# In-tree modules, in the load order the host computed from modules.dep.
# A module whose init fails here (no such hardware) is still profiled: its
# file keeps what its init ran.
# tcrypt takes its test as a parameter, and fails its init on purpose: it
# is loaded below, for the hash.
if [ -f /kpgo/modules.order ]; then
	while read -r ko; do
		[ "$ko" != tcrypt.ko ] || continue
		insmod "/kpgo/modules/$ko" 2>>$r/insmod-errors ||
			echo "$ko" >>$r/insmod-failed
	done </kpgo/modules.order
fi
cat /proc/modules >$r/modules-loaded
step modules-loaded

/kpgo/getpid_loop "$(scaled 100000)"
mkdir -p /tmp/w
files=$(scaled 20)
i=0
while [ $i -lt "$files" ]; do
	dd if=/dev/zero of=/tmp/w/f$i bs=4k count=64 2>/dev/null
	i=$((i + 1))
done
tar cf /tmp/w.tar /tmp/w /bin
gzip -c /tmp/w.tar | gunzip -c | md5sum >/dev/null
find / -xdev >/dev/null 2>&1 || true
ls -laR /sys/kernel/debug >/dev/null 2>&1 || true
seq 1 "$(scaled 20000)" | sort -r | uniq | wc -l >/dev/null
step vmlinux-work

# The modules' own work, where they are loaded.
if grep -q '^vfat ' /proc/modules; then
	dd if=/dev/zero of=/tmp/fat.img bs=1M count=16 2>/dev/null
	mkdosfs /tmp/fat.img >/dev/null
	mkdir -p /mnt/fat
	mount -t vfat -o loop /tmp/fat.img /mnt/fat
	i=0
	while [ $i -lt "$files" ]; do
		cp /tmp/w/f$i /mnt/fat/file-$i.bin
		i=$((i + 1))
	done
	sync
	md5sum /mnt/fat/*.bin >/dev/null
	ls -la /mnt/fat >$r/vfat-listing
	umount /mnt/fat
	step vfat
fi
# Through AF_ALG where the kernel has it (exit 3: it has not, as tinyconfig
# has no networking; tcrypt below drives the hash all the same).
if grep -q '^wp512 ' /proc/modules && [ -x /kpgo/af_alg_hash ]; then
	status=0
	/kpgo/af_alg_hash wp512 4096 "$(scaled 500)" >$r/wp512-digest || status=$?
	[ $status -eq 0 ] || [ $status -eq 3 ] || exit $status
	[ $status -eq 0 ] || rm $r/wp512-digest
	step wp512
fi
# tcrypt: Whirlpool's test vectors (mode 22), then its speed test over
# block sizes (mode 309, sec=0: a fixed number of rounds). Its init
# returns EAGAIN by design, after the work; its file keeps its profile.
if grep -q '^wp512 ' /proc/modules && [ -f /kpgo/modules/tcrypt.ko ]; then
	for round in $(seq 1 "$quarters"); do
		insmod /kpgo/modules/tcrypt.ko mode=22 2>/dev/null || true
		insmod /kpgo/modules/tcrypt.ko mode=309 sec=0 2>/dev/null || true
	done
	step tcrypt
fi
# Unloading keeps a module's profile in its file.
if grep -q '^rust_minimal ' /proc/modules; then
	rmmod rust_minimal
	step rust-minimal-unloaded
fi

# read_profiles DIR: every profile file, into DIR, and entry sampling's
# time in bursts and weight, per CPU, where the kernel samples so.
read_profiles() {
	mkdir -p "$1"
	for f in $pgo/*.profraw; do
		cat "$f" >"$1/$(basename "$f")"
	done
	[ ! -f $pgo/entry_sampling ] || cat $pgo/entry_sampling >"$1/entry-sampling"
}
read_profiles "$r/main"
step main-profiles-read

# Coverage: system calls next to the untrained benchmarks'.
ip link set lo up 2>/dev/null || true
/kpgo/neighbours "$(scaled 20000)"
step neighbours

read_profiles "$r"
cat $pgo/stats >$r/stats
step profiles-read
