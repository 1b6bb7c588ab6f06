//! Gang scheduling of parallel jobs over a cluster of nodes (gang-adaptive-paging.txt
//! section 2): each node is a [`Machine`] with its own frames, swap disk and page-out
//! daemon; a job has one process per node; the scheduling table switches every node from
//! one job to the next at the same instants.
//!
//! The nodes run as one conservative parallel discrete-event simulation. The only thing
//! one node tells another is that every process of a job has reached a barrier, which
//! releases them all a barrier's delay (`barrier_us` plus a message latency per round of
//! a tree barrier) after the last arrival. A node whose process waits at a
//! barrier may therefore not run its clock past the earliest time another node could
//! still arrive (that node's clock plus the barrier cost); a node with nothing waiting
//! runs freely. The driver always steps the node furthest behind, so the same
//! configuration gives the same numbers on any machine. Job switches need no messages:
//! quanta start at the same times everywhere, and a job ends on every node at once, at
//! the release of its last barrier.

use std::sync::Arc;

use rayon::prelude::*;

use super::config::{GangConfig, GangMode, Mechanism, SystemConfig};
use super::events::Event;
use super::machine::{Machine, Step};
use super::partition::{owner_labeler, HotPages, PartitionPlan, SplitRule};
use super::process::RunState;
use super::results::SystemResult;
use super::serial_tee::SerialTee;
use crate::trace::Progress;
use crate::{Error, Result};

/// Counters of one node's gang scheduler and adaptive paging.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GangStats {
    pub switches: u64,
    /// Pages selective page-out took from the outgoing process.
    pub so_pages: u64,
    /// Pages aggressive page-out took out of memory at switches, and those of them it
    /// had to write (dirty).
    pub ao_pages: u64,
    pub ao_written: u64,
    /// Pages adaptive page-in read, and the reads it took.
    pub ai_pages: u64,
    pub ai_reads: u64,
    /// Pages background writing wrote.
    pub bg_pages: u64,
    /// With split data (`gang.partition = "split"`): pages this node received at
    /// barriers, and the distinct pages of other nodes it holds copies of (every job's).
    pub exchanged_pages: u64,
    pub ghost_pages: u64,
    /// Distinct pages this node's processes touched, every job's (with one job: the
    /// node's footprint, its part of the job's pages and its copies).
    pub footprint_pages: u64,
}

/// A job switch on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchRecord {
    pub t_ns: u64,
    pub from: Option<u16>,
    pub to: u16,
}

/// One node's gang scheduler and the state of the adaptive paging mechanisms.
pub struct GangNode {
    pub cfg: GangConfig,
    /// The quantum (u64::MAX in batch mode: no switch before a job ends).
    pub quantum_ns: u64,
    /// The job whose process runs on this node now.
    pub active: Option<u16>,
    /// The process descheduled at the last switch (selective page-out takes from it).
    pub outgoing: Option<u16>,
    pub done: Vec<bool>,
    /// Switch and background-write events of an older quantum are ignored.
    pub generation: u32,
    /// Stamp epoch at which each process was last switched in.
    pub switch_in_epoch: Vec<u32>,
    /// Pages each process referenced in its previous quantum (aggressive page-out).
    pub working_set: Vec<Option<u64>>,
    /// Adaptive page-in's records of each process: (first virtual page, run length) of
    /// the pages that left memory while it was switched out (figure 4).
    pub records: Vec<Vec<(u64, u32)>>,
    /// Recorded pages still to be read for the running process.
    pub page_in_queue: std::collections::VecDeque<super::memory::Gid>,
    /// Adaptive page-in's artificial fault in progress (`ai_reads = "fault"` or
    /// `"single"`): its read in flight, or a read it waits for.
    pub ai_in_flight: u32,
    /// The page an artificial fault waits for because another read brings it in
    /// (read-around of an earlier fault, or the process's own fault); NO_GID: none.
    pub ai_waiting: super::memory::Gid,
    /// Where background writing's walk of the running process's pages goes on.
    pub bg_cursor: usize,
    pub stats: GangStats,
    pub switch_log: Vec<SwitchRecord>,
}

