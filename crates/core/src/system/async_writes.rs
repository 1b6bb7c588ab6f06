//! The bound on page-out writes in flight, and what a writer that reaches it does
//! (`[swap] async_writes`, `async_write_max`).
//!
//! - **Linux 2.2** (`mm/page_io.c`, `rw_swap_page_base`; `mm/swap.c`, `pager_daemon`;
//!   `include/linux/swap.h`, `SWAP_CLUSTER_MAX`; `mm/vmscan.c`, `try_to_swap_out`).
//!   `try_to_swap_out` writes every dirty victim asynchronously (`rw_swap_page(WRITE,
//!   entry, page, 0)`), but `rw_swap_page_base` first checks "Don't allow too many
//!   pending pages in flight": when `nr_async_pages` (pages of asynchronous swap I/O
//!   not yet completed) exceeds `pager_daemon.swap_cluster` (`SWAP_CLUSTER_MAX` = 32,
//!   a sysctl, `vm.pagerdaemon`), the write is made synchronous: it is issued, not
//!   counted, and the writer (kswapd, or a process in `try_to_free_pages`) sleeps in
//!   `wait_on_page` until it completes. The bound counts pages.
//! - **FreeBSD 8.2** (`sys/vm/swap_pager.c`, `swap_pager_putpages`,
//!   `swap_pager_swap_init`, `swp_pager_async_iodone`; `sys/vm/vm_pager.c`, `getpbuf`).
//!   The page daemon's writes are asynchronous; each takes a physical buffer from
//!   `nsw_wcount_async`, which `swap_pager_swap_init` sets to 4 and the sysctl
//!   `vm.swap_async_max` (default 4, "Maximum running async swap ops") adjusts. With
//!   none left, `getpbuf` sleeps ("wswbuf0") until `swp_pager_async_iodone` releases
//!   one: the page daemon waits *before* its write. The bound counts requests (buffers
//!   of up to `nsw_cluster_max` = 16 pages).
//!
//! In the machine a writer's reclaim stops where the kernel's would sleep: a faulting
//! process in direct reclaim waits (blocked, as for a frame) and retries its fault when
//! the write it waits for completes; kswapd (or the page daemon) resumes then. Under the
//! FreeBSD rule the victim that needed the write is left where it is (on the inactive
//! queue's tail it is the first one taken when the daemon resumes); a write of pages
//! already taken (the second cluster of a run split over swap, mClustering's buffer at
//! the end of a page-out run) waits for a buffer, its writer with it, and is issued
//! when one is released. Background writing and adaptive page-in are not held back.

use std::collections::VecDeque;

use super::config::{FreePagesRule, ReclaimKind, SystemConfig};
use super::disk::IoKind;
use super::events::Event;
use super::machine::Machine;
use super::process::RunState;

/// `[swap] async_writes`: which kernel's bound on asynchronous page-out writes applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AsyncWritesKind {
    /// The kernel the configuration models: FreeBSD 8.2's with `reclaim = "bsd"` or
    /// `"freebsd8"`; none of this module's under `reclaim = "linux22"` with `free_pages =
    /// "linux22"`, whose `try_to_swap_out` applies `rw_swap_page`'s rule itself
    /// (free_pages.rs `async_write_would_wait`); Linux 2.2's otherwise.
    #[default]
    Kernel,
    /// Linux 2.2 `rw_swap_page_base`: past `async_write_max` pages (32) a write is
    /// synchronous and its writer waits for it.
    Linux22,
    /// FreeBSD 8.2 `getpbuf(&nsw_wcount_async)`: with `async_write_max` writes (4) in
    /// flight the writer waits for one to complete before writing.
    Freebsd82,
    /// No bound: the engine before issue 15.
    Unbounded,
}

impl AsyncWritesKind {
    /// The rule for the system `cfg`; `swap.async_write_max` overrides the kernel's
    /// default bound.
    pub fn bound(self, cfg: &SystemConfig) -> WriteBound {
        let max = cfg.swap.async_write_max;
        let kind = match self {
            AsyncWritesKind::Kernel if matches!(cfg.system.reclaim, ReclaimKind::Bsd | ReclaimKind::Freebsd8) => AsyncWritesKind::Freebsd82,
            AsyncWritesKind::Kernel if cfg.free_pages() == Some(FreePagesRule::Linux22) => AsyncWritesKind::Unbounded,
            AsyncWritesKind::Kernel => AsyncWritesKind::Linux22,
            k => k,
        };
        match kind {
            AsyncWritesKind::Linux22 => WriteBound::SyncOver { max_pages: max.unwrap_or(LINUX22_SWAP_CLUSTER) as u64 },
            AsyncWritesKind::Freebsd82 => WriteBound::WaitAt { max_requests: max.unwrap_or(FREEBSD82_SWAP_ASYNC_MAX) as u64 },
            _ => WriteBound::Unbounded,
        }
    }
}

/// Linux 2.2's `pager_daemon.swap_cluster` default: `SWAP_CLUSTER_MAX` pages.
pub const LINUX22_SWAP_CLUSTER: u32 = 32;
/// FreeBSD 8.2's `swap_async_max` default (requests).
pub const FREEBSD82_SWAP_ASYNC_MAX: u32 = 4;

/// The bound in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteBound {
    Unbounded,
    /// Linux 2.2: pages in flight; a write issued while more than `max_pages` are is
    /// synchronous.
    SyncOver { max_pages: u64 },
    /// FreeBSD 8.2: requests in flight; at `max_requests` the writer waits before writing.
    WaitAt { max_requests: u64 },
}

