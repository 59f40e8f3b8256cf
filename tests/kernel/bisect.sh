#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-bisect: the series is bisectable.  In one tree
# (build/bisect/linux: the default base, the series applied with git am),
# every commit of the series is checked out in turn and built
# incrementally, as git bisect would:
#   - before the commit that makes x86 select ARCH_SUPPORTS_PGO_CLANG,
#     CONFIG_PGO_CLANG must not be selectable (so no commit enables it
#     before the opt-outs it needs), and the kernel is built without it;
#   - from that commit on, the kernel is built with it.
# Each step's log is build/bisect/<n>.log.  Too slow for make check (the
# commits that touch widely included headers rebuild most of the kernel).
#
# Usage: tests/kernel/bisect.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=$root/build/bisect/linux KPGO_NO_SYNC=1
logs=$root/build/bisect
# shellcheck source=lib.sh
source "$here/lib.sh"

mkdir -p "$logs"
"$root/scripts/prepare-kernel" >"$logs/prepare.log" 2>&1 ||
	{ echo "FAIL: prepare $KPGO_TREE"; exit 1; }
mapfile -t commits < <(cut -d' ' -f3 "$KPGO_TREE/.kpgo/applied")
for i in "${!commits[@]}"; do
	n=$((i + 1))
	commit=${commits[i]}
	subject=$(git -C "$KPGO_TREE" log -1 --format=%s "$commit")
	git -C "$KPGO_TREE" checkout -q -f --detach "$commit"
	start=$SECONDS
	if grep -q 'select ARCH_SUPPORTS_PGO_CLANG' "$KPGO_TREE/arch/x86/Kconfig"; then
		mode=pgo
		"$root/scripts/configure-kernel" --fragment "$root/scripts/kpgo.config" \
			>"$logs/$n.log" 2>&1
	else
		mode=no-pgo
		status=0
		"$root/scripts/configure-kernel" --fragment "$root/scripts/kpgo.config" \
			>"$logs/$n-pgo-refused.log" 2>&1 || status=$?
		check "[$n] $subject: PGO_CLANG not selectable yet" test "$status" -ne 0
		"$root/scripts/configure-kernel" --no-pgo --fragment "$root/scripts/kpgo.config" \
			>"$logs/$n.log" 2>&1
	fi
	status=0
	"$root/scripts/kmake" >>"$logs/$n.log" 2>&1 || status=$?
	check "[$n] $subject: builds ($mode, $((SECONDS - start)) s)" test "$status" -eq 0
done
git -C "$KPGO_TREE" checkout -q -f --detach "${commits[-1]}"
summary bisect
