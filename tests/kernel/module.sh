#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# An instrumented external module (tests/kernel/module/) builds with
# scripts/kmake M=..., carries one section of each __llvm_prf_* kind, and
# loads, runs and unloads in the instrumented kernel (make kernel) under
# QEMU without BUG, oops or warning.
#
# Usage: tests/kernel/module.sh [qemu-run options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
readelf=/usr/lib/llvm-19/bin/llvm-readelf
out=$root/build/qemu/module
# Objects never land in the repo: build a copy.
moddir=$root/build/tests/module
mkdir -p "$moddir"
rsync -a "$here/module/" "$moddir/"

passed=0
failed=0
check() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "ok: $what"
		passed=$((passed + 1))
	else
		echo "FAIL: $what"
		failed=$((failed + 1))
	fi
}
# Number of sections called $2 in ELF file $1.
count_sections() {
	"$readelf" -S --wide "$1" | sed 's/^ *\[ *[0-9]*\] //' |
		awk -v name="$2" '$1 == name { n++ } END { print n + 0 }'
}

"$root/scripts/kmake" -s M="$moddir" modules
ko=$moddir/kpgo_test.ko
check "kpgo_test.ko built" test -f "$ko"
for kind in data cnts names vals vnds; do
	n=$(count_sections "$ko" "__llvm_prf_$kind")
	check "kpgo_test.ko has one __llvm_prf_$kind section (has $n)" test "$n" -eq 1
done
check "kpgo_test.ko has no section groups left" \
	bash -c "! $readelf -S --wide '$ko' | grep -q ' GROUP '"

status=0
"$root/scripts/qemu-run" --out "$out" --file "$ko" "$@" "$here/module.guest.sh" || status=$?
check "guest completed and its script passed (status $status)" test "$status" -eq 0
check "module init ran" grep -q 'kpgo_test: init run' "$out/console.log"
check "module ran from debugfs" test -s "$out/results/run"
check "module unloaded" test -f "$out/results/unloaded"
check "no BUG, oops or WARNING on the console" \
	bash -c "! grep -E 'BUG:|Oops|WARNING:|Kernel panic' '$out/console.log'"

echo "module: $passed passed, $failed failed"
((failed == 0))
