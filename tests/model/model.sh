#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The front-end model (bench/model/, scripts/model-plugin):
#   - micro-cases whose answers are known (tests/model/layout.c, under
#     qemu-x86_64): a window counts exactly its instructions; a counted
#     loop gives its branches, taken ones and no more than a few
#     mispredictions; 96 functions called in a hot loop, spread one per
#     page, miss in the L1i and the iTLB on nearly every call and cost
#     more modeled cycles than the same functions packed together, with
#     the same instructions; loads over 16 KiB hit the L1d, over 64 KiB
#     they miss it and hit the L2; a rep movsb is one instruction and
#     its repeats;
#   - sharing, two threads under qemu-x86_64 (tests/model/sharing.c), two
#     vCPUs: one counter incremented by both in turn is a transfer per
#     turn (90% to 100% of them: the plugin's callbacks race with the
#     other thread's accesses), each at transfer_latency cycles; a counter per
#     thread on lines of their own, none; transfer_report names the
#     counter's line and the code that took them;
#   - refusals with a message: unknown or bad parameters, more vCPUs
#     than the model has cores, no plugin header;
#   - one boot of the test kernel (make kernel) running the benchmark's
#     model windows under -icount: every window is reported, and its
#     instruction count is within 1% of -icount's (guest ns / 4);
#   - the lever verdicts of bench/model/report.py, and the figures of
#     scripts/sampling-figures, on inputs whose answer is known
#     (tests/model/report_test.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/model-test
tree=${KPGO_TREE:-$root/build/linux}
llvm=${KPGO_LLVM_BIN:-/usr/lib/llvm-19/bin}
# shellcheck source=../kernel/lib.sh
source "$root/tests/kernel/lib.sh"
rm -rf "$out"
mkdir -p "$out"

plugin=$("$root/scripts/model-plugin")
check "the plugin builds against the installed QEMU's header" test -s "$plugin"
for align in 16 4096; do
	"$llvm/clang" -static -O2 -Wall -Werror -DALIGN=$align \
		-o "$out/layout-$align" "$here/layout.c"
	qemu-x86_64 -plugin "$plugin" -d plugin -D "$out/layout-$align.log" "$out/layout-$align"
done

# field FILE WINDOW NAME: the count NAME of window WINDOW in FILE.
field() {
	sed -n "s/^kpgo-model window=$2 \(.* \)\{0,1\}$3=\([0-9]*\).*/\2/p" "$1"
}
packed=$out/layout-16.log spread=$out/layout-4096.log
check "a window of 1000 nops counts 1001 instructions (the end marker too)" \
	test "$(field "$packed" 1 insns)" = 1001
check "1000 dec/jnz: 2002 instructions, 1000 conditional branches, 999 taken" \
	test "$(field "$packed" 2 insns)/$(field "$packed" 2 cond_branches)/$(field "$packed" 2 taken)" = 2002/1000/999
check "1000 dec/jnz: 1 to 5 mispredictions (the exit, a few while learning)" \
	test "$(field "$packed" 2 mispredicts)" -ge 1 -a "$(field "$packed" 2 mispredicts)" -le 5
check "96 calls a loop: the same instructions packed and spread" \
	test "$(field "$packed" 3 insns)" = "$(field "$spread" 3 insns)"
iterations=10000
check "spread one per page: at least 90 L1i misses per iteration of 96 calls" \
	test "$(field "$spread" 3 l1i_misses)" -ge $((90 * iterations))
check "spread one per page: at least 90 iTLB misses per iteration (64 entries)" \
	test "$(field "$spread" 3 itlb_misses)" -ge $((90 * iterations))
check "packed: fewer than 1 L1i and iTLB miss per 100 iterations" \
	test $(($(field "$packed" 3 l1i_misses) + $(field "$packed" 3 itlb_misses))) -lt $((iterations / 100))
check "spread costs at least twice the modeled cycles of packed" \
	test "$(field "$spread" 3 cycles)" -ge $((2 * $(field "$packed" 3 cycles)))
check "100 passes over 16 KiB, one load per line: no L1d misses (fits in 32 KiB)" \
	test "$(field "$packed" 4 l1d_misses)" -lt 100
check "100 passes over 64 KiB: at least 102000 of its 102400 loads miss the L1d" \
	test "$(field "$packed" 5 l1d_misses)" -ge 102000
check "100 passes over 64 KiB: the L2 (1 MiB) holds them: fewer than 100 L2 misses" \
	test "$(field "$packed" 5 l2_misses)" -lt 100
