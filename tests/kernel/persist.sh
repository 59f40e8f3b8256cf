#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Profiles that survive a crash, on the counter-relocation kernel (make
# kernel-reloc): vmlinux's counters in the reserve_mem= region 'kpgo'
# (kpgo_persist=kpgo). One QEMU process, two boots (qemu-run --reboots
# 1, a warm reset that keeps memory): boot 1 runs 5,000 then 3,000
# getpid calls with an epoch switch between, and panics (SysRq c) in
# the middle of another workload; boot 2 serves boot 1's profile in
# pgo/previous/vmlinux.profraw. llvm-profdata-19 judges it: exactly the
# getpid calls since boot 1's last read, its boot-time counts
# (start_kernel once), the path into the crash (sysrq_handle_crash,
# panic), boot 1's build id; boot 2's own profile starts from its own
# boot. Then a kernel of another build (the same tree relinked: a new
# build id) boots on the memory a crashed kernel left (a shared RAM
# file, two QEMU processes) and refuses its profile with one clear line;
# that kernel crashes on the RAM file too, a bit of its sealed counts is
# flipped in the file, and its next boot refuses the damaged profile.
# Not shown here: that the region reaches memory through the caches
# (clflush at the end and at the move): QEMU's TCG has no cache to lose.
# The test leaves $KPGO_TREE relinked, at a new build id.
#
# Usage: tests/kernel/persist.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=${KPGO_TREE:-$root/build/linux-reloc}
out_root=${KPGO_TEST_OUT:-$root/build/reloc}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
out=$out_root/qemu/persist
guest_bin=$out_root/guest
profdata="$llvm"/llvm-profdata
mem=512M
append="reserve_mem=16M:4096:kpgo kpgo_persist=kpgo"

# shellcheck source=lib.sh
source "$here/lib.sh"

[[ -f $KPGO_TREE/vmlinux ]] || { echo "FAIL: no kernel in $KPGO_TREE: make kernel-reloc"; exit 1; }
check "the kernel has Magic SysRq (the crash) and counter relocation" \
	bash -c "grep -qx CONFIG_MAGIC_SYSRQ=y '$KPGO_TREE/.config' &&
		grep -qx CONFIG_PGO_CLANG_COUNTER_RELOCATION=y '$KPGO_TREE/.config'"
guest_programs getpid_loop
build_id() { "$llvm/llvm-readelf" -n "$1" | sed -n 's/^ *Build ID: *//p'; }
id=$(build_id "$KPGO_TREE/vmlinux")

status=0
"$root/scripts/qemu-run" --out "$out" --timeout 600 --mem "$mem" --reboots 1 \
	--append "$append" --file "$guest_bin/getpid_loop" \
	"$@" "$here/persist.guest.sh" || status=$?
r=$out/results
b1=$r/boot1 b2=$r/boot2
check "both boots ran and the second completed (status $status)" \
	bash -c "test $status -eq 0 -a \"\$(cat '$r/boot')\" = 2 -a -d '$b1' -a -d '$b2'"
check_after crashing "boot 1 panicked from SysRq c, and the machine reset" \
	bash -c "grep -q 'sysrq: Trigger a crash' '$out/console.log' &&
		grep -q 'Kernel panic - not syncing: sysrq triggered crash' '$out/console.log' &&
		test \$(grep -c 'KPGO-GUEST-START' '$out/console.log') -eq 2"
where() { sed -n "s/.*counters kept in reserve_mem 'kpgo' at \(0x[0-9a-f]*\).*/\1/p" "$1" 2>/dev/null; }
check "both boots kept their counters in the same region ($(where "$b1/dmesg") and $(where "$b2/dmesg"))" \
	bash -c "test -n '$(where "$b1/dmesg")' -a '$(where "$b1/dmesg")' = '$(where "$b2/dmesg")'"
check "boot 1 found no earlier profile (the disk and memory start cold)" \
	grep -q "reserve_mem 'kpgo' held no profile of an earlier boot" "$b1/dmesg"
check "boot 2 found boot 1's, which ended in a panic" \
	grep -q "previous boot's profile (build $id, generation 1, started [^,]*, ended: panic at [^)]*, sealed) in pgo/previous/vmlinux.profraw" "$b2/dmesg"
