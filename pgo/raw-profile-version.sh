#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Prints the raw profile version that the C compiler "$@" emits with
# -fprofile-generate: the low 32 bits of __llvm_profile_raw_version, whose
# high bits are variant flags. Prints 0 if it cannot tell (not clang, no
# -fprofile-generate, an unexpected assembly listing...). Kconfig uses it to
# refuse, at configure time, a compiler whose raw format the runtime does
# not write.
#
# Usage: raw-profile-version.sh <compiler> [<flag>...]

word=$(echo 'void kpgo_probe(void) { }' |
	"$@" -x c -fprofile-generate -S -o - - 2>/dev/null |
	awk '/^__llvm_profile_raw_version:/ { getline; if ($1 == ".quad") print $2; exit }')

# A decimal of at most 18 digits fits the shell's arithmetic (variant flags
# of -fprofile-generate stay below bit 60).
case $word in
'' | *[!0-9]* | ???????????????????*)
	echo 0
	;;
*)
	echo $((word % 4294967296))
	;;
esac
