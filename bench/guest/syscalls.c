// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall-heavy microbenchmarks for comparing kernels under QEMU.
 *
 *   syscalls [SECONDS]  each runs for about SECONDS of guest time (default
 *                       0.5) and prints "<name> <operations per second>";
 *   syscalls --model    each runs a fixed number of operations inside a
 *                       window of the front-end model (bench/model/), after
 *                       an eighth as many to warm up, and prints "<name>
 *                       <operations> <guest nanoseconds>".
 *
 * Static, no dependencies.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "../model/window.h"

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

/* The window markers take constant ids: one pair of functions per id. */
#define WINDOW(id)							\
	static void start_##id(void) { KPGO_MODEL_START(id); }		\
	static void end_##id(void) { KPGO_MODEL_END(id); }
WINDOW(0) WINDOW(1) WINDOW(2) WINDOW(3) WINDOW(4) WINDOW(5)

static const struct benchmark {
	const char *name;
	void (*op)(void);
	/* About 20 million guest instructions with the baseline kernel. */
	long model_ops;
	void (*start)(void), (*end)(void);
} benchmarks[] = {
	{ "getpid", op_getpid, 100000, start_0, end_0 },
	{ "pipe_pingpong", op_pipe_pingpong, 3000, start_1, end_1 },
	{ "fork_exit_wait", op_fork_exit_wait, 150, start_2, end_2 },
	{ "open_read_close", op_open_read_close, 5000, start_3, end_3 },
	{ "mmap_munmap", op_mmap_munmap, 1500, start_4, end_4 },
	{ "write_devnull", op_write_devnull, 60000, start_5, end_5 },
};

static void run_model(const struct benchmark *b)
{
	double start;

	for (long i = 0; i < b->model_ops / 8; i++)
		b->op();
	start = seconds_now();
	b->start();
	for (long i = 0; i < b->model_ops; i++)
		b->op();
	b->end();
	printf("%s %ld %.0f\n", b->name, b->model_ops,
	       (seconds_now() - start) * 1e9);
	fflush(stdout);
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
	bool model = argc > 1 && !strcmp(argv[1], "--model");
	double seconds = argc > 1 && !model ? atof(argv[1]) : 0.5;
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

	for (size_t i = 0; i < sizeof(benchmarks) / sizeof(benchmarks[0]); i++)
		if (model)
			run_model(&benchmarks[i]);
		else
			run(benchmarks[i].name, benchmarks[i].op, seconds);

	close(ping[1]);
	waitpid(echo, NULL, 0);
	return 0;
}