check "stats: persisted, no previous profile in boot 1, one in boot 2, no late boot update" \
	bash -c "grep -q '^runtime .* persisted=1 previous=0 boot_late_updates=0\$' '$b1/stats' &&
		grep -q '^runtime .* persisted=1 previous=1 boot_late_updates=0\$' '$b2/stats-end'"
check_after served "the previous profile is read by llvm-profdata, and the same twice" \
	bash -c "'$profdata' show '$b2/previous.profraw' >/dev/null && cmp '$b2/previous.profraw' '$b2/previous-again.profraw'"
check "its binary id is this kernel's build id ($id)" \
	bash -c "'$profdata' show --binary-ids '$b2/previous.profraw' | grep -qx ' *$id'"

# A static function: named with its file.
crash_fn="drivers/tty/sysrq.c;sysrq_handle_crash"
getpid_before=$(entry_count "$b1/before.profraw" __x64_sys_getpid)
getpid_crashed=$(entry_count "$b2/previous.profraw" __x64_sys_getpid)
calls=$((${getpid_crashed:-0} - ${getpid_before:-0}))
check "the crashed boot's getpid calls since its last read: 8000 ($calls: $getpid_before, then $getpid_crashed)" \
	in_range "$calls" 8000 8010
check "its boot-time counts are carried over: start_kernel once ($(entry_count "$b2/previous.profraw" start_kernel))" \
	test "$(entry_count "$b2/previous.profraw" start_kernel)" = 1
check "the path into the crash: sysrq_handle_crash once, panic at least once ($(entry_count "$b2/previous.profraw" "$crash_fn"), $(entry_count "$b2/previous.profraw" panic))" \
	bash -c "test '$(entry_count "$b2/previous.profraw" "$crash_fn")' = 1 &&
		test '$(entry_count "$b2/previous.profraw" panic)' -ge 1"
check "boot 2's own profile starts from its boot: start_kernel once, no crash yet" \
	bash -c "test '$(entry_count "$b2/vmlinux.profraw" start_kernel)' = 1 &&
		test '$(entry_count "$b2/vmlinux.profraw" "$crash_fn")' = 0"
check "the epoch switch of boot 1 is in its stats" \
	grep -q '^runtime .* epochs=1 persisted=1' "$b1/stats-switched"
live_calls=$(($(entry_count "$b2/live-after.profraw" __x64_sys_getpid) - $(entry_count "$b2/live-before.profraw" __x64_sys_getpid)))
check "the live file maps the region's counters: 1000 getpid calls between two reads ($live_calls)" \
	test "$live_calls" = 1000
check "the previous profile merges with the live one" \
	"$profdata" merge -o "$out/merged.profdata" "$b2/previous.profraw" "$b2/live-after.profraw"
# Boot 1 panicked on purpose: boot 2's part of the console.
sed -n '/KPGO-GUEST-START.*boot=2/,$p' "$out/console.log" >"$out/console-boot2.log"
check_console "boot 2 ran without a kernel report" "$out/console-boot2.log"

# Another build of the same kernel: relinked, with a new build id and
# the same layout. Kernel A crashes on a RAM file, kernel B boots on it.
other=$out_root/persist-other
rm -rf "$other"
mkdir -p "$other"
cp "$KPGO_TREE/arch/x86/boot/bzImage" "$other/a.bzImage"
touch "$KPGO_TREE/init/version.c"
"$root/scripts/kmake" -s >"$other/relink.log" 2>&1
id_b=$(build_id "$KPGO_TREE/vmlinux")
check "the relinked kernel has another build id ($id, $id_b)" \
	bash -c "test -n '$id_b' -a '$id_b' != '$id'"
ram=(--qemu-arg -object --qemu-arg "memory-backend-file,id=ram,size=$mem,mem-path=$other/ram,share=on"
	--qemu-arg -machine --qemu-arg memory-backend=ram)
status_a=0 status_b=0
"$root/scripts/qemu-run" --out "$other/a" --timeout 300 --mem "$mem" --kernel "$other/a.bzImage" \
	--append "$append persist_test=crash" --file "$guest_bin/getpid_loop" "${ram[@]}" \
	"$@" "$here/persist.guest.sh" || status_a=$?
