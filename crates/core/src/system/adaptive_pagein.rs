//! Adaptive page-in (gang-adaptive-paging.txt section 3.3, figure 4): the pages of a
//! process that leave memory while it is switched out are recorded as (first page, run
//! length) records of its virtual pages; when it is switched in again they are read back
//! before it needs them, instead of at its own demand faults.
//!
//! Three ways to read them (`gang.ai_reads`):
//! - `fault` (the paper's kernel, figure 4: "fault for page with base = pg_rec.addr++"):
//!   one artificial fault per recorded page, in the recorded order, each raised when the
//!   previous one is done (a loop of faults waits for each). An artificial fault is a
//!   fault of the node's kernel: on Linux 2.2.19 `handle_mm_fault` -> `do_swap_page` ->
//!   `swap_in` (mm/page_alloc.c), which on a swap-cache miss calls `swapin_readahead`
//!   before `read_swap_cache`, so it reads around the page as a demand fault does here
//!   (`swap.read_around`, the aligned block of 2^`page_cluster` slots under `linux`).
//!   A recorded page that such a read brings in is mapped by its own fault without I/O
//!   (a swap-cache hit); one whose read is in flight is waited for;
//! - `single`: the same faults reading only the faulting page (pagelab 0.1.0+r4's
//!   `fault`, which took section 4.3's "reading in only the required pages" to mean no
//!   read-ahead);
//! - `block` (pagelab before issue 16): the recorded pages are read in swap-slot order, in
//!   runs of pages consecutive on swap of up to `gang.ai_block_pages` each (whatever their
//!   virtual order, as Linux's swap read-ahead groups by slot), all queued at once.
//!
//! Decisions left open by the paper: the reads use free frames above the high watermark and, when
//! there are none, have reclaim (selective page-out when it is on) make room with at
//! most one batch of writes in flight; while writes are in flight a read waits until
//! frames for a whole block have come free. The process
//! runs meanwhile: a fault on a page whose read is in flight waits for that read.

use super::config::{AiReads, Mechanism};
use super::disk::IoKind;
use super::events::Event;
use super::machine::Machine;
use super::memory::*;

impl Machine {
    /// Records a page leaving memory, when its process is switched out.
    pub(super) fn record_eviction(&mut self, gid: Gid) {
        let Some(g) = &mut self.gang else { return };
        let owner = self.pages.owner[gid as usize];
        if !g.has(Mechanism::Ai) || g.active == Some(owner) {
            return;
        }
        let vpage = self.pages.vpage[gid as usize];
        let records = &mut g.records[owner as usize];
        match records.last_mut() {
            Some((start, len)) if *start + *len as u64 == vpage && *len < u32::MAX => *len += 1,
            _ => records.push((vpage, 1)),
        }
    }

    /// At the switch-in of `p`: queues its recorded pages that are on swap, in slot
    /// order, and starts reading them.
    pub(super) fn adaptive_page_in(&mut self, p: u16) {
        let g = self.gang.as_mut().unwrap();
        let records = std::mem::take(&mut g.records[p as usize]);
        let proc = &self.procs[p as usize];
        let mut pages: Vec<Gid> = Vec::new();
        for (start, len) in records {
            for v in start..start + len as u64 {
                if let Some(&gid) = proc.by_vpage.get(&v) {
                    if self.pages.flags[gid as usize] & SWAP_VALID != 0 {
                        pages.push(gid);
                    }
                }
            }
        }
        if g.cfg.ai_reads == AiReads::Block {
            pages.sort_unstable_by_key(|&gid| self.pages.slot[gid as usize]);
        }
        g.page_in_queue.extend(pages);
        self.pump_page_in();
    }

