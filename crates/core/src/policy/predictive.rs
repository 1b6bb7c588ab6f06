//! Predictive replacement (predictive-replacement.txt section 5): exact LRU beside a
//! [`DeadList`] of pages ordered by predicted death.
//!
//! The rules of section 5, with a [`LifetimePredictor`] left open as the paper leaves it:
//! - On a fault on page X, if the Dead-List is empty or its head is not yet predicted
//!   dead, the victim is LRU's (and leaves the Dead-List too, if listed); otherwise the
//!   victim is the Dead-List's head (and leaves the LRU list).
//! - The faulted page is then inserted in the Dead-List by its predicted lifetime, if
//!   the predictor makes a prediction.
//!
//! Distances are counted in faults to other pages (section 5.1: "we only consider the
//! lifetime distances measured in terms of the number of page-faults to other pages"):
//! the global fault counter G2, and per page C2 (G2 at the page's last access) and C4
//! (G2 at its last fault). At a fault the residency that ended is measured: its lifetime
//! L = C2 - C4 (hardware-style, section 5.1) and its L + D = G2 at the eviction - C4
//! (OS-visible, section 5.2). A page predicted to live L more faults after its fault at
//! C4 is dead once G2 > C4 + L: by then its last access would have come.
//!
//! The expired head is evicted even when it was used after its predicted death, as the
//! steps read. A page predicted to die at its next fault (L = 0, common when a page is
//! used in one burst) is then evicted there, and its next residency measures L = 0
//! again: the prediction fulfils itself. This is why the static variants can fault
//! many times as often as LRU (section 5.3: they "degrade the performance sometimes
//! quite significantly"). Evicting such a page only if it was not used after its death
//! was tried and made Last-dynamic worse on 3 of 5 NPB programs; it is not offered.
//!
//! A residency the Dead-List ended is *cut short*: its L is known only up to the
//! eviction the prediction itself caused, so it cannot confirm the prediction. The
//! predictors are told ([`Residency::cut_short`]); Last-dynamic counts it as a failed
//! prediction (see last_dynamic.rs).
//!
//! Accuracy (figures 17-18): at the page's next fault the measured L of a predicted
//! residency is compared with the prediction: `under` when the page was used after its
//! predicted death, `over` when it died earlier than predicted (LRU took it first),
//! `exact` otherwise; `cut_short` when the Dead-List ended it (L unknown past the
//! eviction).
//! Figure 14's invocation counts are `dead_list_evictions` and `lru_evictions`.

use super::{DeadList, PageList, ReplacementPolicy};
use crate::trace::PageId;

/// What the policy measured of a page's last residency, in faults to other pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Residency {
    /// Lifetime L: fault to last access (needs per-reference counters, section 5.1).
    pub lifetime: u64,
    /// L + D: fault to eviction (what an OS sees, section 5.2).
    pub resident: u64,
    /// The Dead-List evicted the page at its predicted death: the lifetime seen is cut
    /// short by the prediction itself, and confirms nothing about it.
    pub cut_short: bool,
}

/// A page's predictor state before its first prediction.
pub const NO_STATE: u64 = u64::MAX;

/// Predicts a page's next lifetime from what was measured of its past residencies.
/// Its per-page memory is one word, `state`, kept by the caller beside the page's other
/// counters (one cache line a page on the fault path).
pub trait LifetimePredictor: Send {
    fn name(&self) -> &'static str;
    /// A fault on a page with predictor state `state` ([`NO_STATE`] at first), whose
    /// previous residency is `last` (None at its first fault): the predicted lifetime of
    /// the residency starting now, or None for no prediction.
    fn predict(&mut self, state: &mut u64, last: Option<Residency>) -> Option<u64>;
}

const NEVER: u64 = u64::MAX;

/// A page's counters, together in one cache line: C2 (G2 at its last access), C4 (G2
/// at its last fault), G2 at its last eviction (NEVER before its first fault), the
/// prediction of its current residency (NEVER when none) and the predictor's state.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Counters {
    last_access: u64,
    faulted_at: u64,
    evicted_at: u64,
    predicted: u64,
    state: u64,
}

/// In `evicted_at`: the eviction was the Dead-List's (fault counts stay far below 2^63).
const CUT: u64 = 1 << 63;

const FRESH: Counters = Counters { last_access: NEVER, faulted_at: NEVER, evicted_at: NEVER, predicted: NEVER, state: NO_STATE };

pub struct Predictive<P: LifetimePredictor> {
    predictor: P,
    lru: PageList,
    dead: DeadList,
    /// G2: faults so far.
    faults: u64,
    page: Vec<Counters>,
    /// The page between `on_miss` and `on_insert`, with its prediction.
    incoming: Option<(PageId, Option<u64>)>,
    dead_list_evictions: u64,
    lru_evictions: u64,
    predictions: u64,
    under: u64,
    over: u64,
    exact: u64,
    cut_short: u64,
}

