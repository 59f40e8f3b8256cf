// SPDX-License-Identifier: GPL-2.0
/*
 * Loads or unloads a module with the Nth fault-injection site of this
 * thread failing (/proc/thread-self/fail-nth), for the lifecycle tests:
 *
 *   fail_nth N load FILE.ko [PARAMS]    finit_module()
 *   fail_nth N load-as NAME FILE.ko     init_module() of FILE.ko renamed NAME
 *                                       (at most as long as its own name)
 *   fail_nth N unload NAME              delete_module(O_NONBLOCK)
 *
 * N = 0 injects nothing. load-as gives each attempt a module name never
 * loaded before, so that the first-load path (a new profile entry) is
 * what fails. Prints one line,
 *   fail_nth: nth=N op=load|unload result=0|-ERRNO fired=0|1
 * where fired=1 means the Nth site was reached and failed (fail-nth reads
 * 0 afterwards). Exit status: 0 if the operation succeeded, 1 if it
 * failed, 2 on a usage or setup error.
 */
#define _GNU_SOURCE /* memmem() */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The bytes of section NAME of the module image, or NULL. */
static char *section(char *image, size_t size, const char *name, size_t *len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	Elf64_Shdr *sh, *strtab;
	int i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > size ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (Elf64_Shdr *)(image + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		if (strtab->sh_offset + sh[i].sh_name >= size ||
		    strcmp(image + strtab->sh_offset + sh[i].sh_name, name) ||
		    sh[i].sh_offset + sh[i].sh_size > size)
			continue;
		*len = sh[i].sh_size;
		return image + sh[i].sh_offset;
	}
	return NULL;
}

/*
 * Renames the module in its image, as tests/kernel/ko_edit.py rename does:
 * the "name=" modinfo and the name in struct module.
 */
static int rename_image(char *image, size_t size, const char *name)
{
	size_t info_len, mod_len, old_len, new_len = strlen(name);
	char *info = section(image, size, ".modinfo", &info_len);
	char *mod = section(image, size, ".gnu.linkonce.this_module", &mod_len);
	char *p, *old;

	if (!info || !mod)
		return -1;
	for (p = info; p < info + info_len; p += strlen(p) + 1)
		if (!strncmp(p, "name=", 5))
			break;
	if (p >= info + info_len)
		return -1;
	old = p + 5;
	old_len = strlen(old);
	if (new_len == 0 || new_len > old_len)
		return -1;
	p = memmem(mod, mod_len, old, old_len + 1);
	if (!p)
		return -1;
	memset(p, 0, old_len + 1);
	memcpy(p, name, new_len);
	memset(old, 0, old_len);
	memcpy(old, name, new_len);
	return 0;
}

/* Reads FILE into memory, renamed NAME. */
static char *load_image(const char *file, const char *name, size_t *size)
{
	struct stat st;
	char *image;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(file);
		return NULL;
	}
	image = malloc(st.st_size);
	if (!image || read(fd, image, st.st_size) != st.st_size) {
		perror(file);
		return NULL;
	}
	close(fd);
	*size = st.st_size;
	if (rename_image(image, *size, name)) {
		fprintf(stderr, "%s: cannot rename the module %s\n", file, name);
		return NULL;
	}
	return image;
}

int main(int argc, char **argv)
{
	char buf[32] = "";
	char *image = NULL;
	size_t size = 0;
	const char *op;
	int ctl, fd = -1, error;
	long nth, result;
	ssize_t n;

	if (argc < 4 || (strcmp(argv[2], "load-as") == 0 && argc < 5)) {
		fprintf(stderr,
			"usage: %s N load FILE.ko [PARAMS] | N load-as NAME FILE.ko | N unload NAME\n",
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
	if (fd >= 0)
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
	printf("fail_nth: nth=%ld op=%s result=%ld fired=%d\n", nth, op,
	       result < 0 ? -(long)error : 0L,
	       nth > 0 && n > 0 && strtol(buf, NULL, 10) == 0);
	return result < 0;
}
