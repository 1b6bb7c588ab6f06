//! One memory pool of a fixed number of frames under one replacement policy. The loop is
//! generic over the policy, so the per-reference calls are static and inlined; the
//! replay driver holds simulations as trait objects and pays one dynamic call per batch.

use crate::hint::{prefetch, PREFETCH_DISTANCE};
use crate::policy::{ReplacementPolicy, Repeats};
use crate::trace::{has_frees, AccessKind, PageId};

use super::ReplayResult;

const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
const SEEN: u8 = 4;

/// A simulation the replay driver can feed batch by batch.
pub trait Simulate: Send {
    /// Processes records (dense ids, kinds and virtual page numbers) whose first has
    /// index `time` in the stream; `pages` bounds the ids. `vpages` is empty unless a
    /// policy of the replay needs virtual page numbers ([`crate::policy::PolicyKind::needs_vpages`]);
    /// `repeats` (the records' repeat counts) is empty unless a simulation of the replay
    /// shows repeats to its policy ([`Repeats::Hits`]).
    fn run(&mut self, ids: &[PageId], kinds: &[AccessKind], vpages: &[u64], repeats: &[u32], pages: usize, time: u64);
    fn result(&self, records: u64, references: u64, distinct_pages: u64) -> ReplayResult;
    /// OPT's keys for the batch `run` gets next ([`ReplacementPolicy::tell`]).
    fn tell(&mut self, next_keys: &[(u32, u32)], time: u64);
    /// Whether a batch came without the keys it needed ([`ReplacementPolicy::told_wrong`]).
    fn told_wrong(&self) -> bool;
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
    /// Sum over records of the pages resident after each, up to `resident_until`: the
    /// mean resident set without an add per reference for fixed-size pools, whose
    /// resident count changes only while they fill.
    resident_sum: u128,
    resident_until: u64,
    /// The policy is shown a record's repeats ([`Repeats::Hits`]).
    repeat_hits: bool,
}

impl<P: ReplacementPolicy> PoolSimulation<P> {
    /// A pool of `frames` frames; a variable-size policy ignores `frames` (it is never
    /// asked for a victim).
    pub fn new(policy: P, frames: u32) -> Self {
        let frames = if policy.variable_size() { u32::MAX } else { frames };
        PoolSimulation {
            policy,
            frames,
            resident: 0,
            state: Vec::new(),
            faults: 0,
            compulsory_faults: 0,
            dirty_evictions: 0,
            resident_sum: 0,
            resident_until: 0,
            repeat_hits: false,
        }
    }

    /// What the policy sees of a record's repeats (folded by default).
    pub fn with_repeats(mut self, repeats: Repeats) -> Self {
        self.repeat_hits = repeats == Repeats::Hits;
        self
    }

    /// Accounts the records before `t` at the current resident count.
    #[inline(always)]
    fn account_resident(&mut self, t: u64) {
        self.resident_sum += self.resident as u128 * (t - self.resident_until) as u128;
        self.resident_until = t;
    }

    /// The records of one batch; `FREES`: some of them are frees; `HITS`: the policy
    /// sees their repeats.
    #[inline(always)]
    fn records<const FREES: bool, const HITS: bool>(&mut self, ids: &[PageId], kinds: &[AccessKind], vpages: &[u64], repeats: &[u32], time: u64) {
        for (i, (&id, &kind)) in ids.iter().zip(kinds).enumerate() {
            if let Some(&ahead) = ids.get(i + PREFETCH_DISTANCE) {
                prefetch(&self.state, ahead as usize);
                self.policy.prefetch(ahead);
            }
            let t = time + i as u64;
            let st = self.state[id as usize];
            if FREES && kind == AccessKind::Free {
                self.free(id, st, t);
                continue;
            }
            if st & RESIDENT != 0 {
                self.policy.on_hit(id, t);
            } else {
                self.faults += 1;
                if st & SEEN == 0 {
                    self.compulsory_faults += 1;
                }
                if self.policy.wants_vpages() {
                    self.policy.on_miss_vpage(id, vpages[i]);
                }
                self.policy.on_miss(id, t);
                if self.resident == self.frames {
                    let victim = self.policy.select_victim(t);
                    self.evict(victim);
                } else {
                    self.account_resident(t);
                    self.resident += 1;
                }
                self.policy.on_insert(id, t);
            }
            if HITS && repeats[i] > 1 {
                self.policy.on_repeat(id, t, repeats[i] - 1);
            }
            let dirty = if kind == AccessKind::Write { DIRTY } else { 0 };
            self.state[id as usize] = st | RESIDENT | SEEN | dirty;
            if self.policy.variable_size() {
                while let Some(gone) = self.policy.release(t) {
                    self.evict(gone);
                    self.resident -= 1;
                }
                // the resident set after this record: the window W(t, tau) for Working Set
                self.account_resident(t + 1);
            }
        }
    }

    /// A free record at `t` (the page's state `st`): a resident page leaves memory with
    /// no fault and no write-back, and the page is forgotten, so that its next touch is
    /// a fault counted as compulsory (a zero-filled page, as after munmap and mmap).
    fn free(&mut self, id: PageId, st: u8, t: u64) {
        if st & RESIDENT != 0 {
            self.policy.on_remove(id);
            self.account_resident(t);
            self.resident -= 1;
            if self.policy.variable_size() {
                self.account_resident(t + 1);
            }
        }
        self.state[id as usize] = 0;
    }

    fn evict(&mut self, victim: PageId) {
        let vs = &mut self.state[victim as usize];
        if *vs & DIRTY != 0 {
            self.dirty_evictions += 1;
        }
        *vs = SEEN;
    }
}

impl<P: ReplacementPolicy> Simulate for PoolSimulation<P> {
    fn run(&mut self, ids: &[PageId], kinds: &[AccessKind], vpages: &[u64], repeats: &[u32], pages: usize, time: u64) {
        if pages > self.state.len() {
            let grow = pages.max(self.state.len() * 3 / 2);
            self.state.resize(grow, 0);
            self.policy.reserve_pages(grow);
        }
        // the loop that tests for frees only for the batches that hold one
        match (has_frees(kinds), self.repeat_hits) {
            (true, false) => self.records::<true, false>(ids, kinds, vpages, repeats, time),
            (false, false) => self.records::<false, false>(ids, kinds, vpages, repeats, time),
            (true, true) => self.records::<true, true>(ids, kinds, vpages, repeats, time),
            (false, true) => self.records::<false, true>(ids, kinds, vpages, repeats, time),
        }
    }

    fn tell(&mut self, next_keys: &[(u32, u32)], time: u64) {
        self.policy.tell(next_keys, time);
    }

    fn told_wrong(&self) -> bool {
        self.policy.told_wrong()
    }

    fn result(&self, records: u64, references: u64, distinct_pages: u64) -> ReplayResult {
        let sum = self.resident_sum + self.resident as u128 * (records - self.resident_until) as u128;
        let variable = self.policy.variable_size();
        ReplayResult {
            policy: self.policy.name().to_string(),
            frames: if variable { 0 } else { self.frames as u64 },
            mean_resident: if records == 0 { 0.0 } else { sum as f64 / records as f64 },
            counters: self.policy.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            records,
            references,
            faults: self.faults,
            compulsory_faults: self.compulsory_faults,
            dirty_evictions: self.dirty_evictions,
            distinct_pages,
        }
    }
}
