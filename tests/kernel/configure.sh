#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Any base configuration takes PGO (configuration only, no build: about a
# minute per base, most of it checking out the tree):
#   - BASE=defconfig and BASE=<Debian's distro .config> (linux-config-6.12)
#     get RUST, PGO_CLANG and the harness options; the distro base's
#     MODVERSIONS is turned off and reported with its reason, on stderr
#     and in the tree's .kpgo/config-report.txt;
#   - the same base with MODVERSIONS forced back on cannot take PGO: the
#     configuration fails and names RUST's unmet dependency;
#   - the distro base with a module list of lsmod's format (MODULE_LIST=,
#     a relative path) keeps only those modules, in a build folder of its
#     own; a MODULE_LIST that is no file, or with a kconfig target, is
#     refused;
#   - a BASE that is neither a kconfig target nor a file is refused;
#   - the ThinLTO kernels of the main job (VARIANTS=thinlto) configure:
#     defconfig with scripts/configs/thinlto.config gets LTO_CLANG_THIN
#     and keeps RUST (6.12's Rust takes LTO);
#   - the main job refuses an unknown variant, and the benchmark an
#     unknown kernel to compare, before building or booting anything.
#
# Usage: tests/kernel/configure.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The release's (LINUX=, default 7.3) Debian configuration.
distro=$(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LINUX_CONFIGS"' _ "$root")/config.amd64_none_amd64.xz
release=$(bash -c 'source "$1/scripts/kernel-env.sh"; echo "$KPGO_LINUX"' _ "$root")
logs=$root/build/check/configure
mkdir -p "$logs"
# shellcheck source=lib.sh
source "$here/lib.sh"

# configure NAME BASE [configure-kernel args]: prepares BASE's tree and
# configures it, the output in $logs/NAME.log; returns configure's status.
configure() {
	local name=$1 base=$2 tree
	shift 2
	tree=$(BASE=$base "$root/scripts/base-dir")/linux
	BASE=$base KPGO_TREE=$tree "$root/scripts/prepare-kernel" >"$logs/$name.log" 2>&1 &&
		BASE=$base KPGO_TREE=$tree "$root/scripts/configure-kernel" "$@" >>"$logs/$name.log" 2>&1
}
tree_of() { echo "$(BASE=$1 "$root/scripts/base-dir")/linux"; }

for base in defconfig "$distro"; do
	name=$(basename "$base")
	status=0
	configure "$name" "$base" || status=$?
	check "$name: configured (status $status; $logs/$name.log)" test "$status" -eq 0
	config=$(tree_of "$base")/.config
	for option in CONFIG_PGO_CLANG=y CONFIG_RUST=y CONFIG_DEBUG_FS=y CONFIG_VIRTIO_BLK=y \
		CONFIG_SERIAL_8250_CONSOLE=y; do
		check "$name: $option" grep -qx "$option" "$config"
	done
	check "$name: MODVERSIONS off in the instrumented configuration" \
		grep -qx '# CONFIG_MODVERSIONS is not set' "$config"
done
# Debian's 6.12 has MODVERSIONS, which 6.12's Rust excludes; Debian's 7.3
# has it off already (7.3's Rust would take it with GENDWARFKSYMS).
if [[ $release == 6.12 ]]; then
	check "distro base: the MODVERSIONS change is reported with its reason" \
		grep -q 'base CONFIG_MODVERSIONS=y -> n (pgo.linux-6.12.config: RUST depends on !MODVERSIONS' \
		"$logs/$(basename "$distro").log"
	check "distro base: the tree keeps the same report (.kpgo/config-report.txt)" \
		grep -q 'base CONFIG_MODVERSIONS=y -> n (pgo.linux-6.12.config: RUST depends on !MODVERSIONS' \
		"$(tree_of "$distro")/.kpgo/config-report.txt"
else
	check "distro base: its BTF stays (CONFIG_DEBUG_INFO_BTF=y)" \
		grep -qx CONFIG_DEBUG_INFO_BTF=y "$(tree_of "$distro")/.config"
fi
check "defconfig base: its modules fragment applied (CONFIG_VFAT_FS=m)" \
	grep -qx CONFIG_VFAT_FS=m "$(tree_of defconfig)/.config"

# A base that cannot take PGO: MODVERSIONS forced back on.
forced=$(mktemp)
echo CONFIG_MODVERSIONS=y >"$forced"
status=0
configure forced-modversions "$distro" --fragment "$forced" || status=$?
check "MODVERSIONS=y forced: configuration fails (status $status)" test "$status" -ne 0
check "MODVERSIONS=y forced: the unmet dependency of RUST is named" \
	grep -q 'RUST depends on !MODVERSIONS' "$logs/forced-modversions.log"
rm -f "$forced"
# A distribution's base with the user's own module list (MODULE_LIST=, in
# lsmod's format, a relative path): only those modules (and what they
# need) stay =m, in a build folder of the base and list. KPGO_OUT: the
# build folder of the others.
modules=$logs/lsmod.txt
printf '%s\n' "Module                  Size  Used by" "vfat 20480 0" "fat 86016 1 vfat" \
	"loop 32768 0  # a comment" >"$modules"
status=0
(cd "$logs" && MODULE_LIST=lsmod.txt KPGO_OUT=$root/build configure module-list "$distro") || status=$?
config=$(MODULE_LIST=$modules KPGO_OUT=$root/build BASE=$distro "$root/scripts/base-dir")/linux/.config
check "MODULE_LIST= (lsmod's output, a relative path): configured (status $status)" test "$status" -eq 0
check "MODULE_LIST=: a build folder of its own ($config)" \
	test "$config" != "$(tree_of "$distro")/.config"
check "MODULE_LIST=: its modules are =m (VFAT_FS, FAT_FS, BLK_DEV_LOOP)" \
	bash -c 'grep -qx CONFIG_VFAT_FS=m "$1" && grep -qx CONFIG_FAT_FS=m "$1" &&
		grep -qx CONFIG_BLK_DEV_LOOP=m "$1"' _ "$config"
check "MODULE_LIST=: few other modules ($(grep -c '=m$' "$config") =m options, the base has $(xzcat "$distro" | grep -c '=m$'))" \
	test "$(grep -c '=m$' "$config")" -lt 30
check "MODULE_LIST=: reported (kept the modules of the list)" \
	grep -q "kept the modules of .*lsmod.txt (" "$logs/module-list.log"
# refused_with MESSAGE ENV...: base-dir fails with MESSAGE under ENV.
refused_with() {
	local message=$1
	shift
	! env "$@" "$root/scripts/base-dir" >"$logs/refused.log" 2>&1 && grep -qF "$message" "$logs/refused.log"
}
check "MODULE_LIST= naming no file is refused, and says so" \
	refused_with "MODULE_LIST=/no/such/list: no such file" MODULE_LIST=/no/such/list BASE="$distro"
check "MODULE_LIST= with a kconfig target (tinyconfig) is refused, and says why" \
	refused_with "not of BASE=tinyconfig" MODULE_LIST="$modules" BASE=tinyconfig
# The distro tree is configured again for later use, as a base should be.
configure "$(basename "$distro")" "$distro" >/dev/null 2>&1 || true

status=0
BASE=no-such-base "$root/scripts/base-dir" >"$logs/bad-base.log" 2>&1 || status=$?
check "BASE=no-such-base is refused (status $status)" test "$status" -ne 0
check "BASE=no-such-base: the error says why" \
	grep -q 'neither a kconfig target' "$logs/bad-base.log"

# The ThinLTO configuration of the main job's variants, on defconfig.
status=0
configure defconfig-thinlto defconfig --no-pgo --fragment "$root/scripts/configs/thinlto.config" ||
	status=$?
check "defconfig + thinlto.config: configured (status $status)" test "$status" -eq 0
for option in CONFIG_LTO_CLANG_THIN=y CONFIG_RUST=y '# CONFIG_PGO_CLANG is not set'; do
	check "defconfig + thinlto.config: $option" grep -qx "$option" "$(tree_of defconfig)/.config"
done
configure defconfig defconfig >/dev/null 2>&1 || true

status=0
VARIANTS="thinlto bogus" "$root/scripts/profile-kernel" >"$logs/bad-variant.log" 2>&1 || status=$?
check "VARIANTS with an unknown variant is refused (status $status)" test "$status" -ne 0
check "VARIANTS: the error names the variant" grep -q 'unknown variant bogus' "$logs/bad-variant.log"
check "VARIANTS: refused before any stage" bash -c '! grep -q "^== " "$1"' _ "$logs/bad-variant.log"
status=0
"$root/scripts/benchmark-kernels" 1 a=/nonexistent --compare a/b >"$logs/bad-compare.log" 2>&1 ||
	status=$?
check "benchmark-kernels --compare with an unknown kernel is refused (status $status)" \
	test "$status" -eq 2
check "benchmark-kernels: the error names the kernel" grep -q 'no kernel b' "$logs/bad-compare.log"

summary configure
