// SPDX-License-Identifier: GPL-2.0
/*
 * kpgo-model: a QEMU TCG plugin that models the front end and caches of one
 * x86 core while the guest runs, so that code layout shows in the figures:
 * L1 instruction and data caches, a unified L2, a two-level iTLB of 4 KiB
 * pages, taken control transfers and conditional-branch mispredictions of a
 * gshare predictor.  It is a model, not hardware: every structure is LRU,
 * virtually indexed and tagged (no address-space ids), without prefetchers,
 * and a modeled cycle is the sum of the instructions' base cost and of each
 * event times its penalty, with no overlap.  The defaults follow AMD's
 * Software Optimization Guide for the Zen 4 microarchitecture (see
 * Documentation/kernel-build.rst, "The front-end model").
 *
 * The model runs all the time; its counts are printed for the windows that
 * the guest marks with
 *	nopl KPGO_MODEL_MAGIC | id(%rax)	start window id (0..4095)
 *	nopl KPGO_MODEL_MAGIC | 0x8000 | id(%rax)	end it
 * (bench/model/window.h), recognised at translation; every window's
 * counts are printed when it ends:
 *	kpgo-model window=ID insns=N l1i_misses=N ... cycles=N
 *
 * Arguments (-plugin kpgo-model.so,name=value,...): the parameters of
 * struct model_params, by the names in param_names[].
 *
 * Several vCPUs (up to MAX_VCPUS; threads under qemu-x86_64) are cores of
 * their own: each has its caches, iTLB and predictor, and counts its own
 * windows, printed with its index (vcpu=N).  Shared between them is a
 * directory of the cache lines written, by physical address (by virtual
 * address under qemu-x86_64, where the threads share one address space):
 * a vCPU's access to a line that another vCPU wrote and it has not read
 * since is a transfer, as a coherence protocol would move the line from
 * the writer's cache, and costs transfer_latency cycles.  What it cannot
 * see: the order of accesses is QEMU's; with -icount QEMU runs the vCPUs
 * in turn on one host thread, each for a slice of many instructions, so
 * lines that two vCPUs write back and forth show only at the switches (a
 * lower bound); without -icount (MTTCG) the vCPUs run in parallel host
 * threads and interleave as the host schedules them, which is not
 * repeatable.  A transfer does not evict the line from the other cores'
 * modeled caches: its penalty stands for that miss.
 *
 * line_report=N (default 0, off) also prints, when a window ends, how many
 * distinct instruction cache lines the window fetched (its code
 * footprint) and its N lines with the most L1i misses (then fetches):
 *	kpgo-model lines window=ID fetched=N untracked=N
 *	kpgo-model line window=ID addr=0x... fetches=N misses=N
 * (bench/model/lines.py names their functions and compares two kernels);
 * untracked counts the fetches of lines past the table's capacity.
 *
 * transfer_report=N (default 0, off; several vCPUs only) likewise prints,
 * when a vCPU's window ends, the N places with the most transfers that vCPU
 * took in it: the instruction and the data line, by virtual address (a
 * per-CPU variable's line is in the CPU's per-CPU area); places counts
 * them all, untracked the transfers past the table's capacity:
 *	kpgo-model transfers window=ID vcpu=N places=N untracked=N
 *	kpgo-model transfer window=ID vcpu=N pc=0x... addr=0x... store=0|1 count=N
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KPGO_MODEL_MAGIC 0x4b500000u
#define KPGO_MODEL_MAGIC_MASK 0xffff0000u
#define KPGO_MODEL_END 0x8000u
#define KPGO_MODEL_ID_MASK 0x0fffu
#define WINDOWS (KPGO_MODEL_ID_MASK + 1)

struct model_params {
	uint64_t l1i_size, l1i_ways, l1d_size, l1d_ways, l2_size, l2_ways;
	uint64_t itlb_entries, itlb2_entries, itlb2_ways, kernel_page_shift;
	uint64_t gshare_bits;
	/* Cycles: base per 1000 instructions, then per event. */
	uint64_t base_milli_cpi, l2_latency, l3_latency;
	uint64_t itlb2_latency, page_walk, mispredict, taken;
	/* A cache line that another core wrote, from that core's cache. */
	uint64_t transfer_latency;
	/* Per 1000 repeats of a REP string instruction (fast strings). */
	uint64_t rep_milli_cycles;
	/* Report, not model: the lines with the most misses per window. */
	uint64_t line_report;
	/* Report, not model: the places with the most transfers per window. */
	uint64_t transfer_report;
};

