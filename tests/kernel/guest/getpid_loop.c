// SPDX-License-Identifier: GPL-2.0
/*
 * Makes exactly N getpid system calls (argv[1]), so that the kernel's
 * getpid handler count can be checked against N.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	return 0;
}