impl GangNode {
    pub fn new(cfg: GangConfig, processes: usize) -> GangNode {
        let quantum_ns = match cfg.mode {
            GangMode::Gang => ((cfg.quantum_s * 1e9).round() as u64).max(1),
            GangMode::Batch => u64::MAX,
        };
        GangNode {
            cfg,
            quantum_ns,
            active: None,
            outgoing: None,
            done: vec![false; processes],
            generation: 0,
            switch_in_epoch: vec![0; processes],
            working_set: vec![None; processes],
            records: vec![Vec::new(); processes],
            page_in_queue: Default::default(),
            ai_in_flight: 0,
            ai_waiting: super::memory::NO_GID,
            bg_cursor: 0,
            stats: GangStats::default(),
            switch_log: Vec::new(),
        }
    }

    pub fn has(&self, m: Mechanism) -> bool {
        self.cfg.has(m)
    }
}

impl Machine {
    /// Makes this machine a node of a gang run: job 0 runs first, the others are
    /// stopped. `supersteps`: each job's references between barriers, when its
    /// processes span several nodes.
    pub fn enable_gang(&mut self, node: GangNode, supersteps: Option<&[Option<u64>]>) {
        if let Some(supersteps) = supersteps {
            for (p, &superstep) in self.procs.iter_mut().zip(supersteps) {
                p.barriers = true;
                p.superstep_refs = superstep.unwrap_or(u64::MAX);
                p.barrier_at = p.superstep_refs;
            }
        }
        self.gang = Some(node);
    }

    /// Process `p` reached a barrier (`last`: the one that ends its job); the cluster
    /// driver releases it when the job's processes on every node are there.
    pub(super) fn arrive(&mut self, p: u16, last: bool) {
        let proc = &mut self.procs[p as usize];
        proc.state = RunState::BlockedBarrier;
        proc.at_final_barrier = last;
        if last {
            if let Some(m) = &proc.marks {
                proc.exchange_pages = m.lock().expect("partition marks").tail_exchange;
            }
        }
        self.arrivals.push(p);
    }

    /// At the start of the run: every job but the first is stopped.
    pub(super) fn start_gang(&mut self) {
        if self.gang.is_none() {
            return;
        }
        for p in 1..self.procs.len() {
            self.stop(p as u16);
        }
        self.begin_quantum(None, None, 0);
    }

    /// The scheduler's quantum ended: the next job takes every node.
    pub(super) fn on_quantum_end(&mut self, generation: u32) {
        if self.gang.as_ref().is_some_and(|g| g.generation == generation) {
            self.switch_job();
        }
    }

    /// A process exited: when it was the running job's, the next job starts at once.
    pub(super) fn job_exited(&mut self, p: u16) {
        let Some(g) = &mut self.gang else { return };
        g.done[p as usize] = true;
        if g.outgoing == Some(p) {
            g.outgoing = None;
        }
        if g.active == Some(p) {
            self.switch_job();
        }
    }

    /// Switches from the running job to the next unfinished one in the table (section
    /// 3.5: SIGSTOP to the outgoing processes, SIGCONT to the incoming ones), with the
    /// adaptive paging mechanisms that are on.
    fn switch_job(&mut self) {
        let g = self.gang.as_ref().expect("gang run");
        let out = g.active.filter(|&o| !g.done[o as usize]);
        let n = g.done.len();
        let from = g.active.map_or(0, |a| a as usize + 1);
        let Some(next) = (0..n).map(|k| ((from + k) % n) as u16).find(|&q| !g.done[q as usize]) else {
            self.gang.as_mut().unwrap().active = None;
            return;
        };
        if Some(next) == out {
            // the only job left keeps the nodes: no more switches
            let g = self.gang.as_mut().unwrap();
            g.generation += 1;
            return;
        }
        if let Some(o) = out {
            let ws = self.pages_referenced_since(o, self.gang.as_ref().unwrap().switch_in_epoch[o as usize]);
            self.gang.as_mut().unwrap().working_set[o as usize] = Some(ws);
            self.stop(o);
        }
        let from = self.gang.as_ref().unwrap().active;
        self.gang.as_mut().unwrap().outgoing = out;
        self.begin_quantum(from, out, next);
    }

