//! Victim selection for reclaim: Linux 2.2 `swap_out`, a global CLOCK, exact global LRU.
//!
//! Every policy may be told to skip one process (the token holder, token-ordered-lru.txt
//! section 5.2); when no other process can give a page, it takes one of the skipped
//! process's pages and says so, which is the paper's "exception handler".

use super::config::ReclaimKind;
use super::memory::{Gid, PageTable, NO_GID, PAGING_IN, REFERENCED, RESIDENT, WRITING};
use super::process::Process;
use crate::policy::PageList;

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
}

const NOT_QUEUED: u8 = 0;
const ACTIVE: u8 = 1;
const INACTIVE: u8 = 2;

impl Reclaimer {
    pub fn new(kind: ReclaimKind) -> Self {
        Reclaimer {
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
            _ => {}
        }
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
        }
    }

    /// A page stopped being resident (evicted or freed).
    pub fn on_gone(&mut self, gid: Gid) {
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
        }
    }

    /// A resident page was referenced (only exact LRU keeps an order per reference).
    #[inline(always)]
    pub fn on_hit(&mut self, gid: Gid) {
        if self.kind == ReclaimKind::Lru {
            self.lru.move_to_front(gid);
        }
    }

    /// Chooses a resident page to evict, skipping `skip`'s pages unless nothing else can
    /// be taken. None when no page at all can be evicted.
    pub fn victim(&mut self, pages: &mut PageTable, procs: &mut [Process], skip: Option<u16>) -> Option<Victim> {
        match self.kind {
            ReclaimKind::Linux22 => linux22_victim(pages, procs, skip),
            ReclaimKind::Clock => self.clock_victim(pages, skip),
            ReclaimKind::Lru => self.lru_victim(pages, skip),
            ReclaimKind::Bsd => self.bsd_victim(pages, skip),
        }
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
