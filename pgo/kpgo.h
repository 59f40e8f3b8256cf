/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions kpgo's C file (glue.c) and its Rust crate
 * (kpgo.rs, runtime/) call across the language boundary.
 */
#ifndef _KERNEL_PGO_KPGO_H
#define _KERNEL_PGO_KPGO_H

#include <linux/fs.h>
#include <linux/types.h>

/* Rust: kpgo.rs. Sets up the registry, debugfs and the module notifier. */
int kpgo_init(void);

/*
 * Rust: runtime/hooks.rs. The value-profiling hooks clang's code calls:
 * the value (a call target) or size, the function's data record and the
 * value site's index. glue.c exports them to modules.
 */
void __llvm_profile_instrument_target(u64 value, void *data, u32 index);
void __llvm_profile_instrument_memop(u64 size, void *data, u32 index);

#ifdef CONFIG_PGO_CLANG_COUNTER_RELOCATION
/* C: glue.c. vmlinux's counter bias, read by compiler-generated code. */
extern u64 __llvm_profile_counter_bias;
void kpgo_wait_for_old_bias(void);
/* Rust: runtime/persist.rs. */
long kpgo_persist_counters(void *region, size_t len, u64 phys, const char *name);
void kpgo_persist_mark_end(bool panic);
/* C: glue.c, called by runtime/persist.rs. */
void kpgo_flush_range(void *start, size_t len);
u64 kpgo_wall_seconds(void);
#endif

#ifdef CONFIG_PGO_CLANG_SAMPLING_UPDATES
/* C: glue.c. The sampled share of counter updates, for stats. */
u32 kpgo_sampling_rate(u32 *recorded);
#endif

#ifdef CONFIG_PGO_CLANG_SAMPLING_ENTRY
/* C: glue.c. Entry sampling's bursts; restarts its figures on a reset. */
int kpgo_entry_init(void);
void kpgo_entry_reset(void);
#else
static inline int kpgo_entry_init(void) { return 0; }
#endif

/* C: glue.c, called by runtime/kernel_api.rs. */
struct dentry *kpgo_debugfs_create_file(const char *name, umode_t mode,
					struct dentry *parent, void *data,
					const struct file_operations *fops);
void kpgo_cond_resched(void);
int kpgo_read_section_enter(void);
void kpgo_read_section_exit(int index);
void kpgo_wait_for_read_sections(void);
bool kpgo_fatal_signal_pending(void);
size_t kpgo_inflate_workspace_size(void);
long kpgo_inflate(const void *in, size_t in_len, void *out, size_t out_len,
		  void *workspace);

struct file;
struct page;
struct vm_area_struct;
struct page *kpgo_get_page_of(const void *addr);
struct page *kpgo_alloc_zeroed_page(void);
void kpgo_put_page(struct page *page);
void *kpgo_page_address(struct page *page);
void *kpgo_vmap_pages(struct page **pages, unsigned int count);
void kpgo_vunmap(const void *addr);
void kpgo_set_file_size(struct file *file, loff_t size);
int kpgo_mmap_prepare(struct vm_area_struct *vma, unsigned long file_pages);
/* Rust: runtime/kernel_api.rs. The page of a live file at index, or NULL. */
struct page *kpgo_file_page(const void *file_pages, unsigned long index);

#ifdef CONFIG_MODULES
void kpgo_hook_enter(void);
void kpgo_hook_exit(void);
void kpgo_wait_for_readers(void);
extern const unsigned long kpgo_module_area_start;
extern const unsigned long kpgo_module_area_end;
bool kpgo_unload_warning_ratelimit(void);
#endif

#endif /* _KERNEL_PGO_KPGO_H */
