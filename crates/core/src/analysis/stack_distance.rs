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

use crate::hint::{prefetch, PREFETCH_DISTANCE};
use crate::stream::for_each_batch;
use crate::trace::{has_frees, AccessKind, PageId, Progress, RefBatch, RefSource};
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

/// The owner of a slot that holds a hole (a freed page's place in the stack).
const HOLE: PageId = PageId::MAX;

/// Slots per block of the live-slot bitmap: a distance query popcounts at most one
/// block's words and walks a Fenwick tree over blocks.
const BLOCK_SLOTS: u32 = 512;
const BLOCK_WORDS: usize = (BLOCK_SLOTS / 64) as usize;

/// Incremental stack-distance computation over dense page ids.
///
/// Time slots hold a live bit while they are the time of some page's last reference.
/// The bits live in a bitmap (one bit per slot) and their per-block counts in a Fenwick
/// tree over blocks of 512 slots, so for a million pages the structure is ~300 KB and
/// stays in cache; the only random access per reference is the page's own `last` entry.
#[derive(Debug, Default)]
pub struct StackDistances {
    /// Live bit per time slot.
    live_bits: Vec<u64>,
    /// Fenwick tree (1-based) over block counts of live slots.
    blocks: Vec<u32>,
    /// Page whose reference each slot records (valid while the slot is live).
    owner: Vec<PageId>,
    /// Slot of each page's last reference plus one; 0 = never referenced.
    last: Vec<u32>,
    /// Next free slot (0-based).
    now: u32,
    /// Entries of the stack (= live slots): pages, and holes left by freed pages.
    live: u32,
    /// Distinct pages referenced so far: one more than the largest id (ids are dense,
    /// in first-touch order).
    distinct: u32,
    /// Slots holding a hole: the place in the stack of a page freed since (see
    /// [`StackDistances::free`]). Empty unless the stream frees pages.
    holes: std::collections::BTreeSet<u32>,
    /// `histogram[d]` = references at stack distance `d` (d >= 1).
    histogram: Vec<u64>,
    /// Distances not yet counted in `histogram`: counting them in a separate pass lets
    /// the random increments overlap (see [`StackDistances::flush`]).
    pending: Vec<u32>,
    compulsory: u64,
}

impl StackDistances {
    pub fn new() -> Self {
        let mut s = StackDistances::default();
        s.rebuild_with_capacity(1 << 16);
        s
    }

    fn capacity(&self) -> u32 {
        self.owner.len() as u32
    }