/// What a stalled writer waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// Its own synchronous write, by tag (Linux 2.2).
    Write(u32),
    /// Any asynchronous write to complete (FreeBSD 8.2).
    AnyAsync,
}

/// The bound's state.
#[derive(Debug)]
pub struct AsyncWrites {
    pub bound: WriteBound,
    /// Units (pages or requests) of asynchronous page-out writes in flight.
    in_flight: u64,
    /// Processes waiting in direct reclaim, and for what.
    waiters: Vec<(u16, Stall)>,
    /// kswapd / the page daemon waits for this.
    kswapd: Option<Stall>,
    /// Times a writer had to wait.
    pub waits: u64,
    /// The most units ever in flight at once (what the bound held down).
    pub peak: u64,
    /// FreeBSD 8.2: writes whose writer sleeps in `getpbuf` for a buffer (a cluster of
    /// a laundering run, or mClustering's buffer, after the first one the bound
    /// stopped), issued in order as buffers are released.
    pending: VecDeque<(u64, u32, Vec<Event>)>,
}

impl AsyncWrites {
    /// Counts `units` more in flight.
    fn hold(&mut self, units: u64) {
        self.in_flight += units;
        self.peak = self.peak.max(self.in_flight);
    }

    pub fn new(bound: WriteBound) -> AsyncWrites {
        AsyncWrites { bound, in_flight: 0, waiters: Vec::new(), kswapd: None, waits: 0, peak: 0, pending: VecDeque::new() }
    }
}

impl Machine {
    /// A page-out write of `pages` pages at `slot` (a victim, or a cluster), with
    /// `events` at its completion, under the bound: asynchronous while the bound allows,
    /// else (Linux 2.2) synchronous, its writer stalled until it completes.
    pub(super) fn page_out_io(&mut self, slot: u64, pages: u32, events: Vec<Event>) {
        match self.async_writes.bound {
            WriteBound::Unbounded => self.io(IoKind::Write, slot, pages, events),
            WriteBound::SyncOver { max_pages } => {
                if self.async_writes.in_flight > max_pages {
                    let tag = self.io_held(IoKind::Write, slot, pages, events, 0, true).expect("a synchronous write is reported");
                    self.async_writes.waits += 1;
                    self.write_stall = Some(Stall::Write(tag));
                } else {
                    self.async_writes.hold(pages as u64);
                    self.io_held(IoKind::Write, slot, pages, events, pages as u64, false);
                }
            }
            WriteBound::WaitAt { max_requests } => {
                if self.async_writes.in_flight >= max_requests {
                    // the victim's pages are already taken (a cluster, or a buffer):
                    // the write waits for a buffer, and so does its writer
                    self.async_writes.pending.push_back((slot, pages, events));
                    self.async_writes.waits += 1;
                    self.write_stall = Some(Stall::AnyAsync);
                } else {
                    self.async_writes.hold(1);
                    self.io_held(IoKind::Write, slot, pages, events, 1, false);
                }
            }
        }
    }

    /// FreeBSD 8.2 `getpbuf`: true (and the writer stalled) when a page-out write must
    /// wait for a buffer before it is issued.
    pub(super) fn page_out_must_wait(&mut self) -> bool {
        if let WriteBound::WaitAt { max_requests } = self.async_writes.bound {
            if self.async_writes.in_flight >= max_requests {
                self.async_writes.waits += 1;
                self.write_stall = Some(Stall::AnyAsync);
                return true;
            }
        }
        false
    }

    /// A faulting process whose direct reclaim stalled on the bound waits for `stall`.
    pub(super) fn wait_for_page_out(&mut self, p: u16, stall: Stall) {
        self.procs[p as usize].state = RunState::BlockedFrame;
        self.async_writes.waiters.push((p, stall));
    }

    /// kswapd's run stalled on the bound: it sleeps until `stall` is over (no other run
    /// of it starts meanwhile: it is one thread, asleep in the write).
    pub(super) fn kswapd_waits(&mut self, stall: Stall) {
        self.async_writes.kswapd = Some(stall);
        self.kswapd_pending = true;
    }

    /// [`Event::IoDone`]: a page-out write counted by the bound, or a synchronous one,
    /// completed: the bound is released and the writers waiting for it go on.
    pub(super) fn on_io_done(&mut self, tag: u32) {
        let entry = self.io_slab.remove(tag);
        let released = entry.async_units > 0;
        self.async_writes.in_flight -= entry.async_units;
        // writes that waited for a buffer take the ones released, in order
        if let WriteBound::WaitAt { max_requests } = self.async_writes.bound {
            while self.async_writes.in_flight < max_requests {
                let Some((slot, pages, events)) = self.async_writes.pending.pop_front() else { break };
                self.async_writes.hold(1);
                self.io_held(IoKind::Write, slot, pages, events, 1, false);
            }
        }
        let over = |s: Stall| match s {
            Stall::Write(t) => t == tag,
            Stall::AnyAsync => released,
        };
        let mut i = 0;
        while i < self.async_writes.waiters.len() {
            let (p, s) = self.async_writes.waiters[i];
            if over(s) {
                self.async_writes.waiters.remove(i);
                self.make_ready(p);
            } else {
                i += 1;
            }
        }
        if let Some(s) = self.async_writes.kswapd {
            if over(s) {
                self.async_writes.kswapd = None;
                self.events.push(self.now, Event::Kswapd);
            }
        }
    }
}
