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
#   - every function but the variadic one, the computed goto and the one
#     in kprobes' blacklist has a
#     twin (atoi's available_externally body too), and a twin's calls go
#     to twins, or to the functions without one: no test between twins;
#     a function that the optimizer found does not return has no test
#     (objtool), its updates are guarded; a weak function is called as
#     itself, for the linker may choose another, and a call through a
#     cast keeps its callee; a function called from one without a twin
#     keeps its twin whole and tests at entry (the program's output is
#     the same with bursts on, off, or one in ten);
#   - with -kpgo-entry-extern-twins (vmlinux's objects), an external
#     function's twin is external, and twins call another object's
#     function's twin by its name (other.c's remote(), program.c's hop());
#     the link defines the name as the function itself where it has no
#     twin (flag.c's burst_tick()), as scripts/link-vmlinux.sh does;
#   - built without -fprofile-generate, the plugin changes no code.
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
for file in program other; do
	"$llvm/clang" -O2 -fprofile-generate -c "$src/$file.c" -o "$out/full-$file.o"
	"$llvm/clang" -O2 -fprofile-generate -fplugin="$plugin" -fpass-plugin="$plugin" \
		-mllvm -kpgo-entry-flag-tls -mllvm -kpgo-entry-stats -mllvm -kpgo-entry-extern-twins \
		-c "$src/$file.c" -o "$out/sampled-$file.o" 2>>"$out/stats.txt"
done
# As scripts/link-vmlinux.sh: the names of twins that no object defines
# are the functions themselves.
"$llvm/ld.lld" -r "$out/sampled-program.o" "$out/sampled-other.o" "$out/flag.o" -o "$out/sampled-all.o"
"$llvm/llvm-nm" -u "$out/sampled-all.o" | sed -n 's/^ *U \(.*\.kpgo_twin\)$/\1/p' |
	sed 's/^\(.*\)\.kpgo_twin$/PROVIDE("&" = "\1");/' >"$out/twins.lds"
"$llvm/clang" -fprofile-generate "$out/full-program.o" "$out/full-other.o" "$out/flag.o" -o "$out/full"
"$llvm/clang" -fprofile-generate "$out/sampled-all.o" "$out/twins.lds" -o "$out/sampled"

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

# The twins' output too: they call the strong overridden() of flag.c, not
# program.c's weak one.
for mode in always never 10; do
	check "the program's output is the same with the plugin, bursts $mode" \
		cmp -s "$out/full-always.stdout" "$out/sampled-$mode.stdout"
done
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
# sum() (variadic), dispatch() (a computed goto) and unprobed() (kprobes'
# blacklist) have no twin: their updates wait for a burst one by one.
for function in indirect copy sum dispatch unprobed remote hop deep; do
	check "one round in 10: $function()'s counts are exactly a tenth of full instrumentation's ($(blocks sampled-10 $function))" \
		test "$(blocks sampled-10 $function)" = "$(tenth $function)"
done
check "... indirect()'s calls in those rounds went to leaf() 66 times and twice() 34" \
	bash -c 'grep -Eq "\[ *0, .*;leaf, +66 \]" "$1" && grep -Eq "\[ *0, .*;twice, +34 \]" "$1"' \
	_ "$out/sampled-10.txt"
echo "plugin: $(cat "$out/stats.txt")"
check "every function has a twin but the variadic one, the computed goto, the one in kprobes' blacklist and the asm label's" \
	grep -qx "kpgo-entry-sampling: $src/program.c: 16 of 20 functions twinned; 1 asm defines a label; 1 block addresses taken; 1 named in a table (objtool's, kprobes', error injection's); 1 variadic" \
	"$out/stats.txt"
# The 18 that can be entered from outside a burst: visible outside the
# object, its address taken, or called from code without a twin; 12 test
# at entry, scale() (called from sum()) and deep() (from raw(), through
# always-inlined gate()) among them.  Guarded: give_up()
# (found not to return), the 4 without a twin and narrow() (called through
# a cast by one_round's twin, its return value dropped by the optimizer:
# no longer its twin's type).  give_up's twin is kept for main's; atoi()
# and gate() were inlined, and their twins too.  External, of the 11: indirect,
# with_array, copy, recurse, hop and main (not overridden, weak); the
# calls to other objects' twins: one_round's to remote, main's to
# burst_tick.
check "... the 12 entered from outside a burst test at entry; 6 are guarded; 6 twins external" \
	grep -qx "kpgo-entry-sampling: $src/program.c: at the end 12 entry tests, 6 guarded, 13 twins kept, 0 folded back; 6 twins external, 2 calls to other objects' twins" \
	"$out/stats.txt"