    /// Starts `next`'s quantum: aggressive page-out, the process itself, adaptive
    /// page-in, and the timers of the quantum's end and of background writing.
    /// `from`: the job that ran until now (None at the start); `out`: the same unless it
    /// has finished, the process the mechanisms page out.
    fn begin_quantum(&mut self, from: Option<u16>, out: Option<u16>, next: u16) {
        // a new stamp epoch, so that the pages `next` references in this quantum can be
        // counted at its end (the per-sample NAP stays exact: a process runs on one side
        // of a switch only)
        self.epoch += 1;
        let now = self.now;
        let g = self.gang.as_mut().unwrap();
        g.generation += 1;
        g.active = Some(next);
        g.switch_in_epoch[next as usize] = self.epoch;
        g.page_in_queue.clear();
        g.ai_waiting = super::memory::NO_GID;
        g.bg_cursor = 0;
        if from.is_some() {
            g.stats.switches += 1;
        }
        g.switch_log.push(SwitchRecord { t_ns: now, from, to: next });
        let (generation, quantum, bg, bg_fraction) = (g.generation, g.quantum_ns, g.has(Mechanism::Bg), g.cfg.bg_fraction);
        if let Some(o) = out {
            if self.gang.as_ref().unwrap().has(Mechanism::Ao) {
                self.aggressive_page_out(o, next);
            }
        }
        self.cont(next);
        if self.gang.as_ref().unwrap().has(Mechanism::Ai) {
            self.adaptive_page_in(next);
        }
        if quantum != u64::MAX {
            let end = now.saturating_add(quantum);
            self.events.push(end, Event::Switch(generation));
            if bg {
                let start = end - (quantum as f64 * bg_fraction).round() as u64;
                self.events.push(start.max(now), Event::BackgroundWrite(generation));
            }
        }
    }

    /// SIGSTOP: the process stops at its next instruction.
    fn stop(&mut self, p: u16) {
        let proc = &mut self.procs[p as usize];
        proc.suspended = true;
        proc.suspended_since = self.now;
    }

    /// SIGCONT.
    fn cont(&mut self, p: u16) {
        let now = self.now;
        let proc = &mut self.procs[p as usize];
        if !proc.suspended {
            return;
        }
        proc.suspended = false;
        proc.counters.suspended_ns += now - proc.suspended_since;
        if proc.state == RunState::Ready {
            self.ready.push_back(p);
        }
    }

    /// Pages of `p` referenced since stamp epoch `epoch` began.
    fn pages_referenced_since(&self, p: u16, epoch: u32) -> u64 {
        let stamps = &self.pages.stamp;
        self.procs[p as usize].gid_of.iter().filter(|&&g| g != super::memory::NO_GID && stamps[g as usize] > epoch).count() as u64
    }
}

/// A parallel job's completion.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub name: String,
    /// When its last process finished.
    pub end_ns: u64,
    /// The job alone on its nodes with all the memory it wants, for its slowdown: with
    /// its data split over several nodes, its processes on every node with the same
    /// barriers and exchange (the job's own parallel run); on one node, or with copies
    /// of the serial run on every node, its node-0 process alone (the serial run).
    pub dedicated_ns: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GangResult {
    pub end_ns: u64,
    pub jobs: Vec<JobResult>,
    pub nodes: Vec<SystemResult>,
    pub stats: Vec<GangStats>,
    /// Job switches (node 0's; every node switches at the same instants).
    pub switches: Vec<SwitchRecord>,
}

