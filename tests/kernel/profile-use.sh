#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make CLANG_PGO_PROFILE= itself (the series' kbuild patches), in a tree of
# its own (build/linux-profile-use: tinyconfig + scripts/kpgo.config with
# CONFIG_PGO_CLANG off, as an optimized build is configured, first without
# CONFIG_PGO_CLANG_PROFILE_WARNINGS), one object at a time:
#   - a new profile at the same path rebuilds the profiled objects (clang
#     does not list the profile in its dependency files: the series makes
#     them include a header that changes with the profile's content), and
#     the note's header changes with it; the same profile again rebuilds
#     nothing;
#   - without CONFIG_PGO_CLANG_PROFILE_WARNINGS no profile diagnostic is
#     asked for and none is demoted from an error; with it, both;
#   - the build refuses a profile before compiling anything of the kernel
#     with a compiler other than clang (CC=gcc) and for an architecture
#     that does not support CONFIG_PGO_CLANG (ARCH=arm64), saying why.
# Usage: tests/kernel/profile-use.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=$root/build/linux-profile-use
out=$root/build/profile-use
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../../scripts/kernel-env.sh
source "$root/scripts/kernel-env.sh"
rm -rf "$out"
mkdir -p "$out"

"$root/scripts/prepare-kernel" >"$out/prepare.log" 2>&1 || { cat "$out/prepare.log"; exit 1; }
# The base fragments turn CONFIG_PGO_CLANG_PROFILE_WARNINGS on (the
# optimized kernels' warnings are counted): first without it.
echo '# CONFIG_PGO_CLANG_PROFILE_WARNINGS is not set' >"$out/no-warnings.config"
"$root/scripts/configure-kernel" --no-pgo --fragment "$root/scripts/kpgo.config" \
	--fragment "$out/no-warnings.config" >"$out/configure.log" 2>&1 ||
	{ cat "$out/configure.log"; exit 1; }

# Two profiles that differ (any function: the kernel has none of them).
profile=$out/kernel.profdata
printf ':ir\n' >"$out/empty.proftext"
printf ':ir\nkpgo_test\n# Func Hash:\n1\n# Num Counters:\n1\n# Counter Values:\n5\n' \
	>"$out/one.proftext"
for p in empty one; do
	"$KPGO_LLVM_BIN/llvm-profdata" merge -o "$out/$p.profdata" "$out/$p.proftext"
done
# build TAG [make arguments]: kernel/fork.o with the profile at $profile;
# the log is $out/TAG.log.
build() {
	local tag=$1
	shift
	"$root/scripts/kmake" "CLANG_PGO_PROFILE=$profile" "$@" kernel/fork.o >"$out/$tag.log" 2>&1
}
compiled_fork() { grep -q 'CC  *kernel/fork\.o$' "$out/$1.log"; }
header=$KPGO_TREE/include/generated/pgo_profile.h

cp "$out/empty.profdata" "$profile"
build first
check "a profiled object builds with CLANG_PGO_PROFILE=" compiled_fork first
check "... with -fprofile-use of the profile" grep -q -- "-fprofile-use=$profile" \
	"$KPGO_TREE/kernel/.fork.o.cmd"
check "... and the profile's SHA-256 in include/generated/pgo_profile.h" \
	grep -q "sha256=$(sha256sum <"$profile" | cut -d' ' -f1) " "$header"
build again
check "the same profile again rebuilds nothing" bash -c '! grep -q "CC " "$0"' "$out/again.log"
cp "$out/one.profdata" "$profile"
build replaced
check "a new profile at the same path rebuilds the profiled object" compiled_fork replaced
check "... and the header names the new profile" \
	grep -q "sha256=$(sha256sum <"$profile" | cut -d' ' -f1) " "$header"

check "without CONFIG_PGO_CLANG_PROFILE_WARNINGS: hash mismatches unreported, no error demoted" \
	bash -c 'grep -q -- "-no-pgo-warn-mismatch" "$0" && ! grep -q -- "-Wno-error=backend-plugin" "$0" &&
		! grep -q -- "-pgo-warn-missing-function" "$0"' "$KPGO_TREE/kernel/.fork.o.cmd"
echo CONFIG_PGO_CLANG_PROFILE_WARNINGS=y >"$out/warnings.config"
"$root/scripts/configure-kernel" --no-pgo --fragment "$root/scripts/kpgo.config" \
	--fragment "$out/warnings.config" >"$out/configure-warnings.log" 2>&1 ||
	{ cat "$out/configure-warnings.log"; exit 1; }
build warnings
check "with it: the profile's warnings asked for, and kept warnings under CONFIG_WERROR" \
	bash -c 'grep -q -- "-pgo-warn-missing-function" "$0" && grep -q -- "-Wno-error=backend-plugin" "$0" &&
		! grep -q -- "-no-pgo-warn-mismatch" "$0"' "$KPGO_TREE/kernel/.fork.o.cmd"

# The refusals, each on a clean tree: nothing of the kernel may be built.
nothing_built() { ! compgen -G "$KPGO_TREE/kernel/*.o" >/dev/null; }
# refused WHAT ARGUMENTS...: a clean tree configured with ARGUMENTS (make
# variables), then kernel/fork.o with the profile: refused, saying why.
refused() {
	local what=$1 tag=${2%%=*}
	shift
	"$root/scripts/kmake" -s mrproper >/dev/null 2>&1
	"$root/scripts/kmake" -s "$@" tinyconfig >"$out/$tag-config.log" 2>&1
	status=0
	build "$tag" "$@" || status=$?
	check "$what: CLANG_PGO_PROFILE= is refused (status $status), saying why" \
		bash -c 'test "$1" -ne 0 && grep -q "CLANG_PGO_PROFILE= needs clang and an architecture that supports CONFIG_PGO_CLANG" "$0"' \
		"$out/$tag.log" "$status"
	check "... before anything of the kernel is compiled" nothing_built
}
refused "CC=gcc" CC=gcc
refused "ARCH=arm64 (no ARCH_SUPPORTS_PGO_CLANG)" ARCH=arm64
"$root/scripts/kmake" -s mrproper >/dev/null 2>&1
summary profile-use
