//! The local/remote machine (numa-page-migration.txt sections 1.1, 3 and 4): one
//! processor per node running the workload's stream, plus the migration daemons on
//! processors of their own, simulated as one discrete-event run in nanoseconds.
//!
//! A shared reference (section 4.1's start macro, access, end macro) locks its
//! processor's copy of the page's entry for the access, updates that copy's history,
//! and costs a local access or `remote_factor` of one, by where the page lives. The
//! step of the actor furthest behind in simulated time runs next (processors before
//! daemons at equal times), so every lock is granted in the order it was asked for and
//! a run is deterministic. Barriers release every waiting processor when the last one
//! arrives.
//!
//! After each shared operation's first reference the processor does `private_ns` of
//! private work, after each repeat reference `repeat_private_ns` (section 4: code and
//! private data are local and outside the page tables: processor time, no lock, no
//! history). With `memory_contention` every access, examination, page copy and entry
//! update also occupies the memory module of the node it reaches ([`Memory`]); a
//! reference asks for its word when it is issued, and holds its entry lock while it
//! waits. Not modelled: the switch's own contention apart from the target's port (folded
//! into the module's service time).

use super::config::{History, Migration, NumaConfig};
use super::daemon::{Daemon, DaemonStats, Moved};
use super::memory::{Memory, MigrationCost};
use super::pages::Pages;
use super::stream::{Op, ProcStream};
use super::workloads;
use crate::trace::Progress;
use crate::{Error, Result};

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct NumaResult {
    pub workload: String,
    pub pages: u64,
    /// Each processor's completion time.
    pub end_ns: Vec<u64>,
    pub local_refs: u64,
    pub remote_refs: u64,
    /// Processor time spent waiting for entry locks.
    pub lock_wait_ns: u64,
    /// Migrations made by Foresight (the daemons' are in `daemons`).
    pub foresight_migrations: u64,
    pub daemons: Vec<DaemonStats>,
    /// Migrations back to the node the page left at its previous migration (Foresight's
    /// and the daemons'), over every page.
    pub pingpongs: u64,
    /// Pages with at least one ping-pong.
    pub pingpong_pages: u64,
    /// The most ping-pongs of one page.
    pub max_page_pingpongs: u64,
    /// Processor time spent waiting for memory modules (with `memory_contention`).
    pub memory_wait_ns: u64,
}

impl NumaResult {
    /// The mean of the processors' completion times (section 5's measure).
    pub fn mean_ns(&self) -> f64 {
        self.end_ns.iter().sum::<u64>() as f64 / self.end_ns.len().max(1) as f64
    }

    pub fn max_ns(&self) -> u64 {
        self.end_ns.iter().copied().max().unwrap_or(0)
    }

    pub fn migrations(&self) -> u64 {
        self.foresight_migrations + self.daemons.iter().map(|d| d.migrations).sum::<u64>()
    }
}

/// One migration of a traced run (section 5.3: "by tracing all migration activity").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrationEvent {
    /// When the page's entries were released (the end of the migration), ns.
    pub at_ns: u64,
    pub page: u64,
    pub from: u16,
    pub to: u16,
    /// The daemon that made it (its index); None: Foresight.
    pub daemon: Option<u16>,
    /// The history values the daemon compared: the page's own node's and the
    /// destination's (0 and 0 for Foresight).
    pub own: u32,
    pub best: u32,
    /// Back to the node the page left at its previous migration.
    pub pingpong: bool,
}

/// Every migration of a run in the order made; each processor's arrivals at barriers and
/// the times the barriers released the processors (the iterations' ends).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationTrace {
    pub migrations: Vec<MigrationEvent>,
    /// (processor, time) of each arrival at a barrier, in simulated-time order.
    pub barrier_arrivals: Vec<(u16, u64)>,
    pub barrier_releases: Vec<u64>,
}

struct Proc {
    stream: ProcStream,
    time: u64,
    /// The operation being made: address and references left (the first is made when
    /// the operation is taken from the stream).
    current: Option<(u64, u32)>,
    at_barrier: bool,
    done: bool,
}

use crate::system::machine::MAX_SIM_NS;

/// A processor's clock past 2^63 ns: an error, never a wrapped time.
fn clock_overflow(processor: usize) -> Error {
    Error::invalid("numa", format!("simulated time exceeds 2^63 ns (292 years) on processor {processor}: expected costs that keep the run representable"))
}

