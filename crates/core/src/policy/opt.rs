//! OPT (Belady 1966, MIN): evict the resident page whose next reference is farthest in
//! the future. The future comes from a pre-pass that gives, for every record index, the
//! index of the next record that touches the same page ([`next_use_times`]).
//!
//! Resident pages sit in a max-heap keyed by next use. A reference pushes the page's
//! new key; the old entry goes stale and is skipped when popped (its key no longer
//! equals the page's current key). The heap is compacted when stale entries outnumber
//! live ones, so memory stays O(frames) and each reference costs O(log frames).

use std::collections::BinaryHeap;

use super::ReplacementPolicy;
use crate::trace::{has_frees, AccessKind, PageId};

/// Next-use time of a record whose page is never touched again.
pub const NEVER: u32 = u32::MAX;

/// Key 0 marks a page that is not resident (no record's next use can be 0).
const NOT_RESIDENT: u32 = 0;

/// For each record index `t` of `ids`, the index of the next record with the same id,
/// or [`NEVER`]. `pages` bounds the ids. One backward pass: the output is written in
/// order and only the per-page `following` array is accessed at random.
///
/// `kinds` (empty, or one per id) marks free records: a page freed before its next
/// touch is not used again (its next touch is a new, zero-filled page), so the records
/// before a free get [`NEVER`], and so does the free itself.
pub fn next_use_times(ids: &[PageId], kinds: &[AccessKind], pages: usize) -> Vec<u32> {
    debug_assert!(kinds.is_empty() || kinds.len() == ids.len());
    let mut next = vec![NEVER; ids.len()];
    let mut following = vec![NEVER; pages];
    let frees = !kinds.is_empty() && has_frees(kinds);
    for t in (0..ids.len()).rev() {
        let id = ids[t] as usize;
        if id >= following.len() {
            following.resize(id + 1, NEVER);
        }
        if frees && kinds[t] == AccessKind::Free {
            following[id] = NEVER;
            continue;
        }
        next[t] = following[id];
        following[id] = t as u32;
    }
    next
}

#[derive(Debug)]
pub struct Opt {
    next_use: std::sync::Arc<Vec<u32>>,
    heap: BinaryHeap<(u32, PageId)>,
    key: Vec<u32>,
    resident: usize,
}

impl Opt {
    /// `next_use[t]` for every record index `t` of the stream this policy will see.
    pub fn new(next_use: std::sync::Arc<Vec<u32>>) -> Self {
        Opt { next_use, heap: BinaryHeap::new(), key: Vec::new(), resident: 0 }
    }

    #[inline]
    fn push(&mut self, page: PageId, time: u64) {
        let k = self.next_use[time as usize];
        self.key[page as usize] = k;
        self.heap.push((k, page));
        // compact when stale entries outnumber live ones three to one: amortised O(1)
        if self.heap.len() > 4 * self.resident + 1024 {
            let key = &self.key;
            self.heap.retain(|&(k, p)| key[p as usize] == k);
        }
    }
}

impl ReplacementPolicy for Opt {
    fn name(&self) -> &'static str {
        "opt"
    }
    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.key.len() {
            self.key.resize(pages, NOT_RESIDENT);
        }
    }
    #[inline]
    fn on_hit(&mut self, page: PageId, time: u64) {
        self.push(page, time);
    }
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {
        // the next use after a record is the next record of the page: unchanged
    }
    #[inline]
    fn on_insert(&mut self, page: PageId, time: u64) {
        self.resident += 1;
        self.push(page, time);
    }
    fn select_victim(&mut self, _time: u64) -> PageId {
        while let Some((k, page)) = self.heap.pop() {
            if self.key[page as usize] == k {
                self.key[page as usize] = NOT_RESIDENT;
                self.resident -= 1;
                return page;
            }
        }
        panic!("select_victim with no resident page")
    }
    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.key, page as usize);
    }
    fn on_remove(&mut self, page: PageId) {
        self.key[page as usize] = NOT_RESIDENT;
        self.resident -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_use_of_a_small_stream() {
        assert_eq!(next_use_times(&[0, 1, 0, 2, 1, 0], &[], 3), vec![2, 4, 5, NEVER, NEVER, NEVER]);
        // a free of page 0 at 2: the touch at 0 is its last use; the one at 3 starts anew
        use AccessKind::{Free, Read};
        assert_eq!(
            next_use_times(&[0, 1, 0, 0, 1, 0], &[Read, Read, Free, Read, Read, Read], 2),
            vec![NEVER, 4, NEVER, 5, NEVER, NEVER]
        );
    }
}