/// Where a barrier of one job stands: which nodes have arrived, and the latest arrival.
#[derive(Clone, Default)]
struct Barrier {
    arrived: Vec<bool>,
    count: usize,
    latest: u64,
}

/// Runs a gang configuration: every node until every job has finished, and each job
/// alone for its dedicated time.
pub fn run_gang(cfg: &SystemConfig, progress: Progress) -> Result<GangResult> {
    cfg.validate()?;
    let g = cfg.gang.clone().ok_or_else(|| Error::invalid("gang", "expected a [gang] section"))?;
    if let Some(i) = cfg.processes.iter().position(|p| p.start_ms != 0.0) {
        return Err(Error::invalid(format!("processes[{i}].start_ms"), "jobs of a gang run start together: expected 0"));
    }
    let nodes = g.nodes as usize;
    // each job's serial run alone (its node-0 process, no barriers): its time and its
    // pages, which size every node's swap area and the split's shares
    let dedicated = super::dedicated_runs(cfg)?;
    let pages: Vec<u64> = dedicated.iter().map(|d| d.1).collect();
    let total_pages: u64 = pages.iter().sum();
    // node k's processes have their own seeds: slack for a footprint that differs
    let swap_slots = super::swap_slots(cfg, total_pages, total_pages / 2)?;
    if swap_slots.saturating_mul(nodes as u64) > super::config::MAX_SWAP_SLOTS {
        return Err(Error::invalid(
            "system.swap_slots",
            format!(
                "{nodes} nodes with a swap area of {swap_slots} slots each make {} slots in all, more than the limit of {} (2^28)",
                swap_slots.saturating_mul(nodes as u64),
                super::config::MAX_SWAP_SLOTS
            ),
        ));
    }
    let hot = super::shared_pages(cfg)?;
    let alone = dedicated_times(cfg, &g, &dedicated, &hot)?;
    let mut result = simulate(cfg, &g, &pages, &hot, None, swap_slots, progress)?;
    for (i, job) in result.jobs.iter_mut().enumerate() {
        job.dedicated_ns = alone[i];
        // each process of the job against the job alone (they end together)
        for node in &mut result.nodes {
            node.processes[i].dedicated_ns = alone[i];
        }
    }
    Ok(result)
}

/// Each job's dedicated time (see [`JobResult::dedicated_ns`]): with split data over
/// several nodes, the job alone on its nodes ([`job_alone_ns`]); otherwise the serial
/// run's.
fn dedicated_times(cfg: &SystemConfig, g: &GangConfig, serial: &[(u64, u64)], hot: &[Option<Arc<HotPages>>]) -> Result<Vec<u64>> {
    if g.nodes <= 1 || g.partition.split_rule().is_none() {
        return Ok(serial.iter().map(|d| d.0).collect());
    }
    (0..cfg.processes.len()).into_par_iter().map(|i| job_alone_ns(cfg, i, serial[i].1, hot[i].clone())).collect()
}

/// Job `i` alone on the cluster: a gang run of it only, no mechanisms, no locked memory,
/// frames for everything, the same split, barriers and exchange (`pages`, `hot`: its
/// serial run's distinct pages and its shared pages). Kept like the serial runs (see
/// [`super::dedicated_runs`]): the same job gives the same time whatever the memory and
/// the mechanisms of the run that asks.
pub(super) fn job_alone_ns(cfg: &SystemConfig, i: usize, pages: u64, hot: Option<Arc<HotPages>>) -> Result<u64> {
    let alone = split_alone_config(cfg, i);
    let key = cfg.processes[i].workload.as_ref().map(|_| {
        let mut keyed = alone.clone();
        keyed.system.frames = 0;
        keyed.system.watermarks = None;
        format!("gang alone {keyed:?}")
    });
    if let Some(hit) = key.as_deref().and_then(super::remembered) {
        return Ok(hit.0);
    }
    let g = alone.gang.clone().expect("a gang run");
    let r = simulate(&alone, &g, &[pages], &[hot], Some(super::UNLIMITED_FRAMES), 1, &mut |_| true)
        .map_err(|e| Error::invalid(format!("processes[{i}]"), e.to_string()))?;
    let ns = r.jobs[0].end_ns;
    if let Some(key) = key {
        super::remember(key, (ns, pages));
    }
    Ok(ns)
}

