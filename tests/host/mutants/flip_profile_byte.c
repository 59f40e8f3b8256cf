// SPDX-License-Identifier: GPL-2.0
/*
 * Mutant for selftest.sh: after the runtime has written the profile, flip one
 * bit of it -- in the last byte (by default: padding, or the top byte of the
 * last value count), in the first binary id byte (MUTANT_WHERE=binary-id) or
 * in the first counter (MUTANT_WHERE=counter: its count grows by 16). Linked
 * before the real runtime: its constructor runs first, so its atexit handler
 * runs after the runtime's writer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void flip(void)
{
	const char *path = getenv("LLVM_PROFILE_FILE");
	const char *where = getenv("MUTANT_WHERE");
	FILE *f;
	uint64_t header[16];
	long offset;
	int c;

	if (!path || !(f = fopen(path, "r+b")))
		return;
	if (where && (!strcmp(where, "binary-id") || !strcmp(where, "counter"))) {
		/* Header of 11 words (raw v8) or 16 (v10); binary ids, each
		 * {u64 length, bytes}; data records of 48 (v8) or 64 (v10) bytes;
		 * padding; counters. */
		int v8;

		if (fread(header, 8, 16, f) != 16)
			goto out;
		v8 = (header[1] & 0xffffffff) == 8;
		if (!strcmp(where, "binary-id"))
			offset = (v8 ? 11 : 16) * 8 + 8;
		else
			offset = (v8 ? 11 : 16) * 8 + header[2] + header[3] * (v8 ? 48 : 64) + header[4];
	} else {
		if (fseek(f, 0, SEEK_END))
			goto out;
		offset = ftell(f) - 1;
	}
	if (fseek(f, offset, SEEK_SET) || (c = fgetc(f)) == EOF || fseek(f, offset, SEEK_SET))
		goto out;
	fputc(c ^ 0x10, f);
out:
	fclose(f);
}

__attribute__((constructor(101))) static void register_flip(void)
{
	atexit(flip);
}
