// SPDX-License-Identifier: GPL-2.0

//! Value profiling: indirect-call targets and memop sizes.
//!
//! The compiler gives every function with value sites an array of list
//! heads (`__llvm_prf_vals`, named by the data record's `Values` field) and
//! every object a zeroed pool of nodes (`__llvm_prf_vnds`). The hooks keep,
//! per site, a singly linked list of `{value, count}` nodes.
//!
//! The hooks run in any context (interrupts, NMI, with locks held), so they
//! take no lock, allocate nothing and call nothing that could be
//! instrumented. Nodes come from the pool of the object that owns the
//! calling function, by an atomic cursor; lists only ever grow at the tail
//! (by compare-and-swap) and a node never leaves its site, so concurrent
//! walkers, reset and the writer need no lock either.
//!
//! What the lists and counts promise under contention, the same as
//! compiler-rt's runtime and as the compiler's own counters: a count is
//! incremented by a plain (atomic, relaxed) load and store, not a locked
//! read-modify-write, because the hooks sit on every indirect call and memop
//! of the kernel and a locked add costs them about a third more (see `make
//! bench`). So:
//! - no value is ever recorded that was not seen;
//! - a site never lists more values than its limit;
//! - at a site that has never been full, no value is listed twice: CPUs
//!   that append at the same time meet at the tail, and the loser of the
//!   compare-and-swap walks on from the winner's node (but for retired
//!   addresses: [`ProfiledObject::rename_values`]);
//! - once a site is full, a value may be listed twice: two CPUs evicting at
//!   the same time for the same new value may replace two different
//!   victims. `llvm-profdata` (19) reads such a site as it is: both
//!   entries stay, in `show` and after `merge` (which pairs equal values
//!   one to one when it adds profiles), so the site's total is right and
//!   the value's calls are split over two entries;
//! - below the per-site limit every value seen is listed, unless the pool
//!   is exhausted (each such value is counted in `dropped`);
//! - a count never exceeds the calls that saw its value;
//! - increments of one value by CPUs at the same instant may be lost
//!   (single-threaded, counts are exact);
//! - once a site is full, the eviction step can lose a call when it races.
//!
//! # Reset
//!
//! A reset never writes a count: it records each node's count as the
//! node's baseline ([`NodePool::restart_counts`]), and what is reported is
//! the count minus its baseline ([`NodePool::count_of`]). A reset that
//! stored 0 would race with the hooks' plain load and store: a hook that
//! loaded a count before the reset and stored it after would write the
//! whole count from before the reset back. With baselines, a call racing
//! with a reset is counted before it or after it, and nothing else moves;
//! the hooks' path is unchanged (only the reset, the writer and the cold
//! eviction path read the baselines). The baselines are one `u64` per
//! node, memory of the runtime's own that its owner attaches
//! ([`NodePool::attach_baselines`]); an object without them cannot be
//! reset.
//!
//! Counts wrap at 2^64 rather than check for overflow: no panic path on a
//! hook that runs in NMI context.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::format::{
    memop_size_bucket, Layout, DEFAULT_VALUES_PER_SITE, LAYOUT_V10, LAYOUT_V11, MAX_VALUES_PER_SITE,
};
use super::sections::{DataRecord, ProfiledObject, SectionRange};

/// One recorded value: `ValueProfNode` of compiler-rt, in the compiler's
/// node pool.
#[repr(C)]
pub struct ValueNode {
    value: AtomicU64,
    count: AtomicU64,
    next: ValueNodeLink,
}

impl ValueNode {
    /// The recorded value.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }

    /// How often it was seen since its node was taken, resets not
    /// subtracted: [`NodePool::count_of`] is the count since the last
    /// reset.
    #[inline(always)]
    pub fn raw_count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The next node of the same site.
    pub fn next(&self) -> Option<&ValueNode> {
        self.next.load()
    }

    /// Counts one more call: a plain load and store, not a locked
    /// read-modify-write (see the module's documentation).
    #[inline(always)]
    fn count_one(&self) {
        self.count
            .store(self.raw_count().wrapping_add(1), Ordering::Relaxed);
    }
}

