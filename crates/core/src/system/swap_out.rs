//! Linux 2.2.14 `swap_out` (mm/vmscan.c, with `swap_out_process`, `swap_out_vma`,
//! `swap_out_pmd` and `try_to_swap_out`): which process gives pages, and which of its
//! pages.
//!
//! Each process has a `swap_cnt`, a snapshot of its resident set, and a `swap_address`,
//! where its last walk stopped. `swap_out` takes the process with the largest `swap_cnt`
//! (the first in the task list among equals); only when no process with resident pages has
//! a non-zero count are all counts reloaded from the resident sets. The chosen process's
//! page table is walked in virtual-address order from its `swap_address` until a page is
//! written to swap; a walk that reaches the end of the address space without one sets the
//! process's `swap_cnt` and `swap_address` to 0, so that the next process gets its turn.
//! 2.2.14 does not decrement `swap_cnt` per page (the per-page decrement is 2.3/2.4's).
//!
//! `try_to_swap_out` on one page: a page not present or locked (I/O in flight) is passed
//! over; a young page has its accessed bit moved to the page's `PG_referenced` and is
//! passed over; a page already in the swap cache is unmapped without I/O; a clean page
//! not in the swap cache is dropped; a dirty page gets a swap slot, enters the swap cache
//! and is written, asynchronously unless more than SWAP_CLUSTER_MAX asynchronous swap
//! I/Os are in flight (mm/page_io.c `rw_swap_page`), and only that ends the walk.
//!
//! `swap_out(priority)` tries `nr_tasks / (priority + 1)` processes (at least one, at most
//! all) plus one more before giving up. Our `nr_tasks` counts the simulated processes
//! that have started and not ended (the paper's machine also ran daemons with tiny
//! resident sets, which `swap_out` reaches only after every larger count is 0).

use std::collections::BTreeMap;

use super::config::SwapOutRule;
use super::disk::IoKind;
use super::events::Event;
use super::machine::Machine;
use super::memory::*;
use super::process::RunState;
use super::reclaim::Victim;

/// Per-process state of `swap_out`.
#[derive(Debug, Default)]
pub struct SwapOutState {
    pub rule: SwapOutRule,
    /// `swap_cnt`: a snapshot of the process's resident set, reloaded when all run out.
    swap_cnt: Vec<u64>,
    /// `swap_address`: the virtual page where the process's next walk starts.
    swap_address: Vec<u64>,
    /// The process's touched pages by virtual page: its page table in address order.
    by_address: Vec<BTreeMap<u64, Gid>>,
}

impl SwapOutState {
    pub fn new(rule: SwapOutRule, processes: usize) -> Self {
        SwapOutState { rule, swap_cnt: vec![0; processes], swap_address: vec![0; processes], by_address: (0..processes).map(|_| BTreeMap::new()).collect() }
    }

    /// A page of process `p` was touched for the first time.
    pub fn insert(&mut self, p: u16, vpage: u64, gid: Gid) {
        self.by_address[p as usize].insert(vpage, gid);
    }

    /// Process `p` ended: its page table is gone.
    pub fn forget(&mut self, p: u16) {
        let i = p as usize;
        self.by_address[i] = BTreeMap::new();
        self.swap_cnt[i] = 0;
        self.swap_address[i] = 0;
    }

    /// The next page of `p`'s walk, moving `swap_address` past it (`swap_out_pmd` sets
    /// it before looking at the page); None at the end of the address space.
    fn next_page(&mut self, p: u16) -> Option<Gid> {
        let i = p as usize;
        let (&vpage, &gid) = self.by_address[i].range(self.swap_address[i]..).next()?;
        self.swap_address[i] = vpage + 1;
        Some(gid)
    }

    /// The walk of `p` reached the end of its address space without writing a page.
    fn exhausted(&mut self, p: u16) {
        self.swap_cnt[p as usize] = 0;
        self.swap_address[p as usize] = 0;
    }

    /// The process `swap_out` takes pages from, among those with resident pages except
    /// `skip`: the largest `swap_cnt` (counts reloaded from the resident sets when none is
    /// left), or with `largest_rss` the largest resident set.
    fn select(&mut self, rss: &[u64], skip: Option<u16>) -> Option<u16> {
        let candidates = || (0..rss.len()).filter(|&i| rss[i] > 0 && Some(i as u16) != skip);
        if self.rule == SwapOutRule::LargestRss {
            return candidates().fold(None, |best: Option<usize>, i| match best {
                Some(b) if rss[b] >= rss[i] => Some(b),
                _ => Some(i),
            }).map(|i| i as u16);
        }
        for assign in [false, true] {
            let mut best = None;
            let mut max_cnt = 0;
            for i in candidates() {
                if assign {
                    self.swap_cnt[i] = rss[i];
                }
                if self.swap_cnt[i] > max_cnt {
                    max_cnt = self.swap_cnt[i];
                    best = Some(i as u16);
                }
            }
            if best.is_some() {
                return best;
            }
        }
        None
    }
}

