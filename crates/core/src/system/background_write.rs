//! Background writing (gang-adaptive-paging.txt section 3.4): during the last part of a
//! quantum (10% in the paper, `gang.bg_fraction`), dirty pages of the running job are
//! written to swap at low priority, so that the switch has fewer dirty pages to write.
//! The pages stay resident and become clean; one written again before the switch must be
//! written again then.
//!
//! Decision left open by the paper: background writing runs only when the switch will
//! have to page out, that is while the free frames are fewer than the pages of the next
//! job's working set (estimated from its previous quantum) that are not resident; with
//! memory for every job, or before the next job has run once, it writes nothing.
//!
//! Low priority: a write is issued only when the disk is idle, `gang.bg_batch_pages`
//! pages at a time (consecutive swap slots in one request), and the next only when it
//! has completed. Which dirty pages: the walk over the process's pages gives a page
//! referenced since the walk last passed a second chance (clearing its referenced bit,
//! as a page-out daemon laundering pages does), so that pages still being written are
//! left alone; this is our answer to the repeated writing section 3.4 warns of.

use super::config::ClusteringKind;
use super::disk::IoKind;
use super::events::Event;
use super::machine::Machine;
use super::memory::*;

/// How long background writing waits before looking again when the switch would not
/// have to page out or no dirty page qualified.
const IDLE_RETRY_NS: u64 = 100_000_000;

impl Machine {
    pub(super) fn background_write(&mut self, generation: u32) {
        let Some(g) = &self.gang else { return };
        let (Some(p), true) = (g.active, g.generation == generation) else { return };
        if !self.disk.is_idle(self.now) {
            let at = self.disk.busy_until();
            self.events.push(at, Event::BackgroundWrite(generation));
            return;
        }
        if !self.switch_will_page_out() {
            self.events.push(self.now + IDLE_RETRY_NS, Event::BackgroundWrite(generation));
            return;
        }
        let g = self.gang.as_ref().unwrap();
        let batch = g.cfg.bg_batch_pages as usize;
        let mut cursor = g.bg_cursor;
        let proc = &self.procs[p as usize];
        let n = proc.gid_of.len();
        let mut pages: Vec<Gid> = Vec::new();
        // at most one lap: dirty pages referenced since the last look get a second chance
        for _ in 0..n {
            if pages.len() == batch {
                break;
            }
            let gid = proc.gid_of[cursor];
            cursor = if cursor + 1 == n { 0 } else { cursor + 1 };
            if gid == NO_GID {
                continue;
            }
            let f = self.pages.flags[gid as usize];
            if f & (RESIDENT | DIRTY) != RESIDENT | DIRTY || f & (WRITING | PAGING_IN) != 0 {
                continue;
            }
            if f & REFERENCED != 0 {
                self.pages.flags[gid as usize] = f & !REFERENCED;
            } else {
                pages.push(gid);
            }
        }
        self.gang.as_mut().unwrap().bg_cursor = cursor;
        if pages.is_empty() {
            self.events.push(self.now + IDLE_RETRY_NS, Event::BackgroundWrite(generation));
            return;
        }
        let runs = self.assign_slots(&pages);
        let last = runs.len() - 1;
        for (i, run) in runs.into_iter().enumerate() {
            let mut events: Vec<Event> = Vec::with_capacity(run.1.len() + 1);
            for &gid in &run.1 {
                let f = self.pages.flags[gid as usize];
                // the page stays mapped; it is clean once the write is done
                self.pages.flags[gid as usize] = (f & !(DIRTY | SWAP_VALID)) | WRITING;
                events.push(Event::WriteDone(gid));
            }
            if i == last {
                // the next write when this batch's last one is done
                events.push(Event::BackgroundWrite(generation));
            }
            self.io(IoKind::Write, run.0, run.1.len() as u32, events);
        }
        let owner = self.pages.owner[pages[0] as usize];
        self.procs[owner as usize].counters.page_outs += pages.len() as u64;
        self.gang.as_mut().unwrap().stats.bg_pages += pages.len() as u64;
    }

    /// True when the next job's working set does not fit in the free frames.
    fn switch_will_page_out(&self) -> bool {
        let g = self.gang.as_ref().unwrap();
        let n = g.done.len();
        let Some(active) = g.active else { return false };
        let next = (1..n).map(|k| (active as usize + k) % n).find(|&q| !g.done[q]);
        let Some(ws) = next.and_then(|q| g.working_set[q]) else { return false };
        let missing = ws.saturating_sub(self.procs[next.unwrap()].rss);
        self.pool.free + self.pool.writing < missing + self.pool.watermarks.high
    }

    /// Swap slots for resident pages about to be written, grouped into runs of
    /// consecutive slots: the slot each page keeps for life without clustering, fresh
    /// runs with it (as clustered page-outs allocate).
    fn assign_slots(&mut self, pages: &[Gid]) -> Vec<(u64, Vec<Gid>)> {
        let mut runs: Vec<(u64, Vec<Gid>)> = Vec::new();
        if self.swap_cfg.clustering == ClusteringKind::None {
            for &gid in pages {
                if self.pages.slot[gid as usize] == NO_SLOT {
                    let slot = self.swap.allocate_one().expect("swap sized to hold every page");
                    self.set_slot(gid, slot);
                }
                let slot = self.pages.slot[gid as usize];
                match runs.last_mut() {
                    Some((first, run)) if *first + run.len() as u64 == slot as u64 => run.push(gid),
                    _ => runs.push((slot as u64, vec![gid])),
                }
            }
            return runs;
        }
        // clustered page-outs allocate runs afresh: the old slots go
        for &gid in pages {
            self.release_page_slot(gid);
        }
        match self.swap.allocate(pages.len() as u32) {
            Some(first) => {
                for (k, &gid) in pages.iter().enumerate() {
                    self.set_slot(gid, first + k as u64);
                }
                runs.push((first, pages.to_vec()));
            }
            None => {
                // no run that long is free: one slot each, wherever they are
                for &gid in pages {
                    let slot = self.swap.allocate_one().expect("swap sized to hold every page");
                    self.set_slot(gid, slot);
                    runs.push((slot, vec![gid]));
                }
            }
        }
        runs
    }
}
