//! OPT (Belady's MIN) stack distances, and from them the exact MIN fault count at every
//! memory size, in one pass, O(log n) per reference.
//!
//! MIN is a stack algorithm (Mattson, Gecsei, Slutz and Traiger 1970): memory of s + 1
//! frames holds what memory of s frames holds, so each reference has a *stack
//! distance*, the smallest memory in which it hits. Mattson's own method keeps the MIN
//! stack ordered by priority (next use) and moves pages down it at every reference,
//! O(distinct pages) per reference. The distance of a reference depends only on the
//! references before it (Bilardi, Ekanadham and Pattnaik, "Optimal On-Line Computation of
//! Stack Distances for MIN and OPT", CF 2017), and their *critical markers* give it
//! without the future: one marker per memory size, each a place in the LRU stack.
//! This file is that method in time coordinates, with our own data structures:
//!
//! * Every reference takes two new time slots: a *marker slot*, then the page's *live
//!   slot* (the time of its last reference, as in the LRU stack distances). A page's LRU
//!   depth is the number of live slots after its own.
//! * Memory size c + 1 (c = 1, 2, ...: one per page seen) has its marker at a slot
//!   `marker[c]`; a marker at slot m stands at LRU depth #{live slots after m}.
//! * Weights: +1 for a slot holding a marker, -1 for a live slot; R(t) is the sum of the
//!   weights of the slots from t on. R >= -1 at every live slot (the paper's *imbalance*
//!   beta is R + 1 there, and it is never negative).
//! * A reference to a page last referenced at slot a (not the most recent live slot):
//!   let t be the first slot after a with R(t) = -1 (the paper's z: the deepest place
//!   above the page where the imbalance is zero), and c the least memory size whose
//!   marker is before t. The reference's OPT stack distance is c + 1 (it hits in memory
//!   of more than c frames). Then the page's live slot moves to the end, and marker c
//!   moves to the new marker slot just before it (LRU depth 1: the paper's "critical
//!   marker set to 1"). A reference to the most recent page has distance 1 and changes
//!   nothing; a page's first reference adds memory size n + 1 (n pages seen before) with
//!   its marker at depth 1.
//! * A segment tree over 64-slot words holds, per node, the sum of the weights, the least
//!   suffix sum, and the least memory size of the markers in it: finding t is a descent
//!   on suffix sums, finding c a prefix minimum, each O(log n). Slots are renumbered (the
//!   occupied ones packed, in order) when they run out, so the structure stays O(pages)
//!   however long the stream is.
//!
//! A free record: the page's last entry stays in the stack as a page never referenced
//! again (MIN evicts such a page first, which is what a free frame gives), and its next
//! touch is a first reference. The tests check the curve against MIN replay at every size,
//! with and without frees, and the distances against Mattson's priority stack.

use crate::hint::prefetch;
use crate::stream::for_each_batch;
use crate::trace::{has_frees, PageId, Progress, RefSource};
use crate::Result;

use super::stack_distance::{feed, Stack};
use super::LruFaultCurve;

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    /// Sum of the weights.
    sum: i32,
    /// Least sum of the weights from a slot of the node to its end.
    min_suffix: i32,
    /// Least memory size with its marker in the node.
    min_size: u32,
}

const EMPTY: Node = Node { sum: 0, min_suffix: 0, min_size: NONE };

#[inline(always)]
fn combine(left: Node, right: Node) -> Node {
    Node {
        sum: left.sum + right.sum,
        min_suffix: right.min_suffix.min(right.sum + left.min_suffix),
        min_size: left.min_size.min(right.min_size),
    }
}

/// Incremental OPT stack distances over dense page ids.
#[derive(Debug)]
pub struct OptStackDistances {
    /// Live slot of each page's last reference plus one; 0 = none (never, or freed).
    last: Vec<u32>,
    /// `marker[c]`: the slot of memory size c + 1's marker (index 0 unused).
    marker: Vec<u32>,
    /// Live and marker bits per slot.
    live: Vec<u64>,
    mark: Vec<u64>,
    /// The memory size index of the marker at each marker slot.
    size_at: Vec<u32>,
    /// The tree over words, heap order (root 1, leaves `words..2 * words`).
    tree: Vec<Node>,
    words: usize,
    /// Next free slot.
    now: u32,
    /// The most recent live slot.
    top: u32,
    /// Sizes (= pages entered into the stack).
    sizes: u32,
    /// Distinct page ids seen (one more than the largest).
    distinct: u32,
    /// `histogram[d]` = references at distance d (d >= 1).
    histogram: Vec<u64>,
    compulsory: u64,
}

