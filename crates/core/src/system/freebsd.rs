//! The FreeBSD 8.2 virtual memory system, `system.reclaim = "freebsd8"`: the machine the
//! paper of mclustering-pageout.txt ran on (section 3.1), modelled from the kernel's
//! source (FreeBSD 8.x, sys/vm), not from the paper's prose. Read: vm_pageout.c
//! (`vm_pageout`, `vm_pageout_scan`, `vm_pageout_page_stats`, `vm_pageout_clean`),
//! vm_page.c (`vm_page_alloc`, `vm_page_activate`, `_vm_page_deactivate`,
//! `vm_page_cache`, `vm_page_free_wakeup`, `vm_waitpfault`), vm_fault.c (`vm_fault`,
//! `vm_fault_additional_pages`, `vm_fault_prefault`), swap_pager.c
//! (`swap_pager_haspage`, `swap_pager_getpages`, `swap_pager_putpages`,
//! `swp_pager_async_iodone`), vm_page.h (ACT_*), sys/vmmeter.h (`vm_paging_target`,
//! `vm_paging_needed`, `vm_page_count_min`, `vm_page_count_severe`). The stored copies
//! read were of the 8.x line (swap_pager.c with the 8.0 swap accounting, vm_fault.c
//! before the page locks of 9.0) and, for vm_pageout.c, of 9-CURRENT of 2011, whose
//! scan differs from 8.2's in its locking only.
//!
//! The model, in the engine's terms:
//! - A page is *mapped* when its `RESIDENT` flag is set (the hit loop runs on it; RSS
//!   counts it) and *in memory* when it is mapped or on one of this module's queues
//!   (`queue`): the active and inactive queues (the object's resident pages, `memq`) and
//!   the cache (clean pages with a swap copy, reusable as free pages and found again by
//!   a fault without I/O). Free frames are `pool.free`; free + cache is what every
//!   target of the page daemon counts.
//! - The hardware referenced bit is `REFERENCED` (`pmap_ts_referenced`); the software
//!   bit `PG_REFERENCED`, which `vm_fault` sets on the page it resolves, is `SOFT_REF`.
//! - Laundered pages stay in memory, write-protected, and become clean when their write
//!   completes (`swp_pager_async_iodone`); the daemon caches them on a later scan. A
//!   write to a page whose page-out is in flight waits for it (`vm_fault` sleeps on the
//!   busy page); a write to a write-protected page is a soft fault.
//! - The page daemon runs at an instant of simulated time (its CPU time is not
//!   modelled), woken by `pagedaemon_wakeup` or by its sleep's timeout.

use serde::Deserialize;

use super::config::{ClusteringKind, ReadAroundKind, ReclaimKind, SystemConfig};
use super::disk::IoKind;
use super::events::Event;
use super::machine::{FaultOutcome, Machine};
use super::memory::*;
use super::pageout::compose_cluster;
use super::process::RunState;
use crate::policy::PageList;
use crate::trace::AccessKind;
use crate::{Error, Result};

/// vm_page.h: the activation count's steps and bounds.
pub const ACT_DECLINE: u8 = 1;
pub const ACT_ADVANCE: u8 = 3;
pub const ACT_INIT: u8 = 5;
pub const ACT_MAX: u8 = 64;

/// vm_fault.c: pages read ahead of and behind a fault (`VM_FAULT_READ_AHEAD`,
/// `VM_FAULT_READ_BEHIND`), and the window of the sequential heuristic (`VM_FAULT_READ`).
pub const VM_FAULT_READ_AHEAD: u64 = 8;
pub const VM_FAULT_READ_BEHIND: u64 = 7;
pub const VM_FAULT_READ: u64 = VM_FAULT_READ_AHEAD + VM_FAULT_READ_BEHIND + 1;
/// swap_pager.c: `swap_pager_haspage` looks for contiguous swap blocks up to
/// `SWB_NPAGES / 2 - 1` pages on each side (`SWB_NPAGES = MAX_PAGEOUT_CLUSTER = 16`).
pub const SWB_NPAGES: u64 = 16;
/// vm_fault.c `vm_fault_prefault`: the order in which the neighbours of a fault are
/// mapped (`prefault_pageorder`, PFBAK = PFFOR = 4).
const PREFAULT_ORDER: [i64; 8] = [-1, 1, -2, 2, -3, 3, -4, 4];
/// amd64 pmap.c: the pages one page-table page maps (`NPTEPG`, 2 MB of 4 KB pages; 1024
/// on i386 without PAE). `pmap_is_prefaultable` wants the page-table page to exist.
const NPTEPG: u64 = 512;
/// sys/param.h `MAXBSIZE` (bytes), in `v_pageout_free_min`.
const MAXBSIZE: u64 = 65536;
/// vm_pageout.c `vm_pageout`: a pass after the second sleeps `hz / 2` before the next.
const RETRY_SLEEP_NS: u64 = 500_000_000;
/// vm_pageout.c: `vm_pageout_stats_interval` (5 s, sysctl vm.pageout_stats_interval) and
/// the full scan every fourth interval (`vm_pageout_full_stats_interval`).
const STATS_INTERVAL_NS: u64 = 5_000_000_000;
const FULL_STATS_INTERVALS: u32 = 4;

/// What a laundered cluster takes off the page daemon's shortage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LaunderCount {
    /// 8.2 `vm_pageout_scan`: `--page_shortage` once per `vm_pageout_clean` that wrote
    /// anything, whatever the size of the cluster.
    #[default]
    Cluster,
    /// Every page of the cluster counts (the engine's `reclaim = "bsd"`).
    Pages,
}

/// How `vm_pageout_clean` gathers the dirty neighbours of a victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterScan {
    /// 8.2 `vm_pageout_clean`: backward until a `vm_pageout_page_count` alignment
    /// boundary, then forward, then backward again past the boundary, up to
    /// `vm_pageout_page_count` pages.
    #[default]
    Aligned,
    /// mclustering-pageout.txt section 2's description: `swap.cluster_back` pages
    /// backward, then forward, up to `swap.max_cluster` (pageout.rs `compose_cluster`).
    Paper,
}

/// `[system.freebsd]`: every rule of the FreeBSD 8.2 model that differs from the
/// engine's simplified `reclaim = "bsd"` is a switch whose default is 8.2's behaviour.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FreeBsdConfig {
    /// Pages of the machine whose `vm_pageout` targets are computed; the targets are
    /// then scaled to `system.frames`. None: `system.frames` itself (the kernel's
    /// formulas on this memory). The paper's 1 GB machine is 262144.
    pub memory_pages: Option<u64>,
    /// `vm_pageout_page_count`, the largest cluster: None is 8.2's (16, or 8 on a
    /// machine of fewer than 2000 pages).
    pub pageout_page_count: Option<u32>,
    pub cluster_scan: ClusterScan,
    /// `vm_max_launder` (sysctl vm.max_launder, 32): clusters laundered per scan of the
    /// first pass (later passes: 10000).
    pub max_launder: u32,
    /// `PG_WINATCFLS`: on the daemon's first pass a dirty inactive page goes round the
    /// inactive queue once more before it is laundered.
    pub dirty_second_pass: bool,
    pub launder_counts: LaunderCount,
    /// `swp_pager_async_iodone`: the pages read around a fault arrive unmapped on the
    /// inactive queue (false: mapped, as `reclaim = "bsd"` has them).
    pub readahead_unmapped: bool,
    /// `vm_fault`'s sequential heuristic: a hard fault within `VM_FAULT_READ` pages after
    /// the last read unmaps the resident pages behind it (caching the clean ones) and
    /// reads only ahead.
    pub cache_behind: bool,
    /// `vm_fault_prefault`: after a fault, its resident neighbours (4 each side) are
    /// mapped read-only without faulting (the rule as the 8.x source has it: `fb_prefault`).
    pub prefault: bool,
    /// `vm_pageout_page_stats`: the active queue is aged every 5 s while the daemon
    /// sleeps.
    pub page_stats: bool,
}

impl Default for FreeBsdConfig {
    fn default() -> Self {
        FreeBsdConfig {
            memory_pages: None,
            pageout_page_count: None,
            cluster_scan: ClusterScan::Aligned,
            max_launder: 32,
            dirty_second_pass: true,
            launder_counts: LaunderCount::Cluster,
            readahead_unmapped: true,
            cache_behind: true,
            prefault: true,
            page_stats: true,
        }
    }
}

/// The page daemon's thresholds (`struct vmmeter` fields), in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeBsdTargets {
    pub pageout_page_count: u32,
    pub interrupt_free_min: u64,
    pub pageout_free_min: u64,
    pub free_reserved: u64,
    pub free_severe: u64,
    pub free_min: u64,
    pub free_target: u64,
    pub cache_min: u64,
    pub cache_max: u64,
    pub inactive_target: u64,
    /// `vm_pageout_stats_max` (= `v_free_target`).
    pub stats_max: u64,
}

impl FreeBsdTargets {
    /// vm_pageout.c `vm_pageout`'s initialisation for a machine of `pages` pages (all
    /// free when the daemon starts), with `ppc` as `vm_pageout_page_count` if given.
    pub fn kernel(pages: u64, page_size: u64, ppc: Option<u32>) -> FreeBsdTargets {
        let interrupt_free_min = 2;
        let pageout_page_count = ppc.unwrap_or(if pages < 2000 { 8 } else { 16 });
        let mut free_min = if pages > 1024 { 4 + (pages - 1024) / 200 } else { 4 };
        let pageout_free_min = 2 * MAXBSIZE / page_size + interrupt_free_min;
        let free_reserved = pageout_page_count as u64 + pageout_free_min + pages / 768;
        let free_severe = free_min / 2 + free_reserved;
        free_min += free_reserved;
        let free_count = pages;
        let free_target = if free_count > 6144 { 4 * free_min + free_reserved } else { 2 * free_min + free_reserved };
        let (cache_min, cache_max, mut inactive_target) =
            if free_count > 2048 { (free_target, 2 * free_target, 3 * free_target / 2) } else { (0, 0, free_count / 4) };
        inactive_target = inactive_target.min(free_count / 3);
        FreeBsdTargets {
            pageout_page_count,
            interrupt_free_min,
            pageout_free_min,
            free_reserved,
            free_severe,
            free_min,
            free_target,
            cache_min,
            cache_max,
            inactive_target,
            stats_max: free_target,
        }
    }