/// The configuration of [`job_alone_ns`]'s run: job `i`'s serial run alone
/// ([`super::alone_config`]) on the same nodes, with the same split, barriers and
/// exchange, without mechanisms, locked memory or per-node frames.
fn split_alone_config(cfg: &SystemConfig, i: usize) -> SystemConfig {
    let mut alone = super::alone_config(cfg, i);
    let mut ga = cfg.gang.clone().unwrap_or_default();
    ga.mode = GangMode::Batch;
    ga.mechanisms.clear();
    ga.locked_mb = 0.0;
    ga.node_frames.clear();
    alone.gang = Some(ga);
    alone
}

/// Runs the nodes of a gang configuration until every job has finished; the jobs'
/// `dedicated_ns` are left 0. `pages`: each job's serial distinct pages; `hot`: its
/// shared pages (split owner rule); `frames`: every node's frames (None: as
/// configured).
fn simulate(cfg: &SystemConfig, g: &GangConfig, pages: &[u64], hot: &[Option<Arc<HotPages>>], frames: Option<u64>, swap_slots: u64, progress: Progress) -> Result<GangResult> {
    let nodes = g.nodes as usize;
    let barriers: Vec<Option<u64>> = cfg.processes.iter().map(|p| p.superstep_refs).collect();
    let shares: Vec<f64> = if g.node_shares.is_empty() { vec![1.0; nodes] } else { g.node_shares.clone() };
    let rule = g.partition.split_rule();
    let mut machines = Vec::with_capacity(nodes);
    // split over several nodes: each job's serial stream read once for all its nodes
    let mut tees: Vec<Option<Arc<SerialTee>>> = vec![None; cfg.processes.len()];
    for k in 0..nodes {
        let mut node_cfg = cfg.clone();
        for p in &mut node_cfg.processes {
            let seed = p.seed.unwrap_or(cfg.system.seed);
            // split: every node runs the job's serial stream (the seed of the serial
            // run); copies: each node works on a copy of the problem, its own seed
            p.seed = Some(if rule.is_some() { seed } else { seed.wrapping_add(k as u64) });
        }
        node_cfg.system.seed = cfg.system.seed.wrapping_add(k as u64);
        let frames = frames.unwrap_or_else(|| g.usable_frames(g.node_frames(k, cfg.system.frames), cfg.system.page_size));
        let mut m = Machine::new(&node_cfg, frames, swap_slots, None)?;
        if let Some(rule) = rule {
            // every node runs the job's serial stream filtered to its part (partition.rs)
            for (i, p) in m.procs.iter_mut().enumerate() {
                if k == 0 && nodes > 1 {
                    // the owner rule's labels worked out once for every node
                    let labeler = (rule == SplitRule::Owner).then(|| owner_labeler(&shares, pages[i], hot[i].clone()));
                    tees[i] = Some(SerialTee::new(p.spec.open()?, nodes, labeler));
                }
                p.partition = Some(PartitionPlan { node: k, shares: shares.clone(), total_pages: pages[i], rule, hot: hot[i].clone(), serial: tees[i].clone() });
            }
        }
        let node = GangNode::new(g.clone(), cfg.processes.len());
        m.enable_gang(node, (nodes > 1).then_some(&barriers[..]));
        m.start()?;
        machines.push(m);
    }
    let barrier_ns = g.barrier_delay_ns();
    let exchange_ns_per_page = if nodes > 1 { g.exchange_ns_per_page(cfg.system.page_size) } else { 0.0 };
    let mut state: Vec<Barrier> = vec![Barrier { arrived: vec![false; nodes], ..Default::default() }; cfg.processes.len()];
    let mut done = vec![false; nodes];
    let mut quiet = |_: u64| true;
    loop {
        // the node furthest behind among those that may advance
        let limits: Vec<u64> = (0..nodes).map(|k| limit(&machines, &state, k, barrier_ns)).collect();
        let Some(k) = (0..nodes).filter(|&k| !done[k] && machines[k].now() < limits[k]).min_by_key(|&k| (machines[k].now(), k)) else {
            if done.iter().all(|&d| d) {
                break;
            }
            return Err(Error::invalid("gang", "no node can advance (deadlock between barriers)"));
        };
        // node 0 reports progress (every node's clock is within a barrier of it)
        let step = if k == 0 {
            machines[k].step(limits[k], &mut *progress)?
        } else {
            machines[k].step(limits[k], &mut quiet)?
        };
        for p in std::mem::take(&mut machines[k].arrivals) {
            let b = &mut state[p as usize];
            b.arrived[k] = true;
            b.count += 1;
            b.latest = b.latest.max(machines[k].now());
            if b.count == nodes {
                for m in machines.iter_mut() {
                    let x = m.procs[p as usize].exchange_pages;
                    m.gang.as_mut().expect("gang node").stats.exchanged_pages += x;
                }
                // with split data the barrier also waits for the node that receives the
                // most pages to have received them (the exchange of the superstep)
                let exchange = machines.iter().map(|m| m.procs[p as usize].exchange_pages).max().unwrap_or(0);
                let release = b.latest + barrier_ns + (exchange as f64 * exchange_ns_per_page).round() as u64;
                for m in machines.iter_mut() {
                    m.events.push(release, Event::BarrierRelease(p));
                }
                *b = Barrier { arrived: vec![false; nodes], ..Default::default() };
            }
        }
        if step == Step::Done {
            done[k] = true;
        }
    }
    let mut results = Vec::with_capacity(nodes);
    let mut stats = Vec::with_capacity(nodes);
    let mut switches = Vec::new();
    for (k, mut m) in machines.into_iter().enumerate() {
        let mut node = m.gang.take().expect("gang node");
        node.stats.ghost_pages = m.procs.iter().filter_map(|p| p.marks.as_ref()).map(|x| x.lock().expect("partition marks").ghost_pages).sum();
        stats.push(node.stats);
        if k == 0 {
            switches = node.switch_log;
        }
        let mut quiet = |_: u64| true;
        let r = m.end(&mut quiet)?;
        stats[k].footprint_pages = r.processes.iter().map(|p| p.counters.distinct_pages).sum();
        results.push(r);
    }
    let jobs = cfg
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| JobResult {
            name: p.name.clone(),
            end_ns: results.iter().map(|r| r.processes[i].end_ns).max().unwrap_or(0),
            dedicated_ns: 0,
        })
        .collect::<Vec<_>>();
    let end_ns = jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
    Ok(GangResult { end_ns, jobs, nodes: results, stats, switches })
}

/// How far node `k` may run its clock: unbounded unless one of its processes waits at a
/// barrier, then the earliest time a node that has not arrived yet could release it.
fn limit(machines: &[Machine], state: &[Barrier], k: usize, barrier_ns: u64) -> u64 {
    let mut limit = u64::MAX;
    for (p, proc) in machines[k].procs.iter().enumerate() {
        if proc.state != RunState::BlockedBarrier {
            continue;
        }
        for (n, m) in machines.iter().enumerate() {
            if n != k && !state[p].arrived[n] {
                limit = limit.min(m.now().saturating_add(barrier_ns));
            }
        }
    }
    limit
}