check "... other.c's remote() tests at entry, its twin is external and calls hop()'s" \
	grep -qx "kpgo-entry-sampling: $src/other.c: at the end 1 entry tests, 0 guarded, 1 twins kept, 0 folded back; 1 twins external, 1 calls to other objects' twins" \
	"$out/stats.txt"
check "... and the object holds those 13 twins" \
	test "$("$llvm/llvm-nm" --defined-only "$out/sampled-program.o" | grep -c '\.kpgo_twin$')" = 13
for function in scale deep; do
	check "$function() tests at entry: its body moved to $function.kpgo_counted" \
		bash -c '"$1" --defined-only "$2" | grep -q " $3\.kpgo_counted$"' \
		_ "$llvm/llvm-nm" "$out/sampled-program.o" "$function"
done
# The linked program: a twin's name is the twin where an object defines
# one, else the function itself (the link's PROVIDE, only burst_tick's).
address() { "$llvm/llvm-nm" "$out/sampled" | awk -v name="$1" '$3 == name { print $1 }'; }
check "the link made a name for burst_tick() only ($(paste -sd' ' "$out/twins.lds"))" \
	test "$(cat "$out/twins.lds")" = 'PROVIDE("burst_tick.kpgo_twin" = "burst_tick");'
check "... which is burst_tick() itself ($(address burst_tick.kpgo_twin))" \
	test "$(address burst_tick.kpgo_twin)" = "$(address burst_tick)"
for function in remote hop; do
	check "$function.kpgo_twin is its object's twin, not $function() ($(address $function.kpgo_twin), $(address $function))" \
		test -n "$(address $function.kpgo_twin)" -a "$(address $function.kpgo_twin)" != "$(address $function)"
done
# one_round's twin: every call it makes, by the symbol it reaches.
"$llvm/llvm-objdump" -d -r --no-show-raw-insn "$out/sampled-program.o" |
	awk '/<one_round\.kpgo_twin>:/,/^$/' | grep -A1 call |
	grep -oE '(R_X86_64_PLT32|R_X86_64_PC32)[[:space:]]+[A-Za-z_.]+|<[A-Za-z_.]+>' |
	sed -E 's/^R_X86_64_[A-Z0-9]+[[:space:]]+//; s/[<>]//g' >"$out/round-twin-calls.txt"
check "a twin calls its callees' twins, the functions without one, the weak one itself, and one called through a cast: $(paste -sd' ' "$out/round-twin-calls.txt")" \
	test "$(sort -u "$out/round-twin-calls.txt" | paste -sd' ')" = \
	"copy.kpgo_twin dispatch indirect.kpgo_twin labelled narrow overridden raw recurse.kpgo_twin remote.kpgo_twin scale.kpgo_twin sum unprobed with_array.kpgo_twin"
# A function with an entry test is a dispatcher: the flag's address (TLS
# here, one %gs-relative compare in the kernel), the test, and a jump to
# the twin or to its body; nothing of the body's prologue comes first.
"$llvm/llvm-objdump" -d --no-show-raw-insn "$out/sampled-program.o" |
	awk -F '\t' '/^[0-9a-f]+ <with_array>:/ { on = 1; next } /^$/ { on = 0 }
		on && NF > 1 && $2 !~ /^nop/ { split($2, word, " "); print word[1] }' |
	paste -sd' ' >"$out/dispatcher.txt"
check "with_array() is its entry test only: $(cat "$out/dispatcher.txt")" \
	test "$(cat "$out/dispatcher.txt")" = "movq cmpb je jmp"
# Built without -fprofile-generate, the twins fold back: the same code.
"$llvm/clang" -O2 -c "$src/program.c" -o "$out/plain.o"
"$llvm/clang" -O2 -fpass-plugin="$plugin" -mllvm -kpgo-entry-stats \
	-c "$src/program.c" -o "$out/plain-plugin.o" 2>"$out/plain-stats.txt"
check "not instrumented: every twin folds back ($(tail -1 "$out/plain-stats.txt" | sed 's/.*: at the end //'))" \
	grep -q "at the end 0 entry tests, 0 guarded, 0 twins kept, 13 folded back" "$out/plain-stats.txt"
check "... and the code is that of the build without the plugin" \
	cmp -s <("$llvm/llvm-objdump" -d --no-show-raw-insn "$out/plain.o" | tail -n +3) \
	<("$llvm/llvm-objdump" -d --no-show-raw-insn "$out/plain-plugin.o" | tail -n +3)
summary entry-sampling
