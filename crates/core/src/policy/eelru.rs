//! EELRU, Early Eviction LRU (Smaragdakis, Kaplan and Wilson, "EELRU: Simple and
//! Effective Adaptive Page Replacement", SIGMETRICS 1999). LRU, except that when the
//! recent past shows many references just beyond memory (as in a loop a little larger
//! than memory), it evicts early: a page that was used fairly recently, so that the
//! remaining pages survive long enough to be hit.
//!
//! With M frames the policy works as follows.
//!
//! * **Recency order.** The LRU order of all resident pages and of the recently evicted
//!   (non-resident) pages whose recency position is at most `l_max`, the largest late
//!   point below. Position 1 is the most recent page; positions count every page of the
//!   full order, resident or not. A non-resident page pushed beyond `l_max` is forgotten
//!   (also a victim that is already deeper than `l_max` when evicted); a resident page
//!   never is (LRU needs it), so it can sit deeper than `l_max`. Every
//!   page more recent than a position-`r <= l_max` page is remembered, so positions up to
//!   `l_max` are exactly the positions in the recency order of the whole stream (tested
//!   against an explicit stack).
//! * **Histogram.** A reference to a page at position `r` (its position before this
//!   reference) with `e_min < r <= l_max` adds its weight to `hist[r]`. References to
//!   forgotten or new pages add nothing, and neither do positions `r <= e_min`: no sum
//!   below counts them, so they are not stored.
//! * **Eviction points.** Early points `e` = 0.4M, 0.6M, 0.8M, each rounded to the
//!   nearest integer (halves away from zero); `e_min` = round(0.4M). For each `e` the
//!   late points `l = e + round((M - e) * k)` for `k` = 3/2, 2, 3, 4, that is
//!   `(M - e) / (l - e)` = 2/3, 1/2, 1/3, 1/4 up to the rounding of the 3/2 case: twelve
//!   `(e, l)` pairs; `l_max = round(0.4M) + 4 * (M - round(0.4M))`, about 2.8M. Every
//!   `l` is > M; pairs with `e >= M` (M <= 2 only) are dropped. The benefit uses the
//!   rounded points' exact ratio `(M - e) / (l - e)`.
//! * **Benefit.** `benefit(e, l) = total(e, l) * (M - e) / (l - e) - early(e, M)`, where
//!   `total(e, l)` is the histogram mass at positions in `(e, l]` and `early(e, M)` at
//!   positions in `(e, M]`: the hits expected from evicting early (a uniform share of the
//!   references up to `l` hit) minus the LRU hits given up.
//! * **Decay.** A relevant event (a reference at a position in `(e_min, l_max]`)
//!   multiplies every count by `d = 0.3^(1/M)`, so an event followed by M relevant events
//!   weighs 0.3 of the newest. In O(1): events add a global weight `w`, then `w /= d`;
//!   when `w` exceeds 1e100 the histogram is divided by `w` (and the segment sums
//!   recomputed) and `w` is reset to 1.
//! * **Decision**, at every eviction: the pair with the largest benefit wins. Ties go to
//!   the first pair in the order (e ascending, then ratio descending), so the smallest
//!   early point; in a loop all pairs whose `l` covers it tie, and the smallest `e` keeps
//!   the most pages (one fault per `M - e + 1` references instead of per `M + 1`). If the
//!   best benefit is <= 0, LRU: evict the least recently used resident page. Otherwise
//!   evict early at `e`: the most recent resident page whose position is > `e` (the paper's
//!   page at position `e + 1`, skipping pages already evicted). If there is none, the LRU
//!   page.
//!
//! The caller's `on_miss` is the reference: the missing page is counted in the histogram
//! and moved to the front (position 1, not yet resident) before `select_victim`, so the
//! `e` most recent pages of the early point include it. `on_insert` makes it resident.
//! `on_remove` forgets the page entirely (it was freed or moved, not evicted).
//!
//! **Structure.** Like [`crate::analysis::stack_distance`]: each reference takes a new
//! time slot; a page's last slot is kept in `slot_of`. Two slot sets, one for remembered
//! pages and one for resident pages, are bitmaps with one Fenwick tree over blocks of 512
//! slots holding both sets' counts, giving "members before slot" and "k-th member" in
//! O(log n); a hit is one position query and two tree walks. A page's position is
//! the number of remembered slots at or after its slot; the early victim is found by
//! selecting the e-th most recent remembered slot and then the latest resident slot
//! before it. When the slots run out, the remembered slots are renumbered to
//! `0..remembered` in order into a structure with at least four times as many slots as
//! remembered pages (amortised O(1) per reference). No hash map: per page there is one
//! `u32`. The histogram is a dense array over positions plus its sums over the segments
//! between consecutive eviction points, so a decision costs O(number of pairs).
//!
//! **Cost**, measured with the ignored `throughput` test (10M Zipf(1.0) references over
//! 600k pages, 75k frames, the policies' test driver, on a shared 2-core machine):
//! 9-11.5 M references/s (LRU: about 65 M/s with the same driver).

