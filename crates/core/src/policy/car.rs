//! CAR, CLOCK with Adaptive Replacement (Bansal and Modha, "CAR: Clock with Adaptive
//! Replacement", FAST 2004, figure 2). ARC's structure with CLOCK's hit path: two clocks of
//! resident pages, T1 (seen once recently) and T2 (seen at least twice), each page with a
//! reference bit; two LRU ghost lists, B1 and B2 (pages demoted from T1 and T2; history
//! only); a target `p` for |T1|. A hit only sets the page's bit: no list moves, no locks
//! in a real kernel, which is the point of CLOCK. Invariants (tested): |T1| + |T2| <= c,
//! |T2| + |B2| <= 2c, |T1| + |B1| <= c, |T1| + |T2| + |B1| + |B2| <= 2c, 0 <= p <= c.
//!
//! # Figure 2, as read here
//!
//! On a miss on x (lines 4-20):
//! 1. if the cache is full, `replace()` (lines 22-39): repeat { if |T1| >= max(1, p):
//!    T1's head with bit 0 is demoted to B1's MRU end (done), with bit 1 its bit is
//!    cleared and it goes to T2's tail; else T2's head with bit 0 is demoted to B2's MRU
//!    end (done), with bit 1 its bit is cleared and it goes to T2's tail }. It reads
//!    neither x nor anything x's miss changes, and it uses the *old* p;
//! 2. then, still under "cache full" and only if x is in neither ghost list, the directory
//!    replacement: if |T1| + |B1| = c, discard B1's LRU page, else if
//!    |T1| + |T2| + |B1| + |B2| = 2c, discard B2's LRU page (lines 6-10);
//! 3. then the placement (lines 12-19): x in no ghost list goes to T1's tail, bit 0; x in
//!    B1 adapts p = min(p + max(1, |B2| / |B1|), c), x in B2 adapts
//!    p = max(p - max(1, |B1| / |B2|), 0); either way x moves to T2's tail, bit 0.
//!
//! So, unlike ARC (figure 4 of the FAST 2003 paper, see `arc.rs`), the adaptation comes
//! *after* the victim is chosen and the ratios use the ghost sizes *after* REPLACE pushed
//! its victim onto B1 or B2. The order is observable: in `hand_traced_example`, step 7, a
//! B1 hit with |T1| = 1, p = 1 demotes T1's page 3 under the old p, where adapting first
//! (p = 2) would have sent the hand to T2 and demoted page 0.
//!
//! # Mapping onto the trait
//!
//! * `on_hit`: line 2, set the bit.
//! * `on_miss`: nothing. Nothing of figure 2 has to happen before the victim, and where x
//!   is (B1, B2 or nowhere) is already recorded in its per-page tag and cannot change
//!   before `on_insert`: REPLACE only moves resident pages and pushes onto the ghost
//!   lists' MRU ends, it never removes a ghost. Reading the tag in `on_insert` also keeps
//!   `on_insert` right when a caller inserts a page without a miss (a prefetch).
//! * `select_victim`: REPLACE; returns the demoted page, which is then a ghost, no longer
//!   resident. It does not depend on the missing page, so reclaim may call it alone.
//! * `on_insert`: the directory replacement (step 2) and the placement with the
//!   adaptation (step 3).
//! * `on_remove`: the page leaves T1 or T2 and is forgotten (it does not become a ghost:
//!   it was not chosen by the policy).
//!
//! # Decisions
//!
//! * Clocks are [`PageList`]s used as circular queues. `PageList::push_front` adds the
//!   newest page, `tail()` is the oldest, so the paper's *head* (under the hand) is
//!   `tail()` and "make it the tail page" is `unlink` + `push_front`. Ghost lists use the
//!   same list as LRU lists: MRU = `push_front`, LRU = `tail()`.
//! * One `u8` per page holds both the list tag and the reference bit (`REF`), so a hit
//!   touches one byte of one flat array.
//! * `p` and the ratios are integers (`|B2| / |B1|` truncated), as in `arc.rs`.
//! * The directory replacement runs on every insertion of a page new to the directory,
//!   not only when the cache was full. Without `on_remove` this is the paper: while the
//!   cache has not yet filled, B1 and B2 are empty and neither condition can hold. With
//!   `on_remove` (memory freed below c while ghosts exist) it keeps |T1| + |B1| <= c and
//!   the directory <= 2c, which the paper's guard would let slip.
//! * REPLACE when called with the cache not full (reclaim, after an `on_remove`) may find
//!   the clock it should look at empty: it then looks at the other one. When the cache is
//!   full this cannot happen (|T2| = 0 means |T1| = c >= max(1, p)).
//! * Cost: a hit is O(1); REPLACE is O(1) amortised, since every bit it clears was set by
//!   a hit and every T1-to-T2 move happens at most once per residency.

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

