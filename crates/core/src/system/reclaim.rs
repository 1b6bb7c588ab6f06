//! Victim selection for reclaim: Linux 2.2 `swap_out`, a global CLOCK, exact global
//! LRU, BSD's page queues, or any replacement policy of replay; optionally with
//! DP-Approx's Dead-List in front ([`DeadListReclaim`]).
//!
//! Every policy may be told to skip one process (the token holder, token-ordered-lru.txt
//! section 5.2); when no other process can give a page, it takes one of the skipped
//! process's pages and says so, which is the paper's "exception handler".

use super::config::ReclaimKind;
use super::dead_list_reclaim::DeadListReclaim;
use super::memory::{Gid, PageTable, NO_GID, PAGING_IN, REFERENCED, RESIDENT, WRITING};
use super::process::Process;
use crate::policy::{PageList, PolicyKind, ReplacementPolicy};

const NO_SLOT: u32 = u32::MAX;

/// A chosen victim, and whether it belongs to the process reclaim was told to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    pub gid: Gid,
    pub from_skipped: bool,
}

pub struct Reclaimer {
    pub kind: ReclaimKind,
    /// CLOCK: resident pages in a circle of frame slots.
    ring: Vec<Gid>,
    slot_of: Vec<u32>,
    free_slots: Vec<u32>,
    hand: usize,
    /// LRU: most recent at the head. BSD: the active list.
    lru: PageList,
    /// BSD: the inactive list, least recently used at the tail.
    inactive: PageList,
    /// BSD: which list each page is on.
    queue: Vec<u8>,
    /// `reclaim = "policy"`: the policy, which pages it holds, how many, and a clock of
    /// references and faults given to it as time.
    policy: Option<Box<dyn ReplacementPolicy>>,
    in_policy: Vec<u8>,
    policy_len: usize,
    ticks: u64,
    /// The page told to the policy by `before_fault`, not yet inserted.
    missing: Gid,
    /// `dead_list = "dp-approx"`.
    dead: Option<DeadListReclaim>,
}

/// Whether a page is in the policy, and whether the reference that faulted on it is
/// still to be replayed (the machine retries it once the page is in; replay counts it
/// as the miss only, so the policy must not see it as a hit too).
const OUT: u8 = 0;
const IN: u8 = 1;
const IN_FAULTED: u8 = 2;

const NOT_QUEUED: u8 = 0;
const ACTIVE: u8 = 1;
const INACTIVE: u8 = 2;

impl Reclaimer {
    pub fn new(kind: ReclaimKind) -> Self {
        Self::with_policy(kind, None, None, 0, 0)
    }

    /// A reclaimer with `policy` for `ReclaimKind::Policy` (sized for `frames` frames)
    /// and a DP-Approx Dead-List of weight `dead_list` in front of it.
    pub fn with_policy(kind: ReclaimKind, policy: Option<PolicyKind>, dead_list: Option<f64>, frames: u32, seed: u64) -> Self {
        let policy = policy.map(|p| crate::policy::build(p, frames, seed, None));
        Reclaimer {
            policy,
            in_policy: Vec::new(),
            policy_len: 0,
            ticks: 0,
            missing: NO_GID,
            dead: dead_list.map(DeadListReclaim::new),
            kind,
            ring: Vec::new(),
            slot_of: Vec::new(),
            free_slots: Vec::new(),
            hand: 0,
            lru: PageList::default(),
            inactive: PageList::default(),
            queue: Vec::new(),
        }
    }

    /// Per-page arrays cover `pages` global pages.
    pub fn reserve(&mut self, pages: usize) {
        match self.kind {
            ReclaimKind::Clock if pages > self.slot_of.len() => self.slot_of.resize(pages, NO_SLOT),
            ReclaimKind::Lru => self.lru.reserve_pages(pages),
            ReclaimKind::Bsd => {
                self.lru.reserve_pages(pages);
                self.inactive.reserve_pages(pages);
                if pages > self.queue.len() {
                    self.queue.resize(pages, NOT_QUEUED);
                }
            }
            ReclaimKind::Policy => {
                if let Some(p) = self.policy.as_mut() {
                    p.reserve_pages(pages);
                }
                if pages > self.in_policy.len() {
                    self.in_policy.resize(pages, OUT);
                }
            }
            _ => {}
        }
        if let Some(d) = self.dead.as_mut() {
            d.reserve(pages);
        }
    }

