//! One node running several processes that share its frames: the discrete-event loop
//! (simulated nanoseconds), the round-robin scheduler, the fault paths, reclaim with
//! kswapd and direct reclaim, page-out writes and page-in reads through the swap disk.
//!
//! The running process executes its references in a tight loop until its time slice
//! ends, the next event is due, or it faults; events (disk completions, kswapd, samples)
//! are handled between runs. Hits cost one array lookup and a few bit operations.

use std::collections::VecDeque;

use super::async_writes::{AsyncWrites, Stall};
use super::config::{ClusteringKind, FreePagesRule, ReadAroundKind, ReclaimKind, SwapConfig, SwapOutRule, SystemConfig};
use super::free_pages::{FreePages, Linux22};
use super::swap_cache::SwapCache;
use super::swap_out::SwapOutState;
use super::pageout::{allocate_bsd, allocate_mclustering, compose_cluster, ClusterBuffer, Write};
use super::disk::{Disk, IoKind};
use super::disk_io::IoSlab;
use super::events::{Event, EventQueue};
use super::gang::GangNode;
use super::load_control::{LoadAction, LoadControl};
use super::memory::*;
use super::process::{Process, RunState, SpaceTime};
use super::reclaim::Reclaimer;
use super::results::{ProcessResult, SystemResult, TokenRecord};
use super::samples::{coarsen_process, SampleLog};
use super::swap::SwapSpace;
use super::token::Token;
use crate::trace::{AccessKind, Progress};
use crate::{Error, Result};

/// kswapd's periodic wake-up: Linux 2.2 mm/vmscan.c sleeps with a timeout of HZ.
const KSWAPD_PERIOD_NS: u64 = 1_000_000_000;

/// The simulated clock's limit: 2^63 ns (292 years). Every configured cost or period is
/// at most a day (config::MAX_DURATION_NS), so sums of the clock and one of them never
/// wrap a u64; a run whose clock passes this ends in an error instead of wrong numbers.
pub const MAX_SIM_NS: u64 = 1 << 63;

fn clock_overflow(what: &str) -> Error {
    Error::invalid(
        "system",
        format!("simulated time exceeds 2^63 ns (292 years) {what}: expected costs per reference and per request that keep the run representable"),
    )
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

enum RunOutcome {
    /// The time limit was reached.
    Yield,
    /// The process blocked (fault I/O or no frame).
    Blocked,
    Finished,
}

/// Why the hot loop stopped before its limit.
enum Stop {
    /// A fault on the local page, at this virtual page.
    Fault(u32, u64),
    /// A free record of the local page.
    Free(u32),
}

/// What the fault path decided.
pub(super) enum FaultOutcome {
    /// Resolved at once (minor fault): re-execute the record.
    Continue,
    Blocked,
}

pub struct Machine {
    pub(super) now: u64,
    pub(super) events: EventQueue,
    pub(super) pages: PageTable,
    pub(super) pool: FramePool,
    pub(super) reclaimer: Reclaimer,
    /// `reclaim = "freebsd8"`: the FreeBSD 8.2 page queues and page daemon (freebsd.rs).
    pub(super) fbsd: Option<Box<super::freebsd::FreeBsdVm>>,
    pub(super) token: Token,
    load: LoadControl,
    pub(super) disk: Disk,
    pub(super) swap: SwapSpace,
    pub(super) procs: Vec<Process>,
    pub(super) ready: VecDeque<u16>,
    running: Option<u16>,
    slice_end: u64,
    pub(super) frame_waiters: VecDeque<u16>,
    pub(super) kswapd_pending: bool,
    pub(super) live: usize,
    started: usize,
    cpu_busy: u64,
    pub(super) total_major: u64,
    /// Stamp epoch: a new one starts at every sample (and at every job switch of a gang
    /// run); page stamps hold the epoch of their last reference plus one.
    pub(super) epoch: u32,
    quantum_ns: u64,
    sample_ns: u64,
    pub(super) minor_ns: u64,
    pub(super) major_cpu_ns: u64,
    pub(super) reclaim_batch: u32,
    pub(super) shortage_margin: u64,
    /// The system's samples; at most `max_samples` per series (samples.rs).
    log: SampleLog,
    pub(super) max_samples: usize,
    last_cpu_busy: u64,
    last_disk_busy: u64,
    last_sample_ns: u64,
    space_time_buckets: u32,
    pub(super) swap_cfg: SwapConfig,
    seed: u64,
    /// mClustering's buffer of clusters waiting for their write.
    pub(super) buffer: ClusterBuffer<Gid>,
    /// Page whose contents each swap slot holds (NO_GID when free or pre-occupied).
    pub(super) slot_owner: Vec<Gid>,
    pub(super) prefetched: u64,
    pub(super) prefetch_hits: u64,
    last_pages_read: u64,
    last_pages_written: u64,
    /// This node's gang scheduler and adaptive paging state (gang runs only).
    pub(super) gang: Option<GangNode>,
    /// Processes that reached a barrier, not yet seen by the cluster driver.
    pub(super) arrivals: Vec<u16>,
    /// `reclaim = "linux22"`: the Linux 2.2.14 rules in force and their state.
    pub(super) linux22: Option<Box<Linux22>>,
    /// The process whose fault is reclaiming now (None: kswapd or a switch).
    reclaiming: Option<u16>,
    /// Completion records of disk requests in flight (disk_io.rs).
    pub(super) io_slab: IoSlab,
    /// The bound on asynchronous page-out writes (async_writes.rs).
    pub(super) async_writes: AsyncWrites,
    /// Set when the last page-out write stalled its writer on the bound: reclaim stops
    /// there and the writer waits (async_writes.rs).
    pub(super) write_stall: Option<Stall>,
}

/// What a [`Machine::step`] left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// More to do.
    Running,
    /// Every process has finished.
    Done,
}

