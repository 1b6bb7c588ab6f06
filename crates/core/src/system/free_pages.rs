//! How Linux 2.2.14 frees memory: `__get_free_pages` (mm/page_alloc.c),
//! `try_to_free_pages`, `do_try_to_free_pages` and kswapd (mm/vmscan.c).
//!
//! - `__get_free_pages`: above `freepages.min` free frames a page is taken at once; at or
//!   below it the allocating process sets `low_on_memory` and calls `try_to_free_pages`
//!   before taking its page, and keeps doing so at every allocation until free frames are
//!   back at `freepages.high` (the global `low_on_memory` hysteresis; `freepages.low` is
//!   not used by 2.2.14's allocator).
//! - `try_to_free_pages` wakes kswapd (`wake_up_interruptible(&kswapd_wait)`) and runs
//!   `do_try_to_free_pages` in the caller.
//! - `do_try_to_free_pages`: `count` = SWAP_CLUSTER_MAX (`system.reclaim_batch`), then
//!   for priority 6 down to 0: `shrink_mmap(priority)` while it frees a page, then
//!   `swap_out(priority)` while it writes one, each success counting down `count`; done
//!   at 0 (success) or after priority 0 (failure). (`shm_swap` and the dentry and slab
//!   caches have nothing to give here.) A page-out write while more than
//!   SWAP_CLUSTER_MAX asynchronous swap I/Os are in flight is synchronous
//!   (mm/page_io.c `rw_swap_page`): the caller waits for it, then goes on where it was.
//! - kswapd (2.2.14, as 2.2.15-pre3 still has it): sleeps on `kswapd_wait` with a
//!   timeout of one second; awake, it runs `do_try_to_free_pages` while free frames are
//!   below `freepages.high`, and after a call that failed sleeps ten seconds
//!   (`schedule_timeout(10*HZ)`, not woken by `try_to_free_pages` meanwhile) before
//!   looking again.
//!
//! Reclaim takes no simulated CPU time (as in the rest of the engine). Not modelled: a
//! process that finds no free frame after `try_to_free_pages` failed would get no page
//! (2.2 kills it); here it waits for a frame. `__get_free_pages` also yields the CPU
//! after every allocation that may sleep (`SCHED_YIELD`), which is the scheduler's part.

use super::events::Event;
use super::machine::Machine;
use super::memory::Gid;
use super::process::RunState;
use super::swap_cache::{SwapCache, ASYNC_IO};
use super::swap_out::{SwapOutResult, SwapOutState};

/// `do_try_to_free_pages` starts at this priority (2.2.14: `priority = 6`).
pub const START_PRIORITY: u32 = 6;
/// kswapd's sleep: `interruptible_sleep_on_timeout(&kswapd_wait, HZ)`.
pub const KSWAPD_SLEEP_NS: u64 = 1_000_000_000;
/// kswapd's sleep after a failed pass: `schedule_timeout(10*HZ)`.
pub const KSWAPD_BACKOFF_NS: u64 = 10_000_000_000;

/// The Linux 2.2 memory manager of a machine with `reclaim = "linux22"`: which of its
/// rules are on, and their state.
#[derive(Debug)]
pub struct Linux22 {
    pub swap_out: SwapOutState,
    /// `free_pages = "linux22"` (None: the batch model drives reclaim).
    pub free: Option<FreePages>,
    /// `swap.swap_cache`.
    pub cache: Option<SwapCache>,
    /// `swapin_readahead` with the swap cache: 2^page_cluster slots (None: off).
    pub readahead: Option<u32>,
    pub counters: Linux22Counters,
    /// Without the swap cache: which page-out writes in flight count in `nr_async_pages`.
    async_marks: Vec<bool>,
}

/// What the Linux 2.2 rules did, for the result's `reclaim_counters`.
#[derive(Debug, Default, Clone)]
pub struct Linux22Counters {
    pub swap_cache_faults: u64,
    /// Faults that found their page's read (read-ahead) or write in flight and waited
    /// for it; each then ends as a swap-cache hit, a minor fault.
    pub io_wait_faults: u64,
    pub shrink_mmap_freed: u64,
    pub swap_out_writes: u64,
    pub swap_out_unmapped: u64,
    pub sync_writes: u64,
    pub readahead_pages: u64,
    pub direct_reclaims: u64,
    pub kswapd_runs: u64,
    pub priority_zero: u64,
}

/// A `do_try_to_free_pages` call in progress (it waited for a synchronous write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreePagesCall {
    priority: u32,
    count: u32,
    /// Past `shrink_mmap` at this priority, inside the `swap_out` loop.
    in_swap_out: bool,
}

