// SPDX-License-Identifier: GPL-2.0
/*
 * Mutant for selftest.sh: the program's stdout (threads/'s tally) is lost,
 * as if the program had stopped before or while printing it: nothing at all
 * (MUTANT_TALLY=silent), or only the first 16 lines (MUTANT_TALLY=short:
 * the indirect-call lines and 8 entry counts, no memop line). The runtime is
 * compiler-rt's, unchanged, so the profile is right: only the checker's
 * demand for a whole tally can fail the run.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHORT_TALLY_LINES 16

static int lines_left;

/* Passes the first lines_left lines to fd 1, swallows the rest. */
static ssize_t write_first_lines(void *cookie, const char *buf, size_t size)
{
	size_t n = 0;

	(void)cookie;
	while (n < size && lines_left > 0)
		if (buf[n++] == '\n')
			lines_left--;
	if (n && write(STDOUT_FILENO, buf, n) < 0)
		return -1;
	return (ssize_t)size;
}

__attribute__((constructor)) static void cut_tally(void)
{
	const char *mode = getenv("MUTANT_TALLY");
	cookie_io_functions_t io = { .write = write_first_lines };
	FILE *cut;

	lines_left = mode && !strcmp(mode, "short") ? SHORT_TALLY_LINES : 0;
	cut = fopencookie(NULL, "w", io);
	if (cut)
		stdout = cut;
}
