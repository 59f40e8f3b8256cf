#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Profiles of raw versions 10 and 11 merge: the path a fleet, or a kernel
# profiled over a move from LLVM 22 to 23, takes.  No llvm-profdata reads
# both raw versions (23 reads only 11, 22 only 10), so each raw profile is
# indexed by its own LLVM's llvm-profdata, and the newest merges the
# indexed profiles (an LLVM reads the indexed versions of older ones).
# The result is LLVM 23's (indexed version 14): clang 23 builds with it;
# for an LLVM 22 build it goes through the text format, which
# llvm-profdata 22 indexes again.  Per program of programs/, on the
# profiles compare.sh made with libkpgo.a (clang 22: raw version 10;
# clang 23: 11):
#   - both index, and llvm-profdata 23 merges the two indexed profiles;
#   - every function record (name and control-flow hash) of the merge has
#     the sum of the two inputs' counts, nothing lost or invented (a
#     function the two compilers hashed differently stays two records);
#   - the merge goes back to LLVM 22 through text, with the same counts,
#     and clang 22 and clang 23 each compile the program with their
#     profile without a warning that it is unreadable.
# Sourced by run.sh after compare.sh (its profiles); skipped with a FAIL
# when a toolchain is missing.

# shellcheck source=tests/host/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The function records of indexed profile $2 read by llvm-profdata $1, as
# sorted lines: "name hash counter-index count" for each counter and
# "name hash kind site target count" for each recorded value.
profile_records() { # llvm-profdata profile
	"$1" merge --text -o - "$2" | python3 -c '
import sys
out = []
for block in sys.stdin.read().split("\n\n"):
    t = [l for l in block.splitlines() if l and not l.startswith(("#", ":"))]
    if len(t) < 3:
        continue
    name, fhash, n = t[0], t[1], int(t[2])
    key = name + " " + fhash
    out += [f"{key} counter{i} {c}" for i, c in enumerate(t[3:3 + n])]
    rest = t[3 + n:]
    kinds = int(rest.pop(0)) if rest else 0
    for _ in range(kinds):
        kind, sites = rest.pop(0), int(rest.pop(0))
        for site in range(sites):
            for _ in range(int(rest.pop(0))):
                target, count = rest.pop(0).rsplit(":", 1)
                out.append(f"{key} kind{kind} site{site} {target} {count}")
print("\n".join(sorted(out)))'
}

# The sum of two record lists, per counter and per recorded value.
sum_records() { # a b
	python3 - "$1" "$2" <<'PY'
import sys
total = {}
for path in sys.argv[1:]:
    for line in open(path):
        if line.strip():
            key, count = line.rsplit(" ", 1)
            total[key] = total.get(key, 0) + int(count)
print("\n".join(sorted(f"{k} {v}" for k, v in total.items())))
PY
}

cross_version_program() { # program
	local prog=$1 dir=$OUT_ROOT/cross-version/$1 p22 p23 bin22 bin23
	local raw10=$OUT_ROOT/clang-22/$prog/kpgo.pie.profraw raw11=$OUT_ROOT/clang-23/$prog/kpgo.pie.profraw
	bin22=$(llvm_bin 22) bin23=$(llvm_bin 23)
	p22=$bin22/llvm-profdata p23=$bin23/llvm-profdata
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ ! -s "$raw10" ] || [ ! -s "$raw11" ]; then
		fail "cross-version/$prog: compare.sh made its clang 22 and clang 23 profiles"
		return
	fi
	if "$p23" merge -o "$dir/direct.profdata" "$raw10" "$raw11" >"$dir/direct.log" 2>&1; then
		info "cross-version/$prog: llvm-profdata 23 now reads raw version 10 itself"
	fi
	if ! "$p22" merge -o "$dir/v10.profdata" "$raw10" >"$dir/index.log" 2>&1 ||
		! "$p23" merge -o "$dir/v11.profdata" "$raw11" >>"$dir/index.log" 2>&1 ||
		! "$p23" merge -o "$dir/merged.profdata" "$dir/v10.profdata" "$dir/v11.profdata" >"$dir/merge.log" 2>&1; then
		fail "cross-version/$prog: each raw profile indexed by its own llvm-profdata, both merged by llvm-profdata 23"
		excerpt "$dir/index.log"
		excerpt "$dir/merge.log"
		return
	fi
	pass "cross-version/$prog: each raw profile indexed by its own llvm-profdata, both merged by llvm-profdata 23"
	if profile_records "$p22" "$dir/v10.profdata" >"$dir/v10.records" &&
		profile_records "$p23" "$dir/v11.profdata" >"$dir/v11.records" &&
		profile_records "$p23" "$dir/merged.profdata" >"$dir/merged.records" &&
		sum_records "$dir/v10.records" "$dir/v11.records" >"$dir/expected.records" &&
		[ -s "$dir/merged.records" ] && diff -u "$dir/expected.records" "$dir/merged.records" >"$dir/records.diff"; then
		pass "cross-version/$prog: the merge has each function record's summed counts and values ($(cut -d' ' -f1,2 "$dir/merged.records" | sort -u | wc -l) records of $(cut -d' ' -f1 "$dir/merged.records" | sort -u | wc -l) functions)"
	else
		fail "cross-version/$prog: the merge has each function record's summed counts and values"
		excerpt "$dir/records.diff"
	fi
	if "$p23" merge --text -o "$dir/merged.proftext" "$dir/merged.profdata" >"$dir/text.log" 2>&1 &&
		"$p22" merge -o "$dir/merged-22.profdata" "$dir/merged.proftext" >>"$dir/text.log" 2>&1 &&
		profile_records "$p22" "$dir/merged-22.profdata" >"$dir/merged-22.records" &&
		cmp -s "$dir/merged.records" "$dir/merged-22.records"; then
		pass "cross-version/$prog: through text, llvm-profdata 22 indexes the merge with the same counts"
	else
		fail "cross-version/$prog: through text, llvm-profdata 22 indexes the merge with the same counts"
		excerpt "$dir/text.log"
	fi
	local v src ok=1
	for v in 22 23; do
		local profile=$dir/merged.profdata bin=$bin23
		[ "$v" = 22 ] && profile=$dir/merged-22.profdata bin=$bin22
		for src in "$HOST_TESTS_DIR/programs/$prog"/*.c; do
			if ! "$bin/clang" -O2 -fprofile-use="$profile" -Wno-backend-plugin -c "$src" \
				-o "$dir/use-$v-$(basename "$src" .c).o" >>"$dir/use-$v.log" 2>&1; then
				ok=0
			fi
		done
	done
	if [ $ok -eq 1 ] && ! grep -qi "error\|unsupported\|not read" "$dir"/use-*.log; then
		pass "cross-version/$prog: clang 22 and clang 23 build with it"
	else
		fail "cross-version/$prog: clang 22 and clang 23 build with it"
		excerpt "$dir/use-22.log"
		excerpt "$dir/use-23.log"
	fi
}

run_cross_version_tests() {
	local prog
	case " $HOST_TEST_TOOLCHAINS " in
	*" 22 "*) ;;
	*) info "cross-version: clang 22 not in HOST_TEST_TOOLCHAINS; skipped"; return 0 ;;
	esac
	case " $HOST_TEST_TOOLCHAINS " in
	*" 23 "*) ;;
	*) info "cross-version: clang 23 not in HOST_TEST_TOOLCHAINS; skipped"; return 0 ;;
	esac
	for prog in ${HOST_TEST_PROGRAMS:-$(cd "$HOST_TESTS_DIR/programs" && echo *)}; do
		cross_version_program "$prog"
	done
}
