// SPDX-License-Identifier: GPL-2.0
/*
 * Maps a pgo/live/ file read-only and copies the mapping before and after
 * a command runs, without reopening the file:
 *
 *   live_map FILE BEFORE AFTER READ COMMAND [ARGS...]
 *
 * READ gets the file as read(2) gives it after the command, AFTER is
 * copied after the mapping's pages were zapped (root's truncate(2) of the
 * file), so that they are faulted in again. Prints key=value lines: the size fstat(2)
 * gives, the end lseek(2) finds and the bytes read(2) gives, and the errno
 * of what must be refused (0 where it was not): a private writable or an
 * executable mapping, mprotect(2) to write or execute, a write through
 * /proc/self/mem, a mapping past the end or at an offset past it, and a
 * read through /proc/self/mem (get_user_pages(), which must not reach the
 * pages: a module's may be not-present in the direct map at its unload).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void save(const char *path, const char *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t done = 0;

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	while (done < len) {
		ssize_t n = write(fd, bytes + done, len - done);

		if (n <= 0) {
			perror(path);
			exit(1);
		}
		done += n;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	char *map, *copy, byte;
	size_t len, got = 0;
	void *refused;
	pid_t pid;
	int fd, mem, status;

	if (argc < 6) {
		fprintf(stderr, "usage: live_map FILE BEFORE AFTER READ COMMAND...\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	len = st.st_size;
	printf("size=%zu\n", len);
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	refused = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	printf("writable_map_errno=%d\n", refused == MAP_FAILED ? errno : 0);
	refused = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	printf("exec_map_errno=%d\n", refused == MAP_FAILED ? errno : 0);
	printf("mprotect_write_errno=%d\n",
	       mprotect(map, len, PROT_READ | PROT_WRITE) ? errno : 0);
	printf("mprotect_exec_errno=%d\n",
	       mprotect(map, len, PROT_READ | PROT_EXEC) ? errno : 0);
	mem = open("/proc/self/mem", O_RDWR);
	printf("mem_write_errno=%d\n",
	       mem < 0 ? -1 : pwrite(mem, "x", 1, (off_t)(uintptr_t)map) == 1 ? 0 : errno);
	printf("mem_read_errno=%d\n",
	       mem < 0 ? -1 : pread(mem, &byte, 1, (off_t)(uintptr_t)map) == 1 ? 0 : errno);
	refused = mmap(NULL, len + 2 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("past_end_map_errno=%d\n", refused == MAP_FAILED ? errno : 0);
	refused = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd,
		       (len + page - 1) / page * page);
	printf("offset_past_end_map_errno=%d\n", refused == MAP_FAILED ? errno : 0);
	printf("seek_end=%lld\n", (long long)lseek(fd, 0, SEEK_END));

	save(argv[2], map, len);
	pid = fork();
	if (pid == 0) {
		execvp(argv[5], argv + 5);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		perror(argv[5]);
		return 1;
	}
	printf("command_status=%d\n", WEXITSTATUS(status));
	copy = malloc(len + page);
	for (ssize_t n; (n = pread(fd, copy + got, len + page - got, got)) > 0;)
		got += n;
	printf("read=%zu\n", got);
	save(argv[4], copy, got);
	/* Root's truncate(2) zaps every mapping of the file (tinyconfig has no madvise). */
	printf("zap_errno=%d\n", truncate(argv[1], 0) ? errno : 0);
	save(argv[3], map, len);
	return 0;
}
