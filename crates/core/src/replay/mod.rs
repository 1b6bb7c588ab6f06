//! Fast single-pool replay: one stream, many (policy, memory size) simulations.
//!
//! The source is read once (twice when OPT needs its pre-pass); each batch is handed to
//! every simulation, the simulations running in parallel over policies and sizes.

mod by_curve;
mod simulation;

use std::sync::Arc;

use rayon::prelude::*;

use crate::policy::{Foresight, Future, PolicyKind, Repeats, TraceFuture, NEVER};
use crate::stream::{for_each_batch, for_each_batch_staged};
use crate::trace::{AccessKind, PageId, Progress, RefSource, BATCH_RECORDS};
use crate::{Error, Result};
pub use by_curve::{uses_curve, CURVE_MIN_SIZES};
pub use simulation::{PoolSimulation, Simulate};

/// What to replay: every policy at every memory size.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayConfig {
    pub policies: Vec<PolicyKind>,
    /// Memory sizes in frames (pages of the source's page size).
    pub frames: Vec<u64>,
    /// Seed of randomised policies.
    pub seed: u64,
    /// What the policies see of a record's repeats (the reference presets always see
    /// them: [`PolicyKind::repeats`]).
    pub repeats: Repeats,
}

/// Counts of one (policy, memory size) replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayResult {
    /// The policy's label, with its parameter (`last-static:-5`).
    pub policy: String,
    /// The memory size; 0 for a variable-size policy (Working Set, PFF).
    pub frames: u64,
    /// Pages resident after a record, averaged over the records: the memory a
    /// variable-size policy used; for a fixed pool, its size less the filling.
    pub mean_resident: f64,
    /// Policy-specific counts ([`crate::policy::ReplacementPolicy::counters`]).
    pub counters: Vec<(String, u64)>,
    /// Records (page touches) in the stream.
    pub records: u64,
    /// References (records times their repeat counts).
    pub references: u64,
    /// Page faults, compulsory ones included.
    pub faults: u64,
    /// First-touch faults, which no policy avoids.
    pub compulsory_faults: u64,
    /// Evictions of pages written since they were loaded: the write-backs.
    pub dirty_evictions: u64,
    pub distinct_pages: u64,
}

impl ReplayResult {
    /// Faults per reference.
    pub fn fault_ratio(&self) -> f64 {
        if self.references == 0 {
            0.0
        } else {
            self.faults as f64 / self.references as f64
        }
    }
}

impl ReplayConfig {
    pub fn validate(&self) -> Result<()> {
        if self.policies.is_empty() {
            return Err(Error::invalid("policy", "expected at least one policy"));
        }
        if self.frames.is_empty() {
            return Err(Error::invalid("frames", "expected at least one memory size in frames"));
        }
        for &f in &self.frames {
            if f == 0 || f >= u32::MAX as u64 {
                return Err(Error::invalid("frames", format!("expected a memory size from 1 to {} frames, got {f}", u32::MAX - 1)));
            }
        }
        Ok(())
    }
}

/// The stream held in memory: what the OPT pre-pass reads anyway, kept so that the
/// replay runs from memory instead of decoding the source a second time (the fault
/// parameters' OPT pre-pass reads it the same way).
pub(crate) struct Recorded {
    /// Shared with OPT's future.
    pub ids: Arc<Vec<PageId>>,
    pub kinds: Vec<AccessKind>,
    /// Virtual page numbers, only when a policy needs them.
    vpages: Vec<u64>,
    /// Repeat counts, only when a policy sees them.
    repeats: Vec<u32>,
    references: u64,
    pub distinct_pages: usize,
}

/// Reads the whole stream into memory (5 bytes per record, 13 with `vpages`).
pub(crate) fn record(src: &mut dyn RefSource, vpages: bool, repeats: bool, progress: Progress) -> Result<Recorded> {
    let mut rec = Recorded { ids: Arc::default(), kinds: Vec::new(), vpages: Vec::new(), repeats: Vec::new(), references: 0, distinct_pages: 0 };
    let mut ids = Vec::new();
    for_each_batch(src, progress, |batch, distinct| {
        if ids.len() + batch.len() >= NEVER as usize {
            return Err(Error::invalid("opt", format!("the stream has more than {} records, the most OPT handles", NEVER - 1)));
        }
        ids.extend_from_slice(&batch.id);
        rec.kinds.extend_from_slice(&batch.kind);
        if vpages {
            rec.vpages.extend_from_slice(&batch.page);
        }
        if repeats {
            rec.repeats.extend_from_slice(&batch.repeat);
        }
        rec.references += batch.repeat.iter().map(|&r| r as u64).sum::<u64>();
        rec.distinct_pages = distinct;
        Ok(())
    })?;
    rec.ids = Arc::new(ids);
    Ok(rec)
}

