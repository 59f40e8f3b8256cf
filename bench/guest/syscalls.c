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
 * With --cpus N first, the same on each of CPUs 0 to N-1 at once: a
 * process pinned to each (with its own pipes, echo process and files),
 * which start every benchmark together; the lines then give the sum over
 * the CPUs of operations per second, or of operations (and the longest
 * CPU's nanoseconds).  The model counts each CPU's windows on its own.
 *
 * Static, no dependencies.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

#define BENCHMARKS (sizeof(benchmarks) / sizeof(benchmarks[0]))
#define MAX_CPUS 64

/*
 * Shared by the workers (one per CPU): the start barrier of every
 * benchmark, and each worker's result, operations and seconds.
 */
static struct shared {
	pthread_barrier_t start;
	struct {
		double ops, seconds;
	} result[BENCHMARKS][MAX_CPUS];
} *shared;
static int cpus = 1;

/*
 * Every worker waits for the others before each benchmark, asleep: under
 * -icount QEMU runs the vCPUs in turn, and a vCPU that spun would burn its
 * turn and the guest's time.
 */
static void barrier(void)
{
	pthread_barrier_wait(&shared->start);
}

static void run_model(const struct benchmark *b, int cpu)
{
	double start;

	for (long i = 0; i < b->model_ops / 8; i++)
		b->op();
	barrier();
	start = seconds_now();
	b->start();
	for (long i = 0; i < b->model_ops; i++)
		b->op();
	b->end();
	shared->result[b - benchmarks][cpu].ops = b->model_ops;
	shared->result[b - benchmarks][cpu].seconds = seconds_now() - start;
}

static void run(const struct benchmark *b, int cpu, double seconds)
{
	double start, now;
	long n = 0;

	barrier();
	start = seconds_now();
	do {
		for (int i = 0; i < 64; i++)
			b->op();
		n += 64;
		now = seconds_now();
	} while (now - start < seconds);
	shared->result[b - benchmarks][cpu].ops = n;
	shared->result[b - benchmarks][cpu].seconds = now - start;
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

/* One CPU's worker: every benchmark, from its own process on CPU. */
static int worker(int cpu, bool model, double seconds)
{
	cpu_set_t set;
	pid_t echo;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || pipe(ping) || pipe(pong))
		return 1;
	echo = fork();
	if (echo == 0) {
		/* Only the worker writes pings: EOF ends the echo. */
		close(ping[1]);
		echo_pongs();
	}
	close(ping[0]);

	for (size_t i = 0; i < BENCHMARKS; i++)
		if (model)
			run_model(&benchmarks[i], cpu);
		else
			run(&benchmarks[i], cpu, seconds);

	close(ping[1]);
	waitpid(echo, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	int fd = open("/tmp/bench-file", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pthread_barrierattr_t attr;
	pid_t workers[MAX_CPUS];
	double seconds = 0.5;
	bool model = false;
	int status;

	if (argc > 2 && !strcmp(argv[1], "--cpus")) {
		cpus = atoi(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (cpus < 1 || cpus > MAX_CPUS) {
		fprintf(stderr, "syscalls: --cpus 1 to %d\n", MAX_CPUS);
		return 2;
	}
	model = argc > 1 && !strcmp(argv[1], "--model");
	if (argc > 1 && !model)
		seconds = atof(argv[1]);
	if (fd < 0 || write(fd, "kpgo benchmark file\n", 20) != 20)
		return 1;
	close(fd);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || pthread_barrierattr_init(&attr) ||
	    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
	    pthread_barrier_init(&shared->start, &attr, cpus))
		return 1;
	for (int cpu = 0; cpu < cpus; cpu++) {
		workers[cpu] = fork();
		if (workers[cpu] == 0)
			_exit(worker(cpu, model, seconds));
		if (workers[cpu] < 0)
			return 1;
	}
	/* A worker that fails would leave the others at a barrier: stop them. */
	for (int done = 0; done < cpus; done++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			for (int cpu = 0; cpu < cpus; cpu++)
				kill(workers[cpu], SIGKILL);
			fprintf(stderr, "syscalls: a worker failed\n");
			return 1;
		}

	for (size_t i = 0; i < BENCHMARKS; i++) {
		double ops = 0, rate = 0, longest = 0;

		for (int cpu = 0; cpu < cpus; cpu++) {
			ops += shared->result[i][cpu].ops;
			rate += shared->result[i][cpu].ops / shared->result[i][cpu].seconds;
			if (shared->result[i][cpu].seconds > longest)
				longest = shared->result[i][cpu].seconds;
		}
		if (model)
			printf("%s %.0f %.0f\n", benchmarks[i].name, ops, longest * 1e9);
		else
			printf("%s %.0f\n", benchmarks[i].name, rate);
	}
	return 0;
}
