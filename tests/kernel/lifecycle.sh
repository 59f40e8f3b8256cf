#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The module lifecycle under KASAN, lockdep and kmemleak (issue 10), on the
# kernel of make kernel-kasan (build/linux-kasan, scripts/configs/kasan.config):
#
#   paths   failure paths, 2 CPUs: an init that fails (100 loads), timers,
#           delayed and async work across unload, modules named vmlinux,
#           all, and two .ko files with one name, corrupted Values and
#           CounterPtr fields and a value-node pool without SHF_WRITE
#           (tests/kernel/ko_edit.py) that must be refused with nothing
#           written.
#   faults  fault injection at load and unload (fail-nth over the whole
#           load path, then over kpgo's own allocations, then failslab
#           with a probability), each attempt judged, then an exact load.
#   stress  2 CPUs for KPGO_STRESS_SECONDS (default 180): load loops,
#           readers, resets, profraw writes and a syscall workload at
#           once, then exact counts.
#
# Builds the test modules (tests/kernel/modules/) against that kernel, in
# build/test-modules-kasan (KPGO_TEST_OUT/test-modules-kasan when set, as
# its other outputs), and the guest programs; boots the kernel under
# QEMU with the part's guest script; judges with lifecycle_check.py, whose
# last line is "lifecycle-PART: N passed, M failed".
#
# Usage: tests/kernel/lifecycle.sh PART [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=${KPGO_TREE:-$root/build/linux-kasan}
part=${1:-}
case $part in
paths | faults | stress) shift ;;
*) sed -n '/^# Usage:/p' "$0" >&2; exit 2 ;;
esac
out_root=${KPGO_TEST_OUT:-$root/build}
moddir=$out_root/test-modules-kasan
guest_bin=$out_root/guest
out=$out_root/qemu/lifecycle-$part
llvm=/usr/lib/llvm-19/bin
stress_seconds=${KPGO_STRESS_SECONDS:-180}
start=$EPOCHREALTIME

fail() {
	echo "FAIL: $*"
	echo "lifecycle-$part: 0 passed, 1 failed"
	exit 1
}
[[ -f $KPGO_TREE/arch/x86/boot/bzImage ]] || fail "no kernel in $KPGO_TREE: make kernel-kasan"
grep -qx CONFIG_KASAN=y "$KPGO_TREE/.config" || fail "$KPGO_TREE is not a KASAN kernel"

# The modules, incrementally (sources copied with their times).
mkdir -p "$moddir/named" "$moddir/corrupt" "$guest_bin"
cp -p "$here/modules/"*.c "$here/modules/Kbuild" "$moddir/"
"$root/scripts/kmake" -s M="$moddir" modules >"$moddir/build.log" 2>&1 ||
	{ cat "$moddir/build.log"; fail "the test modules do not build"; }
edit() { python3 "$here/ko_edit.py" "$@" >>"$moddir/edits.log"; }
: >"$moddir/edits.log"
edit rename "$moddir/pgo_test_a.ko" "$moddir/named/vmlinux.ko" vmlinux
edit rename "$moddir/pgo_test_a.ko" "$moddir/named/all.ko" all
edit rename "$moddir/pgo_test_a.ko" "$moddir/named/pgo_same_a.ko" pgo_same
edit rename "$moddir/pgo_test_b.ko" "$moddir/named/pgo_same_b.ko" pgo_same
edit rename "$moddir/pgo_test_a.ko" "$moddir/named/pgo_a2.ko" pgo_a2
edit corrupt-values "$moddir/pgo_test_corrupt.ko" "$moddir/corrupt/pgo_test_corrupt.ko" \
	pgo_test_corrupt_victim --to pgo_test_corrupt_target
edit corrupt-values "$moddir/pgo_test_corrupt.ko" "$moddir/corrupt/far.ko" \
	pgo_test_corrupt_victim --addend 0x100000