/// One batch of records for every simulation (in parallel when there are several).
struct Records<'a> {
    ids: &'a [PageId],
    kinds: &'a [AccessKind],
    vpages: &'a [u64],
    repeats: &'a [u32],
}

fn run_all(sims: &mut [Box<dyn Simulate>], r: &Records, pages: usize, time: u64) {
    if sims.len() == 1 {
        sims[0].run(r.ids, r.kinds, r.vpages, r.repeats, pages, time);
    } else {
        sims.par_iter_mut().for_each(|s| s.run(r.ids, r.kinds, r.vpages, r.repeats, pages, time));
    }
}

/// One simulation of `policy` on `frames` frames.
fn simulation(policy: PolicyKind, frames: u32, cfg: &ReplayConfig, next_use: Option<&Foresight>) -> Box<dyn Simulate> {
    let repeats = policy.repeats(cfg.repeats);
    crate::with_policy!(policy, frames, cfg.seed, next_use, |p| Box::new(PoolSimulation::new(p, frames).with_repeats(repeats)))
}

/// Replays the stream that `open` yields under each policy at each size. Results come
/// in the order policies x frames of `cfg`; a variable-size policy (Working Set, PFF)
/// gives one result, with frames 0.
///
/// Without OPT the source is streamed once, batch by batch, in bounded memory. With OPT
/// the stream is first read into memory (5 bytes per record) and OPT's next-use times
/// computed from it (4 more), since OPT needs the whole future anyway; every policy
/// then replays from memory. One OPT simulation on a trace that carries its own
/// next-access times (oracleGeneral) streams too, its future told by the trace and
/// checked as it goes ([`crate::policy::OptFromTrace`]): if a time proves wrong, the
/// replay is run again with the pre-pass. (Several OPT simulations share one pre-pass
/// instead of each keeping a table of 4 bytes per reference.)
///
/// LRU and OPT asked for at [`CURVE_MIN_SIZES`] sizes or more come from one pass of
/// their stack distances ([`by_curve`]), with the same results, unless the stream
/// writes or frees a page; the other policies are then replayed as above.
pub fn replay(open: &dyn Fn() -> Result<Box<dyn RefSource>>, cfg: &ReplayConfig, progress: Progress) -> Result<Vec<ReplayResult>> {
    cfg.validate()?;
    let curve_policies: Vec<PolicyKind> = cfg.policies.iter().copied().filter(|&p| uses_curve(p, cfg.frames.len())).collect();
    if curve_policies.is_empty() {
        return replay_each(open, cfg, progress);
    }
    let mut src = open()?;
    let Some(curves) = by_curve::replay_by_curve(src.as_mut(), &curve_policies, &cfg.frames, &mut *progress)? else {
        return replay_each(open, cfg, progress);
    };
    drop(src);
    let rest = ReplayConfig { policies: cfg.policies.iter().copied().filter(|p| !curve_policies.contains(p)).collect(), ..cfg.clone() };
    let replayed = if rest.policies.is_empty() { Vec::new() } else { replay_each(open, &rest, progress)? };
    // back into the order policies x frames
    let (mut curves, mut replayed) = (curves.into_iter(), replayed.into_iter());
    let mut out = Vec::new();
    for &policy in &cfg.policies {
        let (from, n) = if curve_policies.contains(&policy) {
            (&mut curves, cfg.frames.len())
        } else {
            (&mut replayed, if policy.variable_size() { 1 } else { cfg.frames.len() })
        };
        out.extend(from.take(n));
    }
    Ok(out)
}

/// The simulations of `cfg`, one per policy and size, with their labels.
fn simulations(cfg: &ReplayConfig, next_use: Option<&Foresight>) -> (Vec<Box<dyn Simulate>>, Vec<String>) {
    let mut sims: Vec<Box<dyn Simulate>> = Vec::new();
    let mut labels = Vec::new();
    for &policy in &cfg.policies {
        // a variable-size policy sets its own size: once, whatever the sizes asked for
        let sizes: &[u64] = if policy.variable_size() { &[0] } else { &cfg.frames };
        for &frames in sizes {
            sims.push(simulation(policy, frames as u32, cfg, next_use));
            labels.push(policy.label());
        }
    }
    (sims, labels)
}

/// The stream's counts: records, references, distinct pages.
type Counts = (u64, u64, u64);