impl<P: LifetimePredictor> Predictive<P> {
    pub fn new(predictor: P) -> Self {
        Predictive {
            predictor,
            lru: PageList::default(),
            dead: DeadList::default(),
            faults: 0,
            page: Vec::new(),
            incoming: None,
            dead_list_evictions: 0,
            lru_evictions: 0,
            predictions: 0,
            under: 0,
            over: 0,
            exact: 0,
            cut_short: 0,
        }
    }

    /// The page leaves memory now.
    fn gone(&mut self, page: PageId) {
        self.dead.remove(page);
        self.page[page as usize].evicted_at = self.faults;
    }

    #[cfg(test)]
    pub(crate) fn dead_list(&self) -> &DeadList {
        &self.dead
    }
}

impl<P: LifetimePredictor> ReplacementPolicy for Predictive<P> {
    fn name(&self) -> &'static str {
        self.predictor.name()
    }

    fn reserve_pages(&mut self, pages: usize) {
        self.lru.reserve_pages(pages);
        self.dead.reserve_pages(pages);
        if pages > self.page.len() {
            self.page.resize(pages, FRESH);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.lru.move_to_front(page);
        self.page[page as usize].last_access = self.faults;
    }

    fn on_miss(&mut self, page: PageId, _time: u64) {
        self.faults += 1;
        let c = self.page[page as usize];
        let last = (c.faulted_at != NEVER).then(|| {
            let lifetime = c.last_access - c.faulted_at;
            let cut_short = c.evicted_at & CUT != 0;
            if c.predicted != NEVER {
                match lifetime.cmp(&c.predicted) {
                    _ if cut_short => self.cut_short += 1,
                    std::cmp::Ordering::Greater => self.under += 1,
                    std::cmp::Ordering::Less => self.over += 1,
                    std::cmp::Ordering::Equal => self.exact += 1,
                }
            }
            Residency { lifetime, resident: (c.evicted_at & !CUT) - c.faulted_at, cut_short }
        });
        let mut state = c.state;
        let prediction = self.predictor.predict(&mut state, last);
        self.page[page as usize] = Counters {
            last_access: self.faults,
            faulted_at: self.faults,
            evicted_at: c.evicted_at & !CUT,
            predicted: prediction.unwrap_or(NEVER),
            state,
        };
        self.incoming = Some((page, prediction));
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        self.lru.push_front(page);
        // a page inserted without `on_miss` (a caller's own rule) gets no prediction
        if let Some((incoming, Some(lifetime))) = self.incoming.take().filter(|&(p, _)| p == page) {
            self.dead.insert(incoming, lifetime, self.faults.saturating_add(lifetime));
            self.predictions += 1;
        }
    }

    fn select_victim(&mut self, _time: u64) -> PageId {
        let victim = match self.dead.head() {
            Some((head, death)) if self.faults > death => {
                self.dead_list_evictions += 1;
                self.lru.unlink(head);
                self.gone(head);
                self.page[head as usize].evicted_at |= CUT;
                return head;
            }
            _ => {
                self.lru_evictions += 1;
                self.lru.pop_back().expect("select_victim with no resident page")
            }
        };
        self.gone(victim);
        victim
    }

    fn on_remove(&mut self, page: PageId) {
        self.lru.unlink(page);
        self.gone(page);
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.lru.prefetch(page);
        crate::hint::prefetch(&self.page, page as usize);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("predictions", self.predictions),
            ("under_predictions", self.under),
            ("over_predictions", self.over),
            ("exact_predictions", self.exact),
            ("cut_short_predictions", self.cut_short),
            ("dead_list_evictions", self.dead_list_evictions),
            ("lru_evictions", self.lru_evictions),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::drive;
    use crate::policy::{LastStatic, Lru};

    /// A predictor that never predicts: the policy must be exactly LRU.
    struct Never;
    impl LifetimePredictor for Never {
        fn name(&self) -> &'static str {
            "never"
        }
        fn predict(&mut self, _state: &mut u64, _last: Option<Residency>) -> Option<u64> {
            None
        }
    }

    /// Records what it is told and predicts a fixed lifetime; its state counts the
    /// page's faults.
    struct Fixed(u64, Vec<(u64, Option<Residency>)>);
    impl LifetimePredictor for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn predict(&mut self, state: &mut u64, last: Option<Residency>) -> Option<u64> {
            *state = state.wrapping_add(1);
            self.1.push((*state, last));
            Some(self.0)
        }
    }

    fn play<P: ReplacementPolicy>(p: &mut P, frames: usize, stream: &[PageId]) -> (u64, Vec<PageId>) {
        drive(p, frames, stream, |_, _, _| {})
    }

    fn random_stream(n: usize, range: u32, seed: u64) -> Vec<PageId> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = ((x >> 33) % range as u64) as u32;
                r * r / range
            })
            .collect()
    }

    #[test]
    fn without_predictions_it_is_lru() {
        let stream = random_stream(20_000, 300, 5);
        for frames in [1, 7, 50, 200] {
            let ours = play(&mut Predictive::new(Never), frames, &stream);
            let lru = play(&mut Lru::new(), frames, &stream);
            assert_eq!(ours, lru, "{frames} frames");
        }
    }

    /// Measurements by hand, 3 frames.
    #[test]
    fn measures_lifetime_and_residency_in_faults_to_other_pages() {
        let mut p = Predictive::new(Fixed(1_000_000, Vec::new()));
        // faults: 0 (#1), 1 (#2), 2 (#3), hits on 0, 3 (#4, LRU evicts 1), 1 (#5, evicts 2)
        let (_, victims) = play(&mut p, 3, &[0, 1, 2, 0, 0, 3, 1]);
        assert_eq!(victims, vec![1, 2]);
        let told = &p.predictor.1;
        // the first fault of pages 0, 1, 2, 3: no residency yet (state: faults of the page)
        assert_eq!(told[..4], [(0, None), (0, None), (0, None), (0, None)]);
        // page 1's second fault: faulted at #2, last used then (L = 0), evicted at #4 (L + D = 2)
        assert_eq!(told[4], (1, Some(Residency { lifetime: 0, resident: 2, cut_short: false })));
        // predictions far in the future: every victim was LRU's
        assert_eq!((p.dead_list_evictions, p.lru_evictions, p.predictions), (0, 2, 5));
    }

    /// A page predicted to live 0 faults is evicted by the Dead-List at the next fault,
    /// before LRU's choice, even if it was used again meanwhile; its residency was cut
    /// short by the prediction.
    #[test]
    fn expired_head_is_evicted_before_lru() {
        let mut p = Predictive::new(Fixed(0, Vec::new()));
        // 2 frames: 0 (#1, dead after #1), 1 (#2), hit 0, 2 (#3): the head is 0 though
        // LRU would take 1; then 0 (#4): its residency was ended by the Dead-List
        let (_, victims) = play(&mut p, 2, &[0, 1, 0, 2, 0]);
        assert_eq!(victims, vec![0, 1]);
        assert_eq!((p.dead_list_evictions, p.lru_evictions), (2, 0));
        assert_eq!((p.under, p.exact, p.over, p.cut_short), (0, 0, 0, 1));
    }

    /// On a loop over M+1 pages in M frames, Last-static-0 learns each page's lifetime
    /// and evicts the page that is dead, instead of LRU's choice of the next one needed.
    #[test]
    fn last_static_beats_lru_on_a_loop() {
        let m = 100u32;
        let stream: Vec<PageId> = (0..50).flat_map(|_| 0..=m).collect();
        let (lru, _) = play(&mut Lru::new(), m as usize, &stream);
        let mut p = Predictive::new(LastStatic::new(0));
        let (faults, _) = play(&mut p, m as usize, &stream);
        assert_eq!(lru, stream.len() as u64);
        assert!(faults * 5 < lru, "last-static {faults} against LRU {lru}");
        assert!(p.dead_list_evictions > p.lru_evictions);
    }

    /// Invariants after every reference: the Dead-List holds resident pages only, the
    /// LRU list all of them, and the counters add up.
    #[test]
    fn dead_list_holds_only_resident_pages() {
        let stream = random_stream(30_000, 500, 9);
        let pages = *stream.iter().max().unwrap() + 1;
        for k in [-5, 0, 10] {
            let mut p = Predictive::new(LastStatic::new(k));
            let (faults, victims) = drive(&mut p, 60, &stream, |p, _, resident| {
                assert_eq!(p.lru.len(), resident);
                assert!(p.dead.len() <= resident);
                let listed: Vec<PageId> = p.lru.iter().collect();
                let n = (0..pages).filter(|&q| p.dead_list().contains(q)).count();
                assert_eq!(n, p.dead.len());
                assert!((0..pages).filter(|&q| p.dead_list().contains(q)).all(|q| listed.contains(&q)));
            });
            assert_eq!(p.dead_list_evictions + p.lru_evictions, victims.len() as u64);
            assert_eq!(p.faults, faults);
            assert!(p.under + p.over + p.exact <= p.predictions);
        }
    }
}