    /// The kernel's targets for `cfg`'s machine, scaled to its frames (rounded up).
    pub fn for_config(cfg: &SystemConfig, frames: u64) -> FreeBsdTargets {
        let f = &cfg.system.freebsd;
        let pages = f.memory_pages.unwrap_or(frames).max(1);
        let t = Self::kernel(pages, cfg.system.page_size, f.pageout_page_count);
        if pages == frames {
            return t;
        }
        let s = |x: u64| ((x as u128 * frames as u128).div_ceil(pages as u128)) as u64;
        FreeBsdTargets {
            pageout_page_count: t.pageout_page_count,
            interrupt_free_min: s(t.interrupt_free_min),
            pageout_free_min: s(t.pageout_free_min),
            free_reserved: s(t.free_reserved),
            free_severe: s(t.free_severe),
            free_min: s(t.free_min),
            free_target: s(t.free_target),
            cache_min: s(t.cache_min),
            cache_max: s(t.cache_max),
            inactive_target: s(t.inactive_target),
            stats_max: s(t.stats_max),
        }
    }
}

/// Checks `[system.freebsd]` and the combinations `reclaim = "freebsd8"` cannot run in.
pub fn validate(cfg: &SystemConfig) -> Result<()> {
    let s = &cfg.system;
    let f = &s.freebsd;
    if f.memory_pages == Some(0) || f.memory_pages.is_some_and(|p| p >= 1 << 40) {
        return Err(Error::invalid("system.freebsd.memory_pages", format!("expected 1 to 2^40 pages, got {}", f.memory_pages.unwrap())));
    }
    if let Some(n) = f.pageout_page_count {
        if n == 0 || n > 256 {
            return Err(Error::invalid("system.freebsd.pageout_page_count", format!("expected 1 to 256 pages, got {n}")));
        }
    }
    if s.reclaim != ReclaimKind::Freebsd8 {
        if *f != FreeBsdConfig::default() {
            return Err(Error::invalid("system.freebsd", "is used only with reclaim = \"freebsd8\""));
        }
        return Ok(());
    }
    if cfg.gang.is_some() {
        return Err(Error::invalid("system.reclaim", "\"freebsd8\" does not combine with [gang] (its mechanisms drive the engine's own reclaim)"));
    }
    if cfg.token.policy != super::config::TokenPolicyKind::None {
        return Err(Error::invalid("system.reclaim", "\"freebsd8\" does not combine with a [token] policy (a Linux mechanism)"));
    }
    if s.dead_list.is_some() {
        return Err(Error::invalid("system.dead_list", "does not combine with reclaim = \"freebsd8\""));
    }
    if cfg.swap.read_around == ReadAroundKind::Linux {
        return Err(Error::invalid("swap.read_around", "\"linux\" does not combine with reclaim = \"freebsd8\" (whose read-ahead is vm_fault's: use \"bsd\" or \"none\")"));
    }
    let t = FreeBsdTargets::for_config(cfg, s.frames);
    if t.free_min >= s.frames {
        return Err(Error::invalid(
            "system.freebsd.memory_pages",
            format!(
                "FreeBSD 8.2's targets for {} pages keep v_free_min = {} pages free, not fewer than the {} frames: give the size of the machine to scale them from",
                f.memory_pages.unwrap_or(s.frames),
                t.free_min,
                s.frames
            ),
        ));
    }
    Ok(())
}

/// Which queue a page is on (`m->queue`, plus the cache, which 8.2 keeps in the free
/// lists with PG_CACHED).
const PQ_NONE: u8 = 0;
const PQ_ACTIVE: u8 = 1;
const PQ_INACTIVE: u8 = 2;
const PQ_CACHE: u8 = 3;

/// Per-page software state.
const SOFT_REF: u8 = 1; // PG_REFERENCED
const WINATCFLS: u8 = 2; // PG_WINATCFLS
const WRITE_PROTECTED: u8 = 4; // mapped read-only (vm_fault_prefault, vm_pageout_flush)

/// The queues, activation counts and page daemon state of `reclaim = "freebsd8"`.
pub struct FreeBsdVm {
    pub cfg: FreeBsdConfig,
    pub t: FreeBsdTargets,
    /// Newest at the head (`TAILQ_INSERT_TAIL`), scans from the tail (`TAILQ_FIRST`).
    active: PageList,
    inactive: PageList,
    /// Cached pages, oldest reused first.
    cache: PageList,
    queue: Vec<u8>,
    act_count: Vec<u8>,
    pflags: Vec<u8>,
    /// `vm_pages_needed`.
    pages_needed: bool,
    /// `vm_pageout_deficit`.
    deficit: u64,
    pass: u32,
    /// Generation of the daemon's current sleep (a newer wake-up makes older ones stale).
    daemon_gen: u32,
    /// `fullintervalcount` of `vm_pageout_page_stats`, in intervals.
    stats_intervals: u32,
    /// Per process, the map entry's `lastr` (u64::MAX: none).
    lastr: Vec<u64>,
    pub counters: FreeBsdCounters,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FreeBsdCounters {
    pub daemon_scans: u64,
    pub clusters_laundered: u64,
    pub pages_cached: u64,
    pub soft_faults: u64,
    pub cache_reactivations: u64,
    pub prefaulted: u64,
    pub cached_behind: u64,
    pub deactivated: u64,
    pub stats_scans: u64,
}

impl FreeBsdVm {
    pub fn new(cfg: FreeBsdConfig, t: FreeBsdTargets, processes: usize) -> Self {
        FreeBsdVm {
            cfg,
            t,
            active: PageList::default(),
            inactive: PageList::default(),
            cache: PageList::default(),
            queue: Vec::new(),
            act_count: Vec::new(),
            pflags: Vec::new(),
            pages_needed: false,
            deficit: 0,
            pass: 0,
            daemon_gen: 0,
            stats_intervals: 0,
            lastr: vec![u64::MAX; processes],
            counters: FreeBsdCounters::default(),
        }
    }

    fn reserve(&mut self, pages: usize) {
        if pages > self.queue.len() {
            let n = pages.max(self.queue.len() * 2).max(1024);
            self.active.reserve_pages(n);
            self.inactive.reserve_pages(n);
            self.cache.reserve_pages(n);
            self.queue.resize(n, PQ_NONE);
            self.act_count.resize(n, 0);
            self.pflags.resize(n, 0);
        }
    }

    fn list(&mut self, q: u8) -> &mut PageList {
        match q {
            PQ_ACTIVE => &mut self.active,
            PQ_INACTIVE => &mut self.inactive,
            _ => &mut self.cache,
        }
    }

    fn dequeue(&mut self, gid: Gid) {
        let q = self.queue[gid as usize];
        if q != PQ_NONE {
            self.list(q).unlink(gid);
            self.queue[gid as usize] = PQ_NONE;
        }
    }

    /// vm_page.c `vm_page_activate`: onto the active queue's tail (unless there), with
    /// an activation count of at least ACT_INIT.
    fn activate(&mut self, gid: Gid) {
        let g = gid as usize;
        if self.act_count[g] < ACT_INIT {
            self.act_count[g] = ACT_INIT;
        }
        if self.queue[g] != PQ_ACTIVE {
            self.dequeue(gid);
            self.active.push_front(gid);
            self.queue[g] = PQ_ACTIVE;
        }
    }

    /// vm_page.c `_vm_page_deactivate(m, 0)`: onto the inactive queue's tail, clearing
    /// PG_WINATCFLS (nothing if already inactive).
    fn deactivate(&mut self, gid: Gid) {
        if self.queue[gid as usize] == PQ_INACTIVE {
            return;
        }
        self.dequeue(gid);
        self.pflags[gid as usize] &= !WINATCFLS;
        self.inactive.push_front(gid);
        self.queue[gid as usize] = PQ_INACTIVE;
    }

    fn requeue(&mut self, gid: Gid) {
        let q = self.queue[gid as usize];
        if q != PQ_NONE {
            self.list(q).move_to_front(gid);
        }
    }

    /// In the object's resident pages (`vm_page_lookup` finds it): active or inactive.
    fn in_memq(&self, gid: Gid) -> bool {
        matches!(self.queue.get(gid as usize), Some(&PQ_ACTIVE) | Some(&PQ_INACTIVE))
    }

    pub fn is_cached(&self, gid: Gid) -> bool {
        self.queue.get(gid as usize) == Some(&PQ_CACHE)
    }

    pub fn is_active(&self, gid: Gid) -> bool {
        self.queue.get(gid as usize) == Some(&PQ_ACTIVE)
    }

    pub fn is_inactive(&self, gid: Gid) -> bool {
        self.queue.get(gid as usize) == Some(&PQ_INACTIVE)
    }

    pub fn act_count(&self, gid: Gid) -> u8 {
        self.act_count.get(gid as usize).copied().unwrap_or(0)
    }

    pub fn cache_len(&self) -> u64 {
        self.cache.len() as u64
    }

    pub fn inactive_len(&self) -> u64 {
        self.inactive.len() as u64
    }

    pub fn active_len(&self) -> u64 {
        self.active.len() as u64
    }

    pub fn counter_list(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("freebsd_daemon_scans", c.daemon_scans),
            ("freebsd_clusters_laundered", c.clusters_laundered),
            ("freebsd_pages_cached", c.pages_cached),
            ("freebsd_soft_faults", c.soft_faults),
            ("freebsd_cache_reactivations", c.cache_reactivations),
            ("freebsd_prefaulted", c.prefaulted),
            ("freebsd_cached_behind", c.cached_behind),
            ("freebsd_deactivated", c.deactivated),
            ("freebsd_stats_scans", c.stats_scans),
        ]
    }
}

