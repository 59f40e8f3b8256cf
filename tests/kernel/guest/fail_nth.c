// SPDX-License-Identifier: GPL-2.0
/*
 * Loads or unloads a module with the Nth fault-injection site of this
 * thread failing (/proc/thread-self/fail-nth), for the lifecycle tests:
 *
 *   fail_nth N load FILE.ko [PARAMS]    finit_module()
 *   fail_nth N load-as NAME FILE.ko     init_module() of FILE.ko renamed NAME
 *                                       (at most as long as its own name)
 *   fail_nth N unload NAME              delete_module(O_NONBLOCK)
 *   fail_nth N read FILE OUT            open() of FILE (a .profraw file,
 *                                       serialized at its open), then its
 *                                       bytes copied to OUT, nothing armed
 *
 * N = 0 injects nothing. load-as gives each attempt a module name never
 * loaded before, so that the first-load path (a new profile entry) is
 * what fails. Prints one line,
 *   fail_nth: nth=N op=load|load-as|unload|read result=0|-ERRNO fired=0|1
 * where fired=1 means the Nth site was reached and failed (fail-nth reads
 * 0 afterwards). Exit status: 0 if the operation succeeded, 1 if it
 * failed, 2 on a usage or setup error.
 */
#define _GNU_SOURCE /* memmem() */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "module_image.h"

/* Copies what is left of FROM to TO; 0, or -1 with errno set. */
static int copy(int from, int to)
{
	char bytes[4096];
	ssize_t n;

	while ((n = read(from, bytes, sizeof(bytes))) > 0) {
		if (write(to, bytes, n) != n)
			return -1;
	}
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	char buf[32] = "";
	char *image = NULL;
	size_t size = 0;
	const char *op;
	int ctl, fd = -1, out = -1, error;
	long nth, result;
	ssize_t n;

	if (argc < 4 || ((strcmp(argv[2], "load-as") == 0 || strcmp(argv[2], "read") == 0) &&
			 argc < 5)) {
		fprintf(stderr,
			"usage: %s N load FILE.ko [PARAMS] | N load-as NAME FILE.ko | N unload NAME | N read FILE OUT\n",
			argv[0]);
		return 2;
	}
	nth = strtol(argv[1], NULL, 10);
	op = argv[2];
	if (strcmp(op, "load") == 0) {
		fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[3]);
			return 2;
		}
	} else if (strcmp(op, "load-as") == 0) {
		image = load_image(argv[4], argv[3], &size);
		if (!image)
			return 2;
	} else if (strcmp(op, "read") == 0) {
		out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0) {
			perror(argv[4]);
			return 2;
		}
	} else if (strcmp(op, "unload") != 0) {
		fprintf(stderr, "unknown operation %s\n", op);
		return 2;
	}
	/* Opened first: the open allocates, and must not count. */
	ctl = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	snprintf(buf, sizeof(buf), "%ld", nth);
	if (nth > 0 && write(ctl, buf, strlen(buf)) < 0) {
		perror("write fail-nth");
		return 2;
	}
	if (out >= 0)
		result = open(argv[3], O_RDONLY | O_CLOEXEC);
	else if (fd >= 0)
		result = syscall(SYS_finit_module, fd, argc > 4 ? argv[4] : "", 0);
	else if (image)
		result = syscall(SYS_init_module, image, size, "");
	else
		result = syscall(SYS_delete_module, argv[3], O_NONBLOCK);
	error = errno;
	n = pread(ctl, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	/* Disarm whatever is left. */
	if (write(ctl, "0", 1) < 0)
		perror("write fail-nth");
	/* The bytes were serialized at the open: copied with nothing armed. */
	if (out >= 0 && result >= 0 && copy(result, out) < 0) {
		perror(argv[3]);
		return 2;
	}
	printf("fail_nth: nth=%ld op=%s result=%ld fired=%d\n", nth, op,
	       result < 0 ? -(long)error : 0L,
	       nth > 0 && n > 0 && strtol(buf, NULL, 10) == 0);
	return result < 0;
}
