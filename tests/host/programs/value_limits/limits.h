/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two limits of value profiling, where the runtime must decide what to
 * keep:
 *  - more distinct targets on one indirect-call site (40) than a site may
 *    hold (compiler-rt: 24), so older, colder values get evicted;
 *  - more distinct (site, value) pairs overall (64 memcpy sites x 20 size
 *    ranges = 1280) than there are value nodes (one per site from the
 *    compiler, plus 1024 compiler-rt adds), so late values find no node.
 * Single-threaded and deterministic: both runtimes must keep the same ones.
 */
#ifndef LIMITS_H
#define LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define NUM_TARGETS 40
typedef uint32_t (*target_fn)(uint32_t);
extern target_fn const targets[NUM_TARGETS];
uint32_t call_target(unsigned k, uint32_t x); /* the over-full site */

#define NUM_COPY_SITES 64
void copy_at_every_site(uint8_t *dst, const uint8_t *src, size_t n);

#endif