impl Machine {
    /// `space_time_pages`: each process's distinct pages (from its dedicated run) when
    /// space-time recording is on.
    pub fn new(cfg: &SystemConfig, frames: u64, swap_slots: u64, space_time_pages: Option<Vec<u64>>) -> Result<Machine> {
        let s = &cfg.system;
        let mut procs = Vec::new();
        for (i, p) in cfg.processes.iter().enumerate() {
            let spec = p.source(s.page_size, s.seed, i)?;
            let mut proc = Process::new(p.name.clone(), i as u16, spec, p.cpu_ns_per_ref.unwrap_or(s.cpu_ns_per_ref), s.cpu_ns_per_instruction, p.use_gaps, p.priority, ns(p.start_ms));
            if let Some(pages) = &space_time_pages {
                let per = pages[i].div_ceil(s.space_time_buckets as u64).max(1);
                proc.space_time = Some(SpaceTime { pages_per_bucket: per, ..Default::default() });
            }
            procs.push(proc);
        }
        cfg.disk.model.check_swap_fits(s.page_size, swap_slots)?;
        let watermarks = if frames == cfg.system.frames {
            cfg.watermarks()
        } else {
            super::config::Watermarks::linux22(frames)
        };
        let n = procs.len();
        let page_cluster = cfg.page_cluster(frames);
        let mut swap_cfg = cfg.swap.clone();
        swap_cfg.read_around = cfg.read_around();
        swap_cfg.page_cluster = Some(page_cluster);
        // the swap cache frees a slot at the write fault (do_wp_page)
        swap_cfg.free_on_write |= cfg.swap_cache();
        let linux22 = cfg.free_pages().map(|rule| {
            let free = (rule == FreePagesRule::Linux22).then(|| FreePages::new(n));
            let cache = cfg.swap_cache().then(|| SwapCache::new(frames));
            let readahead = (cache.is_some() && swap_cfg.read_around == ReadAroundKind::Linux).then_some(page_cluster);
            Box::new(Linux22::new(SwapOutState::new(s.swap_out, n), free, cache, readahead))
        });
        let limits = super::token_defaults::token_limits(&cfg.token, None, &cfg.disk.model, s.page_size);
        Ok(Machine {
            now: 0,
            events: EventQueue::default(),
            pages: PageTable::default(),
            pool: FramePool::new(frames, watermarks),
            reclaimer: Reclaimer::with_policy(s.reclaim, s.reclaim_policy()?, s.dead_list_weight()?, frames as u32, s.seed),
            fbsd: (s.reclaim == super::config::ReclaimKind::Freebsd8).then(|| {
                let targets = super::freebsd::FreeBsdTargets::for_config(cfg, frames);
                Box::new(super::freebsd::FreeBsdVm::new(s.freebsd.clone(), targets, cfg.processes.len()))
            }),
            token: Token::new(cfg.token.clone(), limits, n),
            load: LoadControl::new(cfg.load_control.clone()),
            disk: Disk::with_discipline(cfg.disk.model.clone(), s.page_size, swap_slots, cfg.disk.queue.discipline(s.reclaim, s.page_size)),
            swap: SwapSpace::try_new(swap_slots)?,
            live: procs.len(),
            procs,
            ready: VecDeque::new(),
            running: None,
            slice_end: 0,
            frame_waiters: VecDeque::new(),
            kswapd_pending: false,
            started: 0,
            cpu_busy: 0,
            total_major: 0,
            epoch: 0,
            quantum_ns: ns(s.quantum_ms).max(1),
            sample_ns: ns(s.sample_ms).max(1),
            minor_ns: s.minor_fault_ns.round() as u64,
            major_cpu_ns: s.major_fault_cpu_ns.round() as u64,
            reclaim_batch: s.reclaim_batch,
            shortage_margin: cfg.token.shortage_margin,
            log: SampleLog::default(),
            max_samples: cfg.max_samples().max(2),
            last_cpu_busy: 0,
            last_disk_busy: 0,
            last_sample_ns: 0,
            space_time_buckets: s.space_time_buckets,
            swap_cfg,
            seed: s.seed,
            buffer: ClusterBuffer::new(cfg.swap.buffer_pages),
            slot_owner: crate::error::try_filled_vec("system.swap_slots", swap_slots, NO_GID)?,
            prefetched: 0,
            prefetch_hits: 0,
            last_pages_read: 0,
            last_pages_written: 0,
            gang: None,
            arrivals: Vec::new(),
            linux22,
            reclaiming: None,
            io_slab: IoSlab::default(),
            async_writes: AsyncWrites::new(cfg.swap.async_writes.bound(cfg)),
            write_stall: None,
        })
    }

    /// Scales the token's section 5.3 limits to the run: each process's dedicated run
    /// time (token_defaults.rs).
    pub fn set_dedicated(&mut self, dedicated_ns: &[u64], cfg: &SystemConfig) {
        let limits = super::token_defaults::token_limits(&cfg.token, Some(dedicated_ns), &cfg.disk.model, cfg.system.page_size);
        self.token.set_limits(limits);
    }

    /// Runs until every process has finished. `progress(simulated ms)` is called at
    /// every sample.
    pub fn run(mut self, progress: Progress) -> Result<SystemResult> {
        self.start()?;
        while self.step(u64::MAX, progress)? == Step::Running {}
        self.end(progress)
    }

    /// Opens the processes and queues the first events.
    pub fn start(&mut self) -> Result<()> {
        for p in &mut self.procs {
            p.open()?;
        }
        self.fragment_swap();
        for i in 0..self.procs.len() {
            self.events.push(self.procs[i].start_ns, Event::Start(i as u16));
        }
        self.events.push(self.sample_ns, Event::Sample);
        if self.fbsd.is_some() {
            self.fb_start();
        } else {
            self.events.push(KSWAPD_PERIOD_NS, Event::KswapdTimer);
        }
        if self.load.enabled() {
            self.events.push(self.load.window_ns(), Event::LoadControl);
        }
        self.start_gang();
        Ok(())
    }

    /// Simulated time of this node.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// One turn of the event loop: the events due, then the running process until its
    /// slice ends, the next event is due, it blocks, or the clock reaches `limit` (the
    /// cluster driver's bound: no message from another node can arrive before it).
    pub fn step(&mut self, limit: u64, progress: Progress) -> Result<Step> {
        while let Some((_, event)) = self.events.pop_due(self.now) {
            self.handle(event, progress)?;
        }
        if self.live == 0 {
            return Ok(Step::Done);
        }
        if self.running.is_none() {
            self.dispatch();
        }
        let Some(p) = self.running else {
            // idle CPU: jump to the next event
            if self.started == self.procs.len() && self.procs.iter().all(|p| p.state == RunState::Done || p.suspended) {
                if let Some(q) = self.load.resume_oldest() {
                    self.resume(q);
                    return Ok(Step::Running);
                }
            }
            let at_barrier = self.procs.iter().any(|p| p.state == RunState::BlockedBarrier);
            if !at_barrier && !self.events.has_work() && !self.ready.iter().any(|&q| self.procs[q as usize].is_runnable()) {
                // only timers are pending: unless reclaim frees a frame for a waiting
                // process now, nothing will ever change
                if !self.frame_waiters.is_empty() && self.reclaim(self.reclaim_batch) > 0 {
                    self.flush_buffer();
                    return Ok(Step::Running);
                }
                if self.procs.iter().any(|p| matches!(p.state, RunState::NotStarted | RunState::BlockedFrame | RunState::BlockedIo | RunState::Ready)) {
                    return Err(Error::invalid(
                        "system",
                        format!("no process can run and nothing is pending at {:.3} s (deadlock: {} free frames, {} being written)", self.now as f64 / 1e9, self.pool.free, self.pool.writing),
                    ));
                }
            }
            match self.events.next_time() {
                Some(t) if t.min(limit) > MAX_SIM_NS => return Err(clock_overflow("waiting for the next event")),
                Some(t) => self.now = self.now.max(t.min(limit)),
                None if at_barrier && limit != u64::MAX => self.now = self.now.max(limit),
                None => return Err(Error::invalid("system", "no process can run and nothing is pending (deadlock)")),
            }
            return Ok(Step::Running);
        };
        let until = self.slice_end.min(self.events.next_time().unwrap_or(u64::MAX)).min(limit);
        let before = self.now;
        let outcome = self.run_process(p, until)?;
        self.cpu_busy += self.now - before;
        match outcome {
            RunOutcome::Yield => {
                if self.now >= self.slice_end {
                    if self.ready.iter().any(|&q| self.procs[q as usize].is_runnable()) {
                        self.procs[p as usize].state = RunState::Ready;
                        self.ready.push_back(p);
                        self.running = None;
                    } else {
                        self.slice_end = self.now + self.quantum_ns;
                    }
                } else if self.procs[p as usize].suspended {
                    self.procs[p as usize].state = RunState::Ready;
                    self.running = None;
                }
            }
            RunOutcome::Blocked | RunOutcome::Finished => self.running = None,
        }
        Ok(Step::Running)
    }

