#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Kconfig defects of issue 10, in a tree of its own (build/linux-kconfig,
# tinyconfig + scripts/kpgo.config + one change each):
#   - CONFIG_PGO_KEPT_PROFILES_KB has a range: -1 is not taken;
#   - PGO_CLANG=y with MODULES=n either is refused by Kconfig or builds
#     (kernel/pgo/ compiled: make kernel/pgo/).
# Usage: tests/kernel/kconfig.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export KPGO_TREE=$root/build/linux-kconfig
out=$root/build/kconfig
# shellcheck source=lib.sh
source "$here/lib.sh"
mkdir -p "$out"
start=$EPOCHREALTIME

"$root/scripts/prepare-kernel" >"$out/prepare.log" 2>&1 || { cat "$out/prepare.log"; exit 1; }
configure() { "$root/scripts/configure-kernel" --fragment "$root/scripts/kpgo.config" --fragment "$1"; }
option() { grep -E "^($1=|# $1 is not set)" "$KPGO_TREE/.config" || echo "$1 absent"; }

echo CONFIG_PGO_KEPT_PROFILES_KB=-1 >"$out/kept-minus-one.config"
configure "$out/kept-minus-one.config" >"$out/kept-minus-one.log" 2>&1 || true
echo "PGO_KEPT_PROFILES_KB=-1 gives: $(option CONFIG_PGO_KEPT_PROFILES_KB)"
check "CONFIG_PGO_KEPT_PROFILES_KB=-1 is refused (the option has a range)" \
	bash -c "! grep -qx CONFIG_PGO_KEPT_PROFILES_KB=-1 '$KPGO_TREE/.config'"

echo '# CONFIG_MODULES is not set' >"$out/no-modules.config"
configure "$out/no-modules.config" >"$out/no-modules.log" 2>&1 || true
echo "MODULES=n gives: $(option CONFIG_MODULES), $(option CONFIG_PGO_CLANG)"
check "MODULES=n took" grep -qx '# CONFIG_MODULES is not set' "$KPGO_TREE/.config"
if grep -qx CONFIG_PGO_CLANG=y "$KPGO_TREE/.config"; then
	status=0
	"$root/scripts/kmake" kernel/pgo/ >"$out/no-modules-build.log" 2>&1 || status=$?
	grep -E "^error|error:" "$out/no-modules-build.log" | head -5 || true
	check "PGO_CLANG=y with MODULES=n: kernel/pgo/ builds" test "$status" -eq 0
else
	check "PGO_CLANG=y with MODULES=n: refused by Kconfig" true
fi
echo "kconfig: $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
summary kconfig
