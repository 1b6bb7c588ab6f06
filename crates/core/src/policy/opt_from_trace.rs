//! OPT (Belady's MIN) with its future taken from the trace: libCacheSim's oracleGeneral
//! records carry, for every reference, the time of the next reference to the same
//! object (`next_access_vtime`), which is what its own Belady reads. With those times
//! OPT needs no pre-pass over a recorded stream, so it is replayed as the trace is read,
//! like any other policy. The same victims as [`super::Opt`], in [`ResidentKeys`]; the
//! keys are times in references (a record's key is the time after its last
//! reference), not in records: both orders are the same.
//!
//! The times are the file's claims, and a wrong one would give wrong victims, so
//! [`TraceFuture`] checks each when its moment comes: a page's next record must start
//! at the time its previous record claimed, a page claimed never to come back must not,
//! and at the end no claim may be left waiting. A claim must also lie after its own
//! record. Times may count references from 0 (pagelab's converter) or from 1
//! (libCacheSim's traceConv): the first page that comes back tells which, and every
//! later one must agree. A claim of a reference inside a record's repeats is not read
//! (the next reference is the page's own). The check runs on the stream's id stage,
//! ahead of the simulation, and hands each record its page's key before and after it
//! (`RefBatch::next_keys`), so the simulation keeps no table per page; a batch in which
//! a time proved wrong comes without keys, the policy stops
//! ([`ReplacementPolicy::told_wrong`]), and the replay runs again with the pre-pass.
//! (Two pages that claim one time need no check of their own: one of them is wrong, and
//! is caught when its page comes back or at the end; until then a lost key only keeps a
//! page resident.)
use super::opt::{ResidentKeys, Victim, NEVER};
use super::ReplacementPolicy;
use crate::hint::{prefetch, PREFETCH_DISTANCE};
use crate::trace::{PageId, RefBatch, MOST_TIMED_REFERENCES};

/// The claim of a page not seen yet (no claim is 0: it must follow its record).
const UNSEEN: u32 = 0;

// a stream's times (up to its count, counted from 1) stay below NEVER
const _: () = assert!(MOST_TIMED_REFERENCES < NEVER as u64);

/// The check of a trace's next-access times, and OPT's keys from them.
#[derive(Debug)]
pub struct TraceFuture {
    /// Per page: the next-access time its last record claimed, as the file writes it
    /// ([`NEVER`]: not used again; [`UNSEEN`]).
    claim: Vec<u32>,
    /// References in the stream: claims are at most this (from 1, the last is n).
    references: u64,
    /// References before the next batch.
    seen: u64,
    /// What the file's times add to a reference's index from 0, once known.
    base: Option<u32>,
    wrong: bool,
}

impl TraceFuture {
    /// For a stream of `references` references, at most [`MOST_TIMED_REFERENCES`].
    pub fn new(references: u64) -> Self {
        assert!(references <= MOST_TIMED_REFERENCES, "{references} references: the times do not fit in 32 bits");
        TraceFuture { claim: Vec::new(), references, seen: 0, base: None, wrong: false }
    }

    /// Checks the times of `batch` (its `next_access`, its ids assigned) and gives it its
    /// `next_keys`; none once a time has proved wrong.
    pub fn check(&mut self, batch: &mut RefBatch) {
        batch.next_keys.clear();
        if batch.next_access.len() != batch.len() {
            self.wrong = true; // a source that gave no times
        }
        if self.wrong {
            return;
        }
        if let Some(&most) = batch.id.iter().max() {
            if most as usize >= self.claim.len() {
                self.claim.resize((most as usize + 1).max(self.claim.len() * 3 / 2), UNSEEN);
            }
        }
        let n = self.references;
        for (i, ((&id, &next), &repeat)) in batch.id.iter().zip(&batch.next_access).zip(&batch.repeat).enumerate() {
            if let Some(&ahead) = batch.id.get(i + PREFETCH_DISTANCE) {
                prefetch(&self.claim, ahead as usize);
            }
            let start = self.seen;
            self.seen += repeat as u64;
            if self.seen > n {
                self.wrong = true; // more references than the file's size said
                break;
            }
            // -1 and i64::MAX: not used again (libCacheSim reads both so)
            let claim = if next == u64::MAX || next == i64::MAX as u64 {
                NEVER
            } else if next >= self.seen && next <= n {
                next as u32
            } else {
                self.wrong = true;
                break;
            };
            let was = self.claim[id as usize];
            if was != UNSEEN {
                // this record must be the one its page's last claim named
                let start = start as u32;
                match self.base {
                    Some(base) if was == start + base => {}
                    // the first page back: its claim says where the file counts from
                    None if was == start || was == start + 1 => self.base = Some(was - start),
                    _ => {
                        self.wrong = true;
                        break;
                    }
                }
            }
            self.claim[id as usize] = claim;
            batch.next_keys.push((was, claim));
        }
        if self.wrong {
            batch.next_keys.clear();
        }
    }