    /// The last, partial sample (series always cover the whole run) and the results.
    pub fn end(mut self, progress: Progress) -> Result<SystemResult> {
        if self.disk.busy_until() > MAX_SIM_NS {
            return Err(clock_overflow("in the swap disk's queue"));
        }
        if self.now > self.last_sample_ns {
            self.sample(progress)?;
        }
        Ok(self.finish())
    }

    fn dispatch(&mut self) {
        while let Some(p) = self.ready.pop_front() {
            let proc = &mut self.procs[p as usize];
            if proc.is_runnable() {
                proc.state = RunState::Running;
                // section 5.2: swapping status ends when the process runs again
                proc.swapping = false;
                self.running = Some(p);
                self.slice_end = self.now + self.quantum_ns;
                return;
            }
        }
    }

    pub(super) fn make_ready(&mut self, p: u16) {
        let proc = &mut self.procs[p as usize];
        proc.state = RunState::Ready;
        if !proc.suspended {
            self.ready.push_back(p);
        }
    }

    pub(super) fn handle(&mut self, event: Event, progress: Progress) -> Result<()> {
        match event {
            Event::Start(p) => {
                self.started += 1;
                self.make_ready(p);
            }
            Event::PageIn(p, gid) => {
                self.async_io_done(gid);
                let f = &mut self.pages.flags[gid as usize];
                *f = (*f & !PAGING_IN) | RESIDENT;
                self.procs[p as usize].rss += 1;
                self.reclaimer.on_resident(gid);
                self.make_ready(p);
                if self.fbsd.is_some() {
                    self.fb_page_in_done(p, gid);
                }
                self.adaptive_wait_over(gid);
            }
            Event::Prefetched(gid) if self.fbsd.is_some() => self.fb_prefetched(gid),
            Event::Prefetched(gid) if self.swap_cache_on() => self.readahead_arrived22(gid),
            Event::Prefetched(gid) => {
                self.arrived_unasked(gid, false);
                self.adaptive_wait_over(gid);
            }
            Event::WriteDone(gid) if self.fbsd.is_some() => self.fb_write_done(gid),
            Event::PageDaemon(gen, needed) => self.fb_daemon(gen, needed),
            Event::AdaptiveIn(gid) => {
                self.arrived_unasked(gid, true);
                self.adaptive_read_done();
            }
            Event::BarrierRelease(p) => {
                let proc = &mut self.procs[p as usize];
                if proc.at_final_barrier {
                    self.exit(p);
                } else {
                    if proc.marks.is_some() {
                        proc.barrier_at = u64::MAX;
                        proc.barrier_unknown = true;
                        proc.sync_barrier();
                    } else {
                        proc.barrier_at = proc.barrier_at.saturating_add(proc.superstep_refs);
                    }
                    self.make_ready(p);
                }
            }
            Event::Switch(generation) => self.on_quantum_end(generation),
            Event::BackgroundWrite(generation) => self.background_write(generation),
            Event::WriteDone(gid) if self.swap_cache_on() => self.write_done_cached(gid),
            Event::WriteDone(gid) => {
                let f = self.pages.flags[gid as usize];
                let mut nf = f & !WRITING;
                // (a page freed while written has no slot: its copy is of nothing)
                if f & DIRTY == 0 && f & TOUCHED != 0 && self.pages.slot[gid as usize] != NO_SLOT {
                    nf |= SWAP_VALID;
                } else if self.swap_cfg.frees_stale_slots() {
                    // stale (written again since) or its process exited: free the slot
                    release_slot(&mut self.swap, &mut self.slot_owner, &mut self.pages.slot, gid);
                }
                self.pages.flags[gid as usize] = nf;
                if f & RESIDENT == 0 {
                    // the frame was held for the write; now it is free
                    self.pool.writing -= 1;
                    self.free_frame();
                    self.pump_page_in();
                }
                if self.free_pages_on() {
                    self.write_done22(gid);
                }
            }
            Event::Kswapd if self.free_pages_on() => self.kswapd_event22(),
            Event::Kswapd => {
                self.kswapd_pending = false;
                self.write_stall = None;
                while !self.pool.kswapd_done() {
                    if self.reclaim(1) == 0 || self.write_stall.is_some() {
                        break;
                    }
                }
                // the end of a page-out run writes what mClustering's buffer holds
                self.flush_buffer();
                // a write that reached the bound: kswapd sleeps in it (async_writes.rs)
                if let Some(stall) = self.write_stall.take() {
                    self.kswapd_waits(stall);
                }
            }
            Event::DiskUnplug => self.on_disk_unplug(),
            Event::DiskDone => self.on_disk_done(),
            Event::IoDone(tag) => self.on_io_done(tag),
            Event::Sample => self.sample(progress)?,
            Event::KswapdTimer if self.free_pages_on() => self.kswapd_timer22(),
            Event::KswapdTimer => {
                if self.pool.below_low() && !self.kswapd_pending {
                    self.kswapd_pending = true;
                    self.events.push(self.now, Event::Kswapd);
                }
                if self.live > 0 {
                    self.events.push(self.now + KSWAPD_PERIOD_NS, Event::KswapdTimer);
                }
            }
            Event::LoadControl => {
                let candidates: Vec<(u16, u64)> = self
                    .procs
                    .iter()
                    .filter(|p| p.state != RunState::Done && p.state != RunState::NotStarted && !p.suspended)
                    .map(|p| (p.index, p.rss))
                    .collect();
                match self.load.tick(self.total_major, &candidates) {
                    Some(LoadAction::Suspend(p)) => {
                        let proc = &mut self.procs[p as usize];
                        proc.suspended = true;
                        proc.suspended_since = self.now;
                        self.token.events.push(super::token::TokenEvent { t_ns: self.now, event: "suspend", process: p });
                    }
                    Some(LoadAction::Resume(p)) => self.resume(p),
                    None => {}
                }
                if self.live > 0 {
                    self.events.push(self.now + self.load.window_ns(), Event::LoadControl);
                }
            }
        }
        Ok(())
    }