/// vm_pageout.c `vm_pageout_clean`'s gathering of a cluster around `pindex`, with `ok`
/// the clustering condition (dirty, inactive, not busy): backward until the alignment
/// boundary of `count` pages, forward, and backward again past the boundary when the
/// forward scan ended early. Returns the inclusive range.
pub fn aligned_cluster(pindex: u64, count: u32, ok: impl Fn(u64) -> bool) -> (u64, u64) {
    let count = count as u64;
    let (mut lo, mut hi) = (pindex, pindex);
    let mut n = 1u64;
    let mut ib = 1u64; // 0: the backward scan is over
    let mut is = 1u64;
    loop {
        while ib > 0 && n < count {
            if ib > pindex || !ok(pindex - ib) {
                ib = 0;
                break;
            }
            lo = pindex - ib;
            n += 1;
            ib += 1;
            // the alignment boundary: stop here and switch directions (ib kept)
            if (pindex - (ib - 1)).is_multiple_of(count) {
                break;
            }
        }
        while n < count && pindex.checked_add(is).is_some_and(&ok) {
            hi = pindex + is;
            n += 1;
            is += 1;
        }
        if !(ib > 0 && n < count) {
            return (lo, hi);
        }
    }
}

impl Machine {
    fn fb(&mut self) -> &mut FreeBsdVm {
        self.fbsd.as_mut().expect("reclaim = \"freebsd8\"")
    }

    /// free + cache pages (`cnt.v_free_count + cnt.v_cache_count`).
    fn fb_available(&self) -> u64 {
        self.pool.free + self.fbsd.as_ref().map_or(0, |f| f.cache_len())
    }

    /// sys/vmmeter.h `vm_paging_target`.
    fn fb_paging_target(&self) -> i64 {
        let t = &self.fbsd.as_ref().unwrap().t;
        (t.free_target + t.cache_min) as i64 - self.fb_available() as i64
    }

    /// sys/vmmeter.h `vm_paging_needed`.
    fn fb_paging_needed(&self) -> bool {
        let t = &self.fbsd.as_ref().unwrap().t;
        t.free_reserved + t.cache_min > self.fb_available()
    }

    fn fb_count_min(&self) -> bool {
        self.fbsd.as_ref().unwrap().t.free_min > self.fb_available()
    }

    fn fb_count_severe(&self) -> bool {
        self.fbsd.as_ref().unwrap().t.free_severe > self.fb_available()
    }

    /// The daemon's first sleep (called by `Machine::start`).
    pub(super) fn fb_start(&mut self) {
        let gen = self.fb().daemon_gen;
        self.events.push(self.now + STATS_INTERVAL_NS, Event::PageDaemon(gen, false));
    }

    /// vm_pageout.c `pagedaemon_wakeup`: wakes the daemon unless `vm_pages_needed` is
    /// already set.
    fn fb_wakeup(&mut self) {
        let now = self.now;
        let fb = self.fb();
        if !fb.pages_needed {
            fb.pages_needed = true;
            fb.daemon_gen = fb.daemon_gen.wrapping_add(1);
            let gen = fb.daemon_gen;
            self.events.push(now, Event::PageDaemon(gen, true));
        }
    }

    /// vm_page.c `vm_page_free_wakeup`: a page went to the free or cache lists; the
    /// processes asleep in `vm_waitpfault` wake once free + cache reach `v_free_min`.
    pub(super) fn fb_free_wakeup(&mut self) {
        if self.fb().pages_needed && !self.fb_count_min() {
            self.fb().pages_needed = false;
            self.fb_wake_waiters();
        }
    }

    fn fb_wake_waiters(&mut self) {
        while let Some(p) = self.frame_waiters.pop_front() {
            self.make_ready(p);
        }
    }

    /// A frame for a page (vm_page.c `vm_page_alloc`, VM_ALLOC_NORMAL): a free frame,
    /// else the oldest cached page's; none when free + cache are at `v_free_reserved`
    /// or below (the deficit grows and the daemon is woken). Wakes the daemon when
    /// `vm_paging_needed`.
    fn fb_alloc(&mut self) -> bool {
        if self.fb_available() <= self.fb().t.free_reserved {
            self.fb().deficit += 1;
            self.fb_wakeup();
            return false;
        }
        if self.pool.free > 0 {
            self.pool.free -= 1;
        } else {
            let fb = self.fb();
            let victim = fb.cache.tail().expect("a cached page when free + cache > 0");
            fb.dequeue(victim);
            fb.act_count[victim as usize] = 0;
            fb.pflags[victim as usize] = 0;
            // its identity is lost: a later fault reads it from swap
            self.pages.flags[victim as usize] &= !PREFETCHED;
        }
        if self.fb_paging_needed() {
            self.fb_wakeup();
        }
        true
    }

    /// `vm_page_alloc(VM_ALLOC_NORMAL | VM_ALLOC_IFNOTCACHED)` for a read-ahead page:
    /// fails when memory is short (as [`Machine::fb_alloc`]) or the page is cached.
    fn fb_alloc_ifnotcached(&mut self, gid: Gid) -> bool {
        if self.fb_available() <= self.fb().t.free_reserved || !self.fb().is_cached(gid) {
            return self.fb_alloc();
        }
        false
    }

    /// Maps `gid` (it becomes visible to the hit loop and to RSS).
    fn fb_map(&mut self, gid: Gid, read_only: bool) {
        let f = &mut self.pages.flags[gid as usize];
        debug_assert!(*f & RESIDENT == 0);
        *f |= RESIDENT;
        let owner = self.pages.owner[gid as usize];
        self.procs[owner as usize].rss += 1;
        let pf = &mut self.fb().pflags[gid as usize];
        if read_only {
            *pf |= WRITE_PROTECTED;
        } else {
            *pf &= !WRITE_PROTECTED;
        }
    }

    /// pmap_remove_all: unmaps `gid` (its referenced bit goes with the mapping).
    fn fb_unmap(&mut self, gid: Gid) {
        let f = &mut self.pages.flags[gid as usize];
        if *f & RESIDENT != 0 {
            *f &= !(RESIDENT | REFERENCED);
            let owner = self.pages.owner[gid as usize];
            self.procs[owner as usize].rss -= 1;
        }
        self.fb().pflags[gid as usize] &= !WRITE_PROTECTED;
    }

    /// vm_page.c `vm_page_cache`: unmaps a clean page and puts it in the cache, or frees
    /// it when it has no swap copy (a zero-filled page, `vm_pager_has_page` false).
    fn fb_cache(&mut self, gid: Gid) {
        self.fb_unmap(gid);
        let has_copy = self.pages.flags[gid as usize] & SWAP_VALID != 0;
        let fb = self.fb();
        fb.dequeue(gid);
        fb.pflags[gid as usize] = 0;
        fb.counters.pages_cached += 1;
        if has_copy {
            fb.cache.push_front(gid);
            fb.queue[gid as usize] = PQ_CACHE;
        } else {
            self.pool.free += 1;
        }
        self.fb_free_wakeup();
    }

    /// The end of a fault that found or read its page (vm_fault.c): PG_REFERENCED,
    /// `vm_page_activate`, a write dirties the page and drops its swap copy
    /// (`vm_pager_page_unswapped`), then `vm_fault_prefault`.
    fn fb_fault_done(&mut self, p: u16, gid: Gid, write: bool) {
        let fb = self.fb();
        fb.pflags[gid as usize] |= SOFT_REF;
        fb.activate(gid);
        if write {
            self.fb_dirty(gid, true);
        }
        self.fb_prefault(p, self.pages.vpage[gid as usize]);
    }

    /// Dirties `gid`; `unswap`: its swap block is freed (a write fault), else it stays
    /// assigned, stale, until the next page-out replaces it (`swp_pager_meta_build`).
    fn fb_dirty(&mut self, gid: Gid, unswap: bool) {
        let f = &mut self.pages.flags[gid as usize];
        *f = (*f | DIRTY) & !SWAP_VALID;
        if unswap {
            self.release_page_slot(gid);
        }
    }

    fn fb_is_write(&self, p: u16) -> bool {
        let proc = &self.procs[p as usize];
        proc.batch.kind.get(proc.pos) == Some(&AccessKind::Write)
    }

    fn fb_minor(&mut self, p: u16) {
        self.procs[p as usize].counters.minor_faults += 1;
        self.now += self.minor_ns;
    }

    fn fb_block_on(&mut self, p: u16, gid: Gid) -> Result<FaultOutcome> {
        let proc = &mut self.procs[p as usize];
        proc.waiting_on = gid;
        proc.state = RunState::BlockedIo;
        Ok(FaultOutcome::Blocked)
    }

