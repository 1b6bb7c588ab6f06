//! PFF, Page-Fault Frequency (Chu and Opderbeck, "The Page Fault Frequency Replacement
//! Algorithm", AFIPS FJCC 1972), a variable-size policy driven by the time between
//! faults, with a use bit per resident page, set on every reference.
//!
//! At a fault at time t, with t' the time of the previous fault:
//! - if t - t' > `interval` (faults are rare: the resident set is larger than needed),
//!   every resident page whose use bit is clear leaves memory, and the use bits of the
//!   pages that stay are cleared;
//! - otherwise (faults are frequent) nothing leaves;
//! - in both cases the faulting page is added, its use bit set.
//!
//! This is the classic formulation: the use bits are cleared only at the faults that
//! shrink the resident set, so a page stays while it was referenced since the last
//! shrinking fault. The first fault has no previous fault and never shrinks (nothing
//! is resident then anyway).
//!
//! The pages that leave are handed to the caller through
//! [`ReplacementPolicy::release`] after the faulting record. A reference costs one use
//! bit; a fault O(1), except a shrinking fault, which sweeps the resident pages once.
//! Flat arrays over dense ids: the resident pages in a vector with each page's position
//! in it.

use super::ReplacementPolicy;
use crate::trace::PageId;

const OUT: u8 = 0;
const RESIDENT: u8 = 1;
/// Left memory at a shrinking fault, not yet handed out by `release`.
const LEAVING: u8 = 2;

#[derive(Debug)]
pub struct Pff {
    interval: u64,
    /// OUT, RESIDENT or LEAVING per page.
    state: Vec<u8>,
    /// Use bit per page.
    used: Vec<bool>,
    /// The resident pages, in no particular order, and each one's index in it.
    resident: Vec<PageId>,
    pos: Vec<u32>,
    /// Pages released by the last shrinking fault, handed out by `release`.
    leaving: Vec<PageId>,
    /// Time of the previous fault.
    last_fault: Option<u64>,
    /// Faults that shrank the resident set.
    shrinks: u64,
    /// Where the second-chance sweep of `select_victim` resumes (fixed pools only).
    hand: usize,
}

impl Pff {
    /// PFF with critical inter-fault interval `interval` records.
    pub fn new(interval: u64) -> Self {
        Pff {
            interval,
            state: Vec::new(),
            used: Vec::new(),
            resident: Vec::new(),
            pos: Vec::new(),
            leaving: Vec::new(),
            last_fault: None,
            shrinks: 0,
            hand: 0,
        }
    }

    fn unlist(&mut self, page: PageId) {
        let i = self.pos[page as usize] as usize;
        let moved = *self.resident.last().expect("a resident page");
        self.resident.swap_remove(i);
        if moved != page {
            self.pos[moved as usize] = i as u32;
        }
    }

    /// Drops the resident pages whose use bit is clear, clears the others' bits.
    fn shrink(&mut self) {
        self.shrinks += 1;
        let mut i = 0;
        while i < self.resident.len() {
            let p = self.resident[i];
            if self.used[p as usize] {
                self.used[p as usize] = false;
                i += 1;
            } else {
                self.state[p as usize] = LEAVING;
                self.leaving.push(p);
                let moved = self.resident.swap_remove(i);
                debug_assert_eq!(moved, p);
                if i < self.resident.len() {
                    self.pos[self.resident[i] as usize] = i as u32;
                }
            }
        }
    }

    /// The resident pages, sorted (tests).
    #[cfg(test)]
    fn resident_sorted(&self) -> Vec<PageId> {
        let mut r = self.resident.clone();
        r.sort_unstable();
        r
    }
}

