//! DP-Approx in the kernel (predictive-replacement.txt section 5.2): a Dead-List beside
//! the machine's own reclaim, fed only by what an operating system sees.
//!
//! Each page fault counts on a global fault counter (G1 of section 5.2, one for the
//! machine: with one process it is the application's); a page's L + D is the counter at
//! its eviction minus the counter at its fault. At a fault the page is predicted to live
//! the exponential average of its past L + D ([`DpApprox`]) and enters the Dead-List.
//! When reclaim needs a victim, the Dead-List's head goes first if it is predicted dead
//! and can leave now; otherwise the machine's reclaim (CLOCK, Linux 2.2, ...) chooses,
//! as section 5 falls back to the system's replacement.

use super::memory::{Gid, PageTable, PAGING_IN, RESIDENT, WRITING};
use crate::policy::{DeadList, DpApprox, Ending, LifetimePredictor, Residency, NO_STATE};

const NEVER: u64 = u64::MAX;

pub struct DeadListReclaim {
    list: DeadList,
    predictor: DpApprox,
    faults: u64,
    faulted_at: Vec<u64>,
    evicted_at: Vec<u64>,
    /// DP-Approx's running prediction per page.
    state: Vec<u64>,
    predictions: u64,
    evictions: u64,
}

impl DeadListReclaim {
    pub fn new(a: f64) -> Self {
        DeadListReclaim {
            list: DeadList::default(),
            predictor: DpApprox::new(a),
            faults: 0,
            faulted_at: Vec::new(),
            evicted_at: Vec::new(),
            state: Vec::new(),
            predictions: 0,
            evictions: 0,
        }
    }

    pub fn reserve(&mut self, pages: usize) {
        self.list.reserve_pages(pages);
        if pages > self.faulted_at.len() {
            self.faulted_at.resize(pages, NEVER);
            self.evicted_at.resize(pages, NEVER);
            self.state.resize(pages, NO_STATE);
        }
    }

    /// A fault on `gid` is being served: measure its last residency, predict, list it.
    pub fn on_fault(&mut self, gid: Gid) {
        self.faults += 1;
        let g = gid as usize;
        let (fault, evict) = (self.faulted_at[g], self.evicted_at[g]);
        // the OS knows L + D only; the hardware lifetime is not measured here
        let last = (fault != NEVER && evict != NEVER && evict >= fault).then(|| Residency { lifetime: evict - fault, resident: evict - fault, ending: Ending::Replaced });
        self.faulted_at[g] = self.faults;
        self.list.remove(gid);
        if let Some(lifetime) = self.predictor.predict(&mut self.state[g], last) {
            self.list.insert(gid, lifetime, self.faults.saturating_add(lifetime));
            self.predictions += 1;
        }
    }

    /// `gid` left memory.
    pub fn on_gone(&mut self, gid: Gid) {
        self.list.remove(gid);
        self.evicted_at[gid as usize] = self.faults;
    }

    /// The Dead-List's head if it is predicted dead and may leave now (resident, no
    /// I/O in flight, not the skipped process's).
    pub fn victim(&mut self, pages: &PageTable, skip: Option<u16>) -> Option<Gid> {
        let (head, death) = self.list.head()?;
        let f = pages.flags[head as usize];
        let free = f & RESIDENT != 0 && f & (PAGING_IN | WRITING) == 0 && Some(pages.owner[head as usize]) != skip;
        if self.faults > death && free {
            self.list.remove(head);
            self.evictions += 1;
            Some(head)
        } else {
            None
        }
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("predictions", self.predictions), ("dead_list_evictions", self.evictions), ("faults_seen", self.faults)]
    }
}
