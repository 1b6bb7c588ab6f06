//! 2Q, full version (Johnson and Shasha, "2Q: A Low Overhead High Performance Buffer
//! Management Replacement Algorithm", VLDB 1994, the "full version"). Three intrusive lists over
//! dense ids: A1in (resident, FIFO of pages seen once, target size Kin), Am (resident, LRU
//! of pages seen again after leaving A1in) and A1out (ghost FIFO of the ids last evicted
//! from A1in, at most Kout of them). A hit in A1in changes nothing: references close
//! together are correlated and say nothing about the page's long-term value. A page is
//! promoted to Am only when it misses while its id is still on A1out: a page counts as
//! hot if it is needed again within Kout evictions from A1in after leaving A1in. A hot
//! set re-referenced less often than that looks like a scan to 2Q (tested). Defaults from
//! the paper: Kin = 25% and Kout = 50% of the frames (at least 1 each).
//! Invariants (tested): |A1in| + |Am| = resident pages, |A1out| <= Kout, a page is on
//! at most one list. The three lists share one link array that also names a page's list
//! ([`PageLists`]): a page moving between lists touches one entry.
//!
//! The caller owns residency, so the paper's miss path splits over the trait's calls:
//! `on_miss` notes whether the page was on A1out, `select_victim` is `reclaimfor` (called
//! only when memory is full), `on_insert` puts the page on Am or A1in.
//!
//! Decisions the paper leaves open:
//! - A page found on A1out leaves A1out in `on_miss` (the pseudo-code says only that it
//!   is added to Am), so it is never on two lists and the victim chosen for it cannot
//!   push its own id off A1out before it is placed.
//! - `reclaimfor` with |A1in| <= Kin and Am empty (possible only when Kin >= the frames,
//!   or when a timed system reclaims before memory is full) takes A1in's oldest page,
//!   and remembers it on A1out like any page evicted from A1in: it was seen only once.
//! - A page evicted from Am is forgotten, as in the paper; so is a page that leaves
//!   through `on_remove` (freed or migrated, not judged cold), whichever list it was on.
//! - A1out is trimmed when an id is added to it (the oldest id goes first once Kout are
//!   held), not on the next miss. Kout = 0 keeps no history, and then no page reaches Am.
//! - The comparison is |A1in| > Kin as in the paper, counted before the missing page is
//!   placed (the paper calls `reclaimfor(X)` before adding X to A1in).

use super::{PageLists, ReplacementPolicy};
use crate::trace::PageId;

const A1IN: u8 = 1;
const AM: u8 = 2;
const A1OUT: u8 = 3;

const NO_PAGE: PageId = PageId::MAX;

#[derive(Debug)]
pub struct TwoQ {
    kin: usize,
    kout: usize,
    /// A1in: newest at the head, oldest (the next victim) at the tail. Am: most recently
    /// used at the head. A1out: most recently evicted from A1in at the head.
    lists: PageLists<3>,
    /// The page whose miss found it on A1out, until it is inserted (then it goes to Am).
    promote: PageId,
}

impl TwoQ {
    /// 2Q for a cache of `frames` pages with the paper's sizes: Kin = frames / 4 and
    /// Kout = frames / 2, each at least 1.
    pub fn new(frames: u32) -> Self {
        Self::with_params((frames / 4).max(1) as usize, (frames / 2).max(1) as usize)
    }

    /// 2Q with A1in's target size `kin` and A1out's capacity `kout`.
    pub fn with_params(kin: usize, kout: usize) -> Self {
        TwoQ {
            kin,
            kout,
            lists: PageLists::default(),
            promote: NO_PAGE,
        }
    }

    /// Puts the id of a page just evicted from A1in on A1out, dropping the oldest id
    /// when A1out is full.
    fn remember(&mut self, page: PageId) {
        if self.kout == 0 {
            return;
        }
        if self.lists.len(A1OUT) >= self.kout {
            self.lists.pop_back(A1OUT);
        }
        self.lists.push_front(A1OUT, page);
    }

    #[cfg(test)]
    fn sizes(&self) -> (usize, usize, usize) {
        (self.lists.len(A1IN), self.lists.len(AM), self.lists.len(A1OUT))
    }
}

