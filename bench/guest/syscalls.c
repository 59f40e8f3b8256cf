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
 * The first six are what the profiling workload (scripts/workload.guest.sh)
 * trains; the rest are paths it never runs (bench/guest/untrained.txt,
 * checked against the profile by scripts/untrained-check), measured apart.
 * A benchmark whose system calls this kernel lacks (tinyconfig's test
 * kernel has no networking, signalfd, timerfd or inotify) is left out with
 * a line on stderr; "syscalls --list" prints every name, for the host to
 * check that a benchmark ran them all.
 *
 * Static, no dependencies.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
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

/*
 * The untrained benchmarks.  Each has a probe, run once before the workers
 * start (0, or the errno that says this kernel lacks the system call), and
 * a setup in each worker (0, or -1: the worker fails).
 */

/* Forks a process that echoes every byte read from IN to OUT until EOF. */
static int fork_echo(int in, int out)
{
	pid_t pid = fork();
	char c;

	if (pid)
		return pid < 0 ? -1 : 0;
	/* Only the worker may hold the other ends: EOF ends each echo. */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != in && fd != out)
			close(fd);
	while (read(in, &c, 1) == 1)
		if (write(out, &c, 1) != 1)
			break;
	_exit(0);
}

static int epoll_pipe[2], epoll_fd;

static int probe_epoll(void)
{
	int fd = epoll_create1(0);

	return fd < 0 ? errno : close(fd);
}

static int setup_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	epoll_fd = epoll_create1(0);
	if (epoll_fd < 0 || pipe(epoll_pipe))
		return -1;
	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, epoll_pipe[0], &ev);
}

static void op_epoll_pipe(void)
{
	struct epoll_event ev;
	char c = 'x';

	if (write(epoll_pipe[1], &c, 1) != 1 ||
	    epoll_wait(epoll_fd, &ev, 1, -1) != 1 ||
	    read(epoll_pipe[0], &c, 1) != 1)
		exit(1);
}

/*
 * A word in shared memory that the worker and its partner process hand
 * back and forth: 1 the worker's request, 0 the partner's answer, 3 stop.
 */
static _Atomic int *futex_word;
static pid_t futex_partner;

static long futex(_Atomic int *word, int op, int value)
{
	return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

static int probe_futex(void)
{
	int word = 0;

	return futex((_Atomic int *)&word, FUTEX_WAKE, 1) < 0 ? errno : 0;
}

static int setup_futex(void)
{
	int value;

	futex_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (futex_word == MAP_FAILED)
		return -1;
	futex_partner = fork();
	if (futex_partner)
		return futex_partner < 0 ? -1 : 0;
	for (;;) {
		while ((value = atomic_load(futex_word)) != 1) {
			if (value == 3)
				_exit(0);
			futex(futex_word, FUTEX_WAIT, value);
		}
		atomic_store(futex_word, 0);
		futex(futex_word, FUTEX_WAKE, 1);
	}
}

static void op_futex_pingpong(void)
{
	atomic_store(futex_word, 1);
	futex(futex_word, FUTEX_WAKE, 1);
	while (atomic_load(futex_word) == 1)
		futex(futex_word, FUTEX_WAIT, 1);
}

static int signal_fd;
static pid_t self;

static int probe_always(void)
{
	return 0;
}

static int probe_signalfd(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	fd = signalfd(-1, &set, 0);
	return fd < 0 ? errno : close(fd);
}

/* SIGUSR1 blocked, to be taken from a signalfd (as systemd takes its signals). */
static int setup_signalfd(void)
{
	sigset_t set;

	self = getpid();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	signal_fd = signalfd(-1, &set, 0);
	return signal_fd < 0 ? -1 : 0;
}

static void op_kill_signalfd(void)
{
	struct signalfd_siginfo info;

	if (syscall(SYS_kill, self, SIGUSR1) ||
	    read(signal_fd, &info, sizeof(info)) != sizeof(info) || info.ssi_signo != SIGUSR1)
		exit(1);
}

static int timer_fd;

static int probe_timerfd(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);

	return fd < 0 ? errno : close(fd);
}

static int setup_timerfd(void)
{
	timer_fd = timerfd_create(CLOCK_MONOTONIC, 0);
	return timer_fd < 0 ? -1 : 0;
}