    /// A fault on `gid` (virtual page `vpage`) needs a frame: the policy sees the miss
    /// now, before reclaim may ask it for a victim, as in replay. A fault retried after
    /// waiting for a frame is not told twice.
    pub fn before_fault(&mut self, gid: Gid, vpage: u64) {
        if let Some(p) = self.policy.as_mut() {
            if self.missing != gid && self.in_policy[gid as usize] == OUT {
                self.ticks += 1;
                if p.wants_vpages() {
                    p.on_miss_vpage(gid, vpage);
                }
                p.on_miss(gid, self.ticks);
                self.missing = gid;
            }
        }
    }

    /// The fault on `gid` got its frame: the page enters the policy (told of its miss
    /// first if another fault came between), and the Dead-List counts the fault and
    /// lists the page.
    pub fn on_fault(&mut self, gid: Gid, vpage: u64) {
        if let Some(d) = self.dead.as_mut() {
            d.on_fault(gid);
        }
        if self.policy.is_some() && self.in_policy[gid as usize] == OUT {
            self.before_fault(gid, vpage);
            self.missing = NO_GID;
            self.policy_insert(gid);
            self.in_policy[gid as usize] = IN_FAULTED;
        }
    }

    /// The policy's share of `on_resident`: a page that arrived without a fault of its
    /// own (read-around, adaptive page-in) enters it.
    fn policy_insert(&mut self, gid: Gid) {
        if let Some(p) = self.policy.as_mut() {
            if self.in_policy[gid as usize] == OUT {
                self.ticks += 1;
                p.on_insert(gid, self.ticks);
                self.in_policy[gid as usize] = IN;
                self.policy_len += 1;
            }
        }
    }