edit rename "$moddir/corrupt/far.ko" "$moddir/corrupt/pgo_corrupt_far.ko" pgo_corrupt_far
edit corrupt-counters "$moddir/pgo_test_corrupt.ko" "$moddir/corrupt/cnts.ko" \
	pgo_test_corrupt_victim --to pgo_test_corrupt_target
edit rename "$moddir/corrupt/cnts.ko" "$moddir/corrupt/pgo_corrupt_cnts.ko" pgo_corrupt_cnts
edit read-only "$moddir/pgo_test_corrupt.ko" "$moddir/corrupt/vnds.ko" __llvm_prf_vnds
edit rename "$moddir/corrupt/vnds.ko" "$moddir/corrupt/pgo_corrupt_vnds.ko" pgo_corrupt_vnds
cat "$moddir/edits.log"

for program in "$here/guest/fail_nth.c" "$here/guest/getpid_loop.c" "$root/bench/guest/syscalls.c"; do
	"$llvm/clang" -static -O2 -Wall -Werror -o "$guest_bin/$(basename "$program" .c)" "$program"
done

# kpgo's text, for the fault-injection stack filter (no KASLR in this
# configuration: the guest has the same addresses): the span of the largest
# cluster of its functions (its .text; its .init.text lies elsewhere).
"$llvm/llvm-nm" -S --defined-only "$KPGO_TREE/vmlinux" | python3 -c '
import sys
spans = sorted((int(a, 16), int(a, 16) + int(s, 16)) for a, s, t, name in
               (l.split()[:4] for l in sys.stdin if len(l.split()) >= 4)
               if t in "tT" and "4kpgo" in name)
clusters = []
for start, end in spans:
    if clusters and start - clusters[-1][-1][1] < 65536:
        clusters[-1].append((start, end))
    else:
        clusters.append([(start, end)])
if not clusters:
    sys.exit(1)
best = max(clusters, key=len)
print(f"{best[0][0]:#x} {max(e for _, e in best):#x}")' \
	>"$moddir/kpgo-text-range" || fail "no kpgo symbols in $KPGO_TREE/vmlinux"
echo "kpgo text: $(cat "$moddir/kpgo-text-range")"

files=()
for m in pgo_test_a pgo_test_b pgo_test_initfail pgo_test_async pgo_test_corrupt pgo_test_callees; do
	files+=(--file "$moddir/$m.ko")
done
for ko in "$moddir"/named/*.ko; do files+=(--file "$ko:/kpgo/named/${ko##*/}"); done
for ko in pgo_test_corrupt pgo_corrupt_far pgo_corrupt_cnts pgo_corrupt_vnds; do
	files+=(--file "$moddir/corrupt/$ko.ko:/kpgo/corrupt/$ko.ko")
done
for program in fail_nth getpid_loop syscalls; do files+=(--file "$guest_bin/$program"); done
files+=(--file "$moddir/kpgo-text-range")

# The guest scripts mark their steps in the kernel log through /dev/kmsg,
# which is rate limited unless printk.devkmsg=on.
append="printk.devkmsg=on"
case $part in
paths) options=(--smp 2 --mem 1G --timeout 1200 --disk-size 256) ;;
faults) options=(--smp 1 --mem 1G --timeout 3000 --disk-size 256) ;;
stress)
	options=(--smp 2 --mem 2G --timeout $((stress_seconds + 1200)) --disk-size 1536)
	append+=" kpgo_stress_seconds=$stress_seconds"
	;;
esac
options+=(--append "$append")
status=0
"$root/scripts/qemu-run" --out "$out" "${options[@]}" "${files[@]}" "$@" \
	"$here/lifecycle-$part.guest.sh" || status=$?
echo "guest: $(tr '\n' ' ' <"$out/timing" 2>/dev/null)"
cd "$here"
python3 "$here/lifecycle_check.py" "$part" "$out/results" "$out/console.log" "$status" \
	"$stress_seconds" || status=1
echo "lifecycle-$part: $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s in all"
exit $status