/// How a `do_try_to_free_pages` call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// Finished: true when SWAP_CLUSTER_MAX pages were freed or written.
    Done(bool),
    /// The caller waits for this page's synchronous write, then goes on.
    Waits(Gid, FreePagesCall),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kswapd {
    /// On `kswapd_wait` until its one-second timeout (or a wake-up).
    Sleeping { until: u64 },
    /// `schedule_timeout(10*HZ)` after a failed pass: no wake-up ends it.
    BackingOff { until: u64 },
    /// Waiting for a synchronous write of its own.
    Waiting(Gid),
    /// Woken, to run at the next event.
    Woken,
}

#[derive(Debug)]
pub struct FreePages {
    low_on_memory: bool,
    kswapd: Kswapd,
    kswapd_call: Option<FreePagesCall>,
    /// Per process: its reclaim call that waits for a synchronous write.
    calls: Vec<Option<FreePagesCall>>,
    /// `nr_async_pages`: asynchronous swap reads and writes in flight.
    pub async_io: u64,
}

impl FreePages {
    pub fn new(processes: usize) -> Self {
        FreePages { low_on_memory: false, kswapd: Kswapd::Sleeping { until: KSWAPD_SLEEP_NS }, kswapd_call: None, calls: vec![None; processes], async_io: 0 }
    }
}

impl Machine {
    fn free_state(&mut self) -> &mut FreePages {
        self.linux22.as_mut().and_then(|l| l.free.as_mut()).expect("free_pages = linux22")
    }

    /// Linux 2.2's `try_to_free_pages` drives reclaim (`free_pages = "linux22"`).
    #[inline]
    pub(super) fn free_pages_on(&self) -> bool {
        self.linux22.as_ref().is_some_and(|l| l.free.is_some())
    }

    pub(super) fn count22(&mut self, f: impl FnOnce(&mut Linux22Counters)) {
        if let Some(l) = self.linux22.as_mut() {
            f(&mut l.counters);
        }
    }

    /// The token's protection for a reclaim by `reclaiming`: the protected process and
    /// whether the protection is Linux 2.6.20's pretence (its pages count as referenced)
    /// rather than the paper's skip.
    pub(super) fn token_protection(&self, reclaiming: Option<u16>) -> (Option<u16>, bool) {
        let procs = &self.procs;
        let p = self.token.protected(|h| procs[h as usize].swapping, |h| in_fault(procs, h), reclaiming);
        (p, self.token.pretends_referenced())
    }

    /// A page-out write now would be synchronous: `nr_async_pages > swap_cluster`.
    pub(super) fn async_write_would_wait(&self) -> bool {
        self.linux22.as_ref().and_then(|l| l.free.as_ref()).is_some_and(|f| f.async_io > self.reclaim_batch as u64)
    }

    /// Counts `gid`'s page-out write in `nr_async_pages` unless it is synchronous.
    pub(super) fn count_async_write(&mut self, gid: Gid, sync: bool) {
        if !self.free_pages_on() {
            return;
        }
        if sync {
            self.count22(|c| c.sync_writes += 1);
            return;
        }
        self.free_state().async_io += 1;
        if self.swap_cache_on() {
            self.cache().set(gid, ASYNC_IO);
        } else {
            self.linux22.as_mut().unwrap().swap_out_async_mark(gid);
        }
    }

    /// An I/O of `gid` completed: it leaves `nr_async_pages` if it counted there.
    pub(super) fn async_io_done(&mut self, gid: Gid) {
        if !self.free_pages_on() {
            return;
        }
        let counted = if self.swap_cache_on() { self.cache().clear(gid, ASYNC_IO) } else { self.linux22.as_mut().unwrap().swap_out_async_clear(gid) };
        if counted {
            self.free_state().async_io -= 1;
        }
    }

    /// `__get_free_pages(GFP_USER)` for process `p`'s fault: true when a frame was taken
    /// (counted out of the free frames); false when `p` now waits, for a synchronous
    /// write of its reclaim or for a frame.
    pub(super) fn get_free_page(&mut self, p: u16) -> bool {
        if let Some(call) = self.free_state().calls[p as usize].take() {
            // it waited for its reclaim's synchronous write: the call goes on
            if !self.run_call(call, p) {
                return false;
            }
        } else if self.must_reclaim() {
            self.free_state().low_on_memory = true;
            self.wake_kswapd();
            self.count22(|c| c.direct_reclaims += 1);
            let call = FreePagesCall { priority: START_PRIORITY, count: self.reclaim_batch, in_swap_out: false };
            if !self.run_call(call, p) {
                return false;
            }
        }
        if self.pool.free == 0 {
            // 2.2 would fail the allocation; the process waits for a frame
            let proc = &mut self.procs[p as usize];
            proc.state = RunState::BlockedFrame;
            self.frame_waiters.push_back(p);
            return false;
        }
        self.pool.free -= 1;
        true
    }