    /// Policy-specific counts (the policy's, then the Dead-List's).
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut out = self.policy.as_ref().map(|p| p.counters()).unwrap_or_default();
        if let Some(d) = &self.dead {
            out.extend(d.counters().into_iter().map(|(k, v)| (if k == "predictions" { "dead_list_predictions" } else { k }, v)));
        }
        out
    }

    /// True when `gid` may join a page-out cluster as far as the page queues go: in the
    /// inactive list under BSD (section 2's clustering condition), any page otherwise.
    pub fn clusterable(&self, gid: Gid) -> bool {
        self.kind != ReclaimKind::Bsd || self.queue[gid as usize] == INACTIVE
    }

    /// A page brought in by read-around: BSD queues it as inactive (not yet used).
    pub fn on_resident_unused(&mut self, gid: Gid) {
        if self.kind == ReclaimKind::Bsd {
            self.inactive.push_front(gid);
            self.queue[gid as usize] = INACTIVE;
        } else {
            self.on_resident(gid);
        }
    }

    /// A page became resident.
    pub fn on_resident(&mut self, gid: Gid) {
        match self.kind {
            ReclaimKind::Linux22 => {}
            ReclaimKind::Clock => {
                let slot = match self.free_slots.pop() {
                    Some(s) => s,
                    None => {
                        self.ring.push(NO_GID);
                        (self.ring.len() - 1) as u32
                    }
                };
                self.ring[slot as usize] = gid;
                self.slot_of[gid as usize] = slot;
            }
            ReclaimKind::Lru => self.lru.push_front(gid),
            ReclaimKind::Bsd => {
                self.lru.push_front(gid);
                self.queue[gid as usize] = ACTIVE;
            }
            ReclaimKind::Policy => self.policy_insert(gid),
            ReclaimKind::Freebsd8 => {}
        }
    }

    /// A page stopped being resident (evicted or freed).
    pub fn on_gone(&mut self, gid: Gid) {
        if let Some(d) = self.dead.as_mut() {
            d.on_gone(gid);
        }
        match self.kind {
            ReclaimKind::Linux22 => {}
            ReclaimKind::Clock => {
                let slot = self.slot_of[gid as usize];
                self.ring[slot as usize] = NO_GID;
                self.slot_of[gid as usize] = NO_SLOT;
                self.free_slots.push(slot);
            }
            ReclaimKind::Lru => self.lru.unlink(gid),
            ReclaimKind::Bsd => {
                match self.queue[gid as usize] {
                    ACTIVE => self.lru.unlink(gid),
                    INACTIVE => self.inactive.unlink(gid),
                    _ => {}
                }
                self.queue[gid as usize] = NOT_QUEUED;
            }
            ReclaimKind::Policy => {
                if std::mem::replace(&mut self.in_policy[gid as usize], OUT) != OUT {
                    self.policy.as_mut().expect("a policy").on_remove(gid);
                    self.policy_len -= 1;
                }
            }
            ReclaimKind::Freebsd8 => {}
        }
    }

    /// A resident page was referenced (exact LRU and the policies keep an order per
    /// reference; the others read referenced bits).
    #[inline(always)]
    pub fn on_hit(&mut self, gid: Gid) {
        if self.kind == ReclaimKind::Lru {
            self.lru.move_to_front(gid);
        } else if self.kind == ReclaimKind::Policy {
            self.policy_hit(gid);
        }
    }

    fn policy_hit(&mut self, gid: Gid) {
        self.ticks += 1;
        let p = self.policy.as_mut().expect("a policy");
        match self.in_policy[gid as usize] {
            IN => p.on_hit(gid, self.ticks),
            IN_FAULTED => self.in_policy[gid as usize] = IN,
            _ => {
                // handed out as a victim but refused by the machine (a write in flight): back in
                p.on_insert(gid, self.ticks);
                self.in_policy[gid as usize] = IN;
                self.policy_len += 1;
            }
        }
    }

    /// Chooses a resident page to evict, skipping `skip`'s pages unless nothing else can
    /// be taken. None when no page at all can be evicted.
    pub fn victim(&mut self, pages: &mut PageTable, procs: &mut [Process], skip: Option<u16>) -> Option<Victim> {
        if let Some(gid) = self.dead.as_mut().and_then(|d| d.victim(pages, skip)) {
            return Some(Victim { gid, from_skipped: false });
        }
        match self.kind {
            ReclaimKind::Linux22 => linux22_victim(pages, procs, skip),
            ReclaimKind::Clock => self.clock_victim(pages, skip),
            ReclaimKind::Lru => self.lru_victim(pages, skip),
            ReclaimKind::Bsd => self.bsd_victim(pages, skip),
            ReclaimKind::Policy => self.policy_victim(pages, skip),
            // the page daemon of freebsd.rs chooses its own pages
            ReclaimKind::Freebsd8 => None,
        }
    }

    /// The policy's victim. A page it names that cannot leave now (its read in flight)
    /// or belongs to the skipped process goes back in as if just inserted, and the
    /// policy is asked again, at most once per page it holds.
    fn policy_victim(&mut self, pages: &PageTable, skip: Option<u16>) -> Option<Victim> {
        let mut skipped_candidate = None;
        for _ in 0..self.policy_len {
            self.ticks += 1;
            let p = self.policy.as_mut().expect("a policy");
            let gid = p.select_victim(self.ticks);
            let f = pages.flags[gid as usize];
            let skipped = Some(pages.owner[gid as usize]) == skip;
            if f & PAGING_IN == 0 && !skipped {
                self.in_policy[gid as usize] = OUT;
                self.policy_len -= 1;
                return Some(Victim { gid, from_skipped: false });
            }
            if skipped {
                skipped_candidate.get_or_insert(gid);
            }
            p.on_insert(gid, self.ticks);
        }
        let gid = skipped_candidate?;
        self.policy.as_mut().expect("a policy").on_remove(gid);
        self.in_policy[gid as usize] = OUT;
        self.policy_len -= 1;
        Some(Victim { gid, from_skipped: true })
    }

    /// Moves pages from the active list's tail to the inactive list until the inactive
    /// list holds a third of the resident pages; referenced ones get another round in the
    /// active list (their bit cleared), as the FreeBSD page daemon's active scan does.
    fn bsd_refill(&mut self, pages: &mut PageTable) {
        let resident = self.lru.len() + self.inactive.len();
        let target = (resident / 3).max(1);
        let mut budget = self.lru.len();
        while self.inactive.len() < target && budget > 0 {
            budget -= 1;
            let Some(gid) = self.lru.pop_back() else { break };
            let f = &mut pages.flags[gid as usize];
            if *f & REFERENCED != 0 {
                *f &= !REFERENCED;
                self.lru.push_front(gid);
            } else {
                self.inactive.push_front(gid);
                self.queue[gid as usize] = INACTIVE;
            }
        }
    }

    /// The page daemon's inactive scan from the least recently used end: a referenced
    /// page goes back to the active list; the first unreferenced one is the victim.
    fn bsd_victim(&mut self, pages: &mut PageTable, skip: Option<u16>) -> Option<Victim> {
        let mut skipped_candidate = None;
        for _ in 0..2 {
            self.bsd_refill(pages);
            let mut budget = self.inactive.len();
            while budget > 0 {
                budget -= 1;
                let gid = self.inactive.tail()?;
                let f = pages.flags[gid as usize];
                if f & REFERENCED != 0 {
                    pages.flags[gid as usize] = f & !REFERENCED;
                    self.inactive.unlink(gid);
                    self.lru.push_front(gid);
                    self.queue[gid as usize] = ACTIVE;
                    continue;
                }
                if Some(pages.owner[gid as usize]) == skip {
                    skipped_candidate.get_or_insert(gid);
                    self.inactive.unlink(gid);
                    self.inactive.push_front(gid);
                    continue;
                }
                return Some(Victim { gid, from_skipped: false });
            }
        }
        skipped_candidate.map(|gid| Victim { gid, from_skipped: true })
    }

    fn clock_victim(&mut self, pages: &mut PageTable, skip: Option<u16>) -> Option<Victim> {
        let n = self.ring.len();
        if n == 0 {
            return None;
        }
        let mut skipped_candidate = None;
        // two sweeps clear every bit once and then find any unskipped page
        for _ in 0..2 * n + 1 {
            let slot = self.hand;
            self.hand = (self.hand + 1) % n;
            let gid = self.ring[slot];
            if gid == NO_GID {
                continue;
            }
            if Some(pages.owner[gid as usize]) == skip {
                skipped_candidate.get_or_insert(gid);
                continue;
            }
            let f = &mut pages.flags[gid as usize];
            if *f & REFERENCED != 0 {
                *f &= !REFERENCED;
            } else {
                return Some(Victim { gid, from_skipped: false });
            }
        }
        skipped_candidate.map(|gid| Victim { gid, from_skipped: true })
    }

    fn lru_victim(&mut self, pages: &PageTable, skip: Option<u16>) -> Option<Victim> {
        let tail = self.lru.tail()?;
        let mut at = Some(tail);
        while let Some(gid) = at {
            if Some(pages.owner[gid as usize]) != skip {
                return Some(Victim { gid, from_skipped: false });
            }
            at = self.lru.prev_of(gid);
        }
        Some(Victim { gid: tail, from_skipped: true })
    }
}

