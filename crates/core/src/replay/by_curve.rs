//! LRU and OPT at many memory sizes from their one-pass fault curves. Both are stack
//! algorithms (Mattson, Gecsei, Slutz and Traiger 1970): one pass of stack distances
//! gives their faults at every size, where a replay per size would step one pool per
//! size over the whole stream.
//!
//! A replay result also holds the write-backs and the mean resident set. Without writes
//! and frees these follow from the pass too: no page is ever dirty, and a fixed pool
//! fills with the first `frames` distinct pages and then stays full (a page leaves it
//! only for one coming in), so the pages resident after record r are min(frames, pages
//! first touched up to r). With a write or a free in the stream the pass says so and
//! the caller replays size by size instead.

use crate::analysis::{OptStackDistances, StackDistances};
use crate::hint::PREFETCH_DISTANCE;
use crate::policy::PolicyKind;
use crate::stream::for_each_batch;
use crate::trace::{AccessKind, Progress, RefSource};
use crate::Result;

use super::ReplayResult;

/// Replays asking for at least this many sizes of LRU use its curve.
pub const CURVE_MIN_SIZES: usize = 3;
/// The same for OPT, whose one pass costs about 4.5 OPT replays in process. Whole
/// `pagelab replay --policy opt` commands on the 10 M-reference oracleGeneral benchmark
/// trace, 2 cores (the sizes of a replay run in parallel), best of 3, with the curve
/// from the run starts (7da1554): 8 sizes one by one 1.16 s, 12 sizes 1.69 s, 13 sizes
/// 1.88-1.96 s, 14 sizes 2.04 s; from the curve 1.85-1.88 s whatever the number; they
/// cross at about 13. (22 when the curve took 3.15 s.)
pub const OPT_CURVE_MIN_SIZES: usize = 13;

/// Whether `policy` at `sizes` sizes is replayed from its curve.
pub fn uses_curve(policy: PolicyKind, sizes: usize) -> bool {
    match policy {
        PolicyKind::Lru => sizes >= CURVE_MIN_SIZES,
        PolicyKind::Opt => sizes >= OPT_CURVE_MIN_SIZES,
        _ => false,
    }
}

/// The results of `policies` (each LRU or OPT) at each of `frames`, in the order
/// policies x frames, from one pass over the stream; `None` when the stream writes or
/// frees a page (the caller then replays).
pub fn replay_by_curve(src: &mut dyn RefSource, policies: &[PolicyKind], frames: &[u64], progress: Progress) -> Result<Option<Vec<ReplayResult>>> {
    let mut lru = policies.contains(&PolicyKind::Lru).then(StackDistances::new);
    let mut opt = policies.contains(&PolicyKind::Opt).then(OptStackDistances::new);
    // the record at which each page (dense ids, in first-touch order) was first touched
    let mut first_touch: Vec<u64> = Vec::new();
    let (mut time, mut references, mut writes_or_frees, mut distinct) = (0u64, 0u64, false, 0usize);
    let records = for_each_batch(src, progress, |batch, pages| {
        if writes_or_frees || batch.kind.iter().any(|&k| matches!(k, AccessKind::Write | AccessKind::Free)) {
            writes_or_frees = true;
            return Ok(());
        }
        distinct = pages;
        for (i, (&id, &repeat)) in batch.id.iter().zip(&batch.repeat).enumerate() {
            if let Some(&ahead) = batch.id.get(i + PREFETCH_DISTANCE) {
                if let Some(sd) = &lru {
                    sd.prefetch_page(ahead);
                }
                if let Some(sd) = &opt {
                    sd.prefetch_page(ahead);
                }
            }
            if id as usize >= first_touch.len() {
                first_touch.resize(id as usize + 1, u64::MAX);
            }
            if first_touch[id as usize] == u64::MAX {
                first_touch[id as usize] = time + i as u64;
            }
            if let Some(sd) = &mut lru {
                sd.reference(id, repeat);
            }
            if let Some(sd) = &mut opt {
                sd.reference(id, repeat);
            }
            references += repeat as u64;
        }
        time += batch.len() as u64;
        Ok(())
    })?;
    if writes_or_frees {
        return Ok(None);
    }
    // resident_sum[k] = sum over the first k pages of the records they are resident for
    let mut touched: Vec<u64> = first_touch.iter().copied().filter(|&t| t != u64::MAX).collect();
    touched.sort_unstable();
    let mut resident_sum: Vec<u128> = Vec::with_capacity(touched.len() + 1);
    resident_sum.push(0);
    for &t in &touched {
        let last = *resident_sum.last().expect("starts with 0");
        resident_sum.push(last + (records - t) as u128);
    }
    let curves: Vec<(PolicyKind, Vec<u64>, u64)> = {
        let mut out = Vec::new();
        if let Some(mut sd) = lru {
            sd.flush();
            out.push((PolicyKind::Lru, sd.fault_curve(), sd.compulsory()));
        }
        if let Some(sd) = opt {
            out.push((PolicyKind::Opt, sd.fault_curve(), sd.compulsory()));
        }
        out
    };
    let mut results = Vec::with_capacity(policies.len() * frames.len());
    for &policy in policies {
        let (_, faults, compulsory) = curves.iter().find(|(p, _, _)| *p == policy).expect("a curve per policy");
        for &f in frames {
            let resident = resident_sum[(f as usize).min(touched.len())];
            results.push(ReplayResult {
                policy: policy.label(),
                frames: f,
                mean_resident: if records == 0 { 0.0 } else { resident as f64 / records as f64 },
                counters: Vec::new(),
                records,
                references,
                faults: faults.get(f as usize - 1).copied().unwrap_or(*compulsory),
                compulsory_faults: *compulsory,
                dirty_evictions: 0,
                distinct_pages: distinct as u64,
            });
        }
    }
    Ok(Some(results))
}