/*
 * Zen 4 (the guide's figures; base_milli_cpi, itlb2_latency, page_walk,
 * taken, rep_milli_cycles, gshare_bits and transfer_latency are
 * assumptions).
 */
static struct model_params params = {
	.l1i_size = 32 << 10, .l1i_ways = 8,
	.l1d_size = 32 << 10, .l1d_ways = 8,
	.l2_size = 1 << 20, .l2_ways = 8,
	.itlb_entries = 64, .itlb2_entries = 512, .itlb2_ways = 8,
	.kernel_page_shift = 21,
	.gshare_bits = 14,
	.base_milli_cpi = 500, .l2_latency = 14, .l3_latency = 50,
	.itlb2_latency = 7, .page_walk = 30, .mispredict = 13, .taken = 1,
	.transfer_latency = 100,
	.rep_milli_cycles = 62,
};

static const struct {
	const char *name;
	uint64_t *value;
} param_names[] = {
	{ "l1i_size", &params.l1i_size }, { "l1i_ways", &params.l1i_ways },
	{ "l1d_size", &params.l1d_size }, { "l1d_ways", &params.l1d_ways },
	{ "l2_size", &params.l2_size }, { "l2_ways", &params.l2_ways },
	{ "itlb_entries", &params.itlb_entries },
	{ "itlb2_entries", &params.itlb2_entries },
	{ "itlb2_ways", &params.itlb2_ways },
	{ "kernel_page_shift", &params.kernel_page_shift },
	{ "gshare_bits", &params.gshare_bits },
	{ "base_milli_cpi", &params.base_milli_cpi },
	{ "l2_latency", &params.l2_latency },
	{ "l3_latency", &params.l3_latency },
	{ "itlb2_latency", &params.itlb2_latency },
	{ "page_walk", &params.page_walk },
	{ "mispredict", &params.mispredict }, { "taken", &params.taken },
	{ "transfer_latency", &params.transfer_latency },
	{ "rep_milli_cycles", &params.rep_milli_cycles },
	{ "line_report", &params.line_report },
	{ "transfer_report", &params.transfer_report },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_VCPUS 8
#define LINE_SHIFT 6
#define PAGE_SHIFT 12
/* x86-64's kernel image, which Linux maps with 2 MiB pages. */
#define KERNEL_IMAGE_START 0xffffffff80000000ull
#define KERNEL_IMAGE_END 0xffffffffa0000000ull

/* A set-associative LRU array of tags; ways == entries is fully associative. */
struct tag_array {
	uint64_t sets, ways, shift;
	uint64_t *tags;		/* sets * ways, tag + 1 (0 is empty) */
	uint64_t *stamps;	/* last use, for LRU */
	uint64_t clock;
};

static bool tag_array_init(struct tag_array *a, uint64_t entries,
			   uint64_t ways, uint64_t shift)
{
	if (!ways || !entries || entries % ways ||
	    ((entries / ways) & (entries / ways - 1)))
		return false;
	a->sets = entries / ways;
	a->ways = ways;
	a->shift = shift;
	a->tags = calloc(entries, sizeof(*a->tags));
	a->stamps = calloc(entries, sizeof(*a->stamps));
	if (!a->tags || !a->stamps) {
		fprintf(stderr, "kpgo-model: out of memory\n");
		abort();
	}
	return true;
}

/* Looks ADDR up; on a miss, puts it in place of the least recently used. */
static bool tag_array_access(struct tag_array *a, uint64_t addr)
{
	uint64_t block = addr >> a->shift;
	uint64_t *tags = a->tags + (block & (a->sets - 1)) * a->ways;
	uint64_t *stamps = a->stamps + (tags - a->tags);
	uint64_t victim = 0;

	a->clock++;
	for (uint64_t w = 0; w < a->ways; w++) {
		if (tags[w] == block + 1) {
			stamps[w] = a->clock;
			return true;
		}
		if (stamps[w] < stamps[victim])
			victim = w;
	}
	tags[victim] = block + 1;
	stamps[victim] = a->clock;
	return false;
}

/*
 * insns counts a REP string instruction once, as hardware does; QEMU runs
 * it once per repeat, and rep_repeats counts the repeats after the first
 * (so -icount counts insns + rep_repeats).
 */
struct counts {
	uint64_t insns, rep_repeats, l1i_misses, l1d_accesses, l1d_misses;
	uint64_t l2_misses, itlb_misses, itlb2_misses, taken, cond_branches;
	uint64_t mispredicts, transfers;
};

static const char *const count_names[] = {
	"insns", "rep_repeats", "l1i_misses", "l1d_accesses", "l1d_misses",
	"l2_misses", "itlb_misses", "itlb2_misses", "taken", "cond_branches",
	"mispredicts", "transfers",
};

enum block_end { END_NONE, END_COND, END_TRANSFER };

/* What a translated block needs at run time; made at translation. */
struct block {
	uint64_t start, fallthrough, branch_pc;
	uint64_t target;	/* of a direct branch, call or jump; else 0 */
	enum block_end end;
	bool rep_first;		/* it starts with a REP string instruction */
	uint32_t insns, lines;
	uint64_t line[];	/* addresses of the cache lines it spans */
};

struct marker {
	uint32_t id;
	bool end;
	uint32_t insns_after;	/* of its block, after the marker */
};

/*
 * transfer_report's tables, one per vCPU (only its own callbacks write it):
 * the transfers it took in its window, by instruction and data line; open
 * addressing, kept at most half full.
 */
#define TRANSFER_TABLE_BITS 14
struct transfer_stat {
	uint64_t pc, line, store, count;
};
struct transfer_table {
	struct transfer_stat *slot;
	uint64_t used, untracked;
};

/*
 * One core per vCPU, used by its vCPU's thread only.  The structures are
 * fed all the time, so that a window starts with the state the guest left;
 * only a window's counts are printed.
 */
struct core {
	struct tag_array l1i, l1d, l2, itlb, itlb2;
	uint8_t *gshare;
	uint64_t history;
	bool active;
	uint32_t window;
	struct counts now;
	const struct block *previous;
	struct transfer_table transfers;
};
static struct core cores[MAX_VCPUS];

/*
 * The lines written, shared by the cores: open addressing on the line
 * number, one 64-bit word per line, updated with compare-and-swap (under
 * MTTCG the vCPUs' threads run at once): the line number + 1 in the high
 * 48 bits (0: an empty slot), the last writer's index in bits 8..15, and
 * in bits 0..7 the cores that saw its last write (the writer, and who read
 * the line since).  Only with more than one vCPU possible; a full table
 * stops taking new lines and counts them (untracked, printed at exit).
 */
#define DIRECTORY_BITS 23
static _Atomic uint64_t *directory;
static _Atomic uint64_t directory_used, directory_untracked;

/*
 * line_report's table of the lines a window fetched: open addressing on the
 * line address (0: empty slot; no kernel or user code line is at 0), kept
 * at most half full.
 */
#define LINE_TABLE_BITS 18
struct line_stat {
	uint64_t addr, fetches, misses;
};
static struct line_stat *line_table;
static uint64_t lines_fetched, lines_untracked;

static void line_record(uint64_t addr, bool miss)
{
	const uint64_t mask = (1ull << LINE_TABLE_BITS) - 1;
	uint64_t i = ((addr >> LINE_SHIFT) * 0x9e3779b97f4a7c15ull) >> (64 - LINE_TABLE_BITS);

	for (;; i = (i + 1) & mask) {
		struct line_stat *l = &line_table[i];

		if (l->addr == addr) {
			l->fetches++;
			l->misses += miss;
			return;
		}
		if (!l->addr) {
			if (lines_fetched >= mask / 2) {
				lines_untracked++;
				return;
			}
			*l = (struct line_stat){ addr, 1, miss };
			lines_fetched++;
			return;
		}
	}
}

static int by_misses(const void *a, const void *b)
{
	const struct line_stat *x = a, *y = b;

	if (x->misses != y->misses)
		return x->misses < y->misses ? 1 : -1;
	if (x->fetches != y->fetches)
		return x->fetches < y->fetches ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void print_lines(uint32_t id)
{
	uint64_t n = 0;
	char line[160];

	snprintf(line, sizeof(line), "kpgo-model lines window=%u fetched=%" PRIu64
		 " untracked=%" PRIu64 "\n", id, lines_fetched, lines_untracked);
	qemu_plugin_outs(line);
	/* Compact the used slots to the front, then sort them. */
	for (uint64_t i = 0; i < 1ull << LINE_TABLE_BITS; i++)
		if (line_table[i].addr)
			line_table[n++] = line_table[i];
	qsort(line_table, n, sizeof(*line_table), by_misses);
	for (uint64_t i = 0; i < n && i < params.line_report; i++) {
		snprintf(line, sizeof(line), "kpgo-model line window=%u addr=0x%" PRIx64
			 " fetches=%" PRIu64 " misses=%" PRIu64 "\n", id,
			 line_table[i].addr, line_table[i].fetches, line_table[i].misses);
		qemu_plugin_outs(line);
	}
}

static void transfer_record(struct transfer_table *table, uint64_t pc, uint64_t line,
			    bool store)
{
	const uint64_t mask = (1ull << TRANSFER_TABLE_BITS) - 1;
	uint64_t i = ((pc ^ line * 31) * 0x9e3779b97f4a7c15ull) >> (64 - TRANSFER_TABLE_BITS);

	for (;; i = (i + 1) & mask) {
		struct transfer_stat *t = &table->slot[i];

		if (t->pc == pc && t->line == line && t->store == store) {
			t->count++;
			return;
		}
		if (!t->count) {
			if (table->used >= mask / 2) {
				table->untracked++;
				return;
			}
			*t = (struct transfer_stat){ pc, line, store, 1 };
			table->used++;
			return;
		}
	}
}

static int by_count(const void *a, const void *b)
{
	const struct transfer_stat *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Prints TABLE's places, most transfers first (the next window empties it). */
static void print_transfers(struct transfer_table *table, uint32_t id, unsigned int vcpu)
{
	struct transfer_stat *slot = table->slot;
	uint64_t n = 0;
	char line[192];

	snprintf(line, sizeof(line), "kpgo-model transfers window=%u vcpu=%u places=%" PRIu64
		 " untracked=%" PRIu64 "\n", id, vcpu, table->used, table->untracked);
	qemu_plugin_outs(line);
	for (uint64_t i = 0; i < 1ull << TRANSFER_TABLE_BITS; i++)
		if (slot[i].count)
			slot[n++] = slot[i];
	qsort(slot, n, sizeof(*slot), by_count);
	for (uint64_t i = 0; i < n && i < params.transfer_report; i++) {
		snprintf(line, sizeof(line), "kpgo-model transfer window=%u vcpu=%u pc=0x%" PRIx64
			 " addr=0x%" PRIx64 " store=%" PRIu64 " count=%" PRIu64 "\n", id, vcpu,
			 slot[i].pc, slot[i].line << LINE_SHIFT, slot[i].store, slot[i].count);
		qemu_plugin_outs(line);
	}
}

static void miss_to_l2(struct core *c, uint64_t addr)
{
	if (!tag_array_access(&c->l2, addr))
		c->now.l2_misses++;
}

/* The iTLB arrays hold page keys: 2 MiB pages of the kernel image apart. */
static uint64_t page_key(uint64_t addr)
{
	if (addr >= KERNEL_IMAGE_START && addr < KERNEL_IMAGE_END)
		return (addr >> params.kernel_page_shift) | 1ull << 63;
	return addr >> PAGE_SHIFT;
}

static void fetch_page(struct core *c, uint64_t addr)
{
	uint64_t key = page_key(addr);

	if (tag_array_access(&c->itlb, key))
		return;
	c->now.itlb_misses++;
	if (!tag_array_access(&c->itlb2, key))
		c->now.itlb2_misses++;
}

/*
 * The previous block's exit, now that the next block's start is known.  A
 * next block that is neither the fall-through nor the target of a direct
 * branch is an interrupt or exception: no branch outcome (an indirect
 * branch's can not be told from one, and counts as taken).
 */
static void resolve_exit(struct core *c, const struct block *prev, uint64_t next)
{
	bool taken = next != prev->fallthrough;

	if (prev->end == END_NONE ||
	    (prev->target && taken && next != prev->target))
		return;
	if (taken)
		c->now.taken++;
	if (prev->end == END_COND) {
		uint64_t mask = (1ull << params.gshare_bits) - 1;
		uint8_t *counter = &c->gshare[((prev->branch_pc >> 1) ^ c->history) & mask];

		c->now.cond_branches++;
		if ((*counter >= 2) != taken)
			c->now.mispredicts++;
		if (taken && *counter < 3)
			(*counter)++;
		else if (!taken && *counter > 0)
			(*counter)--;
		c->history = ((c->history << 1) | taken) & mask;
	}
}

static void block_exec(unsigned int vcpu, void *udata)
{
	struct core *c = &cores[vcpu];
	const struct block *b = udata;
	uint64_t page = UINT64_MAX;

	/* QEMU runs a REP string instruction again for each repeat. */
	if (b->rep_first && c->previous && c->previous->branch_pc == b->start &&
	    c->previous->end == END_NONE) {
		c->now.rep_repeats++;
		c->previous = b;
		return;
	}
	if (c->previous)
		resolve_exit(c, c->previous, b->start);
	c->previous = b;
	c->now.insns += b->insns;
	for (uint32_t i = 0; i < b->lines; i++) {
		if (b->line[i] >> PAGE_SHIFT != page) {
			page = b->line[i] >> PAGE_SHIFT;
			fetch_page(c, b->line[i]);
		}
		bool hit = tag_array_access(&c->l1i, b->line[i]);

		if (!hit) {
			c->now.l1i_misses++;
			miss_to_l2(c, b->line[i]);
		}
		/* One table: the first vCPU's windows (line_report). */
		if (line_table && c->active && vcpu == 0)
			line_record(b->line[i], !hit);
	}
}

/*
 * Core VCPU reads or writes LINE: whether that is a transfer (another core
 * wrote the line last, and this one has not seen that write).
 */
static bool directory_access(unsigned int vcpu, uint64_t line, bool store)
{
	const uint64_t mask = (1ull << DIRECTORY_BITS) - 1;
	const uint64_t key = (line + 1) << 16, me = 1ull << vcpu;
	uint64_t i = (line * 0x9e3779b97f4a7c15ull) >> (64 - DIRECTORY_BITS);

	for (;; i = (i + 1) & mask) {
		uint64_t old = atomic_load_explicit(&directory[i], memory_order_relaxed);

		if (!old) {
			/* A line never written: nothing to see, or its first writer. */
			if (!store)
				return false;
			if (atomic_fetch_add_explicit(&directory_used, 1, memory_order_relaxed) >=
			    mask / 4 * 3) {
				atomic_fetch_add_explicit(&directory_used, -1, memory_order_relaxed);
				atomic_fetch_add_explicit(&directory_untracked, 1,
							  memory_order_relaxed);
				return false;
			}
			if (atomic_compare_exchange_strong(&directory[i], &old,
							   key | (uint64_t)vcpu << 8 | me))
				return false;
			atomic_fetch_add_explicit(&directory_used, -1, memory_order_relaxed);
			/* Taken meanwhile, maybe by this line: look at it again. */
			i = (i - 1) & mask;
			continue;
		}
		if ((old & ~0xffffull) != key)
			continue;
		for (;;) {
			bool seen = old & me;
			uint64_t new = store ? key | (uint64_t)vcpu << 8 | me : old | me;

			if (new == old)
				return false;
			if (atomic_compare_exchange_weak(&directory[i], &old, new))
				return !seen;
		}
	}
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *udata)
{
	struct core *c = &cores[vcpu];

	c->now.l1d_accesses++;
	if (!tag_array_access(&c->l1d, vaddr)) {
		c->now.l1d_misses++;
		miss_to_l2(c, vaddr);
	}
	if (directory) {
		struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
		uint64_t addr = vaddr;

		if (hw) {
			if (qemu_plugin_hwaddr_is_io(hw))
				return;
			addr = qemu_plugin_hwaddr_phys_addr(hw);
		}
		bool store = qemu_plugin_mem_is_store(info);

		if (directory_access(vcpu, addr >> LINE_SHIFT, store)) {
			c->now.transfers++;
			if (c->transfers.slot && c->active)
				transfer_record(&c->transfers, (uintptr_t)udata,
						vaddr >> LINE_SHIFT, store);
		}
	}
}

static uint64_t cycles(const struct counts *c)
{
	return (c->insns * params.base_milli_cpi +
		c->rep_repeats * params.rep_milli_cycles + 500) / 1000 +
	       (c->l1i_misses + c->l1d_misses) * params.l2_latency +
	       c->l2_misses * params.l3_latency +
	       c->itlb_misses * params.itlb2_latency +
	       c->itlb2_misses * params.page_walk +
	       c->mispredicts * params.mispredict + c->taken * params.taken +
	       c->transfers * params.transfer_latency;
}

static void print_window(uint32_t id, unsigned int vcpu, const struct counts *c)
{
	const uint64_t *values = (const uint64_t *)c;
	char line[512];
	int n = snprintf(line, sizeof(line), "kpgo-model window=%u vcpu=%u", id, vcpu);

	for (size_t i = 0; i < ARRAY_SIZE(count_names); i++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%" PRIu64,
			      count_names[i], values[i]);
	snprintf(line + n, sizeof(line) - n, " cycles=%" PRIu64 "\n", cycles(c));
	qemu_plugin_outs(line);
}

static void marker_exec(unsigned int vcpu, void *udata)
{
	struct core *c = &cores[vcpu];
	const struct marker *m = udata;

	if (!m->end) {
		/* Count from here: what follows the marker in its block. */
		memset(&c->now, 0, sizeof(c->now));
		c->now.insns = m->insns_after;
		c->window = m->id;
		c->active = true;
		if (line_table && vcpu == 0) {
			memset(line_table, 0, sizeof(*line_table) << LINE_TABLE_BITS);
			lines_fetched = lines_untracked = 0;
		}
		if (c->transfers.slot) {
			memset(c->transfers.slot, 0,
			       sizeof(*c->transfers.slot) << TRANSFER_TABLE_BITS);
			c->transfers.used = c->transfers.untracked = 0;
		}
	} else if (c->active && m->id == c->window) {
		/* Its block was counted whole: not what follows the marker. */
		c->now.insns -= m->insns_after;
		c->active = false;
		print_window(m->id, vcpu, &c->now);
		if (line_table && vcpu == 0)
			print_lines(m->id);
		if (c->transfers.slot)
			print_transfers(&c->transfers, m->id, vcpu);
	}
}

/* The marker's id, if INSN is one: nopl disp32(%rax), 0f 1f 80 <disp32>. */
static bool insn_marker(struct qemu_plugin_insn *insn, uint32_t *disp)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != 7 || p[0] != 0x0f || p[1] != 0x1f ||
	    p[2] != 0x80)
		return false;
	memcpy(disp, p + 3, 4);
	return (*disp & KPGO_MODEL_MAGIC_MASK) == KPGO_MODEL_MAGIC &&
	       !(*disp & 0x7000);
}

/* The length of INSN's legacy and REX prefixes; *rep if F2 or F3 is one. */
static size_t insn_prefixes(const uint8_t *p, size_t size, bool *rep)
{
	size_t i = 0;

	*rep = false;
	while (i < size && (p[i] == 0x26 || p[i] == 0x2e || p[i] == 0x36 ||
			    p[i] == 0x3e || p[i] == 0x64 || p[i] == 0x65 ||
			    p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf0 ||
			    p[i] == 0xf2 || p[i] == 0xf3 ||
			    (p[i] & 0xf0) == 0x40)) {
		*rep |= p[i] == 0xf2 || p[i] == 0xf3;
		i++;
	}
	return i;
}

/* Whether INSN is a REP-prefixed string instruction (ins, outs, movs, ...). */
static bool insn_rep_string(struct qemu_plugin_insn *insn)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);
	size_t size = qemu_plugin_insn_size(insn);
	bool rep;
	size_t i = insn_prefixes(p, size, &rep);

	return rep && i < size &&
	       ((p[i] >= 0x6c && p[i] <= 0x6f) || (p[i] >= 0xa4 && p[i] <= 0xa7) ||
		(p[i] >= 0xaa && p[i] <= 0xaf));
}