impl ReplacementPolicy for Pff {
    fn name(&self) -> &'static str {
        "pff"
    }

    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.state.len() {
            self.state.resize(pages, OUT);
            self.used.resize(pages, false);
            self.pos.resize(pages, 0);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.used[page as usize] = true;
    }

    /// The fault: shrink if the previous one is more than `interval` records ago.
    fn on_miss(&mut self, _page: PageId, time: u64) {
        if let Some(prev) = self.last_fault {
            if time - prev > self.interval {
                self.shrink();
            }
        }
        self.last_fault = Some(time);
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        let p = page as usize;
        self.state[p] = RESIDENT;
        self.used[p] = true;
        self.pos[p] = self.resident.len() as u32;
        self.resident.push(page);
    }

    /// Never called by the replay (PFF sets its own size). For a caller that runs it in
    /// a fixed pool anyway: a page already leaving if there is one, else a second-chance
    /// sweep over the resident pages (the first page found with a clear use bit, clearing
    /// the bits it passes).
    fn select_victim(&mut self, _time: u64) -> PageId {
        while let Some(p) = self.leaving.pop() {
            if self.state[p as usize] == LEAVING {
                self.state[p as usize] = OUT;
                return p;
            }
        }
        assert!(!self.resident.is_empty(), "select_victim with no resident page");
        loop {
            if self.hand >= self.resident.len() {
                self.hand = 0;
            }
            let p = self.resident[self.hand];
            if self.used[p as usize] {
                self.used[p as usize] = false;
                self.hand += 1;
            } else {
                self.on_remove(p);
                return p;
            }
        }
    }

    fn on_remove(&mut self, page: PageId) {
        match self.state[page as usize] {
            RESIDENT => self.unlist(page),
            // still queued in `leaving`; `release` skips it
            LEAVING => {}
            _ => return,
        }
        self.state[page as usize] = OUT;
        self.used[page as usize] = false;
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.used, page as usize);
    }

    #[inline(always)]
    fn variable_size(&self) -> bool {
        true
    }

    /// The pages the last shrinking fault dropped, each once.
    #[inline]
    fn release(&mut self, _time: u64) -> Option<PageId> {
        while let Some(p) = self.leaving.pop() {
            if self.state[p as usize] == LEAVING {
                self.state[p as usize] = OUT;
                self.used[p as usize] = false;
                return Some(p);
            }
        }
        None
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("shrinking_faults", self.shrinks)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{PoolSimulation, Simulate};
    use crate::trace::AccessKind;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    fn drive(pff: &mut Pff, stream: &[PageId], check: impl FnMut(&Pff, usize, &BTreeSet<PageId>, bool)) -> u64 {
        crate::policy::testing::drive_variable(pff, stream, true, check)
    }

    /// The stream through the replay's `PoolSimulation` (all reads, `frames` ignored).
    fn simulate(interval: u64, stream: &[PageId]) -> crate::replay::ReplayResult {
        let pages = *stream.iter().max().unwrap() as usize + 1;
        let mut sim = PoolSimulation::new(Pff::new(interval), 2);
        let kinds = vec![AccessKind::Read; stream.len()];
        let half = stream.len() / 2;
        sim.run(&stream[..half], &kinds[..half], &[], &[], pages, 0);
        sim.run(&stream[half..], &kinds[half..], &[], &[], pages, half as u64);
        sim.result(stream.len() as u64, stream.len() as u64, pages as u64)
    }

    /// The rule on sets, straight from the definition: the resident set after each record
    /// and the faults.
    fn brute_force(stream: &[PageId], interval: u64) -> (Vec<BTreeSet<PageId>>, u64) {
        let (mut resident, mut used) = (BTreeSet::new(), BTreeSet::new());
        let mut prev: Option<usize> = None;
        let mut faults = 0;
        let mut after = Vec::new();
        for (t, &x) in stream.iter().enumerate() {
            if !resident.contains(&x) {
                faults += 1;
                if prev.is_some_and(|p| (t - p) as u64 > interval) {
                    resident = resident.intersection(&used).copied().collect();
                    used.clear();
                }
                prev = Some(t);
                resident.insert(x);
            }
            used.insert(x);
            after.push(resident.clone());
        }
        (after, faults)
    }

    fn mean_size(sets: &[BTreeSet<PageId>]) -> f64 {
        sets.iter().map(|s| s.len()).sum::<usize>() as f64 / sets.len() as f64
    }

    /// interval = 2 on a b a b c c c c d a (a = 0, b = 1, c = 2, d = 3):
    /// t0 a F (first fault) {a}; t1 b F, 1 - 0 <= 2: {a,b}; t2, t3 hits; t4 c F,
    /// 4 - 1 > 2: a and b were used, they stay, bits cleared: {a,b,c}; t5-t7 hits on c;
    /// t8 d F, 8 - 4 > 2: a and b unused since t4 leave: {c,d}; t9 a F, 9 - 8 <= 2:
    /// {a,c,d}. 5 faults, sizes 1 2 2 2 3 3 3 3 2 3.
    #[test]
    fn hand_traced_example() {
        let stream = [0, 1, 0, 1, 2, 2, 2, 2, 3, 0];
        let expect: [&[PageId]; 10] = [&[0], &[0, 1], &[0, 1], &[0, 1], &[0, 1, 2], &[0, 1, 2], &[0, 1, 2], &[0, 1, 2], &[2, 3], &[0, 2, 3]];
        let mut pff = Pff::new(2);
        let faults = drive(&mut pff, &stream, |pff, t, resident, _| {
            assert_eq!(resident.iter().copied().collect::<Vec<_>>(), expect[t], "at {t}");
            assert_eq!(pff.resident_sorted(), expect[t]);
        });
        assert_eq!(faults, 5);
        assert_eq!(pff.shrinks, 2);
        let r = simulate(2, &stream);
        assert_eq!((r.faults, r.compulsory_faults, r.frames), (5, 4, 0));
        assert_eq!(r.counters, vec![("shrinking_faults".to_string(), 2)]);
        assert_eq!(r.mean_resident, 24.0 / 10.0, "(1+2+2+2+3+3+3+3+2+3)/10");
    }

    /// A tight loop faults only on its first pass, every fault within the interval of
    /// the previous one: the resident set never shrinks and holds the loop.
    #[test]
    fn a_tight_loop_never_shrinks() {
        let n = 30;
        let stream: Vec<PageId> = (0..100).flat_map(|_| 0..n).collect();
        let mut pff = Pff::new(5);
        let faults = drive(&mut pff, &stream, |_, t, resident, _| {
            assert_eq!(resident.len(), (t + 1).min(n as usize));
        });
        assert_eq!(faults, n as u64);
        assert_eq!(pff.shrinks, 0);
        let r = simulate(5, &stream);
        assert_eq!(r.faults, n as u64);
    }

    /// Phases A, B, C, each a loop over its own 10 pages for 1000 records, interval 50.
    /// A's first pass: faults 1 apart, no shrink. B's first fault, long after A's last:
    /// a shrink, but A's pages were all used since the start, so they stay (bits
    /// cleared); B's other faults come 1 apart: A and B resident. C's first fault: A's
    /// pages, unused since B began, leave; B's stay. The resident set ends as B and C.
    #[test]
    fn a_phase_change_shrinks_the_resident_set() {
        let phase = |base: PageId| (0..100).flat_map(move |_| base..base + 10);
        let stream: Vec<PageId> = phase(0).chain(phase(100)).chain(phase(200)).collect();
        let a: BTreeSet<PageId> = (0..10).collect();
        let b: BTreeSet<PageId> = (100..110).collect();
        let c: BTreeSet<PageId> = (200..210).collect();
        let mut pff = Pff::new(50);
        let faults = drive(&mut pff, &stream, |_, t, resident, _| match t {
            999 => assert_eq!(resident, &a),
            1999 => assert_eq!(resident, &a.union(&b).copied().collect()),
            2000 => assert_eq!(resident, &b.iter().copied().chain([200]).collect()),
            2999 => assert_eq!(resident, &b.union(&c).copied().collect()),
            _ => {}
        });
        assert_eq!(faults, 30);
        assert_eq!(pff.shrinks, 2);
        let (after, bf_faults) = brute_force(&stream, 50);
        assert_eq!(bf_faults, 30);
        let r = simulate(50, &stream);
        assert_eq!(r.faults, 30);
        assert!((r.mean_resident - mean_size(&after)).abs() < 1e-9, "{} != {}", r.mean_resident, mean_size(&after));
    }

    /// Random streams with drifting locality: after every record the resident set is the
    /// brute-force one, the use bits are set exactly on resident pages used since the
    /// last shrink; faults and the simulation's mean resident set agree with it.
    #[test]
    fn matches_brute_force_on_random_streams() {
        for (pages, interval, seed) in [(8u32, 1u64, 1u64), (40, 5, 2), (200, 20, 3), (500, 100, 4), (60, 1000, 5)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut base = 0u32;
            let stream: Vec<PageId> = (0..4000)
                .map(|i| {
                    if i % 500 == 0 {
                        base = rng.gen_range(0..pages);
                    }
                    if rng.gen_bool(0.8) {
                        (base + rng.gen_range(0..pages / 8 + 1)) % pages
                    } else {
                        rng.gen_range(0..pages)
                    }
                })
                .collect();
            let (after, bf_faults) = brute_force(&stream, interval);
            let mut pff = Pff::new(interval);
            let faults = drive(&mut pff, &stream, |pff, t, resident, _| {
                assert_eq!(resident, &after[t], "interval {interval} at {t}");
                assert_eq!(pff.resident.len(), resident.len());
                for (i, &p) in pff.resident.iter().enumerate() {
                    assert_eq!(pff.pos[p as usize] as usize, i);
                    assert_eq!(pff.state[p as usize], RESIDENT);
                }
                assert!(pff.leaving.is_empty());
            });
            assert_eq!(faults, bf_faults, "interval {interval}");
            assert!(interval >= 1000 || pff.shrinks > 0, "interval {interval}: no shrink");
            let r = simulate(interval, &stream);
            assert_eq!(r.faults, bf_faults);
            let mean = mean_size(&after);
            assert!(
                (r.mean_resident - mean).abs() < 1e-9,
                "interval {interval}: the simulation's mean resident set {} != {mean} (the sets after each record)",
                r.mean_resident
            );
        }
    }

    /// In a fixed pool (not how the replay runs it) every victim is resident and the
    /// structures stay consistent.
    #[test]
    fn a_fixed_pool_gets_resident_victims() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let stream: Vec<PageId> = (0..5000).map(|_| rng.gen_range(0..50)).collect();
        let mut pff = Pff::new(3);
        crate::policy::testing::run(&mut pff, 10, &stream, |pff, _, count| {
            let live = pff.resident.len() + pff.leaving.iter().filter(|&&p| pff.state[p as usize] == LEAVING).count();
            assert_eq!(live, count);
        });
    }
}
