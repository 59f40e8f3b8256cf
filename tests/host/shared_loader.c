// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a test program built as a shared object: loads it (its runtime
 * comes with it and registers its exit dump) and calls its main.
 * usage: shared_loader PROGRAM.so [ARGS...]
 */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*entry_fn)(int argc, char **argv);

int main(int argc, char **argv)
{
	entry_fn program_main;
	void *program;

	if (argc < 2) {
		fprintf(stderr, "usage: shared_loader PROGRAM.so [ARGS...]\n");
		return 2;
	}
	program = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!program) {
		fprintf(stderr, "shared_loader: %s\n", dlerror());
		return 2;
	}
	program_main = (entry_fn)dlsym(program, "main");
	if (!program_main) {
		fprintf(stderr, "shared_loader: %s\n", dlerror());
		return 2;
	}
	return program_main(argc - 1, argv + 1);
}
