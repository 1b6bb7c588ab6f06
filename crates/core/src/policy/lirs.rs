//! LIRS, Low Inter-reference Recency Set (Jiang and Zhang, "LIRS: An Efficient Low
//! Inter-reference Recency Set Replacement Policy", SIGMETRICS 2002, section 3.3).
//!
//! The frames are split into `L_lirs` frames for LIR pages (small inter-reference
//! recency, IRR) and `L_hirs` frames for resident HIR pages. Three intrusive lists over
//! dense ids and one state byte per page:
//! - the stack S (head = top, most recent; tail = bottom): LIR pages, resident HIR pages
//!   and non-resident HIR pages, by recency. Its bottom is always an LIR page ("stack
//!   pruning" removes the HIR entries below the lowest LIR page);
//! - the list Q (tail = front, the next victim; head = end): the resident HIR pages;
//! - the list N: the non-resident HIR entries of S, oldest at the tail, so that the
//!   bounded stack can drop the oldest one in O(1).
//!
//! A reference costs O(1) amortised: pruning pops each S entry at most once per push.
//!
//! The caller owns residency, so section 3.3's miss case splits over the trait's calls:
//! `on_miss` marks a non-resident HIR page of S as incoming, `select_victim` evicts the
//! front of Q, `on_insert` places the page (LIR if it was in S, else resident HIR).
//!
//! Parameters ([`LirsParams`], `lirs:hir=PCT,hir_min=N,stack=X,ghosts=Y`):
//! - `hir` and `hir_min`: `L_hirs = max(hir_min, floor(hir / 100 * frames))` (section 4.2
//!   uses 1% of the cache), at most `frames - 1` when `frames >= 2`; `L_lirs = frames -
//!   L_hirs`. With one frame `L_lirs = 0`: S stays empty after pruning and the single
//!   frame is the HIR frame (Q alone, i.e. plain LRU on one page). The percentage is
//!   taken as the authors' `lirs.c` computes it, in floating point and truncated.
//! - `ghosts` (pagelab's bound, section 3.3 leaves S unbounded): at most `floor(ghosts *
//!   frames)` non-resident HIR entries in S. When an eviction exceeds it, the oldest one
//!   is dropped from S, and the page is forgotten (a later miss on it is a miss on a new
//!   page). Pages turn non-resident in the order of their S positions (the in-S part of
//!   Q is in S order and Q is evicted from its front), so N's tail is also the lowest
//!   non-resident entry of S; the invariants test checks it. A page being loaded
//!   (between `on_miss` and `on_insert`) is taken off N first and does not count, so the
//!   eviction made for it cannot drop its own history. `none`: no bound.
//! - `stack` (the authors' bound, `MAX_S_LEN` of `lirs.c`): at most `floor(stack *
//!   frames)` entries in S, counted after each reference; one over, and the lowest HIR
//!   entry of S (the first one above the LIR pages at its bottom, resident or not) leaves
//!   S: a resident one stays in Q (now out of S), a non-resident one is forgotten. At
//!   least 1, so that S always holds an HIR entry when it is over the bound (S holds at
//!   most `L_lirs < frames` LIR pages). `none`: no bound.
//! - Presets: the default (`lirs`) is `hir=1,hir_min=1,stack=none,ghosts=2`; `lirs:authors`
//!   is `hir=1,hir_min=2,stack=2500,ghosts=none`, the authors' `lirs.c` (Song Jiang, 2002,
//!   as distributed with Caffeine's simulator: `HIR_RATE` 1.0, `LOWEST_HG_NUM` 2,
//!   `MAX_S_LEN` `mem_size*2500`), whose faults it equals at every size the program
//!   accepts (10 frames or more; docs/policies.md).
//!
//! Decisions the paper leaves open (or that the trait forces):
//! - Warm-up (section 3.3, "when LIR block set is not full, all the referenced blocks are
//!   given an LIR status"): applied whenever `#LIR < L_lirs`, to any referenced page that
//!   is not LIR (a new page, a non-resident HIR page, a resident HIR page in or out of S).
//!   Such a promotion demotes no LIR page. Without `on_remove` this only happens while
//!   the cache first fills (the first `L_lirs` pages missed become LIR, as in `lirs.c`);
//!   after an LIR page is removed it refills the LIR set.
//! - Order within a miss (section 3.3 evicts first, then places the new page, as `lirs.c`
//!   does): the victim is chosen before the new page's promotion, so an LIR page demoted
//!   by that promotion goes to the end of Q behind the other resident HIR pages and is
//!   not the victim of this miss.
//! - A demoted LIR page is always the bottom of S; it goes to the end of Q and leaves S
//!   (it is now an HIR entry at the bottom, which pruning would remove anyway).
//! - `select_victim` with Q empty (only possible if a caller reclaims before memory is
//!   full, since a full cache holds at least `L_hirs` resident HIR pages): the LIR page
//!   at the bottom of S (the oldest LIR recency) is evicted and forgotten, then S is
//!   pruned.
//! - `on_remove` (a page leaving memory for a reason other than replacement, e.g. freed)
//!   forgets the page entirely rather than keeping a non-resident HIR entry: its history
//!   says nothing about a page that may never come back. Removing an LIR page prunes S
//!   and leaves the LIR set short, which the warm-up rule refills.

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

