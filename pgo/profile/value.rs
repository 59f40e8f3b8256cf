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
//! What the counts promise under contention: below the per-site limit every
//! call is counted exactly once (the count is an atomic add, and two CPUs
//! appending the same new value meet at the tail, where the loser counts on
//! the winner's node). A call is lost only when the pool is exhausted
//! (counted in `dropped`) or, once a site is full, when the eviction step
//! races with another CPU. No value is ever counted more often than it was
//! seen, and no value that was not seen is ever recorded.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::format::{memop_size_bucket, DEFAULT_VALUES_PER_SITE, MAX_VALUES_PER_SITE};
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
    pub fn value(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }

    /// How often it was seen.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The next node of the same site.
    pub fn next(&self) -> Option<&ValueNode> {
        self.next.load()
    }

    pub(crate) fn clear_count(&self) {
        self.count.store(0, Ordering::Relaxed);
    }
}

/// A link to a node: a site's list head or a node's `next` field.
#[repr(transparent)]
pub struct ValueNodeLink(AtomicPtr<ValueNode>);

impl ValueNodeLink {
    /// The node linked here, if any.
    pub fn load(&self) -> Option<&ValueNode> {
        // SAFETY: links only ever hold null or nodes of the owning object's
        // pool, fully initialised before being published with `Release`.
        unsafe { self.0.load(Ordering::Acquire).as_ref() }
    }

    /// Links `node` here if the link is still empty.
    fn link(&self, node: &ValueNode) -> bool {
        self.0
            .compare_exchange(
                ptr::null_mut(),
                node as *const ValueNode as *mut ValueNode,
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

/// The value-node pool of one object, handed out by an atomic cursor.
pub struct NodePool {
    nodes: SectionRange,
    next: AtomicUsize,
    dropped: AtomicU64,
    values_per_site: AtomicU32,
}

impl NodePool {
    pub(crate) const fn new(nodes: SectionRange) -> Self {
        Self {
            nodes,
            next: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            values_per_site: AtomicU32::new(DEFAULT_VALUES_PER_SITE),
        }
    }

    /// Nodes the pool holds. A trailing partial node (section padding) is
    /// not one.
    pub fn capacity(&self) -> usize {
        self.nodes.len() / core::mem::size_of::<ValueNode>()
    }

    /// Nodes handed out so far.
    pub fn used(&self) -> usize {
        self.next.load(Ordering::Relaxed).min(self.capacity())
    }

    /// Values that found no free node.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Takes a zeroed node, or counts a drop when the pool is exhausted.
    fn take(&self) -> Option<&ValueNode> {
        let capacity = self.capacity();
        // Checking first keeps the cursor from running away (and wrapping)
        // once the pool is exhausted.
        if self.next.load(Ordering::Relaxed) >= capacity {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        if index >= capacity {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let node = self.nodes.start().cast::<ValueNode>().wrapping_add(index);
        // SAFETY: `index < capacity`, so the node lies inside the pool,
        // which is zeroed and aligned (contract of `ProfiledObject::new`);
        // the cursor hands each index out once.
        Some(unsafe { &*node })
    }
}

impl ProfiledObject {
    /// Sets how many distinct values a site keeps (at most 255, the
    /// format's limit); further values evict the least frequent one.
    pub fn set_values_per_site(&self, limit: u32) {
        self.pool
            .values_per_site
            .store(limit.clamp(1, MAX_VALUES_PER_SITE), Ordering::Relaxed);
    }

    /// The per-site value limit.
    pub fn values_per_site(&self) -> u32 {
        self.pool.values_per_site.load(Ordering::Relaxed)
    }

    /// `__llvm_profile_instrument_target`: records `value` at value site
    /// `site` of the data record at `record`. Calls for records this object
    /// does not own, or for sites the record does not have, are ignored.
    #[inline]
    pub fn record_target(&self, record: usize, site: u32, value: u64) {
        let Ok(version) = self.version() else {
            return;
        };
        if !self.owns_record(&version, record) {
            return;
        }
        if let Some(head) = DataRecord::at(record, version).site_head(site as usize) {
            self.record_at(head, value);
        }
    }

    /// `__llvm_profile_instrument_memop`: records the size bucket of `size`.
    #[inline]
    pub fn record_memop(&self, record: usize, site: u32, size: u64) {
        self.record_target(record, site, memop_size_bucket(size));
    }

    /// Counts `value` in the list starting at `head`.
    fn record_at(&self, head: &ValueNodeLink, value: u64) {
        let limit = self.values_per_site() as usize;
        let mut link = head;
        let mut listed = 0;
        let mut least: Option<&ValueNode> = None;
        let mut fresh: Option<&ValueNode> = None;
        loop {
            // Walk to the tail, counting `value` if it is already listed.
            while let Some(node) = link.load() {
                if node.value() == value {
                    // If another CPU listed `value` first, a node we took
                    // stays unlinked: one pool node is lost, no count is.
                    node.count.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                if least.is_none_or(|l| node.count() < l.count()) {
                    least = Some(node);
                }
                listed += 1;
                link = &node.next;
            }
            if listed >= limit {
                if let Some(victim) = least {
                    evict(victim, value);
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

/// The full-site policy of compiler-rt: the least frequent value loses one
/// count, and is replaced by `value` once it has none left. Hot values stay;
/// a cold newcomer needs as many calls as the weakest entry to get in.
fn evict(victim: &ValueNode, value: u64) {
    let count = victim.count();
    if count <= 1 {
        // Replace only if no other CPU changed the count meanwhile.
        if victim
            .count
            .compare_exchange(count, 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            victim.value.store(value, Ordering::Relaxed);
        }
    } else {
        // One attempt: a lost race loses this call, never underflows.
        let _ =
            victim
                .count
                .compare_exchange(count, count - 1, Ordering::Relaxed, Ordering::Relaxed);
    }
}