# QEMU runs it once per byte, and once more where it finds the count zero.
check "rep movsb of 4096 bytes: at most 5 instructions, 4095 or 4096 repeats" \
	test "$(field "$packed" 6 insns)" -le 5 -a "$(field "$packed" 6 rep_repeats)" -ge 4095 \
	-a "$(field "$packed" 6 rep_repeats)" -le 4096
# line_report: the misses it lists are the window's, the footprint is
# what the micro-case lays out, and reporting changes no count.
qemu-x86_64 -plugin "$plugin,line_report=100000" -d plugin -D "$out/lines-4096.log" "$out/layout-4096"
lines=$out/lines-4096.log
check "line_report: window 3's lines' misses add up to its l1i_misses" \
	test "$(awk '$2 == "line" && $3 == "window=3" { sub(/misses=/, "", $6); n += $6 } END { print n + 0 }' "$lines")" = \
	"$(field "$lines" 3 l1i_misses)"
# (The fullest L1i set of window 3's lines fetched once per iteration.)
fullest_set=$(python3 - "$lines" $iterations <<'PY'
import collections, sys
sets = collections.Counter()
for line in open(sys.argv[1]):
    f = line.split()
    if f[1:3] == ["line", "window=3"] and int(f[4].split("=")[1]) >= int(sys.argv[2]):
        sets[(int(f[3].split("=")[1], 16) // 64) % 64] += 1
print(max(sets.values(), default=0))
PY
)
check "line_report: the 96 functions spread one per page: $fullest_set hot lines in one L1i set, at least 96" \
	test "$fullest_set" -ge 96
check "line_report: every count of every window as without it" \
	cmp -s <(grep '^kpgo-model window=' "$spread") <(grep '^kpgo-model window=' "$lines")

# The refusals' own control: an argument that is fine runs.
check "a valid parameter (l1i_ways=4) is taken" \
	qemu-x86_64 -plugin "$plugin,l1i_ways=4" "$out/layout-16"
echo "micro-case, modeled cycles per iteration: packed $(($(field "$packed" 3 cycles) / iterations)), spread $(($(field "$spread" 3 cycles) / iterations))"

# refuses WHAT MESSAGE COMMAND...: COMMAND fails, and says MESSAGE.
refuses() {
	local what=$1 message=$2
	shift 2
	check "$what" bash -c 'log=$0 message=$1; shift; ! "$@" >"$log" 2>&1 && grep -q -- "$message" "$log"' \
		"$out/refusal.log" "$message" "$@"
}
refuses "an unknown parameter is refused by name" "kpgo-model: unknown argument l1_size=1" \
	qemu-x86_64 -plugin "$plugin,l1_size=1" "$out/layout-16"
refuses "a cache whose sets are not a power of two is refused" "kpgo-model: bad sizes" \
	qemu-x86_64 -plugin "$plugin,l1i_ways=3" "$out/layout-16"
refuses "a number that is not one is refused" "kpgo-model: l2_latency=x: not a number" \
	qemu-x86_64 -plugin "$plugin,l2_latency=x" "$out/layout-16"
refuses "a negative number is refused" "kpgo-model: l2_latency=-1: not a number" \
	qemu-x86_64 -plugin "$plugin,l2_latency=-1" "$out/layout-16"
refuses "a cache size that is not a multiple of 64 bytes is refused" \
	"kpgo-model: cache sizes must be multiples of 64" \
	qemu-x86_64 -plugin "$plugin,l1i_size=32800" "$out/layout-16"
refuses "more than 8 vCPUs are refused" "kpgo-model: models at most 8 cores; run with -smp 8 or fewer (not 9)" \
	qemu-system-x86_64 -machine pc,accel=tcg -display none -smp 9 -plugin "$plugin" -kernel /nonexistent

# Sharing: two threads under qemu-x86_64 are two vCPUs, two cores.
"$llvm/clang" -static -O2 -Wall -Werror -pthread -o "$out/sharing" "$here/sharing.c"
qemu-x86_64 -plugin "$plugin" -d plugin -D "$out/sharing.log" "$out/sharing" >"$out/sharing.out"
rounds=$(sed -n 's/^rounds //p' "$out/sharing.out")
# sum WINDOW FIELD: FIELD of WINDOW over the vCPUs that counted it.
sum() {
	sed -n "s/^kpgo-model window=$1 vcpu=[0-9]* .* $2=\([0-9]*\).*/\1/p" "$out/sharing.log" |
		awk '{ n++; s += $1 } END { print n + 0, s + 0 }'
}
read -r turn_windows turn_transfers < <(sum 0 transfers)
read -r own_windows own_transfers < <(sum 1 transfers)
read -r _ false_transfers < <(sum 2 transfers)
check "sharing: two vCPUs counted windows 0 and 1 each ($turn_windows, $own_windows)" \
	test "$turn_windows/$own_windows/$(sed -n 's/^shared //p' "$out/sharing.out")" = "2/2/$((2 * ${rounds:-0}))"
# Each turn but the first reads the other core's write. A callback runs
# after its access, unsynchronized with the other thread's: a thread
# that the host preempts between its store and the store's callback lets
# the other take its turn unseen, and both turns' transfers are lost (a
# CI run on 2 host cores lost 4.8%; idle runs, a few per thousand). None
# can be counted twice: the count is at most 2 * rounds - 1.
check "sharing: one counter in turn, $turn_transfers transfers, 90% to 100% of 2 * $rounds - 1" \
	python3 -c "import sys; sys.exit(not 0.90 <= $turn_transfers / (2 * ${rounds:-1} - 1) <= 1.0)"
check "sharing: a counter per thread on lines of their own, no transfer ($own_transfers)" \
	test "$own_transfers" -eq 0
# With a transfer_latency that dwarfs every other cost, each window's
# cycles divided by it are its transfers.
# The same run reports where the transfers were (transfer_report).
qemu-x86_64 -plugin "$plugin,transfer_latency=100000000,transfer_report=8" -d plugin \
	-D "$out/sharing-cost.log" "$out/sharing" >/dev/null
costs=$(sed -n 's/^kpgo-model window=0 vcpu=[0-9]* .* transfers=\([0-9]*\) cycles=\([0-9]*\)$/\1 \2/p' \
	"$out/sharing-cost.log" | awk '{ printf "%s/%d ", $1, $2 / 100000000 }')
check "sharing: each transfer costs transfer_latency cycles (window 0, transfers/cycles per latency: $costs)" \
	bash -c '[[ $1 =~ ^([0-9]+)/([0-9]+)\ ([0-9]+)/([0-9]+)\ $ ]] && (( BASH_REMATCH[1] > 0 &&
		BASH_REMATCH[1] == BASH_REMATCH[2] && BASH_REMATCH[3] == BASH_REMATCH[4] ))' _ "$costs"