impl ReplacementPolicy for TwoQ {
    fn name(&self) -> &'static str {
        "2q"
    }

    fn reserve_pages(&mut self, pages: usize) {
        self.lists.reserve_pages(pages);
    }

    /// A hit in Am moves the page to Am's MRU end; a hit in A1in changes nothing.
    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        if self.lists.list_of(page) == AM {
            self.lists.remove(page);
            self.lists.push_front(AM, page);
        }
    }

    /// Notes (and takes off A1out) a page whose id is still remembered.
    fn on_miss(&mut self, page: PageId, _time: u64) {
        if self.lists.list_of(page) == A1OUT {
            self.lists.remove(page);
            self.promote = page;
        } else {
            self.promote = NO_PAGE;
        }
    }

    /// `reclaimfor`: A1in's oldest page (remembered on A1out) while A1in exceeds Kin,
    /// else Am's LRU page (forgotten).
    fn select_victim(&mut self, _time: u64) -> PageId {
        if self.lists.len(A1IN) > self.kin || self.lists.is_empty(AM) {
            let victim = self.lists.pop_back(A1IN).expect("select_victim with no resident page");
            self.remember(victim);
            victim
        } else {
            self.lists.pop_back(AM).expect("a resident page in Am")
        }
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        let mut seen = std::mem::replace(&mut self.promote, NO_PAGE) == page;
        if self.lists.list_of(page) == A1OUT {
            // inserted without an `on_miss` first: the id on A1out still counts
            self.lists.remove(page);
            seen = true;
        }
        self.lists.push_front(if seen { AM } else { A1IN }, page);
    }

    fn on_remove(&mut self, page: PageId) {
        if matches!(self.lists.list_of(page), A1IN | AM) {
            self.lists.remove(page);
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.lists.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::run;
    use rand::{Rng, SeedableRng};

    /// On no list.
    const NONE: u8 = 0;

    /// The invariants: each list's members are exactly the pages tagged with it (so no
    /// page is on two lists), A1in and Am hold the resident pages, A1out holds at most
    /// Kout ids.
    fn check_invariants(q: &TwoQ, t: usize, count: usize) {
        let (a1in, am, a1out) = q.sizes();
        assert_eq!(a1in + am, count, "A1in and Am are the resident pages at {t}");
        assert!(a1out <= q.kout, "|A1out| = {a1out} > Kout at {t}");
        for tag in [A1IN, AM, A1OUT] {
            assert!(q.lists.iter(tag).all(|p| q.lists.list_of(p) == tag), "a page of list {tag} tagged otherwise at {t}");
            assert_eq!(q.lists.iter(tag).count(), q.lists.len(tag), "list {tag} at {t}");
        }
        assert_eq!(q.promote, NO_PAGE);
    }

    /// `run` with the invariants checked after every reference.
    fn checked(q: &mut TwoQ, c: usize, stream: &[PageId]) -> u64 {
        run(q, c, stream, check_invariants)
    }

    #[test]
    fn invariants_hold_on_random_streams() {
        for (c, pages, seed) in [(1usize, 5u32, 1u64), (2, 6, 2), (4, 10, 3), (16, 40, 4), (50, 60, 5), (50, 500, 6)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            // a hot set and a wide range, so that pages reach Am and A1out fills
            let stream: Vec<PageId> = (0..20_000)
                .map(|_| if rng.gen_bool(0.5) { rng.gen_range(0..pages / 4 + 1) } else { rng.gen_range(0..pages) })
                .collect();
            let (mut am_used, mut a1out_used) = (false, false);
            run(&mut TwoQ::new(c as u32), c, &stream, |q, t, count| {
                check_invariants(q, t, count);
                am_used |= !q.lists.is_empty(AM);
                a1out_used |= !q.lists.is_empty(A1OUT);
            });
            assert!(am_used && a1out_used, "c = {c}: Am and A1out were used");
        }
        // other sizes, including no history at all
        for (kin, kout) in [(0, 3), (1, 0), (8, 8), (20, 1)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(kin as u64 * 31 + kout as u64);
            let stream: Vec<PageId> = (0..5_000).map(|_| rng.gen_range(0..30)).collect();
            let mut q = TwoQ::with_params(kin, kout);
            checked(&mut q, 10, &stream);
            assert!(kout > 0 || q.lists.is_empty(AM), "no history, no promotion");
        }
    }

    /// A page referenced twice in a row, then never again, stays on A1in (the second
    /// reference is correlated), goes to A1out and is forgotten; it never enters Am. A
    /// page re-referenced while its id is on A1out does.
    #[test]
    fn correlated_references_do_not_promote() {
        // Kin = 1, Kout = 2
        let mut q = TwoQ::new(4);
        assert_eq!((q.kin, q.kout), (1, 2));
        let stream = [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        checked(&mut q, 4, &stream);
        // again, watching page 0 after every reference
        let mut ever_in_am = false;
        let mut q2 = TwoQ::new(4);
        run(&mut q2, 4, &stream, |q, t, _| {
            ever_in_am |= q.lists.list_of(0) == AM;
            if t == 1 {
                assert_eq!(q.lists.list_of(0), A1IN, "the repeated reference left 0 on A1in");
            }
            if t == 5 {
                assert_eq!(q.lists.list_of(0), A1OUT, "4 evicts A1in's oldest page, 0, to A1out");
            }
        });
        assert!(!ever_in_am);
        assert_eq!(q2.lists.list_of(0), NONE, "A1out has forgotten 0");
        assert_eq!(q2.sizes(), (4, 0, 2));

        // 0 missing while on A1out is promoted
        let mut q3 = TwoQ::new(4);
        checked(&mut q3, 4, &[0, 0, 1, 2, 3, 4, 0]);
        assert_eq!(q3.lists.list_of(0), AM);
        // A1in held 1..4 (4 > Kin): 1 was evicted for 0 and is remembered; 0 left A1out
        assert_eq!((q3.lists.list_of(1), q3.sizes()), (A1OUT, (3, 1, 1)));
        // a hit in Am keeps it there; the next victims come from A1in while it exceeds Kin
        q3.on_hit(0, 7);
        assert_eq!(q3.select_victim(8), 2);
        assert_eq!(q3.select_victim(9), 3);
        // |A1in| = 1 = Kin: Am's LRU page goes, and is not remembered
        assert_eq!(q3.select_victim(10), 0);
        assert_eq!(q3.lists.list_of(0), NONE);
        assert_eq!(q3.lists.iter(A1OUT).collect::<Vec<_>>(), vec![3, 2], "A1out keeps the newest Kout ids");
    }

    /// Scan resistance: once the hot set is in Am, one-time scans pass through A1in and
    /// never touch it. The warm-up puts it there: 60 hot pages, 60 new pages, the hot set
    /// again. After the 60 new pages, 20 evictions from A1in have moved hot pages 0..19
    /// to A1out; each hot page i then misses while on A1out (it is promoted) and evicts
    /// hot page i + 20 to A1out, 20 misses before it is referenced (20 < Kout = 50). So
    /// the warm-up costs 180 faults under both policies, and Am ends up holding the
    /// whole hot set (60 <= frames - Kin). Then 50 rounds of a 200-page scan and the hot
    /// set: a scan miss finds |A1in| = 40 > Kin and evicts from A1in, so 2Q faults only on
    /// the scan; LRU, whose hot set is older than the last 100 scan pages, refaults all
    /// 60 every round.
    #[test]
    fn a_scan_does_not_flush_the_hot_set() {
        let c = 100;
        let hot = 0..60;
        let mut stream: Vec<PageId> = hot.clone().collect();
        stream.extend(1000..1060);
        stream.extend(hot.clone());
        let mut next_new = 2000;
        for _ in 0..50 {
            stream.extend(next_new..next_new + 200);
            next_new += 200;
            stream.extend(hot.clone());
        }
        let mut q = TwoQ::new(c as u32);
        let two_q = checked(&mut q, c, &stream);
        let lru = run(&mut crate::policy::Lru::new(), c, &stream, |_, _, _| {});
        assert_eq!(two_q, 180 + 50 * 200, "2Q {two_q}");
        assert_eq!(lru, 180 + 50 * 260, "LRU {lru}");
        assert!(hot.clone().all(|p| q.lists.list_of(p) == AM));
    }

    /// The other side of the same rule: a hot set whose re-references are farther apart
    /// than A1in plus A1out can see is not told from a scan. Each round references the
    /// 60 hot pages twice (the second pass hits A1in: correlated, no promotion) and then
    /// 200 new pages. Am stays empty, A1in is a 100-page FIFO, a hot page leaves it 100
    /// misses after entering and A1out 50 misses later, but it is needed again only 259
    /// misses later: 2Q faults like LRU, 260 per round. (ARC, which promotes on the
    /// second pass, keeps the hot set on this stream.)
    #[test]
    fn a_hot_set_reused_beyond_the_ghost_window_is_not_recognised() {
        let c = 100;
        let mut stream: Vec<PageId> = Vec::new();
        let mut next_new = 1000;
        for _ in 0..50 {
            stream.extend(0..60);
            stream.extend(0..60);
            stream.extend(next_new..next_new + 200);
            next_new += 200;
        }
        let mut q = TwoQ::new(c as u32);
        let two_q = checked(&mut q, c, &stream);
        let lru = run(&mut crate::policy::Lru::new(), c, &stream, |_, _, _| {});
        assert_eq!(lru, 50 * 260);
        assert_eq!(two_q, 50 * 260);
        assert!(q.lists.is_empty(AM));
    }

    #[test]
    fn on_remove_forgets_a_resident_page() {
        let mut q = TwoQ::new(4);
        checked(&mut q, 4, &[0, 1, 2, 3, 4, 0]);
        // 0 was promoted to Am; 1 is on A1out
        assert_eq!((q.lists.list_of(0), q.lists.list_of(1)), (AM, A1OUT));
        q.on_remove(0);
        q.on_remove(2);
        q.on_remove(1); // not resident: ignored
        assert_eq!((q.lists.list_of(0), q.lists.list_of(1), q.lists.list_of(2)), (NONE, A1OUT, NONE));
        assert_eq!(q.sizes(), (2, 0, 1));
        assert_eq!(q.select_victim(0), 3);
    }
}