use super::ReplacementPolicy;
use crate::trace::PageId;

/// Slots per block of a slot set's bitmap.
const BLOCK_SLOTS: u32 = 512;
const BLOCK_WORDS: usize = (BLOCK_SLOTS / 64) as usize;
/// Smallest slot capacity after a renumbering.
const MIN_CAPACITY: u32 = 1 << 12;
/// The decay weight is renormalised when it grows past this.
const RESCALE_AT: f64 = 1e100;
/// An event followed by M relevant events weighs this much of the newest.
const DECAY_OVER_M: f64 = 0.3;

/// Index of the remembered-pages set in [`Slots`].
const TRACKED: usize = 0;
/// Index of the resident-pages set (a subset of the remembered ones).
const RESIDENT: usize = 1;

/// Two sets of time slots, remembered pages and resident pages: a bitmap each and one
/// Fenwick tree (1-based) over blocks whose nodes hold both sets' counts, so that moving
/// a resident page updates both in one walk.
#[derive(Debug, Clone, Default)]
struct Slots {
    bits: [Vec<u64>; 2],
    tree: Vec<[u32; 2]>,
    len: [u32; 2],
}

impl Slots {
    /// Sets from bitmaps whose length is a whole number of blocks (linear-time build).
    fn from_bits(bits: [Vec<u64>; 2]) -> Self {
        let nblocks = bits[TRACKED].len() / BLOCK_WORDS;
        let mut tree = vec![[0u32; 2]; nblocks + 1];
        let mut len = [0; 2];
        for set in [TRACKED, RESIDENT] {
            for (b, words) in bits[set].chunks_exact(BLOCK_WORDS).enumerate() {
                let count: u32 = words.iter().map(|w| w.count_ones()).sum();
                len[set] += count;
                let i = b + 1;
                tree[i][set] += count;
                let parent = i + (i & i.wrapping_neg());
                if parent <= nblocks {
                    tree[parent][set] += tree[i][set];
                }
            }
        }
        Slots { bits, tree, len }
    }

    #[inline]
    fn contains(&self, set: usize, slot: u32) -> bool {
        self.bits[set][(slot / 64) as usize] >> (slot % 64) & 1 != 0
    }

    #[inline]
    fn walk(&mut self, slot: u32, delta: [i32; 2]) {
        let mut i = (slot / BLOCK_SLOTS) as usize + 1;
        while i < self.tree.len() {
            let node = &mut self.tree[i];
            node[0] = node[0].wrapping_add_signed(delta[0]);
            node[1] = node[1].wrapping_add_signed(delta[1]);
            i += i & i.wrapping_neg();
        }
    }

    #[inline]
    fn set_bit(&mut self, set: usize, slot: u32, on: bool) {
        let word = &mut self.bits[set][(slot / 64) as usize];
        if on {
            *word |= 1 << (slot % 64);
            self.len[set] += 1;
        } else {
            *word &= !(1 << (slot % 64));
            self.len[set] -= 1;
        }
    }

    /// Adds a free slot to the remembered set, and to the resident one if `resident`.
    #[inline]
    fn insert(&mut self, slot: u32, resident: bool) {
        self.set_bit(TRACKED, slot, true);
        if resident {
            self.set_bit(RESIDENT, slot, true);
        }
        self.walk(slot, [1, resident as i32]);
    }