    /// A page read for its process but not at its own fault arrived: read-around's guess
    /// enters unreferenced (on BSD's inactive queue) and counts as prefetched; adaptive
    /// page-in's (`induced`, a fault made for the process) is mapped and referenced, a
    /// page of the working set. The owner goes on if it faulted on the page meanwhile.
    fn arrived_unasked(&mut self, gid: Gid, induced: bool) {
        if self.pages.flags[gid as usize] & (PAGING_IN | TOUCHED) == PAGING_IN {
            // freed while its read was in flight: the frame goes back to the pool
            self.pages.flags[gid as usize] = 0;
            self.free_frame();
            let owner = self.pages.owner[gid as usize];
            let proc = &mut self.procs[owner as usize];
            if proc.waiting_on == gid {
                // it touched the page again meanwhile: it faults on it anew
                proc.waiting_on = NO_GID;
                self.make_ready(owner);
            }
            return;
        }
        let f = &mut self.pages.flags[gid as usize];
        *f = if induced {
            (*f & !PAGING_IN) | RESIDENT | REFERENCED
        } else {
            (*f & !(PAGING_IN | REFERENCED)) | RESIDENT | PREFETCHED
        };
        if induced {
            self.reclaimer.on_resident(gid);
        } else {
            self.reclaimer.on_resident_unused(gid);
            self.prefetched += 1;
        }
        let owner = self.pages.owner[gid as usize];
        let proc = &mut self.procs[owner as usize];
        proc.rss += 1;
        if proc.waiting_on == gid {
            proc.waiting_on = NO_GID;
            self.make_ready(owner);
        }
    }

    fn resume(&mut self, p: u16) {
        let now = self.now;
        let proc = &mut self.procs[p as usize];
        proc.suspended = false;
        proc.counters.suspended_ns += now - proc.suspended_since;
        self.token.events.push(super::token::TokenEvent { t_ns: now, event: "resume", process: p });
        if proc.state == RunState::Ready {
            self.ready.push_back(p);
        }
    }

    /// A major fault of `p` asks for the token under shortage (token-ordered-lru.txt 5.2:
    /// before `do_swap_page`).
    pub(super) fn token_on_major_fault(&mut self, p: u16) {
        let short = self.pool.free <= self.pool.watermarks.high + self.shortage_margin;
        let procs = &self.procs;
        let (grabbed, previous) = self.token.on_major_fault(p, self.now, short, |q| procs[q as usize].priority);
        if grabbed {
            self.procs[p as usize].counters.token_grabs += 1;
        }
        self.account_release(previous);
    }

    /// The counts of a major fault of `p`, which is now swapping (waiting for its page).
    pub(super) fn count_major_fault(&mut self, p: u16) {
        let proc = &mut self.procs[p as usize];
        proc.counters.major_faults += 1;
        proc.interval_npf += 1;
        proc.counters.page_ins += 1;
        proc.swapping = true;
        self.total_major += 1;
    }

    pub(super) fn free_frame(&mut self) {
        self.pool.free += 1;
        if self.fbsd.is_some() {
            // FreeBSD's waiters wake at v_free_min (vm_page_free_wakeup), not per frame
            self.fb_free_wakeup();
            return;
        }
        if let Some(p) = self.frame_waiters.pop_front() {
            self.make_ready(p);
        }
    }

    /// Runs process `p` until `until`, a block or its end.
    fn run_process(&mut self, p: u16, mut until: u64) -> Result<RunOutcome> {
        loop {
            if self.now >= until || self.procs[p as usize].suspended {
                return Ok(RunOutcome::Yield);
            }
            if !self.procs[p as usize].refill()? {
                if self.procs[p as usize].marks.is_some() && self.procs[p as usize].barriers {
                    // split data: the barriers after this node's last reference come first
                    self.procs[p as usize].sync_barrier();
                    if self.procs[p as usize].counters.references >= self.procs[p as usize].barrier_at {
                        self.arrive(p, false);
                        return Ok(RunOutcome::Blocked);
                    }
                }
                if self.procs[p as usize].barriers {
                    // a parallel job ends together on all its nodes, at a last barrier
                    self.arrive(p, true);
                    return Ok(RunOutcome::Blocked);
                }
                self.exit(p);
                return Ok(RunOutcome::Finished);
            }
            self.procs[p as usize].sync_barrier();
            if self.procs[p as usize].counters.references >= self.procs[p as usize].barrier_at {
                self.arrive(p, false);
                return Ok(RunOutcome::Blocked);
            }
            // the loop that looks for free records only for the batches that hold one
            let stop = if self.procs[p as usize].batch_frees { self.run_hits::<true>(p, until) } else { self.run_hits::<false>(p, until) };
            if self.now > MAX_SIM_NS {
                return Err(clock_overflow(&format!("while process '{}' ran", self.procs[p as usize].name)));
            }
            match stop {
                Some(Stop::Fault(local, vpage)) => match self.fault(p, local, vpage)? {
                    // the fault may have queued events (kswapd woken now): stop at them, so
                    // that they happen when they are due and not when the process yields
                    FaultOutcome::Continue => until = until.min(self.events.next_time().unwrap_or(u64::MAX)),
                    FaultOutcome::Blocked => return Ok(RunOutcome::Blocked),
                },
                Some(Stop::Free(local)) => self.free_page(p, local),
                None => {}
            }
        }
    }

