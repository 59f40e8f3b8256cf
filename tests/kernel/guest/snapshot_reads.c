// SPDX-License-Identifier: GPL-2.0
/*
 * Reads one open file twice through the same descriptor: first one byte
 * per read(), then, after seeking back to 0, in large reads. Writes both
 * copies (argv[2], argv[3]); they must be equal if every open file serves
 * one snapshot whatever the read sizes and seeks.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int copy(int in, const char *path, size_t chunk)
{
	static char buf[1 << 16];
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (out < 0)
		return -1;
	while ((n = read(in, buf, chunk)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(out);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int in;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE BYTEWISE_COPY BULK_COPY\n", argv[0]);
		return 2;
	}
	in = open(argv[1], O_RDONLY);
	if (in < 0 || copy(in, argv[2], 1) || lseek(in, 0, SEEK_SET) != 0 ||
	    copy(in, argv[3], 1 << 16))
		return 1;
	return 0;
}
