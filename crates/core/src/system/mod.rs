//! The timed system: a discrete-event simulation, in simulated nanoseconds, of one node
//! whose processes share its frames (DESIGN.md, "Timed system simulation").
//!
//! [`run_system`] runs the configured processes together and each one alone with all
//! the memory it wants (its dedicated run, for the slowdown), and returns plain results.

mod adaptive_pagein;
mod aggressive_pageout;
pub mod async_writes;
mod background_write;
mod dead_list_reclaim;
pub mod config;
mod free_pages;
#[cfg(test)]
mod linux22_tests;
mod swap_cache;
mod swap_out;
mod swapin_readahead;
pub mod token_defaults;
pub mod disk;
mod disk_io;
pub mod disk_presets;
pub mod elevator;
pub mod events;
pub mod freebsd;
pub mod gang;
pub mod load_control;
pub mod machine;
pub mod memory;
pub mod pageout;
pub mod partition;
pub mod serial_tee;
pub mod process;
pub mod reclaim;
pub mod results;
pub mod samples;
mod selective_pageout;
pub mod swap;
pub mod token;

use rayon::prelude::*;

pub use config::SystemConfig;
pub use gang::{run_gang, GangResult};
pub use results::{ProcessResult, SystemResult};

use crate::trace::Progress;
use crate::{Error, Result};

/// Frames of a dedicated run: more than any process can touch.
const UNLIMITED_FRAMES: u64 = (u32::MAX / 2 - 1) as u64;

/// Dedicated runs already made in this process, by the run's full configuration: the
/// same program alone gives the same time and pages whatever the system around it (the
/// memory size, the token, the gang's mechanisms), so a sweep or an experiment that
/// runs one program under many settings runs it alone once. Only built-in workloads
/// are kept (deterministic for their parameters and seed); a trace file may change on
/// disk between two runs. Bounded: the oldest half goes when full.
static DEDICATED: std::sync::Mutex<Option<std::collections::HashMap<String, (u64, u64)>>> =
    std::sync::Mutex::new(None);
const DEDICATED_KEPT: usize = 4096;

fn remembered(key: &str) -> Option<(u64, u64)> {
    DEDICATED.lock().ok()?.as_ref()?.get(key).copied()
}

fn remember(key: String, value: (u64, u64)) {
    if let Ok(mut guard) = DEDICATED.lock() {
        let map = guard.get_or_insert_with(Default::default);
        if map.len() >= DEDICATED_KEPT {
            let drop: Vec<String> = map.keys().take(DEDICATED_KEPT / 2).cloned().collect();
            for k in drop {
                map.remove(&k);
            }
        }
        map.insert(key, value);
    }
}

/// Process `i` alone: no other process, no token, no load control, no gang, no
/// space-time record, and a reclaim that never runs (nothing is evicted).
fn alone_config(cfg: &SystemConfig, i: usize) -> SystemConfig {
    let mut alone = cfg.clone();
    alone.processes = vec![cfg.processes[i].clone()];
    alone.processes[0].start_ms = 0.0;
    alone.token = Default::default();
    alone.load_control = Default::default();
    alone.gang = None;
    alone.system.space_time = false;
    // nothing is ever evicted: a policy sized for unlimited frames would only cost memory
    alone.system.reclaim = config::ReclaimKind::Clock;
    alone.system.policy = None;
    alone.system.dead_list = None;
    alone.system.freebsd = Default::default();
    alone
}

/// The key of process `i`'s run alone in [`DEDICATED`]: every field that can change
/// that run; not the system's memory, which the run alone replaces (frames, and the
/// watermarks derived from them). None for a trace.
fn dedicated_key_opt(cfg: &SystemConfig, i: usize) -> Option<String> {
    cfg.processes[i].workload.as_ref()?;
    let mut keyed = alone_config(cfg, i);
    keyed.system.frames = 0;
    keyed.system.watermarks = None;
    Some(format!("{keyed:?}"))
}

#[cfg(test)]
fn dedicated_key(cfg: &SystemConfig, i: usize) -> String {
    dedicated_key_opt(cfg, i).expect("a workload")
}

/// Each process alone, with no memory pressure, no token and no gang (in parallel): its
/// dedicated time and its distinct pages. These runs are the first to read each source,
/// so their errors (a bad workload parameter, a corrupt trace) are reported against the
/// process that names it.
pub(crate) fn dedicated_runs(cfg: &SystemConfig) -> Result<Vec<(u64, u64)>> {
    (0..cfg.processes.len())
        .into_par_iter()
        .map(|i| {
            let alone = alone_config(cfg, i);
            let key = dedicated_key_opt(cfg, i);
            if let Some(hit) = key.as_deref().and_then(remembered) {
                return Ok(hit);
            }
            let r = machine::Machine::new(&alone, UNLIMITED_FRAMES, 1, None)
                .and_then(|m| m.run(&mut |_| true))
                .map_err(|e| Error::invalid(format!("processes[{i}]"), e.to_string()))?;
            let p = &r.processes[0];
            let value = (p.end_ns - p.start_ns, p.counters.distinct_pages);
            if let Some(key) = key {
                remember(key, value);
            }
            Ok(value)
        })
        .collect()
}

