# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # the variables are for the callers
#
# Shared settings of the kernel scripts (sourced, not run): the base
# configuration and its build folder, where the prepared kernel tree is and
# which toolchain builds it.
#
#   BASE        the base configuration (below); default tinyconfig.
#   KPGO_TREE   kernel tree to prepare and build (default KPGO_BUILD/linux);
#               scripts/kernel.mk uses linux-nopgo and linux-optimized next
#               to it, scripts/profile-kernel bench/*.
#   KSRC        your own git tree of Linux 6.12 to use instead of a checkout
#               of /usr/src/linux-source-6.12.tar.xz (the series is applied
#               to it with git am and it is built in place).
#   KPGO_CACHE  tools built by scripts/setup (default ~/.cache/kpgo).

KPGO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KPGO_CACHE=${KPGO_CACHE:-$HOME/.cache/kpgo}

# LINUX: the kernel release that every kernel target builds: 7.3 (the
# default: Debian's linux-source-7.3 from trixie-backports, which
# scripts/setup fetches into KPGO_CACHE through apt lists of its own) or
# 6.12 (the LTS: bookworm's linux-source-6.12, installed as a package).
# Each release has its series (patches/ for 7.3, what would be posted;
# patches/linux-6.12/, the stable backport, both generated from
# integration/), its Debian configurations (linux-config-<release>) and
# its build folders: 7.3's are the ones this file names, 6.12's the same
# under KPGO_OUT/linux-6.12/ (build/linux-6.12/linux, ...).
KPGO_DEFAULT_LINUX=7.3
KPGO_LINUX_RELEASES=(7.3 6.12)
# kpgo_linux_release RELEASE: sets the KPGO_LINUX_* variables of that
# release (scripts/setup fetches every release's source through it).
kpgo_linux_release() {
	case $1 in
	7.3)
		# Pinned: the series is made against this build.
		KPGO_LINUX_DEB_VERSION=7.3.4-1~bpo13+1
		KPGO_LINUX_DIR=$KPGO_CACHE/linux/linux-source-7.3_$KPGO_LINUX_DEB_VERSION
		KPGO_DEFAULT_TARBALL=$KPGO_LINUX_DIR/usr/src/linux-source-7.3.tar.xz
		KPGO_LINUX_CONFIGS=$KPGO_LINUX_DIR/usr/src/linux-config-7.3
		KPGO_PATCHES=$KPGO_ROOT/patches
		;;
	6.12)
		# Installed as Debian packages (scripts/setup pins the source).
		KPGO_LINUX_DEB_VERSION=
		KPGO_LINUX_DIR=
		KPGO_DEFAULT_TARBALL=/usr/src/linux-source-6.12.tar.xz
		KPGO_LINUX_CONFIGS=/usr/src/linux-config-6.12
		KPGO_PATCHES=$KPGO_ROOT/patches/linux-6.12
		;;
	*)
		echo "LINUX=$1: unknown kernel release; use 7.3 (the default) or 6.12" >&2
		exit 1
		;;
	esac
}
KPGO_LINUX=${LINUX:-$KPGO_DEFAULT_LINUX}
kpgo_linux_release "$KPGO_LINUX"
# BASE: the base configuration, a kconfig target (tinyconfig, the default;
# defconfig), a distribution's configuration by name (debian-cloud: Debian's
# cloud-amd64 kernel of the release, KPGO_LINUX_CONFIGS, with the modules of
# scripts/configs/debian-cloud.modules) or the path of a .config.  Each
# base has its own build folder, KPGO_BUILD: build/ for tinyconfig (the
# paths the README names), build/<target> for another target,
# build/config-<file name>-<hash of its path> for a file, and for a
# distribution's KPGO_OUT/<name> (below).  The trees of a base are
# KPGO_BUILD/linux (make kernel), linux-nopgo (make baseline),
# linux-optimized (make optimized) and bench/{instrumented,optimized,
# baseline} (make, the main job).  KPGO_BASE_CONFIG is the base's .config
# file, empty for a kconfig target.
KPGO_BASE=${BASE:-tinyconfig}
KPGO_BASE_CONFIG=
# KPGO_OUT: where build folders go: build/ in the repository, but for a
# distribution's configuration (debian-cloud, or any base with MODULE_LIST=,
# below), whose builds take hours, KPGO_CACHE/out, so that a fresh clone
# (CI's) or a deleted build/ does not lose them.  The kernel source
# imported into git (below) goes there too: the trees share its objects.
# MODULE_LIST=FILE (see KPGO_MODULE_LIST below), made absolute and
# exported: the scripts source this file again from inside a tree.
if [[ -n ${MODULE_LIST:-} ]]; then
	[[ -f $MODULE_LIST ]] || { echo "MODULE_LIST=$MODULE_LIST: no such file" >&2; exit 1; }
	MODULE_LIST=$(realpath "$MODULE_LIST")
	export MODULE_LIST
