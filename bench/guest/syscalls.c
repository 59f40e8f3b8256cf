// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall-heavy microbenchmarks for comparing kernels under QEMU: each
 * runs for about BENCH_SECONDS of guest time (argv[1], default 0.5) and
 * prints "<name> <operations per second>". Static, no dependencies.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void op_getpid(void)
{
	syscall(SYS_getpid);
}

static int ping[2], pong[2];

static void op_pipe_pingpong(void)
{
	char c = 'x';

	if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
		exit(1);
}

static void op_fork_exit_wait(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
}

static void op_open_read_close(void)
{
	char buf[64];
	int fd = open("/tmp/bench-file", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		exit(1);
	close(fd);
}

static void op_mmap_munmap(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	*(volatile char *)p = 1;
	munmap(p, 4096);
}

static int devnull;

static void op_write_devnull(void)
{
	if (write(devnull, "0123456789abcdef", 16) != 16)
		exit(1);
}

static void run(const char *name, void (*op)(void), double seconds)
{
	double start = seconds_now(), now;
	long n = 0;

	do {
		for (int i = 0; i < 64; i++)
			op();
		n += 64;
		now = seconds_now();
	} while (now - start < seconds);
	printf("%s %.0f\n", name, n / (now - start));
	fflush(stdout);
}

/* The other end of the pipe ping-pong. */
static void echo_pongs(void)
{
	char c;

	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	_exit(0);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	int fd = open("/tmp/bench-file", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t echo;

	if (fd < 0 || write(fd, "kpgo benchmark file\n", 20) != 20)
		return 1;
	close(fd);
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || pipe(ping) || pipe(pong))
		return 1;
	echo = fork();
	if (echo == 0) {
		/* Only the parent writes pings: EOF ends the echo. */
		close(ping[1]);
		echo_pongs();
	}
	close(ping[0]);

	run("getpid", op_getpid, seconds);
	run("pipe_pingpong", op_pipe_pingpong, seconds);
	run("fork_exit_wait", op_fork_exit_wait, seconds);
	run("open_read_close", op_open_read_close, seconds);
	run("mmap_munmap", op_mmap_munmap, seconds);
	run("write_devnull", op_write_devnull, seconds);

	close(ping[1]);
	waitpid(echo, NULL, 0);
	return 0;
}
