# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh), started by tests/kernel/rust.sh.
# Takes vmlinux's profile (the kernel crate and built-in Rust code; with
# vmlinux-rust.profraw too, where rustc writes another raw version than
# clang and the image's Rust records are apart) and
# the profiles of the Rust test module pgo_test_rust; the host judges them.
set -e
. /kpgo/guest-lib.sh
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
run() { cat /sys/kernel/debug/pgo_test_rust/run >/dev/null; }
# Resets one module: "module:<name>" (the current interface), or the bare
# name that older runtimes take.
reset_module() {
	echo "module:$1" >$pgo/reset 2>/dev/null || echo "$1" >$pgo/reset
}

vmlinux() {
	cat $pgo/vmlinux.profraw >$r/vmlinux-$1.profraw
	if [ -e $pgo/vmlinux-rust.profraw ]; then
		cat $pgo/vmlinux-rust.profraw >$r/vmlinux-rust-$1.profraw
		cat $pgo/live/vmlinux-rust.profraw >$r/live-vmlinux-rust-$1.profraw
	fi
}
vmlinux boot

# init runs the workload once, before the module is live.
insmod /kpgo/pgo_test_rust.ko
cat $pgo/pgo_test_rust.profraw >$r/rust-init.profraw
run
run
run
cat $pgo/pgo_test_rust.profraw >$r/rust-4.profraw
reset_module pgo_test_rust
cat $pgo/pgo_test_rust.profraw >$r/rust-reset.profraw
run
run
cat $pgo/pgo_test_rust.profraw >$r/rust-2.profraw

# Unload keeps the profile; a reload appends its live profile (1 run).
rmmod pgo_test_rust
cat $pgo/pgo_test_rust.profraw >$r/rust-kept.profraw
insmod /kpgo/pgo_test_rust.ko
cat $pgo/pgo_test_rust.profraw >$r/rust-reload.profraw
rmmod pgo_test_rust
vmlinux after
step done
echo "rust guest done"