fi
# The build folder of a base with MODULE_LIST: the base's own, suffixed
# with the list's (two lists of one base do not share trees or profiles).
kpgo_list_suffix() {
	[[ -z ${MODULE_LIST:-} ]] || echo "-modules-$(printf %s "$MODULE_LIST" | sha1sum | cut -c1-8)"
}
case $KPGO_BASE in
debian-cloud)
	KPGO_BASE_CONFIG=$KPGO_LINUX_CONFIGS/config.amd64_none_cloud-amd64.xz
	[[ -f $KPGO_BASE_CONFIG ]] ||
		{ echo "BASE=$KPGO_BASE: $KPGO_BASE_CONFIG missing: run scripts/setup" >&2; exit 1; }
	KPGO_OUT=$(realpath -m "${KPGO_OUT:-$KPGO_CACHE/out}")
	KPGO_BUILD=$KPGO_OUT/$KPGO_BASE$(kpgo_list_suffix)
	;;
*)
	if [[ -n ${MODULE_LIST:-} ]]; then
		KPGO_OUT=$(realpath -m "${KPGO_OUT:-$KPGO_CACHE/out}")
	else
		KPGO_OUT=$(realpath -m "${KPGO_OUT:-$KPGO_ROOT/build}")
	fi
	if [[ $KPGO_BASE == */* || -f $KPGO_BASE ]]; then
		[[ -f $KPGO_BASE ]] || { echo "BASE=$KPGO_BASE: no such file" >&2; exit 1; }
		KPGO_BASE=$(realpath "$KPGO_BASE")
		# Absolute for the scripts that source this again from a tree.
		export BASE=$KPGO_BASE
		KPGO_BASE_CONFIG=$KPGO_BASE
		KPGO_BUILD=$KPGO_OUT/config-$(basename "$KPGO_BASE" | tr -c 'A-Za-z0-9._\n-' _)-$(
			printf %s "$KPGO_BASE" | sha1sum | cut -c1-8)$(kpgo_list_suffix)
	elif [[ $KPGO_BASE =~ ^[A-Za-z0-9_.-]*config$ ]]; then
		# localmodconfig only takes modules away: a kconfig target's few
		# are not a distribution's.
		[[ -z ${MODULE_LIST:-} ]] || {
			echo "MODULE_LIST= keeps modules of a distribution's .config (BASE=FILE or debian-cloud), not of BASE=$KPGO_BASE" >&2
			exit 1
		}
		if [[ $KPGO_BASE == tinyconfig ]]; then
			KPGO_BUILD=$KPGO_OUT
		else
			KPGO_BUILD=$KPGO_OUT/$KPGO_BASE
		fi
	else
		echo "BASE=$KPGO_BASE: neither a kconfig target (…config), debian-cloud nor a file" >&2
		exit 1
	fi
	;;
esac
# KPGO_MODULE_LIST: the modules to build, load and profile, as make
# localmodconfig keeps them (it only turns modules off: the base must have
# them, as a distribution's .config does): MODULE_LIST=FILE (yours: the
# output of lsmod on the machines the kernel is for will do), else the
# base's list
# (scripts/configs/<BASE>.modules) if it has one: a distribution's.  One
# module per line, its name first; "#" starts a comment.  Its builds go
# through ccache unless KPGO_CCACHE=0 (below): the same make command lines
# whichever target builds them, so that none rebuilds what another built.
KPGO_MODULE_LIST=
if [[ -n ${MODULE_LIST:-} ]]; then
	KPGO_MODULE_LIST=$MODULE_LIST
elif [[ $KPGO_BASE != */* && -f $KPGO_ROOT/scripts/configs/$KPGO_BASE.modules ]]; then
	KPGO_MODULE_LIST=$KPGO_ROOT/scripts/configs/$KPGO_BASE.modules
