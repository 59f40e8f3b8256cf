/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Included into every C object built with CONFIG_PGO_CLANG_SAMPLING (the
 * top Makefile's CFLAGS_PGO_CLANG), never into kernel/pgo's own.
 *
 * LLVM's sampled instrumentation advances the variable named
 * __llvm_profile_sampling at every counter update, and declares it
 * thread-local, which on x86-64 is %fs-relative: user memory in the
 * kernel. LLVM looks the variable up by name before it declares its own,
 * so this declaration in the %gs address space is the one every update
 * uses: a %gs:sym(%rip) access, the running CPU's copy of the per-CPU
 * variable that kernel/pgo/glue.c defines. (LLVM still adds an unused
 * thread-local variable, renamed, which the linker scripts discard; the
 * build stops if anything refers to thread-local storage.)
 *
 * clang drops a declaration that the source does not use, before LLVM
 * looks: the pointer below, in a section the linker discards, keeps it.
 * (Kbuild includes this after compiler_types.h, which defines __used.)
 */
#ifndef _KERNEL_PGO_SAMPLING_H
#define _KERNEL_PGO_SAMPLING_H

extern __seg_gs unsigned short __llvm_profile_sampling;

static __seg_gs unsigned short *__pgo_sampling_keep
	__used __section(".discard.pgo_sampling") = &__llvm_profile_sampling;

#endif /* _KERNEL_PGO_SAMPLING_H */
