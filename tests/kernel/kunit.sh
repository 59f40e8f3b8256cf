#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own tests on every kernel of the loop (make check-kunit):
# one configuration with KUnit, in-tree suites and the kernel crate's
# doctests (scripts/configs/kunit.config), built three times in trees of
# its own (build/kunit/): instrumented, optimized with the profile of the
# instrumented kernel's KUnit run, and a baseline without PGO.  Each boots
# under QEMU; the suites run at boot and their results come from debugfs
# (and test_bitmap's from the console).  Every suite must give the same
# result, with the same cases, on all three, and pass; the instrumented
# run's profile must hold the doctests with counts.
#
# Three kernel builds (about 25 minutes on 2 cores), so not part of make
# check.
#
# Usage: tests/kernel/kunit.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
out=$root/build/kunit
fragment=$root/scripts/configs/kunit.config
profile=$out/kunit.profdata
# shellcheck source=lib.sh
source "$here/lib.sh"
export BASE=tinyconfig
mkdir -p "$out"

# The cases that fail on 6.12 with clang 19 whatever the kernel, baseline
# included: the test's expectation, not the code (fixed in 6.15).  A
# failure that is not in this list fails the check, and so does one of
# these that stops failing (the list is then out of date).
#   overflow DEFINE_FLEX_test: __builtin_dynamic_object_size() of a
#   __counted_by struct whose counter is 0 (ClangBuiltLinux issue 2074)
known_failures=
[[ $(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LINUX"' _ "$root") != 6.12 ]] ||
	known_failures='overflow DEFINE_FLEX_test'

# The suites the configuration asks for: each must be there, on each kernel.
expected=(bitfields bits-test checksum cpumask hash hashtable hlist klist
	lib_sort list-kunit-test memcpy overflow rust_doctests_kernel siphash
	string string_helpers test_bitmap)

# build NAME TREE CONFIGURE-ARGUMENTS... [-- BUILD COMMAND...]: prepares,
# configures and builds TREE (the command defaults to scripts/kmake),
# logging to $out/NAME.log; checks the status.
build() {
	local name=$1 tree=$2 status=0
	shift 2
	local args=() cmd=("$root/scripts/kmake")
	while (($#)) && [[ $1 != -- ]]; do
		args+=("$1")
		shift
	done
	if (($#)); then
		shift
		cmd=("$@")
	fi
	local started=$SECONDS
	{
		KPGO_TREE=$tree "$root/scripts/prepare-kernel" --configure "${args[@]}" \
			--fragment "$fragment" &&
			KPGO_TREE=$tree "${cmd[@]}"
	} >"$out/$name.log" 2>&1 || status=$?
	echo "kunit: $name kernel built in $((SECONDS - started)) s (status $status)"
	check "the $name kernel builds (status $status; $out/$name.log)" test "$status" -eq 0
}

# run NAME TREE: boots TREE's kernel, writes the suites' table to
# $out/NAME.table and checks what every kernel must show.
run() {
	local name=$1 tree=$2 status=0 started=$SECONDS
	"$root/scripts/qemu-run" --kernel "$tree/arch/x86/boot/bzImage" --out "$out/qemu-$name" \
		--timeout 900 --mem 1G "$here/kunit.guest.sh" >/dev/null 2>&1 || status=$?
	echo "kunit: $name kernel booted and ran the suites in $((SECONDS - started)) s (status $status)"
	r=$out/qemu-$name/results
	check "$name: the guest completed (status $status)" test "$status" -eq 0
	check_console "$name: a clean console (no BUG, oops, WARNING, lockdep or KASAN report)" \
		"$out/qemu-$name/console.log"
	python3 "$here/kunit_results.py" "$r" >"$out/$name.table" 2>/dev/null || true
	python3 "$here/kunit_results.py" --failed "$r" >"$out/$name.failed" 2>/dev/null || true
	local suite missing=()
	for suite in "${expected[@]}"; do
		grep -q "^$suite " "$out/$name.table" || missing+=("$suite")
	done
	check "$name: every suite ran (missing: ${missing[*]:-none})" test "${#missing[@]}" -eq 0
	check "$name: every case passed but the known failures (failed: $(paste -sd, "$out/$name.failed"))" \
		test "$(cat "$out/$name.failed")" = "$known_failures"
	check "$name: test_bitmap passed (console)" grep -q '^test_bitmap ok ' "$out/$name.table"
	# The Rust abstraction the series adds (module_notifier.rs): its
	# doctest ran, and passed.
	local doctest
	for doctest in module_notifier_rs_0; do
		check "$name: the doctest rust_doctest_kernel_$doctest passed" \
			grep -qE "^\s*ok [0-9]+ rust_doctest_kernel_$doctest\$" "$r/kunit/rust_doctests_kernel"
	done
	awk -v k="$name" '{ split($3, c, "="); n += c[2]; split($5, f, "="); bad += f[2] }
		END { printf "kunit: %s: %d suites, %d cases, %d failed\n", k, NR, n, bad }' \
		"$out/$name.table" || true
}

instrumented=$out/linux
optimized=$out/linux-optimized
baseline=$out/linux-nopgo

build instrumented "$instrumented"
check "the instrumented kernel has the doctests, instrumented" \
	bash -c "test -s '$instrumented/rust/doctests_kernel_generated.o' &&
		grep -q -- '-Cprofile-generate' '$instrumented/rust/.doctests_kernel_generated.o.cmd'"
run instrumented "$instrumented"

# The instrumented run's profile: the doctests are in it, with counts.
rm -f "$profile"
"$llvm/llvm-profdata" merge -o "$profile" "$r/vmlinux.profraw" 2>"$out/merge.log" || true
check "the instrumented run's profile merges (llvm-profdata)" test -s "$profile"
"$llvm/llvm-profdata" show --all-functions --counts "$profile" >"$out/profile.txt" 2>&1 || true
doctests=$(python3 - "$out/profile.txt" <<'EOF'
import re, sys
# llvm-profdata show --counts: "  <name>:", then "    Block counts: [N, ...]"
# whose first count is the entry count (entry counters first).  Each
# doctest is the function rust_doctest_kernel_<file>_<n> (what its KUnit
# case calls, once); the code it runs is in the crate
# doctests_kernel_generated (v0 symbols).
name, entries, once, crate, crate_run = None, 0, 0, 0, 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.match(r"^  (\S.*):$", line)
    if m:
        name = m.group(1)
        continue
    m = re.match(r"^    Block counts: \[(\d+)", line)
    if not m or not name:
        continue
    count = int(m.group(1))
    if name.startswith("rust_doctest_kernel_"):
        entries += 1
        once += count == 1
    elif "25doctests_kernel_generated" in name:
        crate += 1
        crate_run += count > 0
    name = None
print(entries, once, crate, crate_run)
EOF
) || doctests=
read -r doctests_total doctests_once crate_total crate_run <<<"${doctests:-0 0 0 0}"
echo "kunit: the profile holds $doctests_total doctests, $doctests_once of them run exactly once," \
	"and $crate_total other functions of the doctests' crate, $crate_run of them run"
doctests_ran=$(awk '$1 == "rust_doctests_kernel" { sub(/cases=/, "", $3); print $3 }' \
	"$out/instrumented.table")
check "the profile holds every doctest (${doctests_total} functions, ${doctests_ran:-?} cases ran)" \
	test "${doctests_total:-0}" -gt 0 -a "${doctests_total:-0}" = "${doctests_ran:-x}"
check "... with counts: each doctest ran exactly once ($doctests_once of $doctests_total)" \
	test "${doctests_once:-0}" -eq "${doctests_total:-0}" -a "${doctests_total:-0}" -gt 0
check "... and the code they run is counted ($crate_run of $crate_total functions of their crate)" \
	test "${crate_run:-0}" -gt 0

build optimized "$optimized" --no-pgo -- "$root/scripts/build-optimized" \
	--instrumented "$instrumented" "$profile"
counts=$optimized/pgo-profile-diagnostics.txt
out_of_date=$(diagnostic "$counts" out_of_date)
check "the optimized kernel: 0 out-of-date functions with its own profile (${out_of_date:-?})" \
	test "${out_of_date:--1}" -eq 0
check "the doctests were built with the profile (-Cprofile-use)" \
	grep -q -- '-Cprofile-use=' "$optimized/rust/.doctests_kernel_generated.o.cmd"
run optimized "$optimized"

build baseline "$baseline" --no-pgo
run baseline "$baseline"

for name in optimized baseline; do
	check "$name: every suite gave the instrumented kernel's result, with the same cases" \
		cmp -s "$out/instrumented.table" "$out/$name.table"
	{ diff "$out/instrumented.table" "$out/$name.table" || true; } | sed 's/^/  /'
done
echo "kunit: the suites of the baseline:"
sed 's/^/  /' "$out/baseline.table" || true
summary kunit
