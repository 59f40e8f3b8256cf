// SPDX-License-Identifier: GPL-2.0
/*
 * Resets in a loop while pgo_test_race's thread calls on CPU 0, for
 * tests/kernel/scale.sh:
 *
 *   reset_race ROUNDS DIR
 *
 * On CPU 1, ROUNDS times: reads the thread's call count (c0), resets the
 * module (module:pgo_test_race), reads the count again (c1), copies the
 * module's profile to DIR/race-<round>.profraw, and reads the count a
 * third time (c2); prints "round=R c0=N c1=N c2=N". The host compares the
 * profile's counts with the calls made since the reset began (c2 - c0).
 */
#define _GNU_SOURCE /* CPU_SET */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEBUGFS "/sys/kernel/debug"

static long long calls(void)
{
	char text[32] = "";
	int fd = open(DEBUGFS "/pgo_test_race/calls", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtoll(text, NULL, 10) : -1;
}

static int copy(const char *from, const char *to)
{
	static char buf[1 << 16];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const char command[] = "module:pgo_test_race\n";
	long rounds = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	long long c0, c1, c2;
	char path[256];
	cpu_set_t cpus;
	long round;
	int fd;

	if (rounds <= 0) {
		fprintf(stderr, "usage: %s ROUNDS DIR\n", argv[0]);
		return 2;
	}
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		perror("sched_setaffinity");
		return 1;
	}
	for (round = 0; round < rounds; round++) {
		c0 = calls();
		fd = open(DEBUGFS "/pgo/reset", O_WRONLY);
		if (fd < 0 || write(fd, command, strlen(command)) != (ssize_t)strlen(command)) {
			perror("reset");
			return 1;
		}
		close(fd);
		c1 = calls();
		snprintf(path, sizeof(path), "%s/race-%ld.profraw", argv[2], round);
		if (copy(DEBUGFS "/pgo/pgo_test_race.profraw", path)) {
			perror(path);
			return 1;
		}
		c2 = calls();
		printf("round=%ld c0=%lld c1=%lld c2=%lld\n", round, c0, c1, c2);
	}
	return 0;
}
