# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # for the scripts that source it
#
# The words of LLVM's profile-use warnings (clang: [-Wbackend-plugin]; rustc
# passes them on with the same words), as one extended regular expression:
# what -Wno-error=backend-plugin is there for.  Any other -Wbackend-plugin
# warning is one that -Werror would have stopped (scripts/build-optimized,
# tests/kernel/whole-loop.sh).
kpgo_profile_warnings=': (function control flow change detected \(hash mismatch\)|no profile data available for function|Inconsistent number of counts in|Profile in .* partially ignored|.* is annotated as a hot function but the profile is cold)'