    /// Live slots in blocks `0..block`.
    #[inline]
    fn blocks_before(&self, block: u32) -> u32 {
        let mut i = block as usize;
        let mut sum = 0;
        while i > 0 {
            sum += self.blocks[i];
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn block_add(&mut self, block: u32, delta: u32) {
        let mut i = block as usize + 1;
        while i < self.blocks.len() {
            self.blocks[i] = self.blocks[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Live slots strictly before `slot`.
    #[inline]
    fn live_before(&self, slot: u32) -> u32 {
        let block = slot / BLOCK_SLOTS;
        let first_word = block as usize * BLOCK_WORDS;
        let word = (slot / 64) as usize;
        let mut count = self.blocks_before(block);
        for w in &self.live_bits[first_word..word] {
            count += w.count_ones();
        }
        count + (self.live_bits[word] & ((1u64 << (slot % 64)) - 1)).count_ones()
    }

    #[inline]
    fn set_live(&mut self, slot: u32) {
        self.live_bits[(slot / 64) as usize] |= 1 << (slot % 64);
        self.block_add(slot / BLOCK_SLOTS, 1);
    }

    #[inline]
    fn clear_live(&mut self, slot: u32) {
        self.live_bits[(slot / 64) as usize] &= !(1 << (slot % 64));
        self.block_add(slot / BLOCK_SLOTS, u32::MAX);
    }

    /// Renumbers live slots to 0..live, in time order, in a structure of `capacity`
    /// slots (rounded up to whole blocks).
    fn rebuild_with_capacity(&mut self, capacity: u32) {
        let capacity = capacity.div_ceil(BLOCK_SLOTS) * BLOCK_SLOTS;
        let mut owner = vec![0; capacity as usize];
        let mut holes = std::collections::BTreeSet::new();
        let mut next = 0u32;
        for (w, &bits) in self.live_bits.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let slot = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                let page = self.owner[slot as usize];
                if page == HOLE {
                    holes.insert(next);
                } else {
                    self.last[page as usize] = next + 1;
                }
                owner[next as usize] = page;
                next += 1;
            }
        }
        self.owner = owner;
        self.holes = holes;
        self.live_bits = vec![0; (capacity / 64) as usize];
        let nblocks = (capacity / BLOCK_SLOTS) as usize;
        self.blocks = vec![0; nblocks + 1];
        for slot in 0..next {
            self.live_bits[(slot / 64) as usize] |= 1 << (slot % 64);
        }
        // linear-time Fenwick build from the block counts
        for b in 0..nblocks {
            let words = &self.live_bits[b * BLOCK_WORDS..(b + 1) * BLOCK_WORDS];
            self.blocks[b + 1] += words.iter().map(|w| w.count_ones()).sum::<u32>();
            let parent = (b + 1) + ((b + 1) & (b + 1).wrapping_neg());
            if parent <= nblocks {
                self.blocks[parent] += self.blocks[b + 1];
            }
        }
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
        if self.now == self.capacity() {
            // out of slots: renumber the live slots (one per page) into a structure with
            // three times as many free slots as live ones, so the work amortises to O(1)
            let capacity = self.capacity().max(self.live.saturating_mul(4)).max(1 << 16);
            self.rebuild_with_capacity(capacity);
        }
        let prev = self.last[p];
        let distance = if prev == 0 {
            self.compulsory += 1;
            self.distinct = self.distinct.max(page + 1);
            match self.holes.pop_last() {
                // memory of every size with a free frame (a hole above its bottom) fills
                // it: the topmost hole goes
                Some(hole) => self.clear_live(hole),
                None => self.live += 1,
            }
            0
        } else {
            let slot = prev - 1;
            let d = self.live - self.live_before(slot);
            match self.holes.last() {
                Some(&hole) if hole > slot => {
                    // memory smaller than d with a free frame fills it, memory of d or more
                    // keeps its free frame: the topmost hole moves down to the page's place
                    self.holes.remove(&hole);
                    self.clear_live(hole);
                    self.owner[slot as usize] = HOLE;
                    self.holes.insert(slot);
                }
                _ => self.clear_live(slot),
            }
            d
        };
        self.pending.push(distance);
        if repeat > 1 {
            if self.histogram.len() < 2 {
                self.histogram.resize(2, 0);
            }
            self.histogram[1] += (repeat - 1) as u64;
        }
        if self.pending.len() >= 1 << 16 {
            self.flush();
        }
        let slot = self.now;
        self.now += 1;
        self.owner[slot as usize] = page;
        self.last[p] = slot + 1;
        self.set_live(slot);
        distance
    }

    /// The page is freed (a free record): its place in the stack becomes a hole, a free
    /// frame in memory of every size that held the page, and the page is forgotten, so
    /// that its next reference is a first reference again (a compulsory fault at every
    /// size). LRU with frees stays a stack algorithm (memory of s frames holds what memory
    /// of s + 1 holds but one page, or the same less a free frame), with this update:
    /// a reference at stack distance d (infinite for a first reference) moves the
    /// topmost hole above d to the page's place (at a first reference the hole goes),
    /// since memory smaller than d fills its free frame and memory of d or more keeps it.
    pub fn free(&mut self, page: PageId) {
        let p = page as usize;
        if let Some(&prev) = self.last.get(p) {
            if prev != 0 {
                self.owner[(prev - 1) as usize] = HOLE;
                self.holes.insert(prev - 1);
                self.last[p] = 0;
            }
        }
    }

    /// Counts the pending distances into the histogram.
    pub fn flush(&mut self) {
        if self.histogram.len() <= self.distinct as usize {
            self.histogram.resize(self.distinct as usize + 1, 0);
        }
        let pending = std::mem::take(&mut self.pending);
        for (i, &d) in pending.iter().enumerate() {
            // this loop is short, so it must ask further ahead to cover a memory latency
            if let Some(&ahead) = pending.get(i + 4 * PREFETCH_DISTANCE) {
                prefetch(&self.histogram, ahead as usize);
            }
            self.histogram[d as usize] += 1;
        }
        self.histogram[0] = 0; // first references have no distance
        self.pending = pending;
        self.pending.clear();
    }

    /// Asks for the page's entry ahead of its reference (see [`crate::hint`]).
    #[inline(always)]
    pub fn prefetch_page(&self, page: PageId) {
        prefetch(&self.last, page as usize);
    }

    /// Faults at every size 1..=distinct pages (compulsory included). Call
    /// [`StackDistances::flush`] first.
    pub fn fault_curve(&self) -> Vec<u64> {
        let pages = self.distinct as usize;
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

    /// References per stack distance (index 0 unused). Call [`StackDistances::flush`] first.
    pub fn histogram(&self) -> &[u64] {
        &self.histogram
    }
}

/// Feeds one batch to `sd`; returns its references. `FREES`: some records are frees.
/// What the one-pass curves' batch loop needs of a stack (LRU's here, MIN's in
/// opt_stack_distance.rs), so that both share [`feed`].
pub(super) trait Stack {
    fn prefetch_page(&self, page: PageId);
    fn free(&mut self, page: PageId);
    fn reference(&mut self, page: PageId, repeat: u32) -> u32;
}

impl Stack for StackDistances {
    fn prefetch_page(&self, page: PageId) { StackDistances::prefetch_page(self, page) }
    fn free(&mut self, page: PageId) { StackDistances::free(self, page) }
    fn reference(&mut self, page: PageId, repeat: u32) -> u32 { StackDistances::reference(self, page, repeat) }
}

/// One batch into a stack, its references counted; frees tested only when `FREES`.
#[inline(always)]
pub(super) fn feed<S: Stack, const FREES: bool>(sd: &mut S, batch: &RefBatch) -> u64 {
    let ids = &batch.id;
    let mut references = 0u64;
    for (i, (&id, &repeat)) in ids.iter().zip(&batch.repeat).enumerate() {
        if let Some(&ahead) = ids.get(i + PREFETCH_DISTANCE) {
            sd.prefetch_page(ahead);
        }
        if FREES && batch.kind[i] == AccessKind::Free {
            sd.free(id);
            continue;
        }
        sd.reference(id, repeat);
        references += repeat as u64;
    }
    references
}

/// The exact LRU fault curve of a stream, in one pass. A free record takes its page
/// out of the stack ([`StackDistances::free`]).
pub fn mrc(src: &mut dyn RefSource, progress: Progress) -> Result<LruFaultCurve> {
    let mut sd = StackDistances::new();
    let mut references = 0u64;
    let records = for_each_batch(src, progress, |batch, _| {
        // the loop that tests for frees only for the batches that hold one
        references += if has_frees(&batch.kind) { feed::<_, true>(&mut sd, batch) } else { feed::<_, false>(&mut sd, batch) };
        Ok(())
    })?;
    sd.flush();
    Ok(LruFaultCurve {
        records,
        references,
        distinct_pages: sd.distinct as u64,
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
