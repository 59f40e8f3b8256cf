# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # variables here are for the sourcing scripts
#
# Shared by the host test scripts (sourced, not run): result bookkeeping,
# toolchain names, and the two ways of linking an instrumented program --
# with compiler-rt's profile runtime (the reference) or with the candidate
# runtime (build/host/libkpgo.a).

HOST_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HOST_TESTS_DIR/../.." && pwd)
OUT_ROOT=${HOST_TESTS_OUT:-$REPO_ROOT/build/host-tests}

# The runtime under test. For developing the harness without it, point
# KPGO_LIB at compiler-rt's own archive (KPGO_LIB=compiler-rt): every
# comparison must then pass, since it compares compiler-rt with itself.
KPGO_LIB=${KPGO_LIB:-$REPO_ROOT/build/host/libkpgo.a}

# LLVM major versions to test: 23 writes raw profile version 11, 19, 21
# and 22 write 10, 16 writes 8 (clang 18, version 9, has its own test:
# clang18.sh).
HOST_TEST_TOOLCHAINS=${HOST_TEST_TOOLCHAINS:-23 19 21 22 16}

# The objects of every test program are compiled like this; extra_cflags of
# a program's program.conf is appended.
INSTR_CFLAGS="-O2 -g0 -fprofile-generate -Wall -Wextra"

# How profiles are listed for comparison.
SHOW_FLAGS=(show --all-functions --counts --ic-targets --memop-sizes --value-cutoff=0)

tests_passed=0
tests_failed=0

pass() {
	tests_passed=$((tests_passed + 1))
	echo "PASS: $*"
}

fail() {
	tests_failed=$((tests_failed + 1))
	echo "FAIL: $*"
}

info() {
	echo "INFO: $*"
}

# Indented excerpt of a file, for failure details.
excerpt() { # file [max lines]
	local max=${2:-40}
	[ -s "$1" ] || return 0
	sed -n "1,${max}p" "$1" | sed 's/^/    | /'
	local n
	n=$(wc -l < "$1")
	if [ "$n" -gt "$max" ]; then
		echo "    | ... ($((n - max)) more lines in $1)"
	fi
}

# The closing line: "N passed, M failed" alone, then the exit status.
summary() {
	echo "$tests_passed passed, $tests_failed failed"
	[ "$tests_failed" -eq 0 ]
}

# The bin/ of LLVM major version $1: that of scripts/toolchains/llvm-$1
# when there is one (LLVM 21 and 23 are unpacked into the cache by
# scripts/setup), else Debian's /usr/lib/llvm-$1/bin.  By path, never
# through PATH, where another clang of that number may come first.
llvm_bin() { # major
	local file=$REPO_ROOT/scripts/toolchains/llvm-$1
	if [ -f "$file" ]; then
		(
			KPGO_CACHE=${KPGO_CACHE:-$HOME/.cache/kpgo}
			# shellcheck source=../../scripts/toolchains/llvm-19
			. "$file"
			echo "$toolchain_llvm_bin"
		)
	else
		echo "/usr/lib/llvm-$1/bin"
	fi
}

# Tools of one LLVM major version.
set_toolchain() { # major
	local v=$1 bin
	bin=$(llvm_bin "$v")
	CC_BIN=$bin/clang
	PROFDATA=$bin/llvm-profdata
	READELF=$bin/llvm-readelf
	NM=$bin/llvm-nm
	OBJCOPY=$bin/llvm-objcopy
	OBJDUMP=$bin/llvm-objdump
	TOOLCHAIN=clang-$v
	COMPILER_RT_PROFILE=$("$CC_BIN" -print-resource-dir)/lib/linux/libclang_rt.profile-x86_64.a
}

# All links of one run use one copy of the candidate, taken when the run
# starts: the archive may be rebuilt (or half-written) while tests run.
snapshot_candidate() {
	if [ "$KPGO_LIB" = compiler-rt ] || [ -n "${KPGO_LIB_SNAPSHOT:-}" ] || [ ! -f "$KPGO_LIB" ]; then
		return 0 # (a missing archive is reported per toolchain)
	fi
	mkdir -p "$OUT_ROOT"
	cp "$KPGO_LIB" "$OUT_ROOT/candidate-runtime.tmp"
	mv "$OUT_ROOT/candidate-runtime.tmp" "$OUT_ROOT/candidate-runtime.a"
	KPGO_LIB_SNAPSHOT=$OUT_ROOT/candidate-runtime.a
	info "candidate runtime: copy of $KPGO_LIB, sha256 $(sha256sum "$KPGO_LIB_SNAPSHOT" | cut -c1-16)"
}

# The candidate runtime archive for the current toolchain.
candidate_lib() {
	if [ "$KPGO_LIB" = compiler-rt ]; then
		echo "$COMPILER_RT_PROFILE"
	else
		echo "${KPGO_LIB_SNAPSHOT:-$KPGO_LIB}"
	fi
}

# Links objects against compiler-rt the way users do: the driver adds the
# profile runtime because -fprofile-generate is on the link line.
link_compiler_rt() { # output objects-and-link-flags...
	local out=$1
	shift
	"$CC_BIN" -fprofile-generate -o "$out" "$@"
}

# Links objects against the candidate runtime: no -fprofile-generate on the
# link line (so the driver adds no compiler-rt), the archive instead, and its
# registration symbol pulled in like the driver does for compiler-rt.
link_candidate() { # output objects-and-link-flags...
	local out=$1
	shift
	"$CC_BIN" -o "$out" "$@" "$(candidate_lib)" -Wl,-u,__llvm_profile_runtime -lpthread -ldl -lm
}

# The build id of an ELF file, as lowercase hex, from its GNU build-id note.
elf_build_id() { # elf
	"$READELF" -n "$1" | awk '/Build ID:/ { print tolower($3); exit }'
}

# The binary ids a raw profile carries, one per line, lowercase hex.
profile_binary_ids() { # profraw
	"$PROFDATA" show --binary-ids "$1" | awk 'f && NF { print tolower($1) } /^Binary IDs:/ { f = 1 }'
}

# The program's instrumented functions as seen by llvm-profdata; used to
# check that every recorded indirect-call target is one of them.
defined_functions() { # elf
	"$NM" --defined-only "$1" | awk '$2 ~ /^[tTW]$/ { print $3 }' | sort -u
}

# Runs an executable (or, with the shared layout, a shared object through
# the loader) in its own directory with LLVM_PROFILE_FILE set.
run_instrumented() { # exe profraw
	local -a run=("$1")
	[ "${1##*.}" = shared ] && run=("$SHARED_LOADER" "$1")
	rm -f "$2"
	(cd "$(dirname "$1")" && LLVM_PROFILE_FILE=$2 timeout 60 "${run[@]}" > "$1.stdout" 2> "$1.stderr")
}
