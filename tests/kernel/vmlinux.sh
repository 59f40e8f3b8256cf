#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# End to end on the instrumented kernel (make kernel): boots it under QEMU,
# takes vmlinux.profraw around a known workload, reset and bad input, and
# judges the profiles with llvm-profdata-19.
#
# Usage: tests/kernel/vmlinux.sh [qemu-run options, e.g. --smp 2]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Another toolchain's trees and tools (tests/kernel/toolchain.sh sets them).
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
tree=${KPGO_TREE:-$out_root/linux}
out=$out_root/qemu/vmlinux
guest_bin=$out_root/guest
profdata="$llvm"/llvm-profdata
calls=5000

# shellcheck source=lib.sh
source "$here/lib.sh"

guest_programs getpid_loop snapshot_reads

status=0
"$root/scripts/qemu-run" --out "$out" --timeout 300 \
	--file "$guest_bin/getpid_loop" --file "$guest_bin/snapshot_reads" \
	--append "kpgo_getpid_calls=$calls" "$@" "$here/vmlinux.guest.sh" || status=$?
r=$out/results
check "guest completed and its script passed (status $status)" test "$status" -eq 0


for f in boot after-getpid after-reset after-garbage after-reset-vmlinux bytewise; do
	check "$f.profraw is read by llvm-profdata show" "$profdata" show "$r/$f.profraw"
done
check "llvm-profdata merge accepts the profiles" \
	"$profdata" merge -o "$out/vmlinux.profdata" "$r/boot.profraw" "$r/after-getpid.profraw"
check "entry counts come first (entry_first = 1)" \
	bash -c "'$profdata' show '$r/boot.profraw' | grep -q 'entry_first = 1'"
check "start_kernel ran once" test "$(entry_count "$r/boot.profraw" start_kernel)" = 1

getpid_boot=$(entry_count "$r/boot.profraw" __x64_sys_getpid)
getpid_after=$(entry_count "$r/after-getpid.profraw" __x64_sys_getpid)
echo "getpid handler: ${getpid_boot:-?} at boot, ${getpid_after:-?} after $calls calls"
check "getpid handler count rose by $calls to $calls + 100" \
	in_range "$((${getpid_after:-0} - ${getpid_boot:-0}))" "$calls" "$((calls + 100))"
getpid_reset=$(entry_count "$r/after-reset.profraw" __x64_sys_getpid)
check "after reset the getpid handler count is back near 0 (${getpid_reset:-?})" \
	in_range "${getpid_reset:--1}" 0 10
getpid_garbage=$(entry_count "$r/after-garbage.profraw" __x64_sys_getpid)
check "garbage written to reset changed nothing (${getpid_garbage:-?} >= $calls)" \
	test "${getpid_garbage:-0}" -ge "$calls"
check_after garbage "every garbage reset command was refused" test ! -e "$r/reset-accepted"
check_after profraw-write "writing to vmlinux.profraw is refused" \
	test ! -e "$r/profraw-write-accepted"
getpid_vmlinux=$(entry_count "$r/after-reset-vmlinux.profraw" __x64_sys_getpid)
check "echo vmlinux > reset zeroes the kernel image (${getpid_vmlinux:-?})" \
	in_range "${getpid_vmlinux:--1}" 0 10
check_after reset-vmlinux "reset reads as empty" test -e "$r/reset-read" -a ! -s "$r/reset-read"

check_after reset-storm "a read overlapped by resets back to back starts again: \
it had not completed after 3 s" test -e "$r/reader-during-resets" -a -e "$r/resets-ran-on"
check_after reset-storm "... and SIGKILL ends it within 5 s, resets still going \
($(cat "$r/reader-killed-ds" 2>/dev/null || echo '?') x 100 ms)" test -e "$r/reader-killed-ds"
check_after reset-storm "a read after the resets is a profile llvm-profdata accepts" \
	"$profdata" show "$r/after-resets.profraw"
check "one open file gives the same bytes read 1 byte at a time and in bulk" \
	cmp "$r/bytewise.profraw" "$r/bulk.profraw"
check "the snapshot is a whole profile" test "$(stat -c %s "$r/bytewise.profraw")" -gt 100000

# IBT (scripts/kpgo.config): the __noendbr functions are instrumented
# like any other (objtool skips __llvm_prf_data instead: patch 4), and
# objtool's IBT validation of the instrumented vmlinux.o is clean.
"$profdata" show --all-functions "$r/boot.profraw" >"$out/boot-functions" 2>&1 || true
check "a __noendbr function is in the profile (ibt_save, cet_disable)" \
	bash -c "grep -q '^  ibt_save:' '$out/boot-functions' && grep -q '^  cet_disable:' '$out/boot-functions'"
# (The seal sections it made at build time are there already, so objtool
# says it skips making them; the validation runs before that.  Without
# patch 4, 6.12's objtool reports ibt_save, ibt_restore and cet_disable.)
status=0
"$tree/tools/objtool/objtool" --ibt --link --dry-run "$tree/vmlinux.o" >"$out/objtool-ibt.log" 2>&1 ||
	status=$?