/// List tags, the low bits of `state`.
const NONE: u8 = 0;
const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;
const LIST: u8 = 0x7;
/// The reference bit, meaningful on T1 and T2.
const REF: u8 = 0x80;

#[derive(Debug)]
pub struct Car {
    c: usize,
    /// Target size of T1.
    p: usize,
    t1: PageList,
    t2: PageList,
    b1: PageList,
    b2: PageList,
    /// Per page: the list it is on (`LIST` bits) and its reference bit (`REF`).
    state: Vec<u8>,
}

impl Car {
    /// CAR for a cache of `frames` pages.
    pub fn new(frames: u32) -> Self {
        Car {
            c: frames.max(1) as usize,
            p: 0,
            t1: PageList::default(),
            t2: PageList::default(),
            b1: PageList::default(),
            b2: PageList::default(),
            state: Vec::new(),
        }
    }

    #[inline]
    fn list_tag(&self, page: PageId) -> u8 {
        self.state[page as usize] & LIST
    }

    fn list_of(&mut self, l: u8) -> &mut PageList {
        match l {
            T1 => &mut self.t1,
            T2 => &mut self.t2,
            B1 => &mut self.b1,
            _ => &mut self.b2,
        }
    }

    /// Takes `page` off its list; its state becomes NONE with the bit clear.
    fn remove(&mut self, page: PageId) {
        let l = self.list_tag(page);
        if l != NONE {
            self.list_of(l).unlink(page);
        }
        self.state[page as usize] = NONE;
    }

    /// Appends `page` (on no list) as the newest of `l`, bit clear: the tail of a clock,
    /// the MRU end of a ghost list.
    fn push(&mut self, page: PageId, l: u8) {
        self.list_of(l).push_front(page);
        self.state[page as usize] = l;
    }

    /// Forgets the LRU page of ghost list `l`.
    fn drop_lru(&mut self, l: u8) {
        if let Some(page) = self.list_of(l).tail() {
            self.remove(page);
        }
    }

    /// One step of REPLACE on clock `from` (T1 or T2): its head (the oldest page) with the
    /// bit clear is demoted to `ghost` and returned; with the bit set, the bit is cleared
    /// and the page goes to T2's tail.
    #[inline]
    fn sweep(&mut self, from: u8, ghost: u8) -> Option<PageId> {
        let head = self.list_of(from).tail().expect("a page on the clock");
        let referenced = self.state[head as usize] & REF != 0;
        self.remove(head);
        if referenced {
            self.push(head, T2);
            None
        } else {
            self.push(head, ghost);
            Some(head)
        }
    }

    #[cfg(test)]
    fn sizes(&self) -> (usize, usize, usize, usize, usize) {
        (self.t1.len(), self.t2.len(), self.b1.len(), self.b2.len(), self.p)
    }
}