/* A signed little-endian displacement of N bytes at P. */
static int64_t displacement(const uint8_t *p, size_t n)
{
	int32_t d32;

	if (n == 1)
		return (int8_t)p[0];
	memcpy(&d32, p, 4);
	return d32;
}

/*
 * How a block's last instruction leaves it, and the target of a direct
 * branch, jump or call (0 if not one).
 */
static enum block_end insn_end(struct qemu_plugin_insn *insn, uint64_t *target)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);
	size_t size = qemu_plugin_insn_size(insn);
	uint64_t next = qemu_plugin_insn_vaddr(insn) + size;
	bool rep;
	size_t i = insn_prefixes(p, size, &rep);

	*target = 0;
	if (i >= size)
		return END_NONE;
	if ((p[i] >= 0x70 && p[i] <= 0x7f) || (p[i] >= 0xe0 && p[i] <= 0xe3) ||
	    p[i] == 0xeb) {
		if (i + 2 == size)
			*target = next + displacement(p + i + 1, 1);
		return p[i] == 0xeb ? END_TRANSFER : END_COND;
	}
	if (p[i] == 0xe8 || p[i] == 0xe9) {
		if (i + 5 == size)
			*target = next + displacement(p + i + 1, 4);
		return END_TRANSFER;
	}
	if (p[i] == 0x0f && i + 1 < size) {
		if (p[i + 1] >= 0x80 && p[i + 1] <= 0x8f) {
			if (i + 6 == size)
				*target = next + displacement(p + i + 2, 4);
			return END_COND;
		}
		/* syscall, sysret, sysenter, sysexit */
		if (p[i + 1] == 0x05 || p[i + 1] == 0x07 || p[i + 1] == 0x34 ||
		    p[i + 1] == 0x35)
			return END_TRANSFER;
		return END_NONE;
	}
	switch (p[i]) {
	case 0xea: case 0x9a:					/* far jmp, call */
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf:	/* ret, iret */
	case 0xcc: case 0xcd:					/* int3, int */
		return END_TRANSFER;
	case 0xff:
		if (i + 1 < size) {
			unsigned int reg = (p[i + 1] >> 3) & 7;

			if (reg >= 2 && reg <= 5)	/* indirect call, jmp */
				return END_TRANSFER;
		}
		return END_NONE;
	}
	return END_NONE;
}

