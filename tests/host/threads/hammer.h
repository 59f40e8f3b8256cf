/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Many threads hammering the same value-profiling sites and counters at once.
 * Each site lives in a function of its own (call_through_table, call_pair,
 * copy_sized: one site each) so the checker can tie the program's own tally
 * of calls to a site in the profile without guessing site numbers. Every
 * target is a single basic block: its one counter is its entry count.
 */
#ifndef HAMMER_H
#define HAMMER_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*target_fn)(uint64_t);

#define NUM_TABLE_TARGETS 6
#define NUM_PAIR_TARGETS 2
#define NUM_SIZES 5
#define SCHEDULE_LEN 64

/* targets.c */
uint64_t table_target_0(uint64_t x);
uint64_t table_target_1(uint64_t x);
uint64_t table_target_2(uint64_t x);
uint64_t table_target_3(uint64_t x);
uint64_t table_target_4(uint64_t x);
uint64_t table_target_5(uint64_t x);
uint64_t pair_target_even(uint64_t x);
uint64_t pair_target_odd(uint64_t x);
extern target_fn const table_targets[NUM_TABLE_TARGETS];
extern const char *const table_target_names[NUM_TABLE_TARGETS];
extern target_fn const pair_targets[NUM_PAIR_TARGETS];
extern const char *const pair_target_names[NUM_PAIR_TARGETS];

/* schedule.c: which target / size the i-th step uses */
void build_schedules(void);
extern uint8_t target_schedule[SCHEDULE_LEN];
extern size_t size_schedule[SCHEDULE_LEN];

/* sites.c */
uint64_t call_through_table(unsigned k, uint64_t x);
uint64_t call_pair(unsigned k, uint64_t x);
void copy_sized(uint8_t *dst, const uint8_t *src, size_t n);

#endif
