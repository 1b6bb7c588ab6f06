//! The shrinking cyclic loop of token-ordered-lru.txt section 5.4 (Jiang & Zhang,
//! "Token-ordered LRU: an effective page replacement policy and its implementation in
//! Linux systems"), the program behind its Fig. 11:
//!
//! ```text
//! mem_page = calloc(SIZE, sizeof(double));
//! for (i = 0; i < LOOP; i++) {
//!     for (j = 0; j < SIZE; j += step)
//!         mem_page[j] = mem_page[j] + 1;          // read, then write, of one element
//!     if ((i + 1) % 10 == 0) SIZE = (long)(0.9 * SIZE);
//! }
//! ```
//!
//! The paper runs LOOP = 1000 over 53 MB and 58 MB arrays (about 13,600 and 14,800
//! 4 KiB pages) against 60 MB of user memory. Here the array size is `pages` pages,
//! `loops` is LOOP (default 100 to keep the default run small; use loops=1000 for the
//! paper's program), `step` is in elements (default one page worth, page_size/8, so
//! each pass touches every page once), and the "10" and "0.9" are `shrink_every` and
//! `shrink`. Every touch is a read record followed by a write record of the same page.

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "token-ordered LRU paper 5.4: cyclic loop over an array that shrinks by 10% every 10 loops";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("pages", "8000", "initial array size in pages (paper: 53 MB and 58 MB arrays)"),
    param("loops", "100", "passes over the array, LOOP in the paper (paper: 1000)"),
    param("step", "page", "stride in 8-byte elements; default one page worth (page_size/8)"),
    param("shrink_every", "10", "the array shrinks after every this many loops (paper: 10)"),
    param("shrink", "0.9", "factor the array size is multiplied by, SIZE = (long)(shrink*SIZE) (paper: 0.9)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let pages = p.count("pages", 1, u64::MAX)?;
    let loops = p.count("loops", 1, u64::MAX)?;
    let per_page = page_size / 8;
    let step = match p.given("step") {
        None => per_page,
        Some(s) if s.eq_ignore_ascii_case("page") => per_page,
        Some(_) => p.count("step", 1, u64::MAX)?,
    };
    let shrink_every = p.count("shrink_every", 1, u64::MAX)?;
    let shrink = p.real_above("shrink", 0.0)?;
    if shrink > 1.0 {
        return Err(p.error(format!("parameter 'shrink': expected a number > 0 and <= 1, got {shrink}")));
    }
    let mut layout = Layout::new(page_size, p.what());
    let size = pages.checked_mul(per_page).ok_or_else(|| p.error("parameter 'pages': too large"))?;
    let mem = layout.array(size)?;
    let loop_ = ShrinkingLoop { mem, size, loops, step, shrink_every, shrink };
    let records = loop_.records();
    Ok(Plan::new(layout.span_pages(), records, move |e| loop_.run(e)))
}

struct ShrinkingLoop {
    mem: Array,
    /// Initial SIZE, in elements.
    size: u64,
    loops: u64,
    step: u64,
    shrink_every: u64,
    shrink: f64,
}

impl ShrinkingLoop {
    fn shrunk(&self, size: u64) -> u64 {
        (self.shrink * size as f64) as u64
    }

    fn run(&self, e: &mut Emitter) -> Flow {
        let mut size = self.size;
        for i in 0..self.loops {
            let mut j = 0;
            while j < size {
                e.read(self.mem.at(j))?;
                e.write(self.mem.at(j))?;
                j += self.step;
            }
            if (i + 1) % self.shrink_every == 0 {
                size = self.shrunk(size);
            }
        }
        Ok(())
    }

    /// Two records (read, write) per touch; the size is constant within each group of
    /// `shrink_every` loops, so this walks groups and stops once the size stops changing.
    fn records(&self) -> Option<u64> {
        let mut total: u64 = 0;
        let mut size = self.size;
        let mut done = 0u64;
        let mut groups = 0u32;
        while done < self.loops {
            groups += 1;
            if groups > 1_000_000 {
                return None; // pathological parameters: not worth counting upfront
            }
            let group = self.shrink_every.min(self.loops - done);
            let touches = size.div_ceil(self.step);
            let next = self.shrunk(size);
            if next == size || touches == 0 {
                // Fixed point: every remaining loop looks the same.
                let remaining = self.loops - done;
                return touches.checked_mul(2)?.checked_mul(remaining)?.checked_add(total);
            }
            total = total.checked_add(touches.checked_mul(2)?.checked_mul(group)?)?;
            done += group;
            size = next;
        }
        Some(total)
    }
}