/// The size of a node: a constant, so that dividing by it has no
/// division-by-zero check (the hooks divide by it).
const NODE_SIZE: usize = core::mem::size_of::<ValueNode>();

/// A link to a node: a site's list head or a node's `next` field.
#[repr(transparent)]
pub struct ValueNodeLink(AtomicPtr<ValueNode>);

impl ValueNodeLink {
    /// The node linked here, if any.
    #[inline(always)]
    pub fn load(&self) -> Option<&ValueNode> {
        // SAFETY: links only ever hold null or nodes of the owning object's
        // pool, fully initialised before being published with `Release`.
        unsafe { self.0.load(Ordering::Acquire).as_ref() }
    }

    /// Links `node` here if the link is still empty.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn link(&self, node: &ValueNode) -> bool {
        self.0
            .compare_exchange(
                ptr::null_mut(),
                core::ptr::from_ref(node).cast_mut(),
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

/// The bytes of a cache line (x86-64's L1_CACHE_BYTES).
const CACHE_LINE: usize = 64;

/// Padding that keeps an 8-byte-aligned word alone in its cache line.
const LINE_PADDING: usize = CACHE_LINE - core::mem::align_of::<AtomicU64>();

/// A pool's count of dropped values, alone in its cache line wherever the
/// pool is: once the pool is exhausted, every value it misses writes the
/// count, which must not take from other CPUs the line of fields that every
/// hook reads (the record counts, the data section's address). Padding
/// rather than `align(64)`, so that descriptors stay 8-byte aligned (they
/// are built on the stack and embedded in the runtime's structures).
#[repr(C)]
struct DropCount {
    _before: [u8; LINE_PADDING],
    count: AtomicU64,
    _after: [u8; LINE_PADDING],
}

impl DropCount {
    const fn new() -> Self {
        Self {
            _before: [0; LINE_PADDING],
            count: AtomicU64::new(0),
            _after: [0; LINE_PADDING],
        }
    }
}

/// The value-node pool of one object, handed out by an atomic cursor.
///
/// # Invariants
///
/// Once non-null (set once, by [`Self::attach_baselines`]), `baselines`
/// points to `capacity()` `AtomicU64`s that stay valid and are accessed
/// only through atomics while the pool is used.
pub struct NodePool {
    nodes: SectionRange,
    next: AtomicUsize,
    dropped: DropCount,
    values_per_site: AtomicU32,
    /// Null, or [`Self::capacity`] baselines, one per node: what the
    /// node's count was at the last reset.
    baselines: AtomicPtr<AtomicU64>,
}

impl NodePool {
    pub(crate) const fn new(nodes: SectionRange) -> Self {
        Self {
            nodes,
            next: AtomicUsize::new(0),
            dropped: DropCount::new(),
            values_per_site: AtomicU32::new(DEFAULT_VALUES_PER_SITE),
            baselines: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Gives the pool its baselines, which resets need (see the module's
    /// documentation); false if it has some already.
    ///
    /// # Safety
    ///
    /// `baselines` points to [`Self::capacity`] zeroed `AtomicU64`s that
    /// stay valid, and are accessed only through atomics, for as long as
    /// the pool is used.
    pub unsafe fn attach_baselines(&self, baselines: *mut AtomicU64) -> bool {
        // INVARIANT: the caller's contract; set once.
        self.baselines
            .compare_exchange(
                ptr::null_mut(),
                baselines,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// The baseline of `node`, a node of this pool: 0 without baselines.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn baseline(&self, node: &ValueNode) -> &AtomicU64 {
        static NONE: AtomicU64 = AtomicU64::new(0);
        let baselines = self.baselines.load(Ordering::Acquire);
        let index = (core::ptr::from_ref(node) as usize).wrapping_sub(self.nodes.start() as usize)
            / NODE_SIZE;
        if baselines.is_null() || index >= self.capacity() {
            return &NONE;
        }
        // SAFETY: `index` is below the capacity, which is the number of
        // baselines (type invariant).
        unsafe { &*baselines.add(index) }
    }

    /// The count of `node` (a node of this pool) since the last reset.
    /// A count that an eviction racing with a reset left below its
    /// baseline reads as 0.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn count_of(&self, node: &ValueNode) -> u64 {
        node.raw_count()
            .saturating_sub(self.baseline(node).load(Ordering::Relaxed))
    }

    /// A reset of every count: each node's baseline becomes its count.
    /// False, and nothing changes, if the pool has no baselines.
    pub(crate) fn restart_counts(&self) -> bool {
        if self.baselines.load(Ordering::Acquire).is_null() {
            return false;
        }
        let first = self.nodes.start().cast::<ValueNode>();
        for index in 0..self.used() {
            // SAFETY: `index` is below the nodes handed out, so inside the
            // pool (contract of `ProfiledObject::new`).
            let node = unsafe { &*first.wrapping_add(index) };
            self.baseline(node)
                .store(node.raw_count(), Ordering::Relaxed);
        }
        true
    }

    /// Nodes the pool holds. A trailing partial node (section padding) is
    /// not one.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn capacity(&self) -> usize {
        self.nodes.len() / NODE_SIZE
    }

    /// Nodes handed out so far.
    pub fn used(&self) -> usize {
        self.next.load(Ordering::Relaxed).min(self.capacity())
    }

    /// Values that found no room: no free node, or in a merge a full site.
    pub fn dropped(&self) -> u64 {
        self.dropped.count.load(Ordering::Relaxed)
    }

    /// Counts a value that found no room.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn drop_one(&self) {
        self.dropped.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes a zeroed node, or counts a drop when the pool is exhausted.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn take(&self) -> Option<&ValueNode> {
        let capacity = self.capacity();
        // Checking first keeps the cursor from running away (and wrapping)
        // once the pool is exhausted.
        if self.next.load(Ordering::Relaxed) >= capacity {
            self.drop_one();
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        if index >= capacity {
            self.drop_one();
            return None;
        }
        let node = self.nodes.start().cast::<ValueNode>().wrapping_add(index);
        // The pool is zeroed and aligned (contract of `ProfiledObject::new`);
        // the cursor hands each index out once.
        // SAFETY: `index < capacity`, so the node lies inside the pool.
        Some(unsafe { &*node })
    }
}

impl ProfiledObject {
    /// Gives the object's node pool its reset baselines, one per node
    /// ([`Self::node_capacity`] of them); false if it has some already.
    ///
    /// # Safety
    ///
    /// As for [`NodePool::attach_baselines`].
    pub unsafe fn attach_baselines(&self, baselines: *mut AtomicU64) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.pool.attach_baselines(baselines) }
    }

    /// How many nodes the object's pool holds.
    pub fn node_capacity(&self) -> usize {
        self.pool.capacity()
    }

    /// Renames every listed value that lies in `gone` (an address range
    /// of code that goes) to `rename(value)`; returns how many. A value
    /// in `gone` can only be an indirect-call target: memop values are
    /// sizes, below any code address.
    ///
    /// The hooks only compare a node's value; an eviction stores a new one
    /// (after winning the node's count), and the rename is a
    /// compare-and-swap from the value it read, so it never undoes an
    /// eviction: whichever comes last holds a value that was seen. A call
    /// that matched the old value counts on the node (it went to the
    /// function that is going), and a call to the address after the
    /// rename lists a value of its own, so a site may then list one
    /// function's retired address twice (the counts add in a merge).
    /// Nodes are never freed, so the walk needs no lock.
    pub fn rename_values(
        &self,
        gone: &core::ops::Range<u64>,
        mut rename: impl FnMut(u64) -> u64,
    ) -> usize {
        let first = self.pool.nodes.start().cast::<ValueNode>();
        let mut renamed = 0;
        for index in 0..self.pool.used() {
            // SAFETY: `index` is below the nodes handed out, so inside the
            // pool (contract of `ProfiledObject::new`).
            let node = unsafe { &*first.wrapping_add(index) };
            let value = node.value();
            if gone.contains(&value)
                && node
                    .value
                    .compare_exchange(value, rename(value), Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                renamed += 1;
            }
        }
        renamed
    }

    /// Sets how many distinct values a site keeps (at most 255, the
    /// format's limit); further values evict the least frequent one.
    pub fn set_values_per_site(&self, limit: u32) {
        self.pool
            .values_per_site
            .store(limit.clamp(1, MAX_VALUES_PER_SITE), Ordering::Relaxed);
    }

    /// The per-site value limit.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn values_per_site(&self) -> u32 {
        self.pool.values_per_site.load(Ordering::Relaxed)
    }

    /// `__llvm_profile_instrument_target`: records `value` at value site
    /// `site` of the data record at `record`. Calls for records this object
    /// does not own, or for sites the record does not have, are ignored.
    /// Returns whether `record` is one of this object's records, which
    /// proves ownership as well as any range lookup would.
    #[inline(always)]
    pub fn record_target(&self, record: usize, site: u32, value: u64) -> bool {
        self.record_target_checked(record, site, value)
            || self.record_target_if_unchecked(record, site, value)
    }

    /// The rest of [`Self::record_target`] after
    /// [`Self::record_target_checked`] returned false: checks the version
    /// word and records, if that was not done yet; false otherwise (then
    /// `record` is not a record of this object).
    #[inline(always)]
    pub fn record_target_if_unchecked(&self, record: usize, site: u32, value: u64) -> bool {
        // Out of line, so that the hot path saves no registers.
        !self.hook_checked() && self.record_target_first(record, site, value)
    }

    /// [`Self::record_target`] before the version word is checked.
    #[cold]
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn record_target_first(&self, record: usize, site: u32, value: u64) -> bool {
        self.check_hook_version();
        self.record_target_checked(record, site, value)
    }

    /// [`Self::record_target`] once the version word is checked; false if
    /// `record` is not a record of this object, and for every record until
    /// the version word is checked ([`Self::record_target_if_unchecked`]
    /// does the rest).
    #[inline(always)]
    pub fn record_target_checked(&self, record: usize, site: u32, value: u64) -> bool {
        // One copy of the path per layout, so that offsets and the record
        // size are constants on the hooks' path. Only the version word's
        // layout has a count: a version 11 (or, in the host library, 8)
        // count decides for its layout, otherwise the word is version 10's
        // count (or 0). One shift tests each.
        let accepted = self.hook_records();
        #[cfg(not(CONFIG_PGO_CLANG))]
        {
            let v8 = &super::format::LAYOUT_V8;
            let v8_records = accepted.of(v8);
            if v8_records != 0 {
                return self.record_in(v8, v8_records, record, site, value);
            }
        }
        let v11_records = accepted.of(&LAYOUT_V11);
        if v11_records != 0 {
            return self.record_in(&LAYOUT_V11, v11_records, record, site, value);
        }
        self.record_in(&LAYOUT_V10, accepted.of(&LAYOUT_V10), record, site, value)
    }

    /// [`Self::record_target_checked`] for an object whose version word is
    /// known to have `layout`: tests no other layout. If the word has
    /// another layout, no record is found (false), as for a record of
    /// another object.
    #[inline(always)]
    pub fn record_target_checked_as(
        &self,
        layout: &'static Layout,
        record: usize,
        site: u32,
        value: u64,
    ) -> bool {
        self.record_in(layout, self.hook_records().of(layout), record, site, value)
    }

    /// Records `value` if `record` is one of the first `records` data
    /// records of `layout` in this object; false if it is not.
    #[inline(always)]
    fn record_in(
        &self,
        layout: &'static Layout,
        records: usize,
        record: usize,
        site: u32,
        value: u64,
    ) -> bool {
        if self.record_index(layout, records, record).is_none() {
            return false;
        }
        if let Some(head) = DataRecord::at(record, layout).site_head(site as usize) {
            self.record_at(head, value);
        }
        true
    }

    /// `__llvm_profile_instrument_memop`: records the size bucket of `size`.
    /// Returns whether `record` is one of this object's records.
    #[inline(always)]
    pub fn record_memop(&self, record: usize, site: u32, size: u64) -> bool {
        self.record_target(record, site, memop_size_bucket(size))
    }

    /// Counts `value` in the list starting at `head`.
    #[inline(always)]
    fn record_at(&self, head: &ValueNodeLink, value: u64) {
        // Nearly every call finds its value listed: that walk is all the
        // hot path does. Listing and eviction are out of line. The first
        // node, the most frequent hit, is tested before the loop, so that
        // its branch has its own predictor entries (`make bench`: 4 to 8%
        // off the indirect-call loop; `-Os` builds fold it back).
        if let Some(first) = head.load() {
            if first.value() == value {
                return first.count_one();
            }
            let mut link = &first.next;
            while let Some(node) = link.load() {
                if node.value() == value {
                    return node.count_one();
                }
                link = &node.next;
            }
        }
        self.add_value(head, value);
    }

    /// Adds `count` calls of `value` at the site of `head`, to the node that
    /// lists it or to a new one; false, and nothing listed, if the site
    /// holds the per-site limit of values already or the pool is exhausted
    /// (counted as dropped). For a merge into a saved profile
    /// (`saved::merge`), which has one writer at a time.
    pub fn add_count(&self, head: &ValueNodeLink, value: u64, count: u64) -> bool {
        let limit = self.values_per_site() as usize;
        let mut link = head;
        let mut listed = 0usize;
        while let Some(node) = link.load() {
            if node.value() == value {
                node.count
                    .store(node.raw_count().wrapping_add(count), Ordering::Relaxed);
                return true;
            }
            listed = listed.wrapping_add(1);
            link = &node.next;
        }
        if listed >= limit {
            self.pool.drop_one();
            return false;
        }
        let Some(node) = self.pool.take() else {
            return false;
        };
        node.value.store(value, Ordering::Relaxed);
        node.count.store(count, Ordering::Relaxed);
        link.link(node)
    }

    /// Lists `value` at the site of `head`, or evicts for it if the site is
    /// full. Walks again from `head`: another CPU may have listed `value`
    /// meanwhile.
    #[cold]
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn add_value(&self, head: &ValueNodeLink, value: u64) {
        let limit = self.values_per_site() as usize;
        let mut link = head;
        let mut listed = 0usize;
        let mut fresh: Option<&ValueNode> = None;
        loop {
            // Walk to the tail, counting `value` if it is already listed.
            while let Some(node) = link.load() {
                if node.value() == value {
                    // If another CPU listed `value` first, a node we took
                    // stays unlinked: one pool node is lost, no count is.
                    return node.count_one();
                }
                listed = listed.wrapping_add(1);
                link = &node.next;
            }
            if listed >= limit {
                if let Some(victim) = self.pool.least_frequent(head) {
                    self.pool.evict(victim, value);
                }
                return;
            }
            let node = match fresh {
                Some(node) => node,
                None => {
                    let Some(node) = self.pool.take() else {
                        return;
                    };
                    node.value.store(value, Ordering::Relaxed);
                    node.count.store(1, Ordering::Relaxed);
                    fresh = Some(node);
                    node
                }
            };
            if link.link(node) {
                return;
            }
            // Another CPU appended first; continue the walk from its node.
        }
    }
}

impl NodePool {
    /// The first node with the smallest count, as compiler-rt picks it.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn least_frequent<'a>(&self, head: &'a ValueNodeLink) -> Option<&'a ValueNode> {
        let mut least: Option<(&ValueNode, u64)> = None;
        let mut node = head.load();
        while let Some(current) = node {
            let count = self.count_of(current);
            // A match, not `Option::is_none_or` (Rust 1.82): the kernel's
            // minimum Rust is older.
            let fewer = match least {
                None => true,
                Some((_, least_count)) => count < least_count,
            };
            if fewer {
                least = Some((current, count));
            }
            node = current.next();
        }
        least.map(|(node, _)| node)
    }

    /// The full-site policy of compiler-rt: the least frequent value loses
    /// one count, and is replaced by `value` once it has none left. Hot
    /// values stay; a cold newcomer needs as many calls as the weakest entry
    /// to get in. Counts are those since the last reset: a replacement
    /// starts at the baseline plus one.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn evict(&self, victim: &ValueNode, value: u64) {
        let raw = victim.raw_count();
        let baseline = self.baseline(victim).load(Ordering::Relaxed);
        if raw.saturating_sub(baseline) <= 1 {
            // Replace only if no other CPU changed the count meanwhile.
            if victim
                .count
                .compare_exchange(
                    raw,
                    baseline.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                victim.value.store(value, Ordering::Relaxed);
            }
        } else {
            // One attempt: a lost race loses this call, never underflows.
            let _ = victim.count.compare_exchange(
                raw,
                raw.wrapping_sub(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use core::mem::size_of;
    use core::ptr::addr_of_mut;

    use super::*;
    use crate::profile::format::variant;
    use crate::profile::sections::Sections;
    use crate::profile::writer::{profile_size_bound, serialize};

    /// Value nodes of the test object's pool.
    const NODES: usize = 4;

    /// The memory of an object with one raw version 10 record of two
    /// indirect-call sites, no counters and a pool of [`NODES`] nodes.
    #[repr(C, align(8))]
    struct Memory {
        version: u64,
        record: [u8; 64],
        heads: [usize; 2],
        nodes: [u8; NODES * NODE_SIZE],
    }

    // A hook takes a node, the bound is computed, then the hook links the
    // node (at a site the measuring pass went past) and the pool fills up:
    // the profile still fits in the bound.
    #[test]
    fn the_bound_holds_for_a_node_taken_before_it_and_linked_after() {
        let mut memory = Memory {
            version: variant::IR_PROF | 10,
            record: [0; 64],
            heads: [0; 2],
            nodes: [0; NODES * NODE_SIZE],
        };
        let heads = addr_of_mut!(memory.heads);
        // `Values` at 40, the indirect-call site count at 52.
        memory.record[40..48].copy_from_slice(&(heads as u64).to_ne_bytes());
        memory.record[52..54].copy_from_slice(&2u16.to_ne_bytes());
        let record = addr_of_mut!(memory.record).cast::<u8>();
        let sections = Sections {
            data: SectionRange::from_len(record, 64),
            values: SectionRange::from_len(heads.cast(), size_of::<[usize; 2]>()),
            vnodes: SectionRange::from_len(addr_of_mut!(memory.nodes).cast(), NODES * NODE_SIZE),
            ..Sections::EMPTY
        };
        // `memory` holds what the compiler would emit for one record: a
        // `Values` pointer to its two zeroed heads, a zeroed and aligned
        // pool, a valid version word.
        // SAFETY: as just said; `memory` outlives `object`, and nothing else
        // touches it while `object` is used.
        let object = unsafe { ProfiledObject::new(sections, addr_of_mut!(memory.version)) };
        let record = record as usize;

        // `add_value`'s steps, with the bound computed in between.
        let node = object.pool.take().unwrap();
        node.value.store(7, Ordering::Relaxed);
        node.count.store(1, Ordering::Relaxed);
        let bound = profile_size_bound(&object).unwrap();
        // SAFETY: `heads` points to the object's first site head, which
        // is accessed only through atomics.
        assert!(unsafe { &*heads.cast::<ValueNodeLink>() }.link(node));
        for value in 8..8 + NODES as u64 - 1 {
            object.record_target(record, 1, value);
        }
        assert_eq!(object.pool.used(), NODES);

        let mut buf = [0u8; 1024];
        let written = serialize(&object, &mut buf[..bound]);
        assert!(written.is_ok(), "bound {bound}: {written:?}");
    }
}
