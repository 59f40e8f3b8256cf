# SPDX-License-Identifier: GPL-2.0
# The profiling workload of `make` (scripts/profile-kernel), in the guest:
# system calls, files, pipes and processes, then every profile file.
set -e
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
echo 1 >$pgo/reset # profile the workload, not the boot
/kpgo/getpid_loop 100000
mkdir -p /tmp/w
i=0
while [ $i -lt 20 ]; do
	dd if=/dev/zero of=/tmp/w/f$i bs=4k count=64 2>/dev/null
	i=$((i + 1))
done
tar cf /tmp/w.tar /tmp/w /bin
gzip -c /tmp/w.tar | gunzip -c | md5sum >/dev/null
find / -xdev >/dev/null 2>&1 || true
ls -laR /sys/kernel/debug >/dev/null 2>&1 || true
seq 1 20000 | sort -r | uniq | wc -l >/dev/null
for f in $pgo/*.profraw; do
	cat "$f" >"$r/$(basename "$f")"
done
cat $pgo/stats >$r/stats
