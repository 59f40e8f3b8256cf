// SPDX-License-Identifier: GPL-2.0
/*
 * Hashes ROUNDS buffers of SIZE bytes with the kernel's ALGORITHM through
 * an AF_ALG socket and prints the last digest, so that a crypto module (say
 * wp512) runs on a known workload in the guest.
 *
 * Usage: af_alg_hash ALGORITHM SIZE ROUNDS
 *
 * Exits 3 when the kernel has no AF_ALG (no networking, as in tinyconfig,
 * or no CONFIG_CRYPTO_USER_API_HASH), so that a workload can tell a kernel
 * without the interface from a hash that failed.
 */
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

int main(int argc, char **argv)
{
	struct sockaddr_alg address = { .salg_family = AF_ALG };
	unsigned char digest[64], *buffer;
	size_t size;
	long rounds;
	ssize_t got = 0;
	int tfm, op;

	if (argc != 4) {
		fprintf(stderr, "usage: %s ALGORITHM SIZE ROUNDS\n", argv[0]);
		return 2;
	}
	size = strtoul(argv[2], NULL, 10);
	rounds = strtol(argv[3], NULL, 10);
	buffer = malloc(size);
	if (!buffer)
		return 1;
	for (size_t i = 0; i < size; i++)
		buffer[i] = (unsigned char)(i * 7);
	strcpy((char *)address.salg_type, "hash");
	strncpy((char *)address.salg_name, argv[1], sizeof(address.salg_name) - 1);
	tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm < 0 && (errno == ENOSYS || errno == EAFNOSUPPORT)) {
		perror("AF_ALG socket");
		return 3;
	}
	if (tfm < 0 || bind(tfm, (struct sockaddr *)&address, sizeof(address))) {
		perror("AF_ALG socket/bind");
		return 1;
	}
	op = accept(tfm, NULL, 0);
	if (op < 0) {
		perror("accept");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		if (write(op, buffer, size) != (ssize_t)size) {
			perror("write");
			return 1;
		}
		got = read(op, digest, sizeof(digest));
		if (got <= 0) {
			perror("read");
			return 1;
		}
	}
	for (ssize_t i = 0; i < got; i++)
		printf("%02x", digest[i]);
	printf("\n");
	return 0;
}