    /// Removes a remembered slot from both sets.
    #[inline]
    fn remove(&mut self, slot: u32) {
        let resident = self.contains(RESIDENT, slot);
        self.set_bit(TRACKED, slot, false);
        if resident {
            self.set_bit(RESIDENT, slot, false);
        }
        self.walk(slot, [-1, -(resident as i32)]);
    }

    /// Marks a remembered slot resident or not (it must change).
    #[inline]
    fn set_resident(&mut self, slot: u32, resident: bool) {
        debug_assert!(self.contains(TRACKED, slot) && self.contains(RESIDENT, slot) != resident);
        self.set_bit(RESIDENT, slot, resident);
        self.walk(slot, [0, if resident { 1 } else { -1 }]);
    }

    /// Members of `set` strictly before `slot`.
    #[inline]
    fn count_before(&self, set: usize, slot: u32) -> u32 {
        let block = (slot / BLOCK_SLOTS) as usize;
        let mut i = block;
        let mut count = 0;
        while i > 0 {
            count += self.tree[i][set];
            i &= i - 1;
        }
        let bits = &self.bits[set];
        let word = (slot / 64) as usize;
        for w in &bits[block * BLOCK_WORDS..word] {
            count += w.count_ones();
        }
        count + (bits[word] & ((1u64 << (slot % 64)) - 1)).count_ones()
    }

    /// The slot of the member of `set` with `k` members before it (`k < len[set]`).
    #[inline]
    fn select(&self, set: usize, k: u32) -> u32 {
        debug_assert!(k < self.len[set]);
        // Fenwick descent: the number of whole blocks whose members number <= k
        let n = self.tree.len() - 1;
        let (mut block, mut rest) = (0usize, k);
        let mut step = 1usize << (usize::BITS - 1 - n.leading_zeros());
        while step > 0 {
            let next = block + step;
            if next <= n && self.tree[next][set] <= rest {
                block = next;
                rest -= self.tree[next][set];
            }
            step >>= 1;
        }
        let bits = &self.bits[set];
        let mut word = block * BLOCK_WORDS;
        loop {
            let c = bits[word].count_ones();
            if rest < c {
                break;
            }
            rest -= c;
            word += 1;
        }
        let mut w = bits[word];
        for _ in 0..rest {
            w &= w - 1;
        }
        word as u32 * 64 + w.trailing_zeros()
    }
}

/// One (early, late) eviction-point pair, with the indices of its points in `bounds`.
#[derive(Debug, Clone, Copy)]
struct Pair {
    e: u32,
    ratio: f64,
    e_at: usize,
    l_at: usize,
}

#[derive(Debug)]
pub struct Eelru {
    /// The twelve pairs, e ascending then ratio descending (the tie order).
    pairs: Vec<Pair>,
    e_min: u32,
    l_max: u32,
    /// The sorted distinct eviction points and M; segment `i >= 1` of the histogram is
    /// the positions in `(bounds[i - 1], bounds[i]]`. `bounds[0] = e_min`. (Only the
    /// tests read it back; the running sums are indexed through `pairs`.)
    #[cfg_attr(not(test), allow(dead_code))]
    bounds: Vec<u32>,
    /// Index of M in `bounds`.
    m_at: usize,
    /// Segment of each position `0..=l_max` (0 for positions <= e_min, never recorded).
    segment_of: Vec<u8>,
    /// Decayed histogram mass per position, in units of the current `weight` scale.
    hist: Vec<f64>,
    /// `hist` summed per segment.
    segments: Vec<f64>,
    /// What the next relevant event adds (grows by 1/d per event instead of decaying
    /// every count by d).
    weight: f64,
    decay: f64,
    /// Slots of remembered pages (resident, or non-resident at positions <= l_max) and
    /// of resident pages.
    slots: Slots,
    /// Page of each slot (valid while the slot is tracked).
    owner: Vec<PageId>,
    /// Slot of each page's last reference plus one; 0 = not remembered.
    slot_of: Vec<u32>,
    /// Next free slot; `owner.len()` is the capacity.
    now: u32,
    /// The page referenced by `on_miss`, awaiting `on_insert`.
    pending: Option<PageId>,
    /// Evictions decided for early eviction (a positive benefit).
    early_decisions: u64,
}