/// Not resident and not in S.
const NONE: u8 = 0;
/// Resident LIR page; always in S.
const LIR: u8 = 1;
/// Resident HIR page in S (and in Q).
const HIR_S: u8 = 2;
/// Resident HIR page not in S (in Q only).
const HIR_Q: u8 = 3;
/// Non-resident HIR page in S (and in N).
const GHOST: u8 = 4;
/// Non-resident HIR page in S that is being loaded (between `on_miss` and `on_insert`);
/// in S but taken off N.
const INCOMING: u8 = 5;

/// LIRS's sizes and bounds (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LirsParams {
    /// Percent of the frames for resident HIR pages (`L_hirs`), truncated.
    pub hir_percent: f64,
    /// Least `L_hirs`.
    pub hir_min: u32,
    /// Most entries of S, as a multiple of the frames (`lirs.c`'s `MAX_S_LEN`); `None`:
    /// unbounded.
    pub stack: Option<f64>,
    /// Most non-resident HIR entries of S, as a multiple of the frames; `None`: unbounded.
    pub ghosts: Option<f64>,
}

impl LirsParams {
    /// pagelab's LIRS (`lirs`).
    pub const DEFAULT: LirsParams = LirsParams { hir_percent: 1.0, hir_min: 1, stack: None, ghosts: Some(2.0) };
    /// The authors' `lirs.c` (`lirs:authors`).
    pub const AUTHORS: LirsParams = LirsParams { hir_percent: 1.0, hir_min: 2, stack: Some(2500.0), ghosts: None };

    /// `L_hirs` for `frames` frames: `max(hir_min, floor(hir / 100 * frames))` computed as
    /// `lirs.c` does, kept within `1..=frames - 1` (1 for a single frame).
    pub fn hir_frames(&self, frames: usize) -> usize {
        let share = (self.hir_percent / 100.0 * frames as f64) as usize;
        let l = share.max(self.hir_min as usize);
        if frames <= 1 {
            1
        } else {
            l.clamp(1, frames - 1)
        }
    }
}

/// `floor(multiple * frames)`, or no bound.
fn bound(multiple: Option<f64>, frames: usize) -> usize {
    match multiple {
        Some(x) => {
            let v = x * frames as f64;
            if v >= usize::MAX as f64 {
                usize::MAX
            } else {
                v as usize
            }
        }
        None => usize::MAX,
    }
}

#[derive(Debug)]
pub struct Lirs {
    /// Frames reserved for LIR pages.
    l_lirs: usize,
    /// Frames for resident HIR pages (reported for tests and documentation).
    l_hirs: usize,
    /// Bound on the non-resident HIR entries of S.
    max_nonresident: usize,
    /// Bound on the entries of S.
    max_stack: usize,
    /// Current number of LIR pages.
    lir: usize,
    /// The stack S: head is the top.
    s: PageList,
    /// The list Q of resident HIR pages: tail is the front (next victim), head the end.
    q: PageList,
    /// The non-resident HIR entries of S, newest at the head.
    n: PageList,
    /// One of the state constants per page.
    state: Vec<u8>,
}

impl Lirs {
    /// pagelab's LIRS for a cache of `frames` pages ([`LirsParams::DEFAULT`]).
    pub fn new(frames: u32) -> Self {
        Self::with_params(frames, LirsParams::DEFAULT)
    }

    /// LIRS for `frames` pages with the given sizes and bounds.
    pub fn with_params(frames: u32, params: LirsParams) -> Self {
        let f = frames.max(1) as usize;
        let mut l = Self::with_nonresident_limit(frames, bound(params.ghosts, f));
        l.l_hirs = params.hir_frames(f);
        l.l_lirs = f - l.l_hirs;
        l.max_stack = bound(params.stack, f);
        l
    }

