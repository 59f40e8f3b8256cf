// SPDX-License-Identifier: GPL-2.0
/*
 * Module loads and unloads in a loop, for tests/kernel/scale.sh, with what
 * they cost:
 *
 *   module_cycles cycles N NAME FILE.ko
 *       N loads (finit_module) and unloads of FILE.ko, module NAME; a
 *       memory sample after cycle 1, 10, 100, 1000, every 1000th and N.
 *   module_cycles names N PREFIX FILE.ko
 *       N loads, each unloaded, of FILE.ko renamed PREFIX<number> (at most
 *       as long as the module's own name): N names never loaded before;
 *       a memory sample before the first and after cycle 1, N/2 and N.
 *   module_cycles load PREFIX FIRST LAST FILE.ko
 *   module_cycles unload PREFIX FIRST LAST
 *       Loads FILE.ko renamed PREFIX<i> (three digits) for i = FIRST to
 *       LAST, or unloads those: many modules of one build.
 *   module_cycles latency N NAME FILE.ko READERS [spin]
 *       N loads and unloads of FILE.ko, each timed, while READERS
 *       processes (SCHED_IDLE, so that they take no CPU the loader wants)
 *       read every file of /sys/kernel/debug/pgo/ in a loop; then the
 *       median and worst load and unload times and the readers' reads.
 *       With "spin", the READERS spin in user mode instead, reading
 *       nothing: the reference, what SCHED_IDLE tasks cost the loader
 *       through the scheduler alone (EEVDF still gives them their weight's
 *       share, in slices that end at a tick).
 *   module_cycles paused PAUSES CYCLES FILE.ko
 *       Whether a module load or unload waits for a profile read, without
 *       timing either: a reader on CPU 1 opens pgo/vmlinux.profraw (which
 *       serializes it) in a loop; a SCHED_FIFO task on CPU 1, woken at a
 *       random moment, takes the CPU from it and keeps it (RT throttling
 *       and CPU 1's fair server off meanwhile). Without kernel preemption
 *       the reader gives the CPU up where it reschedules, sleeps or
 *       returns to user mode, and stays there. When its stack
 *       (/proc/PID/stack) is inside kpgo's serialization (a frame of
 *       profile::writer, which reschedules every 64 KiB), CYCLES
 *       loads and unloads of FILE.ko under new names (each loaded twice)
 *       run on CPU 0, then the reader is let go. The SCHED_FIFO task lets
 *       go by itself after PAUSE_LIMIT_S, and then records the loader's
 *       stack: a load that waits for the reader finishes only after that.
 *       One line per pause (PAUSES of them): "pause=K cycles=N
 *       done_while_paused=M reader_opens_meanwhile=O expired=0|1
 *       frame=SYMBOL loader_stack=SYMBOL,...|-", then a summary
 *       "pauses=P attempts=A seed=S opens=N failed=F opens_after=N".
 *
 * A memory sample is one line "cycle=K slab_kb=N vmalloc_kb=N" (from
 * /proc/meminfo) followed by the words of the runtime line of pgo/stats.
 * Exit status 0 when every load and unload succeeded (and, for latency,
 * the readers ran), 1 otherwise, 2 on a usage error.
 */
#define _GNU_SOURCE /* memmem() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "module_image.h"

#define PGO "/sys/kernel/debug/pgo"