    /// True when a time proved wrong; `at_end`: the stream has ended, so a claim still
    /// waiting for its reference is wrong too.
    pub fn wrong(&self, at_end: bool) -> bool {
        self.wrong || (at_end && self.claim.iter().any(|&c| c != UNSEEN && c != NEVER))
    }
}

/// OPT told its future by the trace ([`super::Foresight::FromTrace`]): the keys of each
/// record come checked, from [`TraceFuture`].
#[derive(Debug)]
pub struct OptFromTrace {
    keys: ResidentKeys,
    /// Per time: the page that claimed it; the page of a victim's key.
    owner: Vec<PageId>,
    /// The batch being replayed: its first record's index, and per record its page's
    /// key before and after it.
    batch_time: u64,
    batch: Vec<(u32, u32)>,
    wrong: bool,
}

impl OptFromTrace {
    /// For a stream of `references` references ([`TraceFuture::new`]).
    pub fn new(references: u64) -> Self {
        assert!(references <= MOST_TIMED_REFERENCES, "{references} references: the times do not fit in 32 bits");
        let bound = references as usize + 1;
        OptFromTrace { keys: ResidentKeys::new(bound), owner: vec![0; bound], batch_time: 0, batch: Vec::new(), wrong: false }
    }

    /// The keys of the batch's record at `time`: (before, after); None (and the policy
    /// stops) when the batch came without them.
    #[inline(always)]
    fn keys_at(&mut self, time: u64) -> Option<(usize, u32, u32)> {
        let i = (time - self.batch_time) as usize;
        match self.batch.get(i) {
            Some(&(was, next)) if !self.wrong => Some((i, was, next)),
            _ => {
                self.wrong = true;
                None
            }
        }
    }

    /// `page` is resident now with key `k`, from record `i` of the batch.
    #[inline]
    fn push(&mut self, page: PageId, i: usize, k: u32) {
        if let Some(&(_, ahead)) = self.batch.get(i + PREFETCH_DISTANCE) {
            prefetch(&self.owner, ahead as usize);
            self.keys.prefetch(ahead);
        }
        if k != NEVER {
            self.owner[k as usize] = page;
        }
        self.keys.insert(page, k);
    }
}