    /// The fault path under `reclaim = "freebsd8"` (vm_fault.c `vm_fault`), for a page
    /// that is not mapped, or mapped and written while clean.
    pub(super) fn fb_fault(&mut self, p: u16, gid: Gid) -> Result<FaultOutcome> {
        let n = self.pages.len();
        self.fb().reserve(n);
        let f = self.pages.flags[gid as usize];
        let write = self.fb_is_write(p);
        if f & PAGING_IN != 0 {
            // being read (read-ahead of another fault): sleep on the busy page
            return self.fb_block_on(p, gid);
        }
        if f & RESIDENT != 0 {
            // a write to a mapped page that is not dirty
            if f & WRITING != 0 {
                // its page-out is in flight: vm_fault sleeps until the page is unbusied
                return self.fb_block_on(p, gid);
            }
            if self.fb().pflags[gid as usize] & WRITE_PROTECTED != 0 {
                // mapped read-only (prefaulted, or laundered): a soft write fault
                self.fb().counters.soft_faults += 1;
                self.fb_minor(p);
                self.fb().pflags[gid as usize] &= !WRITE_PROTECTED;
                self.fb_fault_done(p, gid, true);
            } else {
                // mapped writable: the hardware sets the modified bit, no fault
                self.fb_dirty(gid, false);
            }
            return Ok(FaultOutcome::Continue);
        }
        if self.fb().in_memq(gid) {
            if f & WRITING != 0 {
                return self.fb_block_on(p, gid);
            }
            // in memory but unmapped (read-ahead, deactivated): a soft fault
            self.fb().counters.soft_faults += 1;
            self.fb_soft_map(p, gid, write);
            return Ok(FaultOutcome::Continue);
        }
        // a page must be allocated (or found in the cache): not below v_free_severe
        if self.fb_count_severe() {
            return Ok(self.fb_waitpfault(p));
        }
        if self.fb().is_cached(gid) {
            // vm_page_alloc finds the page in the cache, valid: no I/O
            let fb = self.fb();
            fb.dequeue(gid);
            fb.act_count[gid as usize] = 0;
            fb.pflags[gid as usize] = 0;
            fb.counters.cache_reactivations += 1;
            fb.counters.soft_faults += 1;
            if self.fb_paging_needed() {
                self.fb_wakeup();
            }
            self.fb_soft_map(p, gid, write);
            return Ok(FaultOutcome::Continue);
        }
        if !self.fb_alloc() {
            return Ok(self.fb_waitpfault(p));
        }
        if f & SWAP_VALID != 0 {
            return self.fb_hard_fault(p, gid);
        }
        // zero fill: first touch, or a clean page freed without a swap copy
        if f & TOUCHED == 0 {
            self.procs[p as usize].mad += 1;
        }
        self.pages.flags[gid as usize] = f | TOUCHED;
        self.fb_map(gid, false);
        self.fb_minor(p);
        let fb = self.fb();
        fb.act_count[gid as usize] = 0;
        fb.pflags[gid as usize] = 0;
        self.fb_fault_done(p, gid, write);
        Ok(FaultOutcome::Continue)
    }

    /// Maps a page found in memory by a fault, at the cost of a minor fault.
    fn fb_soft_map(&mut self, p: u16, gid: Gid, write: bool) {
        let f = &mut self.pages.flags[gid as usize];
        if *f & PREFETCHED != 0 {
            *f &= !PREFETCHED;
            self.prefetch_hits += 1;
        }
        self.fb_map(gid, false);
        self.fb_minor(p);
        self.fb_fault_done(p, gid, write);
    }

    /// vm_page.c `vm_waitpfault`: the process sleeps until free + cache reach
    /// `v_free_min`, waking the daemon.
    fn fb_waitpfault(&mut self, p: u16) -> FaultOutcome {
        if !self.fb().pages_needed {
            self.fb_wakeup();
        }
        self.procs[p as usize].state = RunState::BlockedFrame;
        self.frame_waiters.push_back(p);
        FaultOutcome::Blocked
    }

    /// A hard fault (vm_fault.c): the sequential heuristic, `vm_fault_additional_pages`
    /// with `swap_pager_haspage`'s contiguity, and `swap_pager_getpages`'s one read. The
    /// faulting page's frame is already allocated.
    fn fb_hard_fault(&mut self, p: u16, gid: Gid) -> Result<FaultOutcome> {
        self.count_major_fault(p);
        self.now += self.major_cpu_ns;
        let vpage = self.pages.vpage[gid as usize];
        let read_around = self.swap_cfg.read_around != ReadAroundKind::None;
        let (mut behind, mut ahead) = if read_around { (VM_FAULT_READ_BEHIND.min(vpage), VM_FAULT_READ_AHEAD) } else { (0, 0) };
        let lastr = self.fb().lastr[p as usize];
        if read_around && self.fb().cfg.cache_behind && lastr != u64::MAX && vpage >= lastr && vpage < lastr + VM_FAULT_READ {
            self.fb_cache_behind(p, vpage);
            ahead += behind;
            behind = 0;
        }
        // vm_fault_additional_pages, bounded by swap_pager_haspage
        let slot = self.pages.slot[gid as usize] as u64;
        let neighbour = |m: &Machine, v: u64| m.procs[p as usize].by_vpage.get(&v).copied();
        let contiguous = |m: &Machine, v: u64, s: u64| neighbour(m, v).is_some_and(|g| m.pages.slot[g as usize] as u64 == s && m.pages.slot[g as usize] != NO_SLOT);
        let mut cbehind = 0;
        while cbehind + 1 < SWB_NPAGES / 2 && cbehind < vpage && slot > cbehind && contiguous(self, vpage - cbehind - 1, slot - cbehind - 1) {
            cbehind += 1;
        }
        let mut cahead = 0;
        while cahead + 1 < SWB_NPAGES / 2 && contiguous(self, vpage + cahead + 1, slot + cahead + 1) {
            cahead += 1;
        }
        let rbehind = behind.min(cbehind);
        let rahead = ahead.min(cahead);
        // backward: from the page before, down to the first resident page
        let mut lo = vpage;
        let stop_behind = (1..=rbehind).find(|&i| neighbour(self, vpage - i).is_some_and(|g| self.fb_in_object(g))).map_or(rbehind, |i| i - 1);
        for i in 1..=stop_behind {
            let g = neighbour(self, vpage - i).expect("contiguous on swap");
            if !self.fb_alloc_ifnotcached(g) {
                break;
            }
            lo = vpage - i;
        }
        let mut hi = vpage;
        let stop_ahead = (1..=rahead).find(|&i| neighbour(self, vpage + i).is_some_and(|g| self.fb_in_object(g))).map_or(rahead, |i| i - 1);
        for i in 1..=stop_ahead {
            let g = neighbour(self, vpage + i).expect("contiguous on swap");
            if !self.fb_alloc_ifnotcached(g) {
                break;
            }
            hi = vpage + i;
        }
        let faultcount = hi - lo + 1;
        self.fb().lastr[p as usize] = vpage + faultcount - behind;
        let first = slot - (vpage - lo);
        // the other pages complete in the same I/O, before the faulting page is mapped
        let mut arrivals = Vec::with_capacity(faultcount as usize);
        for v in lo..=hi {
            let g = neighbour(self, v).unwrap();
            self.pages.flags[g as usize] |= PAGING_IN;
            if v != vpage {
                arrivals.push(Event::Prefetched(g));
            }
        }
        arrivals.push(Event::PageIn(p, gid));
        self.io(IoKind::Read, first, faultcount as u32, arrivals);
        self.procs[p as usize].state = RunState::BlockedIo;
        Ok(FaultOutcome::Blocked)
    }

    /// In the object's resident pages (`memq`), busy ones included: what stops
    /// `vm_fault_additional_pages`' range.
    fn fb_in_object(&self, gid: Gid) -> bool {
        self.fbsd.as_ref().unwrap().in_memq(gid) || self.pages.flags[gid as usize] & (RESIDENT | PAGING_IN) != 0
    }

    /// vm_fault.c's sequential heuristic: the resident pages up to `2 * VM_FAULT_READ`
    /// behind the fault are unmapped, the dirty ones deactivated and the clean ones
    /// cached; it stops at the first page not resident, and passes over busy ones.
    fn fb_cache_behind(&mut self, p: u16, vpage: u64) {
        let first = vpage.saturating_sub(2 * VM_FAULT_READ);
        let mut v = vpage;
        while v > first {
            v -= 1;
            let Some(&g) = self.procs[p as usize].by_vpage.get(&v) else { break };
            let f = self.pages.flags[g as usize];
            if f & PAGING_IN != 0 || !self.fbsd.as_ref().unwrap().in_memq(g) {
                break; // not resident, or not valid yet
            }
            if f & WRITING != 0 {
                continue;
            }
            self.fb().counters.cached_behind += 1;
            if f & DIRTY != 0 {
                self.fb_unmap(g);
                self.fb().deactivate(g);
            } else {
                self.fb_cache(g);
            }
        }
    }

    /// vm_fault.c `vm_fault_prefault`, as in the 8.x source (stable/8's vm_fault.c, still
    /// with `vm_page_lock_queues`, and the `prefault_pageorder` table of 7.x-9.x). After
    /// every fault that is not a wiring one, for the neighbours of `vpage` in the order
    /// -1, +1, -2, +2, ... +4 (PFBAK = PFFOR = 4), within the map entry:
    /// - `pmap_is_prefaultable` first: a neighbour already mapped (its PTE not zero), or
    ///   whose page-table page does not exist, is passed over (`continue`). The fault's
    ///   own page-table page exists (its page was just mapped); one across an `NPTEPG`
    ///   boundary exists while any page it covers is mapped (the pmap frees an empty one).
    /// - `vm_page_lookup` in the entry's object (the walk down the backing objects goes
    ///   through `OBJT_DEFAULT` ones only; the model's anonymous memory is one object): a
    ///   page not found gives up the whole prefault (`break`). Cached pages are not found
    ///   (8.x keeps them in `object->cache`, apart from the resident pages), nor pages on
    ///   swap or never touched.
    /// - a page found but not fully valid (being read) is passed over; a busy one is not
    ///   (a page whose page-out is in flight is mapped).
    /// - `pmap_enter_quick(..., entry->protection)`: mapped read-only (i386 and amd64
    ///   `pmap_enter_quick_locked` "validate mapping with RO protection") and without the
    ///   accessed bit, so `pmap_ts_referenced` counts it only once the program touches
    ///   it; its queue, `act_count` and PG_REFERENCED are left alone.
    fn fb_prefault(&mut self, p: u16, vpage: u64) {
        if !self.fb().cfg.prefault {
            return;
        }
        for d in PREFAULT_ORDER {
            let Some(v) = vpage.checked_add_signed(d) else { continue };
            if v / NPTEPG != vpage / NPTEPG && !self.fb_page_table_present(p, v) {
                continue; // pmap_is_prefaultable: no page-table page
            }
            let Some(&g) = self.procs[p as usize].by_vpage.get(&v) else { break };
            let f = self.pages.flags[g as usize];
            if f & RESIDENT != 0 {
                continue; // already mapped: not prefaultable
            }
            if !self.fb().in_memq(g) {
                if f & PAGING_IN != 0 {
                    continue;
                }
                break;
            }
            if f & PAGING_IN != 0 {
                continue;
            }
            self.fb_map(g, true);
            self.fb().counters.prefaulted += 1;
        }
    }

