// SPDX-License-Identifier: GPL-2.0

//! A sort for the kernel's paths: in place, no allocation, no panic path.
//!
//! `core`'s sorts have a panic path, which objtool does not know as
//! `noreturn` in the kernel.

/// Sorts `items` by `key`, ascending: a heapsort (not stable).
pub fn heapsort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    let sift_down = |heap: &mut [T], mut root: usize| loop {
        let mut child = 2 * root + 1;
        let (Some(left), right) = (heap.get(child), heap.get(child + 1)) else {
            return;
        };
        if let Some(right) = right {
            if key(left) < key(right) {
                child += 1;
            }
        }
        match (heap.get(root), heap.get(child)) {
            (Some(parent), Some(larger)) if key(parent) < key(larger) => {}
            _ => return,
        }
        heap.swap(root, child);
        root = child;
    };
    for root in (0..items.len() / 2).rev() {
        sift_down(items, root);
    }
    for end in (1..items.len()).rev() {
        items.swap(0, end);
        if let Some(heap) = items.get_mut(..end) {
            sift_down(heap, 0);
        }
    }
}