    /// A frame for a read-ahead page of `p`'s fault, by the same rule; false when none
    /// can be had without waiting (the read-ahead stops there: a reclaim that would wait
    /// for a synchronous write is left after issuing it).
    pub(super) fn get_free_page_for_readahead(&mut self, p: u16) -> bool {
        if self.must_reclaim() {
            self.free_state().low_on_memory = true;
            self.wake_kswapd();
            self.count22(|c| c.direct_reclaims += 1);
            let call = FreePagesCall { priority: START_PRIORITY, count: self.reclaim_batch, in_swap_out: false };
            if let CallOutcome::Waits(..) = self.do_try_to_free_pages(call, Some(p)) {
                return false;
            }
        }
        if self.pool.free == 0 {
            return false;
        }
        self.pool.free -= 1;
        true
    }

    /// `__get_free_pages`' test: reclaim first at or below `freepages.min`, and while
    /// `low_on_memory` until `freepages.high` is reached.
    fn must_reclaim(&mut self) -> bool {
        let (free, wm) = (self.pool.free, self.pool.watermarks);
        let fp = self.free_state();
        if free > wm.min {
            if !fp.low_on_memory {
                return false;
            }
            if free >= wm.high {
                fp.low_on_memory = false;
                return false;
            }
        }
        true
    }

    /// Runs `call` for process `p`; false when `p` now waits for a synchronous write.
    fn run_call(&mut self, call: FreePagesCall, p: u16) -> bool {
        match self.do_try_to_free_pages(call, Some(p)) {
            CallOutcome::Done(_) => true,
            CallOutcome::Waits(gid, rest) => {
                self.free_state().calls[p as usize] = Some(rest);
                let proc = &mut self.procs[p as usize];
                proc.waiting_on = gid;
                proc.state = RunState::BlockedIo;
                proc.swapping = true;
                false
            }
        }
    }

    /// `do_try_to_free_pages` for `reclaiming` (None: kswapd), from where `call` is.
    pub(super) fn do_try_to_free_pages(&mut self, call: FreePagesCall, reclaiming: Option<u16>) -> CallOutcome {
        let outcome = self.free_pages_loop(call, reclaiming);
        // the end of a page-out run writes what mClustering's buffer holds (without the
        // swap cache, page-outs may be clustered)
        self.flush_buffer();
        outcome
    }

    fn free_pages_loop(&mut self, mut call: FreePagesCall, reclaiming: Option<u16>) -> CallOutcome {
        loop {
            if call.count == 0 {
                return CallOutcome::Done(true);
            }
            if !call.in_swap_out {
                if call.priority == 0 {
                    self.count22(|c| c.priority_zero += 1);
                    // Linux 2.6.20: "The swap token gets in the way of swapout..."
                    let released = self.token.on_priority_zero(self.now);
                    self.account_release(released);
                }
                while self.shrink_mmap(call.priority) {
                    call.count -= 1;
                    if call.count == 0 {
                        return CallOutcome::Done(true);
                    }
                }
                call.in_swap_out = true;
            }
            loop {
                match self.swap_out(call.priority, reclaiming) {
                    SwapOutResult::Nothing => break,
                    SwapOutResult::Wrote => {
                        call.count -= 1;
                        if call.count == 0 {
                            return CallOutcome::Done(true);
                        }
                    }
                    SwapOutResult::WroteSync(gid) => {
                        call.count -= 1;
                        return CallOutcome::Waits(gid, call);
                    }
                }
            }
            if call.priority == 0 {
                return CallOutcome::Done(false);
            }
            call.priority -= 1;
            call.in_swap_out = false;
        }
    }

    /// `wake_up_interruptible(&kswapd_wait)`: kswapd runs now if it sleeps on its queue.
    fn wake_kswapd(&mut self) {
        let fp = self.free_state();
        if let Kswapd::Sleeping { .. } = fp.kswapd {
            fp.kswapd = Kswapd::Woken;
            self.events.push(self.now, Event::Kswapd);
        }
    }

    /// kswapd's timer fired (its sleep's timeout, or the end of its ten-second wait).
    pub(super) fn kswapd_timer22(&mut self) {
        let now = self.now;
        let fp = self.free_state();
        match fp.kswapd {
            Kswapd::Sleeping { until } | Kswapd::BackingOff { until } if until == now => {
                fp.kswapd = Kswapd::Woken;
                self.kswapd22();
            }
            // a timeout cancelled by a wake-up
            _ => {}
        }
    }

    /// kswapd was woken (Event::Kswapd) or its write completed.
    pub(super) fn kswapd_event22(&mut self) {
        if self.free_state().kswapd == Kswapd::Woken {
            self.kswapd22();
        }
    }