    /// Whether the page-table page covering `vpage` of process `p` exists: some page of
    /// its `NPTEPG` is mapped (amd64 `pmap_unwire_pte_hold` frees it with its last PTE).
    fn fb_page_table_present(&self, p: u16, vpage: u64) -> bool {
        let base = vpage / NPTEPG * NPTEPG;
        let by_vpage = &self.procs[p as usize].by_vpage;
        (base..base + NPTEPG).any(|v| by_vpage.get(&v).is_some_and(|&g| self.pages.flags[g as usize] & RESIDENT != 0))
    }

    /// `Event::PageIn` under freebsd8: the faulting page, just mapped by the generic
    /// handler, ends its fault.
    pub(super) fn fb_page_in_done(&mut self, p: u16, gid: Gid) {
        let write = self.fb_is_write(p);
        let fb = self.fb();
        fb.act_count[gid as usize] = 0;
        fb.pflags[gid as usize] &= !WRITE_PROTECTED;
        self.fb_fault_done(p, gid, write);
    }

    /// A read-ahead page arrived (`swp_pager_async_iodone`): valid, deactivated, and
    /// not mapped (or mapped, with `readahead_unmapped = false`).
    pub(super) fn fb_prefetched(&mut self, gid: Gid) {
        let owner = self.pages.owner[gid as usize];
        let f = &mut self.pages.flags[gid as usize];
        *f &= !(PAGING_IN | REFERENCED);
        if self.procs[owner as usize].state == RunState::Done || *f & TOUCHED == 0 {
            // its process exited, or freed the page, meanwhile: the frame is free
            *f = 0;
            self.pool.free += 1;
            self.fb_free_wakeup();
            let proc = &mut self.procs[owner as usize];
            if proc.waiting_on == gid {
                // it touched the freed page again meanwhile: it faults on it anew
                proc.waiting_on = NO_GID;
                self.make_ready(owner);
            }
            return;
        }
        *f |= PREFETCHED;
        self.prefetched += 1;
        let fb = self.fb();
        fb.act_count[gid as usize] = 0;
        fb.pflags[gid as usize] = 0;
        fb.deactivate(gid);
        if !self.fb().cfg.readahead_unmapped {
            self.fb_map(gid, false);
        }
        let proc = &mut self.procs[owner as usize];
        if proc.waiting_on == gid {
            proc.waiting_on = NO_GID;
            self.make_ready(owner);
        }
    }

    /// A page-out write completed (`swp_pager_async_iodone`, write): the page is clean
    /// and stays in memory, write-protected; a process that waited to write it goes on;
    /// with free + cache below `v_free_severe` it is cached at once
    /// (`vm_page_try_to_cache`).
    pub(super) fn fb_write_done(&mut self, gid: Gid) {
        let f = self.pages.flags[gid as usize];
        let mut nf = f & !WRITING;
        let owner = self.pages.owner[gid as usize];
        let exited = self.procs[owner as usize].state == RunState::Done;
        if exited {
            // the process exited during the write: the frame was held for it
            self.pages.flags[gid as usize] = nf;
            self.release_page_slot(gid);
            self.pool.writing -= 1;
            self.pool.free += 1;
            self.fb_free_wakeup();
            return;
        }
        if f & DIRTY == 0 {
            nf |= SWAP_VALID;
        }
        self.pages.flags[gid as usize] = nf;
        let proc = &mut self.procs[owner as usize];
        if proc.waiting_on == gid {
            proc.waiting_on = NO_GID;
            self.make_ready(owner);
        }
        if nf & DIRTY == 0 && self.fb().in_memq(gid) && self.fb_count_severe() {
            self.fb_cache(gid);
        }
    }

    /// A process exits: its pages leave the queues; the frames of those in memory but
    /// not mapped are freed (or held until their write completes). The mapped ones are
    /// the generic exit's.
    pub(super) fn fb_exit(&mut self, p: u16) {
        for i in 0..self.procs[p as usize].gid_of.len() {
            let gid = self.procs[p as usize].gid_of[i];
            self.fb_forget_page(gid);
        }
        self.fb_free_wakeup();
    }

    /// A page leaves the VM (its process ended, or freed it: `vm_page_free` from
    /// `vm_object_terminate` or `vm_map_delete`): off its queue; a frame it holds unmapped
    /// (the cache queue, a read-ahead page) returns to the free frames, at once or when
    /// its write completes. A mapped page's frame is the caller's to free.
    pub(super) fn fb_forget_page(&mut self, gid: Gid) {
        if gid == NO_GID || gid as usize >= self.fb().queue.len() || self.fb().queue[gid as usize] == PQ_NONE {
            return;
        }
        let f = self.pages.flags[gid as usize];
        let fb = self.fb();
        fb.dequeue(gid);
        fb.pflags[gid as usize] = 0;
        fb.act_count[gid as usize] = 0;
        if f & RESIDENT == 0 {
            if f & WRITING != 0 {
                self.pool.writing += 1;
            } else {
                self.pool.free += 1;
            }
        }
    }

    /// `Event::PageDaemon`: the daemon wakes (vm_pageout.c `vm_pageout`'s loop).
    pub(super) fn fb_daemon(&mut self, gen: u32, needed_sleep: bool) {
        if gen != self.fb().daemon_gen || self.live == 0 {
            return;
        }
        if !needed_sleep && !self.fb().pages_needed {
            // the stats sleep timed out with nothing needed
            self.fb().pass = 0;
            if self.fb().cfg.page_stats {
                self.fb_page_stats();
            }
        } else {
            let pass = self.fb().pass;
            self.fb_scan(pass);
        }
        loop {
            if self.fb().pages_needed && !self.fb_count_min() {
                if !self.fb_paging_needed() {
                    self.fb().pages_needed = false;
                }
                self.fb_wake_waiters();
            }
            let fb = self.fb();
            if fb.pages_needed {
                fb.pass += 1;
                if fb.pass > 1 {
                    fb.daemon_gen = fb.daemon_gen.wrapping_add(1);
                    let gen = fb.daemon_gen;
                    self.events.push(self.now + RETRY_SLEEP_NS, Event::PageDaemon(gen, true));
                    return;
                }
                let pass = fb.pass;
                self.fb_scan(pass);
            } else {
                fb.pass = if fb.pass > 1 { 1 } else { 0 };
                fb.daemon_gen = fb.daemon_gen.wrapping_add(1);
                let gen = fb.daemon_gen;
                self.events.push(self.now + STATS_INTERVAL_NS, Event::PageDaemon(gen, false));
                return;
            }
        }
    }

    /// vm_pageout.c `vm_pageout_scan(pass)`: the inactive queue from its oldest page
    /// until the shortage is met or `v_inactive_count` pages were looked at, then the
    /// active queue until the inactive target is met.
    pub(super) fn fb_scan(&mut self, pass: u32) {
        self.fb().counters.daemon_scans += 1;
        let addl_init = std::mem::take(&mut self.fb().deficit) as i64;
        let mut page_shortage = self.fb_paging_target() + addl_init;
        let mut maxlaunder = if pass > 0 { 10000 } else { self.fb().cfg.max_launder.max(1) as i64 };
        let mut addl = addl_init;
        let mut maxscan = self.fb().inactive.len();
        let mut m = self.fb().inactive.tail();
        while let Some(g) = m {
            if maxscan == 0 || page_shortage <= 0 {
                break;
            }
            maxscan -= 1;
            let next = self.fb().inactive.prev_of(g);
            m = next;
            let f = self.pages.flags[g as usize];
            if f & (WRITING | PAGING_IN) != 0 {
                // busy: most likely being paged out
                addl += 1;
                continue;
            }
            let hw = f & REFERENCED != 0;
            let soft = self.fb().pflags[g as usize] & SOFT_REF != 0;
            if !soft && hw {
                self.pages.flags[g as usize] &= !REFERENCED;
                let fb = self.fb();
                fb.activate(g);
                fb.act_count[g as usize] = fb.act_count[g as usize].wrapping_add(1 + ACT_ADVANCE);
                continue;
            }
            if soft {
                self.pages.flags[g as usize] &= !REFERENCED;
                let fb = self.fb();
                fb.pflags[g as usize] &= !SOFT_REF;
                fb.activate(g);
                fb.act_count[g as usize] = fb.act_count[g as usize].wrapping_add(hw as u8 + ACT_ADVANCE + 1);
                continue;
            }
            if f & DIRTY == 0 {
                self.fb_cache(g);
                page_shortage -= 1;
            } else if self.fb().cfg.dirty_second_pass && self.fb().pflags[g as usize] & WINATCFLS == 0 && pass == 0 {
                let fb = self.fb();
                fb.pflags[g as usize] |= WINATCFLS;
                fb.requeue(g);
            } else if maxlaunder > 0 {
                let n = self.fb_launder(g);
                if n > 0 {
                    page_shortage -= match self.fb().cfg.launder_counts {
                        LaunderCount::Cluster => 1,
                        LaunderCount::Pages => n as i64,
                    };
                    maxlaunder -= 1;
                }
            }
        }
        // the end of the inactive scan: mClustering's buffer holds the last using page
        self.flush_buffer();
        // the active queue, towards the inactive target
        let t = self.fb().t;
        let mut page_shortage = self.fb_paging_target() + t.inactive_target as i64 - self.fb().inactive.len() as i64 + addl;
        let mut pcount = self.fb().active.len();
        let mut m = self.fb().active.tail();
        while let Some(g) = m {
            if pcount == 0 || page_shortage <= 0 {
                break;
            }
            pcount -= 1;
            m = self.fb().active.prev_of(g);
            let f = self.pages.flags[g as usize];
            if f & (WRITING | PAGING_IN) != 0 {
                self.fb().requeue(g);
                continue;
            }
            if self.fb_age_active(g) {
                page_shortage -= 1;
                self.fb().deactivate(g);
                self.fb().counters.deactivated += 1;
            }
        }
    }

