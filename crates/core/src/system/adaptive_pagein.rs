//! Adaptive page-in (gang-adaptive-paging.txt section 3.3, figure 4): the pages of a
//! process that leave memory while it is switched out are recorded as (first page, run
//! length) records of its virtual pages; when it is switched in again they are read back
//! in block reads before it needs them, instead of one demand fault (and a 16-page
//! read-ahead) at a time.
//!
//! Two ways to read them (`gang.ai_reads`):
//! - `fault` (the paper's, figure 4: "fault for page with base = pg_rec.addr++"): one
//!   artificial fault per recorded page, in the recorded order, each a one-page read
//!   issued when the previous one has arrived (a loop of faults waits for each). Only
//!   the recorded pages are read (section 4.3: "reading in only the required pages"),
//!   with no read-ahead around them;
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

    /// Issues block reads for queued pages while frames can be had.
    pub(super) fn pump_page_in(&mut self) {
        let (block, one_at_a_time) = match &self.gang {
            // an artificial fault waits for its page before the next one is raised
            Some(g) if g.cfg.ai_reads == AiReads::Fault && g.ai_in_flight > 0 => return,
            Some(g) if !g.page_in_queue.is_empty() => match g.cfg.ai_reads {
                AiReads::Fault => (1, true),
                AiReads::Block => (g.cfg.ai_block_pages as usize, false),
            },
            _ => return,
        };
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
            let first = self.pages.slot[run[0] as usize] as u64;
            for &gid in &run {
                self.pages.flags[gid as usize] |= PAGING_IN;
                // page-ins of the process, though not by its own faults
                let owner = self.pages.owner[gid as usize];
                self.procs[owner as usize].counters.page_ins += 1;
            }
            let arrivals = run.iter().map(|&gid| Event::AdaptiveIn(gid)).collect();
            self.io(IoKind::Read, first, run.len() as u32, arrivals);
            let g = self.gang.as_mut().unwrap();
            g.stats.ai_pages += run.len() as u64;
            g.stats.ai_reads += 1;
            if one_at_a_time {
                g.ai_in_flight += 1;
                return;
            }
        }
    }
}

impl Machine {
    /// A page adaptive page-in read has arrived: with `ai_reads = "fault"` the next
    /// artificial fault follows.
    pub(super) fn adaptive_read_done(&mut self) {
        let Some(g) = &mut self.gang else { return };
        if g.cfg.ai_reads != AiReads::Fault {
            return;
        }
        g.ai_in_flight = g.ai_in_flight.saturating_sub(1);
        self.pump_page_in();
    }
}
