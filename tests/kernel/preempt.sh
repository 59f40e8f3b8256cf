#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The hooks walk (hooks_callees.py) on the test kernel built with the
# preemption models make check does not build: full preemption chosen at
# boot (PREEMPT_DYNAMIC, scripts/configs/preempt-dynamic.config) and
# PREEMPT_RT (preempt-rt.config). make check covers PREEMPT_NONE (the
# test kernel) and PREEMPT (the KASAN kernel). On each, the hooks must
# reach no instrumented code, and the end of a hook's RCU-sched section
# must take a reschedule that came due in it (preempt_schedule_notrace).
# vmlinux only, no boot, in build/linux-preempt-<model>: about 10 minutes
# a kernel on 2 cores. The last line is "preempt: N passed, M failed".
#
# Usage: tests/kernel/preempt.sh [dynamic] [rt]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export BASE=tinyconfig
build=$("$root/scripts/base-dir")
models=("$@")
((${#models[@]})) || models=(dynamic rt)
passed=0
failed=0
for model in "${models[@]}"; do
	fragment=$root/scripts/configs/preempt-$model.config
	[[ -f $fragment ]] || { echo "preempt: no $fragment" >&2; exit 2; }
	tree=$build/linux-preempt-$model
	start=$SECONDS
	if KPGO_TREE=$tree "$root/scripts/prepare-kernel" --configure \
		--fragment "$root/scripts/kpgo.config" --fragment "$fragment" &&
		KPGO_TREE=$tree "$root/scripts/kmake" vmlinux; then
		echo "preempt-$model: vmlinux built in $((SECONDS - start)) s"
		# The configuration is the one asked for, not what a dependency left.
		want=$(grep -E '^CONFIG_' "$fragment")
		if grep -qxF -f <(echo "$want") "$tree/.config" &&
			[[ $(grep -cxF -f <(echo "$want") "$tree/.config") == $(echo "$want" | wc -l) ]]; then
			passed=$((passed + 1))
		else
			echo "FAIL: preempt-$model: $tree/.config lacks some of: $want"
			failed=$((failed + 1))
		fi
		if KPGO_TREE=$tree "$here/hooks.sh"; then
			passed=$((passed + 1))
		else
			echo "FAIL: preempt-$model: the hooks walk"
			failed=$((failed + 1))
		fi
	else
		echo "FAIL: preempt-$model: the kernel does not build"
		failed=$((failed + 1))
	fi
done
echo "preempt: $passed passed, $failed failed"
((failed == 0))