echo "sharing: two counters on one line (false sharing): $false_transfers transfers, as the host interleaved the threads"
# transfer_report: each vCPU's places of window 0 are the in-turn counter's
# line, taken by worker()'s code, and add up to the window's transfers;
# window 1 has none.
"$llvm/llvm-nm" -n "$out/sharing" >"$out/sharing.nm"
check "transfer_report: window 0's transfers are all on in_turn's line, from worker(), as many as the window counted; window 1 has none" \
	python3 - "$out/sharing-cost.log" "$out/sharing.nm" <<'PY'
import re, sys
log, nm = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
syms = [(int(a, 16), n) for a, _, n in (l.split() for l in nm if len(l.split()) == 3)]
line = next(a for a, n in syms if re.fullmatch(r"in_turn(\.\d+)?", n))
start = next(a for a, n in syms if n == "worker")
end = min(a for a, _ in syms if a > start)
windows = re.findall(r"^kpgo-model window=0 vcpu=(\d+) .* transfers=(\d+) ", log, re.M)
ok = len(windows) == 2
for vcpu, total in windows:
    places = re.findall(rf"^kpgo-model transfer window=0 vcpu={vcpu} pc=(\S+) addr=(\S+) store=\d count=(\d+)$", log, re.M)
    counted = sum(int(c) for _, _, c in places)
    where = {(start <= int(pc, 16) < end, int(addr, 16) == line) for pc, addr, _ in places}
    print(f"vcpu {vcpu}: {len(places)} places, {counted} of {total} transfers, (in worker, on in_turn): {where}")
    ok &= bool(places) and counted == int(total) and where == {(True, True)}
ones = re.findall(r"^kpgo-model transfers window=1 vcpu=\d+ places=(\d+) ", log, re.M)
print(f"window 1 places: {ones}")
sys.exit(not (ok and ones and set(ones) == {"0"}))
PY
refuses "without the plugin header, model-plugin says to run scripts/setup" \
	"model-plugin: no qemu-plugin.h for QEMU .* run scripts/setup" \
	env KPGO_CACHE="$out/no-cache" "$root/scripts/model-plugin"

# The benchmark's windows on the test kernel, against -icount.
"$llvm/clang" -static -O2 -Wall -Werror -o "$out/syscalls" "$root/bench/guest/syscalls.c"
status=0
"$root/scripts/model-boot" "$tree/arch/x86/boot/bzImage" "$out/kernel" "$out/syscalls" "$plugin" ||
	status=$?