/*
 * Arms a timer a second ahead, reads what remains of it, and disarms it:
 * the timer's path without waiting for it (a wait would be idle time,
 * which -icount does not count as instructions).
 */
static void op_timerfd_arm(void)
{
	struct itimerspec when = { .it_value = { .tv_sec = 1 } }, left, off = { 0 };

	/*
	 * Armed, it has time left: all of the second when the clock has not
	 * moved since (a jiffies clock source: a model boot of several vCPUs,
	 * whose TSC check fails).
	 */
	if (timerfd_settime(timer_fd, 0, &when, NULL) ||
	    timerfd_gettime(timer_fd, &left) ||
	    (!left.it_value.tv_sec && !left.it_value.tv_nsec) ||
	    timerfd_settime(timer_fd, 0, &off, NULL))
		exit(1);
}

/* One end of a stream socket whose other end an echo process holds. */
static int unix_end, tcp_end;

static void pingpong(int fd)
{
	char c = 'x';

	if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		exit(1);
}

static int probe_unix(void)
{
	int pair[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair))
		return errno;
	close(pair[0]);
	return close(pair[1]);
}

static int setup_unix(void)
{
	int pair[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) || fork_echo(pair[1], pair[1]))
		return -1;
	unix_end = pair[0];
	return close(pair[1]);
}

static void op_unix_pingpong(void)
{
	pingpong(unix_end);
}

/* Also brings the loopback interface up, which nothing else in the guest does. */
static int probe_tcp(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_STREAM, 0), error = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		error = errno;
	ifr.ifr_flags |= IFF_UP;
	if (!error && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		error = errno;
	close(fd);
	return error;
}

