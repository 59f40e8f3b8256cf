#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kpgo's crate as the kernel lints it: clippy with the kernel's own lints
# (undocumented unsafe blocks, the kernel's minimum Rust version from its
# .clippy.toml, ...), on the test kernel tree (make kernel). Any warning
# fails. host-lint covers the core on the host; this covers the kernel
# side too, with the kernel's flags.  The tree is the test kernel's
# (KPGO_TREE, as the other suites take it), the driver the clippy of the
# toolchain's own rustc (next to it): another rustc's clippy would lint
# with other lints, or not load the crates the tree's rustc wrote.
#
# Usage: tests/kernel/clippy.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
log=$root/build/check/kernel-clippy.build.log
tree=${KPGO_TREE:-$root/build/linux}
rustc=${KPGO_RUSTC:-/usr/bin/rustc}
clippy_driver=$(dirname "$rustc")/clippy-driver
# shellcheck source=lib.sh
source "$here/lib.sh"

mkdir -p "$(dirname "$log")"
# Linted only when compiled: the crate root is touched (in the tree).
check "$clippy_driver, of $rustc, is there (scripts/setup installs it)" test -x "$clippy_driver"
touch "$tree/kernel/pgo/kpgo.rs"
status=0
KPGO_TREE=$tree "$root/scripts/kmake" CLIPPY=1 CLIPPY_DRIVER="$clippy_driver" kernel/pgo/ >"$log" 2>&1 ||
	status=$?
check "kernel/pgo/ builds under clippy-driver (status $status; $log)" test "$status" -eq 0
# Lines that start with the word (rustc, clippy) or carry it after a file
# name (objtool: "kernel/pgo/kpgo.o: warning: objtool: ...").
# CLIPPY=1 builds the kernel crate again under clippy first (its command
# line changed), and its warnings are upstream's (7.3's cpufreq.rs has
# one): only what comes from the first line naming kernel/pgo/ on is
# kpgo's.
sed -n '\| kernel/pgo/|,$p' "$log" >"$log.kpgo"
check_no_warnings "clippy, rustc and objtool: no warning or error in kernel/pgo/" "$log.kpgo"
# The kernel's pr_*! macros already start each line with the crate's
# prefix (kpgo.rs: __LOG_PREFIX), so a message of its own would print it
# twice ("kpgo: kpgo: ").
doubled='pr_[a-z]+!\(\s*"kpgo:'
check "the doubled-prefix pattern finds one (a control)" \
	bash -c "printf 'pr_warn!(\n    \"kpgo: x\");\n' | grep -qPz '$doubled'"
status=0
grep -rlPz "$doubled" "$root/pgo" || status=$?
check "no log message repeats the crate's prefix \"kpgo: \" (grep status $status)" \
	test "$status" -eq 1
summary kernel-clippy