    /// pagelab's LIRS for `frames` pages keeping at most `max_nonresident` non-resident
    /// HIR entries in the stack S.
    pub fn with_nonresident_limit(frames: u32, max_nonresident: usize) -> Self {
        let frames = frames.max(1) as usize;
        let l_hirs = LirsParams::DEFAULT.hir_frames(frames);
        Lirs {
            l_lirs: frames - l_hirs,
            l_hirs,
            max_nonresident,
            max_stack: usize::MAX,
            lir: 0,
            s: PageList::default(),
            q: PageList::default(),
            n: PageList::default(),
            state: Vec::new(),
        }
    }

    /// Frames for LIR pages and for resident HIR pages.
    pub fn sizes(&self) -> (usize, usize) {
        (self.l_lirs, self.l_hirs)
    }

    /// Removes the HIR entries at the bottom of S until the bottom is an LIR page.
    fn prune(&mut self) {
        while let Some(bottom) = self.s.tail() {
            match self.state[bottom as usize] {
                LIR => break,
                HIR_S => self.state[bottom as usize] = HIR_Q,
                GHOST => {
                    self.n.unlink(bottom);
                    self.state[bottom as usize] = NONE;
                }
                _ => self.state[bottom as usize] = NONE, // INCOMING
            }
            self.s.unlink(bottom);
        }
    }

    /// Makes `page` (at the top of S, off Q and N) an LIR page; if the LIR set was full,
    /// the LIR page at the bottom of S becomes a resident HIR page at the end of Q. Then
    /// prunes S.
    fn promote(&mut self, page: PageId) {
        self.state[page as usize] = LIR;
        self.lir += 1;
        if self.lir > self.l_lirs {
            let bottom = self.s.tail().expect("an LIR page at the bottom of S");
            debug_assert_eq!(self.state[bottom as usize], LIR);
            self.s.unlink(bottom);
            self.q.push_front(bottom);
            self.state[bottom as usize] = HIR_Q;
            self.lir -= 1;
        }
        self.prune();
    }

    /// `lirs.c`'s bound on S, after a reference: one entry over, and the lowest HIR entry
    /// of S (the first above the LIR pages at its bottom) leaves S. A resident one stays
    /// in Q, a non-resident one is forgotten.
    #[inline]
    fn bound_stack(&mut self) {
        if self.s.len() <= self.max_stack {
            return;
        }
        let mut entry = self.s.tail();
        while let Some(p) = entry {
            match self.state[p as usize] {
                LIR => entry = self.s.prev_of(p),
                HIR_S => {
                    self.s.unlink(p);
                    self.state[p as usize] = HIR_Q;
                    return;
                }
                _ => {
                    // GHOST (no page is INCOMING between references)
                    self.s.unlink(p);
                    self.n.unlink(p);
                    self.state[p as usize] = NONE;
                    return;
                }
            }
        }
    }

    #[cfg(test)]
    fn state_of(&self, page: PageId) -> u8 {
        self.state[page as usize]
    }
}