check "the model boot ran the benchmark (status $status)" test "$status" -eq 0
ops=$out/kernel/results/model-ops
# The test kernel lacks the system calls of some untrained benchmarks
# (no networking, signalfd, timerfd or inotify): those are left out; a
# window's id is its benchmark's place in the list.
ran=$(wc -l <"$ops" 2>/dev/null || echo 0)
ids=$(sed -n 's/^kpgo-model window=\([0-9]*\) .*/\1/p' "$out/kernel.plugin.log" | sort -nu | tr '\n' ' ')
check "$ran benchmarks ran, each in its own window, the 6 trained ones among them (ids $ids)" \
	test "$(echo $ids | wc -w)/${ids:0:12}" = "$ran/0 1 2 3 4 5 "
"$out/syscalls" --list >"$out/benchmarks"
while read -r name count ns; do
	index=$(($(grep -nx "$name" "$out/benchmarks" | cut -d: -f1) - 1))
	# -icount counts each repeat of a REP string instruction.
	insns=$(($(field "$out/kernel.plugin.log" $index insns) + $(field "$out/kernel.plugin.log" $index rep_repeats)))
	check "$name: the model's $insns instructions and repeats within 1% of -icount's $((ns / 4))" \
		python3 -c "import sys; sys.exit(abs($insns / ($ns / 4) - 1) > 0.01)"
done <"$ops"

# The split of the benchmarks into trained and untrained, on made-up
# profiles: scripts/untrained-check and scripts/profile-ran-only.
sets=$out/sets
mkdir -p "$sets"
cat >"$sets/workload.proftext" <<'EOF'
:ir
__x64_sys_epoll_wait
# Func Hash:
1
# Num Counters:
2
# Counter Values:
0
0

fs/eventpoll.c;ep_poll
# Func Hash:
2
# Num Counters:
2
# Counter Values:
0
4

caller
# Func Hash:
3
# Num Counters:
1
# Counter Values:
3
# Num Value Kinds:
1
# ValueKind = IPVK_IndirectCallTarget:
0
# NumValueSites:
1
1
fs/eventpoll.c;ep_poll:3
EOF
"$llvm/llvm-profdata" merge -o "$sets/workload.profdata" "$sets/workload.proftext"
printf '%s\n' '# SPDX-License-Identifier: GPL-2.0' 'epoll_pipe __x64_sys_epoll_wait' >"$sets/never.txt"
printf '%s\n' 'epoll_pipe __x64_sys_epoll_wait ep_poll' >"$sets/ran.txt"
printf '%s\n' 'epoll_pipe __x64_sys_epoll_pwait' >"$sets/missing.txt"
check "untrained-check passes an entry function whose counters are all 0" \
	"$root/scripts/untrained-check" "$llvm/llvm-profdata" "$sets/workload.profdata" "$sets/never.txt"
refuses "untrained-check names a static entry function that ran" \
	"epoll_pipe: fs/eventpoll.c;ep_poll ran (its counters sum to 4)" \
	"$root/scripts/untrained-check" "$llvm/llvm-profdata" "$sets/workload.profdata" "$sets/ran.txt"
refuses "untrained-check refuses an entry function the profile lacks (a 0 would prove nothing)" \
	"epoll_pipe: __x64_sys_epoll_pwait is not in the profile" \
	"$root/scripts/untrained-check" "$llvm/llvm-profdata" "$sets/workload.profdata" "$sets/missing.txt"
"$root/scripts/profile-ran-only" "$llvm/llvm-profdata" "$sets/workload.profdata" "$sets/ran.profdata" >/dev/null
"$llvm/llvm-profdata" show --all-functions --counts --ic-targets "$sets/ran.profdata" >"$sets/ran.show"
check "profile-ran-only leaves out the function that never ran and keeps the two that did" \
	test "$(grep -c '^    Hash: ' "$sets/ran.show")/$(grep -c '__x64_sys_epoll_wait' "$sets/ran.show")" = 2/0
check "... with their counts and value profiles" \
	grep -Eq '^\s*\[ *0, fs/eventpoll.c;ep_poll, +3 \]' "$sets/ran.show"

# The lever verdicts, on made-up boots: its checks count as this suite's.
python3 "$here/report_test.py" >"$out/report-test.log" 2>&1 || true
grep -E '^(ok|FAIL): ' "$out/report-test.log" || true
read -r report_passed report_failed < <(sed -n \
	's/^report: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$out/report-test.log") || true
check "report_test.py ran to its end ($out/report-test.log)" test -n "${report_passed:-}"
passed=$((passed + ${report_passed:-0}))
failed=$((failed + ${report_failed:-0}))

summary model
