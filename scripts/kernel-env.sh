# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # the variables are for the callers
#
# Shared settings of the kernel scripts (sourced, not run): where the
# prepared kernel tree is and which toolchain builds it.
#
#   KPGO_TREE   kernel tree to prepare and build (default build/linux);
#               scripts/kernel.mk uses build/linux-nopgo for the
#               comparison build without PGO.
#   KSRC        an existing Linux 6.12 source tree to use instead of
#               unpacking /usr/src/linux-source-6.12.tar.xz into KPGO_TREE
#               (it is patched and built in place).
#   KPGO_CACHE  tools built by scripts/setup (default ~/.cache/kpgo).

KPGO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KPGO_CACHE=${KPGO_CACHE:-$HOME/.cache/kpgo}
if [[ -n ${KSRC:-} ]]; then
	KPGO_TREE=$(cd "$KSRC" && pwd)
else
	KPGO_TREE=${KPGO_TREE:-$KPGO_ROOT/build/linux}
	[[ $KPGO_TREE == /* ]] || KPGO_TREE=$KPGO_ROOT/$KPGO_TREE
fi
KPGO_LINUX_TARBALL=${KPGO_LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}

# The kernel must be built by clang/LLVM 19 and by the rustc whose LLVM is
# also 19 (Debian's rustc-web 1.85).  The rustup rustc that may come first
# on PATH has another LLVM: name every Rust tool explicitly, host tools
# (HOSTRUSTC, used for the kernel's proc macros) included.
KPGO_LLVM_BIN=/usr/lib/llvm-19/bin
KPGO_RUSTC=/usr/bin/rustc
KPGO_RUSTDOC=/usr/bin/rustdoc
KPGO_RUST_LIB_SRC=/usr/lib/rustlib/src/rust/library
KPGO_BINDGEN=$KPGO_CACHE/tools/bin/bindgen

# make arguments that select the toolchain.
# ARCH=x86_64 rather than the default x86: then "make tinyconfig" starts
# from 64-bit defaults (with x86, allnoconfig picks 32-bit ones, such as
# FRAME_WARN=1024, that stay after the fragment sets 64BIT).
kpgo_make_args=(
	ARCH=x86_64
	LLVM=1
	"RUSTC=$KPGO_RUSTC"
	"HOSTRUSTC=$KPGO_RUSTC"
	"RUSTDOC=$KPGO_RUSTDOC"
	"RUST_LIB_SRC=$KPGO_RUST_LIB_SRC"
	"BINDGEN=$KPGO_BINDGEN"
)

kpgo_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
kpgo_die() { kpgo_log "error: $*"; exit 1; }

# Copies this project into the kernel tree as kernel/pgo/.  Files are
# compared by content and a changed one is written with the current time
# (no -t): keeping the source's mtime could make it older than an object
# built from a previous version, which make would then not rebuild.
# Unchanged files are not touched.  The build outputs that kbuild leaves
# next to the sources are protected from --delete, so that only sources
# removed from the project disappear.
kpgo_sync_project() {
	local dest=$KPGO_TREE/kernel/pgo
	mkdir -p "$dest"
	rsync -rlpc --delete \
		-f 'P *.o' -f 'P *.a' -f 'P *.ko' -f 'P *.mod' -f 'P *.mod.c' \
		-f 'P *.order' -f 'P *.symvers' -f 'P *.rmeta' -f 'P *.rlib' \
		-f 'P *.s' -f 'P *.ll' -f 'P *.i' -f 'P *.lst' -f 'P .*' \
		-f '+ /Kconfig' -f '+ /Kbuild' -f '+ /pgo/***' -f '- *' \
		"$KPGO_ROOT/" "$dest/"
}

# Serializes the commands that write into the tree: two makes in one
# in-tree build corrupt each other's outputs (seen: a bindgen .d file
# deleted under the other build).  The lock is held until the calling
# script, or the make it execs, exits; nested calls inherit it.
kpgo_lock_tree() {
	[[ ${KPGO_TREE_LOCKED:-} == "$KPGO_TREE" ]] && return
	mkdir -p "$KPGO_TREE/.kpgo"
	exec 9>"$KPGO_TREE/.kpgo/lock"
	if ! flock -n 9; then
		kpgo_log "waiting for another build in $KPGO_TREE"
		flock 9
	fi
	export KPGO_TREE_LOCKED=$KPGO_TREE
}
