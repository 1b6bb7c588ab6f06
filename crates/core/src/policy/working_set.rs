//! Working Set (Denning, "The Working Set Model for Program Behavior", CACM 1968), a
//! variable-size policy: a page is resident exactly while it was referenced within the
//! last `tau` records, the working set W(t, tau) = the pages referenced at times
//! t - tau + 1 ..= t (`time` is the record index). A reference faults iff its page is not
//! in W(t - 1, tau).
//!
//! The resident pages are kept in LRU order (an intrusive [`PageList`]) with the time of
//! their last reference, so the pages that leave the window are always at the tail:
//! after each record the caller drains [`ReplacementPolicy::release`], which pops the
//! tail while its last reference is older than `time + 1 - tau`. Each page leaves once
//! per time it entered: O(1) amortised per reference, flat arrays, no hash map.
//!
//! A window of 0 records would hold no page even while it is referenced; `tau = 0` is
//! taken as 1 (`pagelab` rejects it on the command line anyway).

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

#[derive(Debug)]
pub struct WorkingSet {
    tau: u64,
    /// Resident pages, most recently referenced first.
    order: PageList,
    /// Time of each resident page's last reference.
    last: Vec<u64>,
}

impl WorkingSet {
    /// Working Set with a window of `tau` records.
    pub fn new(tau: u64) -> Self {
        WorkingSet { tau: tau.max(1), order: PageList::default(), last: Vec::new() }
    }

    /// The resident pages, most recently referenced first (tests).
    #[cfg(test)]
    fn resident(&self) -> Vec<PageId> {
        self.order.iter().collect()
    }
}