    /// The hot loop: executes resident references of the current batch. Returns the
    /// faulting record's local page and virtual page, or (`FREES`: the batch holds free
    /// records) a free record's local page, or None when the batch ended or the time
    /// limit was reached.
    #[inline]
    fn run_hits<const FREES: bool>(&mut self, p: u16, until: u64) -> Option<Stop> {
        let proc = &mut self.procs[p as usize];
        let flags = &mut self.pages.flags;
        let stamps = &mut self.pages.stamp;
        let stamp = self.epoch + 1;
        let reclaimer = &mut self.reclaimer;
        let slots = &mut self.pages.slot;
        let slot_owner = &mut self.slot_owner;
        let swap = &mut self.swap;
        let free_stale = self.swap_cfg.frees_stale_slots();
        // freebsd8: a write to a page that is not dirty goes to the fault path, which
        // tells a write-protected or busy page from one the hardware just dirties
        let clean_writes_fault = self.fbsd.is_some();
        let mut prefetch_hits = 0;
        let b = &proc.batch;
        let mut now = self.now;
        let mut carry = proc.carry;
        let mut pos = proc.pos;
        let (mut refs, mut recs, mut nap) = (0u64, 0u64, 0u64);
        let mut fault = None;
        // references left in this superstep (the loop stops at the record that ends it)
        let budget = proc.barrier_at - proc.counters.references;
        while pos < b.id.len() && now < until && refs < budget {
            let local = b.id[pos];
            let gid = proc.gid_of[local as usize];
            if FREES && b.kind[pos] == AccessKind::Free {
                fault = Some(Stop::Free(local));
                break;
            }
            let write = b.kind[pos] == AccessKind::Write;
            if gid == NO_GID || flags[gid as usize] & RESIDENT == 0 {
                fault = Some(Stop::Fault(local, b.page[pos]));
                break;
            }
            if write && clean_writes_fault && flags[gid as usize] & DIRTY == 0 {
                fault = Some(Stop::Fault(local, b.page[pos]));
                break;
            }
            let f = &mut flags[gid as usize];
            if *f & PREFETCHED != 0 {
                *f &= !PREFETCHED;
                prefetch_hits += 1;
            }
            *f |= REFERENCED;
            if write {
                if *f & SWAP_VALID != 0 && free_stale {
                    // the swap copy is stale now: BSD frees its slot (swap_pager_freespace)
                    release_slot(swap, slot_owner, slots, gid);
                }
                *f = (*f | DIRTY) & !SWAP_VALID;
            }
            reclaimer.on_hit(gid);
            if stamps[gid as usize] != stamp {
                stamps[gid as usize] = stamp;
                nap += 1;
            }
            let repeat = b.repeat[pos] as u64;
            let mut cost = proc.cpu_ns_per_ref * repeat as f64;
            if proc.use_gaps {
                cost += proc.cpu_ns_per_instruction * b.gap[pos] as f64;
            }
            carry += cost;
            let whole = carry as u64;
            carry -= whole as f64;
            // saturating: the caller turns a clock past MAX_SIM_NS into an error
            now = now.saturating_add(whole);
            refs += repeat;
            recs += 1;
            pos += 1;
        }
        proc.pos = pos;
        proc.carry = carry;
        proc.counters.references += refs;
        proc.counters.records += recs;
        proc.interval_nap += nap;
        self.prefetch_hits += prefetch_hits;
        self.now = now;
        fault
    }

    /// The fault path for local page `local` of process `p`.
    fn fault(&mut self, p: u16, local: u32, vpage: u64) -> Result<FaultOutcome> {
        let mut gid = self.procs[p as usize].gid_of[local as usize];
        if gid == NO_GID {
            gid = self.pages.add(p, local, vpage);
            let proc = &mut self.procs[p as usize];
            proc.gid_of[local as usize] = gid;
            proc.by_vpage.insert(vpage, gid);
            proc.counters.distinct_pages += 1;
            self.reclaimer.reserve(self.pages.len());
            if let Some(l) = self.linux22.as_mut() {
                l.swap_out.insert(p, vpage, gid);
                if let Some(c) = l.cache.as_mut() {
                    c.reserve(self.pages.len());
                }
            }
        }
        if self.swap_cache_on() {
            return Ok(self.fault22(p, gid));
        }
        if self.fbsd.is_some() {
            return self.fb_fault(p, gid);
        }
        let f = self.pages.flags[gid as usize];
        if f & PAGING_IN != 0 {
            // a read already brings it in (read-around, adaptive page-in): wait for it
            let proc = &mut self.procs[p as usize];
            proc.waiting_on = gid;
            proc.state = RunState::BlockedIo;
            return Ok(FaultOutcome::Blocked);
        }
        if f & WRITING != 0 {
            // still in the swap cache: map it back without I/O (a minor fault); a page
            // freed since its write began comes back clean with no swap copy, as a
            // zero-filled page would
            self.reclaimer.on_fault(gid, vpage);
            if f & TOUCHED == 0 {
                self.procs[p as usize].mad += 1;
            }
            self.pages.flags[gid as usize] = f | RESIDENT | TOUCHED;
            self.pool.writing -= 1;
            self.make_resident_counted(p, gid);
            self.procs[p as usize].counters.minor_faults += 1;
            self.now += self.minor_ns;
            return Ok(FaultOutcome::Continue);
        }
        self.reclaimer.before_fault(gid, vpage);
        if self.free_pages_on() {
            // Linux 2.2's __get_free_pages, without the swap cache
            if !self.get_free_page(p) {
                return Ok(FaultOutcome::Blocked);
            }
        } else {
            self.reclaiming = Some(p);
            let got = self.take_frame();
            self.reclaiming = None;
            if !got {
                self.procs[p as usize].state = RunState::BlockedFrame;
                match self.write_stall.take() {
                    // its direct reclaim's page-out reached the write bound (async_writes.rs)
                    Some(stall) => self.wait_for_page_out(p, stall),
                    None => self.frame_waiters.push_back(p),
                }
                return Ok(FaultOutcome::Blocked);
            }
        }
        self.reclaimer.on_fault(gid, vpage);
        if f & SWAP_VALID != 0 {
            // major fault: ask for the token (section 5.2, before do_swap_page), then read
            self.token_on_major_fault(p);
            self.count_major_fault(p);
            self.now += self.major_cpu_ns;
            self.pages.flags[gid as usize] = f | PAGING_IN;
            let slot = self.pages.slot[gid as usize] as u64;
            let (lo, hi) = self.read_around_range(gid, slot);
            let mut arrivals = Vec::with_capacity((hi - lo + 1) as usize);
            arrivals.push(Event::PageIn(p, gid));
            for s in lo..=hi {
                if s != slot {
                    let other = self.slot_owner[s as usize];
                    self.pages.flags[other as usize] |= PAGING_IN;
                    arrivals.push(Event::Prefetched(other));
                }
            }
            self.io(IoKind::Read, lo, (hi - lo + 1) as u32, arrivals);
            self.procs[p as usize].state = RunState::BlockedIo;
            return Ok(FaultOutcome::Blocked);
        }
        // minor fault: first touch, or a clean page never written out (zero-filled again)
        if f & TOUCHED == 0 {
            self.procs[p as usize].mad += 1;
        }
        self.pages.flags[gid as usize] = f | TOUCHED | RESIDENT;
        self.make_resident_counted(p, gid);
        self.procs[p as usize].counters.minor_faults += 1;
        self.now += self.minor_ns;
        Ok(FaultOutcome::Continue)
    }

    fn make_resident_counted(&mut self, p: u16, gid: Gid) {
        self.procs[p as usize].rss += 1;
        self.reclaimer.on_resident(gid);
    }

