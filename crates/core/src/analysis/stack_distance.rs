//! LRU stack distances (Mattson, Gecsei, Slutz, Traiger 1970) and from them the exact
//! LRU fault count at every memory size, in one pass.
//!
//! LRU is a stack algorithm: a reference hits in memory of `s` frames exactly when its
//! stack distance (the number of distinct pages touched since the previous reference to
//! the same page, itself included) is at most `s`. The distance is found in O(log n)
//! with a Fenwick tree over time: each page keeps a marker at the time of its last
//! reference; the distance is the number of markers at or after that time. Times are
//! renumbered when they run out of room, so the tree stays O(distinct pages) in size
//! however long the stream is.

use crate::stream::for_each_batch;
use crate::trace::{PageId, Progress, RefSource};
use crate::Result;

/// Fault counts of exact LRU for every memory size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LruFaultCurve {
    pub records: u64,
    pub references: u64,
    pub distinct_pages: u64,
    pub compulsory_faults: u64,
    /// `faults[s - 1]` = faults with `s` frames, for `s` = 1 ..= distinct_pages.
    pub faults: Vec<u64>,
}

impl LruFaultCurve {
    /// Faults with `frames` frames (any size; above the distinct pages, only compulsory).
    pub fn faults_at(&self, frames: u64) -> u64 {
        if frames == 0 {
            return self.references;
        }
        match self.faults.get(frames as usize - 1) {
            Some(&f) => f,
            None => self.compulsory_faults,
        }
    }
}

/// Incremental stack-distance computation over dense page ids.
#[derive(Debug, Default)]
pub struct StackDistances {
    /// Fenwick tree over time slots 1..=capacity; a slot holds 1 while it is the time
    /// of some page's last reference.
    tree: Vec<i32>,
    /// Page whose marker sits in each slot (valid while the slot is live).
    owner: Vec<PageId>,
    /// Slot of each page's last reference, 0 = never referenced.
    last: Vec<u32>,
    /// Next free slot.
    now: u32,
    /// Pages referenced so far (= live markers).
    live: u32,
    /// `histogram[d]` = references at stack distance `d` (d >= 1).
    histogram: Vec<u64>,
    compulsory: u64,
}

impl StackDistances {
    pub fn new() -> Self {
        let mut s = StackDistances::default();
        s.rebuild_with_capacity(1 << 16);
        s
    }

    fn capacity(&self) -> u32 {
        (self.tree.len() - 1) as u32
    }