static int setup_tcp(void)
{
	struct sockaddr_in address = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t length = sizeof(address);
	int listener = socket(AF_INET, SOCK_STREAM, 0), other, one = 1;

	tcp_end = socket(AF_INET, SOCK_STREAM, 0);
	if (listener < 0 || tcp_end < 0 ||
	    bind(listener, (struct sockaddr *)&address, sizeof(address)) ||
	    listen(listener, 1) ||
	    getsockname(listener, (struct sockaddr *)&address, &length) ||
	    connect(tcp_end, (struct sockaddr *)&address, sizeof(address)))
		return -1;
	other = accept(listener, NULL, NULL);
	/* One byte each way: no Nagle delay. */
	if (other < 0 || close(listener) ||
	    setsockopt(tcp_end, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(other, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    fork_echo(other, other))
		return -1;
	return close(other);
}

static void op_tcp_pingpong(void)
{
	pingpong(tcp_end);
}

static int splice_pipe[2], splice_file;

static int setup_splice(void)
{
	splice_file = open("/tmp/bench-file", O_RDONLY);
	return splice_file < 0 ? -1 : pipe(splice_pipe);
}

/* The benchmark file into a pipe, and the pipe into /dev/null. */
static void op_splice_devnull(void)
{
	loff_t offset = 0;

	if (splice(splice_file, &offset, splice_pipe[1], NULL, 20, 0) != 20 ||
	    splice(splice_pipe[0], NULL, devnull, NULL, 20, 0) != 20)
		exit(1);
}

static int inotify_fd, watched_fd;

static int probe_inotify(void)
{
	int fd = inotify_init1(0);

	return fd < 0 ? errno : close(fd);
}

static int setup_inotify(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/bench-watched-%d", (int)getpid());
	watched_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	inotify_fd = inotify_init1(0);
	if (watched_fd < 0 || inotify_fd < 0 ||
	    inotify_add_watch(inotify_fd, path, IN_MODIFY) < 0)
		return -1;
	return 0;
}

/* A write to a watched file, and the event it queued read back. */
static void op_inotify_modify(void)
{
	char events[sizeof(struct inotify_event) + 256];

	if (pwrite(watched_fd, "x", 1, 0) != 1 ||
	    read(inotify_fd, events, sizeof(events)) < (ssize_t)sizeof(struct inotify_event))
		exit(1);
}

static int setup_nothing(void)
{
	return 0;
}

/* The window markers take constant ids: one pair of functions per id. */
#define WINDOW(id)							\
	static void start_##id(void) { KPGO_MODEL_START(id); }		\
	static void end_##id(void) { KPGO_MODEL_END(id); }
WINDOW(0) WINDOW(1) WINDOW(2) WINDOW(3) WINDOW(4) WINDOW(5) WINDOW(6)
WINDOW(7) WINDOW(8) WINDOW(9) WINDOW(10) WINDOW(11) WINDOW(12) WINDOW(13)

static const struct benchmark {
	const char *name;
	void (*op)(void);
	/* About 20 million guest instructions with the baseline kernel. */
	long model_ops;
	void (*start)(void), (*end)(void);
	int (*probe)(void), (*setup)(void);
} benchmarks[] = {
	/* Trained: the profiling workload runs these paths. */
	{ "getpid", op_getpid, 100000, start_0, end_0, probe_always, setup_nothing },
	{ "pipe_pingpong", op_pipe_pingpong, 3000, start_1, end_1, probe_always, setup_nothing },
	{ "fork_exit_wait", op_fork_exit_wait, 150, start_2, end_2, probe_always, setup_nothing },
	{ "open_read_close", op_open_read_close, 5000, start_3, end_3, probe_always, setup_nothing },
	{ "mmap_munmap", op_mmap_munmap, 1500, start_4, end_4, probe_always, setup_nothing },
	{ "write_devnull", op_write_devnull, 60000, start_5, end_5, probe_always, setup_nothing },
	/* Untrained (bench/guest/untrained.txt). */
	{ "epoll_pipe", op_epoll_pipe, 10000, start_6, end_6, probe_epoll, setup_epoll },
	{ "futex_pingpong", op_futex_pingpong, 2000, start_7, end_7, probe_futex, setup_futex },
	{ "kill_signalfd", op_kill_signalfd, 9000, start_8, end_8, probe_signalfd, setup_signalfd },
	{ "timerfd_arm", op_timerfd_arm, 13000, start_9, end_9, probe_timerfd, setup_timerfd },
	{ "unix_pingpong", op_unix_pingpong, 1400, start_10, end_10, probe_unix, setup_unix },
	{ "tcp_pingpong", op_tcp_pingpong, 900, start_11, end_11, probe_tcp, setup_tcp },
	{ "splice_devnull", op_splice_devnull, 11000, start_12, end_12, probe_always, setup_splice },
	{ "inotify_modify", op_inotify_modify, 7000, start_13, end_13, probe_inotify, setup_inotify },
};

#define BENCHMARKS (sizeof(benchmarks) / sizeof(benchmarks[0]))
#define MAX_CPUS 64

/*
 * Shared by the workers (one per CPU): the start barrier of every
 * benchmark, and each worker's result, operations and seconds.
 */
static struct shared {
	pthread_barrier_t start;
	bool available[BENCHMARKS];
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

/* One CPU's worker: every benchmark, from its own process on CPU. */
static int worker(int cpu, bool model, double seconds)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || pipe(ping) || pipe(pong) || fork_echo(ping[0], pong[1]))
		return 1;
	close(ping[0]);
	close(pong[1]);
	for (size_t i = 0; i < BENCHMARKS; i++)
		if (shared->available[i] && benchmarks[i].setup())
			return 1;

	for (size_t i = 0; i < BENCHMARKS; i++)
		if (!shared->available[i])
			continue;
		else if (model)
			run_model(&benchmarks[i], cpu);
		else
			run(&benchmarks[i], cpu, seconds);

	/* EOF ends the echo processes; the futex partner is told to stop. */
	close(ping[1]);
	close(unix_end);
	close(tcp_end);
	if (futex_word && futex_word != MAP_FAILED) {
		atomic_store(futex_word, 3);
		futex(futex_word, FUTEX_WAKE, 1);
	}
	while (wait(NULL) > 0)
		;
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
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < BENCHMARKS; i++)
			puts(benchmarks[i].name);
		return 0;
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
	for (size_t i = 0; i < BENCHMARKS; i++) {
		int error = benchmarks[i].probe();

		shared->available[i] = !error;
		if (error == ENOSYS || error == EAFNOSUPPORT || error == ENODEV)
			fprintf(stderr, "syscalls: %s: not in this kernel (%s): left out\n",
				benchmarks[i].name, strerror(error));
		else if (error) {
			fprintf(stderr, "syscalls: %s: %s\n", benchmarks[i].name, strerror(error));
			return 1;
		}
	}
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

		if (!shared->available[i])
			continue;
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
