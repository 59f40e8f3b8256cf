#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kpgo's entry-sampling pass plugin (llvm/entry-sampling.cpp) on the host,
# clang 22 and compiler-rt (the reference runtime), on
# tests/host/entry-sampling/program.c; llvm-profdata is the judge:
#   - with the burst flag always set, the profile equals that of the same
#     program built without the plugin (counts, indirect-call targets,
#     memcpy sizes): the twins change nothing that is counted;
#   - with it never set, every count is 0: the twins count nothing, and a
#     function without a twin (variadic) counts under the flag too;
#   - set one round in N, the functions called once per round count
#     exactly the rounds of bursts;
#   - every instrumented function but the variadic one and the computed
#     goto has a twin.
# Without the plugin's header and libraries (llvm-22-dev) this fails and
# says to run scripts/setup.
#
# Usage: tests/host/entry-sampling.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../kernel/lib.sh
source "$root/tests/kernel/lib.sh"
llvm=/usr/lib/llvm-22/bin
out=$root/build/host-tests/entry-sampling
rm -rf "$out"
mkdir -p "$out"

plugin=$("$root/scripts/entry-sampling-plugin" "$llvm")
src=$here/entry-sampling
"$llvm/clang" -O2 -c "$src/flag.c" -o "$out/flag.o"
"$llvm/clang" -O2 -fprofile-generate -c "$src/program.c" -o "$out/full.o"
"$llvm/clang" -O2 -fprofile-generate -fplugin="$plugin" -fpass-plugin="$plugin" \
	-mllvm -kpgo-entry-flag-tls -mllvm -kpgo-entry-stats \
	-c "$src/program.c" -o "$out/sampled.o" 2>"$out/stats.txt"
for build in full sampled; do
	"$llvm/clang" -fprofile-generate "$out/$build.o" "$out/flag.o" -o "$out/$build"
done

# profile BUILD MODE: runs it, prints its profile as text.
profile() {
	LLVM_PROFILE_FILE=$out/$1-$2.profraw KPGO_BURST=$2 "$out/$1" 1000 >"$out/$1-$2.stdout"
	"$llvm/llvm-profdata" show --all-functions --counts --ic-targets --memop-sizes \
		"$out/$1-$2.profraw" >"$out/$1-$2.txt"
}
profile full always
profile sampled always
profile sampled never
profile sampled 10

check "the program's output is the same with the plugin" \
	cmp -s "$out/full-always.stdout" "$out/sampled-always.stdout"
check "bursts always on: the profile equals full instrumentation's (counts, targets, sizes)" \
	cmp -s "$out/full-always.txt" "$out/sampled-always.txt"
check "... and it has counts, indirect-call targets and memcpy sizes to compare" \
	bash -c 'grep -q "Block counts: \[[1-9]" "$1" && grep -q ";leaf, " "$1" && grep -q "Memory Intrinsic Size Results" "$1"' \
	_ "$out/full-always.txt"
check "bursts never on: every count is 0 (no twin counts, the variadic function's updates wait for a burst)" \
	bash -c '! grep -E "Block counts: .*[1-9]" "$1" && ! grep -E "^\s*\[ *[0-9]+, .*, +[1-9][0-9]* \]" "$1"' \
	_ "$out/sampled-never.txt"
blocks() { sed -n "/^  $2:\$/,/Block counts/s/^    Block counts: \[\(.*\)\]/\1/p" "$out/$1.txt"; }
tenth() { blocks full-always "$1" | tr -d ' ' | tr , '\n' | awk '{ print $1 / 10 }' | paste -sd, | sed 's/,/, /g'; }
# sum() (variadic) and dispatch() (a computed goto) have no twin: their
# updates wait for a burst one by one.
for function in indirect copy sum dispatch; do
	check "one round in 10: $function()'s counts are exactly a tenth of full instrumentation's ($(blocks sampled-10 $function))" \
		test "$(blocks sampled-10 $function)" = "$(tenth $function)"
done
check "... indirect()'s calls in those rounds went to leaf() 66 times and twice() 34" \
	bash -c 'grep -Eq "\[ *0, .*;leaf, +66 \]" "$1" && grep -Eq "\[ *0, .*;twice, +34 \]" "$1"' \
	_ "$out/sampled-10.txt"
echo "plugin: $(cat "$out/stats.txt")"
check "every instrumented function has a twin but the variadic one and the computed goto" \
	grep -qx "kpgo-entry-sampling: $src/program.c: 7 of 9 instrumented functions twinned; 1 block addresses taken; 1 variadic" \
	"$out/stats.txt"
check "... and the object holds the 7 twins" \
	test "$("$llvm/llvm-nm" "$out/sampled.o" | grep -c '\.kpgo_twin$')" = 7
summary entry-sampling