impl Default for OptStackDistances {
    fn default() -> Self {
        Self::new()
    }
}

impl OptStackDistances {
    pub fn new() -> Self {
        let mut s = OptStackDistances {
            last: Vec::new(),
            marker: vec![NONE],
            live: Vec::new(),
            mark: Vec::new(),
            size_at: Vec::new(),
            tree: Vec::new(),
            words: 0,
            now: 0,
            top: NONE,
            sizes: 0,
            distinct: 0,
            histogram: vec![0; 2],
            compulsory: 0,
        };
        s.renumber(1 << 16);
        s
    }

    fn capacity(&self) -> u32 {
        (self.words * 64) as u32
    }

    /// The node of word `w`, from its bits.
    fn leaf(&self, w: usize) -> Node {
        let (l, m) = (self.live[w], self.mark[w]);
        let up = m & !l;
        let down = l & !m;
        let sum = up.count_ones() as i32 - down.count_ones() as i32;
        // suffix sums from the top bit down; zero-weight slots repeat the sum above them
        let nonzero = up | down;
        let mut min_suffix = if nonzero == 0 || nonzero.leading_zeros() > 0 { 0 } else { i32::MAX };
        let mut s = 0i32;
        let mut bits = nonzero;
        while bits != 0 {
            let b = 63 - bits.leading_zeros();
            s += if up >> b & 1 == 1 { 1 } else { -1 };
            min_suffix = min_suffix.min(s);
            bits &= !(1u64 << b);
        }
        let mut min_size = NONE;
        let mut marks = m;
        while marks != 0 {
            let b = marks.trailing_zeros() as usize;
            min_size = min_size.min(self.size_at[w * 64 + b]);
            marks &= marks - 1;
        }
        Node { sum, min_suffix, min_size }
    }

    /// Recomputes word `w`'s leaf and its ancestors.
    fn refresh(&mut self, w: usize) {
        let mut i = self.words + w;
        self.tree[i] = self.leaf(w);
        i >>= 1;
        while i >= 1 {
            self.tree[i] = combine(self.tree[2 * i], self.tree[2 * i + 1]);
            i >>= 1;
        }
    }

    /// Packs the occupied slots (live or marker) to the front, in order, in a structure of
    /// at least `capacity` slots (a power of two).
    fn renumber(&mut self, capacity: u32) {
        let words = (capacity.max(64) as usize).div_ceil(64).next_power_of_two();
        // new index of each occupied slot: the occupied slots before it
        let mut before = Vec::with_capacity(self.live.len());
        let mut count = 0u32;
        for w in 0..self.live.len() {
            before.push(count);
            count += (self.live[w] | self.mark[w]).count_ones();
        }
        let occupied = |slot: u32, live: &[u64], mark: &[u64]| {
            let (w, b) = ((slot / 64) as usize, slot % 64);
            let below = (live[w] | mark[w]) & ((1u64 << b) - 1);
            before[w] + below.count_ones()
        };
        let mut live = vec![0u64; words];
        let mut mark = vec![0u64; words];
        let mut size_at = vec![NONE; words * 64];
        for l in self.last.iter_mut() {
            if *l != 0 {
                let new = occupied(*l - 1, &self.live, &self.mark);
                *l = new + 1;
            }
        }
        // zombies (freed pages' entries) and live slots: every live bit moves
        for w in 0..self.live.len() {
            let mut bits = self.live[w];
            while bits != 0 {
                let slot = (w * 64) as u32 + bits.trailing_zeros();
                let new = occupied(slot, &self.live, &self.mark);
                live[(new / 64) as usize] |= 1 << (new % 64);
                bits &= bits - 1;
            }
        }
        for c in 1..self.marker.len() {
            let slot = self.marker[c];
            if slot == NONE {
                // the size whose marker is being placed (it has left its old slot)
                continue;
            }
            let new = occupied(slot, &self.live, &self.mark);
            mark[(new / 64) as usize] |= 1 << (new % 64);
            size_at[new as usize] = c as u32;
            self.marker[c] = new;
        }
        if self.top != NONE {
            self.top = occupied(self.top, &self.live, &self.mark);
        }
        self.live = live;
        self.mark = mark;
        self.size_at = size_at;
        self.words = words;
        self.now = count;
        self.tree = vec![EMPTY; 2 * words];
        for w in 0..words {
            self.tree[words + w] = self.leaf(w);
        }
        for i in (1..words).rev() {
            self.tree[i] = combine(self.tree[2 * i], self.tree[2 * i + 1]);
        }
    }

