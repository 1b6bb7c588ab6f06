//! Linux 2.2.14's fault on a swapped page with the swap cache on: `do_swap_page`
//! (mm/memory.c) and `swap_in` with `swapin_readahead` (mm/page_alloc.c),
//! `lookup_swap_cache` and `read_swap_cache_async` (mm/swap_state.c), and the zero-fill
//! first touch (`do_anonymous_page`).
//!
//! - A page found in the swap cache is mapped without a disk read: a minor fault. If its
//!   write is still in flight the fault waits for it first (`lookup_swap_cache` waits on
//!   the locked page).
//! - Otherwise `swapin_readahead` reads the aligned block of 2^`page_cluster` swap slots
//!   holding the page into the swap cache, not mapped, from the block's first slot on:
//!   it stops at the end of the swap area, at a free slot, at a slot with I/O in flight,
//!   or once `nr_async_pages` reaches SWAP_CLUSTER_MAX; a slot whose page is in memory
//!   already costs no I/O (its lookup marks it referenced); a page for which no frame can
//!   be had is skipped. Then the faulting page is read if the block did not cover it, and
//!   mapped when its read completes. 2.2 issues one request per page; the block device's
//!   plugged queue joins consecutive ones (drivers/block/ll_rw_blk.c `make_request`), so
//!   each run of consecutive slots read here is one disk request. A page read ahead and
//!   touched before it is freed faults minor.
//! - `page_cluster` is set at boot from the memory size (mm/swap.c `swap_setup`, see
//!   [`super::config::SystemConfig::page_cluster`]).
//!
//! Not modelled: slots a fragmented swap area holds for no simulated page end the block
//! as a free slot would (2.2 would read them for their owners).

use super::disk::IoKind;
use super::events::Event;
use super::machine::{FaultOutcome, Machine};
use super::memory::*;
use super::process::RunState;
use super::swap_cache::{ASYNC_IO, PG_REFERENCED, UNMAPPED};

impl Machine {
    /// The fault of process `p` on page `gid` with the swap cache on. None: not handled
    /// here (never, with the swap cache on).
    pub(super) fn fault22(&mut self, p: u16, gid: Gid) -> FaultOutcome {
        let f = self.pages.flags[gid as usize];
        if f & (PAGING_IN | WRITING) != 0 {
            // its read (read-ahead) or its write is in flight: wait for it
            if f & WRITING != 0 {
                self.swap_cache_token_request(p);
            }
            self.count22(|c| c.io_wait_faults += 1);
            let proc = &mut self.procs[p as usize];
            proc.waiting_on = gid;
            proc.state = RunState::BlockedIo;
            proc.swapping = true;
            return FaultOutcome::Blocked;
        }
        if self.cache().has(gid, UNMAPPED) {
            // found in the swap cache: mapped again without I/O
            self.swap_cache_token_request(p);
            let c = self.cache();
            c.clear(gid, UNMAPPED);
            c.unmapped -= 1;
            c.set(gid, PG_REFERENCED);
            if f & PREFETCHED != 0 {
                self.prefetch_hits += 1;
            }
            self.pages.flags[gid as usize] = (f & !PREFETCHED) | RESIDENT;
            let proc = &mut self.procs[p as usize];
            proc.rss += 1;
            proc.counters.minor_faults += 1;
            self.count22(|c| c.swap_cache_faults += 1);
            self.now += self.minor_ns;
            return FaultOutcome::Continue;
        }
        if !self.get_free_page(p) {
            return FaultOutcome::Blocked;
        }
        self.take_frame22(gid);
        if f & SWAP_VALID != 0 {
            self.swap_in22(p, gid);
            return FaultOutcome::Blocked;
        }
        // first touch, or a clean page dropped before it ever went to swap: zero-filled
        if f & TOUCHED == 0 {
            self.procs[p as usize].mad += 1;
        }
        self.pages.flags[gid as usize] = f | TOUCHED | RESIDENT;
        let proc = &mut self.procs[p as usize];
        proc.rss += 1;
        proc.counters.minor_faults += 1;
        self.now += self.minor_ns;
        FaultOutcome::Continue
    }

    /// The paper's token is asked for before `do_swap_page`, which also serves the
    /// faults the swap cache resolves.
    fn swap_cache_token_request(&mut self, p: u16) {
        let short = self.pool.free <= self.pool.watermarks.high + self.shortage_margin;
        let procs = &self.procs;
        let (grabbed, previous) = self.token.on_swap_cache_fault(p, self.now, short, |q| procs[q as usize].priority);
        if grabbed {
            self.procs[p as usize].counters.token_grabs += 1;
        }
        self.account_release(previous);
    }