/// Shared pages already counted in this process, by the dedicated run's key (the
/// stream's pages depend on the process and the page size only). Bounded: the oldest
/// half goes when full.
static SHARED: std::sync::Mutex<Option<std::collections::HashMap<String, std::sync::Arc<partition::HotPages>>>> =
    std::sync::Mutex::new(None);
const SHARED_KEPT: usize = 64;

/// Each job's shared pages when a gang run splits its data over several nodes by the
/// owner rule (partition.rs; None otherwise): a counting pass over its serial stream,
/// in parallel, kept for built-in workloads as the dedicated runs are.
pub(crate) fn shared_pages(cfg: &SystemConfig) -> Result<Vec<Option<std::sync::Arc<partition::HotPages>>>> {
    let owner = cfg.gang.as_ref().is_some_and(|g| g.nodes > 1 && g.partition.split_rule() == Some(partition::SplitRule::Owner));
    (0..cfg.processes.len())
        .into_par_iter()
        .map(|i| {
            if !owner {
                return Ok(None);
            }
            let ratio = cfg.gang.as_ref().map_or(partition::HOT_RATIO, |g| g.shared_ratio);
            let key = dedicated_key_opt(cfg, i).map(|k| format!("{k}|shared_ratio={ratio}"));
            if let Some(hit) = key.as_deref().and_then(|k| SHARED.lock().ok()?.as_ref()?.get(k).cloned()) {
                return Ok(Some(hit));
            }
            let bad = |e: Error| Error::invalid(format!("processes[{i}]"), e.to_string());
            let spec = cfg.processes[i].source(cfg.system.page_size, cfg.system.seed, i)?;
            let hot = std::sync::Arc::new(partition::HotPages::count(&mut *spec.open().map_err(bad)?, ratio).map_err(bad)?);
            if let (Some(key), Ok(mut guard)) = (key, SHARED.lock()) {
                let map = guard.get_or_insert_with(Default::default);
                if map.len() >= SHARED_KEPT {
                    let drop: Vec<String> = map.keys().take(SHARED_KEPT / 2).cloned().collect();
                    for k in drop {
                        map.remove(&k);
                    }
                }
                map.insert(key, hot.clone());
            }
            Ok(Some(hot))
        })
        .collect()
}

/// The swap area for processes that touch `total_pages` pages: the user's
/// `system.swap_slots`, checked to leave a slot for every page, or that many pages plus
/// `slack` (for clusters), plus the share `swap.fragmentation` pre-occupies.
pub(crate) fn swap_slots(cfg: &SystemConfig, total_pages: u64, slack: u64) -> Result<u64> {
    if cfg.system.swap_slots > 0 {
        // a page holds at most one slot at a time, so free slots for every page suffice
        let s = cfg.system.swap_slots;
        let free = s - (s as f64 * cfg.swap.fragmentation) as u64;
        if free < total_pages {
            return Err(Error::invalid(
                "system.swap_slots",
                format!("expected room for the {total_pages} pages the processes touch, got {s} slots ({free} free after fragmentation)"),
            ));
        }
        return Ok(s);
    }
    let slots = ((total_pages + slack + 1024) as f64 / (1.0 - cfg.swap.fragmentation)).ceil() as u64;
    if slots > config::MAX_SWAP_SLOTS {
        return Err(Error::invalid(
            "system.swap_slots",
            format!("the processes touch {total_pages} pages: their swap area would need {slots} slots, more than the limit of {} (2^28)", config::MAX_SWAP_SLOTS),
        ));
    }
    Ok(slots)
}

/// Runs the system, and every process alone for its dedicated time.
pub fn run_system(cfg: &SystemConfig, progress: Progress) -> Result<SystemResult> {
    cfg.validate()?;
    let dedicated = dedicated_runs(cfg)?;
    let total_pages: u64 = dedicated.iter().map(|d| d.1).sum();
    let swap_slots = swap_slots(cfg, total_pages, total_pages / 4)?;
    let space_time = cfg.system.space_time.then(|| dedicated.iter().map(|d| d.1).collect());
    let mut machine = machine::Machine::new(cfg, cfg.system.frames, swap_slots, space_time)?;
    machine.set_dedicated(&dedicated.iter().map(|d| d.0).collect::<Vec<_>>(), cfg);
    let mut result = machine.run(progress)?;
    for (p, d) in result.processes.iter_mut().zip(&dedicated) {
        p.dedicated_ns = d.0;
    }
    Ok(result)
}

#[cfg(test)]
mod freebsd_tests;
#[cfg(test)]
mod disk_tests;
#[cfg(test)]
mod gang_tests;
#[cfg(test)]
mod tests;
