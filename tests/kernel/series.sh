#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series a maintainer applies (patches/):
#   - it is what integration/ and the sources give (scripts/make-series
#     --check), so it is never edited by hand;
#   - it is a git format-patch series with a cover letter and a base-commit;
#   - checkpatch.pl of the kernel finds nothing in any patch;
#   - the test kernel tree (build/linux) is that series applied with git am:
#     one commit per patch, in order, with the patches' subjects, and its
#     kernel/pgo/ is the project's (the working copy added nothing);
#   - every patch that adds to kernel/pgo/ builds it: the folder as that
#     patch leaves it compiles without a warning in build/linux and in
#     build/linux-kconfig configured without module support (MODULES=n,
#     which Kconfig admits; tests/kernel/kconfig.sh uses that tree too);
#   - the kernel guide is under 500 lines and names none of this
#     repository's harness;
#   - no patch adds more than 1,200 lines, but one that has a ceiling
#     of its own until it is split.
# Run after the kernel suite, which builds that tree.
#
# Usage: tests/kernel/series.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The release's (LINUX=, default 7.3): its series, its trees.
build=$(BASE=tinyconfig "$root/scripts/base-dir")
series=$(BASE=tinyconfig bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_PATCHES"' _ "$root")
tree=$build/linux
logs=$build/check/series
mkdir -p "$logs"
# shellcheck source=lib.sh
source "$here/lib.sh"

status=0
"$root/scripts/make-series" --check >"$logs/make-series.log" 2>&1 || status=$?
check "patches/ is what integration/ and the sources give (status $status)" test "$status" -eq 0

patches=()
for p in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $p == */0000-cover-letter.patch ]] || patches+=("$p")
done
cover=$series/0000-cover-letter.patch
check "a cover letter, numbered [PATCH 00/${#patches[@]}]" \
	grep -q "^Subject: \[PATCH 0*0/${#patches[@]}\]" "$cover"
check "the cover letter names its base-commit" grep -q '^base-commit: [0-9a-f]\{40\}$' "$cover"

# keeps_space_indent PATCH: in every hunk of PATCH, the lines added with
# a space indent replace as many removed with the same indent
# (irqflags.h indents a block with two spaces): only then is
# checkpatch's LEADING_SPACE a file's own style kept, not an indent the
# patch brings.  Comment lines (" * ") do not count: checkpatch takes
# them for what they are.
keeps_space_indent() {
	python3 - "$1" <<'PY'
import collections, re, sys
hunks, hunk = [], None
for line in open(sys.argv[1]):
    if line.startswith("@@"):
        hunk = collections.Counter()
        hunks.append(hunk)
    elif hunk is not None and not line.startswith(("+++", "---")):
        m = re.match(r"([+-])( +)(?!\*)\S", line)
        if m:
            hunk[m.group(2)] += 1 if m.group(1) == "+" else -1
            hunk["added"] += m.group(1) == "+"
sys.exit(0 if any(h["added"] for h in hunks) and
         all(v == 0 for h in hunks for k, v in h.items() if k != "added") else 1)
PY
}

