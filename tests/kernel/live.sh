#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# pgo/live/ on the instrumented kernel (make kernel): a file whose counter
# pages are the object's own counters. Boots it under QEMU, maps
# live/vmlinux.profraw and a module's, and copies each mapping before and
# after known work without reopening: llvm-profdata-19 accepts every copy
# and sees exactly the work in between (and a reset); the mapping is read
# only and not executable, for good; its pages come back after they
# were zapped (truncate); a module's mapping, and read(2) of its open file, keep its
# last counts after the unload, and the file is gone with the module.
#
# Usage: tests/kernel/live.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out_root=${KPGO_TEST_OUT:-$root/build}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
out=$out_root/qemu/live
moddir=$out_root/test-modules-live
guest_bin=$out_root/guest
profdata="$llvm"/llvm-profdata
calls=5000

# shellcheck source=lib.sh
source "$here/lib.sh"

rm -rf "$moddir"
mkdir -p "$moddir" "$guest_bin"
cp "$here/modules/pgo_test_a.c" "$moddir/"
echo 'obj-m += pgo_test_a.o' >"$moddir/Kbuild"
"$root/scripts/kmake" -s M="$moddir" modules
guest_programs getpid_loop live_map

# The counters on pages of their own (integration patch profile-counter-pages).
tree=${KPGO_TREE:-$out_root/linux}
symbol() { "$llvm/llvm-nm" "$tree/vmlinux" | awk -v s="$1" '$3 == s { print $1 }'; }
start=$(symbol __start___llvm_prf_cnts)
stop=$(symbol __stop___llvm_prf_cnts)
end=$(symbol __pages_end___llvm_prf_cnts)
check "vmlinux: the counters start on a page and their padding ends on one (${start:-?}, ${stop:-?}, ${end:-?})" \
	bash -c "(( 16#${start:-1} % 4096 == 0 && 16#${end:-1} % 4096 == 0 &&
		16#${end:-0} >= 16#${stop:-1} && 16#${end:-0} - 16#${stop:-0} < 4096 ))"
# Name Type Address Off Size ES Flg Lk Inf Al, without [Nr].
section() {
	"$llvm/llvm-readelf" -S --wide "$moddir/pgo_test_a.ko" |
		sed -n "s/^ *\[ *[0-9]*\] \($1 .*\)/\1/p"
}
read -r _ _ _ _ cnts_size _ _ _ _ cnts_align < <(section __llvm_prf_cnts)
read -r _ pad_type _ _ pad_size _ < <(section __llvm_prf_cnts_pad)
check "module: __llvm_prf_cnts is page-aligned (${cnts_align:-?}) and __llvm_prf_cnts_pad (${pad_type:-?}) pads it to a page (0x${cnts_size:-?} + 0x${pad_size:-?})" \
	bash -c "(( ${cnts_align:-0} == 4096 && (16#${cnts_size:-1} + 16#${pad_size:-0}) % 4096 == 0 )) && test '${pad_type:-}' = NOBITS"

status=0
"$root/scripts/qemu-run" --out "$out" --timeout 300 \
	--file "$guest_bin/getpid_loop" --file "$guest_bin/live_map" \
	--file "$moddir/pgo_test_a.ko" "$@" "$here/live.guest.sh" || status=$?
r=$out/results
check "guest completed and its script passed (status $status)" test "$status" -eq 0

# value KEY FILE: KEY's value in live_map's output FILE.
value() { sed -n "s/^$1=//p" "$2" 2>/dev/null; }

check "live/ has vmlinux.profraw, root-only (0400)" \
	grep -q '^-r-------- .* vmlinux.profraw$' "$r/ls-live"
