//! Independent references (the independent reference model with equal
//! probabilities): `refs` draws of a page uniformly from `pages` pages, each a write
//! with probability `write_ratio`. Consecutive identical draws fold into one record.

use rand::distributions::{Bernoulli, Distribution, Uniform};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::trace::AccessKind;

use super::emitter::{Emitter, Flow};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "independent uniform random references over a set of pages";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("refs", "2000000", "number of references"),
    param("pages", "10000", "number of distinct pages drawn from"),
    param("write_ratio", "0.3", "fraction of references that are writes (0 to 1)"),
];

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let refs = p.count("refs", 1, u64::MAX)?;
    let pages = p.count("pages", 1, u64::MAX)?;
    let write_ratio = p.real("write_ratio", 0.0, 1.0)?;
    let mut layout = Layout::new(page_size, p.what());
    let first = layout.pages(pages)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let page = Uniform::new(first, first + pages);
        let write = Bernoulli::new(write_ratio).expect("write_ratio checked to be in [0, 1]");
        run(e, refs, &mut rng, &page, &write)
    }))
}

fn run(e: &mut Emitter, refs: u64, rng: &mut Pcg64, page: &Uniform<u64>, write: &Bernoulli) -> Flow {
    for _ in 0..refs {
        let p = page.sample(rng);
        let kind = if write.sample(rng) { AccessKind::Write } else { AccessKind::Read };
        e.touch(p, kind)?;
    }
    Ok(())
}