    /// The first slot t >= `from` with R(t) <= -1 (R: the weight sum from t on).
    fn first_balanced(&self, from: u32) -> u32 {
        let w0 = (from / 64) as usize;
        // weights after word w0
        let mut rs = 0i32;
        let mut i = self.words + w0;
        while i > 1 {
            if i & 1 == 0 {
                rs += self.tree[i + 1].sum;
            }
            i >>= 1;
        }
        if let Some(t) = self.scan_word(w0, (from % 64) as u32, rs) {
            return t;
        }
        // climb: right siblings in order, each with the weights to its right
        let mut i = self.words + w0;
        while i > 1 {
            if i & 1 == 0 {
                let sib = self.tree[i + 1];
                let right = rs - sib.sum;
                if sib.min_suffix + right <= -1 {
                    return self.descend(i + 1, right);
                }
                rs = right;
            }
            i >>= 1;
        }
        unreachable!("the most recent live slot has R = -1")
    }

    /// The leftmost slot with R <= -1 in node `i`, `right` the weights after it.
    fn descend(&self, mut i: usize, mut right: i32) -> u32 {
        while i < self.words {
            let (l, r) = (self.tree[2 * i], self.tree[2 * i + 1]);
            if l.min_suffix + right + r.sum <= -1 {
                right += r.sum;
                i *= 2;
            } else {
                i = 2 * i + 1;
            }
        }
        self.scan_word(i - self.words, 0, right).expect("a slot with R = -1 in the node")
    }

    /// The leftmost slot of word `w` at or above bit `lo` with R <= -1, `right` the
    /// weights after the word.
    #[inline]
    fn scan_word(&self, w: usize, lo: u32, right: i32) -> Option<u32> {
        let (l, m) = (self.live[w], self.mark[w]);
        let up = m & !l;
        let down = l & !m;
        let mut s = right;
        let mut found = None;
        // slots above the highest nonzero weight carry R = right
        let nonzero = (up | down) & !((1u64 << lo) - 1);
        if s <= -1 {
            let top_nz = if nonzero == 0 { lo } else { 64 - nonzero.leading_zeros() };
            if top_nz < 64 {
                found = Some(top_nz.max(lo));
            }
        }
        let mut bits = nonzero;
        while bits != 0 {
            let b = 63 - bits.leading_zeros();
            s += if up >> b & 1 == 1 { 1 } else { -1 };
            bits &= !(1u64 << b);
            if s <= -1 {
                // slot b and the zero-weight slots below it down to the next nonzero one
                let below = bits;
                let start = if below == 0 { lo } else { 64 - below.leading_zeros() };
                found = Some(start.max(lo));
            }
        }
        found.map(|b| (w * 64) as u32 + b)
    }

    /// The least memory size index with its marker before slot `t`.
    fn least_size_before(&self, t: u32) -> u32 {
        let w = (t / 64) as usize;
        let mut best = NONE;
        let mut marks = self.mark[w] & ((1u64 << (t % 64)) - 1);
        while marks != 0 {
            let b = marks.trailing_zeros() as usize;
            best = best.min(self.size_at[w * 64 + b]);
            marks &= marks - 1;
        }
        // words 0..w
        let (mut lo, mut hi) = (self.words, self.words + w);
        while lo < hi {
            if lo & 1 == 1 {
                best = best.min(self.tree[lo].min_size);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                best = best.min(self.tree[hi].min_size);
            }
            lo >>= 1;
            hi >>= 1;
        }
        best
    }

    /// Two new slots at the end, a marker for size index `c` then the live slot of
    /// `page`.
    fn push_marker_and_page(&mut self, c: u32, page: PageId) {
        if self.now + 2 > self.capacity() {
            // out of slots: pack the occupied ones into a structure three times their number
            let occupied: u32 = self.live.iter().zip(&self.mark).map(|(l, m)| (l | m).count_ones()).sum();
            self.renumber((occupied + 2).saturating_mul(3).max(1 << 16));
        }
        let ms = self.now;
        let ls = self.now + 1;
        self.now += 2;
        self.mark[(ms / 64) as usize] |= 1 << (ms % 64);
        self.size_at[ms as usize] = c;
        self.marker[c as usize] = ms;
        self.live[(ls / 64) as usize] |= 1 << (ls % 64);
        self.last[page as usize] = ls + 1;
        self.top = ls;
        self.refresh((ms / 64) as usize);
        if ls / 64 != ms / 64 {
            self.refresh((ls / 64) as usize);
        }
    }

