#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The series across stable updates (make check-stable): every 6.12.y whose
# linux-source-6.12 package the archive offers (apt-cache madison), or
# KPGO_STABLE_VERSIONS ("6.12.107-1~deb12u1 ..."):
#   - its source package is fetched into $KPGO_CACHE/stable/<version>/
#     (apt-get download, the tarball taken out with dpkg-deb), the series
#     applied with git am and the test kernel built (make kernel with
#     KPGO_LINUX_TARBALL=, each version in build/source-<version>-<hash>/);
#   - the oldest one's main-job kernel is profiled (PROFILE_ONLY=1 make);
#   - the main job on the newest one (the default tarball, 6.12.117 here)
#     applies that stale profile next to its own (VARIANTS=stale): the
#     out-of-date and missing counts of both, and the benchmark of the stale
#     profile's kernel against the fresh one's, are in build/stable.md
#     (for the installed version that main job is the one of build/: its
#     report then has the optimized-stale kernel too).
# Many kernel builds (about an hour on 2 cores), so not part of make check.
#
# Usage: tests/kernel/stable.sh
set -euo pipefail
# The 6.12.y updates: 6.12's series and trees.
export LINUX=6.12
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
cache=${KPGO_CACHE:-$HOME/.cache/kpgo}/stable
report=$root/build/stable.md
mkdir -p "$cache" "$root/build"

# Oldest first (dpkg's order).
if [[ -n ${KPGO_STABLE_VERSIONS:-} ]]; then
	read -ra versions <<<"$KPGO_STABLE_VERSIONS"
else
	mapfile -t versions < <(apt-cache madison linux-source-6.12 | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
		sort -u | sort -V)
fi
check "the archive offers several 6.12.y (${versions[*]:-none})" test "${#versions[@]}" -ge 2
((${#versions[@]})) || { summary stable; exit; }
npatches=$(find "$root/patches/linux-6.12" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' | wc -l)
default_version=$(dpkg-query -W -f='${Version}' linux-source-6.12)

# The tarball of VERSION: the installed one for the installed version.
tarball() {
	local version=$1 dir=$cache/$1
	if [[ $version == "$default_version" ]]; then
		echo /usr/src/linux-source-6.12.tar.xz
		return
	fi
	if [[ ! -s $dir/linux-source-6.12.tar.xz ]]; then
		mkdir -p "$dir"
		(cd "$dir" && apt-get download -q "linux-source-6.12=$version" >/dev/null 2>&1) || return 1
		dpkg-deb --fsys-tarfile "$dir"/linux-source-6.12_*_all.deb |
			tar -xO ./usr/src/linux-source-6.12.tar.xz >"$dir/linux-source-6.12.tar.xz.new" || return 1
		mv "$dir/linux-source-6.12.tar.xz.new" "$dir/linux-source-6.12.tar.xz"
		rm -f "$dir"/linux-source-6.12_*_all.deb
	fi
	echo "$dir/linux-source-6.12.tar.xz"
}

{
	echo "# kpgo: the series across 6.12.y stable updates ($(date -u +%F))"
	echo
	echo "| version | series applies (git am) | test kernel builds | build s |"
	echo "|---|---|---|---|"
} >"$report"
for version in "${versions[@]}"; do
	file=$(tarball "$version") || file=
	check "$version: the source package is fetched" test -n "$file"
	[[ -n $file ]] || continue
	log=$root/build/stable-$version.log
	status=0 started=$SECONDS
	KPGO_LINUX_TARBALL=$file make -s -C "$root" kernel >"$log" 2>&1 || status=$?
	# Every patch of the series is in the tree's record of what git am
	# applied (prepare-kernel's .kpgo/applied).
	applied=$(wc -l <"$(KPGO_LINUX_TARBALL=$file "$root/scripts/base-dir")/linux/.kpgo/applied" 2>/dev/null) ||
		applied=0
	applies=yes
	((applied == npatches)) || applies="no ($applied of $npatches; $(sed -n 's/.*error: \(.*\) does not apply to.*/\1/p' "$log"))"
	check "$version: the series applies with git am ($applied of $npatches patches)" test "$applies" = yes
	check "$version: the test kernel builds (status $status; $log)" test "$status" -eq 0
	echo "| $version | $applies | $( ((status == 0)) && echo yes || echo "no (status $status)") | $((SECONDS - started)) |" >>"$report"
done

# The oldest one's profile, applied to the newest.
oldest=${versions[0]} newest=${versions[${#versions[@]} - 1]}
oldest_file=$(tarball "$oldest") || oldest_file=
newest_file=$(tarball "$newest") || newest_file=
# (An empty KPGO_LINUX_TARBALL would be the installed source.)
check "the oldest and the newest sources are there ($oldest, $newest)" \
	test -n "$oldest_file" -a -n "$newest_file" -a "$oldest" != "$newest"
[[ -n $oldest_file && -n $newest_file && $oldest != "$newest" ]] || { summary stable; exit; }
oldest_build=$(KPGO_LINUX_TARBALL=$oldest_file "$root/scripts/base-dir")
newest_build=$(KPGO_LINUX_TARBALL=$newest_file "$root/scripts/base-dir")
status=0
KPGO_LINUX_TARBALL=$oldest_file PROFILE_ONLY=1 "$root/scripts/profile-kernel" \
	>"$root/build/stable-profile.log" 2>&1 || status=$?
stale=$root/build/stable-$oldest.profdata
cp "$oldest_build/kernel.profdata" "$stale" 2>/dev/null || rm -f "$stale"
check "$oldest: the main job's kernel is profiled (status $status)" test -s "$stale"
status=0
KPGO_LINUX_TARBALL=$newest_file VARIANTS=stale STALE_PROFILE=$stale ROUNDS=${ROUNDS:-2} \
	MODEL_ROUNDS=${MODEL_ROUNDS:-1} "$root/scripts/profile-kernel" >"$root/build/stable-main.log" 2>&1 ||
	status=$?
check "$newest: the main job with the stale profile beside its own (status $status)" test "$status" -eq 0
count() { diagnostic "$newest_build/bench/$2/pgo-profile-diagnostics.txt" "$1"; }
for kernel in optimized optimized-stale; do
	check "$kernel: its profile diagnostics were counted" \
		test -n "$(count out_of_date "$kernel")"
done
ratio=$(awk '$1 == "optimized-stale" && $2 == "/" && $3 == "optimized" { print $NF; exit }' \
	"$newest_build/benchmark.txt" 2>/dev/null) || ratio=
check "the benchmark compares the stale profile's kernel with the fresh one's (${ratio:-none})" \
	test -n "$ratio"
{
	echo
	echo "The profile of $oldest's main-job kernel (its workload), applied to $newest's:"
	echo
	echo "| profile | out of date | without data | Rust out of date | geomean against the fresh profile's kernel |"
	echo "|---|---|---|---|---|"
	echo "| fresh ($newest) | $(count out_of_date optimized) | $(count missing optimized) |" \
		"$(count rust_out_of_date optimized) | 1 |"
	echo "| stale ($oldest) | $(count out_of_date optimized-stale) | $(count missing optimized-stale) |" \
		"$(count rust_out_of_date optimized-stale) | ${ratio:-?} |"
	echo
	echo "Benchmark: $newest_build/benchmark.txt (ROUNDS=${ROUNDS:-2}, -icount, and the front-end model)."
} >>"$report"
cat "$report"
summary stable
