/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A module image in memory, for the guest programs that load modules
 * under other names (fail_nth.c, module_cycles.c): load_image() reads a
 * .ko and renames the module in it, as tests/kernel/ko_edit.py rename
 * does, for init_module().
 */
#ifndef KPGO_TEST_MODULE_IMAGE_H
#define KPGO_TEST_MODULE_IMAGE_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE first: rename_image() uses memmem()"
#endif

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

#endif /* KPGO_TEST_MODULE_IMAGE_H */