for p in "${patches[@]}"; do
	name=${p##*/}
	ignore=UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES
	! keeps_space_indent "$p" || ignore+=,LEADING_SPACE
	# Debian's python3 first: checkpatch's SPDX check needs its ply and
	# GitPython (scripts/setup), which another python3 on PATH may lack.
	# UNKNOWN_COMMIT_ID: the tree is the tarball imported as one commit,
	# without upstream history, so the upstream ids that the backports
	# and Fixes: tags cite are unknown to it.  FILE_PATH_CHANGES asks
	# "does MAINTAINERS need updating?" of every patch that adds a file
	# and leaves MAINTAINERS alone, also where an entry already covers
	# it: get_maintainer.pl answers it below, for every file added.
	# LEADING_SPACE: see keeps_space_indent.
	(cd "$tree" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl -q \
		--ignore "$ignore" "$p") \
		>"$logs/checkpatch-$name.log" 2>&1
	status=$?
	check "checkpatch: $name (status $status)" test "$status" -eq 0 -a ! -s "$logs/checkpatch-$name.log"
done

# One concern per patch, a reviewer's sitting: as a yardstick, no patch
# adds more than about 1,200 lines.  A patch that must be larger gets a
# ceiling of its size here, with the reason, so that it can only shrink;
# none has one.
declare -A ceilings=()
for p in "${patches[@]}"; do
	name=${p##*/}
	key=${name#[0-9][0-9][0-9][0-9]-}
	key=${key%.patch}
	added=$(($(grep -c '^+' "$p") - $(grep -c '^+++ ' "$p")))
	limit=${ceilings[$key]:-1200}
	check "$name adds $added lines (at most $limit${ceilings[$key]:+, until it is split})" \
		test "$added" -le "$limit"
done

# The runtime's earlier patches carry staged versions of kernel/pgo/ in
# integration/; the entry-sampling patch copies the sources as they are.
# So a change to pgo/ lands there unless the staged diffs get it too
# (README, "How a change reaches its patch"): there, and in the sampled
# patch just before it, every hunk in kernel/pgo/ must be about sampling
# (or only add #include lines), so that a change of another concern fails
# here instead of hiding in them.
for subject in 'kbuild: sampled PGO instrumentation' 'kbuild: entry-sampled PGO instrumentation'; do
	patch=$(grep -l "^Subject: \[PATCH [0-9]*/[0-9]*\] $subject" "${patches[@]}")
	python3 - "$patch" >"$logs/sampled-hunks" <<'PY' || true
import re, sys
text = open(sys.argv[1]).read()
for diff in re.split(r"^diff --git ", text, flags=re.M)[1:]:
    name = diff.split()[0][2:]
    if not name.startswith("kernel/pgo/"):
        continue
    for hunk in re.split(r"^@@", diff, flags=re.M)[1:]:
        changed = [l for l in hunk.split("\n")[1:] if l and l[0] in "+-"]
        if all(re.match(r"[+-]#include <", l) for l in changed):
            continue
        if not re.search(r"sampl", "\n".join(changed), re.I):
            print(f"{name}: {changed[0][:100] if changed else ''}")
PY
	check "the patch '$subject' changes kernel/pgo/ for sampling only ($(wc -l <"$logs/sampled-hunks") other hunks: $logs/sampled-hunks)" \
		test -n "$patch" -a ! -s "$logs/sampled-hunks"
done

# The kernel's guide is a kernel user's: under 500 lines (gcov.rst,
# autofdo.rst and propeller.rst are a few hundred), naming nothing of this
# repository (its targets, tests, benchmarks and build folder).
guide=$root/Documentation/pgo.rst
guide_lines=$(wc -l <"$guide")
check "the kernel guide is under 500 lines ($guide_lines)" test "$guide_lines" -lt 500
grep -nE 'make (check|kernel|optimized|sampling)|bench/|tests/|build/|tested here|this repository|kpgo tree' \
	"$guide" >"$logs/guide-harness" || true
check "the kernel guide names none of this repository's harness ($(wc -l <"$logs/guide-harness") lines)" \
	test ! -s "$logs/guide-harness"

# The subjects as git am takes them (mailinfo unfolds and strips [PATCH]).
subjects() {
	for p in "${patches[@]}"; do
		git mailinfo /dev/null /dev/null <"$p" | sed -n 's/^Subject: //p'
	done
}
subjects >"$logs/subjects"
git -C "$tree" log --reverse --format=%s -n "${#patches[@]}" >"$logs/applied"
check "build/linux is the series applied with git am, in order" \
	cmp -s "$logs/subjects" "$logs/applied"
check "build/linux: the series adds kernel/pgo/ (tracked, not synced)" \
	git -C "$tree" ls-files --error-unmatch kernel/pgo/Kconfig kernel/pgo/Makefile
# Changed, deleted and untracked files alike (build outputs are ignored
# by the kernel's .gitignore files).
git -C "$tree" status --porcelain --untracked-files=all -- kernel/pgo \
	Documentation/dev-tools/pgo.rst >"$logs/kernel-pgo-status" 2>&1
check "build/linux: kernel/pgo/ is exactly what the series adds (nothing changed or added)" \
	test -f "$tree/kernel/pgo/Kconfig" -a ! -s "$logs/kernel-pgo-status"

# Every file the series adds has a maintainer: the runtime's entry for
# the runtime and its guide; the Rust abstractions (rust/) the entries of
# what they wrap (DRIVER CORE for debugfs, MODULE SUPPORT for module
# notifiers; RUST for the rest), so that the maintainers who take them
# are asked.  grep reads all of get_maintainer.pl's output: with -q it
# stopped at the first match, and perl's SIGPIPE failed the pipeline.
uncovered=()
while read -r file; do
	case $file in
	rust/kernel/debugfs.rs) entry="DRIVER CORE, KOBJECTS, DEBUGFS AND SYSFS" ;;
	rust/kernel/module_notifier.rs) entry="MODULE SUPPORT" ;;
	rust/*) entry="RUST" ;;
	*) entry="CLANG PGO PROFILE RUNTIME" ;;
	esac
	(cd "$tree" && PATH=/usr/bin:$PATH perl scripts/get_maintainer.pl --no-git --no-git-fallback \
		-f "$file" 2>/dev/null) | grep ":$entry)" >/dev/null || uncovered+=("$file")
done < <(git -C "$tree" diff --name-only --diff-filter=A "HEAD~${#patches[@]}" HEAD)
check "get_maintainer.pl: every file the series adds is in its entry (not: ${uncovered[*]:-none})" \
	test "${#uncovered[@]}" -eq 0

# Trees are hard-linked copies of one checkout (kpgo_new_tree): the build
# of build/linux (the kernel test, before this one) must have written no
# source in place, or every tree would have changed with it.
base_checkout=$build/linux-base.checkout
inode() { stat -c %i "$1" 2>/dev/null; }
check "build/linux's unchanged sources are links to build/linux-base.checkout" \
	test -n "$(inode "$tree/COPYING")" -a "$(inode "$tree/COPYING")" = "$(inode "$base_checkout/COPYING")"
git -C "$base_checkout" status --porcelain >"$logs/base-checkout-status" 2>&1
check "build/linux-base.checkout is still the base commit after the build" \
	test -d "$base_checkout/.git" -a ! -s "$logs/base-checkout-status"

# The runtime comes in several patches, each of which must build. The
# option cannot be selected before x86-select-pgo, so each patch's
# kernel/pgo/ is compiled in a tree of the whole series, which has it on:
# the tree's own folder is moved aside meanwhile (and back, its build
# outputs and times with it, so that nothing rebuilds afterwards).
aside_tree=
restore_kernel_pgo() {
	[[ -n $aside_tree && -d $aside_tree/kernel/pgo.series-aside ]] || return 0
	rm -rf "$aside_tree/kernel/pgo"
	mv "$aside_tree/kernel/pgo.series-aside" "$aside_tree/kernel/pgo"
}
trap restore_kernel_pgo EXIT
# build_each_commit TREE LABEL [ALL]: builds, in TREE, the kernel/pgo/ of
# every series commit that changes it; without ALL, not the last state,
# which TREE's own build already compiled.
build_each_commit() {
	local commit subject log status commits
	aside_tree=$1
	restore_kernel_pgo # after a run that was killed
	mapfile -t commits < <(git -C "$1" rev-list --reverse "HEAD~${#patches[@]}..HEAD" -- kernel/pgo)
	check "$2: the runtime comes in four patches or more (${#commits[@]} add to kernel/pgo/)" \
		test "${#commits[@]}" -ge 4
	for commit in "${commits[@]}"; do
		subject=$(git -C "$1" log -1 --format=%s "$commit")
		[[ -n ${3:-} ]] || ! git -C "$1" diff --quiet "$commit" HEAD -- kernel/pgo || continue
		log=$logs/kernel-pgo-$2-$commit.log
		status=0
		# The tree's own Kconfig stays: an earlier one, newer than the
		# tree's configuration, would make kbuild resynchronize the
		# configuration with it (and drop what later patches define).
		{
			mv "$1/kernel/pgo" "$1/kernel/pgo.series-aside" &&
				mkdir "$1/kernel/pgo" &&
				git -C "$1" archive "$commit" kernel/pgo | tar -x -C "$1" &&
				cp -p "$1/kernel/pgo.series-aside/Kconfig" "$1/kernel/pgo/Kconfig" &&
				# (MAKEFLAGS: under "make -s check" the build would log nothing.)
				MAKEFLAGS= KPGO_NO_SYNC=1 KPGO_TREE=$1 "$root/scripts/kmake" kernel/pgo/
		} >"$log" 2>&1 || status=$?
		restore_kernel_pgo
		check "$2: \"$subject\": its kernel/pgo/ builds (status $status; $log)" test "$status" -eq 0
		check_no_warnings "... without a warning" "$log"
	done
}
# The test kernel's tree, which the kernel suite built and kernel-clippy
# lints in its last state.
build_each_commit "$tree" test
# Without module support, where the module half of the runtime is not
# built: what only it uses must come with it.
nomodules=$build/linux-kconfig
no_modules_fragment "$logs/no-modules.config"
status=0
{
	KPGO_TREE=$nomodules "$root/scripts/prepare-kernel" &&
		KPGO_TREE=$nomodules "$root/scripts/configure-kernel" --fragment "$root/scripts/kpgo.config" \
			--fragment "$logs/no-modules.config"
} >"$logs/no-modules-configure.log" 2>&1 || status=$?
check "build/linux-kconfig is the series configured without module support (status $status)" \
	bash -c 'test "$1" -eq 0 && grep -qx "# CONFIG_MODULES is not set" "$2"' _ "$status" "$nomodules/.config"
build_each_commit "$nomodules" MODULES=n all

summary series
