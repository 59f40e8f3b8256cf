/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memcpy/memmove/memset whose lengths come from run-time data (a table built
 * in another translation unit), so clang cannot fold them and instruments
 * each call with __llvm_profile_instrument_memop. The sizes cover every
 * range of the memop size mapping: 0..8 exactly, powers of two, the values
 * between them, and >= 513.
 */
#ifndef MEMOPS_H
#define MEMOPS_H

#include <stddef.h>
#include <stdint.h>

#define BUF_SIZE 8192

/* sizes.c */
void build_size_schedule(void);
size_t schedule_size(unsigned i);
unsigned schedule_length(void);

/* buffers.c */
extern uint8_t buf_a[BUF_SIZE], buf_b[BUF_SIZE];
void copy_block(uint8_t *dst, const uint8_t *src, size_t n);
void slide_block(uint8_t *buf, size_t n, size_t by);
void fill_block(uint8_t *dst, int byte, size_t n);
uint32_t checksum(const uint8_t *p, size_t n);
void memop_never_called(uint8_t *dst, size_t n); /* memop sites never reached */

#endif