impl ReplacementPolicy for Car {
    fn name(&self) -> &'static str {
        "car"
    }

    fn reserve_pages(&mut self, pages: usize) {
        for l in [&mut self.t1, &mut self.t2, &mut self.b1, &mut self.b2] {
            l.reserve_pages(pages);
        }
        if pages > self.state.len() {
            self.state.resize(pages, NONE);
        }
    }

    /// Line 2: set the reference bit; nothing else.
    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.state[page as usize] |= REF;
    }

    /// REPLACE (lines 22-39), with the current (not yet adapted) p.
    fn select_victim(&mut self, _time: u64) -> PageId {
        assert!(!self.t1.is_empty() || !self.t2.is_empty(), "select_victim with no resident page");
        loop {
            let t1 = self.t1.len();
            let from_t1 = t1 > 0 && (t1 >= self.p.max(1) || self.t2.is_empty());
            let found = if from_t1 { self.sweep(T1, B1) } else { self.sweep(T2, B2) };
            if let Some(victim) = found {
                return victim;
            }
        }
    }

    /// The directory replacement (lines 6-10) and the placement (lines 12-19).
    fn on_insert(&mut self, page: PageId, _time: u64) {
        let ghost = self.list_tag(page);
        debug_assert!(ghost != T1 && ghost != T2, "on_insert of a resident page");
        let (t1, t2, b1, b2) = (self.t1.len(), self.t2.len(), self.b1.len(), self.b2.len());
        match ghost {
            B1 => {
                // b1 >= 1: the page is on B1
                self.p = (self.p + (b2 / b1).max(1)).min(self.c);
                self.remove(page);
                self.push(page, T2);
            }
            B2 => {
                self.p = self.p.saturating_sub((b1 / b2).max(1));
                self.remove(page);
                self.push(page, T2);
            }
            _ => {
                if t1 + b1 >= self.c {
                    self.drop_lru(B1);
                } else if t1 + t2 + b1 + b2 >= 2 * self.c {
                    self.drop_lru(B2);
                }
                self.push(page, T1);
            }
        }
    }

    fn on_remove(&mut self, page: PageId) {
        if matches!(self.list_tag(page), T1 | T2) {
            self.remove(page);
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.state, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::drive as run;
    use rand::{Rng, SeedableRng};

    /// The paper's invariants, and that every page is on at most one list and on the list
    /// its tag names.
    fn check_invariants(car: &Car, c: usize, t: usize, count: usize) {
        let (t1, t2, b1, b2, p) = car.sizes();
        assert_eq!(t1 + t2, count, "T1 and T2 are the resident pages at {t}");
        assert!(t1 + t2 <= c, "more than c resident at {t}");
        assert!(t2 + b2 <= 2 * c, "|T2| + |B2| = {} > 2c at {t}", t2 + b2);
        assert!(t1 + b1 <= c, "|T1| + |B1| = {} > c at {t}", t1 + b1);
        assert!(t1 + t2 + b1 + b2 <= 2 * c, "directory larger than 2c at {t}");
        assert!(p <= c, "p = {p} > c at {t}");
        let mut seen = vec![false; car.state.len()];
        for (tag, list) in [(T1, &car.t1), (T2, &car.t2), (B1, &car.b1), (B2, &car.b2)] {
            let mut n = 0;
            for page in list.iter() {
                assert!(!seen[page as usize], "page {page} on two lists at {t}");
                seen[page as usize] = true;
                assert_eq!(car.state[page as usize] & LIST, tag, "tag of page {page} at {t}");
                n += 1;
            }
            assert_eq!(n, list.len(), "list length at {t}");
        }
        for (page, &s) in car.state.iter().enumerate() {
            assert_eq!(s & LIST != NONE, seen[page], "page {page} tagged but on no list at {t}");
            assert!(s & REF == 0 || matches!(s & LIST, T1 | T2), "a ghost with its bit set at {t}");
        }
    }

    fn checked(car: &mut Car, c: usize, stream: &[PageId]) -> (u64, Vec<PageId>) {
        run(car, c, stream, |car, t, count| check_invariants(car, c, t, count))
    }

    /// A clock from its head (under the hand, oldest) to its tail; a ghost list from LRU
    /// to MRU.
    fn order(l: &PageList) -> Vec<PageId> {
        let mut v: Vec<PageId> = l.iter().collect();
        v.reverse();
        v
    }

    fn snapshot(car: &Car) -> [Vec<PageId>; 4] {
        [order(&car.t1), order(&car.t2), order(&car.b1), order(&car.b2)]
    }

    #[test]
    fn invariants_hold_on_random_streams() {
        for (c, pages, seed) in [(1usize, 5u32, 1u64), (3, 8, 2), (4, 10, 3), (16, 40, 4), (50, 60, 5), (50, 500, 6)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            // a hot set and a wide range, so that both ghost lists fill and p moves
            let stream: Vec<PageId> = (0..20_000)
                .map(|_| if rng.gen_bool(0.5) { rng.gen_range(0..pages / 4 + 1) } else { rng.gen_range(0..pages) })
                .collect();
            let mut car = Car::new(c as u32);
            let mut max_p = 0;
            run(&mut car, c, &stream, |car, t, count| {
                check_invariants(car, c, t, count);
                max_p = max_p.max(car.p);
            });
            let (_, _, b1, b2, _) = car.sizes();
            assert!(b1 + b2 > 0, "the ghost lists were used (c = {c})");
            assert!(c == 1 || max_p > 0, "p adapted (c = {c})");
        }
    }

    /// Invariants also hold when pages leave memory outside the policy (`on_remove`) and
    /// the cache refills while ghosts exist.
    #[test]
    fn invariants_hold_with_removals() {
        let (c, pages) = (8usize, 40u32);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut car = Car::new(c as u32);
        car.reserve_pages(pages as usize);
        let mut resident = vec![false; pages as usize];
        let mut count = 0;
        for t in 0..30_000 {
            let x = if rng.gen_bool(0.5) { rng.gen_range(0..10) } else { rng.gen_range(0..pages) };
            if resident[x as usize] {
                if rng.gen_bool(0.05) {
                    car.on_remove(x);
                    resident[x as usize] = false;
                    count -= 1;
                } else {
                    car.on_hit(x, t);
                }
            } else {
                car.on_miss(x, t);
                if count == c {
                    let v = car.select_victim(t);
                    assert!(resident[v as usize] && v != x);
                    resident[v as usize] = false;
                } else {
                    count += 1;
                }
                car.on_insert(x, t);
                resident[x as usize] = true;
            }
            check_invariants(&car, c, t as usize, count);
        }
    }

    /// A hit sets the reference bit and moves nothing, on either clock.
    #[test]
    fn a_hit_only_sets_the_bit() {
        let mut car = Car::new(3);
        // the stream of `hand_traced_example`: T1 = [6, 7], T2 = [0], all bits clear
        checked(&mut car, 3, &[0, 1, 2, 0, 3, 1, 2, 3, 1, 4, 0, 5, 6, 7]);
        let before = snapshot(&car);
        let p = car.p;
        assert_eq!(before[0], vec![6, 7]);
        assert_eq!(before[1], vec![0]);
        for page in [6, 7, 0] {
            assert_eq!(car.state[page as usize] & REF, 0);
        }
        car.on_hit(6, 14); // T1's head
        car.on_hit(0, 15); // T2's only page
        assert_eq!(snapshot(&car), before, "a hit moved a page");
        assert_eq!(car.p, p);
        assert_eq!(car.state[6] & REF, REF);
        assert_eq!(car.state[0] & REF, REF);
        assert_eq!(car.state[7] & REF, 0);
        assert_eq!(car.state[6] & LIST, T1);
        assert_eq!(car.state[0] & LIST, T2);
        // the bits take effect at the next REPLACE (p = 2): |T1| = 2, so T1's 6* goes to
        // T2's tail with its bit cleared; |T1| = 1 < 2, so the hand turns to T2, where 0*
        // goes to the tail, bit cleared, and 6, now at the head with bit 0, is demoted
        assert_eq!(car.select_victim(16), 6);
        assert_eq!(snapshot(&car), [vec![7], vec![0], vec![5], vec![3, 1, 6]]);
        assert_eq!(car.state[0], T2, "bit cleared on the way");
    }

    /// Scan resistance: a hot set referenced twice per round is promoted to T2 by the
    /// hand; the scan pages enter T1 with bit 0 and are demoted from T1's head while
    /// |T1| >= max(1, p). No page is ever found in a ghost list (the scan pages are new,
    /// the hot pages never leave), so p stays 0 and REPLACE never looks at T2. Hence CAR
    /// faults on the hot set only in round 1: 60 + 50 x 200. LRU loses the hot set to
    /// every scan: 50 x 260.
    #[test]
    fn a_scan_does_not_flush_the_frequent_pages() {
        let c = 100;
        let mut stream: Vec<PageId> = Vec::new();
        let mut next_new = 1000;
        for _ in 0..50 {
            stream.extend(0..60); // the hot set, 60 pages, twice
            stream.extend(0..60);
            for _ in 0..200 {
                stream.push(next_new); // a scan of pages never seen again
                next_new += 1;
            }
        }
        let mut car = Car::new(c as u32);
        let (car_faults, _) = checked(&mut car, c, &stream);
        let (lru, _) = run(&mut crate::policy::Lru::new(), c, &stream, |_, _, _| {});
        assert_eq!(lru, 50 * 260, "LRU {lru}");
        assert_eq!(car_faults, 60 + 50 * 200, "CAR {car_faults}");
        assert_eq!(car.p, 0);
        let mut hot = order(&car.t2);
        hot.sort_unstable();
        assert_eq!(hot, (0..60).collect::<Vec<_>>(), "the hot set is T2");
    }

    /// c = 3. Clocks from head (hand) to tail, `*` = bit set; ghosts LRU..MRU.
    ///  1-3. 0 1 2: misses, cache not full.          T1 = [0 1 2]
    ///  4. 0: hit.                                     T1 = [0* 1 2]
    ///  5. 3: full. REPLACE (p = 0): 0* -> T2 tail, bit cleared; 1 -> B1. Victim 1.
    ///     New page: |T1|+|B1| = 2, directory = 3: no discard.
    ///                                                 T1 = [2 3] T2 = [0] B1 = [1]
    ///  6. 1 (in B1): REPLACE (p = 0, |T1| = 2): 2 -> B1. Victim 2. Then adapt with the
    ///     post-REPLACE sizes: p = min(0 + max(1, 0/2), 3) = 1; 1 -> T2.
    ///                                                 T1 = [3] T2 = [0 1] B1 = [2] p = 1
    ///  7. 2 (in B1): REPLACE with the old p = 1: |T1| = 1 >= 1, 3 -> B1. Victim 3.
    ///     (Adapting first, p = 2 > |T1|, would have demoted T2's 0 instead.)
    ///     p = 1 + max(1, 0/2) = 2; 2 -> T2.         T1 = [] T2 = [0 1 2] B1 = [3] p = 2
    ///  8. 3 (in B1): |T1| = 0 < 2: T2's 0 -> B2. Victim 0. p = min(2 + max(1, 1/1), 3) = 3.
    ///                                                 T2 = [1 2 3] B2 = [0] p = 3
    ///  9. 1: hit.                                     T2 = [1* 2 3]
    /// 10. 4: |T1| = 0 < 3: 1* -> T2 tail, bit cleared; 2 -> B2. Victim 2. No discard
    ///     (|T1|+|B1| = 0, directory = 4).             T1 = [4] T2 = [3 1] B2 = [0 2]
    /// 11. 0 (in B2): |T1| = 1 < 3: 3 -> B2. Victim 3. p = max(3 - max(1, 0/3), 0) = 2.
    ///                                                 T1 = [4] T2 = [1 0] B2 = [2 3] p = 2
    /// 12. 5: |T1| = 1 < 2: T2's 1 (bit cleared at 10) -> B2. Victim 1. Directory = 5.
    ///                                                 T1 = [4 5] T2 = [0] B2 = [2 3 1]
    /// 13. 6: |T1| = 2 >= 2: 4 -> B1. Victim 4. |T1|+|B1| = 2, directory = 6 = 2c:
    ///     discard B2's LRU, 2.                        T1 = [5 6] T2 = [0] B1 = [4] B2 = [3 1]
    /// 14. 7: |T1| = 2 >= 2: 5 -> B1. Victim 5. |T1|+|B1| = 3 = c: discard B1's LRU, 4.
    ///                                                 T1 = [6 7] T2 = [0] B1 = [5] B2 = [3 1]
    #[test]
    fn hand_traced_example() {
        let stream = [0, 1, 2, 0, 3, 1, 2, 3, 1, 4, 0, 5, 6, 7];
        let mut car = Car::new(3);
        let mut ps = Vec::new();
        let (faults, victims) = run(&mut car, 3, &stream, |car, t, count| {
            check_invariants(car, 3, t, count);
            ps.push(car.p);
        });
        assert_eq!(victims, vec![1, 2, 3, 0, 2, 3, 1, 4, 5]);
        assert_eq!(faults, 12);
        assert_eq!(ps, vec![0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 2, 2, 2, 2]);
        assert_eq!(snapshot(&car), [vec![6, 7], vec![0], vec![5], vec![3, 1]]);
        assert_eq!(car.state[2], NONE, "2 was discarded from B2");
        assert_eq!(car.state[4], NONE, "4 was discarded from B1");
    }
}