static long meminfo_kb(const char *key)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			kb = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static void sample(long cycle)
{
	char line[1024] = "";
	FILE *f = fopen(PGO "/stats", "r");

	if (!f || !fgets(line, sizeof(line), f))
		strcpy(line, "runtime stats=unreadable\n");
	if (f)
		fclose(f);
	printf("cycle=%ld slab_kb=%ld vmalloc_kb=%ld %s", cycle,
	       meminfo_kb("Slab:"), meminfo_kb("VmallocUsed:"),
	       strncmp(line, "runtime ", 8) ? line : line + 8);
	fflush(stdout);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int load_file(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	long result;

	if (fd < 0) {
		perror(file);
		return -1;
	}
	result = syscall(SYS_finit_module, fd, "", 0);
	if (result < 0)
		fprintf(stderr, "finit_module %s: %s\n", file, strerror(errno));
	close(fd);
	return result < 0 ? -1 : 0;
}

static int unload(const char *name)
{
	if (syscall(SYS_delete_module, name, O_NONBLOCK) == 0)
		return 0;
	fprintf(stderr, "delete_module %s: %s\n", name, strerror(errno));
	return -1;
}

static int cycles(long n, const char *name, const char *file)
{
	long i;

	for (i = 1; i <= n; i++) {
		if (load_file(file) || unload(name))
			return 1;
		if (i == 1 || i == 10 || i == 100 || i % 1000 == 0 || i == n)
			sample(i);
	}
	return 0;
}

static int load_as(const char *name, const char *file)
{
	size_t size;
	char *image = load_image(file, name, &size);
	long result;

	if (!image)
		return -1;
	result = syscall(SYS_init_module, image, size, "");
	if (result)
		fprintf(stderr, "init_module %s: %s\n", name, strerror(errno));
	free(image);
	return result ? -1 : 0;
}

static int names(long n, const char *prefix, const char *file)
{
	char name[64];
	long i;

	sample(0);
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "%s%ld", prefix, i);
		if (load_as(name, file) || unload(name))
			return 1;
		if (i == 1 || i == n / 2 || i == n)
			sample(i);
	}
	return 0;
}

/* Loads (FILE set) or unloads PREFIX<FIRST> to PREFIX<LAST>. */
static int many(const char *prefix, long first, long last, const char *file)
{
	char name[64];
	long i;

	for (i = first; i <= last; i++) {
		snprintf(name, sizeof(name), "%s%03ld", prefix, i);
		if (file ? load_as(name, file) : unload(name))
			return 1;
	}
	return 0;
}

/* A reader's tallies, in memory shared with the parent. */
struct tally {
	long reads, failed;
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static char file_names[4096][80];

/*
 * Adds the files of the directory SUB of pgo/ ("" for pgo/ itself) to
 * file_names, as paths relative to pgo/; the next free index, or -1.
 */
static int list_files(int dir, const char *sub, int count)
{
	int fd = *sub ? openat(dir, sub, O_RDONLY | O_DIRECTORY) : dup(dir);
	DIR *list = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!list)
		return -1;
	while ((de = readdir(list)) && count < 4096) {
		if (de->d_name[0] == '.' || de->d_type == DT_DIR ||
		    !strcmp(de->d_name, "reset"))
			continue;
		snprintf(file_names[count++], sizeof(file_names[0]), "%s%s%s", sub,
			 *sub ? "/" : "", de->d_name);
	}
	closedir(list);
	return count;
}

/*
 * Reads every file of pgo/ and pgo/live/ in turn until SIGTERM. The names
 * are listed once and each file is opened relative to the directory: a
 * path walk through /sys (kernfs) would take kernfs's lock, which a module
 * unload takes too (its sysfs files), and the test is of kpgo's locks. A
 * live file of a module that is not loaded does not open (ENODEV), which
 * is no failure.
 */
static void reader(struct tally *tally, int spin)
{
	static char buf[65536];
	struct sched_param none = { 0 };
	int count, dir, fd, i;
	ssize_t n;

	signal(SIGTERM, on_term);
	/*
	 * SCHED_IDLE: the readers take only CPU time the loader does not
	 * want, so that its latency shows what they make it wait for (a lock,
	 * an RCU grace period), not its share of the CPU.
	 */
	if (sched_setscheduler(0, SCHED_IDLE, &none))
		tally->failed++;
	while (spin && !stop)
		tally->reads++;
	if (spin)
		_exit(0);
	dir = open(PGO, O_RDONLY | O_DIRECTORY);
	count = dir < 0 ? -1 : list_files(dir, "", 0);
	count = count < 0 ? -1 : list_files(dir, "live", count);
	if (count <= 0) {
		tally->failed++;
		count = 0;
	}
	while (!stop && count) {
		for (i = 0; i < count && !stop; i++) {
			fd = openat(dir, file_names[i], O_RDONLY);
			if (fd < 0) {
				if (errno != ENODEV)
					tally->failed++;
				continue;
			}
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				;
			if (n < 0)
				tally->failed++;
			else
				tally->reads++;
			close(fd);
		}
	}
	_exit(0);
}