/// Runs `cfg`; `progress(references done)` is called every million references.
pub fn run_numa(cfg: &NumaConfig, progress: Progress) -> Result<NumaResult> {
    run(cfg, progress, None)
}

/// Runs `cfg` and records every migration, barrier arrival and barrier release (the same
/// run as [`run_numa`]'s: the trace observes, it changes nothing).
pub fn run_numa_traced(cfg: &NumaConfig, progress: Progress) -> Result<(NumaResult, MigrationTrace)> {
    let mut trace = MigrationTrace::default();
    let result = run(cfg, progress, Some(&mut trace))?;
    Ok((result, trace))
}

fn run(cfg: &NumaConfig, progress: Progress, mut trace: Option<&mut MigrationTrace>) -> Result<NumaResult> {
    cfg.validate()?;
    let history = History::parse(&cfg.history)?;
    let w = workloads::open(&cfg.workload.name, &cfg.workload_params(), cfg.seed)?;
    let nodes = w.streams.len();
    if nodes == 0 || nodes > u16::MAX as usize {
        return Err(Error::invalid("numa.workload", format!("workload {}: expected 1 to 65535 processors", w.name)));
    }
    let ps = cfg.page_size;
    let npages = w.bytes.div_ceil(ps) as usize;
    let mut node_of = Vec::with_capacity(npages);
    for page in 0..npages {
        let home = (w.home)(page as u64 * ps);
        if home as usize >= nodes {
            return Err(Error::invalid("numa.workload", format!("workload {}: page {page} placed on node {home} of {nodes}", w.name)));
        }
        node_of.push(home);
    }
    let mut pages = Pages::new(nodes, ps, node_of, history);
    let local = cfg.local_ns().round() as u64;
    let remote = (cfg.local_ns() * cfg.remote_factor).round() as u64;
    let private = cfg.private_ns.unwrap_or(w.private.first_ns).round() as u64;
    let repeat_private = cfg.repeat_private_ns.unwrap_or(w.private.repeat_ns).round() as u64;
    let migrate = MigrationCost::new(cfg.copy_ns_per_byte, cfg.pte_update_ns, ps, nodes);
    let mut memory = cfg.memory_contention.then(|| Memory::new(nodes, cfg.memory_ns.round() as u64));
    let mut daemons: Vec<Daemon> = Vec::new();
    if cfg.migration == Migration::Daemons {
        let d = cfg.daemons as usize;
        for i in 0..d {
            let (first, end) = (npages * i / d, npages * (i + 1) / d);
            // at least 1 ns a step, so that a daemon always moves forward in time
            daemons.push(Daemon::new(
                first,
                end,
                (cfg.block_us * 1000.0).round() as u64,
                (cfg.examine_ns.round() as u64).max(1),
                cfg.examine_order,
                migrate,
            ));
        }
    }
    let foresight = cfg.migration == Migration::Foresight;
    let mut procs: Vec<Proc> =
        w.streams.into_iter().map(|stream| Proc { stream, time: 0, current: None, at_barrier: false, done: false }).collect();
    let mut end_ns = vec![0u64; nodes];
    let (mut local_refs, mut remote_refs, mut lock_wait, mut foresight_migrations) = (0u64, 0u64, 0u64, 0u64);
    let mut memory_wait = 0u64;
    let (mut live, mut waiting) = (nodes, 0usize);
    let mut next_report = 1u64 << 20;
    while live > 0 {
        // the actor furthest behind: a running processor, else a daemon
        let mut who = usize::MAX;
        let mut at = u64::MAX;
        for (i, p) in procs.iter().enumerate() {
            if !p.done && !p.at_barrier && p.time < at {
                at = p.time;
                who = i;
            }
        }
        let mut daemon = usize::MAX;
        for (i, d) in daemons.iter().enumerate() {
            if d.time < at {
                at = d.time;
                daemon = i;
            }
        }
        if daemon != usize::MAX {
            let moved = daemons[daemon].step(&mut pages, memory.as_mut());
            if let (Some(t), Some(m)) = (trace.as_deref_mut(), moved) {
                let Moved { page, from, to, own, best, pingpong } = m;
                t.migrations.push(MigrationEvent { at_ns: daemons[daemon].time, page: page as u64, from, to, daemon: Some(daemon as u16), own, best, pingpong });
            }
            continue;
        }
        if who == usize::MAX {
            return Err(Error::invalid("numa.workload", "every processor waits at a barrier that others never reach"));
        }
        let p = &mut procs[who];
        let (addr, left, first) = match p.current {
            Some((addr, left)) => (addr, left, false),
            None => match p.stream.next() {
                None => {
                    p.done = true;
                    end_ns[who] = p.time;
                    live -= 1;
                    if live > 0 && waiting == live {
                        release(&mut procs, &mut waiting, trace.as_deref_mut());
                    }
                    continue;
                }
                Some(Op::Barrier) => {
                    p.at_barrier = true;
                    waiting += 1;
                    if let Some(t) = trace.as_deref_mut() {
                        t.barrier_arrivals.push((who as u16, p.time));
                    }
                    if waiting == live {
                        release(&mut procs, &mut waiting, trace.as_deref_mut());
                    }
                    continue;
                }
                Some(Op::Ref { count: 0, .. }) => continue,
                Some(Op::Ref { addr, count }) => (addr, count, true),
            },
        };
        let page = (addr / ps) as usize;
        if page >= npages {
            return Err(Error::invalid("numa.workload", format!("processor {who} referenced byte {addr}, beyond the {} bytes of the address space", npages as u64 * ps)));
        }
        if foresight && pages.node_of[page] as usize != who {
            p.time = pages.lock_all(page, p.time, migrate.hold_ns);
            if p.time > MAX_SIM_NS {
                return Err(clock_overflow(who));
            }
            if let Some(m) = memory.as_mut() {
                m.migration(pages.node_of[page] as usize, who, p.time - migrate.hold_ns, &migrate);
            }
            let from = pages.node_of[page];
            let pingpong = pages.migrate(page, who as u16);
            foresight_migrations += 1;
            if let Some(t) = trace.as_deref_mut() {
                t.migrations.push(MigrationEvent { at_ns: p.time, page: page as u64, from, to: who as u16, daemon: None, own: 0, best: 0, pingpong });
            }
        }
        let home = pages.node_of[page] as usize;
        let is_local = home == who;
        let queued = match memory.as_mut() {
            Some(m) => m.request(home, p.time, 1),
            None => 0,
        };
        memory_wait += queued;
        let (start, end) = pages.lock_one(page, who, p.time, if is_local { local } else { remote } + queued);
        lock_wait += start - p.time;
        pages.touch(page, who);
        p.time = end.saturating_add(if first { private } else { repeat_private });
        if p.time > MAX_SIM_NS {
            return Err(clock_overflow(who));
        }
        if is_local {
            local_refs += 1;
        } else {
            remote_refs += 1;
        }
        p.current = if left > 1 { Some((addr, left - 1)) } else { None };
        let done = local_refs + remote_refs;
        if done >= next_report {
            next_report += 1 << 20;
            if !progress(done) {
                return Err(Error::Interrupted);
            }
        }
    }
    Ok(NumaResult {
        workload: w.name,
        pages: npages as u64,
        end_ns,
        local_refs,
        remote_refs,
        lock_wait_ns: lock_wait,
        foresight_migrations,
        daemons: daemons.into_iter().map(|d| d.stats).collect(),
        pingpongs: pages.pingpongs.iter().map(|&n| n as u64).sum(),
        pingpong_pages: pages.pingpongs.iter().filter(|&&n| n > 0).count() as u64,
        max_page_pingpongs: pages.pingpongs.iter().copied().max().unwrap_or(0) as u64,
        memory_wait_ns: memory_wait,
    })
}

/// Every processor at the barrier goes on when the last one arrived (a traced run records
/// when).
fn release(procs: &mut [Proc], waiting: &mut usize, trace: Option<&mut MigrationTrace>) {
    let at = procs.iter().filter(|p| p.at_barrier).map(|p| p.time).max().unwrap_or(0);
    for p in procs.iter_mut().filter(|p| p.at_barrier) {
        p.at_barrier = false;
        p.time = at;
    }
    *waiting = 0;
    if let Some(t) = trace {
        t.barrier_releases.push(at);
    }
}
