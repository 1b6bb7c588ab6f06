//! One memory pool of a fixed number of frames under one replacement policy. The loop is
//! generic over the policy, so the per-reference calls are static and inlined; the
//! replay driver holds simulations as trait objects and pays one dynamic call per batch.

use crate::hint::{prefetch, PREFETCH_DISTANCE};
use crate::policy::ReplacementPolicy;
use crate::trace::{AccessKind, PageId};

use super::ReplayResult;

const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
const SEEN: u8 = 4;

/// A simulation the replay driver can feed batch by batch.
pub trait Simulate: Send {
    /// Processes records (dense ids and kinds) whose first has index `time` in the
    /// stream; `pages` bounds the ids.
    fn run(&mut self, ids: &[PageId], kinds: &[AccessKind], pages: usize, time: u64);
    fn result(&self, records: u64, references: u64, distinct_pages: u64) -> ReplayResult;
}

pub struct PoolSimulation<P: ReplacementPolicy> {
    policy: P,
    frames: u32,
    resident: u32,
    /// RESIDENT | DIRTY | SEEN per page.
    state: Vec<u8>,
    faults: u64,
    compulsory_faults: u64,
    dirty_evictions: u64,
}

impl<P: ReplacementPolicy> PoolSimulation<P> {
    pub fn new(policy: P, frames: u32) -> Self {
        PoolSimulation { policy, frames, resident: 0, state: Vec::new(), faults: 0, compulsory_faults: 0, dirty_evictions: 0 }
    }
}

impl<P: ReplacementPolicy> Simulate for PoolSimulation<P> {
    fn run(&mut self, ids: &[PageId], kinds: &[AccessKind], pages: usize, time: u64) {
        if pages > self.state.len() {
            let grow = pages.max(self.state.len() * 3 / 2);
            self.state.resize(grow, 0);
            self.policy.reserve_pages(grow);
        }
        for (i, (&id, &kind)) in ids.iter().zip(kinds).enumerate() {
            if let Some(&ahead) = ids.get(i + PREFETCH_DISTANCE) {
                prefetch(&self.state, ahead as usize);
                self.policy.prefetch(ahead);
            }
            let t = time + i as u64;
            let st = self.state[id as usize];
            if st & RESIDENT != 0 {
                self.policy.on_hit(id, t);
            } else {
                self.faults += 1;
                if st & SEEN == 0 {
                    self.compulsory_faults += 1;
                }
                self.policy.on_miss(id, t);
                if self.resident == self.frames {
                    let victim = self.policy.select_victim(t);
                    let vs = &mut self.state[victim as usize];
                    if *vs & DIRTY != 0 {
                        self.dirty_evictions += 1;
                    }
                    *vs = SEEN;
                } else {
                    self.resident += 1;
                }
                self.policy.on_insert(id, t);
            }
            let dirty = if kind == AccessKind::Write { DIRTY } else { 0 };
            self.state[id as usize] = st | RESIDENT | SEEN | dirty;
        }
    }

    fn result(&self, records: u64, references: u64, distinct_pages: u64) -> ReplayResult {
        ReplayResult {
            policy: self.policy.name().to_string(),
            frames: self.frames as u64,
            records,
            references,
            faults: self.faults,
            compulsory_faults: self.compulsory_faults,
            dirty_evictions: self.dirty_evictions,
            distinct_pages,
        }
    }
}
