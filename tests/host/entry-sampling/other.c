// SPDX-License-Identifier: GPL-2.0
/*
 * The entry-sampling test's second object, for -kpgo-entry-extern-twins
 * (as vmlinux's objects are built): program.c's twins call remote()'s twin
 * here by its name, and remote()'s twin calls program.c's hop()'s twin.
 */
int hop(int x);

__attribute__((noinline)) int remote(int x)
{
	return hop(x) + (x < 0 ? -1 : 3);
}