    /// One active page's aging (the active scan of `vm_pageout_scan`): referenced pages
    /// gain `ACT_ADVANCE` plus their references, up to `ACT_MAX`, and go to the tail;
    /// the others lose `ACT_DECLINE`. True when the count reached 0 (to deactivate).
    fn fb_age_active(&mut self, g: Gid) -> bool {
        let hw = self.pages.flags[g as usize] & REFERENCED != 0;
        self.pages.flags[g as usize] &= !REFERENCED;
        let fb = self.fb();
        let soft = fb.pflags[g as usize] & SOFT_REF != 0;
        fb.pflags[g as usize] &= !SOFT_REF;
        let actcount = hw as u8 + soft as u8;
        let a = &mut fb.act_count[g as usize];
        if actcount > 0 {
            *a = (*a).saturating_add(ACT_ADVANCE + actcount).min(ACT_MAX);
            fb.requeue(g);
            false
        } else {
            *a -= (*a).min(ACT_DECLINE);
            if *a == 0 {
                true
            } else {
                fb.requeue(g);
                false
            }
        }
    }

    /// vm_pageout.c `vm_pageout_page_stats`, every 5 s while the daemon sleeps: ages
    /// part of the active queue (all of it every fourth time) when free, inactive and
    /// cache pages are short of `v_inactive_target + v_cache_max + v_free_min`; a page
    /// whose count is 0 is unmapped and deactivated.
    fn fb_page_stats(&mut self) {
        let t = self.fb().t;
        let have = self.pool.free + self.fb().inactive.len() as u64 + self.fb().cache_len();
        if t.inactive_target + t.cache_max + t.free_min <= have {
            return;
        }
        self.fb().counters.stats_scans += 1;
        let active = self.fb().active.len() as u64;
        let mut pcount = active;
        let fb = self.fb();
        fb.stats_intervals += 1;
        if fb.stats_intervals < FULL_STATS_INTERVALS {
            pcount = pcount.min(t.stats_max * active / self.pool.frames.max(1));
        } else {
            fb.stats_intervals = 0;
        }
        let mut m = self.fb().active.tail();
        while let Some(g) = m {
            if pcount == 0 {
                break;
            }
            pcount -= 1;
            m = self.fb().active.prev_of(g);
            if self.pages.flags[g as usize] & (WRITING | PAGING_IN) != 0 {
                self.fb().requeue(g);
                continue;
            }
            let hw = self.pages.flags[g as usize] & REFERENCED != 0;
            self.pages.flags[g as usize] &= !REFERENCED;
            let fb = self.fb();
            let soft = fb.pflags[g as usize] & SOFT_REF != 0;
            fb.pflags[g as usize] &= !SOFT_REF;
            let actcount = hw as u8 + soft as u8;
            let a = fb.act_count[g as usize];
            if actcount > 0 {
                fb.act_count[g as usize] = a.saturating_add(ACT_ADVANCE + actcount).min(ACT_MAX);
                fb.requeue(g);
            } else if a == 0 {
                self.fb_unmap(g);
                self.fb().deactivate(g);
                self.fb().counters.deactivated += 1;
            } else {
                fb.act_count[g as usize] = a - a.min(ACT_DECLINE);
                fb.requeue(g);
            }
        }
    }