fi
# kpgo_module_names: the names of KPGO_MODULE_LIST, one per line: the
# first word of each line, comments, blank lines and lsmod's header line
# ("Module Size Used by") dropped.
kpgo_module_names() {
	awk '{ sub(/#.*/, "") } NF && !($1 == "Module" && $2 == "Size") { print $1 }' "$KPGO_MODULE_LIST"
}
KPGO_SOURCE_DIR=$KPGO_OUT
if [[ $KPGO_LINUX != "$KPGO_DEFAULT_LINUX" ]]; then
	KPGO_SOURCE_DIR=$KPGO_OUT/linux-$KPGO_LINUX
	KPGO_BUILD=$KPGO_SOURCE_DIR${KPGO_BUILD#"$KPGO_OUT"}
fi
# KPGO_LINUX_TARBALL: the kernel source, default the release's Debian
# linux-source (scripts/setup installs it).  Another one (another 6.12.y:
# make check-stable) has a build folder of its own, build/source-<name of
# the tarball's folder>-<hash of its path>, which holds its imported source
# and the folders of each base and toolchain (build/source-.../defconfig/...).
KPGO_LINUX_TARBALL=${KPGO_LINUX_TARBALL:-$KPGO_DEFAULT_TARBALL}
if [[ $KPGO_LINUX_TARBALL != "$KPGO_DEFAULT_TARBALL" ]]; then
	[[ -f $KPGO_LINUX_TARBALL ]] || { echo "KPGO_LINUX_TARBALL=$KPGO_LINUX_TARBALL: no such file" >&2; exit 1; }
	KPGO_LINUX_TARBALL=$(realpath "$KPGO_LINUX_TARBALL")
	kpgo_tarball_dir=$KPGO_SOURCE_DIR/source-$(basename "$(dirname "$KPGO_LINUX_TARBALL")" |
		tr -c 'A-Za-z0-9._\n-' _)-$(printf %s "$KPGO_LINUX_TARBALL" | sha1sum | cut -c1-8)
	KPGO_BUILD=$kpgo_tarball_dir${KPGO_BUILD#"$KPGO_SOURCE_DIR"}
	KPGO_SOURCE_DIR=$kpgo_tarball_dir
fi
# The kernel source imported into git once (bare; its objects are shared by
# every prepared tree): the base commit of the series in patches/.  The
# import is deterministic (fixed identity and date), so the base-commit of
# patches/ names the same commit on every machine with the same tarball.
KPGO_BASE_REPO=$KPGO_SOURCE_DIR/linux-base.git
KPGO_BASE_TAG=kpgo-base
# A checkout of that commit that nothing builds in or patches: new trees
# are hard-linked copies of it, so the 1.3 GB of sources are on disk once
# however many trees there are (make check makes ten).  Sound because no
# step writes a source file in place: git (checkout, am, reset) and rsync
# replace a file with a new one, the build writes only files the source
# lacks.  kpgo_new_tree checks that the checkout is still the commit.
KPGO_BASE_CHECKOUT=$KPGO_SOURCE_DIR/linux-base.checkout

# TOOLCHAIN: the tools that build the kernel, chosen together: clang/LLVM
# (clang, ld.lld, llvm-profdata...), rustc, rustdoc, the Rust library
# source and the libclang that bindgen loads.  A name of
# scripts/toolchains/ (llvm-19, the default: clang 19 and Debian's rustc
# 1.85; llvm-22: clang 22 and rustc 1.96) or the path of a toolchain file
# of your own in the same form.  Each toolchain has its own trees, in
# KPGO_BUILD/<name> (a file: KPGO_BUILD/toolchain-<file name>-<hash of its
# path>); the default's are KPGO_BUILD's own.  Every tool is named by its
# path, host tools (HOSTRUSTC, for the kernel's proc macros) included: the
# rustup rustc that may come first on PATH has another LLVM.
KPGO_TOOLCHAIN=${TOOLCHAIN:-llvm-19}
if [[ $KPGO_TOOLCHAIN == */* ]]; then
	[[ -f $KPGO_TOOLCHAIN ]] || { echo "TOOLCHAIN=$KPGO_TOOLCHAIN: no such file" >&2; exit 1; }
	KPGO_TOOLCHAIN_FILE=$(realpath "$KPGO_TOOLCHAIN")
	KPGO_BUILD=$KPGO_BUILD/toolchain-$(basename "$KPGO_TOOLCHAIN_FILE" | tr -c 'A-Za-z0-9._\n-' _)-$(
		printf %s "$KPGO_TOOLCHAIN_FILE" | sha1sum | cut -c1-8)
elif [[ $KPGO_TOOLCHAIN =~ ^[A-Za-z0-9_.-]+$ && -f $KPGO_ROOT/scripts/toolchains/$KPGO_TOOLCHAIN ]]; then
	KPGO_TOOLCHAIN_FILE=$KPGO_ROOT/scripts/toolchains/$KPGO_TOOLCHAIN
	[[ $KPGO_TOOLCHAIN == llvm-19 ]] || KPGO_BUILD=$KPGO_BUILD/$KPGO_TOOLCHAIN
else
	echo "TOOLCHAIN=$KPGO_TOOLCHAIN: unknown toolchain; use one of" \
		"$(cd "$KPGO_ROOT/scripts/toolchains" && echo *) (scripts/toolchains/)" \
		"or the path of a toolchain file written like them" >&2
	exit 1
fi
toolchain_rust_unpack= toolchain_bindgen= toolchain_unpack_suite= toolchain_unpack_dir=
toolchain_rust_llvm_bin=
# shellcheck source=toolchains/llvm-19
source "$KPGO_TOOLCHAIN_FILE"
for var in toolchain_llvm toolchain_llvm_bin toolchain_libclang_path toolchain_rustc \
	toolchain_rustdoc toolchain_rust_lib_src; do
	[[ -n ${!var:-} ]] || { echo "TOOLCHAIN=$KPGO_TOOLCHAIN: $KPGO_TOOLCHAIN_FILE does not set $var" >&2; exit 1; }
done
KPGO_LLVM_VERSION=$toolchain_llvm
KPGO_LLVM_BIN=$toolchain_llvm_bin
# rustc's LLVM tools, where they are another LLVM's (toolchain_rust_llvm_bin):
# with a rustc that writes another raw version than clang, the Rust
# profiles are merged by rustc's llvm-profdata.
KPGO_RUST_LLVM_BIN=${toolchain_rust_llvm_bin:-$toolchain_llvm_bin}
KPGO_LIBCLANG_PATH=$toolchain_libclang_path
KPGO_RUSTC=$toolchain_rustc
KPGO_RUSTDOC=$toolchain_rustdoc
KPGO_RUST_LIB_SRC=$toolchain_rust_lib_src
# One bindgen for every toolchain of scripts/toolchains/: 0.72.1 is the
# first that reads libclang 22 right (rust-bindgen PR #3278), and it reads
# 19 as well.  A toolchain file of your own may name another
# (toolchain_bindgen); kmake refuses one that the kernel warns about.
KPGO_BINDGEN_VERSION=0.72.1
KPGO_BINDGEN=${toolchain_bindgen:-$KPGO_CACHE/tools/bindgen-$KPGO_BINDGEN_VERSION/bin/bindgen}

if [[ -n ${KSRC:-} ]]; then
	KPGO_TREE=$(cd "$KSRC" && pwd)
else
	KPGO_TREE=${KPGO_TREE:-$KPGO_BUILD/linux}
	[[ $KPGO_TREE == /* ]] || KPGO_TREE=$KPGO_ROOT/$KPGO_TREE
fi

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
# KPGO_CCACHE=1: C compiles go through ccache, its cache in
# KPGO_CACHE/ccache unless CCACHE_DIR names another: a tree built again
# from scratch compiles only what changed.  The default is off, as every
# compile costs more while the cache is cold (make check, CI on a fresh
# machine), but on for a base with a module list (a distribution's).
KPGO_CCACHE=${KPGO_CCACHE:-$([[ -n $KPGO_MODULE_LIST ]] && echo 1 || echo 0)}
if [[ $KPGO_CCACHE == 1 ]]; then
	command -v ccache >/dev/null || { echo "KPGO_CCACHE=1: no ccache: run scripts/setup" >&2; exit 1; }
	kpgo_make_args+=("CC=ccache clang")
	export CCACHE_DIR=${CCACHE_DIR:-$KPGO_CACHE/ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-40G}
fi

# The version of the libclang that bindgen loads, as "major.minor.patch".
# bindgen --version does not name it, and clang-sys picks the newest
# libclang it finds unless LIBCLANG_PATH names one: so ask it, through the
# value bindgen gives an enum whose constants are clang's version macros.
kpgo_bindgen_libclang() {
	local probe
	probe=$(mktemp --suffix=.h)
	printf 'enum kpgo_probe { MAJOR = __clang_major__, MINOR = __clang_minor__, PATCH = __clang_patchlevel__ };\n' >"$probe"
	LIBCLANG_PATH=$KPGO_LIBCLANG_PATH "$KPGO_BINDGEN" "$probe" 2>/dev/null |
		sed -n 's/^pub const kpgo_probe_\(MAJOR\|MINOR\|PATCH\): kpgo_probe = \([0-9]*\);$/\2/p' |
		paste -sd.
	rm -f "$probe"
}

# Refuses a toolchain that cannot build a sound PGO kernel, before any
# build, saying what is wrong and how to fix it: a missing tool, a clang
# of another LLVM than the toolchain file says, a rustc whose LLVM is not
# clang's (its objects' profile records go into the same profile, which
# one llvm-profdata merges and both compilers read back), or a bindgen
# whose libclang is not clang's (the bindings would describe other
# layouts; libclang 22 with bindgen < 0.72.1 makes them opaque).  Sets
# KPGO_TOOLCHAIN_ID, the versions of all of them.
kpgo_check_toolchain() {
	local tool missing=() clang rustc_llvm libclang fix
	fix="(toolchain file ${KPGO_TOOLCHAIN_FILE#"$KPGO_ROOT"/})"
	for tool in "$KPGO_LLVM_BIN/clang" "$KPGO_LLVM_BIN/ld.lld" "$KPGO_LLVM_BIN/llvm-profdata" \
		"$KPGO_RUST_LLVM_BIN/llvm-profdata" "$KPGO_RUSTC" "$KPGO_RUSTDOC" "$KPGO_BINDGEN"; do
		[[ -x $tool ]] || missing+=("$tool")
	done
	[[ -f $KPGO_RUST_LIB_SRC/core/src/lib.rs ]] || missing+=("$KPGO_RUST_LIB_SRC/core")
	compgen -G "$KPGO_LIBCLANG_PATH/libclang*.so*" >/dev/null || missing+=("$KPGO_LIBCLANG_PATH/libclang.so")
	((${#missing[@]} == 0)) || kpgo_die "toolchain $KPGO_TOOLCHAIN: missing ${missing[*]}: run scripts/setup $fix"
	clang=$("$KPGO_LLVM_BIN/clang" -dumpversion)
	[[ ${clang%%.*} == "$KPGO_LLVM_VERSION" ]] ||
		kpgo_die "toolchain $KPGO_TOOLCHAIN: $KPGO_LLVM_BIN/clang is clang $clang, not LLVM $KPGO_LLVM_VERSION as its file says $fix"
	rustc_llvm=$("$KPGO_RUSTC" --version --verbose 2>/dev/null | sed -n 's/^LLVM version: //p')
	# rustc reads back the indexed profile that clang's llvm-profdata
	# writes, and an LLVM reads the indexed versions of older ones only: a
	# rustc of an older LLVM is refused, but when it writes another raw
	# version than clang (rustc's LLVM 22 with clang 23), where the kernel
	# builds Rust without profiling and without the profile.
	if [[ -z $rustc_llvm ]] || { ((${rustc_llvm%%.*} < ${clang%%.*})) &&
		[[ $(sh "$KPGO_ROOT/pgo/rustc-raw-profile-version.sh" "$KPGO_RUSTC") == \
			$(sh "$KPGO_ROOT/pgo/raw-profile-version.sh" "$KPGO_LLVM_BIN/clang") ]]; }; then
		kpgo_die "toolchain $KPGO_TOOLCHAIN: $KPGO_RUSTC has LLVM ${rustc_llvm:-unknown} but clang is $clang: Rust and C objects are profiled together and rustc reads back the profile that clang's llvm-profdata indexes, which only an LLVM as new reads; set toolchain_rustc to a rustc whose LLVM is ${clang%%.*} or later (\"rustc --version --verbose\" says) $fix"
	fi
	libclang=$(kpgo_bindgen_libclang)
	[[ $libclang == "$clang" ]] ||
		kpgo_die "toolchain $KPGO_TOOLCHAIN: bindgen loads libclang ${libclang:-(none found)} from LIBCLANG_PATH=$KPGO_LIBCLANG_PATH, but the C compiler is clang $clang: bindings made by another libclang describe other struct layouts (libclang 22 makes them opaque); set toolchain_libclang_path to the libclang of clang's LLVM (/usr/lib/llvm-${clang%%.*}/lib, Debian's libclang-${clang%%.*}-dev) $fix"
	KPGO_TOOLCHAIN_ID="clang $clang, $("$KPGO_RUSTC" --version) (LLVM $rustc_llvm), $("$KPGO_BINDGEN" --version) (libclang $libclang)"
}

# git with a fixed identity, for commits that must come out the same on
# every machine (the base import, the generated series, git am).
kpgo_git() {
	GIT_AUTHOR_NAME=kpgo GIT_AUTHOR_EMAIL=kpgo@localhost \
		GIT_COMMITTER_NAME=kpgo GIT_COMMITTER_EMAIL=kpgo@localhost \
		git -c core.autocrlf=false -c advice.detachedHead=false \
		-c gc.auto=0 -c commit.gpgsign=false "$@"
}

# Where the tarball comes from, for the import's commit message: the
# installed package's version for the default one.
kpgo_tarball_origin() {
	if [[ $KPGO_LINUX_TARBALL == "$KPGO_DEFAULT_TARBALL" && $KPGO_LINUX == 6.12 ]]; then
		echo "Debian $(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)"
	elif [[ $KPGO_LINUX_TARBALL == "$KPGO_DEFAULT_TARBALL" ]]; then
		echo "Debian $KPGO_LINUX_DEB_VERSION"
	else
		# Not the path: the import's commit id must not depend on it.
		basename "$(dirname "$KPGO_LINUX_TARBALL")"
	fi
}

# Imports the kernel tarball into $KPGO_BASE_REPO (bare), once: one commit,
# tagged $KPGO_BASE_TAG, with the identity above and the date of the
# tarball's top Makefile, so that the commit id depends on the tarball only.
kpgo_ensure_base_repo() {
	local tmp version subject
	if git --git-dir="$KPGO_BASE_REPO" rev-parse -q --verify \
		"refs/tags/$KPGO_BASE_TAG" >/dev/null 2>&1; then
		# A folder that an older kpgo, whose default was 6.12, filled.
		subject=$(git --git-dir="$KPGO_BASE_REPO" log -1 --format=%s "$KPGO_BASE_TAG")
		[[ $subject == "Linux $KPGO_LINUX."* ]] ||
			kpgo_die "$KPGO_BASE_REPO holds \"$subject\", not Linux $KPGO_LINUX (LINUX=$KPGO_LINUX): it was made when the default release was another; remove $KPGO_SOURCE_DIR/linux-base.* and the trees made from it (rm -rf ${KPGO_SOURCE_DIR#"$KPGO_ROOT"/})"
		return
	fi
	mkdir -p "$(dirname "$KPGO_BASE_REPO")"
	exec 8>"$KPGO_BASE_REPO.lock"
	flock 8
	if ! git --git-dir="$KPGO_BASE_REPO" rev-parse -q --verify \
		"refs/tags/$KPGO_BASE_TAG" >/dev/null 2>&1; then
		[[ -f $KPGO_LINUX_TARBALL ]] || kpgo_die "$KPGO_LINUX_TARBALL missing: run scripts/setup"
		kpgo_log "importing $KPGO_LINUX_TARBALL into $KPGO_BASE_REPO"
		tmp=$KPGO_BASE_REPO.importing
		rm -rf "$tmp" "$KPGO_BASE_REPO"
		mkdir -p "$tmp/tree"
		tar -xf "$KPGO_LINUX_TARBALL" -C "$tmp/tree" --strip-components=1
		version=$(make -s --no-print-directory -C "$tmp/tree" kernelversion)
		kpgo_git --git-dir="$tmp/git" init -q --bare
		# -f: Debian's top .gitignore ignores the whole top level.
		kpgo_git --git-dir="$tmp/git" --work-tree="$tmp/tree" add -A -f
		GIT_AUTHOR_DATE="$(stat -c %Y "$tmp/tree/Makefile") +0000" \
			GIT_COMMITTER_DATE="$(stat -c %Y "$tmp/tree/Makefile") +0000" \
			kpgo_git --git-dir="$tmp/git" --work-tree="$tmp/tree" commit -q \
			-m "Linux $version ($(basename "$KPGO_LINUX_TARBALL"), $(kpgo_tarball_origin))"
		kpgo_git --git-dir="$tmp/git" tag "$KPGO_BASE_TAG"
		mv "$tmp/git" "$KPGO_BASE_REPO"
		rm -rf "$tmp"
	fi
	exec 8>&-
}

# Makes $KPGO_BASE_CHECKOUT (above), once.  core.trustctime=false there
# and in the trees copied from it: linking a file changes its ctime, which
# would make git hash every source again in each tree.
kpgo_ensure_base_checkout() {
	local tmp=$KPGO_BASE_CHECKOUT.new
	[[ -d $KPGO_BASE_CHECKOUT/.git ]] && return
	kpgo_ensure_base_repo
	exec 8>"$KPGO_BASE_CHECKOUT.lock"
	flock 8
	if [[ ! -d $KPGO_BASE_CHECKOUT/.git ]]; then
		kpgo_log "checking out the kernel source into $KPGO_BASE_CHECKOUT"
		rm -rf "$tmp"
		kpgo_git clone -q --shared --no-checkout "$KPGO_BASE_REPO" "$tmp"
		git -C "$tmp" config core.trustctime false
		kpgo_git -C "$tmp" checkout -q -f --detach "$KPGO_BASE_TAG"
		mv "$tmp" "$KPGO_BASE_CHECKOUT"
	fi
	exec 8>&-
}

# Makes the directory $1 a git tree of the base commit: a hard-linked copy
# of $KPGO_BASE_CHECKOUT (its .git copied, so that each tree has its own
# index and refs), or a checkout of its own where links cannot be made
# (another file system).  Refuses when the shared checkout was changed: a
# file written in place through a link has changed every tree made from it.
kpgo_new_tree() {
	local dest=$1 tmp=$1.new changed
	kpgo_ensure_base_checkout
	changed=$(git -C "$KPGO_BASE_CHECKOUT" status --porcelain 2>&1 | head -5)
	[[ -z $changed ]] ||
		kpgo_die "$KPGO_BASE_CHECKOUT is no longer the base commit (a source written in place through a hard link?): $(echo $changed); remove it and the trees under build/"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if cp -a "$KPGO_BASE_CHECKOUT/.git" "$tmp/.git" &&
		find "$KPGO_BASE_CHECKOUT" -mindepth 1 -maxdepth 1 ! -name .git \
			-exec cp -al -t "$tmp" {} + 2>/dev/null; then
		:
	else
		kpgo_log "cannot link $KPGO_BASE_CHECKOUT into $tmp: a checkout of its own"
		rm -rf "$tmp"
		kpgo_git clone -q --shared --no-checkout "$KPGO_BASE_REPO" "$tmp"
		kpgo_git -C "$tmp" checkout -q -f --detach "$KPGO_BASE_TAG"
	fi
	mv "$tmp" "$dest"
}

kpgo_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
kpgo_die() { kpgo_log "error: $*"; exit 1; }

# The "copy=SRC:DEST" items of integration/series, one "SRC DEST" per line:
# the project files that the series adds to the tree (kernel/pgo/, the
# guide).
kpgo_series_copies() {
	sed -e 's/#.*//' "$KPGO_ROOT/integration/series" | tr ' \t' '\n\n' |
		sed -n 's/^copy=\([^:]*\):\(.*\)$/\1 \2/p'
}

# Copies the project's files into the tree as the series does (kernel/pgo/
# and the guide), so that a change of the working copy is built without
# regenerating patches/; on a clean checkout whose patches/ is up to date
# this changes nothing.  Files are compared by content and a changed one is
# written with the current time (no -t): keeping the source's mtime could
# make it older than an object built from a previous version, which make
# would then not rebuild.  The build outputs that kbuild leaves next to the
# sources are protected from --delete, so that only sources removed from
# the project disappear.  Prints the files it changed.
# The suffixes of what kbuild writes next to kernel/pgo/'s sources (and
# its dot files: .cmd, .d).
kpgo_build_output_suffixes=(o a ko mod mod.c order symvers rmeta rlib s ll i lst)
kpgo_sync_project() {
	local src dest other suffix protect=(-f 'P .*') copies=() copy inner
	for suffix in "${kpgo_build_output_suffixes[@]}"; do
		protect+=(-f "P *.$suffix")
	done
	mapfile -t copies < <(kpgo_series_copies)
	for copy in "${copies[@]}"; do
		read -r src dest <<<"$copy"
		mkdir -p "$(dirname "$KPGO_TREE/$dest")"
		if [[ -d $KPGO_ROOT/$src ]]; then
			# The other copies that land inside this folder (kernel/pgo/'s
			# Kconfig and Makefile) are not this folder's to delete.
			inner=()
			for other in "${copies[@]}"; do
				other=${other#* }
				[[ $other == "$dest"/* ]] && inner+=(-f "P /${other#"$dest"/}")
			done
			rsync -rlpc --delete --out-format='%n' "${protect[@]}" "${inner[@]}" \
				"$KPGO_ROOT/$src/" "$KPGO_TREE/$dest/" | sed "s|^|$dest/|;/\/$/d"
		elif ! cmp -s "$KPGO_ROOT/$src" "$KPGO_TREE/$dest"; then
			cp --remove-destination "$KPGO_ROOT/$src" "$KPGO_TREE/$dest"
			echo "$dest"
		fi
	done
}

# Removes the sources that kpgo_sync_project copied into the tree and git
# does not track (a file of kernel/pgo/ that the applied patches lack), so
# that git am can add them; build outputs stay.  Debian's tarball ignores
# everything (.gitignore "/*"), so git clean cannot tell them apart.
kpgo_unsync_project() {
	local dest suffix outputs='(^|/)[.][^/]*$'
	for suffix in "${kpgo_build_output_suffixes[@]}"; do
		outputs+="|[.]${suffix//./[.]}\$"
	done
	while read -r _ dest; do
		# (grep selects nothing in a tree without any: not an error.)
		git -C "$KPGO_TREE" ls-files -z --others -- "$dest" 2>/dev/null |
			{ grep -zvE "$outputs" || true; } | (cd "$KPGO_TREE" && xargs -0 -r rm -f --)
	done < <(kpgo_series_copies)
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
