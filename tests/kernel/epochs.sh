#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Epochs on the counter-relocation kernel (make kernel-reloc), 2 CPUs:
# one CPU runs pgo_test_a_run() through pread64 in a loop, counting the
# runs that returned, while the other switches epochs 20 times
# (pgo/epoch) and copies each finished epoch (pgo/epochs/). Each switch
# brackets the runs it must hold: the epochs up to switch K hold at least
# the runs counted just before it and at most those counted just after
# it, in the module's counters and in vmlinux's (pread64's handler). With
# the worker stopped, a last switch: the epochs merged by llvm-profdata
# equal the module's profile, counter for counter, and the value profile
# is whole. A reset writes no counter (the epoch stays), a module loaded
# after the switches joins them, and bad input is refused.
#
# Usage: tests/kernel/epochs.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=${KPGO_TREE:-$root/build/linux-reloc}
out_root=${KPGO_TEST_OUT:-$root/build/reloc}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
out=$out_root/qemu/epochs
moddir=$out_root/test-modules-epochs
guest_bin=$out_root/guest
profdata="$llvm"/llvm-profdata
switches=20

# shellcheck source=lib.sh
source "$here/lib.sh"

[[ -f $KPGO_TREE/vmlinux ]] || { echo "FAIL: no kernel in $KPGO_TREE: make kernel-reloc"; exit 1; }
# With preemption the wait includes synchronize_rcu_tasks(), a wait of
# its own (make kernel-reloc builds it so).
check "the kernel is preemptible and has Tasks RCU (the wait's second half)" \
	bash -c "grep -qx CONFIG_PREEMPTION=y '$KPGO_TREE/.config' && grep -qx CONFIG_TASKS_RCU=y '$KPGO_TREE/.config'"
rm -rf "$moddir"
mkdir -p "$moddir" "$guest_bin"
cp "$here/modules/pgo_test_a.c" "$moddir/"
echo 'obj-m += pgo_test_a.o' >"$moddir/Kbuild"
"$root/scripts/kmake" -s M="$moddir" modules
guest_programs epoch_switch

# The spare sets: vmlinux's in .bss, as long as its counter pages; the
# module's a NOBITS section as long as its counters and their padding.
symbol() { "$llvm/llvm-nm" "$KPGO_TREE/vmlinux" | awk -v s="$1" '$3 == s { print $1 }'; }
start=$(symbol __start___llvm_prf_cnts)
end=$(symbol __pages_end___llvm_prf_cnts)
spare=$(symbol __start___llvm_prf_cnts_spare)
spare_end=$(symbol __stop___llvm_prf_cnts_spare)
check "vmlinux: the spare set is page-aligned and as long as the counter pages (0x${spare:-?}..0x${spare_end:-?})" \
	bash -c "(( 16#${spare:-1} % 4096 == 0 && 16#${spare_end:-0} - 16#${spare:-0} == 16#${end:-1} - 16#${start:-0} ))"