/// Linux 2.2 `swap_out` (mm/vmscan.c): take the process with the largest resident set
/// and walk its page table from where the last walk stopped; a referenced page loses
/// its bit and is passed over, an unreferenced one is the victim (token-ordered-lru.txt
/// section 5.1). The next candidate is tried when a process has nothing to give.
fn linux22_victim(pages: &mut PageTable, procs: &mut [Process], skip: Option<u16>) -> Option<Victim> {
    let mut order: Vec<u16> = procs.iter().filter(|p| p.rss > 0 && Some(p.index) != skip).map(|p| p.index).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(procs[i as usize].rss), i));
    for i in order {
        if let Some(gid) = walk(pages, &mut procs[i as usize]) {
            return Some(Victim { gid, from_skipped: false });
        }
    }
    let s = skip?;
    walk(pages, &mut procs[s as usize]).map(|gid| Victim { gid, from_skipped: true })
}

/// One walk over a process's pages (at most two rounds: the first may only clear bits).
pub(super) fn walk(pages: &mut PageTable, proc: &mut Process) -> Option<Gid> {
    let n = proc.gid_of.len();
    if n == 0 || proc.rss == 0 {
        return None;
    }
    for _ in 0..2 * n {
        let i = proc.walk_cursor;
        proc.walk_cursor = if i + 1 == n { 0 } else { i + 1 };
        let gid = proc.gid_of[i];
        if gid == NO_GID {
            continue;
        }
        let f = &mut pages.flags[gid as usize];
        if *f & RESIDENT == 0 || *f & (PAGING_IN | WRITING) != 0 {
            continue;
        }
        if *f & REFERENCED != 0 {
            *f &= !REFERENCED;
        } else {
            return Some(gid);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceSpec;

    /// Two processes with `n` resident pages each, none referenced.
    fn setup(n: u32) -> (PageTable, Vec<Process>) {
        let mut pages = PageTable::default();
        let mut procs = Vec::new();
        for i in 0..2u16 {
            let spec = SourceSpec::Workload { name: "scan".into(), params: vec![], page_size: 4096, seed: 0 };
            let mut p = Process::new(format!("p{i}"), i, spec, 1.0, 1.0, false, false, 0);
            for local in 0..n {
                let gid = pages.add(i, local, local as u64);
                pages.flags[gid as usize] = RESIDENT;
                p.gid_of.push(gid);
                p.rss += 1;
            }
            procs.push(p);
        }
        (pages, procs)
    }

    fn evict(pages: &mut PageTable, procs: &mut [Process], v: Victim) {
        pages.flags[v.gid as usize] = 0;
        procs[pages.owner[v.gid as usize] as usize].rss -= 1;
    }

    #[test]
    fn linux22_takes_from_the_largest_and_gives_second_chances() {
        let (mut pages, mut procs) = setup(4);
        // p1 larger: its pages go first
        let gid = pages.add(1, 4, 4);
        pages.flags[gid as usize] = RESIDENT;
        procs[1].gid_of.push(gid);
        procs[1].rss += 1;
        let mut r = Reclaimer::new(ReclaimKind::Linux22);
        // p1's first page is referenced: it survives, the walk takes the next one
        pages.flags[procs[1].gid_of[0] as usize] |= REFERENCED;
        let v = r.victim(&mut pages, &mut procs, None).unwrap();
        assert_eq!((pages.owner[v.gid as usize], pages.local[v.gid as usize]), (1, 1));
        assert_eq!(pages.flags[procs[1].gid_of[0] as usize] & REFERENCED, 0, "bit cleared on the way");
    }

    /// The token's skip and the exception handler, for every reclaim policy.
    #[test]
    fn skip_the_holder_until_nothing_else_is_left() {
        for kind in [ReclaimKind::Linux22, ReclaimKind::Clock, ReclaimKind::Lru] {
            let (mut pages, mut procs) = setup(3);
            let mut r = Reclaimer::new(kind);
            r.reserve(pages.len());
            for gid in 0..pages.len() as Gid {
                r.on_resident(gid);
            }
            // p0 is larger, but protected: p1's pages go, all of them
            let gid = pages.add(0, 3, 3);
            pages.flags[gid as usize] = RESIDENT;
            procs[0].gid_of.push(gid);
            procs[0].rss += 1;
            r.reserve(pages.len());
            r.on_resident(gid);
            for _ in 0..3 {
                let v = r.victim(&mut pages, &mut procs, Some(0)).unwrap();
                assert_eq!(pages.owner[v.gid as usize], 1, "{kind:?}");
                assert!(!v.from_skipped);
                r.on_gone(v.gid);
                evict(&mut pages, &mut procs, v);
            }
            // nothing left elsewhere: the exception handler takes from the holder
            let v = r.victim(&mut pages, &mut procs, Some(0)).unwrap();
            assert_eq!(pages.owner[v.gid as usize], 0, "{kind:?}");
            assert!(v.from_skipped, "{kind:?}");
        }
    }
}
