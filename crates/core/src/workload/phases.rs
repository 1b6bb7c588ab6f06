//! A phase-changing program, the working-set model's textbook behaviour (Denning,
//! "The working set model for program behavior", 1968; phase/transition behaviour as
//! in Madison & Batson 1976): execution is a sequence of phases, each confined to its
//! own locality set.
//!
//! Model: `phases` phases of `refs_per_phase` references each. Phase k's locality set
//! is the contiguous range of `pages` pages starting at page k * shift, where
//! shift = pages - round(overlap * pages), so consecutive phases share
//! round(overlap * pages) pages (overlap=0: disjoint sets, overlap=1: the same set).
//! Within a phase references are uniform over its set, each a write with probability
//! `write_ratio`. A replacement policy has to drop the old set quickly at each
//! transition and keep the shared part.

use rand::distributions::{Bernoulli, Distribution, Uniform};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::trace::AccessKind;

use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "phase-changing program: uniform references within a locality set that moves each phase";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("phases", "4", "number of phases"),
    param("refs_per_phase", "250000", "references in each phase"),
    param("pages", "500", "pages in each phase's locality set"),
    param("overlap", "0.25", "fraction of a phase's set shared with the next phase's (0 to 1)"),
    param("write_ratio", "0.3", "fraction of references that are writes (0 to 1)"),
];

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let phases = p.count("phases", 1, u64::MAX)?;
    let refs_per_phase = p.count("refs_per_phase", 1, u64::MAX)?;
    let pages = p.count("pages", 1, u64::MAX)?;
    let overlap = p.real("overlap", 0.0, 1.0)?;
    let write_ratio = p.real("write_ratio", 0.0, 1.0)?;
    let shared = ((overlap * pages as f64).round() as u64).min(pages);
    let shift = pages - shared;
    let span = (phases - 1)
        .checked_mul(shift)
        .and_then(|x| x.checked_add(pages))
        .ok_or_else(|| p.error("phases * pages is too large"))?;
    let mut layout = Layout::new(page_size, p.what());
    let first = layout.pages(span)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let write = Bernoulli::new(write_ratio).expect("write_ratio checked to be in [0, 1]");
        let offset = Uniform::new(0, pages);
        for k in 0..phases {
            let base = first + k * shift;
            for _ in 0..refs_per_phase {
                let page = base + offset.sample(&mut rng);
                let kind = if write.sample(&mut rng) { AccessKind::Write } else { AccessKind::Read };
                e.touch(page, kind)?;
            }
        }
        Ok(())
    }))
}