    pub(super) fn account_release(&mut self, released: Option<(u16, u64)>) {
        if let Some((h, held)) = released {
            self.procs[h as usize].counters.token_held_ns += held;
        }
    }

    /// A frame for a fault: above the min watermark it is taken at once; at or below
    /// it the faulting process reclaims directly first (Linux 2.2 __get_free_pages),
    /// unless a batch of page-out writes is already in flight.
    /// False when none can be had now (the process waits for a write to finish).
    fn take_frame(&mut self) -> bool {
        self.write_stall = None;
        // with a batch of pages already on their way out the process waits for them
        // instead of evicting more: otherwise a program that outruns the disk has its
        // newest pages thrown out one by one behind the write queue
        if self.pool.free <= self.pool.watermarks.min && self.pool.writing < self.reclaim_batch as u64 {
            self.reclaim(self.reclaim_batch);
            self.flush_buffer();
        }
        if self.write_stall.is_some() {
            // the reclaim's page-out reached the write bound: the process waits in it
            return false;
        }
        if self.pool.free == 0 {
            return false;
        }
        self.pool.free -= 1;
        if self.pool.below_low() && !self.kswapd_pending {
            self.kswapd_pending = true;
            self.events.push(self.now, Event::Kswapd);
        }
        true
    }

    /// Evicts pages until `n` have gone (a page-out cluster counts all its pages, as the
    /// BSD page daemon counts pages toward its target); returns how many went.
    pub(super) fn reclaim(&mut self, n: u32) -> u32 {
        if self.free_pages_on() {
            return self.reclaim22(n);
        }
        let swap_cnt_victims = self.linux22.as_ref().is_some_and(|l| l.swap_out.rule == SwapOutRule::SwapCnt);
        // a page-out write that reaches the write bound stops the loop (async_writes.rs)
        self.write_stall = None;
        let mut done = 0;
        let mut refused = 0;
        while done < n && self.write_stall.is_none() {
            if let Some(gid) = self.selective_victim() {
                done += self.evict(gid);
                continue;
            }
            let procs = &self.procs;
            let skip = self.token.protected(|h| procs[h as usize].swapping, |h| super::free_pages::in_fault(procs, h), self.reclaiming);
            let victim = if swap_cnt_victims { self.swap_cnt_victim(skip) } else { self.reclaimer.victim(&mut self.pages, &mut self.procs, skip) };
            let Some(victim) = victim else {
                break;
            };
            if victim.from_skipped {
                let released = self.token.on_self_take(self.now);
                self.account_release(released);
            }
            let gone = self.evict(victim.gid);
            if gone == 0 {
                // a page that cannot leave now (see evict): the policy moves on, unless
                // every resident page is one
                refused += 1;
                if refused > self.pool.frames {
                    break;
                }
            }
            done += gone;
        }
        done
    }

    /// Evicts one page, or with clustering a dirty page and its cluster; returns the
    /// number of pages that left memory.
    pub(super) fn evict(&mut self, gid: Gid) -> u32 {
        let f = self.pages.flags[gid as usize];
        if f & (DIRTY | WRITING) == DIRTY | WRITING {
            // written again while background writing writes it out: it cannot leave until
            // that write is done; it counts as referenced so that reclaim moves on
            self.pages.flags[gid as usize] = f | REFERENCED;
            self.reclaimer.on_hit(gid);
            return 0;
        }
        if f & DIRTY != 0 && f & WRITING == 0 {
            if self.page_out_must_wait() {
                // FreeBSD 8.2 getpbuf: the writer sleeps before this write; the victim
                // stays where it is (a policy takes it back: it handed it out)
                if self.reclaimer.kind == ReclaimKind::Policy {
                    self.reclaimer.on_hit(gid);
                }
                return 0;
            }
            if self.swap_cfg.clustering != ClusteringKind::None {
                return self.launder(gid);
            }
            // written alone: to the slot it keeps for life, or with swap.free_on_write to
            // the next free slot once its old one went stale
            self.unmap_for_write(gid);
            let mut slot = self.pages.slot[gid as usize];
            if slot == NO_SLOT {
                // run_system checked that the swap area has a slot for every page
                slot = self.swap.allocate_one().expect("swap sized to hold every page") as u32;
                self.set_slot(gid, slot as u64);
            }
            self.page_out_io(slot as u64, 1, vec![Event::WriteDone(gid)]);
            return 1;
        }
        self.record_eviction(gid);
        let owner = self.pages.owner[gid as usize];
        self.procs[owner as usize].rss -= 1;
        self.reclaimer.on_gone(gid);
        let base = f & !(RESIDENT | REFERENCED);
        if f & WRITING != 0 {
            // rescued from the swap cache and evicted again before the write finished:
            // the frame is released when that write completes
            self.pages.flags[gid as usize] = base & !DIRTY;
            self.pool.writing += 1;
        } else {
            self.pages.flags[gid as usize] = base;
            self.free_frame();
        }
        1
    }

    /// Takes a resident dirty page out of memory for a page-out write: its frame stays
    /// held until the write completes. Its swap slot is left to the caller.
    pub(super) fn unmap_for_write(&mut self, gid: Gid) {
        self.record_eviction(gid);
        let owner = self.pages.owner[gid as usize];
        self.procs[owner as usize].rss -= 1;
        self.procs[owner as usize].counters.page_outs += 1;
        self.reclaimer.on_gone(gid);
        let f = self.pages.flags[gid as usize];
        self.pages.flags[gid as usize] = (f & !(RESIDENT | REFERENCED | DIRTY | SWAP_VALID | PREFETCHED)) | WRITING;
        self.pool.writing += 1;
    }

    /// Page-out of a dirty victim with clustering (mclustering-pageout.txt section 2):
    /// the victim's cluster of dirty neighbours in the inactive list, written at once
    /// (BSD VM) or collected in mClustering's buffer.
    fn launder(&mut self, victim: Gid) -> u32 {
        let owner = self.pages.owner[victim as usize];
        let vpage = self.pages.vpage[victim as usize];
        let (lo, hi) = {
            let proc = &self.procs[owner as usize];
            let pages = &self.pages;
            let reclaimer = &self.reclaimer;
            compose_cluster(vpage, self.swap_cfg.max_cluster, self.swap_cfg.cluster_back, |v| {
                proc.by_vpage.get(&v).is_some_and(|&g| {
                    let f = pages.flags[g as usize];
                    // FreeBSD 8.2 vm_pageout_clean: dirty, on the inactive queue, not
                    // busy (the reference bit is not looked at)
                    f & (RESIDENT | DIRTY) == (RESIDENT | DIRTY)
                        && f & (WRITING | PAGING_IN) == 0
                        && reclaimer.clusterable(g)
                })
            })
        };
        let cluster: Vec<Gid> = (lo..=hi).map(|v| self.procs[owner as usize].by_vpage[&v]).collect();
        for &g in &cluster {
            self.unmap_for_write(g);
            // its old slot is stale: clustered page-outs allocate runs afresh
            release_slot(&mut self.swap, &mut self.slot_owner, &mut self.pages.slot, g);
        }
        let pages = cluster.len() as u32;
        match self.swap_cfg.clustering {
            ClusteringKind::Mclustering => {
                for clusters in self.buffer.offer(cluster) {
                    self.write_clusters(&clusters);
                }
            }
            _ => self.write_clusters(&[cluster]),
        }
        pages
    }

