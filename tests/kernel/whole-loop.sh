#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole loop on a base that make check cannot afford (hours on 2
# cores): make check-defconfig (BASE=defconfig: x86_64 defconfig +
# scripts/configs/{qemu,pgo,defconfig}.config, in-tree modules of several
# kinds) and make check-distro (BASE=debian-cloud: Debian's cloud-amd64
# configuration with the modules of scripts/configs/debian-cloud.modules,
# built with ccache in KPGO_CACHE/out/debian-cloud; each stage reuses what
# an earlier run built).  The main job (scripts/profile-kernel), then
#   - the instrumented build has no compiler, objtool or modpost warning
#     that the same configuration without PGO (the baseline) lacks, and the
#     optimized one none but profile diagnostics;
#   - the instrumented kernel booted (QEMU, TCG, 2 CPUs) and served
#     vmlinux.profraw and a .profraw for every loaded instrumented module,
#     each accepted by llvm-profdata merge;
#   - the optimized build has no out-of-date function but the explained
#     ones (init_module/cleanup_module of a module not loaded: one name
#     all modules share) and boots (the benchmark boots it);
# and for a base with a module list (a distribution's):
#   - the guest loaded the list's modules with modprobe, at least 150 of
#     them; an entry that is no module of the kernel, or one whose load
#     fails, must be one the list says so of (a comment on its line:
#     "# not built: why", "# fails: why");
#   - the workload (scripts/workload-distro.guest.sh) ran every step on the
#     instrumented kernel, and again on the optimized and the baseline
#     kernels, loading the same modules; no console has a splat;
#   - bad input, on the instrumented kernel before the whole workload
#     again: a module built for another kernel, one whose profile
#     sections do not check out, one whose init fails, a list entry that
#     is no module; one clear line each, and the rest of the run as
#     without them (the same modules, every step, every profile merges).
# The figures (build time per stage, sizes of vmlinux and of the modules
# with their __llvm_prf_* sections, boot time, memory after boot, profile
# sizes and the time to read them all, modules profiled, the benchmark:
# -icount and the front-end model) go to KPGO_BUILD/<BASE>-report.md
# (debian-cloud: distro-report.md).
#
# Usage: tests/kernel/whole-loop.sh BASE   (ROUNDS=, MODEL_ROUNDS= as for make)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export BASE=${1:?usage: tests/kernel/whole-loop.sh BASE}
list=$(bash -c 'source "$1/scripts/kernel-env.sh" && echo "$KPGO_MODULE_LIST"' _ "$root") || exit 1
distro=0
[[ -z $list ]] || distro=1
# The base's build folder and LLVM tools for the toolchain (TOOLCHAIN=).
build=$("$root/scripts/base-dir") || exit 1
llvm=$(bash -c 'source "$1/scripts/kernel-env.sh" && echo "$KPGO_LLVM_BIN"' _ "$root")
bench=$build/bench
results=$build/qemu/workload/results
report=$build/${BASE##*/}-report.md
((distro == 0)) || report=$build/distro-report.md
# shellcheck source=lib.sh
source "$here/lib.sh"

status=0
"$root/scripts/profile-kernel" || status=$?
check "the main job on $BASE completed (status $status)" test "$status" -eq 0

# Warnings: compiler ("warning:"), objtool ("warning: objtool:"), modpost
# ("WARNING: modpost:"), with tree paths and column numbers dropped; of
# every run of the build (LOG.all: a resumed build's last log is only
# what its last run compiled).
warnings() {
	local log=$1
	[[ ! -f $log.all ]] || log=$log.all
	grep -E 'warning:|WARNING:' "$log" | sed -E "s|$bench/[a-z]+/||g; s|:[0-9]+:[0-9]+:|:|" | sort -u
}
check "both build logs are there (instrumented, baseline)" \
	test -s "$bench/instrumented.log" -a -s "$bench/baseline.log"
warnings "$bench/instrumented.log" >"$build/warnings-instrumented.txt"
warnings "$bench/baseline.log" >"$build/warnings-baseline.txt"
comm -23 "$build/warnings-instrumented.txt" "$build/warnings-baseline.txt" >"$build/warnings-new.txt"
check "no warning that the build without PGO lacks ($(wc -l <"$build/warnings-new.txt") new)" \
	test ! -s "$build/warnings-new.txt"
# The optimized build too, but for the profile diagnostics (counted below;
# by their words, since other -Wbackend-plugin warnings must still count):
# objtool's IBT check once warned 2503 times there (patch 3).
# shellcheck source=../../scripts/profile-warnings.sh
source "$root/scripts/profile-warnings.sh"
warnings "$bench/optimized.log" | grep -vE "$kpgo_profile_warnings" \
	>"$build/warnings-optimized.txt" || true
comm -23 "$build/warnings-optimized.txt" "$build/warnings-baseline.txt" >"$build/warnings-optimized-new.txt"
check "the optimized build: no warning but profile diagnostics that the baseline lacks ($(wc -l <"$build/warnings-optimized-new.txt") new)" \
	test ! -s "$build/warnings-optimized-new.txt"

# Every loaded instrumented module has its profile, and llvm-profdata takes
# each profile.
check "the workload listed the loaded modules" test -s "$results/modules-loaded"
: >"$build/modules-unprofiled.txt"
# module_files TREE: "name path" of each .ko under TREE (a module's name
# has _ where its file's may have -).
module_files() {
	local ko name
	find "$1" -name '*.ko' | while IFS= read -r ko; do
		name=${ko##*/}
		name=${name%.ko}
		echo "${name//-/_} $ko"
	done
}
declare -A ko_of=()
while read -r name ko; do
	ko_of[$name]=$ko
done < <(module_files "$bench/instrumented")
loaded=0
while read -r name _; do
	ko=${ko_of[$name]:-}
	[[ -n $ko ]] || continue
	# grep reads to the end: with pipefail, grep -q's early exit would
	# fail the pipeline (llvm-readelf's SIGPIPE) and skip the module.
	"$llvm/llvm-readelf" -S "$ko" | grep __llvm_prf_data >/dev/null || continue
	loaded=$((loaded + 1))
	[[ -s $results/$name.profraw ]] || echo "$name" >>"$build/modules-unprofiled.txt"
done <"$results/modules-loaded"
check "every one of the $loaded loaded instrumented modules has its .profraw" \
	test ! -s "$build/modules-unprofiled.txt"
check "vmlinux.profraw served" test -s "$results/vmlinux.profraw"
bad=0
for f in "$results"/*.profraw; do
	"$llvm/llvm-profdata" merge -o /dev/null "$f" 2>>"$build/merge-errors.txt" || bad=$((bad + 1))
done
check "every profile is accepted by llvm-profdata merge ($bad refused)" test "$bad" -eq 0

counts=$bench/optimized/pgo-profile-diagnostics.txt
out_of_date=$(diagnostic "$counts" out_of_date)
missing=$(diagnostic "$counts" missing)
# An out-of-date function is explained only when it is a module's
# init_module or cleanup_module (module_init()'s and module_exit()'s global
# aliases: one profile name that every module's init and exit function
# share, records told apart by hash) in a module the guest did not load:
# the profile has the name, with other modules' hashes, and none of its.
# Any other is a real one.  The list, each with why: out-of-date.txt.
out_of_date_explained() {
	local tree=$1 log=$2 loaded=$3 file fn mod
	declare -A module_of=() live=()
	local m o
	while read -r m; do
		while read -r o; do
			module_of[${o%.o}.c]=$(basename "$m" .mod)
		done <"$tree/$m"
	done < <(cd "$tree" && find . -name '*.mod' -printf '%P\n')
	while read -r m _; do
		live[${m//-/_}]=1
	done < <(cat "$loaded" 2>/dev/null)
	grep -o 'warning: [^:]*: function control flow change detected (hash mismatch) [^ ]*' "$log" |
		sed 's/^warning: \([^:]*\): .* \([^ ]*\)$/\1 \2/' |
		while read -r file fn; do
			mod=${module_of[$file]:-}
			if [[ $fn =~ ^(init|cleanup)_module$ && -n $mod && -z ${live[${mod//-/_}]:-} ]]; then
				echo "explained: $file $fn: module $mod was not loaded; its $fn shares the name with the loaded modules'"
			else
				echo "UNEXPLAINED: $file $fn (module: ${mod:-none, built in})"
			fi
		done
}
out_of_date_explained "$bench/optimized" "$bench/optimized.log" "$results/modules-loaded" \
	>"$build/out-of-date.txt"
unexplained=$(grep -c '^UNEXPLAINED' "$build/out-of-date.txt")
explained=$(grep -c '^explained' "$build/out-of-date.txt")
check "optimized build: out-of-date functions ${out_of_date:-?}, every one explained ($explained explained, $unexplained not: out-of-date.txt)" \
	test "${out_of_date:--1}" -eq "$explained" -a "$unexplained" -eq 0
check "the optimized kernel booted and ran the benchmark" \
	test -s "$build/bench-kernels/optimized-1/results/ops"

if ((distro)); then
	# The list against what the guest did; an entry that is not loaded
	# must say why on its line.
	listed=$(bash -c 'source "$1/scripts/kernel-env.sh" && kpgo_module_names' _ "$root" | wc -l)
	ok=$(wc -l 2>/dev/null <"$results/modules-ok" || echo 0)
	# At least 150 (a distribution's list), or every entry not annotated
	# as not built or failing (a shorter list of one's own).
	annotated=$(grep -cE '[[:space:]]# (not built|fails): ' "$list" || true)
	want=$((listed - annotated < 150 ? listed - annotated : 150))
	check "the guest loaded the list's modules with modprobe: $ok of $listed, at least $want" \
		test "$ok" -ge "$want"
	for kind in missing:"not built" failed:fails; do
		file=$results/modules-${kind%%:*}
		unexplained=$(while read -r module; do
			grep -qE "^$module([[:space:]][^#]*)?[[:space:]]# ${kind#*:}: " "$list" || echo "$module"
		done 2>/dev/null <"$file" | tr '\n' ' ')
		check "every module ${kind%%:*} in the guest is one the list says so of (${unexplained:-none other}; list: $(tr '\n' ' ' 2>/dev/null <"$file"))" \
			test -f "$file" -a -z "$unexplained"
	done
	check_console "the instrumented kernel's console has no splat" "$build/qemu/workload/console.log"
	check "the instrumented kernel ran every step of the workload ($(tail -1 "$results/steps" 2>/dev/null))" \
		grep -qx profiles-read "$results/steps"
	check "no workload step failed on the instrumented kernel ($(tr '\n' ',' 2>/dev/null <"$results/workload-failed"))" \
		test ! -s "$results/workload-failed"
	# Bad input, then the whole workload again on the instrumented kernel:
	# a module built for another kernel (the release before this one in
	# its vermagic), one whose profile sections do not check out (a
	# CounterPtr far outside __llvm_prf_cnts), one whose init fails (the
	# test modules of tests/kernel/modules/, built against this tree), a
	# list entry that is no module. One clear line each; the rest of the
	# run as without them.
	bad_dir=$build/bad-input
	bad_out=$build/qemu/workload-bad-input
	# Nothing of an earlier run may stand in for this one's results.
	rm -rf "$bad_dir" "$bad_out" "$bad_out".*
	mkdir -p "$bad_dir/modules" "$bad_dir/guest"
	cp "$here/modules/"*.c "$here/modules/Kbuild" "$bad_dir/modules/"
	status=0
	{
		KPGO_TREE=$bench/instrumented "$root/scripts/kmake" -s M="$bad_dir/modules" modules &&
			python3 "$here/ko_edit.py" other-kernel "$bad_dir/modules/pgo_test_a.ko" \
				"$bad_dir/guest/other_kernel.ko" &&
			python3 "$here/ko_edit.py" corrupt-counters "$bad_dir/modules/pgo_test_corrupt.ko" \
				"$bad_dir/guest/bad_sections.ko" pgo_test_corrupt_victim --addend 0x100000 &&
			cp "$bad_dir/modules/pgo_test_initfail.ko" "$bad_dir/guest/init_fails.ko" &&
			echo "kpgo_no_such_module" >"$bad_dir/guest/modules.list" &&
			"$root/scripts/distro-workload" "$bench/instrumented" "$bad_out" \
				--tree "$bad_dir/guest:/kpgo/bad"
	} >"$bad_dir/run.log" 2>&1 || status=$?
	check "bad input: the run completed (status $status)" test "$status" -eq 0
	bad_results=$bad_out/results
	bad_console=$bad_out/console.log
	# console_line REGEX: the first console line that matches, without
	# its timestamp.
	console_line() { grep -m1 -E "$1" "$bad_console" 2>/dev/null | sed 's/^\[[^]]*\] //'; }
	# refused FILE ERROR: the guest's insmod of FILE failed with ERROR.
	refused() { grep -F "$1 " "$bad_results/bad-refused" | grep -qF "$2"; }
	# once REGEX: exactly one console line matches.
	once() { test "$(grep -cE "$1" "$bad_console")" -eq 1; }
	magic="pgo_test_a: version magic '[^']*' should be '[^']*'"
	other_kernel_refused() { refused other_kernel.ko "Invalid module format" && once "$magic"; }
	check "bad input: the module built for another kernel is refused, one line ($(console_line "$magic"))" \
		other_kernel_refused
	# Its init ran: kpgo profiled it, says nothing of it, keeps its profile.
	init_failure_seen() {
		refused init_fails.ko "No such device" && ! grep -q "module pgo_test_initfail:" "$bad_console" &&
			test -s "$bad_results/pgo_test_initfail.profraw"
	}
	check "bad input: the module whose init fails: insmod's ENODEV, no kpgo line, its profile kept" \
		init_failure_seen
	check "bad input: the module with bad profile sections loads, not profiled, one line ($(console_line 'module pgo_test_corrupt:'))" \
		bash -c 'grep -qx bad_sections.ko "$1/bad-loaded" && test ! -e "$1/pgo_test_corrupt.profraw" &&
			test "$(grep -c "module pgo_test_corrupt: .*; not profiled" "$2")" -eq 1 &&
			grep -q "modules_refused=1 " "$1/stats"' _ "$bad_results" "$bad_console"
	check "bad input: the list entry that is no module, one line" \
		bash -c 'grep -qx kpgo_no_such_module "$1/bad-list-missing" &&
			test "$(grep -c "module list: kpgo_no_such_module: no such module" "$2")" -eq 1' _ "$bad_results" "$bad_console"
	check "bad input: then the same modules loaded as without it" \
		cmp -s "$results/modules-ok" "$bad_results/modules-ok"
	check "bad input: then every step ($(tail -1 "$bad_results/steps" 2>/dev/null)), none failed ($(tr '\n' ',' 2>/dev/null <"$bad_results/workload-failed"))" \
		bash -c 'grep -qx profiles-read "$1/steps" && test ! -s "$1/workload-failed"' _ "$bad_results"
	bad_merge=0
	for f in "$bad_results"/*.profraw; do
		"$llvm/llvm-profdata" merge -o /dev/null "$f" 2>/dev/null || bad_merge=$((bad_merge + 1))
	done
	# profile_names DIR: the names of DIR's profiles.
	profile_names() { find "$1" -name '*.profraw' -printf '%f\n' | sort; }
	check "bad input: then the same profiles (and pgo_test_initfail's), each accepted by llvm-profdata merge ($bad_merge refused)" \
		bash -c 'test "$1" -eq 0 && diff <(echo "$2") <(echo "$3" | grep -vx pgo_test_initfail.profraw)' _ \
		"$bad_merge" "$(profile_names "$results")" "$(profile_names "$bad_results")"
	check_console "bad input: the console has no splat" "$bad_console"

	# The same workload on the optimized and baseline kernels.
	for kernel in optimized baseline; do
		out=$build/qemu/workload-$kernel
		rm -rf "$out" "$out".*
		status=0
		"$root/scripts/distro-workload" "$bench/$kernel" "$out" >"$out.log" 2>&1 || status=$?
		check "$kernel: the workload completed (status $status)" test "$status" -eq 0
		check "$kernel: every step ($(tail -1 "$out/results/steps" 2>/dev/null)), none failed ($(tr '\n' ',' 2>/dev/null <"$out/results/workload-failed"))" \
			bash -c 'grep -qx profiles-read "$1/steps" && test ! -s "$1/workload-failed"' _ "$out/results"
		check "$kernel: the same modules loaded as on the instrumented kernel" \
			cmp -s "$results/modules-ok" "$out/results/modules-ok"
		check_console "$kernel: the console has no splat" "$out/console.log"
	done
fi

size_of() { "$llvm/llvm-size" "$1/vmlinux" | awk 'NR == 2 { print $1 " text, " $2 " data, " $3 " bss, " $4 " total" }'; }
# sections KERNEL [FILE...]: text and the __llvm_prf_* sections, in bytes,
# of FILE... of that kernel's tree.
sections() {
	"$root/scripts/elf-section-bytes" "$@" 2>/dev/null |
		awk '$1 == ".text" || $1 ~ /^__llvm_prf/ { printf "%s%s %d", sep, $1, $2; sep = ", " } END { print "" }'
}
# The loaded modules' .ko files in tree $1 (unstripped: the sizes of the
# sections that are loaded do not depend on it).
loaded_kos() {
	LC_ALL=C join <(cut -d' ' -f1 "$results/modules-loaded" | LC_ALL=C sort -k1,1) \
		<(module_files "$1" | LC_ALL=C sort -k1,1) | cut -d' ' -f2
}
# kB of a /proc/meminfo field in file $2.
meminfo() { sed -n "s/^$1: *\([0-9]*\) kB/\1/p" "$2" 2>/dev/null; }
{
	echo "# $BASE: the PGO loop ($(date -u +%F))"
	echo
	echo "- Time per stage (s, 2 cores; a stage that was up to date is incremental): $(sed -n 's/^Time per stage (s): //p' "$build/report.md")"
	echo "- CPU time per stage (s, user + system): $(sed -n 's/^CPU time per stage (s, user + system): //p' "$build/report.md")"
	# Each stage's runs in order (scripts/profile-kernel's stage-times.log):
	# a full build, the incremental re-runs, runs stopped part way.
	echo "- Every run of each stage, wall seconds (stage-times.log; a build resumed after an interruption took the sum of its runs; \"by hand\": run outside profile-kernel, CPU not recorded): $(
		awk '!seen[$2]++ { order[++n] = $2 }
			$1 == "end" || $1 == "abort" {
				run = $4 " s" ($5 == "-" ? " by hand" : ", " $5 " s CPU") ($1 == "abort" ? ", stopped" : "")
				runs[$2] = runs[$2] (runs[$2] == "" ? "" : "; ") run }
			$1 == "start" { open[$2] = 1 } $1 != "start" { open[$2] = 0 }
			END { for (i = 1; i <= n; i++) printf "%s: %s%s. ", order[i], runs[order[i]],
				open[order[i]] ? " (a run under way or killed)" : "" }' \
			"$build/stage-times.log" 2>/dev/null)"
	echo "- Configuration: what kpgo changed of the base, and why (scripts/configure-kernel; the instrumented kernel):"
	sed 's/^configure-kernel: /  - /' "$bench/instrumented/.kpgo/config-report.txt" 2>/dev/null ||
		echo "  (no report: the tree was configured before configure-kernel kept one)"
	for kernel in optimized baseline; do
		echo "- The $kernel kernel's configuration against it (the kernel's scripts/diffconfig):" \
			"$("$bench/instrumented/scripts/diffconfig" "$bench/instrumented/.config" "$bench/$kernel/.config" 2>/dev/null |
				tr '\n' ';' | sed 's/;/; /g')"
	done
	echo "- size vmlinux (llvm-size):"
	echo "  - instrumented: $(size_of "$bench/instrumented")"
	echo "  - baseline: $(size_of "$bench/baseline")"
	echo "  - optimized: $(size_of "$bench/optimized")"
	echo "- vmlinux sections (bytes): instrumented $(sections "$bench/instrumented/vmlinux"); baseline $(sections "$bench/baseline/vmlinux")"
	if ((distro)); then
		mapfile -t kos_instrumented < <(loaded_kos "$bench/instrumented")
		mapfile -t kos_baseline < <(loaded_kos "$bench/baseline")
		echo "- The ${#kos_instrumented[@]} loaded modules' sections (bytes, summed): instrumented $(sections "${kos_instrumented[@]}"); baseline (${#kos_baseline[@]}) $(sections "${kos_baseline[@]}")"
		for kernel in instrumented optimized baseline; do
			dir=$build/qemu/workload
			[[ $kernel == instrumented ]] || dir+=-$kernel
			echo "- $kernel: boot to the guest script $(sed -n 's/^boot_to_script_s=//p' "$dir/timing" 2>/dev/null) s (TCG, 2 CPUs);" \
				"MemAvailable after boot $(meminfo MemAvailable "$dir/results/meminfo-boot") kB," \
				"after loading the modules $(meminfo MemAvailable "$dir/results/meminfo-modules") kB"
		done
		echo "- Reading every profile file in the guest: $(cat "$results/profiles-read-time" 2>/dev/null) (s of uptime)"
		echo "- Module list: $listed listed, $(wc -l <"$results/modules-ok") loaded by modprobe;" \
			"not modules of this kernel: $(tr '\n' ' ' <"$results/modules-missing"); failed: $(tr '\n' ' ' <"$results/modules-failed")"
	fi
	echo "- Profiles: vmlinux.profraw $(stat -c %s "$results/vmlinux.profraw") bytes;" \
		"$(find "$results" -name '*.profraw' ! -name vmlinux.profraw | wc -l) module profiles," \
		"$(cat "$results"/*.profraw | wc -c) bytes in all; merged $(stat -c %s "$build/kernel.profdata") bytes"
	echo "- Boot to the guest script (instrumented, TCG, 2 CPUs): $(sed -n 's/^boot_to_script_s=//p' "$build/qemu/workload/timing") s"
	# The modules profiled by name where they are few (a distribution's
	# list is in its file).
	profiled_names=
	((loaded > 20)) ||
		profiled_names="($(find "$results" -name '*.profraw' ! -name vmlinux.profraw -printf '%f ' | sed 's/\.profraw//g'))"
	echo "- Modules loaded: $(wc -l <"$results/modules-loaded"), instrumented and profiled: $loaded $profiled_names"
	((distro)) ||
		echo "- Modules whose init failed (no such device), profiled all the same: $(cat "$results/insmod-failed" 2>/dev/null | tr '\n' ' ')"
	echo "- Profile diagnostics of the optimized build: ${out_of_date:-?} out of date ($explained explained, $unexplained not; each in out-of-date.txt), ${missing:-?} without data"
	echo "- Warnings of the instrumented build that the baseline lacks: $(wc -l <"$build/warnings-new.txt")"
	echo "- Warnings of the optimized build that the baseline lacks, profile diagnostics aside: $(wc -l <"$build/warnings-optimized-new.txt")"
	echo
	echo '```'
	cat "$build/benchmark.txt"
	echo '```'
} >"$report"
cat "$report"
summary "$BASE"
