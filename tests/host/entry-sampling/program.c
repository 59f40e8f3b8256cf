// SPDX-License-Identifier: GPL-2.0
/*
 * The entry-sampling plugin's test program: what its twins must keep
 * (branches, a loop, an indirect call, a variable-size memcpy, a static
 * array that must stay in the entry block, recursion) and what cannot
 * have a twin (a variadic function, a computed goto, a function named in
 * kprobes' blacklist, an asm label), or an entry test (a function that does
 * not return).  burst_tick() (flag.c, not instrumented) sets the burst flag
 * before each round; remote() is in other.c, another object.
 *
 * Usage: program ROUNDS
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void burst_tick(void);
int remote(int x);

__attribute__((noinline)) static int leaf(int x)
{
	return x & 1 ? 3 * x + 1 : x / 2;
}

__attribute__((noinline)) static int twice(int x)
{
	return 2 * x;
}

static int (*const table[])(int) = { leaf, twice };

__attribute__((noinline)) int indirect(int i, int x)
{
	return table[i % 3 == 0](x);
}

__attribute__((noinline)) int with_array(int n)
{
	volatile char buf[256];
	int sum = 0;

	for (int i = 0; i < n && i < 256; i++)
		buf[i] = i;
	for (int i = 0; i < n && i < 256; i++)
		sum += buf[i];
	return sum;
}

__attribute__((noinline)) void copy(char *to, const char *from, size_t n)
{
	memcpy(to, from, n);
}

/*
 * Called by one_round() with k of 1 or 2 only, and by sum(), which has no
 * twin, with 3: a twin specialized to its twinned callers' k must not be
 * what sum()'s calls reach between bursts.  Its twin is kept whole from
 * the start, and scale() tests at entry.
 */
__attribute__((noinline)) static int scale(int x, int k)
{
	return k > 2 ? 100 * x : k * x;
}

__attribute__((noinline)) int sum(int n, ...)
{
	va_list ap;
	int total = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		total += va_arg(ap, int);
	va_end(ap);
	return scale(total, n);
}

/* An asm statement that defines a named label: no twin, which would define it twice. */
__attribute__((noinline)) int labelled(int x)
{
	asm volatile("kpgo_test_label: nop");
	return x + 1;
}

/* Called through a cast to another type: the call keeps its own. */
__attribute__((noinline)) static int narrow(int x)
{
	return x * 7;
}

/* A computed goto, as the kernel's BPF interpreter has: no twin. */
__attribute__((noinline)) int dispatch(int op)
{
	static void *const table[] = { &&add, &&sub };

	goto *table[op & 1];
add:
	return op + 1;
sub:
	return op - 1;
}

__attribute__((noinline)) int recurse(int n)
{
	return n <= 1 ? 1 : recurse(n - 1) + (n & 1);
}

/*
 * The optimizer finds that it does not return (the source does not say so):
 * no entry test, for objtool, which follows a dead end's jumps.
 */
__attribute__((noinline)) void give_up(const char *why)
{
	fprintf(stderr, "program: %s\n", why);
	exit(2);
}

/* Named in kprobes' blacklist, as NOKPROBE_SYMBOL() does: no twin. */
__attribute__((noinline)) int unprobed(int x)
{
	return x ^ 0x55;
}

static unsigned long __attribute__((used, section("_kprobe_blacklist"))) unprobed_entry =
	(unsigned long)unprobed;

/* A weak default that flag.c overrides, as mm's mem_init() is by x86's. */
__attribute__((noinline, weak)) int overridden(int x)
{
	return x;
}

/*
 * Called only from gate(), always inlined into raw(), which is not
 * instrumented, as x86's x64_sys_call() is from do_syscall_x64(), inlined
 * into noinstr do_syscall_64(): deep() keeps its twin whole and tests at
 * entry.
 */
__attribute__((noinline)) static int deep(int x)
{
	return x % 5 ? 5 * x + 1 : x;
}

static inline __attribute__((always_inline)) int gate(int x)
{
	return deep(x);
}

__attribute__((noinline, no_profile_instrument_function)) int raw(int x)
{
	return gate(x);
}

/* Called by other.c's remote(): its twin by other.c's twin. */
__attribute__((noinline)) int hop(int x)
{
	return x ^ 3;
}

/* A round's work, entered as a system call is: its test is at its entry. */
__attribute__((noinline)) static long one_round(int i)
{
	static char from[64] = "entry sampling", to[64];
	long total = indirect(i, i) + with_array(i % 300) + sum(3, i, i, i) + recurse(i % 20) +
		     dispatch(i) + dispatch(i + 1) + overridden(i) + unprobed(i) +
		     scale(i, i & 1 ? 1 : 2) + labelled(i) + remote(i) + raw(i);

	((void (*)(int))narrow)(i);

	copy(to, from, i % 64);
	return total;
}

static long (*volatile enter_round)(int) = one_round;

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	long total = 0;

	if (rounds < 0)
		give_up("a negative number of rounds");

	for (int i = 0; i < rounds; i++) {
		burst_tick();
		total += enter_round(i);
	}
	printf("%ld\n", total);
	return 0;
}