"$root/scripts/qemu-run" --out "$other/b" --timeout 300 --mem "$mem" \
	--append "$append persist_test=other" --file "$guest_bin/getpid_loop" "${ram[@]}" \
	"$@" "$here/persist.guest.sh" || status_b=$?
check "kernel A crashed (no results: status $status_a), kernel B completed (status $status_b)" \
	bash -c "test $status_a -eq 125 -a $status_b -eq 0 && grep -q 'sysrq triggered crash' '$other/a/console.log'"
r=$other/b/results
ob=$r/boot1
check "kernel B refuses kernel A's profile with one line naming both builds" \
	grep -qx "\[ *[0-9.]*\] kpgo: the profile in reserve_mem 'kpgo' is of build $id, this kernel is $id_b: not served, replaced" "$ob/dmesg"
check_after other "... serves no previous profile ($(cat "$ob/previous-error" 2>/dev/null)), says so in stats, and keeps its own" \
	bash -c "test ! -s '$ob/previous-files' -a ! -e '$ob/previous-opened' &&
		grep -q '^runtime .* persisted=1 previous=0 ' '$ob/stats'"

# Damage between two boots of one build: a bit of the counts that kernel
# B sealed at its panic, flipped in the RAM file (guest physical address
# = file offset below 3G), is refused with one line.
region_at=$(where "$ob/dmesg")
used=$(sed -n "s/.*counters kept in reserve_mem 'kpgo' at .* bytes, \([0-9]*\) used).*/\1/p" "$ob/dmesg")
cnts=$(KPGO_LLVM_BIN=$llvm "$root/scripts/elf-section-bytes" "$KPGO_TREE/vmlinux" | sed -n 's/^__llvm_prf_cnts //p')
status_c=0 status_d=0
"$root/scripts/qemu-run" --out "$other/c" --timeout 300 --mem "$mem" \
	--append "$append persist_test=crash" --file "$guest_bin/getpid_loop" "${ram[@]}" \
	"$@" "$here/persist.guest.sh" || status_c=$?
# The sealed counts are the region's last area, a page multiple long.
sealed_at=$((region_at + used - (cnts + 4095) / 4096 * 4096))
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 4]))' \
	"$other/ram" "$sealed_at"
"$root/scripts/qemu-run" --out "$other/d" --timeout 300 --mem "$mem" \
	--append "$append persist_test=other" --file "$guest_bin/getpid_loop" "${ram[@]}" \
	"$@" "$here/persist.guest.sh" || status_d=$?
od=$other/d/results/boot1
check "kernel B crashed (status $status_c), then refused its own profile, damaged at $(printf %#x "$sealed_at") in the sealed counts, with one line (status $status_d)" \
	bash -c "test $status_c -eq 125 -a $status_d -eq 0 &&
		grep -qx '\[ *[0-9.]*\] kpgo: the profile in reserve_mem .kpgo. does not match its seal (damaged): not served, replaced' '$od/dmesg' &&
		test ! -e '$od/previous-opened' && grep -q '^runtime .* persisted=1 previous=0 ' '$od/stats'"

# Bad input: a region too small, and a name that is no region. The
# counters stay in the image, and the profile is whole.
for bad in small nosuch; do
	status=0
	"$root/scripts/qemu-run" --out "$other/$bad" --timeout 300 --mem "$mem" \
		--append "reserve_mem=1M:4096:small kpgo_persist=$bad persist_test=other" \
		"$@" "$here/persist.guest.sh" || status=$?
	ob=$other/$bad/results/boot1
	case $bad in
	small) line="kpgo: counters not kept in reserve_mem 'small': the region is too small: it needs [0-9]* bytes" ;;
	nosuch) line="kpgo: kpgo_persist=nosuch: no such reserve_mem= region: counters not kept" ;;
	esac
	starts=$(entry_count "$ob/vmlinux.profraw" start_kernel)
	lines=$(grep -c -x "\[ *[0-9.]*\] $line" "$ob/dmesg" 2>/dev/null || true)
	check "kpgo_persist=$bad: refused with one line, counters in the image, profile whole (status $status, ${lines:-0} line, start_kernel ${starts:-?})" \
		bash -c "test $status -eq 0 -a '${starts:-}' = 1 -a '${lines:-0}' = 1 &&
			grep -q '^runtime .* persisted=0 previous=0 ' '$ob/stats'"
done

summary persist