    /// Issues reads for queued pages while frames can be had: block reads, or the next
    /// artificial fault.
    pub(super) fn pump_page_in(&mut self) {
        let (block, one_at_a_time) = match &self.gang {
            // an artificial fault waits for its page before the next one is raised
            Some(g) if g.cfg.ai_reads != AiReads::Block && (g.ai_in_flight > 0 || g.ai_waiting != NO_GID) => return,
            Some(g) if !g.page_in_queue.is_empty() => match g.cfg.ai_reads {
                AiReads::Fault | AiReads::Single => (1, true),
                AiReads::Block => (g.cfg.ai_block_pages as usize, false),
            },
            _ => return,
        };
        if one_at_a_time && !self.artificial_fault_needs_read() {
            return;
        }
        loop {
            // a frame for the next page: free above the high watermark, or made by reclaim
            if self.pool.free <= self.pool.watermarks.high {
                if self.pool.writing < self.reclaim_batch as u64 {
                    self.reclaim(self.reclaim_batch);
                    self.flush_buffer();
                }
                if self.pool.free <= self.pool.watermarks.high {
                    return;
                }
            }
            // wait until frames for a whole block have come free (they come back one by
            // one as the switch's writes complete): one read per block, not per page
            let queued = self.gang.as_ref().unwrap().page_in_queue.len();
            if self.pool.free - self.pool.watermarks.high < block.min(queued) as u64 && self.pool.writing > 0 {
                return;
            }
            let mut run: Vec<Gid> = Vec::new();
            let queue = &mut self.gang.as_mut().unwrap().page_in_queue;
            while let Some(&gid) = queue.front() {
                let f = self.pages.flags[gid as usize];
                if f & SWAP_VALID == 0 || f & (RESIDENT | PAGING_IN | WRITING) != 0 {
                    // back already, or nothing on swap to read: nothing to do for it
                    queue.pop_front();
                    continue;
                }
                let slot = self.pages.slot[gid as usize];
                let follows = run.last().is_none_or(|&last| self.pages.slot[last as usize] as u64 + 1 == slot as u64);
                if !follows || run.len() == block || self.pool.free <= self.pool.watermarks.high {
                    break;
                }
                queue.pop_front();
                self.pool.free -= 1;
                run.push(gid);
            }
            if run.is_empty() {
                if self.gang.as_ref().unwrap().page_in_queue.is_empty() {
                    return;
                }
                continue;
            }
            let mut first = self.pages.slot[run[0] as usize] as u64;
            let mut arrivals: Vec<Event> = Vec::with_capacity(run.len());
            for &gid in &run {
                self.pages.flags[gid as usize] |= PAGING_IN;
                // page-ins of the process, though not by its own faults
                let owner = self.pages.owner[gid as usize];
                self.procs[owner as usize].counters.page_ins += 1;
                arrivals.push(Event::AdaptiveIn(gid));
            }
            let mut pages = run.len() as u64;
            if self.gang.as_ref().unwrap().cfg.ai_reads == AiReads::Fault {
                // the kernel's fault reads around the page (swap_in -> swapin_readahead)
                let (lo, hi) = self.read_around_range(run[0], first);
                for s in lo..=hi {
                    if s != first {
                        let other = self.slot_owner[s as usize];
                        self.pages.flags[other as usize] |= PAGING_IN;
                        arrivals.push(Event::Prefetched(other));
                    }
                }
                (first, pages) = (lo, hi - lo + 1);
            }
            self.io(IoKind::Read, first, pages as u32, arrivals);
            let g = self.gang.as_mut().unwrap();
            g.stats.ai_pages += pages;
            g.stats.ai_reads += 1;
            if one_at_a_time {
                g.ai_in_flight += 1;
                return;
            }
        }
    }
}

impl Machine {
    /// The next artificial fault's page: the recorded pages that need no read are done
    /// here, as their faults would do them without I/O (one read-around or the process's
    /// own fault brought them in: mapped, referenced). True when the queue's front needs
    /// a read; false when the queue is empty or the fault waits for a read in flight.
    fn artificial_fault_needs_read(&mut self) -> bool {
        loop {
            let Some(&gid) = self.gang.as_ref().unwrap().page_in_queue.front() else { return false };
            let f = self.pages.flags[gid as usize];
            if f & PAGING_IN != 0 {
                // lookup_swap_cache waits on the locked page: wait for its arrival
                self.gang.as_mut().unwrap().ai_waiting = gid;
                return false;
            }
            if f & RESIDENT == 0 && f & SWAP_VALID != 0 && f & WRITING == 0 {
                return true;
            }
            self.gang.as_mut().unwrap().page_in_queue.pop_front();
            if f & RESIDENT != 0 {
                self.map_for_artificial_fault(gid);
            }
        }
    }

    /// An artificial fault on a page already in memory maps it for the process, young:
    /// a page of its working set, no longer read-around's unreferenced guess.
    fn map_for_artificial_fault(&mut self, gid: Gid) {
        let f = &mut self.pages.flags[gid as usize];
        if *f & PREFETCHED != 0 {
            *f &= !PREFETCHED;
            *f |= REFERENCED;
            self.reclaimer.on_hit(gid);
        }
    }

    /// A page adaptive page-in read has arrived: with artificial faults the next one
    /// follows.
    pub(super) fn adaptive_read_done(&mut self) {
        let Some(g) = &mut self.gang else { return };
        if g.cfg.ai_reads == AiReads::Block {
            return;
        }
        g.ai_in_flight = g.ai_in_flight.saturating_sub(1);
        self.pump_page_in();
    }

    /// Page `gid` arrived (read-around's guess, or the process's own fault): if an
    /// artificial fault waits for it, that fault maps it and the next one follows.
    pub(super) fn adaptive_wait_over(&mut self, gid: Gid) {
        let Some(g) = &mut self.gang else { return };
        if g.ai_waiting != gid {
            return;
        }
        g.ai_waiting = NO_GID;
        g.page_in_queue.pop_front();
        if self.pages.flags[gid as usize] & RESIDENT != 0 {
            self.map_for_artificial_fault(gid);
        }
        self.pump_page_in();
    }
}