    #[inline]
    fn prefix(&self, mut i: u32) -> i32 {
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i as usize];
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn add(&mut self, mut i: u32, delta: i32) {
        let n = self.capacity();
        while i <= n {
            self.tree[i as usize] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Renumbers live markers to slots 1..=live, in time order, in a tree of `capacity`
    /// slots (linear-time Fenwick build).
    fn rebuild_with_capacity(&mut self, capacity: u32) {
        let mut owner = vec![0; capacity as usize + 1];
        let mut tree = vec![0i32; capacity as usize + 1];
        let mut next = 1u32;
        for slot in 1..self.now {
            let page = self.owner[slot as usize];
            if self.last[page as usize] == slot {
                self.last[page as usize] = next;
                owner[next as usize] = page;
                tree[next as usize] = 1;
                next += 1;
            }
        }
        for i in 1..=capacity as usize {
            let parent = i + (i & i.wrapping_neg());
            if parent <= capacity as usize {
                tree[parent] += tree[i];
            }
        }
        self.tree = tree;
        self.owner = owner;
        self.now = next;
    }

    /// Records a reference to `page` repeated `repeat` times; returns its stack distance
    /// (0 for a first reference). The repeats are at distance 1.
    #[inline]
    pub fn reference(&mut self, page: PageId, repeat: u32) -> u32 {
        let p = page as usize;
        if p >= self.last.len() {
            self.last.resize((p + 1).max(self.last.len() * 3 / 2), 0);
        }
        if self.now > self.capacity() {
            // out of slots: renumber the live markers (one per page) into a tree with
            // at least as many free slots as live ones, so the work amortises to O(1)
            let capacity = self.capacity().max(self.live.saturating_mul(2)).max(1 << 16);
            self.rebuild_with_capacity(capacity);
        }
        let prev = self.last[p];
        let distance = if prev == 0 {
            self.compulsory += 1;
            self.live += 1;
            0
        } else {
            let d = (self.live as i32 - self.prefix(prev - 1)) as u32;
            self.add(prev, -1);
            d
        };
        let d = distance as usize;
        if d >= self.histogram.len() {
            self.histogram.resize((d + 1).max(self.live as usize + 1), 0);
        }
        self.histogram[d] += (distance > 0) as u64;
        if repeat > 1 {
            if self.histogram.len() < 2 {
                self.histogram.resize(2, 0);
            }
            self.histogram[1] += (repeat - 1) as u64;
        }
        let slot = self.now;
        self.now += 1;
        self.owner[slot as usize] = page;
        self.last[p] = slot;
        self.add(slot, 1);
        distance
    }

    /// Faults at every size 1..=distinct pages (compulsory included).
    pub fn fault_curve(&self) -> Vec<u64> {
        let pages = self.live as usize;
        let mut faults = vec![0u64; pages];
        // faults(s) = compulsory + references at distance > s
        let mut beyond = 0u64;
        for s in (1..=pages).rev() {
            faults[s - 1] = self.compulsory + beyond;
            beyond += self.histogram.get(s).copied().unwrap_or(0);
        }
        faults
    }

    pub fn compulsory(&self) -> u64 {
        self.compulsory
    }

    pub fn histogram(&self) -> &[u64] {
        &self.histogram
    }
}

/// The exact LRU fault curve of a stream, in one pass.
pub fn mrc(src: &mut dyn RefSource, progress: Progress) -> Result<LruFaultCurve> {
    let mut sd = StackDistances::new();
    let mut references = 0u64;
    let records = for_each_batch(src, progress, |batch, _| {
        for (&id, &repeat) in batch.id.iter().zip(&batch.repeat) {
            sd.reference(id, repeat);
            references += repeat as u64;
        }
        Ok(())
    })?;
    Ok(LruFaultCurve {
        records,
        references,
        distinct_pages: sd.live as u64,
        compulsory_faults: sd.compulsory,
        faults: sd.fault_curve(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::VecSource;

    /// Stack distance by brute force: the position in an explicit LRU stack.
    fn naive(pages: &[u64]) -> Vec<u32> {
        let mut stack: Vec<u64> = Vec::new();
        pages
            .iter()
            .map(|p| match stack.iter().position(|q| q == p) {
                Some(i) => {
                    stack.remove(i);
                    stack.insert(0, *p);
                    i as u32 + 1
                }
                None => {
                    stack.insert(0, *p);
                    0
                }
            })
            .collect()
    }

    #[test]
    fn distances_match_an_explicit_stack_across_renumbering() {
        // long enough to force several renumberings of the 65536-slot tree
        let mut x = 12345u64;
        let pages: Vec<u64> = (0..300_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % 700
            })
            .collect();
        let mut sd = StackDistances::new();
        let ids: Vec<u32> = {
            let mut d = crate::trace::Densifier::new();
            pages.iter().map(|&p| d.id(0, p)).collect()
        };
        let got: Vec<u32> = ids.iter().map(|&id| sd.reference(id, 1)).collect();
        assert_eq!(got, naive(&pages));
    }

    #[test]
    fn loop_curve() {
        let pages: Vec<u64> = (0..5).flat_map(|_| 0..10u64).collect();
        let curve = mrc(&mut VecSource::from_pages(&pages), &mut |_| true).unwrap();
        assert_eq!(curve.compulsory_faults, 10);
        assert_eq!(curve.faults[..9], [50; 9]);
        assert_eq!(curve.faults[9], 10);
        assert_eq!(curve.faults_at(100), 10);
    }
}