impl ReplacementPolicy for WorkingSet {
    fn name(&self) -> &'static str {
        "ws"
    }

    fn reserve_pages(&mut self, pages: usize) {
        self.order.reserve_pages(pages);
        if pages > self.last.len() {
            self.last.resize(pages, 0);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, time: u64) {
        self.last[page as usize] = time;
        self.order.move_to_front(page);
    }

    #[inline]
    fn on_insert(&mut self, page: PageId, time: u64) {
        self.last[page as usize] = time;
        self.order.push_front(page);
    }

    /// Never called by the replay (Working Set sets its own size). For a caller that
    /// runs it in a fixed pool anyway, the least recently referenced page: the one that
    /// would leave the window first.
    fn select_victim(&mut self, _time: u64) -> PageId {
        self.order.pop_back().expect("select_victim with no resident page")
    }

    fn on_remove(&mut self, page: PageId) {
        self.order.unlink(page);
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.order.prefetch(page);
        crate::hint::prefetch(&self.last, page as usize);
    }

    #[inline(always)]
    fn variable_size(&self) -> bool {
        true
    }

    /// The least recently referenced page if its last reference is not among the last
    /// `tau` records (last + tau <= time), oldest first.
    #[inline]
    fn release(&mut self, time: u64) -> Option<PageId> {
        let tail = self.order.tail()?;
        if self.last[tail as usize].saturating_add(self.tau) <= time {
            self.order.unlink(tail);
            Some(tail)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{PoolSimulation, Simulate};
    use crate::trace::AccessKind;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    fn drive(ws: &mut WorkingSet, stream: &[PageId], check: impl FnMut(&WorkingSet, usize, &BTreeSet<PageId>, bool)) -> u64 {
        crate::policy::testing::drive_variable(ws, stream, false, check)
    }

    /// W(t, tau): the pages referenced at t - tau + 1 ..= t.
    fn window(stream: &[PageId], t: usize, tau: u64) -> BTreeSet<PageId> {
        let from = (t + 1).saturating_sub(tau as usize);
        stream[from..=t].iter().copied().collect()
    }

    /// The stream through the replay's `PoolSimulation` (all reads, `frames` ignored).
    fn simulate(tau: u64, stream: &[PageId]) -> crate::replay::ReplayResult {
        let pages = *stream.iter().max().unwrap() as usize + 1;
        let mut sim = PoolSimulation::new(WorkingSet::new(tau), 3);
        let kinds = vec![AccessKind::Read; stream.len()];
        // two batches, to cross a batch boundary
        let half = stream.len() / 2;
        sim.run(&stream[..half], &kinds[..half], &[], &[], pages, 0);
        sim.run(&stream[half..], &kinds[half..], &[], &[], pages, half as u64);
        sim.result(stream.len() as u64, stream.len() as u64, pages as u64)
    }

    /// Brute force: faults (a reference faults iff its page is not in W(t - 1, tau)) and
    /// the mean of |W(t, tau)| over the records.
    fn brute_force(stream: &[PageId], tau: u64) -> (u64, f64) {
        let mut faults = 0;
        let mut sum = 0usize;
        for t in 0..stream.len() {
            let before = if t == 0 { BTreeSet::new() } else { window(stream, t - 1, tau) };
            if !before.contains(&stream[t]) {
                faults += 1;
            }
            sum += window(stream, t, tau).len();
        }
        (faults, sum as f64 / stream.len() as f64)
    }

    /// tau = 3 on a b c a d d b (a = 0, b = 1, c = 2, d = 3):
    /// t0 a F {a}; t1 b F {a,b}; t2 c F {a,b,c}; t3 a H {b,c,a}; t4 d F {c,a,d} (b
    /// leaves); t5 d H {a,d} (c leaves); t6 b F {d,b} (a leaves). 5 faults, sizes
    /// 1 2 3 3 3 2 2.
    #[test]
    fn hand_traced_example() {
        let stream = [0, 1, 2, 0, 3, 3, 1];
        let expect: [&[PageId]; 7] = [&[0], &[0, 1], &[0, 1, 2], &[0, 1, 2], &[0, 2, 3], &[0, 3], &[1, 3]];
        let mut ws = WorkingSet::new(3);
        let faults = drive(&mut ws, &stream, |ws, t, resident, _| {
            assert_eq!(resident.iter().copied().collect::<Vec<_>>(), expect[t], "at {t}");
            let mut held = ws.resident();
            held.sort_unstable();
            assert_eq!(held, expect[t]);
        });
        assert_eq!(faults, 5);
        let r = simulate(3, &stream);
        assert_eq!(r.faults, 5);
        assert_eq!(r.compulsory_faults, 4);
        assert_eq!(r.frames, 0, "a variable-size policy reports frames 0");
        assert_eq!(r.mean_resident, 16.0 / 7.0, "mean of |W(t, 3)|: (1+2+3+3+3+2+2)/7");
    }

    /// A loop over n pages with tau >= n faults only on the first pass and then holds
    /// exactly the n pages.
    #[test]
    fn a_loop_within_the_window_faults_once_per_page() {
        let n = 40;
        let passes = 25;
        let stream: Vec<PageId> = (0..passes).flat_map(|_| 0..n).collect();
        for tau in [n as u64, n as u64 + 1, 1000] {
            let mut ws = WorkingSet::new(tau);
            let faults = drive(&mut ws, &stream, |_, t, resident, _| {
                assert_eq!(resident.len(), (t + 1).min(n as usize), "at {t}");
            });
            assert_eq!(faults, n as u64, "tau {tau}");
            let r = simulate(tau, &stream);
            assert_eq!(r.faults, n as u64);
            // the first pass fills 1..=n, then n pages on every record
            let total = stream.len() as f64;
            let fill = (n * (n + 1) / 2) as f64;
            let expect = (fill + (total - n as f64) * n as f64) / total;
            assert!((r.mean_resident - expect).abs() < 1e-9, "tau {tau}: {} != {expect}", r.mean_resident);
        }
        // a window one record short of the loop loses each page just before its reuse
        let mut ws = WorkingSet::new(n as u64 - 1);
        assert_eq!(drive(&mut ws, &stream, |_, _, _, _| {}), stream.len() as u64);
    }

    /// tau = 1 holds only the page just referenced: every change of page faults, a
    /// repeat does not.
    #[test]
    fn a_window_of_one_faults_on_every_change_of_page() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let stream: Vec<PageId> = (0..5000).map(|_| rng.gen_range(0..4)).collect();
        let changes = 1 + stream.windows(2).filter(|w| w[0] != w[1]).count() as u64;
        let mut ws = WorkingSet::new(1);
        let faults = drive(&mut ws, &stream, |_, t, resident, faulted| {
            assert_eq!(resident.iter().copied().collect::<Vec<_>>(), vec![stream[t]]);
            assert_eq!(faulted, t == 0 || stream[t] != stream[t - 1], "at {t}");
        });
        assert_eq!(faults, changes);
        let r = simulate(1, &stream);
        assert_eq!(r.faults, changes);
        assert_eq!(r.mean_resident, 1.0, "one page resident after every record");
    }

    /// Random skewed streams: after every record the resident set is exactly W(t, tau),
    /// in LRU order; faults and the simulation's mean resident set equal a brute-force
    /// recomputation from the definition.
    #[test]
    fn resident_set_is_the_window_on_random_streams() {
        for (pages, tau, seed) in [(10u32, 1u64, 1u64), (30, 7, 2), (200, 50, 3), (500, 400, 4), (50, 3000, 5)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let stream: Vec<PageId> = (0..3000)
                .map(|_| if rng.gen_bool(0.7) { rng.gen_range(0..pages / 5 + 1) } else { rng.gen_range(0..pages) })
                .collect();
            let mut ws = WorkingSet::new(tau);
            let faults = drive(&mut ws, &stream, |ws, t, resident, _| {
                let expect = window(&stream, t, tau);
                assert_eq!(resident, &expect, "tau {tau} at {t}");
                // the LRU order: last references strictly decreasing from the head
                let order = ws.resident();
                assert_eq!(order.len(), expect.len());
                assert!(order.windows(2).all(|w| ws.last[w[0] as usize] > ws.last[w[1] as usize]));
            });
            let (bf_faults, bf_mean) = brute_force(&stream, tau);
            assert_eq!(faults, bf_faults, "tau {tau}");
            let r = simulate(tau, &stream);
            assert_eq!(r.faults, bf_faults, "tau {tau}");
            assert!(
                (r.mean_resident - bf_mean).abs() < 1e-9,
                "tau {tau}: the simulation's mean resident set {} != mean |W(t, tau)| {bf_mean}",
                r.mean_resident
            );
        }
    }

    /// In a fixed pool (not how the replay runs it) the victim is the LRU page.
    #[test]
    fn in_a_fixed_pool_it_is_lru() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        let stream: Vec<PageId> = (0..5000).map(|_| rng.gen_range(0..60)).collect();
        let (faults, victims) = crate::policy::testing::drive(&mut WorkingSet::new(10), 20, &stream, |_, _, _| {});
        let (lru, lru_victims) = crate::policy::testing::drive(&mut crate::policy::Lru::new(), 20, &stream, |_, _, _| {});
        assert_eq!((faults, victims), (lru, lru_victims));
    }
}