    /// Writes clusters: one buffer's worth under mClustering, one cluster under BSD VM.
    pub(super) fn write_clusters(&mut self, clusters: &[Vec<Gid>]) {
        let writes: Vec<Write<Gid>> = match self.swap_cfg.clustering {
            ClusteringKind::Mclustering => allocate_mclustering(&mut self.swap, clusters),
            _ => clusters.iter().map(|c| allocate_bsd(&mut self.swap, c)).collect::<Option<Vec<_>>>().map(|w| w.concat()),
        }
        .expect("swap sized to hold every page");
        for w in writes {
            for (k, &g) in w.pages.iter().enumerate() {
                self.set_slot(g, w.slot + k as u64);
            }
            let events = w.pages.iter().map(|&g| Event::WriteDone(g)).collect();
            self.page_out_io(w.slot, w.pages.len() as u32, events);
        }
    }

    /// Writes whatever mClustering's buffer holds (the end of a page-out run).
    pub(super) fn flush_buffer(&mut self) {
        if !self.buffer.is_empty() {
            let clusters = self.buffer.take();
            self.write_clusters(&clusters);
        }
    }

    /// The slots to read for a major fault on `gid` at `slot`, as an inclusive range that
    /// contains `slot`: the faulting page alone, or with read-around its neighbours on
    /// swap that qualify, as long as free frames remain above the min watermark for them.
    pub(super) fn read_around_range(&mut self, gid: Gid, slot: u64) -> (u64, u64) {
        let (window, same_area) = match self.swap_cfg.read_around {
            ReadAroundKind::None | ReadAroundKind::Auto => return (slot, slot),
            ReadAroundKind::Bsd => (self.swap_cfg.read_window as u64, true),
            ReadAroundKind::Linux => (1u64 << self.swap_cfg.page_cluster.unwrap_or(4), false),
        };
        let start = slot - slot % window;
        let end = (start + window).min(self.slot_owner.len() as u64);
        let owner = self.pages.owner[gid as usize];
        let vpage = self.pages.vpage[gid as usize];
        let qualifies = |m: &Machine, s: u64| -> bool {
            let g = m.slot_owner[s as usize];
            if g == NO_GID {
                return false;
            }
            let f = m.pages.flags[g as usize];
            if f & (RESIDENT | PAGING_IN | WRITING) != 0 || f & SWAP_VALID == 0 {
                return false;
            }
            !same_area || (m.pages.owner[g as usize] == owner && m.pages.vpage[g as usize] as i128 - vpage as i128 == s as i128 - slot as i128)
        };
        let (mut lo, mut hi) = (slot, slot);
        // grow outward, forward first (sequential access is the common case), while a
        // frame can be had without reclaiming for it
        loop {
            let mut grew = false;
            if hi + 1 < end && self.pool.free > self.pool.watermarks.min && qualifies(self, hi + 1) {
                hi += 1;
                self.pool.free -= 1;
                grew = true;
            }
            if lo > start && self.pool.free > self.pool.watermarks.min && qualifies(self, lo - 1) {
                lo -= 1;
                self.pool.free -= 1;
                grew = true;
            }
            if !grew {
                return (lo, hi);
            }
        }
    }

    /// Occupies a fraction of the swap slots at random before the run, so that
    /// contiguous runs are scarce (mclustering-pageout.txt section 3.4).
    fn fragment_swap(&mut self) {
        let f = self.swap_cfg.fragmentation;
        if f <= 0.0 {
            return;
        }
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(self.seed ^ 0x5eed_5a9);
        let slots = self.swap.slots();
        let target = (slots as f64 * f) as u64;
        let mut taken = 0;
        while taken < target {
            let s = rng.gen_range(0..slots);
            if !self.swap.is_used(s) {
                self.swap.occupy(s);
                taken += 1;
            }
        }
    }

    /// A process ends: its pages are freed (frames held by writes in flight come back
    /// when the writes complete).
    fn exit(&mut self, p: u16) {
        if self.fbsd.is_some() {
            self.fb_exit(p);
        }
        let now = self.now;
        let released = self.token.on_exit(p, now);
        self.account_release(released);
        self.load.forget(p);
        let gids = std::mem::take(&mut self.procs[p as usize].gid_of);
        self.forget_process22(p);
        let cached = self.swap_cache_on();
        if cached {
            self.exit_pages_cached(&gids);
        }
        for &gid in gids.iter().filter(|_| !cached) {
            if gid == NO_GID {
                continue;
            }
            let f = self.pages.flags[gid as usize];
            if f & RESIDENT != 0 {
                self.reclaimer.on_gone(gid);
                if f & WRITING != 0 {
                    self.pool.writing += 1;
                } else {
                    self.free_frame();
                }
            }
            self.pages.flags[gid as usize] = f & WRITING;
            if f & WRITING == 0 && self.swap_cfg.frees_stale_slots() {
                release_slot(&mut self.swap, &mut self.slot_owner, &mut self.pages.slot, gid);
            }
        }
        let proc = &mut self.procs[p as usize];
        proc.gid_of = gids;
        proc.rss = 0;
        proc.mad = 0;
        proc.state = RunState::Done;
        proc.end_ns = now;
        if proc.suspended {
            proc.suspended = false;
            proc.counters.suspended_ns += now - proc.suspended_since;
        }
        proc.close();
        self.live -= 1;
        self.job_exited(p);
    }