impl Eelru {
    /// EELRU for a memory of `frames` pages.
    pub fn new(frames: u32) -> Self {
        let m = frames.max(1);
        let round = |x: f64| x.round() as u32;
        let mut pairs_el: Vec<(u32, u32)> = Vec::new();
        for frac in [0.4, 0.6, 0.8] {
            let e = round(frac * m as f64);
            if e >= m {
                continue;
            }
            for k in [1.5, 2.0, 3.0, 4.0] {
                pairs_el.push((e, e + round(k * (m - e) as f64)));
            }
        }
        let e_min = pairs_el[0].0;
        let l_max = pairs_el.iter().map(|&(_, l)| l).max().expect("e = round(0.4M) < M");
        let mut bounds: Vec<u32> = pairs_el.iter().flat_map(|&(e, l)| [e, l]).chain([m]).collect();
        bounds.sort_unstable();
        bounds.dedup(); // at most 3 + 12 + 1 = 16 points
        let at = |x: u32| bounds.binary_search(&x).expect("a bound");
        let pairs = pairs_el
            .iter()
            .map(|&(e, l)| Pair { e, ratio: (m - e) as f64 / (l - e) as f64, e_at: at(e), l_at: at(l) })
            .collect();
        let mut segment_of = vec![0u8; l_max as usize + 1];
        for (i, w) in bounds.windows(2).enumerate() {
            for s in &mut segment_of[w[0] as usize + 1..=w[1] as usize] {
                *s = i as u8 + 1;
            }
        }
        Eelru {
            pairs,
            e_min,
            l_max,
            m_at: at(m),
            segments: vec![0.0; bounds.len()],
            bounds,
            segment_of,
            hist: vec![0.0; l_max as usize + 1],
            weight: 1.0,
            decay: DECAY_OVER_M.powf(1.0 / m as f64),
            slots: Slots::default(),
            owner: Vec::new(),
            slot_of: Vec::new(),
            now: 0,
            pending: None,
            early_decisions: 0,
        }
    }

    /// Recency position of the page whose last reference is `slot` (1 = most recent).
    #[inline]
    fn position_of_slot(&self, slot: u32) -> u32 {
        self.slots.len[TRACKED] - self.slots.count_before(TRACKED, slot)
    }

    /// Adds a reference at position `r` to the histogram, if it is a relevant event.
    #[inline]
    fn record(&mut self, r: u32) {
        if r <= self.e_min || r > self.l_max {
            return;
        }
        self.hist[r as usize] += self.weight;
        self.segments[self.segment_of[r as usize] as usize] += self.weight;
        self.weight /= self.decay;
        if self.weight > RESCALE_AT {
            let scale = 1.0 / self.weight;
            self.segments.fill(0.0);
            for (r, h) in self.hist.iter_mut().enumerate() {
                *h *= scale;
                self.segments[self.segment_of[r] as usize] += *h;
            }
            self.weight = 1.0;
        }
    }

    /// The early point of the pair with the largest positive benefit, or None for LRU.
    fn early_point(&self) -> Option<u32> {
        // at[i] = histogram mass at positions in (e_min, bounds[i]]
        let mut at = [0.0f64; 16];
        for i in 1..self.segments.len() {
            at[i] = at[i - 1] + self.segments[i];
        }
        let mut best = (0.0, None);
        for p in &self.pairs {
            let early = at[self.m_at] - at[p.e_at];
            let total = at[p.l_at] - at[p.e_at];
            let benefit = total * p.ratio - early;
            if benefit > best.0 {
                best = (benefit, Some(p.e));
            }
        }
        best.1
    }

