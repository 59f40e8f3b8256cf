// SPDX-License-Identifier: GPL-2.0
/*
 * usage: hammer THREADS ITERATIONS
 *
 * Every thread makes ITERATIONS steps; each step calls call_through_table,
 * call_pair and copy_sized once. Each thread tallies its own calls in its own
 * memory; the totals are printed at the end, one line per (site, value):
 *
 *   indirect <site function> <target function> <calls>
 *   memop <site function> <size in bytes> <calls>
 *   entry <function> <calls>
 *
 * The checker compares these with what the profile recorded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "hammer.h"

#define MAX_THREADS 64

struct tally {
	uint64_t table[NUM_TABLE_TARGETS];
	uint64_t pair[NUM_PAIR_TARGETS];
	uint64_t size[SCHEDULE_LEN]; /* by schedule slot */
	uint64_t sink;
};

static struct tally tallies[MAX_THREADS];
static unsigned iterations;
static pthread_barrier_t start_line;

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	struct tally *t = &tallies[id];
	uint8_t src[1024] = { 1 }, dst[1024] = { 0 };
	uint64_t x = id;

	/* All threads leave together, each at a different point of the
	 * schedule: first-time insertions of different values on the same site
	 * race with each other right from the start. */
	pthread_barrier_wait(&start_line);
	for (unsigned i = 0; i < iterations; i++) {
		unsigned slot = (i + id * 8) % SCHEDULE_LEN;
		unsigned k = target_schedule[slot];

		x = call_through_table(k, x);
		t->table[k]++;
		x = call_pair((i + id) & 1, x);
		t->pair[(i + id) & 1]++;
		copy_sized(dst, src, size_schedule[slot]);
		t->size[slot]++;
		src[i & 1023] ^= dst[(i * 7) & 1023];
	}
	t->sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	unsigned nthreads;
	uint64_t sink = 0;

	if (argc != 3 || (nthreads = (unsigned)atoi(argv[1])) < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: %s THREADS(1..%d) ITERATIONS\n", argv[0], MAX_THREADS);
		return 2;
	}
	iterations = (unsigned)strtoul(argv[2], NULL, 10);
	build_schedules();
	pthread_barrier_init(&start_line, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);

	for (unsigned k = 0; k < NUM_TABLE_TARGETS; k++) {
		uint64_t n = 0;

		for (unsigned i = 0; i < nthreads; i++)
			n += tallies[i].table[k];
		printf("indirect call_through_table %s %llu\n", table_target_names[k], (unsigned long long)n);
		printf("entry %s %llu\n", table_target_names[k], (unsigned long long)n);
	}
	for (unsigned k = 0; k < NUM_PAIR_TARGETS; k++) {
		uint64_t n = 0;

		for (unsigned i = 0; i < nthreads; i++)
			n += tallies[i].pair[k];
		printf("indirect call_pair %s %llu\n", pair_target_names[k], (unsigned long long)n);
		printf("entry %s %llu\n", pair_target_names[k], (unsigned long long)n);
	}
	for (unsigned s = 0; s < SCHEDULE_LEN; s++) {
		uint64_t n = 0;

		for (unsigned i = 0; i < nthreads; i++)
			n += tallies[i].size[s];
		printf("memop copy_sized %zu %llu\n", size_schedule[s], (unsigned long long)n);
	}
	for (unsigned i = 0; i < nthreads; i++)
		sink += tallies[i].sink;
	printf("entry call_through_table %llu\n", (unsigned long long)(uint64_t)nthreads * iterations);
	printf("entry call_pair %llu\n", (unsigned long long)(uint64_t)nthreads * iterations);
	printf("entry copy_sized %llu\n", (unsigned long long)(uint64_t)nthreads * iterations);
	fprintf(stderr, "sink %llx\n", (unsigned long long)sink);
	return 0;
}
