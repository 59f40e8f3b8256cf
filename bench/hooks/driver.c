// SPDX-License-Identifier: GPL-2.0
/*
 * Times the same loops built against several runtimes in one process, so
 * that they share the CPU's state at the moment: each variant is a shared
 * object (loops, patterns and its runtime, bound to itself), loaded
 * privately. Rounds run every variant's chunk of calls in turn, the order
 * rotating between rounds; the report is the median ns per call of each
 * variant and the median of the per-round ratios to the first variant.
 *
 * usage: driver LOOP CALLS ROUNDS NAME=LIB.so...   (LOOP: indirect|memcpy)
 * prints "<loop> <name> <median ns> <median ratio to the first>" lines.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../model/window.h"

#define MAX_VARIANTS 4
#define MAX_ROUNDS 1000

typedef uint64_t (*loop_fn)(unsigned long n);

/* The loops' results land here, so that no call can be left out. */
uint64_t bench_sink;

struct variant {
	const char *name;
	loop_fn loop;
	double ns[MAX_ROUNDS];
	double ratio[MAX_ROUNDS];
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), compare_doubles);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *symbol(void *lib, const char *path, const char *name)
{
	void *sym = dlsym(lib, name);

	if (!sym) {
		fprintf(stderr, "driver: %s: no %s\n", path, name);
		exit(1);
	}
	return sym;
}

int main(int argc, char **argv)
{
	static struct variant variants[MAX_VARIANTS];
	unsigned long calls;
	int rounds, count = argc - 4;

	if (argc < 5 || count > MAX_VARIANTS ||
	    (strcmp(argv[1], "indirect") && strcmp(argv[1], "memcpy"))) {
		fprintf(stderr, "usage: driver indirect|memcpy CALLS ROUNDS NAME=LIB.so...\n");
		return 2;
	}
	calls = strtoul(argv[2], NULL, 10);
	rounds = atoi(argv[3]);
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "driver: ROUNDS must be 1..%d\n", MAX_ROUNDS);
		return 2;
	}
	for (int v = 0; v < count; v++) {
		char *spec = argv[4 + v], *path = strchr(spec, '=');
		void *lib;

		if (!path) {
			fprintf(stderr, "driver: %s is not NAME=LIB.so\n", spec);
			return 2;
		}
		*path++ = '\0';
		/* Each object keeps its own runtime: its hooks, its sections. */
		lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
		if (!lib) {
			fprintf(stderr, "driver: %s\n", dlerror());
			return 1;
		}
		variants[v].name = spec;
		variants[v].loop = (loop_fn)symbol(lib, path, strcmp(argv[1], "memcpy") ?
						   "bench_indirect" : "bench_memcpy");
		((void (*)(void))symbol(lib, path, "build_patterns"))();
		/* Warm up: first-use node allocation. */
		bench_sink += variants[v].loop(calls);
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < count; i++) {
			struct variant *v = &variants[(r + i) % count];
			double t = now_ns();

			/* The front-end model counts the loop alone (bench/run). */
			KPGO_MODEL_START(0);
			bench_sink += v->loop(calls);
			KPGO_MODEL_END(0);
			v->ns[r] = (now_ns() - t) / calls;
		}
		for (int v = 0; v < count; v++)
			variants[v].ratio[r] = variants[v].ns[r] / variants[0].ns[r];
	}
	for (int v = 0; v < count; v++)
		printf("%s %s %.3f %.4f\n", argv[1], variants[v].name,
		       median(variants[v].ns, rounds), median(variants[v].ratio, rounds));
	return 0;
}
