//! A sequential scan: `passes` passes over `pages` pages, one reference per page per
//! pass, pages 0..pages-1 in order. The simplest cyclic pattern and a test oracle: a
//! loop over n+1 pages in n frames faults on every reference under LRU.

use crate::trace::AccessKind;

use super::emitter::{Emitter, Flow};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "sequential scan: passes x pages, one reference per page per pass";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("pages", "10000", "pages scanned per pass"),
    param("passes", "100", "number of passes"),
    param("write", "false", "write instead of read"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let pages = p.count("pages", 1, u64::MAX)?;
    let passes = p.count("passes", 1, u64::MAX)?;
    let kind = if p.flag("write")? { AccessKind::Write } else { AccessKind::Read };
    let mut layout = Layout::new(page_size, p.what());
    let first = layout.pages(pages)?;
    // One record per reference, except that a single page folds into one record.
    let records = if pages == 1 { Some(1) } else { pages.checked_mul(passes) };
    Ok(Plan::new(layout.span_pages(), records, move |e| run(e, first, pages, passes, kind)))
}

fn run(e: &mut Emitter, first: u64, pages: u64, passes: u64, kind: AccessKind) -> Flow {
    for _ in 0..passes {
        for page in first..first + pages {
            e.touch(page, kind)?;
        }
    }
    Ok(())
}