    /// A free record of process `p`'s local page (the program gave the page back: munmap,
    /// or a heap shrinking with brk). The page leaves memory without being written back,
    /// its swap slot is freed and it leaves MAD; its next touch is a zero-fill minor fault
    /// (a fresh page, as after munmap and mmap). A frame held by a page-out write in
    /// flight, or by a read-around read in flight, returns to the pool when that I/O
    /// completes. A free of a page never touched, or already freed, does nothing.
    fn free_page(&mut self, p: u16, local: u32) {
        let proc = &mut self.procs[p as usize];
        let pos = proc.pos;
        proc.pos += 1;
        if proc.use_gaps {
            proc.carry += proc.cpu_ns_per_instruction * proc.batch.gap[pos] as f64;
            let whole = proc.carry as u64;
            proc.carry -= whole as f64;
            self.now = self.now.saturating_add(whole);
        }
        let gid = proc.gid_of[local as usize];
        if gid == NO_GID {
            return;
        }
        let f = self.pages.flags[gid as usize];
        if f & TOUCHED == 0 {
            return;
        }
        proc.mad -= 1;
        proc.counters.pages_freed += 1;
        if self.swap_cache_on() {
            // Linux 2.2: as at exit, the swap cache gives back the frame and the slot
            if f & RESIDENT != 0 {
                self.procs[p as usize].rss -= 1;
                self.reclaimer.on_gone(gid);
            }
            self.exit_pages_cached(&[gid]);
            return;
        }
        if self.fbsd.is_some() {
            // FreeBSD 8.2: off its page queue (an unmapped page's frame comes back there)
            self.fb_forget_page(gid);
            self.fb_free_wakeup();
        }
        let proc = &mut self.procs[p as usize];
        if f & RESIDENT != 0 {
            proc.rss -= 1;
            self.reclaimer.on_gone(gid);
            if f & WRITING != 0 {
                // rescued from the swap cache while its write is in flight: the frame is
                // released when that write completes
                self.pool.writing += 1;
            } else {
                self.free_frame();
            }
        }
        release_slot(&mut self.swap, &mut self.slot_owner, &mut self.pages.slot, gid);
        // the I/O in flight keeps its mark; everything else about the page is gone
        self.pages.flags[gid as usize] = f & (WRITING | PAGING_IN);
    }

    fn sample(&mut self, progress: Progress) -> Result<()> {
        let now = self.now;
        self.last_sample_ns = now;
        let log = &mut self.log;
        log.t_ns.push(now);
        log.free.push(self.pool.free);
        log.cpu_busy_ns.push(self.cpu_busy - self.last_cpu_busy);
        let disk_busy = self.disk.busy_ns_until(now);
        log.disk_busy_ns.push(disk_busy - self.last_disk_busy);
        self.last_cpu_busy = self.cpu_busy;
        self.last_disk_busy = disk_busy;
        let stats = self.disk.stats();
        log.pages_in.push(stats.pages_read - self.last_pages_read);
        log.pages_out.push(stats.pages_written - self.last_pages_written);
        self.last_pages_read = stats.pages_read;
        self.last_pages_written = stats.pages_written;
        let stamp = self.epoch + 1;
        for proc in &mut self.procs {
            proc.series.mad.push(proc.mad);
            proc.series.rss.push(proc.rss);
            proc.series.nap.push(proc.interval_nap);
            proc.series.npf.push(proc.interval_npf);
            proc.interval_nap = 0;
            proc.interval_npf = 0;
            if let Some(st) = &mut proc.space_time {
                let buckets = self.space_time_buckets as usize;
                let (mut visited, mut resident, mut swapped) = (vec![0u32; buckets], vec![0u32; buckets], vec![0u32; buckets]);
                for (local, &gid) in proc.gid_of.iter().enumerate() {
                    if gid == NO_GID {
                        continue;
                    }
                    let b = ((local as u64 / st.pages_per_bucket) as usize).min(buckets - 1);
                    let f = self.pages.flags[gid as usize];
                    if f & TOUCHED == 0 {
                        continue;
                    }
                    if self.pages.stamp[gid as usize] == stamp {
                        visited[b] += 1;
                    } else if f & RESIDENT != 0 {
                        resident[b] += 1;
                    } else {
                        swapped[b] += 1;
                    }
                }
                st.visited.push(visited);
                st.resident.push(resident);
                st.swapped.push(swapped);
            }
        }
        if self.log.len() >= self.max_samples {
            // the series are full: merge samples in pairs, sample half as often
            self.log.coarsen();
            for proc in &mut self.procs {
                coarsen_process(&mut proc.series, proc.space_time.as_mut());
            }
            self.sample_ns = self.sample_ns.saturating_mul(2);
        }
        self.epoch += 1;
        let released = self.token.tick(now);
        self.account_release(released);
        if self.live > 0 {
            self.events.push(now + self.sample_ns, Event::Sample);
        }
        if !progress(now / 1_000_000) {
            return Err(Error::Interrupted);
        }
        Ok(())
    }

    fn finish(mut self) -> SystemResult {
        let names: Vec<String> = self.procs.iter().map(|p| p.name.clone()).collect();
        let stats = self.disk.stats().clone();
        let end = self.now;
        let processes = self
            .procs
            .iter_mut()
            .map(|p| ProcessResult {
                name: p.name.clone(),
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                dedicated_ns: 0,
                counters: std::mem::take(&mut p.counters),
                series: std::mem::take(&mut p.series),
                space_time: p.space_time.take(),
            })
            .collect();
        SystemResult {
            end_ns: end,
            cpu_busy_ns: self.cpu_busy,
            disk_busy_ns: self.disk.busy_ns_until(u64::MAX),
            disk_reads: stats.reads,
            disk_writes: stats.writes,
            pages_read: stats.pages_read,
            pages_written: stats.pages_written,
            write_sizes: stats.write_sizes.clone(),
            read_sizes: stats.read_sizes.clone(),
            prefetched: self.prefetched,
            prefetch_hits: self.prefetch_hits,
            reclaim_counters: self
                .reclaimer
                .counters()
                .into_iter()
                .chain(self.fbsd.as_ref().map(|f| f.counter_list()).unwrap_or_default())
                .chain(self.linux22.as_ref().filter(|l| l.free.is_some()).map(|l| l.counter_list()).unwrap_or_default())
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            disk_counters: self.disk_counters(&stats),
            processes,
            series: std::mem::take(&mut self.log).into_series(),
            sample_ns: self.sample_ns,
            token_events: self
                .token
                .events
                .iter()
                .map(|e| TokenRecord { t_ns: e.t_ns, event: e.event, process: names[e.process as usize].clone() })
                .collect(),
        }
    }
}

impl Machine {
    /// Frees a page's swap slot, if it has one.
    pub(super) fn release_page_slot(&mut self, gid: Gid) {
        release_slot(&mut self.swap, &mut self.slot_owner, &mut self.pages.slot, gid);
    }

    /// Gives a page the swap slot `slot`.
    pub(super) fn set_slot(&mut self, gid: Gid, slot: u64) {
        self.pages.slot[gid as usize] = slot as u32;
        self.slot_owner[slot as usize] = gid;
    }
}

/// Frees a page's swap slot, if it has one (its swap copy is stale or no longer wanted).
/// A free function over the three fields so that the hit loop, which borrows them
/// apart, can use it too.
#[inline]
fn release_slot(swap: &mut SwapSpace, slot_owner: &mut [Gid], slots: &mut [u32], gid: Gid) {
    let slot = slots[gid as usize];
    if slot != NO_SLOT {
        swap.free(slot as u64, 1);
        slot_owner[slot as usize] = NO_GID;
        slots[gid as usize] = NO_SLOT;
    }
}
