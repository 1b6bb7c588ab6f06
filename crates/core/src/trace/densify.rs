//! Mapping of sparse (process, page) pairs to dense ids, once, at load time, so that the
//! hot path indexes arrays instead of hashing (DESIGN.md, "References and traces").
//!
//! The table is our own flat open-addressing table rather than a `HashMap`: reading a
//! trace of 64-bit object ids is one lookup per record into a table far larger than the
//! cache (762,567 pages: 16 MiB), and the lookups of a batch are known in advance. With a
//! flat table the loop can ask for the slot of the record `AHEAD` ahead
//! while it probes this one, so the misses overlap (`hashbrown` has no way to prefetch
//! by key). Measured on the 10 M-reference oracleGeneral benchmark trace: README.md,
//! "Performance".

use crate::hint::{filled_huge, prefetch};

/// How many records ahead `ids` asks for a slot: further than the replay loops, as a probe
/// does little work between misses.
const AHEAD: usize = 64;

use super::PageId;

const EMPTY: PageId = PageId::MAX;

/// One entry: 16 bytes, four to a cache line.
#[derive(Debug, Clone, Copy)]
struct Slot {
    page: u64,
    pid: u32,
    /// `EMPTY` for a free slot.
    id: PageId,
}

const FREE: Slot = Slot { page: 0, pid: 0, id: EMPTY };

/// Assigns dense ids in first-touch order. One lookup per *record* (not per reference:
/// the sources fold a run of one page into one record, so a one-entry cache in front of
/// the table, which this had, saved nothing and cost a 24-byte store per record).
#[derive(Debug)]
pub struct Densifier {
    slots: Vec<Slot>,
    /// log2 of the number of slots.
    bits: u32,
    len: u32,
}

impl Default for Densifier {
    fn default() -> Self {
        Self::new()
    }
}

/// Fibonacci hashing of the pair: the multiply spreads consecutive page numbers (the
/// common case) over the whole table, and the top bits are the best mixed.
#[inline(always)]
fn hash(pid: u32, page: u64, bits: u32) -> usize {
    let k = page ^ (pid as u64).rotate_left(40);
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

impl Densifier {
    pub fn new() -> Self {
        Densifier { slots: vec![FREE; 1 << 10], bits: 10, len: 0 }
    }

    /// The slot of (pid, page): its entry, or the free slot where it would go.
    #[inline(always)]
    fn find(&self, pid: u32, page: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = hash(pid, page, self.bits);
        loop {
            let s = &self.slots[i];
            if s.id == EMPTY || (s.page == page && s.pid == pid) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table (kept at most three quarters full: with four slots to a cache
    /// line the probes stay short, and the 762,567 pages of the benchmark trace fit 16
    /// MiB instead of 32: fresh tables are zeroed by the kernel on first touch, which was
    /// a tenth of reading the trace; whole FIFO command medians 220 -> 208 ms).
    fn grow(&mut self) {
        let old = std::mem::replace(&mut self.slots, filled_huge(2 << self.bits, FREE));
        self.bits += 1;
        for s in old.into_iter().filter(|s| s.id != EMPTY) {
            let i = self.find(s.pid, s.page);
            self.slots[i] = s;
        }
    }

    /// Dense id of (pid, page), assigning the next id on first sight.
    #[inline(always)]
    pub fn id(&mut self, pid: u32, page: u64) -> PageId {
        let i = self.find(pid, page);
        match self.slots[i].id {
            EMPTY => self.insert(i, pid, page),
            id => id,
        }
    }

    /// Assigns the next id to (pid, page), whose free slot is `i`: once per page, so kept
    /// out of the lookup loop.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, mut i: usize, pid: u32, page: u64) -> PageId {
        if 4 * (self.len as usize + 1) > 3 * self.slots.len() {
            self.grow();
            i = self.find(pid, page);
        }
        let id = self.len;
        self.slots[i] = Slot { page, pid, id };
        self.len += 1;
        id
    }

    /// `id(pid[i], page[i])` for every i, in order, into `ids` (the same ids, faster: the
    /// slot of a record a few ahead is fetched while this one is probed).
    pub fn ids(&mut self, pid: &[u32], page: &[u64], ids: &mut [PageId]) {
        let n = ids.len();
        debug_assert!(pid.len() == n && page.len() == n);
        for i in 0..n {
            let j = i + AHEAD;
            if j < n {
                prefetch(&self.slots, hash(pid[j], page[j], self.bits));
            }
            ids[i] = self.id(pid[i], page[i]);
        }
    }

    /// The id of (pid, page) if it has one (no id is assigned).
    pub fn get(&self, pid: u32, page: u64) -> Option<PageId> {
        let s = &self.slots[self.find(pid, page)];
        (s.id != EMPTY).then_some(s.id)
    }

    /// Number of ids assigned so far.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// First-touch order, the definition the table must keep.
    fn reference(keys: &[(u32, u64)]) -> Vec<PageId> {
        let mut m = HashMap::new();
        keys.iter()
            .map(|k| {
                let n = m.len() as PageId;
                *m.entry(*k).or_insert(n)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn ids_are_first_touch_order(keys in prop::collection::vec((0u32..3, prop_oneof![0u64..5000, any::<u64>()]), 0..6000)) {
            let want = reference(&keys);
            let mut one = Densifier::new();
            let got: Vec<PageId> = keys.iter().map(|&(p, g)| one.id(p, g)).collect();
            prop_assert_eq!(&got, &want);
            let (pids, pages): (Vec<u32>, Vec<u64>) = keys.iter().copied().unzip();
            let mut batch = Densifier::new();
            let mut ids = vec![0; keys.len()];
            // two calls, so that a batch starts with a table already grown
            let half = keys.len() / 2;
            batch.ids(&pids[..half], &pages[..half], &mut ids[..half]);
            batch.ids(&pids[half..], &pages[half..], &mut ids[half..]);
            prop_assert_eq!(&ids, &want);
            prop_assert_eq!(batch.len() as usize, want.iter().max().map_or(0, |m| *m as usize + 1));
            for (&(p, g), &id) in keys.iter().zip(&want) {
                prop_assert_eq!(batch.get(p, g), Some(id));
            }
        }
    }

    #[test]
    fn unseen_pairs_have_no_id_and_pids_are_kept_apart() {
        let mut d = Densifier::new();
        assert_eq!(d.id(0, 7), 0);
        assert_eq!(d.id(1, 7), 1);
        assert_eq!(d.id(0, u64::MAX), 2);
        assert_eq!(d.get(2, 7), None);
        assert_eq!(d.get(1, 7), Some(1));
        assert_eq!(d.len(), 3);
    }
}
