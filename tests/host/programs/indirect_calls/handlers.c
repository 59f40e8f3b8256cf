// SPDX-License-Identifier: GPL-2.0
#include "dispatch.h"

uint64_t handler_checksum;

static void verbose_open(unsigned id) { handler_checksum += id * 7; }
static void verbose_data(unsigned id, uint32_t v) { handler_checksum += id ^ v; }
static void verbose_close(unsigned id) { handler_checksum += id * 13; }
static void quiet_open(unsigned id) { handler_checksum ^= id; }
static void quiet_data(unsigned id, uint32_t v) { handler_checksum ^= v + id; }
/* quiet_handlers has no close callback of its own: two tables share one. */

const struct handlers verbose_handlers = { verbose_open, verbose_data, verbose_close };
const struct handlers quiet_handlers = { quiet_open, quiet_data, verbose_close };