    /// kswapd awake: `while (nr_free_pages < freepages.high)` it frees pages.
    fn kswapd22(&mut self) {
        self.count22(|c| c.kswapd_runs += 1);
        loop {
            if self.pool.free >= self.pool.watermarks.high {
                self.kswapd_sleep(Kswapd::Sleeping { until: self.now + KSWAPD_SLEEP_NS });
                return;
            }
            let call = self.free_state().kswapd_call.take().unwrap_or(FreePagesCall { priority: START_PRIORITY, count: self.reclaim_batch, in_swap_out: false });
            match self.do_try_to_free_pages(call, None) {
                CallOutcome::Done(true) => continue,
                CallOutcome::Done(false) => {
                    self.kswapd_sleep(Kswapd::BackingOff { until: self.now + KSWAPD_BACKOFF_NS });
                    return;
                }
                CallOutcome::Waits(gid, rest) => {
                    let fp = self.free_state();
                    fp.kswapd_call = Some(rest);
                    fp.kswapd = Kswapd::Waiting(gid);
                    return;
                }
            }
        }
    }

    fn kswapd_sleep(&mut self, state: Kswapd) {
        let (Kswapd::Sleeping { until } | Kswapd::BackingOff { until }) = state else { unreachable!() };
        self.free_state().kswapd = state;
        if self.live > 0 {
            self.events.push(until, Event::KswapdTimer);
        }
    }

    /// A write completed under `free_pages = "linux22"`: who waited for it goes on.
    pub(super) fn write_done22(&mut self, gid: Gid) {
        self.async_io_done(gid);
        let fp = self.free_state();
        if fp.kswapd == Kswapd::Waiting(gid) {
            fp.kswapd = Kswapd::Woken;
            self.events.push(self.now, Event::Kswapd);
        }
        let waiters: Vec<u16> = self.procs.iter().filter(|q| q.waiting_on == gid && q.state == RunState::BlockedIo).map(|q| q.index).collect();
        for q in waiters {
            self.procs[q as usize].waiting_on = super::memory::NO_GID;
            self.make_ready(q);
        }
        // the written page can now be freed from the swap cache: a process waiting for a
        // frame tries its allocation again
        if self.swap_cache_on() {
            if let Some(q) = self.frame_waiters.pop_front() {
                self.make_ready(q);
            }
        }
    }

    /// Reclaim when every process waits and only timers are pending (the machine's last
    /// resort): a kswapd-like `do_try_to_free_pages` of `n` pages; the frames it freed.
    pub(super) fn reclaim22(&mut self, n: u32) -> u32 {
        let before = self.pool.free;
        let call = FreePagesCall { priority: START_PRIORITY, count: n.max(1), in_swap_out: false };
        let _ = self.do_try_to_free_pages(call, None);
        (self.pool.free - before.min(self.pool.free)) as u32
    }

    /// Process `p` ended: its waiting reclaim call goes with it.
    pub(super) fn forget_process22(&mut self, p: u16) {
        if let Some(l) = self.linux22.as_mut() {
            l.swap_out.forget(p);
            if let Some(f) = l.free.as_mut() {
                f.calls[p as usize] = None;
            }
        }
    }
}

/// Inside a page fault (2.6.20: its `mmap_sem` is held): blocked in one, or woken from
/// one and not yet run (`swapping`).
pub(super) fn in_fault(procs: &[super::process::Process], p: u16) -> bool {
    let proc = &procs[p as usize];
    proc.swapping || proc.state == RunState::BlockedFrame
}

impl Linux22 {
    pub fn new(swap_out: SwapOutState, free: Option<FreePages>, cache: Option<SwapCache>, readahead: Option<u32>) -> Self {
        Linux22 { swap_out, free, cache, readahead, counters: Linux22Counters::default(), async_marks: Vec::new() }
    }

    /// The counters, named for the result's `reclaim_counters`.
    pub fn counter_list(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("swap_cache_faults", c.swap_cache_faults),
            ("io_wait_faults", c.io_wait_faults),
            ("shrink_mmap_freed", c.shrink_mmap_freed),
            ("swap_out_writes", c.swap_out_writes),
            ("swap_out_unmapped", c.swap_out_unmapped),
            ("sync_writes", c.sync_writes),
            ("readahead_pages", c.readahead_pages),
            ("direct_reclaims", c.direct_reclaims),
            ("kswapd_runs", c.kswapd_runs),
            ("priority_zero", c.priority_zero),
        ]
    }

    /// Without the swap cache the async marks of page-out writes live here.
    fn swap_out_async_mark(&mut self, gid: Gid) {
        let i = gid as usize;
        if self.async_marks.len() <= i {
            self.async_marks.resize(i + 1, false);
        }
        self.async_marks[i] = true;
    }

    fn swap_out_async_clear(&mut self, gid: Gid) -> bool {
        self.async_marks.get_mut(gid as usize).map(|m| std::mem::replace(m, false)).unwrap_or(false)
    }
}
