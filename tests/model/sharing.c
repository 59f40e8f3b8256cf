// SPDX-License-Identifier: GPL-2.0
/*
 * The front-end model's known case of sharing (tests/model/model.sh): two
 * threads, two vCPUs under qemu-x86_64, each in its own windows.
 *
 *   window 0  one counter incremented by the threads in turn, ROUNDS turns
 *             each: a thread waits for the count whose parity is its own
 *             and writes the next, so each turn but the very first reads
 *             the other core's write: 2 * ROUNDS - 1 transfers in all,
 *             however the threads interleave
 *   window 1  each thread increments a counter of its own, on a line of
 *             its own: ROUNDS * 8 increments each, no transfer
 *   window 2  the same on one line (false sharing): transfers as often as
 *             the threads' increments interleave, which the host decides
 *
 * Prints "rounds N" and "shared S" (the counter of window 0, 2 * ROUNDS).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "../../bench/model/window.h"

#define ROUNDS 2000

static struct {
	_Atomic long counter;
} __attribute__((aligned(64))) in_turn;

static struct {
	_Atomic long counter;
} __attribute__((aligned(64))) own[2];

static struct {
	_Atomic long counter[2];
} __attribute__((aligned(64))) false_shared;

static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	int me = (int)(long)arg;

	pthread_barrier_wait(&barrier);
	KPGO_MODEL_START(0);
	for (int i = 0; i < ROUNDS; i++) {
		long count;

		while ((count = atomic_load_explicit(&in_turn.counter,
						     memory_order_acquire)) % 2 != me)
			;
		atomic_store_explicit(&in_turn.counter, count + 1, memory_order_release);
	}
	KPGO_MODEL_END(0);

	pthread_barrier_wait(&barrier);
	KPGO_MODEL_START(1);
	for (int i = 0; i < ROUNDS * 8; i++)
		atomic_fetch_add_explicit(&own[me].counter, 1, memory_order_relaxed);
	KPGO_MODEL_END(1);

	pthread_barrier_wait(&barrier);
	KPGO_MODEL_START(2);
	for (int i = 0; i < ROUNDS * 8; i++)
		atomic_fetch_add_explicit(&false_shared.counter[me], 1, memory_order_relaxed);
	KPGO_MODEL_END(2);
	return NULL;
}

int main(void)
{
	pthread_t threads[2];

	if (pthread_barrier_init(&barrier, NULL, 2))
		return 1;
	for (long i = 0; i < 2; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	printf("rounds %d\nshared %ld\n", ROUNDS, (long)in_turn.counter);
	return 0;
}