/// What one `try_to_swap_out` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageStep {
    /// Passed over (not present, locked, young, or protected).
    Kept,
    /// Taken out of the process's memory without a write that ends the walk (unmapped
    /// into the swap cache, or a clean page dropped).
    Taken,
    /// Written to swap: the walk ends.
    Wrote(SwapOutResult),
}

/// What `swap_out` achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapOutResult {
    /// Nothing written (pages may have been unmapped or dropped on the way).
    Nothing,
    /// A page was written asynchronously.
    Wrote,
    /// A page was written synchronously: the caller waits for this page's write.
    WroteSync(Gid),
}

impl Machine {
    fn swap_out_state(&mut self) -> &mut SwapOutState {
        &mut self.linux22.as_mut().expect("reclaim = linux22").swap_out
    }

    /// Linux 2.2.14 `swap_out(priority)` for a reclaim by `reclaiming` (None: kswapd).
    pub(super) fn swap_out(&mut self, priority: u32, reclaiming: Option<u16>) -> SwapOutResult {
        let (skip, pretend) = self.token_protection(reclaiming);
        // the paper's token takes the holder out of the choice; Linux 2.6.20's leaves it
        // in and pretends its pages were referenced
        let excluded = if pretend { None } else { skip };
        let tasks = self.procs.iter().filter(|p| !matches!(p.state, RunState::NotStarted | RunState::Done)).count() as u32;
        let counter = (tasks / (priority + 1)).clamp(1, tasks.max(1));
        for _ in 0..=counter {
            let rss: Vec<u64> = self.procs.iter().map(|p| p.rss).collect();
            let Some(best) = self.swap_out_state().select(&rss, excluded) else { break };
            let protected = pretend && skip == Some(best);
            let r = self.swap_out_process(best, protected, false);
            if r != SwapOutResult::Nothing {
                return r;
            }
        }
        // the paper's exception handler (section 5.2): nothing from the others, so the
        // holder gives its own pages
        if let (Some(h), false) = (skip, pretend) {
            if self.procs[h as usize].rss > 0 {
                return self.swap_out_process(h, false, true);
            }
        }
        SwapOutResult::Nothing
    }

    /// `swap_out_process`: walks `p` from its `swap_address` until a page is written or
    /// the address space ends. `protected`: Linux 2.6.20's token pretends every page is
    /// referenced. `self_take`: the paper's exception handler, every page taken counts
    /// against the holder (section 5.3).
    fn swap_out_process(&mut self, p: u16, protected: bool, self_take: bool) -> SwapOutResult {
        while let Some(gid) = self.swap_out_state().next_page(p) {
            let step = self.try_to_swap_out(gid, protected);
            if self_take && step != PageStep::Kept {
                let released = self.token.on_self_take(self.now);
                self.account_release(released);
            }
            if let PageStep::Wrote(r) = step {
                return r;
            }
        }
        self.swap_out_state().exhausted(p);
        SwapOutResult::Nothing
    }

    /// `try_to_swap_out` on one page.
    fn try_to_swap_out(&mut self, gid: Gid, protected: bool) -> PageStep {
        let f = self.pages.flags[gid as usize];
        if f & RESIDENT == 0 || f & (PAGING_IN | WRITING) != 0 {
            return PageStep::Kept;
        }
        if f & REFERENCED != 0 || protected {
            self.pages.flags[gid as usize] = f & !REFERENCED;
            if f & REFERENCED != 0 {
                self.set_page_referenced(gid);
            }
            return PageStep::Kept;
        }
        if !self.swap_cache_on() {
            // no swap cache: the engine's eviction, a dirty page written and its frame held
            // until the write completes, a clean one freed at once
            if f & DIRTY == 0 {
                self.evict(gid);
                return PageStep::Taken;
            }
            let sync = self.async_write_would_wait();
            self.evict(gid);
            self.count_async_write(gid, sync);
            self.count22(|c| c.swap_out_writes += 1);
            return PageStep::Wrote(if sync { SwapOutResult::WroteSync(gid) } else { SwapOutResult::Wrote });
        }
        let owner = self.pages.owner[gid as usize];
        if f & DIRTY == 0 {
            self.procs[owner as usize].rss -= 1;
            if f & SWAP_VALID != 0 {
                // in the swap cache already: unmap, no I/O
                self.pages.flags[gid as usize] = f & !(RESIDENT | REFERENCED);
                self.cache_unmapped(gid);
                self.count22(|c| c.swap_out_unmapped += 1);
            } else {
                // clean and not in the swap cache: dropped (a first touch zero-fills it again)
                self.pages.flags[gid as usize] = f & !(RESIDENT | REFERENCED | PREFETCHED);
                self.release_frame22(gid);
            }
            return PageStep::Taken;
        }
        // dirty: a swap slot, the swap cache, a write
        let slot = match self.pages.slot[gid as usize] {
            NO_SLOT => {
                let s = self.swap.allocate_one().expect("swap sized to hold every page");
                self.set_slot(gid, s);
                s
            }
            s => s as u64,
        };
        let sync = self.async_write_would_wait();
        let proc = &mut self.procs[owner as usize];
        proc.rss -= 1;
        proc.counters.page_outs += 1;
        self.pages.flags[gid as usize] = (f & !(RESIDENT | REFERENCED | DIRTY | SWAP_VALID | PREFETCHED)) | WRITING;
        self.pool.writing += 1;
        self.count_async_write(gid, sync);
        self.io(IoKind::Write, slot, 1, vec![Event::WriteDone(gid)]);
        self.count22(|c| c.swap_out_writes += 1);
        PageStep::Wrote(if sync { SwapOutResult::WroteSync(gid) } else { SwapOutResult::Wrote })
    }