    /// Slot of the most recent resident page at a position > `e`, else of the LRU page.
    fn early_victim(&self, e: u32) -> u32 {
        let beyond = if e == 0 {
            self.slots.len[RESIDENT]
        } else if e >= self.slots.len[TRACKED] {
            0
        } else {
            // resident pages older than the e-th most recent remembered page
            let boundary = self.slots.select(TRACKED, self.slots.len[TRACKED] - e);
            self.slots.count_before(RESIDENT, boundary)
        };
        self.slots.select(RESIDENT, beyond.saturating_sub(1))
    }

    /// Stops remembering the page of `slot` (resident or not).
    fn forget(&mut self, slot: u32) {
        self.slots.remove(slot);
        self.slot_of[self.owner[slot as usize] as usize] = 0;
    }

    /// Renumbers the remembered slots to `0..remembered`, in order, in a structure with
    /// at least four times as many slots as remembered pages.
    fn renumber(&mut self) {
        let len = self.slots.len[TRACKED];
        let capacity = (self.owner.len() as u32).max(len.saturating_mul(4)).max(MIN_CAPACITY);
        let capacity = capacity.div_ceil(BLOCK_SLOTS) * BLOCK_SLOTS;
        let mut owner = vec![0; capacity as usize];
        let mut tracked = vec![0u64; capacity as usize / 64];
        let mut resident = vec![0u64; capacity as usize / 64];
        let mut next = 0u32;
        for (w, &bits) in self.slots.bits[TRACKED].iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let slot = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                let page = self.owner[slot as usize];
                owner[next as usize] = page;
                self.slot_of[page as usize] = next + 1;
                tracked[(next / 64) as usize] |= 1 << (next % 64);
                if self.slots.contains(RESIDENT, slot) {
                    resident[(next / 64) as usize] |= 1 << (next % 64);
                }
                next += 1;
            }
        }
        self.owner = owner;
        self.slots = Slots::from_bits([tracked, resident]);
        self.now = next;
    }

    /// A reference to `page`: histogram, then to the front of the recency order (its
    /// residency unchanged), then forget a non-resident page pushed beyond `l_max`.
    #[inline]
    fn touch(&mut self, page: PageId) {
        let p = page as usize;
        if p >= self.slot_of.len() {
            self.slot_of.resize(p + 1, 0);
        }
        if self.now as usize == self.owner.len() {
            self.renumber();
        }
        let prev = self.slot_of[p];
        if prev != 0 && prev == self.now {
            // already the most recent page: the order does not change
            self.record(1);
            return;
        }
        let mut resident = false;
        // whether the page at position l_max moved to l_max + 1
        let pushed = if prev == 0 {
            true
        } else {
            let slot = prev - 1;
            let r = self.position_of_slot(slot);
            self.record(r);
            resident = self.slots.contains(RESIDENT, slot);
            self.slots.remove(slot);
            r > self.l_max
        };
        let slot = self.now;
        self.now += 1;
        self.owner[slot as usize] = page;
        self.slot_of[p] = slot + 1;
        self.slots.insert(slot, resident);
        // only that page can be a non-resident page beyond l_max now
        if pushed && self.slots.len[TRACKED] > self.l_max {
            let deep = self.slots.select(TRACKED, self.slots.len[TRACKED] - self.l_max - 1);
            if !self.slots.contains(RESIDENT, deep) {
                self.forget(deep);
            }
        }
    }

    /// Recency position of `page` if remembered (test support).
    #[cfg(test)]
    fn position(&self, page: PageId) -> Option<u32> {
        match self.slot_of.get(page as usize) {
            Some(&s) if s > 0 => Some(self.position_of_slot(s - 1)),
            _ => None,
        }
    }
}

