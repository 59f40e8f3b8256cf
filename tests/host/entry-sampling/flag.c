// SPDX-License-Identifier: GPL-2.0
/*
 * The burst flag of the entry-sampling test (thread-local on the host,
 * per-CPU in the kernel), compiled without instrumentation.
 * KPGO_BURST=always sets it from the start (main's entry included),
 * never leaves it clear, and N sets it for one round in every N.
 * overridden() here replaces program.c's weak one.
 */
#include <stdlib.h>
#include <string.h>

_Thread_local unsigned char kpgo_entry_burst;
static int every, round_number;

__attribute__((constructor)) static void burst_start(void)
{
	const char *mode = getenv("KPGO_BURST");

	if (!mode || !strcmp(mode, "always"))
		kpgo_entry_burst = 1;
	else if (strcmp(mode, "never"))
		every = atoi(mode);
}

void burst_tick(void)
{
	if (every)
		kpgo_entry_burst = round_number++ % every == 0;
}

/* Overrides program.c's weak overridden(): what every version must call. */
int overridden(int x)
{
	return 1000 * x;
}
