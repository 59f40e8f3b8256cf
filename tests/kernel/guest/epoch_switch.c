// SPDX-License-Identifier: GPL-2.0
/*
 * Epochs against a known workload, on 2 CPUs (tests/kernel/epochs.sh).
 *
 * epoch_switch SWITCHES OUTDIR RUN_FILE
 *
 * A worker pinned to CPU 0 reads RUN_FILE (a debugfs file whose every
 * read at offset 0 runs pgo_test_a_run() once, through pread64, without
 * sleeping) in a loop and counts each read that returned, in memory shared
 * with the switcher. The switcher, pinned to CPU 1, switches epochs
 * SWITCHES times (writes 1 to pgo/epoch), reading the worker's count just
 * before and just after each switch, and copies each epoch's profiles of
 * pgo_test_a and vmlinux to OUTDIR/a-K.profraw and OUTDIR/vmlinux-K.profraw.
 * Then it stops the worker and makes one last switch. It prints, per
 * switch, "switch K BEFORE AFTER": the epochs up to K hold at least the
 * BEFORE runs and at most the AFTER runs, whatever the interleaving.
 *
 * epoch_switch busy N
 *
 * Two processes, one per CPU, each try N switches at once, and it prints
 * "switched S busy B other O": switches done, refused with EBUSY (one was
 * under way), and failed otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	volatile long switched, busy, other;
	volatile long runs;
	volatile int stop;
	volatile int failed;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

static int switch_epoch(void)
{
	int fd = open("/sys/kernel/debug/pgo/epoch", O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* N switches at once from CPU 0 and CPU 1. */
static int contend(struct shared *shared, int n)
{
	pid_t other = fork();
	int i, status;

	pin(other == 0 ? 0 : 1);
	for (i = 0; i < n; i++) {
		int failed = switch_epoch();
		int error = errno;

		__atomic_add_fetch(failed == 0 ? &shared->switched :
				   error == EBUSY ? &shared->busy : &shared->other,
				   1, __ATOMIC_SEQ_CST);
	}
	if (other == 0)
		_exit(0);
	waitpid(other, &status, 0);
	printf("switched %ld busy %ld other %ld\n", shared->switched,
	       shared->busy, shared->other);
	return 0;
}

static int save_epoch(const char *dir, int k)
{
	char to[256];

	snprintf(to, sizeof(to), "%s/a-%d.profraw", dir, k);
	if (copy_file("/sys/kernel/debug/pgo/epochs/pgo_test_a.profraw", to))
		return -1;
	snprintf(to, sizeof(to), "%s/vmlinux-%d.profraw", dir, k);
	return copy_file("/sys/kernel/debug/pgo/epochs/vmlinux.profraw", to);
}

int main(int argc, char **argv)
{
	struct shared *shared;
	int switches, k, status;
	char buf[8];
	pid_t worker;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;
	if (argc == 3 && !strcmp(argv[1], "busy"))
		return contend(shared, atoi(argv[2]));
	if (argc != 4) {
		fprintf(stderr, "usage: epoch_switch SWITCHES OUTDIR RUN_FILE | busy N\n");
		return 2;
	}
	switches = atoi(argv[1]);
	worker = fork();
	if (worker == 0) {
		int fd = open(argv[3], O_RDONLY);

		pin(0);
		if (fd < 0) {
			shared->failed = 1;
			_exit(1);
		}
		while (!shared->stop) {
			if (pread(fd, buf, sizeof(buf), 0) != 4) {
				shared->failed = 1;
				_exit(1);
			}
			__atomic_add_fetch(&shared->runs, 1, __ATOMIC_SEQ_CST);
		}
		_exit(0);
	}
	pin(1);
	/* Let the worker start. */
	while (!shared->runs && !shared->failed)
		sched_yield();
	for (k = 1; k <= switches + 1; k++) {
		long before, after;

		if (k == switches + 1) {
			shared->stop = 1;
			waitpid(worker, &status, 0);
		}
		before = __atomic_load_n(&shared->runs, __ATOMIC_SEQ_CST);
		if (switch_epoch()) {
			printf("switch %d failed: %s\n", k, strerror(errno));
			return 1;
		}
		after = __atomic_load_n(&shared->runs, __ATOMIC_SEQ_CST);
		if (save_epoch(argv[2], k)) {
			printf("epoch %d: %s\n", k, strerror(errno));
			return 1;
		}
		printf("switch %d %ld %ld\n", k, before, after);
		/* Some runs in each epoch. */
		usleep(20000);
	}
	printf("runs %ld\n", shared->runs);
	printf("worker %s\n", shared->failed || !WIFEXITED(status) ||
	       WEXITSTATUS(status) ? "failed" : "ok");
	return 0;
}