static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
	uint64_t start = qemu_plugin_tb_vaddr(tb);
	uint64_t end = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
	uint64_t first_line = start >> LINE_SHIFT;
	uint64_t lines = ((end - 1) >> LINE_SHIFT) - first_line + 1;
	struct block *b = malloc(sizeof(*b) + lines * sizeof(b->line[0]));

	/*
	 * Never freed: QEMU 7.2 gives no callback when it drops a block, and
	 * blocks are retranslated rarely enough for a benchmark boot.
	 */
	if (!b) {
		fprintf(stderr, "kpgo-model: out of memory\n");
		abort();
	}
	b->start = start;
	b->fallthrough = end;
	b->branch_pc = qemu_plugin_insn_vaddr(last);
	b->end = insn_end(last, &b->target);
	b->rep_first = insn_rep_string(qemu_plugin_tb_get_insn(tb, 0));
	b->insns = n;
	b->lines = lines;
	for (uint64_t i = 0; i < lines; i++)
		b->line[i] = (first_line + i) << LINE_SHIFT;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, b);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t disp;

		/* The instruction's address, for transfer_report. */
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn));
		if (insn_marker(insn, &disp)) {
			struct marker *m = malloc(sizeof(*m));

			if (!m) {
				fprintf(stderr, "kpgo-model: out of memory\n");
				abort();
			}
			m->id = disp & KPGO_MODEL_ID_MASK;
			m->end = disp & KPGO_MODEL_END;
			m->insns_after = n - 1 - i;
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       m);
		}
	}
}