impl ReplacementPolicy for Eelru {
    fn name(&self) -> &'static str {
        "eelru"
    }

    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.slot_of.len() {
            self.slot_of.resize(pages, 0);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.touch(page);
    }

    /// The reference itself: counted and moved to the front before the victim is chosen.
    fn on_miss(&mut self, page: PageId, _time: u64) {
        self.touch(page);
        self.pending = Some(page);
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        if self.pending.take() != Some(page) {
            self.touch(page);
        }
        let slot = self.slot_of[page as usize] - 1;
        if !self.slots.contains(RESIDENT, slot) {
            self.slots.set_resident(slot, true);
        }
    }

    fn select_victim(&mut self, _time: u64) -> PageId {
        assert!(self.slots.len[RESIDENT] > 0, "select_victim with no resident page");
        let slot = match self.early_point() {
            Some(e) => {
                self.early_decisions += 1;
                self.early_victim(e)
            }
            None => self.slots.select(RESIDENT, 0),
        };
        let victim = self.owner[slot as usize];
        self.slots.set_resident(slot, false);
        if self.position_of_slot(slot) > self.l_max {
            self.forget(slot);
        }
        victim
    }

    fn on_remove(&mut self, page: PageId) {
        let s = self.slot_of.get(page as usize).copied().unwrap_or(0);
        if s > 0 {
            self.forget(s - 1);
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.slot_of, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::{drive, run};
    use crate::policy::Lru;
    use rand::{Rng, SeedableRng};

    fn random_stream(seed: u64, len: usize, pages: u32, hot: u32) -> Vec<PageId> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..len).map(|_| if rng.gen_bool(0.5) { rng.gen_range(0..hot) } else { rng.gen_range(0..pages) }).collect()
    }

    /// Belady's OPT by brute force: evict the resident page whose next use is farthest.
    fn naive_opt(c: usize, stream: &[PageId]) -> u64 {
        let mut resident: Vec<PageId> = Vec::new();
        let mut faults = 0;
        for (t, &x) in stream.iter().enumerate() {
            if resident.contains(&x) {
                continue;
            }
            faults += 1;
            if resident.len() == c {
                let next_use = |p: PageId| stream[t + 1..].iter().position(|&q| q == p).unwrap_or(usize::MAX);
                let far = (0..c).max_by_key(|&i| next_use(resident[i])).unwrap();
                resident.swap_remove(far);
            }
            resident.push(x);
        }
        faults
    }

    #[test]
    fn points_and_pairs() {
        let e = Eelru::new(100);
        let el: Vec<(u32, f64)> = e.pairs.iter().map(|p| (p.e, p.ratio)).collect();
        assert_eq!(el.len(), 12);
        assert_eq!((e.e_min, e.l_max), (40, 280));
        assert_eq!(el[0], (40, 60.0 / 90.0));
        assert_eq!(el[11], (80, 0.25));
        assert_eq!(e.bounds, vec![40, 60, 80, 100, 110, 120, 130, 140, 160, 180, 220, 280]);
        // tiny memories drop the pairs whose early point is not below M
        let one = Eelru::new(1);
        assert!(one.pairs.iter().all(|p| p.e == 0) && one.pairs.len() == 4);
        assert_eq!(Eelru::new(2).pairs.len(), 8);
    }

    /// The requirement. Every reference of a loop over M + 1 pages is at position
    /// M + 1, so every pair with l > M has benefit = mass * ratio > 0 and the ties go to
    /// e = 0.4M (ratio 2/3). At a fault the missing page is at position 1 and the victim
    /// is the page at position e + 1, last referenced e references earlier, so it is used
    /// again M + 1 - e references later and faults then: one fault per M + 1 - e = 61
    /// references, so 1 or 2 faults per pass of 101 (LRU: 101).
    #[test]
    fn a_loop_just_larger_than_memory_faults_about_once_per_pass() {
        let (m, passes) = (100u32, 30usize);
        let stream: Vec<PageId> = (0..passes).flat_map(|_| 0..=m).collect();
        let per_pass = (m + 1) as usize;
        let mut faults_by_pass = vec![0u64; passes];
        let mut eelru = Eelru::new(m);
        let mut seen = 0;
        run(&mut eelru, m as usize, &stream, |_, _, _| {});
        // faults of each pass from the faults of prefixes (the policy is deterministic)
        for (p, f) in faults_by_pass.iter_mut().enumerate() {
            let total = run(&mut Eelru::new(m), m as usize, &stream[..(p + 1) * per_pass], |_, _, _| {});
            *f = total - seen;
            seen = total;
        }
        assert_eq!(faults_by_pass[0], 101, "compulsory");
        for (p, &f) in faults_by_pass.iter().enumerate().skip(3) {
            assert!((1..=2).contains(&f), "pass {p}: {f} faults ({faults_by_pass:?})");
        }
        let tail: u64 = faults_by_pass[3..].iter().sum();
        assert!(tail <= (passes as u64 - 3) * 101 / 61 + 1, "{tail}");
        assert!(eelru.early_decisions > 0);
        let lru = run(&mut Lru::new(), m as usize, &stream, |_, _, _| {});
        assert_eq!(lru, (passes * per_pass) as u64);
    }

    /// Strong recency: rounds of a shuffled hot set of 40 pages, with a new, never
    /// reused page after every 4th reference. Between two references to a hot page come
    /// at most 39 other hot pages and 20 new ones, so every position is <= 60 < M: no
    /// mass beyond M, every benefit is mass(e, M] * (ratio - 1) <= 0, and EELRU must
    /// evict exactly what LRU evicts.
    #[test]
    fn without_a_positive_benefit_it_is_lru() {
        let m = 100;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut hot: Vec<PageId> = (0..40).collect();
        let mut stream: Vec<PageId> = Vec::new();
        let mut next_new = 1000;
        for _ in 0..1000 {
            rand::seq::SliceRandom::shuffle(&mut hot[..], &mut rng);
            for quad in hot.chunks(4) {
                stream.extend_from_slice(quad);
                stream.push(next_new);
                next_new += 1;
            }
        }
        let mut eelru = Eelru::new(m as u32);
        let (faults, victims) = drive(&mut eelru, m, &stream, |_, _, _| {});
        let (lru_faults, lru_victims) = drive(&mut Lru::new(), m, &stream, |_, _, _| {});
        assert_eq!(eelru.early_decisions, 0, "the premise: no positive benefit");
        assert!(eelru.segments.iter().sum::<f64>() > 0.0, "the histogram saw references in (e_min, M]");
        assert_eq!(faults, lru_faults);
        assert_eq!(victims, lru_victims);
    }

    /// Positions agree with an explicit stack of the whole stream up to l_max; beyond it
    /// only resident pages are remembered. Long enough for several renumberings.
    #[test]
    fn positions_match_an_explicit_stack() {
        for (m, pages, hot, seed) in [(50usize, 700u32, 60u32, 1u64), (8, 40, 10, 2), (1, 6, 2, 3)] {
            let stream = random_stream(seed, 40_000, pages, hot);
            let mut stack: Vec<PageId> = Vec::new();
            let mut eelru = Eelru::new(m as u32);
            let l_max = eelru.l_max;
            let mut renumberings = 0;
            let mut capacity_seen = 0;
            run(&mut eelru, m, &stream, |e, t, count| {
                let x = stream[t];
                if let Some(i) = stack.iter().position(|&q| q == x) {
                    stack.remove(i);
                }
                stack.insert(0, x);
                assert_eq!(e.slots.len[RESIDENT] as usize, count);
                if e.now < capacity_seen {
                    renumberings += 1;
                }
                capacity_seen = e.now;
                let check = |page: PageId, naive: u32| {
                    let got = e.position(page);
                    let resident = got.is_some() && e.slots.contains(RESIDENT, e.slot_of[page as usize] - 1);
                    if naive <= l_max {
                        assert_eq!(got, Some(naive), "page {page} at {t}");
                    } else if resident {
                        assert!(got.unwrap() > l_max, "page {page} at {t}");
                    } else {
                        assert_eq!(got, None, "page {page} at {t}: a ghost beyond l_max");
                    }
                };
                if t % 997 == 0 {
                    for (i, &page) in stack.iter().enumerate() {
                        check(page, i as u32 + 1);
                    }
                } else if let Some(&next) = stream.get(t + 1) {
                    if let Some(i) = stack.iter().position(|&q| q == next) {
                        check(next, i as u32 + 1);
                    }
                }
            });
            assert!(renumberings >= 3, "{renumberings}");
        }
    }

    /// An event followed by M relevant events weighs 0.3 of the newest one.
    #[test]
    fn decay_reaches_three_tenths_after_m_events() {
        let m = 10u32;
        // 20 first references (none counted), then 0..=10 again: each at position 20,
        // in (e_min, l_max] = (4, 28], so eleven relevant events
        let stream: Vec<PageId> = (0..20).chain(0..=m).collect();
        let mut at_20 = Vec::new();
        run(&mut Eelru::new(m), m as usize, &stream, |e, _, _| at_20.push(e.hist[20]));
        assert!(at_20[..20].iter().all(|&h| h == 0.0));
        let first = at_20[20] - at_20[19];
        let newest = at_20[30] - at_20[29];
        assert!(((first / newest) - 0.3).abs() < 1e-9 * 0.3, "{first} / {newest}");
        // and the whole histogram matches explicit weights d^age across rescalings
        let (m, pages) = (3u32, 9u32);
        let stream = random_stream(5, 5_000, pages, 4);
        let mut eelru = Eelru::new(m);
        let (e_min, l_max, d) = (eelru.e_min, eelru.l_max, eelru.decay);
        let mut stack: Vec<PageId> = Vec::new();
        let mut expected = vec![0.0f64; l_max as usize + 1];
        let mut events = 0;
        for &x in &stream {
            if let Some(i) = stack.iter().position(|&q| q == x) {
                let r = i + 1;
                if r > e_min as usize && r <= l_max as usize {
                    expected.iter_mut().for_each(|h| *h *= d);
                    expected[r] += 1.0;
                    events += 1;
                }
                stack.remove(i);
            }
            stack.insert(0, x);
        }
        run(&mut eelru, m as usize, &stream, |_, _, _| {});
        assert!(events > 1000, "{events} events: several rescalings at d^-1 = {}", 1.0 / d);
        // the newest event weighs weight * d
        let newest = eelru.weight * d;
        for (r, (&h, &want)) in eelru.hist.iter().zip(&expected).enumerate() {
            assert!((h / newest - want).abs() <= 1e-9 * want.max(1e-300), "hist[{r}] {} vs {want}", h / newest);
        }
        for (i, &s) in eelru.segments.iter().enumerate() {
            let want: f64 = (0..=l_max as usize).filter(|&r| eelru.segment_of[r] as usize == i).map(|r| eelru.hist[r]).sum();
            assert!((s - want).abs() <= 1e-9 * want.abs().max(1e-300), "segment {i}");
        }
    }

    #[test]
    fn opt_is_not_beaten() {
        for (c, pages, hot, seed) in [(5usize, 12u32, 4u32, 11u64), (20, 60, 25, 12), (50, 300, 80, 13), (3, 5, 5, 14)] {
            let stream = random_stream(seed, 4_000, pages, hot);
            let eelru = run(&mut Eelru::new(c as u32), c, &stream, |_, _, _| {});
            let opt = naive_opt(c, &stream);
            assert!(eelru >= opt, "c {c}: EELRU {eelru} < OPT {opt}");
        }
        // a loop: OPT faults about once per M references, EELRU not fewer
        let stream: Vec<PageId> = (0..20).flat_map(|_| 0..31).collect();
        let eelru = run(&mut Eelru::new(30), 30, &stream, |_, _, _| {});
        assert!(eelru >= naive_opt(30, &stream));
    }

    /// The throughput target: 10M Zipf references over 600k pages with 75k frames.
    /// `cargo test --release -p pagelab-core policy::eelru -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn throughput() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let zipf = rand_distr::Zipf::new(600_000, 1.0).unwrap();
        let stream: Vec<PageId> = (0..10_000_000).map(|_| rng.sample(zipf) as PageId - 1).collect();
        let start = std::time::Instant::now();
        let mut eelru = Eelru::new(75_000);
        let faults = run(&mut eelru, 75_000, &stream, |_, _, _| {});
        let eelru_secs = start.elapsed().as_secs_f64();
        let start = std::time::Instant::now();
        let lru = run(&mut Lru::new(), 75_000, &stream, |_, _, _| {});
        let lru_secs = start.elapsed().as_secs_f64();
        println!(
            "EELRU {faults} faults, {:.1} M refs/s ({} early decisions); LRU {lru} faults, {:.1} M refs/s (same driver)",
            10.0 / eelru_secs,
            eelru.early_decisions,
            10.0 / lru_secs
        );
    }
}