    /// Records a reference to `page` repeated `repeat` times; returns its OPT stack
    /// distance (0 for a first reference). The repeats are at distance 1.
    #[inline]
    pub fn reference(&mut self, page: PageId, repeat: u32) -> u32 {
        let p = page as usize;
        if p >= self.last.len() {
            self.last.resize((p + 1).max(self.last.len() * 3 / 2), 0);
        }
        let prev = self.last[p];
        let distance = if prev == 0 {
            self.compulsory += 1;
            self.distinct = self.distinct.max(page + 1);
            self.sizes += 1;
            self.marker.push(NONE);
            if self.histogram.len() <= self.sizes as usize + 1 {
                let n = (self.sizes as usize + 2).max(self.histogram.len() * 3 / 2);
                self.histogram.resize(n, 0);
            }
            let c = self.sizes;
            self.push_marker_and_page(c, page);
            0
        } else {
            let a = prev - 1;
            if a == self.top {
                1
            } else {
                let t = self.first_balanced(a + 1);
                let c = self.least_size_before(t);
                debug_assert!(c != NONE && c < self.sizes, "a size for the reference");
                // the page's live slot goes; marker c moves to the end
                self.live[(a / 64) as usize] &= !(1u64 << (a % 64));
                let old = self.marker[c as usize];
                self.mark[(old / 64) as usize] &= !(1u64 << (old % 64));
                self.size_at[old as usize] = NONE;
                // neither is in a slot until the push below (which may renumber the slots)
                self.marker[c as usize] = NONE;
                self.last[p] = 0;
                self.refresh((a / 64) as usize);
                if old / 64 != a / 64 {
                    self.refresh((old / 64) as usize);
                }
                self.push_marker_and_page(c, page);
                c + 1
            }
        };
        self.histogram[distance as usize] += 1;
        if repeat > 1 {
            self.histogram[1] += (repeat - 1) as u64;
        }
        distance
    }

    /// The page is freed: its entry stays in the stack as a page never referenced again,
    /// and its next reference is a first reference.
    pub fn free(&mut self, page: PageId) {
        if let Some(l) = self.last.get_mut(page as usize) {
            *l = 0;
        }
    }

    /// Asks for the page's entry ahead of its reference.
    #[inline(always)]
    pub fn prefetch_page(&self, page: PageId) {
        prefetch(&self.last, page as usize);
    }

    /// Faults at every size 1..=sizes (compulsory included).
    pub fn fault_curve(&self) -> Vec<u64> {
        let n = self.sizes as usize;
        let mut faults = vec![0u64; n];
        let mut beyond = 0u64;
        for s in (1..=n).rev() {
            faults[s - 1] = self.compulsory + beyond;
            beyond += self.histogram.get(s).copied().unwrap_or(0);
        }
        faults
    }

    pub fn compulsory(&self) -> u64 {
        self.compulsory
    }

    /// References per distance (index 0: first references, counted as 0 here).
    pub fn histogram(&self) -> &[u64] {
        &self.histogram[..]
    }
}

impl Stack for OptStackDistances {
    fn prefetch_page(&self, page: PageId) { OptStackDistances::prefetch_page(self, page) }
    fn free(&mut self, page: PageId) { OptStackDistances::free(self, page) }
    fn reference(&mut self, page: PageId, repeat: u32) -> u32 { OptStackDistances::reference(self, page, repeat) }
}

/// The exact MIN (OPT) fault curve of a stream, in one pass.
pub fn opt_mrc(src: &mut dyn RefSource, progress: Progress) -> Result<LruFaultCurve> {
    let mut sd = OptStackDistances::new();
    let mut references = 0u64;
    let records = for_each_batch(src, progress, |batch, _| {
        references += if has_frees(&batch.kind) { feed::<_, true>(&mut sd, batch) } else { feed::<_, false>(&mut sd, batch) };
        Ok(())
    })?;
    sd.histogram[0] = 0;
    Ok(LruFaultCurve {
        records,
        references,
        distinct_pages: sd.distinct as u64,
        compulsory_faults: sd.compulsory,
        faults: sd.fault_curve(),
    })
}

#[cfg(test)]
mod tests;