section() {
	"$llvm/llvm-readelf" -S --wide "$moddir/pgo_test_a.ko" |
		sed -n "s/^ *\[ *[0-9]*\] \($1 .*\)/\1/p"
}
read -r _ _ _ _ cnts_size _ < <(section __llvm_prf_cnts)
read -r _ _ _ _ pad_size _ < <(section __llvm_prf_cnts_pad)
read -r _ spare_type _ _ spare_size _ spare_flags _ _ spare_align < <(section __llvm_prf_cnts_spare)
check "module: __llvm_prf_cnts_spare is NOBITS, writable, page-aligned, as long as the counters and padding (${spare_type:-?} ${spare_flags:-?} ${spare_align:-?} 0x${spare_size:-?})" \
	bash -c "test '${spare_type:-}' = NOBITS -a '${spare_flags:-}' = WA -a '${spare_align:-}' = 4096 &&
		(( 16#${spare_size:-1} == 16#${cnts_size:-0} + 16#${pad_size:-0} ))"

status=0
"$root/scripts/qemu-run" --out "$out" --timeout 600 --smp 2 \
	--file "$guest_bin/epoch_switch" --file "$moddir/pgo_test_a.ko" \
	"$@" "$here/epochs.guest.sh" || status=$?
r=$out/results
check "guest completed and its script passed (status $status)" test "$status" -eq 0
check_after none "before the first switch, an epoch file has no data ($(cat "$r/none-error" 2>/dev/null))" \
	bash -c "test ! -e '$r/none-opened' && grep -q 'No data available' '$r/none-error'"
check "the worker ran and every switch succeeded ($(grep -c '^switch' "$r/switches.txt" 2>/dev/null) switches, $(sed -n 's/^runs //p' "$r/switches.txt" 2>/dev/null) runs)" \
	bash -c "grep -qx 'worker ok' '$r/switches.txt' && test \$(grep -c '^switch [0-9]* [0-9]* [0-9]*\$' '$r/switches.txt') -eq $((switches + 1))"

a_run=$(static_name "$r/a-total.profraw" pgo_test_a.c pgo_test_a_run)
a_leaf=$(static_name "$r/a-total.profraw" pgo_test_a.c pgo_test_a_leaf)
pread=__x64_sys_pread64
# The epochs' counts, cumulated, against each switch's bracket. The
# module's init ran once before the worker: +1.
sum_a=0 sum_v=0 even_v=0 bad_a=0 bad_v=0 epochs_with_runs=0 straddled=0 last_after=0
while read -r _ k before after; do
	a=$(entry_count "$r/a-$k.profraw" "$a_run")
	leaf=$(entry_count "$r/a-$k.profraw" "$a_leaf")
	v=$(entry_count "$r/vmlinux-$k.profraw" "$pread")
	sum_a=$((sum_a + ${a:-0})) sum_v=$((sum_v + ${v:-0}))
	# Even switches close the spare set (set 1).
	((k % 2 == 0)) && even_v=$((even_v + ${v:-0}))
	((sum_a >= before + 1 && sum_a <= after + 1)) || { bad_a=$((bad_a + 1)); echo "switch $k: module ${sum_a} not in [$((before + 1)), $((after + 1))]"; }
	((sum_v >= before && sum_v <= after)) || { bad_v=$((bad_v + 1)); echo "switch $k: pread64 ${sum_v} not in [$before, $after]"; }
	((${a:-0} > 0)) && epochs_with_runs=$((epochs_with_runs + 1))
	((${leaf:-0} == 10 * ${a:-0})) || straddled=$((straddled + 1))
	last_after=$after
done < <(grep '^switch' "$r/switches.txt")
runs=$(sed -n 's/^runs //p' "$r/switches.txt")
echo "epochs: $epochs_with_runs of $((switches + 1)) with runs; $straddled where a run's leaf calls fell in the next epoch"
check "module: the epochs up to each switch hold every run that returned before it and none begun after it ($bad_a outside their bracket)" \
	test "$bad_a" -eq 0 -a "$epochs_with_runs" -gt $((switches / 2))
check "vmlinux: the same for pread64's handler ($bad_v outside their bracket)" test "$bad_v" -eq 0
check "the epochs sum to every run (module ${sum_a}, pread64 ${sum_v}, runs ${runs:-?} + the init run)" \
	test "$sum_a" -eq $((${runs:-0} + 1)) -a "$sum_v" -eq "${runs:-x}" -a "$last_after" -eq "${runs:-y}"

# The epochs merged equal the module's profile, every counter.
check "llvm-profdata merges the $((switches + 1)) epochs of the module" \
	"$profdata" merge -o "$out/a-epochs.profdata" "$r"/a-[0-9]*.profraw
check "llvm-profdata merges the $((switches + 1)) epochs of vmlinux" \
	"$profdata" merge -o "$out/vmlinux-epochs.profdata" "$r"/vmlinux-[0-9]*.profraw
# counts PROFILE: "function: block counts", a line per function, sorted.
counts() {
	"$profdata" show --all-functions --counts "$1" |
		awk '/^  [^ ].*:$/ { f = $0 } /Block counts/ { print f, $0 }' | sort
}
counts "$out/a-epochs.profdata" >"$out/a-epochs.counts" || true
counts "$r/a-total.profraw" >"$out/a-total.counts" || true
check "the module's epochs add up to its profile, counter for counter ($(grep -c 'Block counts' "$out/a-total.counts") functions)" \
	bash -c "test -s '$out/a-total.counts' && cmp -s '$out/a-epochs.counts' '$out/a-total.counts'"
six=$("$profdata" show --ic-targets --function="$a_run" "$r/a-total.profraw" 2>/dev/null |
	sed -n 's/.*;pgo_test_a_six, *\([0-9]*\) \].*/\1/p' | head -1)
check "the module's value profile is whole (pgo_test_a_six called ${six:-?} times, want 6 x $((${runs:-0} + 1)))" \
	test "${six:-0}" -eq $((6 * (${runs:-0} + 1)))
check "the live file after an odd number of switches maps the spare set, and llvm-profdata reads it" \
	bash -c "grep -q '^object=vmlinux .* set=1 ' '$r/stats' && '$profdata' show '$r/vmlinux-live.profraw'"
live=$(entry_count "$r/vmlinux-live.profraw" "$pread")
check "its pread64 count is the spare set's: the even epochs' sum (${live:-?}, $even_v)" \
	test -n "$live" -a "${live:-x}" = "$even_v"
check "stats: $((switches + 1)) epochs, vmlinux's and the module's at the last ($(grep -o 'epochs=[0-9]*' "$r/stats"))" \
	bash -c "grep -q '^runtime .* epochs=$((switches + 1)) ' '$r/stats' &&
		grep -q '^object=vmlinux .* epoch=$((switches + 1)) ' '$r/stats' &&
		grep -q '^object=pgo_test_a .* epoch=$((switches + 1)) ' '$r/stats'"
late=$(sed -n 's/^object=vmlinux .* late_updates_total=\([0-9]*\).*/\1/p' "$r/stats")
echo "late updates of vmlinux over $((switches + 1)) switches: ${late:-?}"
check_after bad "a command other than 1 is refused ($(cat "$r/bad-error" 2>/dev/null))" \
	bash -c "test ! -e '$r/bad-accepted' && grep -q 'Invalid argument' '$r/bad-error'"
read -r _ switched _ busy _ other < "$r/busy.txt" || true
check_after busy "switches at once: one at a time, the others refused with EBUSY (${switched:-?} done, ${busy:-?} busy, ${other:-?} other errors)" \
	bash -c "(( ${busy:-0} > 0 && ${other:-1} == 0 && ${switched:-0} + ${busy:-0} == 60 ))"
check_after busy "and stats counts the ones done ($(cat "$r/busy-epochs" 2>/dev/null))" \
	grep -qx " epochs=$((switches + 1 + ${switched:-0}))" "$r/busy-epochs"
reset_runs=$(entry_count "$r/a-reset.profraw" "$a_run")
check_after reset "a reset restarts the profile (pgo_test_a_run ${reset_runs:-?})" test "${reset_runs:-1}" -eq 0
check_after reset "and leaves the finished epoch as it was" \
	cmp -s "$r/a-epoch-after-reset.profraw" "$r/a-$((switches + 1)).profraw"
joined=$(entry_count "$r/a-joined.profraw" "$a_run")
check_after joined "a module loaded after the switches joins them: its epoch has its init run and 3 more (${joined:-?})" \
	test "${joined:-0}" -eq 4
check_after joined "it started on the spare set, and the switch moved it ($(grep -o 'set=[0-9]' "$r/stats-joining" 2>/dev/null) -> $(grep -o 'set=[0-9]' "$r/stats-joined" 2>/dev/null))" \
	bash -c "grep -q ' epoch=0 set=1 ' '$r/stats-joining' &&
		grep -q \" epoch=\$(sed -n 's/^runtime .* epochs=\\([0-9]*\\) .*/\\1/p' '$r/stats-joined') set=0 \" '$r/stats-joined'"
check_after joined "the epoch file of an unloaded module cannot be opened ($(cat "$r/unloaded-error" 2>/dev/null))" \
	bash -c "test ! -e '$r/unloaded-opened' && grep -q 'No such device' '$r/unloaded-error'"
check_console "no BUG, oops, WARNING or lockdep report on the console" "$out/console.log"
summary epochs