    /// With `free_pages = "batch"`, `swap_out = "swap_cnt"` picks the batch's victims:
    /// the process with the largest `swap_cnt`, walked from its `swap_address`, whose
    /// first present, unlocked page that is not young is the victim (young ones lose their
    /// accessed bit). The paper's skipped holder gives a page only when no other can.
    pub(super) fn swap_cnt_victim(&mut self, skip: Option<u16>) -> Option<Victim> {
        // every walk either finds a page or zeroes a count; two reloads of the counts
        // clear every accessed bit on the way and then find any old page
        for _ in 0..3 * self.procs.len() + 2 {
            let rss: Vec<u64> = self.procs.iter().map(|p| p.rss).collect();
            let best = self.swap_out_state().select(&rss, skip)?;
            if let Some(gid) = self.victim_walk(best) {
                return Some(Victim { gid, from_skipped: false });
            }
        }
        let s = skip?;
        if self.procs[s as usize].rss == 0 {
            return None;
        }
        (0..2).find_map(|_| self.victim_walk(s)).map(|gid| Victim { gid, from_skipped: true })
    }

    /// One walk of `p` for [`Machine::swap_cnt_victim`].
    fn victim_walk(&mut self, p: u16) -> Option<Gid> {
        while let Some(gid) = self.swap_out_state().next_page(p) {
            let f = self.pages.flags[gid as usize];
            if f & RESIDENT == 0 || f & (PAGING_IN | WRITING) != 0 {
                continue;
            }
            if f & REFERENCED != 0 {
                self.pages.flags[gid as usize] = f & !REFERENCED;
                continue;
            }
            return Some(gid);
        }
        self.swap_out_state().exhausted(p);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_cnt_picks_the_largest_snapshot_until_its_walk_runs_out() {
        let mut s = SwapOutState::new(SwapOutRule::SwapCnt, 3);
        // all counts 0: reloaded from the resident sets, the largest goes first
        assert_eq!(s.select(&[10, 30, 20], None), Some(1));
        // the snapshot stays while the process gives pages, even once it is smaller
        assert_eq!(s.select(&[10, 5, 20], None), Some(1));
        // its walk ran out: the next largest snapshot
        s.exhausted(1);
        assert_eq!(s.select(&[10, 5, 20], None), Some(2));
        s.exhausted(2);
        assert_eq!(s.select(&[10, 5, 20], None), Some(0));
        // every count spent: reloaded
        s.exhausted(0);
        assert_eq!(s.select(&[10, 5, 20], None), Some(2));
        // a process without resident pages or the skipped one is never chosen
        assert_eq!(s.select(&[0, 5, 20], Some(2)), Some(1));
        assert_eq!(s.select(&[0, 0, 0], None), None);
        // equal counts: the first in the task list
        let mut e = SwapOutState::new(SwapOutRule::SwapCnt, 2);
        assert_eq!(e.select(&[7, 7], None), Some(0));
        let mut l = SwapOutState::new(SwapOutRule::LargestRss, 3);
        assert_eq!(l.select(&[10, 30, 20], None), Some(1));
        assert_eq!(l.select(&[10, 5, 20], None), Some(2));
        assert_eq!(l.select(&[7, 7, 0], None), Some(0));
    }

    #[test]
    fn the_walk_goes_in_address_order_from_swap_address() {
        let mut s = SwapOutState::new(SwapOutRule::SwapCnt, 1);
        for (v, g) in [(40, 0), (10, 1), (30, 2), (20, 3)] {
            s.insert(0, v, g);
        }
        assert_eq!(s.next_page(0), Some(1)); // vpage 10
        assert_eq!(s.next_page(0), Some(3)); // 20
        // a page touched later, behind the walk, waits for the next round
        s.insert(0, 15, 4);
        assert_eq!(s.next_page(0), Some(2)); // 30
        assert_eq!(s.next_page(0), Some(0)); // 40
        assert_eq!(s.next_page(0), None);
        s.exhausted(0);
        assert_eq!(s.next_page(0), Some(1));
        assert_eq!(s.next_page(0), Some(4));
    }
}