    /// vm_pageout.c `vm_pageout_clean` and `vm_pageout_flush`: the victim's cluster of
    /// dirty inactive neighbours is write-protected and written (under mClustering,
    /// offered to its buffer, mclustering-pageout.txt Algorithm 1). Returns its pages.
    fn fb_launder(&mut self, victim: Gid) -> u32 {
        let owner = self.pages.owner[victim as usize];
        let vpage = self.pages.vpage[victim as usize];
        let (lo, hi) = if self.swap_cfg.clustering == ClusteringKind::None {
            (vpage, vpage)
        } else {
            let proc = &self.procs[owner as usize];
            let pages = &self.pages;
            let fb = self.fbsd.as_ref().unwrap();
            let ok = |v: u64| {
                proc.by_vpage.get(&v).is_some_and(|&g| {
                    let f = pages.flags[g as usize];
                    f & DIRTY != 0 && f & (WRITING | PAGING_IN) == 0 && fb.queue.get(g as usize) == Some(&PQ_INACTIVE)
                })
            };
            match fb.cfg.cluster_scan {
                ClusterScan::Aligned => aligned_cluster(vpage, fb.t.pageout_page_count, ok),
                ClusterScan::Paper => compose_cluster(vpage, self.swap_cfg.max_cluster, self.swap_cfg.cluster_back, ok),
            }
        };
        let cluster: Vec<Gid> = (lo..=hi).map(|v| self.procs[owner as usize].by_vpage[&v]).collect();
        for &g in &cluster {
            let f = &mut self.pages.flags[g as usize];
            // busy and write-protected until the write completes (vm_pageout_flush)
            *f = (*f & !(DIRTY | SWAP_VALID)) | WRITING;
            self.fb().pflags[g as usize] |= WRITE_PROTECTED;
            self.procs[owner as usize].counters.page_outs += 1;
            // swp_pager_meta_build replaces (frees) the page's old swap block
            self.release_page_slot(g);
        }
        let n = cluster.len() as u32;
        self.fb().counters.clusters_laundered += 1;
        match self.swap_cfg.clustering {
            ClusteringKind::Mclustering => {
                for clusters in self.buffer.offer(cluster) {
                    self.write_clusters(&clusters);
                }
            }
            _ => self.write_clusters(&[cluster]),
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::tests::{config, process};

    fn machine(frames: u64, tweak: impl Fn(&mut SystemConfig)) -> Machine {
        let mut cfg = config(frames, vec![process("p", "scan", &[("pages", 64)])]);
        cfg.system.reclaim = ReclaimKind::Freebsd8;
        cfg.swap.clustering = ClusteringKind::Bsd;
        cfg.swap.read_around = ReadAroundKind::Bsd;
        // these tests look at the VM's decisions: a FIFO disk takes every write at once
        crate::system::tests::legacy_disk(&mut cfg);
        tweak(&mut cfg);
        cfg.validate().unwrap();
        let mut m = Machine::new(&cfg, frames, 4096, None).unwrap();
        m.fb().reserve(1024);
        m
    }

    fn page(m: &mut Machine, v: u64) -> Gid {
        let gid = m.pages.add(0, v as u32, v);
        let proc = &mut m.procs[0];
        proc.gid_of.push(gid);
        proc.by_vpage.insert(v, gid);
        gid
    }

    /// Pages `vpages` of process 0 on swap (slot 100 + v), not in memory.
    fn swapped(m: &mut Machine, vpages: std::ops::Range<u64>) -> Vec<Gid> {
        vpages
            .map(|v| {
                let gid = page(m, v);
                m.pages.flags[gid as usize] = TOUCHED | SWAP_VALID;
                m.swap.occupy(100 + v);
                m.set_slot(gid, 100 + v);
                gid
            })
            .collect()
    }

    /// Pages `vpages` mapped and on the inactive queue (oldest first), dirty or with a
    /// swap copy; their frames come out of the free ones.
    fn inactive(m: &mut Machine, vpages: impl Iterator<Item = u64>, dirty: bool) -> Vec<Gid> {
        vpages
            .map(|v| {
                let gid = page(m, v);
                if dirty {
                    m.pages.flags[gid as usize] = TOUCHED | DIRTY;
                } else {
                    m.pages.flags[gid as usize] = TOUCHED | SWAP_VALID;
                    m.swap.occupy(1000 + v);
                    m.set_slot(gid, 1000 + v);
                }
                m.pool.free -= 1;
                m.fb_map(gid, false);
                m.fb().deactivate(gid);
                gid
            })
            .collect()
    }

    /// Handles every pending event that is not a timer, in time order.
    fn drain(m: &mut Machine) {
        while m.events.has_work() {
            let t = m.events.next_time().unwrap();
            m.now = m.now.max(t);
            while let Some((_, e)) = m.events.pop_due(m.now) {
                m.handle(e, &mut |_| true).unwrap();
            }
        }
    }

    fn write_next(m: &mut Machine) {
        m.procs[0].batch.kind = vec![AccessKind::Write];
        m.procs[0].pos = 0;
    }

    #[test]
    fn targets_follow_vm_pageout() {
        // the paper's machine: 1 GB of 4 KB pages
        let t = FreeBsdTargets::kernel(262144, 4096, None);
        assert_eq!(t.pageout_page_count, 16);
        assert_eq!((t.free_reserved, t.free_severe, t.free_min), (391, 1045, 1700));
        assert_eq!((t.free_target, t.cache_min, t.cache_max, t.inactive_target), (7191, 7191, 14382, 10786));
        // a small machine: clusters of 8, no cache targets, a quarter inactive
        let t = FreeBsdTargets::kernel(240, 4096, None);
        assert_eq!((t.pageout_page_count, t.free_reserved, t.free_severe, t.free_min, t.free_target), (8, 42, 44, 46, 134));
        assert_eq!((t.cache_min, t.cache_max, t.inactive_target), (0, 0, 60));
        // scaled from 1 GB to 2400 frames, rounded up
        let mut cfg = config(2400, vec![process("p", "scan", &[])]);
        cfg.system.reclaim = ReclaimKind::Freebsd8;
        cfg.system.freebsd.memory_pages = Some(262144);
        let s = FreeBsdTargets::for_config(&cfg, 2400);
        assert_eq!((s.pageout_page_count, s.free_target, s.cache_min, s.free_reserved), (16, 66, 66, 4));
    }

    /// vm_pageout_clean: backward to the 16-page boundary, then forward; backward past
    /// the boundary only when the forward scan ends early.
    #[test]
    fn vm_pageout_clean_aligns_its_clusters() {
        let all = |_: u64| true;
        assert_eq!(aligned_cluster(100, 16, all), (96, 111));
        // a victim on the boundary itself: its own index is not checked, so the scan goes
        // back 15 pages (the check is made on each page added)
        assert_eq!(aligned_cluster(96, 16, all), (81, 96));
        // forward blocked at 104: backward goes on past the boundary
        assert_eq!(aligned_cluster(100, 16, |p| p < 104), (88, 103));
        // backward blocked at 98
        assert_eq!(aligned_cluster(100, 16, |p| p >= 99), (99, 114));
        assert_eq!(aligned_cluster(3, 16, all), (0, 15));
        assert_eq!(aligned_cluster(100, 16, |p| p == 100), (100, 100));
    }

    /// swp_pager_async_iodone: the pages read around a fault arrive on the inactive
    /// queue, unmapped (those within 4 of the fault are then prefaulted, read-only); the
    /// first touch of one is a soft fault without I/O that activates it.
    #[test]
    fn a_read_ahead_page_is_unmapped_until_its_touch_activates_it() {
        let mut m = machine(256, |_| {});
        let g = swapped(&mut m, 0..16);
        assert!(matches!(m.fb_fault(0, g[4]).unwrap(), FaultOutcome::Blocked));
        drain(&mut m);
        // one read: 4 behind (down to page 0), 7 ahead (swap_pager_haspage's bound)
        assert_eq!(m.disk.stats().reads, 1);
        assert_eq!(m.disk.stats().pages_read, 12);
        assert!(m.fb().is_active(g[4]) && m.pages.has(g[4], RESIDENT));
        assert_eq!(m.fb().act_count(g[4]), ACT_INIT);
        for v in [0, 1, 2, 3, 5, 6, 7, 8] {
            assert!(m.pages.has(g[v], RESIDENT), "page {v} prefaulted");
            assert!(m.fb().is_inactive(g[v]));
        }
        for v in [9, 10, 11] {
            assert!(!m.pages.has(g[v], RESIDENT), "page {v} read ahead, not mapped");
            assert!(m.fb().is_inactive(g[v]));
        }
        assert!(!m.pages.has(g[12], RESIDENT) && !m.fb().in_memq(g[12]));
        assert_eq!(m.procs[0].rss, 9);
        // touching page 10: a soft fault, no I/O, the page is mapped and active
        assert!(matches!(m.fb_fault(0, g[10]).unwrap(), FaultOutcome::Continue));
        assert_eq!(m.disk.stats().reads, 1);
        assert!(m.fb().is_active(g[10]) && m.pages.has(g[10], RESIDENT));
        assert_eq!(m.procs[0].counters.minor_faults, 1);
        assert_eq!(m.procs[0].counters.major_faults, 1);
        assert_eq!(m.prefetch_hits, 1);
        // its neighbour 11 was prefaulted by that fault; 12 is not in memory: stop there
        assert!(m.pages.has(g[11], RESIDENT));
        // a write to prefaulted page 5 (mapped read-only) is a soft fault that activates it
        write_next(&mut m);
        assert!(matches!(m.fb_fault(0, g[5]).unwrap(), FaultOutcome::Continue));
        assert!(m.pages.has(g[5], DIRTY) && m.fb().is_active(g[5]));
        assert_eq!(m.pages.slot[g[5] as usize], NO_SLOT, "a write fault frees the swap copy");
        assert_eq!(m.procs[0].counters.minor_faults, 2);
        // a write to the faulting page (mapped writable): dirty, no fault, slot kept
        assert!(matches!(m.fb_fault(0, g[4]).unwrap(), FaultOutcome::Continue));
        assert_eq!(m.procs[0].counters.minor_faults, 2);
        assert!(m.pages.has(g[4], DIRTY) && m.pages.slot[g[4] as usize] != NO_SLOT);
    }

    /// The switches: without prefault the neighbours stay unmapped; with
    /// readahead_unmapped = false they arrive mapped (reclaim = "bsd"'s read-around).
    #[test]
    fn read_ahead_switches() {
        let mut m = machine(256, |c| c.system.freebsd.prefault = false);
        let g = swapped(&mut m, 0..16);
        m.fb_fault(0, g[4]).unwrap();
        drain(&mut m);
        assert_eq!(m.procs[0].rss, 1);
        assert!((0..12).filter(|&v| v != 4).all(|v| m.fb().is_inactive(g[v]) && !m.pages.has(g[v], RESIDENT)));
        let mut m = machine(256, |c| c.system.freebsd.readahead_unmapped = false);
        let g = swapped(&mut m, 0..16);
        m.fb_fault(0, g[4]).unwrap();
        drain(&mut m);
        assert_eq!(m.procs[0].rss, 12);
        assert!(m.fb().is_inactive(g[11]) && m.pages.has(g[11], RESIDENT));
        // touched soon, such a page takes no fault (the hit loop only sets its referenced
        // bit) and stays inactive, aging apart from the faulting page, until a scan
        m.pages.flags[g[10] as usize] |= REFERENCED;
        assert!(m.fb().is_inactive(g[10]) && !m.fb().is_active(g[10]));
        assert_eq!(m.fb().counters.soft_faults, 0);
        // without read-around the fault reads its page alone
        let mut m = machine(256, |c| c.swap.read_around = ReadAroundKind::None);
        let g = swapped(&mut m, 0..16);
        m.fb_fault(0, g[4]).unwrap();
        drain(&mut m);
        assert_eq!(m.disk.stats().pages_read, 1);
    }

    /// vm_fault's sequential heuristic: a hard fault at the end of the last read caches
    /// the clean resident pages behind it and reads ahead only.
    #[test]
    fn a_sequential_fault_caches_the_pages_behind_and_reads_ahead() {
        let mut m = machine(256, |_| {});
        let g = swapped(&mut m, 0..40);
        m.fb_fault(0, g[0]).unwrap();
        drain(&mut m);
        // pages 0..7 read; lastr = 8: a fault at 8 is sequential
        assert_eq!(m.disk.stats().pages_read, 8);
        assert_eq!(m.fb().lastr[0], 8);
        m.fb_fault(0, g[8]).unwrap();
        drain(&mut m);
        assert_eq!(m.disk.stats().pages_read, 16, "8 ahead of 8 (7 by haspage), none behind");
        assert!((0..8).all(|v| m.fb().is_cached(g[v])), "the pages behind are cached");
        assert_eq!(m.fb().counters.cached_behind, 8);
        // without the heuristic they stay
        let mut m = machine(256, |c| c.system.freebsd.cache_behind = false);
        let g = swapped(&mut m, 0..40);
        m.fb_fault(0, g[0]).unwrap();
        drain(&mut m);
        m.fb_fault(0, g[8]).unwrap();
        drain(&mut m);
        assert!((0..8).all(|v| m.fb().in_memq(g[v])));
    }

    /// PG_WINATCFLS: on the first pass a dirty inactive page goes round the queue once
    /// more; it is laundered when the scan meets it again. Later passes launder at once.
    #[test]
    fn a_dirty_inactive_page_is_laundered_on_its_second_pass() {
        let setup = |second: bool| {
            let mut m = machine(64, |c| {
                c.swap.clustering = ClusteringKind::None;
                c.system.freebsd.dirty_second_pass = second;
            });
            let d = inactive(&mut m, 0..4, true);
            m.pool.free = 0;
            (m, d)
        };
        let (mut m, d) = setup(true);
        m.fb_scan(0);
        assert_eq!(m.disk.stats().writes, 0, "first pass: no page-out");
        assert!(d.iter().all(|&g| m.fb().pflags[g as usize] & WINATCFLS != 0 && m.pages.has(g, DIRTY)));
        m.fb_scan(0);
        assert_eq!(m.disk.stats().writes, 4, "second pass: laundered");
        assert!(d.iter().all(|&g| m.pages.has(g, WRITING) && m.pages.has(g, RESIDENT)));
        // the pages stay in memory, write-protected; a write waits for the page-out
        write_next(&mut m);
        assert!(matches!(m.fb_fault(0, d[0]).unwrap(), FaultOutcome::Blocked));
        drain(&mut m);
        assert!(m.pages.has(d[0], SWAP_VALID) && !m.pages.has(d[0], WRITING));
        assert_eq!(m.procs[0].state, RunState::Ready, "woken by the write's completion");
        // off: laundered on the first pass; and pass 1 launders at once anyway
        let (mut m, _) = setup(false);
        m.fb_scan(0);
        assert_eq!(m.disk.stats().writes, 4);
        let (mut m, _) = setup(true);
        m.fb_scan(1);
        assert_eq!(m.disk.stats().writes, 4);
    }

    /// vm_pageout_scan: `--page_shortage` once per laundered cluster; with
    /// launder_counts = "pages" the cluster counts all its pages.
    #[test]
    fn a_laundered_cluster_counts_one_page_of_shortage() {
        let run = |counts: LaunderCount| {
            // 256 pages: vm_pageout_page_count 8, v_free_target 134, no cache target
            let mut m = machine(256, |c| c.system.freebsd.launder_counts = counts);
            inactive(&mut m, 0..8, true);
            let clean = inactive(&mut m, 100..140, false);
            m.pool.free = 120;
            let shortage = m.fb_paging_target();
            m.fb_scan(1);
            assert_eq!(m.disk.stats().writes, 1);
            assert_eq!(m.disk.stats().pages_written, 8);
            let cached = clean.iter().filter(|&&g| m.fb().is_cached(g)).count() as i64;
            (shortage, cached)
        };
        let (shortage, cached) = run(LaunderCount::Cluster);
        assert_eq!(shortage, 14);
        assert_eq!(cached, shortage - 1);
        let (shortage, cached) = run(LaunderCount::Pages);
        assert_eq!(cached, shortage - 8);
    }

    /// cluster_scan: 8.2's aligned scan against the paper's 8 back, 16 in all; and
    /// max_launder bounds the clusters of a first-pass scan.
    #[test]
    fn cluster_scan_and_max_launder() {
        let launder = |scan: ClusterScan| {
            let mut m = machine(2048, |c| c.system.freebsd.cluster_scan = scan);
            let d = inactive(&mut m, 0..40, true);
            m.pool.free = 0;
            m.fb_launder(d[20]);
            d.iter().enumerate().filter(|(_, &g)| m.pages.has(g, WRITING)).map(|(v, _)| v).collect::<Vec<_>>()
        };
        // 2048 pages: vm_pageout_page_count 16; page 20 goes back to 16, then forward
        assert_eq!(launder(ClusterScan::Aligned), (16..32).collect::<Vec<_>>());
        assert_eq!(launder(ClusterScan::Paper), (12..28).collect::<Vec<_>>());
        // a first pass launders at most max_launder clusters
        let mut m = machine(256, |c| {
            c.swap.clustering = ClusteringKind::None;
            c.system.freebsd.max_launder = 3;
            c.system.freebsd.dirty_second_pass = false;
        });
        inactive(&mut m, 0..10, true);
        m.pool.free = 0;
        m.fb_scan(0);
        assert_eq!(m.disk.stats().writes, 3);
    }

    /// The inactive scan caches clean pages until free + cache reach
    /// v_free_target + v_cache_min, and stops there.
    #[test]
    fn the_daemon_brings_free_and_cache_to_its_target() {
        let mut m = machine(1000, |c| c.system.freebsd.memory_pages = Some(262144));
        let target = m.fb().t.free_target + m.fb().t.cache_min;
        let clean = inactive(&mut m, 0..400, false);
        m.pool.free = 2;
        assert!(m.fb_paging_target() > 0);
        m.fb_scan(0);
        assert_eq!(m.fb_available(), target);
        assert_eq!(clean.iter().filter(|&&g| m.fb().is_cached(g)).count() as u64, target - 2);
        // the oldest went first
        assert!(m.fb().is_cached(clean[0]) && !m.fb().is_cached(clean[399]));
        assert!(!m.pages.has(clean[0], RESIDENT));
        // referenced pages are activated instead
        let mut m = machine(1000, |c| c.system.freebsd.memory_pages = Some(262144));
        let clean = inactive(&mut m, 0..400, false);
        m.pool.free = 2;
        m.pages.flags[clean[0] as usize] |= REFERENCED;
        m.fb_scan(0);
        assert!(m.fb().is_active(clean[0]));
        assert_eq!(m.fb().act_count(clean[0]), ACT_INIT + 1 + ACT_ADVANCE);
    }

    /// act_count: a referenced active page gains ACT_ADVANCE + its references (up to
    /// ACT_MAX); an unreferenced one loses ACT_DECLINE a scan and is deactivated at 0.
    #[test]
    fn act_count_rises_with_use_and_falls_with_disuse() {
        let mut m = machine(64, |_| {});
        let g = page(&mut m, 0);
        m.pages.flags[g as usize] = TOUCHED | RESIDENT | DIRTY;
        m.fb().pflags[g as usize] |= SOFT_REF;
        m.fb().activate(g);
        assert_eq!(m.fb().act_count(g), ACT_INIT);
        m.pages.flags[g as usize] |= REFERENCED;
        assert!(!m.fb_age_active(g));
        assert_eq!(m.fb().act_count(g), ACT_INIT + ACT_ADVANCE + 2);
        for _ in 0..20 {
            m.pages.flags[g as usize] |= REFERENCED;
            m.fb_age_active(g);
        }
        assert_eq!(m.fb().act_count(g), ACT_MAX);
        let mut scans = 0;
        while !m.fb_age_active(g) {
            scans += 1;
        }
        assert_eq!(scans, ACT_MAX as usize - 1, "one ACT_DECLINE a scan down to 0");
        // in the daemon's active scan: the unreferenced page goes inactive, the used stays
        let mut m = machine(64, |_| {});
        let (a, b) = (page(&mut m, 0), page(&mut m, 1));
        for g in [a, b] {
            m.pages.flags[g as usize] = TOUCHED | RESIDENT | DIRTY;
            m.fb().activate(g);
        }
        m.pool.free = 10;
        for _ in 0..ACT_INIT {
            m.pages.flags[b as usize] |= REFERENCED;
            m.fb_scan(0);
        }
        assert!(m.fb().is_inactive(a) && m.fb().is_active(b));
    }

    /// vm_pageout_page_stats ages the active queue while the daemon sleeps; a page whose
    /// count reached 0 is unmapped and deactivated.
    #[test]
    fn page_stats_age_the_active_queue() {
        let mut m = machine(64, |_| {});
        let g = page(&mut m, 0);
        m.pages.flags[g as usize] = TOUCHED | RESIDENT | DIRTY;
        m.procs[0].rss = 1;
        m.fb().activate(g);
        m.fb().act_count[g as usize] = 0;
        m.pool.free = 0;
        m.fb_page_stats();
        assert!(m.fb().is_inactive(g) && !m.pages.has(g, RESIDENT));
        assert_eq!(m.procs[0].rss, 0);
        // with page_stats = false the daemon's timed wake-up leaves the queues alone
        let mut m = machine(64, |c| c.system.freebsd.page_stats = false);
        let g = page(&mut m, 0);
        m.pages.flags[g as usize] = TOUCHED | RESIDENT | DIRTY;
        m.procs[0].rss = 1;
        m.fb().activate(g);
        m.fb().act_count[g as usize] = 0;
        m.pool.free = 0;
        m.live = 1;
        let gen = m.fb().daemon_gen;
        m.fb_daemon(gen, false);
        assert!(m.fb().is_active(g) && m.pages.has(g, RESIDENT));
    }

    /// PG_WINATCFLS concerns dirty pages only: a scan over clean inactive pages caches
    /// the same pages, in the same order, with the rule on or off.
    #[test]
    fn pg_winatcfls_changes_nothing_for_clean_pages() {
        let scan = |second: bool| {
            let mut m = machine(256, |c| c.system.freebsd.dirty_second_pass = second);
            let clean = inactive(&mut m, 0..40, false);
            m.pool.free = 100;
            m.fb_scan(0);
            assert_eq!(m.disk.stats().writes, 0);
            clean.iter().map(|&g| m.fb().is_cached(g)).collect::<Vec<_>>()
        };
        let on = scan(true);
        assert!(on.iter().any(|&c| c), "the scan cached some pages");
        assert_eq!(on, scan(false));
    }

    /// One shortage unit per cluster matters only for clusters of more than one page:
    /// with clustering = "none" every cluster is its page, and the two counts agree.
    #[test]
    fn one_page_clusters_count_the_same_either_way() {
        let run = |counts: LaunderCount| {
            let mut m = machine(256, |c| {
                c.swap.clustering = ClusteringKind::None;
                c.system.freebsd.launder_counts = counts;
            });
            let dirty = inactive(&mut m, 0..8, true);
            let clean = inactive(&mut m, 100..140, false);
            m.pool.free = 120;
            m.fb_scan(1);
            let written = dirty.iter().filter(|&&g| m.pages.has(g, WRITING)).count();
            let cached = clean.iter().filter(|&&g| m.fb().is_cached(g)).count();
            (m.disk.stats().writes, written, cached)
        };
        let cluster = run(LaunderCount::Cluster);
        assert_eq!(cluster.0, 8, "eight one-page writes");
        assert_eq!(cluster, run(LaunderCount::Pages));
    }

    /// vm_fault_prefault asks `pmap_is_prefaultable` before it looks a page up: across a
    /// page-table boundary (every `NPTEPG` pages) a neighbour is passed over, not given up
    /// on, while no page of that page table is mapped; once one is, it is prefaulted.
    #[test]
    fn prefault_skips_neighbours_without_a_page_table_page() {
        for mapped_below in [false, true] {
            let mut m = machine(256, |c| c.swap.read_around = ReadAroundKind::None);
            let g = swapped(&mut m, 0..NPTEPG + 16);
            // the neighbours of page NPTEPG in memory, unmapped, on the inactive queue
            for v in (NPTEPG - 4..NPTEPG).chain(NPTEPG + 1..NPTEPG + 5) {
                m.pool.free -= 1;
                m.fb().deactivate(g[v as usize]);
            }
            if mapped_below {
                m.pool.free -= 1;
                m.fb_map(g[100], false);
                m.fb().activate(g[100]);
            }
            assert!(matches!(m.fb_fault(0, g[NPTEPG as usize]).unwrap(), FaultOutcome::Blocked));
            drain(&mut m);
            let below = (NPTEPG - 4..NPTEPG).filter(|&v| m.pages.has(g[v as usize], RESIDENT)).count();
            let above = (NPTEPG + 1..NPTEPG + 5).filter(|&v| m.pages.has(g[v as usize], RESIDENT)).count();
            assert_eq!(above, 4, "same page table: prefaulted");
            assert_eq!(below, if mapped_below { 4 } else { 0 }, "mapped_below = {mapped_below}");
            assert_eq!(m.fb().counters.prefaulted, above as u64 + below as u64);
            // prefaulted pages stay inactive and unreferenced
            assert!((NPTEPG + 1..NPTEPG + 5).all(|v| m.fb().is_inactive(g[v as usize]) && !m.pages.has(g[v as usize], REFERENCED)));
        }
    }

    /// vm_fault_prefault maps only pages already in memory: a fault whose neighbours are
    /// all on swap (no read-around) maps its page alone, with or without the rule.
    #[test]
    fn prefault_without_resident_neighbours_maps_nothing() {
        for prefault in [true, false] {
            let mut m = machine(256, |c| {
                c.swap.read_around = ReadAroundKind::None;
                c.system.freebsd.prefault = prefault;
            });
            let g = swapped(&mut m, 0..16);
            m.fb_fault(0, g[4]).unwrap();
            drain(&mut m);
            assert_eq!(m.procs[0].rss, 1, "prefault = {prefault}");
            assert_eq!(m.fb().counters.prefaulted, 0);
        }
    }
}