check "objtool --ibt on vmlinux.o ran (status $status): no data relocation to !ENDBR ($(grep -c '!ENDBR' "$out/objtool-ibt.log") found)" \
	bash -c "test -s '$tree/vmlinux.o' -a $status -eq 0 && grep -q 'already has .ibt_endbr_seal' '$out/objtool-ibt.log' &&
		! grep -q '!ENDBR' '$out/objtool-ibt.log'"

# Indirect-call targets: resolved to names, and those are kernel functions.
"$profdata" show --all-functions --ic-targets "$r/after-getpid.profraw" |
	sed -n 's/^[[:space:]]*\[ *[0-9]*, \([^,]*\), .*/\1/p' | sort -u >"$out/ic-targets"
"$llvm"/llvm-nm --defined-only "$tree/vmlinux" |
	awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$out/functions"
sed 's/^.*;//' "$out/ic-targets" | grep -v '^[0-9]*$' | sort -u >"$out/ic-names" || true
echo "indirect-call targets: $(wc -l <"$out/ic-targets") distinct, $(wc -l <"$out/ic-names") named"
check "at least 100 indirect-call targets resolve to names" test "$(wc -l <"$out/ic-names")" -ge 100
check "every named target is a function of vmlinux" \
	test -z "$(comm -23 "$out/ic-names" "$out/functions")"

# The node pool is reused after a reset, not leaked.
stat_of() { sed -n "s/^object=vmlinux .* $2=\([0-9]*\).*/\1/p" "$r/$1"; }
nodes() { stat_of "$1" value_nodes_used; }
nodes_before=$(nodes stats.after-getpid)
nodes_again=$(nodes stats.again)
echo "value nodes: ${nodes_before:-?} before reset, ${nodes_again:-?} after reset + same workload"
# Both figures must be there: a missing one is no growth.
check_after again "reset reuses the node pool (growth <= 64 nodes)" \
	test -n "$nodes_before" -a -n "$nodes_again" -a \
	"$((${nodes_again:-0} - ${nodes_before:-0}))" -le 64
# vmlinux's Rust records apart (rustc writes another raw version than
# clang) are an entry of their own.
entries=1
grep -qx CONFIG_PGO_CLANG_RUST_APART=y "$tree/.config" && entries=2
check "stats: the runtime line has every key, in order" \
	grep -Eq '^runtime modules_live=0 modules_profiled=0 modules_refused=0 descriptors=0 descriptor_bytes=0 map_tables=0 map_bytes=0 entries='$entries' entry_bytes=[1-9][0-9]* kept_profiles=0 kept_bytes=0 kept_limit_bytes=4194304 name_index_bytes=0( epochs=0 persisted=0 previous=0 boot_late_updates=0)?$' "$r/stats.boot"
check "stats: vmlinux's line has every key, in order" \
	grep -Eq '^object=vmlinux state=live functions=[1-9][0-9]* counters=[1-9][0-9]* value_sites=[1-9][0-9]* value_nodes_used=[0-9]+ value_nodes=[1-9][0-9]* values_dropped=[0-9]+ kept_profiles=0 kept_bytes=0 lost_profiles=0 kept_unloads=0( epoch=0 set=0 late_updates=0 late_updates_total=0)?$' "$r/stats.boot"
if ((entries == 2)); then
	# Nodes used at boot: the hooks found the Rust records (their slow
	# path), fewer counters than vmlinux's: its records' own.
	check "stats: vmlinux-rust's line: its own records, counters and node pool, nodes used by the hooks" \
		grep -Eq '^object=vmlinux-rust state=live functions=[1-9][0-9]* counters=[1-9][0-9]* value_sites=[1-9][0-9]* value_nodes_used=[1-9][0-9]* value_nodes=[1-9][0-9]* values_dropped=[0-9]+ kept_profiles=0 kept_bytes=0 lost_profiles=0 kept_unloads=0$' "$r/stats.boot"
	counters_of() { sed -n "s/^object=$1 .* counters=\([0-9]*\) .*/\1/p" "$r/stats.boot"; }
	check "... fewer counters than vmlinux's ($(counters_of vmlinux-rust) < $(counters_of vmlinux))" \
		test "$(counters_of vmlinux-rust)" -lt "$(counters_of vmlinux)"
	check "... vmlinux-rust.profraw is root-only" grep -q '^-r-------- .* vmlinux-rust.profraw' "$r/ls"
fi
check "files are root-only: profraw and stats 0400, reset 0200" \
	bash -c "grep -q '^-r-------- .* vmlinux.profraw' '$r/ls' && grep -q '^--w------- .* reset' '$r/ls' && grep -q '^-r-------- .* stats' '$r/ls'"
check_console "no BUG, oops, WARNING or lockdep report on the console of a whole run" \
	"$out/console.log"
check "no kpgo error at boot" \
	bash -c "test -s '$out/console.log' && ! grep -E 'kpgo: .*(not profiled|failed|no profile)' '$out/console.log'"
echo "profile: $(stat -c %s "$r/boot.profraw") bytes; read in the guest in $(cat "$r/read-ms" 2>/dev/null || echo '?') ms"

summary vmlinux