/* qemu-x86_64 makes a vCPU per guest thread. */
static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu_index)
{
	if (vcpu_index >= MAX_VCPUS) {
		fprintf(stderr, "kpgo-model: models at most %d cores; the guest started vCPU or thread %u\n",
			MAX_VCPUS, vcpu_index + 1);
		exit(1);
	}
}

static void report_untracked(qemu_plugin_id_t id, void *udata)
{
	char line[128];

	if (!directory)
		return;
	snprintf(line, sizeof(line), "kpgo-model directory lines=%" PRIu64
		 " untracked=%" PRIu64 "\n", (uint64_t)directory_used,
		 (uint64_t)directory_untracked);
	qemu_plugin_outs(line);
}

static bool core_init(struct core *c)
{
	if (!tag_array_init(&c->l1i, params.l1i_size >> LINE_SHIFT, params.l1i_ways, LINE_SHIFT) ||
	    !tag_array_init(&c->l1d, params.l1d_size >> LINE_SHIFT, params.l1d_ways, LINE_SHIFT) ||
	    !tag_array_init(&c->l2, params.l2_size >> LINE_SHIFT, params.l2_ways, LINE_SHIFT) ||
	    !tag_array_init(&c->itlb, params.itlb_entries, params.itlb_entries, 0) ||
	    !tag_array_init(&c->itlb2, params.itlb2_entries, params.itlb2_ways, 0))
		return false;
	c->gshare = malloc(1ull << params.gshare_bits);
	if (!c->gshare) {
		fprintf(stderr, "kpgo-model: out of memory\n");
		abort();
	}
	/* Weakly taken. */
	memset(c->gshare, 2, 1ull << params.gshare_bits);
	return true;
}