impl ReplacementPolicy for Lirs {
    fn name(&self) -> &'static str {
        "lirs"
    }

    fn reserve_pages(&mut self, pages: usize) {
        for l in [&mut self.s, &mut self.q, &mut self.n] {
            l.reserve_pages(pages);
        }
        if pages > self.state.len() {
            self.state.resize(pages, NONE);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        match self.state[page as usize] {
            LIR => {
                // an LIR hit at the bottom of S uncovers HIR entries to prune
                let was_bottom = self.s.tail() == Some(page);
                self.s.move_to_front(page);
                if was_bottom {
                    self.prune();
                }
            }
            HIR_S => {
                // its new IRR is below the recency of the bottom LIR page: swap them
                self.s.move_to_front(page);
                self.q.unlink(page);
                self.promote(page);
            }
            HIR_Q => {
                self.s.push_front(page);
                if self.lir < self.l_lirs {
                    self.q.unlink(page);
                    self.promote(page);
                } else {
                    self.state[page as usize] = HIR_S;
                    self.q.move_to_front(page);
                    self.prune(); // only does something when L_lirs = 0
                }
                self.bound_stack(); // S grew by one
            }
            s => debug_assert!(false, "on_hit on non-resident page {page} (state {s})"),
        }
    }

    fn on_miss(&mut self, page: PageId, _time: u64) {
        if self.state[page as usize] == GHOST {
            self.n.unlink(page);
            self.state[page as usize] = INCOMING;
        }
    }

    fn select_victim(&mut self, _time: u64) -> PageId {
        if let Some(victim) = self.q.pop_back() {
            if self.state[victim as usize] == HIR_S {
                // stays in S as a non-resident HIR entry
                self.state[victim as usize] = GHOST;
                self.n.push_front(victim);
                if self.n.len() > self.max_nonresident {
                    let oldest = self.n.pop_back().expect("a non-resident entry");
                    self.s.unlink(oldest);
                    self.state[oldest as usize] = NONE;
                }
            } else {
                self.state[victim as usize] = NONE;
            }
            victim
        } else {
            // no resident HIR page (reclaim before the cache is full): the oldest LIR page
            let victim = self.s.tail().expect("select_victim with no resident page");
            debug_assert_eq!(self.state[victim as usize], LIR);
            self.s.unlink(victim);
            self.state[victim as usize] = NONE;
            self.lir -= 1;
            self.prune();
            victim
        }
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        match self.state[page as usize] {
            GHOST | INCOMING => {
                // a non-resident HIR page in S: its IRR is below the bottom LIR page's recency
                if self.state[page as usize] == GHOST {
                    self.n.unlink(page);
                }
                self.s.move_to_front(page);
                self.promote(page);
            }
            NONE => {
                self.s.push_front(page);
                if self.lir < self.l_lirs {
                    self.promote(page);
                } else {
                    self.state[page as usize] = HIR_S;
                    self.q.push_front(page);
                    self.prune(); // only does something when L_lirs = 0
                }
            }
            s => debug_assert!(false, "on_insert of resident page {page} (state {s})"),
        }
        self.bound_stack();
    }

    fn on_remove(&mut self, page: PageId) {
        match self.state[page as usize] {
            LIR => {
                self.s.unlink(page);
                self.lir -= 1;
                self.state[page as usize] = NONE;
                self.prune();
            }
            HIR_S => {
                self.s.unlink(page);
                self.q.unlink(page);
                self.state[page as usize] = NONE;
            }
            HIR_Q => {
                self.q.unlink(page);
                self.state[page as usize] = NONE;
            }
            _ => {}
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.state, page as usize);
        self.s.prefetch(page);
        self.q.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::run;
    use rand::{Rng, SeedableRng};

    /// Checks the structure against section 3.3; `warm` says no page was removed, so the
    /// LIR set is full once `L_lirs` pages are resident.
    fn check_invariants(l: &Lirs, t: usize, resident: usize, warm: bool) {
        let (l_lirs, _) = l.sizes();
        let stack: Vec<PageId> = l.s.iter().collect();
        if let Some(&bottom) = stack.last() {
            assert_eq!(l.state_of(bottom), LIR, "the bottom of S is not LIR at {t}");
        }
        let mut lir = 0;
        let mut ghosts = Vec::new();
        for &p in &stack {
            match l.state_of(p) {
                LIR => lir += 1,
                HIR_S => {}
                GHOST => ghosts.push(p),
                s => panic!("page {p} in S with state {s} at {t}"),
            }
        }
        let lir_total = l.state.iter().filter(|&&s| s == LIR).count();
        assert_eq!((lir, lir_total), (l.lir, l.lir), "LIR count at {t}");
        assert!(l.lir <= l_lirs, "{} LIR pages > L_lirs = {l_lirs} at {t}", l.lir);
        if warm {
            assert_eq!(l.lir, resident.min(l_lirs), "the LIR set fills first, then stays full (at {t})");
        }
        // Q holds exactly the resident HIR pages, and HIR_S / HIR_Q match S membership
        let hir: Vec<PageId> = (0..l.state.len() as PageId).filter(|&p| matches!(l.state_of(p), HIR_S | HIR_Q)).collect();
        let mut q: Vec<PageId> = l.q.iter().collect();
        q.sort_unstable();
        assert_eq!(q, hir, "Q is not the set of resident HIR pages at {t}");
        let in_s = stack.iter().filter(|&&p| l.state_of(p) == HIR_S).count();
        assert_eq!(in_s, hir.iter().filter(|&&p| l.state_of(p) == HIR_S).count(), "an HIR_S page off S at {t}");
        assert_eq!(l.lir + hir.len(), resident, "resident pages at {t}");
        // N is the non-resident entries of S, in S order, within the bound
        let n: Vec<PageId> = l.n.iter().collect();
        assert_eq!(n, ghosts, "N is not the non-resident entries of S in S order at {t}");
        assert!(n.len() <= l.max_nonresident, "{} non-resident entries > bound at {t}", n.len());
        let ghost_total = l.state.iter().filter(|&&s| s == GHOST).count();
        assert_eq!(ghost_total, n.len());
        assert!(!l.state.contains(&INCOMING), "an incoming page left over at {t}");
    }

    fn checked(l: &mut Lirs, c: usize, stream: &[PageId]) -> u64 {
        run(l, c, stream, |l, t, count| check_invariants(l, t, count, true))
    }

    fn random_stream(pages: u32, len: usize, seed: u64) -> Vec<PageId> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        // a mix of a hot set and a wide range, so that all the cases of 3.3 occur
        (0..len)
            .map(|_| if rng.gen_bool(0.5) { rng.gen_range(0..pages / 4 + 1) } else { rng.gen_range(0..pages) })
            .collect()
    }

    #[test]
    fn invariants_hold_on_random_streams() {
        // (frames, pages, bound on non-resident entries, seed, whether the bound is reached)
        let cases = [
            (1usize, 5u32, 2usize, 1u64, false),
            (3, 10, 6, 2, true),
            (16, 40, 32, 3, false),
            (50, 60, 100, 4, false),
            (50, 500, 100, 5, true),
            (250, 1000, 200, 6, true),
            (20, 200, 3, 7, true),
            (20, 200, 0, 8, true),
        ];
        for (c, pages, bound, seed, reached) in cases {
            let stream = random_stream(pages, 20_000, seed);
            let mut l = Lirs::with_nonresident_limit(c as u32, bound);
            let mut max_ghosts = 0;
            let mut promotions = 0;
            let mut last_lir = Vec::new();
            run(&mut l, c, &stream, |l, t, count| {
                check_invariants(l, t, count, true);
                max_ghosts = max_ghosts.max(l.n.len());
                let lir: Vec<bool> = l.state.iter().map(|&s| s == LIR).collect();
                if !last_lir.is_empty() && lir != last_lir {
                    promotions += 1;
                }
                last_lir = lir;
            });
            assert_eq!(max_ghosts == bound, reached, "the bound was reached (c = {c}, max {max_ghosts})");
            assert!(c == 1 || promotions > 100, "HIR pages were promoted (c = {c})");
        }
        assert_eq!(Lirs::new(50).max_nonresident, 100, "the default bound is 2 * frames");
    }

    /// `on_remove` of random resident pages between references (as the memory manager
    /// does) keeps the structure consistent; the warm-up rule refills the LIR set.
    #[test]
    fn removals_keep_the_invariants() {
        for (c, pages, seed) in [(3usize, 10u32, 11u64), (20, 100, 12), (100, 300, 13)] {
            let stream = random_stream(pages, 20_000, seed);
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed + 100);
            let mut l = Lirs::new(c as u32);
            l.reserve_pages(pages as usize);
            let mut resident: Vec<PageId> = Vec::new();
            let mut is_resident = vec![false; pages as usize];
            for (t, &x) in stream.iter().enumerate() {
                if is_resident[x as usize] {
                    l.on_hit(x, t as u64);
                } else {
                    l.on_miss(x, t as u64);
                    if resident.len() == c {
                        let v = l.select_victim(t as u64);
                        assert!(is_resident[v as usize] && v != x);
                        is_resident[v as usize] = false;
                        resident.retain(|&p| p != v);
                    }
                    l.on_insert(x, t as u64);
                    is_resident[x as usize] = true;
                    resident.push(x);
                }
                if rng.gen_bool(0.05) {
                    let v = resident.swap_remove(rng.gen_range(0..resident.len()));
                    l.on_remove(v);
                    is_resident[v as usize] = false;
                }
                if rng.gen_bool(0.01) && !resident.is_empty() {
                    // reclaim before the cache is full (may take an LIR page)
                    let v = l.select_victim(t as u64);
                    assert!(is_resident[v as usize], "reclaimed non-resident page {v}");
                    is_resident[v as usize] = false;
                    resident.retain(|&p| p != v);
                }
                check_invariants(&l, t, resident.len(), false);
            }
        }
    }

    /// Reclaim with no resident HIR page takes the LIR page at the bottom of S.
    #[test]
    fn reclaim_without_hir_pages_takes_the_oldest_lir_page() {
        let mut l = Lirs::new(3);
        // 0 and 1 are LIR (warm-up); S = [1, 0]; 0 again: S = [0, 1]
        run(&mut l, 3, &[0, 1, 0], |l, t, count| check_invariants(l, t, count, true));
        assert_eq!(l.select_victim(3), 1);
        assert_eq!(l.s.iter().collect::<Vec<_>>(), vec![0]);
        assert_eq!((l.lir, l.state_of(1)), (1, NONE));
    }

    /// A cyclic loop over n + 1 pages on n frames: LRU always evicts the page needed next,
    /// so every reference faults. LIRS (L_hirs = 1, L_lirs = n - 1 = 99): the first pass
    /// makes 0..=98 LIR (warm-up) and 99, 100 HIR; 99 is evicted by 100 and stays in S as
    /// non-resident. Each later pass hits 0..=98 (the LIR set is never touched: LIR pages
    /// only lose their status to a promoted HIR page, and none is promoted: when 98 goes
    /// to the top, the bottom of S is the ghost 99 and the HIR 100, which pruning drops,
    /// so 99 and 100 always miss as pages outside S). 99 then evicts 100 and 100 evicts 99:
    /// exactly L_hirs + 1 = 2 faults per pass after the first, in the same state as
    /// after the first pass. Total: (n + 1) + 2 (passes - 1).
    #[test]
    fn a_loop_one_larger_than_memory() {
        let n = 100usize;
        let passes = 30;
        let stream: Vec<PageId> = (0..passes).flat_map(|_| 0..=n as PageId).collect();
        let lru = run(&mut crate::policy::Lru::new(), n, &stream, |_, _, _| {});
        assert_eq!(lru, ((n + 1) * passes) as u64);
        let mut l = Lirs::new(n as u32);
        assert_eq!(l.sizes(), (99, 1));
        let lirs = checked(&mut l, n, &stream);
        assert_eq!(lirs, (n + 1 + 2 * (passes - 1)) as u64, "LIRS {lirs}");
        assert!((0..99).all(|p| l.state_of(p) == LIR));
        assert_eq!((l.state_of(99), l.state_of(100)), (GHOST, HIR_S));
    }

    /// One step of the worked example: the victim (if any), S from top to bottom with
    /// each page's status ('L' LIR, 'H' resident HIR, 'n' non-resident HIR), and Q from
    /// front to end.
    type Step = (Option<PageId>, String, Vec<PageId>);

    fn trace(l: &mut Lirs, c: usize, stream: &[PageId]) -> Vec<Step> {
        l.reserve_pages(16);
        let mut resident = [false; 16];
        let mut count = 0;
        let mut steps = Vec::new();
        for (t, &x) in stream.iter().enumerate() {
            let mut victim = None;
            if resident[x as usize] {
                l.on_hit(x, t as u64);
            } else {
                l.on_miss(x, t as u64);
                if count == c {
                    let v = l.select_victim(t as u64);
                    resident[v as usize] = false;
                    victim = Some(v);
                } else {
                    count += 1;
                }
                l.on_insert(x, t as u64);
                resident[x as usize] = true;
            }
            check_invariants(l, t, count, true);
            let s = l
                .s
                .iter()
                .map(|p| format!("{p}{}", match l.state_of(p) { LIR => 'L', HIR_S => 'H', _ => 'n' }))
                .collect::<Vec<_>>()
                .join(" ");
            let mut q: Vec<PageId> = l.q.iter().collect();
            q.reverse(); // front (tail) first
            steps.push((victim, s, q));
        }
        steps
    }

    /// Hand trace on 3 frames: L_hirs = 1, L_lirs = 2. S top first, Q front first.
    ///  t ref  event                                              S              Q
    ///  0  1   miss, warm-up: LIR                                 1L             -
    ///  1  2   miss, warm-up: LIR (LIR set full)                  2L 1L          -
    ///  2  3   miss, memory not full: resident HIR                3H 2L 1L       3
    ///  3  4   miss, victim 3 (front of Q) stays in S as non-res. 4H 3n 2L 1L    4
    ///  4  3   miss on non-resident 3 in S: victim 4 (stays in S);
    ///         3 becomes LIR, bottom LIR 1 becomes HIR, to Q       3L 4n 2L       1
    ///  5  1   hit on resident HIR 1 not in S: stays HIR, to top
    ///         of S and end of Q                                  1H 3L 4n 2L    1
    ///  6  2   hit on LIR 2 at the bottom: to top, prune 4n       2L 1H 3L       1
    ///  7  1   hit on HIR 1 in S: LIR; bottom LIR 3 becomes HIR   1L 2L          3
    ///  8  5   miss, victim 3 (not in S: forgotten); 5 HIR        5H 1L 2L       5
    ///  9  3   miss on forgotten 3: victim 5 (stays in S); 3 HIR  3H 5n 1L 2L    3
    /// 10  5   miss on non-resident 5 in S: victim 3 (stays in S);
    ///         5 becomes LIR, bottom LIR 2 becomes HIR            5L 3n 1L       2
    /// 11  4   miss, 4 not in S (pruned at 6): victim 2; 4 HIR    4H 5L 3n 1L    4
    #[test]
    fn a_hand_traced_example() {
        let stream = [1, 2, 3, 4, 3, 1, 2, 1, 5, 3, 5, 4];
        let mut l = Lirs::new(3);
        assert_eq!(l.sizes(), (2, 1));
        let steps = trace(&mut l, 3, &stream);
        let expected: [(Option<PageId>, &str, &[PageId]); 12] = [
            (None, "1L", &[]),
            (None, "2L 1L", &[]),
            (None, "3H 2L 1L", &[3]),
            (Some(3), "4H 3n 2L 1L", &[4]),
            (Some(4), "3L 4n 2L", &[1]),
            (None, "1H 3L 4n 2L", &[1]),
            (None, "2L 1H 3L", &[1]),
            (None, "1L 2L", &[3]),
            (Some(3), "5H 1L 2L", &[5]),
            (Some(5), "3H 5n 1L 2L", &[3]),
            (Some(3), "5L 3n 1L", &[2]),
            (Some(2), "4H 5L 3n 1L", &[4]),
        ];
        for (t, (got, want)) in steps.iter().zip(expected.iter()).enumerate() {
            assert_eq!((got.0, got.1.as_str(), got.2.as_slice()), (want.0, want.1, want.2), "step {t}");
        }
        assert_eq!(steps.iter().filter(|s| s.0.is_some()).count(), 6);
    }

    /// Scan resistance (section 1): a hot set of 60 pages, then a scan of 300 pages never
    /// seen again, 50 times, on 100 frames. The hot pages become LIR in the first round
    /// (warm-up) and no scan page is ever re-referenced, so none is promoted and no hot
    /// page is demoted: LIRS faults only on the compulsory misses. LRU loses the hot set
    /// to every scan. The scans also fill the non-resident part of S up to its bound.
    #[test]
    fn a_scan_does_not_flush_the_hot_set() {
        let c = 100;
        let mut stream: Vec<PageId> = Vec::new();
        let mut next_new = 1000;
        for _ in 0..50 {
            stream.extend(0..60);
            for _ in 0..300 {
                stream.push(next_new);
                next_new += 1;
            }
        }
        let mut l = Lirs::new(c as u32);
        let lirs = checked(&mut l, c, &stream);
        let lru = run(&mut crate::policy::Lru::new(), c, &stream, |_, _, _| {});
        assert_eq!(lru, 50 * 360, "LRU {lru}");
        assert_eq!(lirs, 60 + 50 * 300, "LIRS {lirs}");
        assert!((0..60).all(|p| l.state_of(p) == LIR));
        assert_eq!(l.n.len(), 2 * c, "the non-resident entries are bounded");
    }

    /// A direct model of the authors' `lirs.c` for the tests: S as a vector (top first) of
    /// the entries in S, Q as a queue (front: the next victim), per page the program's
    /// flags (resident, HIR, in S), free frames counted down. A miss evicts Q's front
    /// first; a page missed while more than `L_hirs` frames are free is LIR; a page found
    /// HIR in S becomes LIR and demotes the bottom LIR page to the end of Q; S is pruned to
    /// an LIR bottom after every reference, then one entry over `MAX_S_LEN` sends its
    /// lowest HIR entry out. It shares no code with [`Lirs`] (no N list, no states, no
    /// warm-up rule, no trait calls), and it models only the `stack` bound, not `ghosts`.
    /// Returns the faults and the victims.
    fn lirs_c(stream: &[PageId], m: usize, params: LirsParams) -> (u64, Vec<PageId>) {
        assert!(params.ghosts.is_none());
        let pages = *stream.iter().max().unwrap() as usize + 1;
        let l_hirs = params.hir_frames(m);
        let max_s = bound(params.stack, m);
        let (mut resident, mut hir, mut in_s) = (vec![false; pages], vec![true; pages], vec![false; pages]);
        let mut s: Vec<PageId> = Vec::new();
        let mut q: std::collections::VecDeque<PageId> = Default::default();
        let (mut free, mut lir, mut faults, mut victims) = (m, 0usize, 0u64, Vec::new());
        for &x in stream {
            let i = x as usize;
            if !resident[i] {
                faults += 1;
                if free == 0 {
                    let v = q.pop_front().expect("a resident HIR page");
                    resident[v as usize] = false;
                    victims.push(v);
                    free += 1;
                } else if free > l_hirs {
                    hir[i] = false;
                    lir += 1;
                }
                free -= 1;
            } else if hir[i] {
                q.retain(|&p| p != x);
            }
            let was_in_s = in_s[i];
            s.retain(|&p| p != x);
            s.insert(0, x);
            resident[i] = true;
            in_s[i] = true;
            if hir[i] && was_in_s {
                hir[i] = false;
                lir += 1;
                if lir > m - l_hirs {
                    let b = *s.last().unwrap();
                    assert!(!hir[b as usize], "the bottom of S is LIR");
                    hir[b as usize] = true;
                    in_s[b as usize] = false;
                    s.pop();
                    q.push_back(b);
                    lir -= 1;
                }
            } else if hir[i] {
                q.push_back(x);
            }
            while let Some(&b) = s.last() {
                if !hir[b as usize] {
                    break;
                }
                in_s[b as usize] = false;
                s.pop();
            }
            if s.len() > max_s {
                let k = s.iter().rposition(|&p| hir[p as usize]).expect("an HIR entry in S");
                in_s[s[k] as usize] = false;
                s.remove(k);
            }
        }
        (faults, victims)
    }

    /// `lirs:authors` (and variants of its sizes and stack bound) equal the model of the
    /// program, victim by victim, on random streams.
    #[test]
    fn the_authors_preset_equals_a_model_of_lirs_c() {
        let variants = [
            LirsParams::AUTHORS,
            LirsParams { hir_percent: 1.0, hir_min: 1, stack: None, ghosts: None },
            LirsParams { hir_percent: 10.0, hir_min: 2, stack: Some(1.0), ghosts: None },
            LirsParams { hir_percent: 25.0, hir_min: 3, stack: Some(1.5), ghosts: None },
            LirsParams { hir_percent: 0.0, hir_min: 4, stack: Some(3.0), ghosts: None },
        ];
        for params in variants {
            for (c, pages, seed) in [(10usize, 30u32, 41u64), (10, 200, 42), (16, 40, 43), (50, 500, 44), (100, 150, 45), (120, 2000, 46)] {
                let stream: Vec<PageId> = random_stream(pages, 8_000, seed).into_iter().fold(Vec::new(), |mut v, x| {
                    if v.last() != Some(&x) {
                        v.push(x); // a replay's records: no immediate repeat
                    }
                    v
                });
                let mut l = Lirs::with_params(c as u32, params);
                let got = crate::policy::testing::drive(&mut l, c, &stream, |l, t, count| check_invariants(l, t, count, true));
                assert_eq!(got, lirs_c(&stream, c, params), "{params:?}, c = {c}, seed {seed}");
                assert!(l.s.len() <= bound(params.stack, c), "S within its bound");
            }
        }
    }

    /// The two presets on 10 frames (the least `lirs.c` accepts) and 1..=10, 11, 9.
    /// `lirs:authors`: L_hirs = max(2, 1% of 10) = 2, so 1..=8 become LIR (warm-up) and 9,
    /// 10 resident HIR (Q = 9 10). 11 evicts Q's front, 9, which stays in S non-resident.
    /// 9 misses: 10 is evicted, and 9, an HIR page in S, becomes LIR; the bottom LIR page 1
    /// goes to the end of Q. 12 faults, victims 9 and 10. `lirs` (L_hirs = 1): 1..=9 are
    /// LIR, 10 HIR; 11 evicts 10 and 9 hits: 11 faults.
    #[test]
    fn a_hand_traced_example_of_the_presets() {
        let stream: Vec<PageId> = (1..=11).chain([9]).collect();
        let mut authors = Lirs::with_params(10, LirsParams::AUTHORS);
        assert_eq!(authors.sizes(), (8, 2));
        let got = crate::policy::testing::drive(&mut authors, 10, &stream, |l, t, count| check_invariants(l, t, count, true));
        assert_eq!(got, (12, vec![9, 10]));
        assert_eq!(lirs_c(&stream, 10, LirsParams::AUTHORS), (12, vec![9, 10]));
        assert_eq!((authors.state_of(9), authors.state_of(1), authors.state_of(10)), (LIR, HIR_Q, GHOST));
        let mut ours = Lirs::new(10);
        assert_eq!(ours.sizes(), (9, 1));
        assert_eq!(crate::policy::testing::drive(&mut ours, 10, &stream, |_, _, _| {}), (11, vec![10]));
    }
}