fn results((sims, labels): (Vec<Box<dyn Simulate>>, Vec<String>), (records, references, distinct): Counts) -> Vec<ReplayResult> {
    sims.iter()
        .zip(labels)
        .map(|(s, label)| ReplayResult { policy: label, ..s.result(records, references, distinct) })
        .collect()
}

/// [`replay`], one simulation per policy and size.
fn replay_each(open: &dyn Fn() -> Result<Box<dyn RefSource>>, cfg: &ReplayConfig, progress: Progress) -> Result<Vec<ReplayResult>> {
    let vpages = cfg.policies.iter().any(|p| p.needs_vpages());
    let repeats = cfg.policies.iter().any(|p| p.repeats(cfg.repeats) == Repeats::Hits);
    let future = cfg.policies.iter().filter(|p| p.needs_future()).count();
    if future == 1 && cfg.frames.len() == 1 {
        let mut src = open()?;
        if let Some(references) = src.give_next_access() {
            let mut sims = simulations(cfg, Some(&Foresight::FromTrace { references }));
            if let Some(counts) = replay_stream(src.as_mut(), &mut sims.0, vpages, repeats, Some(references), progress)? {
                return Ok(results(sims, counts));
            }
            // a time was wrong: again, with the pre-pass
        }
    }
    if future == 0 {
        let mut sims = simulations(cfg, None);
        let counts = replay_stream(open()?.as_mut(), &mut sims.0, vpages, repeats, None, progress)?.expect("no times told");
        return Ok(results(sims, counts));
    }
    let rec = record(open()?.as_mut(), vpages, repeats, &mut *progress)?;
    let future = Foresight::PrePass(Arc::new(Future::new(rec.ids.clone(), &rec.kinds, rec.distinct_pages)));
    let mut sims = simulations(cfg, Some(&future));
    let pages = rec.distinct_pages;
    for (chunk, (ids, kinds)) in rec.ids.chunks(BATCH_RECORDS).zip(rec.kinds.chunks(BATCH_RECORDS)).enumerate() {
        let time = (chunk * BATCH_RECORDS) as u64;
        let at = chunk * BATCH_RECORDS;
        let vp = if vpages { &rec.vpages[at..at + ids.len()] } else { &[][..] };
        let rp = if repeats { &rec.repeats[at..at + ids.len()] } else { &[][..] };
        run_all(&mut sims.0, &Records { ids, kinds, vpages: vp, repeats: rp }, pages, time);
        if !progress(time + ids.len() as u64) {
            return Err(Error::Interrupted);
        }
    }
    Ok(results(sims, (rec.ids.len() as u64, rec.references, pages as u64)))
}

/// Streams `src` through `sims` batch by batch. `told`: the source gives next-access
/// times ([`RefSource::give_next_access`]) for a stream of that many references; they
/// are checked on the stream's id stage ([`TraceFuture`]) and the simulations told
/// OPT's keys from them. None when a time proved wrong (the stream stops there).
fn replay_stream(src: &mut dyn RefSource, sims: &mut [Box<dyn Simulate>], vpages: bool, repeats: bool, told: Option<u64>, progress: Progress) -> Result<Option<Counts>> {
    let (mut time, mut references, mut wrong) = (0u64, 0u64, false);
    let mut future = told.map(TraceFuture::new);
    let mut check = future.as_mut().map(|f| move |batch: &mut crate::trace::RefBatch| f.check(batch));
    let stage = check.as_mut().map(|c| c as crate::stream::Stage);
    let streamed = for_each_batch_staged(src, stage, progress, |batch, distinct| {
        let vp = if vpages { &batch.page[..] } else { &[][..] };
        let rp = if repeats { &batch.repeat[..] } else { &[][..] };
        if told.is_some() {
            for s in sims.iter_mut() {
                s.tell(&batch.next_keys, time);
            }
        }
        run_all(sims, &Records { ids: &batch.id, kinds: &batch.kind, vpages: vp, repeats: rp }, distinct, time);
        if told.is_some() && sims.iter().any(|s| s.told_wrong()) {
            wrong = true;
            return Err(Error::Interrupted);
        }
        time += batch.len() as u64;
        references += batch.repeat.iter().map(|&r| r as u64).sum::<u64>();
        Ok(())
    });
    drop(check);
    if wrong || (streamed.is_ok() && future.is_some_and(|f| f.wrong(true))) {
        return Ok(None);
    }
    streamed?;
    Ok(Some((time, references, src.distinct_pages() as u64)))
}

#[cfg(test)]
mod tests;