/* How long the reader may stay paused: a load or unload takes milliseconds. */
#define PAUSE_LIMIT_S 10

/* Shared between the parent, the reader and the task that pauses it. */
struct pause {
	int holding; /* the pauser has CPU 1 */
	int release; /* the parent lets it go */
	int expired; /* the pauser let go at its PAUSE_LIMIT_S */
	long opens, failed; /* the reader's */
	pid_t loader; /* whose stack the pauser records when it expires */
	char loader_stack[2048]; /* its symbols, comma separated */
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Opens (serializes) vmlinux's profile in a loop, on CPU 1. */
static void paused_reader(struct pause *p)
{
	int dir, fd;

	signal(SIGTERM, on_term);
	if (pin(1))
		__atomic_add_fetch(&p->failed, 1, __ATOMIC_SEQ_CST);
	dir = open(PGO, O_RDONLY | O_DIRECTORY);
	while (!stop && dir >= 0) {
		fd = openat(dir, "vmlinux.profraw", O_RDONLY);
		if (fd < 0) {
			__atomic_add_fetch(&p->failed, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		__atomic_add_fetch(&p->opens, 1, __ATOMIC_SEQ_CST);
		close(fd);
	}
	_exit(dir < 0);
}

/*
 * The symbols of the kernel stack of PID (/proc/PID/stack), innermost
 * first, comma separated into OUT; only the first that contains MATCH,
 * if MATCH is set. Returns how many were written.
 */
static int stack_symbols(pid_t pid, const char *match, char *out, size_t len)
{
	char path[64], line[1024], *name;
	size_t used = 0;
	int count = 0;
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && !(match && count)) {
		name = strchr(line, ' ');
		if (!name || (match && !strstr(name, match)))
			continue;
		name++;
		name[strcspn(name, " +\n")] = 0;
		used += snprintf(out + used, len - used, "%s%s", count ? "," : "", name);
		count++;
		if (used >= len)
			break;
	}
	if (f)
		fclose(f);
	return count;
}

/*
 * On CPU 1 at SCHED_FIFO: for each byte on WAKE, spins (in user mode, so
 * that RCU sees CPU 1 quiescent) until the parent releases it or
 * PAUSE_LIMIT_S passes.
 */
static void pauser(struct pause *p, int wake)
{
	struct sched_param fifo = { .sched_priority = 50 };
	double deadline;
	char byte;

	if (pin(1) || sched_setscheduler(0, SCHED_FIFO, &fifo))
		_exit(1);
	while (read(wake, &byte, 1) == 1) {
		deadline = now_us() + PAUSE_LIMIT_S * 1e6;
		__atomic_store_n(&p->holding, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&p->release, __ATOMIC_SEQ_CST)) {
			if (now_us() > deadline) {
				stack_symbols(p->loader, NULL, p->loader_stack,
					      sizeof(p->loader_stack));
				__atomic_store_n(&p->expired, 1, __ATOMIC_SEQ_CST);
				break;
			}
		}
		__atomic_store_n(&p->holding, 0, __ATOMIC_SEQ_CST);
	}
	_exit(0);
}

/* Waits (at most PAUSE_LIMIT_S twice) until *flag is WANT. */
static int wait_flag(int *flag, int want)
{
	double deadline = now_us() + 2 * PAUSE_LIMIT_S * 1e6;

	while (__atomic_load_n(flag, __ATOMIC_SEQ_CST) != want) {
		if (now_us() > deadline)
			return -1;
		usleep(100);
	}
	return 0;
}

/* Writes TEXT to PATH, after reading what was there into OLD. */
static int set_knob(const char *path, const char *text, char *old, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(old, len, f);

	if (f)
		fclose(f);
	f = ok ? fopen(path, "w") : NULL;
	ok = f && fputs(text, f) >= 0;
	if (f && fclose(f))
		ok = 0;
	if (!ok)
		fprintf(stderr, "%s: cannot set to %s", path, text);
	return ok ? 0 : -1;
}

#define RT_RUNTIME "/proc/sys/kernel/sched_rt_runtime_us"
#define FAIR_SERVER "/sys/kernel/debug/sched/fair_server/cpu1/runtime"

static int paused(long pauses, long n, const char *file)
{
	char old_rt[32], old_fair[32], frame[512], name[64];
	struct pause *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long caught = 0, attempts = 0, i, done, opens = 0, settled;
	pid_t reader_pid = -1, pauser_pid = -1;
	unsigned int seed = getpid();
	int wake[2] = { -1, -1 }, status = 0, restored;

	if (p == MAP_FAILED || pin(0))
		return 1;
	p->loader = getpid();
	if (set_knob(RT_RUNTIME, "-1\n", old_rt, sizeof(old_rt)))
		return 1;
	if (set_knob(FAIR_SERVER, "0\n", old_fair, sizeof(old_fair))) {
		set_knob(RT_RUNTIME, old_rt, old_rt, sizeof(old_rt));
		return 1;
	}
	reader_pid = fork();
	if (reader_pid == 0)
		paused_reader(p);
	/* The pipe after the reader: a pauser that could not start is EPIPE. */
	if (reader_pid < 0 || pipe(wake)) {
		status = 1;
		goto out;
	}
	pauser_pid = fork();
	if (pauser_pid == 0) {
		close(wake[1]);
		pauser(p, wake[0]);
	}
	close(wake[0]);
	if (pauser_pid < 0) {
		status = 1;
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	srand(seed);
	for (settled = 0; settled < 2 * PAUSE_LIMIT_S * 1000 &&
	     __atomic_load_n(&p->opens, __ATOMIC_SEQ_CST) < 2; settled++)
		usleep(1000);
	if (__atomic_load_n(&p->opens, __ATOMIC_SEQ_CST) < 2) {
		fprintf(stderr, "the reader cannot open " PGO "/vmlinux.profraw\n");
		status = 1;
	}
	while (caught < pauses && attempts < 100 * pauses && !status) {
		attempts++;
		usleep(rand() % 20000);
		__atomic_store_n(&p->release, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&p->expired, 0, __ATOMIC_SEQ_CST);
		if (write(wake[1], "", 1) != 1 || wait_flag(&p->holding, 1)) {
			status = 1;
			break;
		}
		if (stack_symbols(reader_pid, "7profile6writer", frame, sizeof(frame))) {
			caught++;
			opens = __atomic_load_n(&p->opens, __ATOMIC_SEQ_CST);
			done = 0;
			for (i = 0; i < n; i++) {
				snprintf(name, sizeof(name), "pp%ld_%ld", caught, i / 2);
				if (load_as(name, file) || unload(name)) {
					status = 1;
					break;
				}
				if (!__atomic_load_n(&p->expired, __ATOMIC_SEQ_CST))
					done++;
			}
			printf("pause=%ld cycles=%ld done_while_paused=%ld reader_opens_meanwhile=%ld expired=%d frame=%s loader_stack=%s\n",
			       caught, n, done,
			       __atomic_load_n(&p->opens, __ATOMIC_SEQ_CST) - opens,
			       __atomic_load_n(&p->expired, __ATOMIC_SEQ_CST), frame,
			       __atomic_load_n(&p->expired, __ATOMIC_SEQ_CST) ?
			       p->loader_stack : "-");
			fflush(stdout);
		}
		__atomic_store_n(&p->release, 1, __ATOMIC_SEQ_CST);
		if (wait_flag(&p->holding, 0))
			status = 1;
	}
	/* Let go, the reader finishes the open it was held in. */
	opens = __atomic_load_n(&p->opens, __ATOMIC_SEQ_CST);
	for (settled = 0; settled < 2 * PAUSE_LIMIT_S * 1000 &&
	     __atomic_load_n(&p->opens, __ATOMIC_SEQ_CST) == opens; settled++)
		usleep(1000);
out:
	if (wake[1] >= 0)
		close(wake[1]);
	if (reader_pid > 0) {
		kill(reader_pid, SIGTERM);
		waitpid(reader_pid, NULL, 0);
	}
	if (pauser_pid > 0)
		waitpid(pauser_pid, NULL, 0);
	restored = set_knob(FAIR_SERVER, old_fair, frame, sizeof(frame));
	restored |= set_knob(RT_RUNTIME, old_rt, frame, sizeof(frame));
	printf("pauses=%ld attempts=%ld seed=%u opens=%ld failed=%ld opens_after=%ld\n", caught,
	       attempts, seed, opens, p->failed, p->opens - opens);
	return status || restored;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int latency(long n, const char *name, const char *file, int readers, int spin)
{
	struct tally *tallies;
	double *load_us = calloc(n, sizeof(double));
	double *unload_us = calloc(n, sizeof(double));
	long i, reads = 0, failed = 0;
	pid_t *pids = calloc(readers + 1, sizeof(pid_t));
	double t;
	int r, status = 0;

	tallies = mmap(NULL, (readers + 1) * sizeof(*tallies), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!load_us || !unload_us || !pids || tallies == MAP_FAILED)
		return 1;
	for (r = 0; r < readers; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			reader(&tallies[r], spin);
	}
	if (readers)
		sleep(1); /* the readers are at work */
	for (i = 0; i < n; i++) {
		t = now_us();
		if (load_file(file)) {
			status = 1;
			break;
		}
		load_us[i] = now_us() - t;
		t = now_us();
		if (unload(name)) {
			status = 1;
			break;
		}
		unload_us[i] = now_us() - t;
	}
	for (r = 0; r < readers; r++) {
		kill(pids[r], SIGTERM);
		waitpid(pids[r], NULL, 0);
		reads += tallies[r].reads;
		failed += tallies[r].failed;
	}
	if (status)
		return 1;
	qsort(load_us, n, sizeof(double), compare);
	qsort(unload_us, n, sizeof(double), compare);
	printf("readers=%d kind=%s cycles=%ld load_median_us=%.0f load_worst_us=%.0f "
	       "unload_median_us=%.0f unload_worst_us=%.0f reads=%ld failed_reads=%ld "
	       "load_slowest_us=%.0f,%.0f,%.0f unload_slowest_us=%.0f,%.0f,%.0f\n",
	       readers, spin ? "spin" : "read", n, load_us[n / 2], load_us[n - 1], unload_us[n / 2],
	       unload_us[n - 1], reads, failed, load_us[n - 1], load_us[n - 2 > 0 ? n - 2 : 0],
	       load_us[n - 3 > 0 ? n - 3 : 0], unload_us[n - 1],
	       unload_us[n - 2 > 0 ? n - 2 : 0], unload_us[n - 3 > 0 ? n - 3 : 0]);
	return readers && reads == 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (argc == 5 && !strcmp(argv[1], "cycles") && n > 0)
		return cycles(n, argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "names") && n > 0)
		return names(n, argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "load"))
		return many(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "unload"))
		return many(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10), NULL);
	if ((argc == 6 || (argc == 7 && !strcmp(argv[6], "spin"))) &&
	    !strcmp(argv[1], "latency") && n > 0)
		return latency(n, argv[3], argv[4], atoi(argv[5]), argc == 7);
	if (argc == 5 && !strcmp(argv[1], "paused") && n > 0)
		return paused(n, strtol(argv[3], NULL, 10), argv[4]);
	fprintf(stderr, "usage: %s cycles N NAME FILE.ko | names N PREFIX FILE.ko | "
		"load PREFIX FIRST LAST FILE.ko | unload PREFIX FIRST LAST | "
		"latency N NAME FILE.ko READERS [spin] | paused PAUSES CYCLES FILE.ko\n", argv[0]);
	return 2;
}