impl ReplacementPolicy for OptFromTrace {
    fn name(&self) -> &'static str {
        "opt"
    }
    fn reserve_pages(&mut self, pages: usize) {
        self.keys.reserve_pages(pages);
    }
    fn tell(&mut self, next_keys: &[(u32, u32)], time: u64) {
        self.batch_time = time;
        self.batch.clear();
        self.batch.extend_from_slice(next_keys);
    }
    #[inline]
    fn on_hit(&mut self, page: PageId, time: u64) {
        if let Some((i, was, next)) = self.keys_at(time) {
            // resident, so its key is its last claim, which the check found right
            self.keys.remove(page, was);
            self.push(page, i, next);
        }
    }
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {
        // the next use after a record is the page's next record: unchanged
    }
    #[inline]
    fn on_insert(&mut self, page: PageId, time: u64) {
        if let Some((i, _, next)) = self.keys_at(time) {
            self.push(page, i, next);
        }
    }
    fn select_victim(&mut self, _time: u64) -> PageId {
        if self.wrong {
            return 0; // the results are void: any page keeps the replay going
        }
        match self.keys.take_victim() {
            Some(Victim::Never(page)) => page,
            Some(Victim::Latest(k)) => {
                prefetch(&self.owner, self.keys.top() as usize);
                self.owner[k as usize]
            }
            None => {
                // right times keep a key for every resident page: a time was wrong
                self.wrong = true;
                0
            }
        }
    }
    fn on_remove(&mut self, _page: PageId) {
        // a free: the page's next touch is a new page, which the trace's times (of
        // objects, which are not freed) do not say
        self.wrong = true;
    }
    fn told_wrong(&self) -> bool {
        self.wrong
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Future, Opt};
    use crate::replay::{PoolSimulation, Simulate};
    use crate::trace::AccessKind;

    /// The oracleGeneral next-access time of each reference of `pages`, counted from
    /// `base`.
    fn times(pages: &[PageId], base: u64) -> Vec<u64> {
        (0..pages.len())
            .map(|i| (i + 1..pages.len()).find(|&j| pages[j] == pages[i]).map_or(u64::MAX, |j| j as u64 + base))
            .collect()
    }

    /// Replays `pages` (one reference a record, ids in first-touch order) in batches of
    /// `batch` records, told `next` through the check: (faults, wrong). The replay goes
    /// on after a time proved wrong (the driver stops), to show that nothing breaks.
    fn told(pages: &[PageId], next: &[u64], frames: u32, batch: usize) -> (u64, bool) {
        let mut future = TraceFuture::new(pages.len() as u64);
        let mut sim = PoolSimulation::new(OptFromTrace::new(pages.len() as u64), frames);
        let distinct = pages.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
        let mut stopped = false;
        for (chunk, (ids, nx)) in pages.chunks(batch).zip(next.chunks(batch)).enumerate() {
            let time = (chunk * batch) as u64;
            let mut b = RefBatch { id: ids.to_vec(), repeat: vec![1; ids.len()], next_access: nx.to_vec(), ..Default::default() };
            future.check(&mut b);
            sim.tell(&b.next_keys, time);
            sim.run(ids, &vec![AccessKind::Read; ids.len()], &[], &[], distinct, time);
            stopped |= sim.told_wrong();
        }
        let wrong = future.wrong(true);
        assert!(!stopped || wrong, "the policy stopped on keys the check found right");
        (sim.result(pages.len() as u64, pages.len() as u64, distinct as u64).faults, wrong)
    }

    fn prepass(pages: &[PageId], frames: u32) -> u64 {
        let distinct = pages.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
        let future = std::sync::Arc::new(Future::new(std::sync::Arc::new(pages.to_vec()), &[], distinct));
        let mut sim = PoolSimulation::new(Opt::new(future), frames);
        sim.run(pages, &vec![AccessKind::Read; pages.len()], &[], &[], distinct, 0);
        sim.result(pages.len() as u64, pages.len() as u64, distinct as u64).faults
    }

    /// A stream of `n` references over 40 pages, ids in first-touch order.
    fn stream(n: usize) -> Vec<PageId> {
        let raw: Vec<u32> = (0..n as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) % 40).collect();
        let mut id = std::collections::HashMap::new();
        raw.iter().map(|r| { let k = id.len() as u32; *id.entry(*r).or_insert(k) }).collect()
    }

    #[test]
    fn right_times_from_0_or_1_give_the_pre_pass_faults() {
        let pages = stream(3_000);
        for base in [0, 1] {
            for frames in [1, 5, 17, 39] {
                for batch in [1, 7, 4_096] {
                    let (faults, wrong) = told(&pages, &times(&pages, base), frames, batch);
                    assert!(!wrong, "base {base}, {frames} frames");
                    assert_eq!(faults, prepass(&pages, frames), "base {base}, {frames} frames, batches of {batch}");
                }
            }
        }
        // libCacheSim's other mark of no next access
        let next: Vec<u64> = times(&pages, 0).iter().map(|&t| if t == u64::MAX { i64::MAX as u64 } else { t }).collect();
        assert_eq!(told(&pages, &next, 5, 64), (prepass(&pages, 5), false));
    }

    /// Every kind of wrong claim is caught, however it moves the victims.
    #[test]
    fn wrong_times_are_caught() {
        let pages = stream(500);
        let right = times(&pages, 0);
        let reused = (0..pages.len()).find(|&i| right[i] != u64::MAX).unwrap();
        let last_use = (0..pages.len()).find(|&i| right[i] == u64::MAX).unwrap();
        let cases: Vec<(&str, Box<dyn Fn(&mut Vec<u64>)>)> = vec![
            ("a page said never to come back comes back", Box::new(|n| n[reused] = u64::MAX)),
            ("a claim one later", Box::new(|n| n[reused] += 1)),
            ("a claim of a time that is another page's", Box::new(|n| n[last_use] = n[reused])),
            ("a claim left waiting at the end", Box::new(|n| n[last_use] = 500)),
            ("a claim of the last reference, which is another page's", Box::new(|n| n[last_use] = 499)),
            ("a claim before its record", Box::new(|n| n[10] = 3)),
            ("a claim of its own record", Box::new(|n| n[10] = 10)),
            ("a claim past the stream", Box::new(|n| n[10] = 501)),
            ("a negative claim", Box::new(|n| n[10] = -2i64 as u64)),
            ("times from 2", Box::new(|n| n.iter_mut().filter(|t| **t != u64::MAX).for_each(|t| *t += 2))),
            ("from 0, then from 1", Box::new(|n| n[400..].iter_mut().filter(|t| **t != u64::MAX).for_each(|t| *t += 1))),
            ("no times at all", Box::new(|n| n.iter_mut().for_each(|t| *t = u64::MAX))),
        ];
        for (what, spoil) in cases {
            let mut next = right.clone();
            spoil(&mut next);
            for frames in [3, 20] {
                assert!(told(&pages, &next, frames, 64).1, "{what}, {frames} frames");
            }
        }
        // and nothing is caught in the right ones
        assert!(!told(&pages, &right, 3, 64).1);
    }

    proptest::proptest! {
        /// Times spoiled at random never crash the replay, and whenever none is caught
        /// the faults are the pre-pass's.
        #[test]
        fn spoiled_times_are_caught_or_harmless(
            raw in proptest::collection::vec(0u32..12, 1..200),
            spoil in proptest::collection::vec((0usize..200, 0u64..204), 0..4),
            frames in 1u32..12,
            base in 0u64..2,
        ) {
            let mut id = std::collections::HashMap::new();
            let pages: Vec<PageId> = raw.iter().map(|r| { let k = id.len() as u32; *id.entry(*r).or_insert(k) }).collect();
            let mut next = times(&pages, base);
            for &(at, t) in &spoil {
                // 201 and up: the two marks of no next access and a negative time
                let t = match t { 201 => u64::MAX, 202 => i64::MAX as u64, 203 => -5i64 as u64, t => t };
                next[at % pages.len()] = t;
            }
            for batch in [1, 16, 256] {
                let (faults, wrong) = told(&pages, &next, frames, batch);
                if !wrong {
                    proptest::prop_assert_eq!(faults, prepass(&pages, frames));
                }
            }
        }
    }

    /// A batch without times (a source that was not asked) is wrong, and so is a policy
    /// told no keys, not a crash.
    #[test]
    fn a_batch_without_times_is_wrong() {
        let mut future = TraceFuture::new(10);
        let mut b = RefBatch { id: vec![0, 1], repeat: vec![1, 1], ..Default::default() };
        future.check(&mut b);
        assert!(future.wrong(false) && b.next_keys.is_empty());
        let mut opt = OptFromTrace::new(10);
        opt.reserve_pages(2);
        opt.tell(&b.next_keys, 0);
        opt.on_insert(0, 0);
        assert!(opt.told_wrong());
    }
}