    /// A major fault of `p` on `gid` (on swap, its frame taken): the token, the read-ahead
    /// and the reads. `p` waits for its page.
    fn swap_in22(&mut self, p: u16, gid: Gid) {
        self.token_on_major_fault(p);
        self.count_major_fault(p);
        self.procs[p as usize].state = RunState::BlockedIo;
        self.now += self.major_cpu_ns;
        let slot = self.pages.slot[gid as usize] as u64;
        self.pages.flags[gid as usize] |= PAGING_IN;
        // read_swap_cache finds the page in the swap cache: PG_referenced
        self.cache().set(gid, PG_REFERENCED);
        let mut reads = match self.linux22.as_ref().and_then(|l| l.readahead) {
            Some(cluster) => self.swapin_readahead(p, gid, slot, cluster),
            None => Vec::new(),
        };
        if !reads.contains(&slot) {
            reads.push(slot);
        }
        reads.sort_unstable();
        let mut i = 0;
        while i < reads.len() {
            let mut j = i + 1;
            while j < reads.len() && reads[j] == reads[j - 1] + 1 {
                j += 1;
            }
            let arrivals = reads[i..j]
                .iter()
                .map(|&s| {
                    let g = self.slot_owner[s as usize];
                    if g == gid {
                        Event::PageIn(p, gid)
                    } else {
                        Event::Prefetched(g)
                    }
                })
                .collect();
            self.io(IoKind::Read, reads[i], (j - i) as u32, arrivals);
            i = j;
        }
    }

    /// `swapin_readahead`: the slots of `slot`'s aligned block of 2^`cluster` read into
    /// the swap cache (the faulting page's included when the block reaches it).
    fn swapin_readahead(&mut self, p: u16, gid: Gid, slot: u64, cluster: u32) -> Vec<u64> {
        let mut reads = Vec::new();
        let mut offset = slot >> cluster << cluster;
        for _ in 0..1u64 << cluster {
            if offset >= self.swap.slots() {
                break;
            }
            if self.free_state_async_io() >= self.reclaim_batch as u64 {
                break;
            }
            let g = self.slot_owner[offset as usize];
            if !self.swap.is_used(offset) || g == NO_GID {
                break;
            }
            if g == gid {
                // the faulting page, read asynchronously like the others
                reads.push(offset);
                self.mark_async_read(g);
                offset += 1;
                continue;
            }
            let fg = self.pages.flags[g as usize];
            if fg & (PAGING_IN | WRITING) != 0 {
                break;
            }
            if self.cache().holds_frame(g) {
                // in the swap cache already: found, no I/O
                self.cache().set(g, PG_REFERENCED);
            } else if self.get_free_page_for_readahead(p) {
                // read_swap_cache_async: a new page in the swap cache, locked for its read
                self.take_frame22(g);
                self.pages.flags[g as usize] = fg | PAGING_IN;
                self.mark_async_read(g);
                self.count22(|c| c.readahead_pages += 1);
                reads.push(offset);
            }
            offset += 1;
        }
        reads
    }

    fn free_state_async_io(&self) -> u64 {
        self.linux22.as_ref().and_then(|l| l.free.as_ref()).map_or(0, |f| f.async_io)
    }

    fn mark_async_read(&mut self, g: Gid) {
        if let Some(f) = self.linux22.as_mut().and_then(|l| l.free.as_mut()) {
            f.async_io += 1;
            self.cache().set(g, ASYNC_IO);
        }
    }

    /// A page read ahead arrived: it stays in the swap cache, unmapped (its owner goes on
    /// if it faulted on it meanwhile); a page whose process ended gives its frame back.
    pub(super) fn readahead_arrived22(&mut self, gid: Gid) {
        self.async_io_done(gid);
        let f = self.pages.flags[gid as usize];
        if f & TOUCHED == 0 {
            // its process ended, or freed the page, while the page was read
            self.pages.flags[gid as usize] = 0;
            self.release_frame22(gid);
            let owner = self.pages.owner[gid as usize];
            let proc = &mut self.procs[owner as usize];
            if proc.waiting_on == gid {
                // it touched the freed page again meanwhile: it faults on it anew
                proc.waiting_on = NO_GID;
                self.make_ready(owner);
            }
            return;
        }
        self.pages.flags[gid as usize] = (f & !(PAGING_IN | REFERENCED)) | PREFETCHED;
        self.cache_unmapped(gid);
        self.prefetched += 1;
        let owner = self.pages.owner[gid as usize];
        let proc = &mut self.procs[owner as usize];
        if proc.waiting_on == gid {
            proc.waiting_on = NO_GID;
            self.make_ready(owner);
        }
    }
}