static void print_params(void)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "kpgo-model params");

	for (size_t i = 0; i < ARRAY_SIZE(param_names); i++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%" PRIu64,
			      param_names[i].name, *param_names[i].value);
	snprintf(line + n, sizeof(line) - n, "\n");
	qemu_plugin_outs(line);
}

static int parse_args(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *rest;
		size_t j;

		for (j = 0; eq && j < ARRAY_SIZE(param_names); j++)
			if (strlen(param_names[j].name) == (size_t)(eq - argv[i]) &&
			    !strncmp(argv[i], param_names[j].name, eq - argv[i]))
				break;
		if (!eq || j == ARRAY_SIZE(param_names)) {
			fprintf(stderr, "kpgo-model: unknown argument %s\n", argv[i]);
			return -1;
		}
		errno = 0;
		*param_names[j].value = strtoull(eq + 1, &rest, 10);
		if (eq[1] < '0' || eq[1] > '9' || *rest || errno ||
		    *param_names[j].value > (1ull << 32)) {
			fprintf(stderr, "kpgo-model: %s: not a number from 0 to 2^32\n",
				argv[i]);
			return -1;
		}
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	if (strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "kpgo-model: x86_64 guests only, not %s\n",
			info->target_name);
		return -1;
	}
	int vcpus = info->system_emulation ? info->system.max_vcpus : MAX_VCPUS;

	if (vcpus > MAX_VCPUS) {
		fprintf(stderr, "kpgo-model: models at most %d cores; run with -smp %d or fewer (not %d)\n",
			MAX_VCPUS, MAX_VCPUS, vcpus);
		return -1;
	}
	if (parse_args(argc, argv))
		return -1;
	if ((params.l1i_size | params.l1d_size | params.l2_size) & ((1 << LINE_SHIFT) - 1) ||
	    params.kernel_page_shift < PAGE_SHIFT || params.kernel_page_shift > 30) {
		fprintf(stderr, "kpgo-model: cache sizes must be multiples of 64, kernel_page_shift 12..30\n");
		return -1;
	}
	for (int i = 0; i < vcpus; i++) {
		if (params.gshare_bits < 1 || params.gshare_bits > 24 || !core_init(&cores[i])) {
			fprintf(stderr, "kpgo-model: bad sizes (sets must be a power of two, gshare_bits 1..24)\n");
			return -1;
		}
	}
	if (vcpus > 1) {
		directory = calloc(1ull << DIRECTORY_BITS, sizeof(*directory));
		if (!directory)
			return -1;
		qemu_plugin_register_atexit_cb(id, report_untracked, NULL);
	}
	for (int i = 0; params.transfer_report && directory && i < vcpus; i++) {
		cores[i].transfers.slot = calloc(1ull << TRANSFER_TABLE_BITS,
						 sizeof(*cores[i].transfers.slot));
		if (!cores[i].transfers.slot)
			return -1;
	}
	if (params.line_report) {
		line_table = calloc(1ull << LINE_TABLE_BITS, sizeof(*line_table));
		if (!line_table)
			return -1;
	}
	print_params();
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
	return 0;
}