for object in vmlinux a; do
	map=$r/$object-map.txt
	size=$(value size "$map")
	check "$object: fstat gives the size, and read(2) gives as many bytes (${size:-?}, $(value read "$map"))" \
		test -n "$size" -a "${size:-0}" -gt 0 -a "$size" = "$(value read "$map")"
	for refusal in writable_map:13 exec_map:13 mprotect_write:13 mprotect_exec:13 \
		past_end_map:22 offset_past_end_map:22; do
		key=${refusal%:*}_errno
		check "$object: $key is $(value "$key" "$map") (want ${refusal#*:})" \
			test "$(value "$key" "$map")" = "${refusal#*:}"
	done
	mem=$(value mem_write_errno "$map")
	check "$object: a write through /proc/self/mem is refused (errno ${mem:-?})" \
		test -n "$mem" -a "${mem:-0}" != 0 -a "${mem:-0}" != -1
	mem=$(value mem_read_errno "$map")
	check "$object: a read through /proc/self/mem is refused: get_user_pages() does not reach the pages (errno ${mem:-?}, want 5)" \
		test "$mem" = 5
	check "$object: SEEK_END is the size ($(value seek_end "$map"))" \
		test "$(value seek_end "$map")" = "$size"
	check "$object: the mapping's pages can be zapped (truncate: $(value zap_errno "$map")) and come back" \
		test "$(value zap_errno "$map")" = 0
	check "$object: the command ran (status $(value command_status "$map"))" \
		test "$(value command_status "$map")" = 0
	for copy in before after read; do
		check "$object: llvm-profdata reads the $copy copy" \
			"$profdata" show "$r/$object-$copy.profraw"
	done
done
check "vmlinux: llvm-profdata reads what cat gives" "$profdata" show "$r/vmlinux-cat.profraw"
check "vmlinux: the copies merge" "$profdata" merge -o "$out/live.profdata" \
	"$r/vmlinux-before.profraw" "$r/vmlinux-after.profraw" "$r/vmlinux-cat.profraw"

before=$(entry_count "$r/vmlinux-before.profraw" __x64_sys_getpid)
after=$(entry_count "$r/vmlinux-after.profraw" __x64_sys_getpid)
echo "getpid handler in one mapping: ${before:-?} before, ${after:-?} after $calls calls"
check "vmlinux: the mapping shows the $calls getpid calls made after it was made (+$((${after:-0} - ${before:-0})))" \
	in_range "$((${after:-0} - ${before:-0}))" "$calls" "$((calls + 100))"
reset_before=$(entry_count "$r/reset-before.profraw" __x64_sys_getpid)
reset_after=$(entry_count "$r/reset-after.profraw" __x64_sys_getpid)
if grep -qx CONFIG_PGO_CLANG_COUNTER_RELOCATION=y "$tree/.config"; then
	# A reset writes no counter there (it moves a baseline): the mapping,
	# the raw counters, goes on.
	check "vmlinux: the mapping shows raw counters, which a reset leaves (getpid ${reset_before:-?} -> ${reset_after:-?})" \
		bash -c "test '${reset_before:-0}' -ge $calls && test '${reset_after:-0}' -ge '${reset_before:-1}'"
else
	check "vmlinux: the mapping shows a reset (getpid ${reset_before:-?} -> ${reset_after:-?})" \
		bash -c "test '${reset_before:-0}' -ge $calls && test -n '$reset_after' && test '${reset_after:-1000}' -lt 10"
fi

# A module's static functions are named after their file.
a_run=$(static_name "$r/a-before.profraw" pgo_test_a.c pgo_test_a_run)
a_before=$(entry_count "$r/a-before.profraw" "$a_run")
a_after=$(entry_count "$r/a-after.profraw" "$a_run")
a_read=$(entry_count "$r/a-read.profraw" "$a_run")
check "module: the mapping shows the 2 runs since, after the unload (pgo_test_a_run ${a_before:-?} -> ${a_after:-?})" \
	test -n "$a_before" -a "$((${a_after:-0} - ${a_before:-0}))" -eq 2
check "module: read(2) after the unload gives the same last counts (${a_read:-?})" \
	test "${a_read:-x}" = "${a_after:-y}"
check "module: its live file is listed while it is loaded" \
	grep -q ' pgo_test_a.profraw$' "$r/ls-live-a"
check_after unloaded "module: the live file of an unloaded module cannot be opened ($(cat "$r/a-unloaded-error" 2>/dev/null))" \
	bash -c "test ! -e '$r/a-unloaded-opened' && grep -q 'No such device' '$r/a-unloaded-error'"
check_console "no BUG, oops, WARNING or lockdep report on the console" "$out/console.log"
summary live
