//! A compiler-like program with two demand spikes: the "non-regularly changing memory
//! allotments" programs (type 3) of token-ordered-lru.txt section 3.3, modelled on
//! *gcc* (SPEC 2000, Fig. 1 right), which section 4.2 describes as having "two spikes in
//! MAD and RSS due to its dynamic memory allocation demands and accesses", the second
//! needing only about 7% more memory than the first (Figs. 7 and 8).
//!
//! Memory: a base working set of `base_pages` pages (the compiler's long-lived data),
//! then a first temporary region of `spike_pages` pages, then a second one of
//! round(spike_pages * second_spike) pages; three disjoint page ranges, in that order.
//!
//! The run is exactly `refs` page references (sizes are in pages, one reference per
//! touch). Outside the spikes every reference goes to the base set: a cursor walks it
//! in repeated sequential passes, and each reference is, with probability 1/4 (seeded),
//! a uniformly random base page instead of the cursor's (symbol-table style lookups;
//! the cursor does not advance then). Spike i occupies the references
//! [at_i * refs, (at_i + spike_fraction) * refs) with at_1 = `first_at` (default 0.3)
//! and at_2 = `second_at` (default 0.7). Inside a spike four references out of every
//! five go to the spike's region, in sequential passes over it: the first pass writes
//! every page (fresh, zero-filled memory), later passes read or write; the fifth goes
//! to the base set as above. After its window a spike region is never referenced again.
//! With `free_spikes` (not the default, which keeps the stream as it was before issue
//! 15) the program then gives the region back, a free
//! record per page in order, as gcc frees its obstacks (glibc returns large blocks with
//! munmap and trims the heap with brk): MAD and RSS drop back to the base set after each
//! spike, the ups and downs of figure 1 (right). Without it the pages stay allocated
//! and only the working set drops.
//!
//! Every reference other than a first-pass spike write is a write with probability
//! `write_ratio`. The spike windows must be long enough for at least one full pass
//! over their region, and must not overlap.

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

pub(super) const SUMMARY: &str =
    "compiler-like base working set with two temporary demand spikes (gcc, type 3 of token-ordered LRU 3.3)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("refs", "3000000", "total page references"),
    param("base_pages", "1000", "base working set in pages, referenced throughout the run"),
    param("spike_pages", "3000", "pages of the first spike's temporary region"),
    param("second_spike", "1.07", "second spike's region size relative to the first (gcc: about 7% larger)"),
    param("spike_fraction", "0.15", "length of each spike, as a fraction of refs"),
    param("first_at", "0.3", "start of the first spike, as a fraction of refs"),
    param("second_at", "0.7", "start of the second spike, as a fraction of refs"),
    param("write_ratio", "0.3", "fraction of references that are writes, apart from the spikes' first-pass writes (0 to 1)"),
    param("free_spikes", "false", "give each spike's region back (free records) when the spike ends, so MAD and RSS drop as gcc's do (false, the default: the stream as before issue 15)"),
];

/// Probability that a base reference goes to a random base page instead of the cursor's.
const BASE_RANDOM: f64 = 0.25;
/// Inside a spike, reference i of the window goes to the base set when i % 5 == 4.
const SPIKE_PERIOD: u64 = 5;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let refs = p.count("refs", 1, u64::MAX)?;
    let base_pages = p.count("base_pages", 1, u64::MAX)?;
    let spike_pages = p.count("spike_pages", 1, u64::MAX)?;
    let second_spike = p.real_above("second_spike", 0.0)?;
    let spike_fraction = p.real("spike_fraction", 0.0, 1.0)?;
    let first_at = p.real("first_at", 0.0, 1.0)?;
    let second_at = p.real("second_at", 0.0, 1.0)?;
    let write_ratio = p.real("write_ratio", 0.0, 1.0)?;
    let free_spikes = p.flag("free_spikes")?;
    let second_pages = (spike_pages as f64 * second_spike).round();
    if second_pages < 1.0 || second_pages > u64::MAX as f64 / 2.0 {
        return Err(p.error(format!(
            "parameter 'second_spike': spike_pages * second_spike must round to at least one page, got {second_pages}"
        )));
    }
    let second_pages = second_pages as u64;
    if first_at + spike_fraction > second_at + 1e-12 {
        return Err(p.error(format!(
            "parameters 'first_at', 'second_at', 'spike_fraction': the spikes overlap (first_at + spike_fraction = {} > second_at = {second_at})",
            first_at + spike_fraction
        )));
    }
    if second_at + spike_fraction > 1.0 + 1e-12 {
        return Err(p.error(format!(
            "parameters 'second_at', 'spike_fraction': the second spike ends after the run (second_at + spike_fraction = {})",
            second_at + spike_fraction
        )));
    }
    let at = |f: f64| ((f * refs as f64) as u64).min(refs);
    let windows = [
        (at(first_at), at(first_at + spike_fraction).min(at(second_at)), spike_pages),
        (at(second_at), at(second_at + spike_fraction), second_pages),
    ];
    for (k, &(start, end, pages)) in windows.iter().enumerate() {
        let spike_refs = spike_refs(end - start);
        if spike_refs < pages {
            return Err(p.error(format!(
                "spike {} of {pages} pages gets only {spike_refs} references ({SPIKE_PERIOD}-1 in {SPIKE_PERIOD} of spike_fraction * refs), \
                 not enough for one pass: raise refs or spike_fraction, or lower spike_pages",
                k + 1
            )));
        }
    }
    let mut layout = Layout::new(page_size, p.what());
    let base = layout.pages(base_pages)?;
    let first = layout.pages(spike_pages)?;
    let second = layout.pages(second_pages)?;
    let regions = [(windows[0].0, windows[0].1, first, spike_pages), (windows[1].0, windows[1].1, second, second_pages)];
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut g = Gen {
            write: Bernoulli::new(write_ratio).expect("write_ratio checked to be in [0, 1]"),
            jump: Bernoulli::new(BASE_RANDOM).expect("constant probability"),
            base_page: Uniform::new(base, base + base_pages),
            base,
            base_pages,
            cursor: 0,
        };
        let mut done = 0u64;
        for (start, end, region, pages) in regions {
            g.base_refs(e, &mut rng, start - done)?;
            let mut spike_cursor = 0u64;
            for i in 0..end - start {
                if i % SPIKE_PERIOD == SPIKE_PERIOD - 1 {
                    g.base_refs(e, &mut rng, 1)?;
                } else {
                    let kind = if spike_cursor < pages { AccessKind::Write } else { g.kind(&mut rng) };
                    e.touch(region + spike_cursor % pages, kind)?;
                    spike_cursor += 1;
                }
            }
            if free_spikes {
                e.free_pages(region..region + pages)?;
            }
            done = end;
        }
        g.base_refs(e, &mut rng, refs - done)
    }))
}

/// References of a spike window of `len` references that go to the spike's region.
fn spike_refs(len: u64) -> u64 {
    len - len / SPIKE_PERIOD
}

struct Gen {
    write: Bernoulli,
    jump: Bernoulli,
    base_page: Uniform<u64>,
    base: u64,
    base_pages: u64,
    cursor: u64,
}

impl Gen {
    #[inline]
    fn kind(&self, rng: &mut Pcg64) -> AccessKind {
        if self.write.sample(rng) {
            AccessKind::Write
        } else {
            AccessKind::Read
        }
    }

    /// `n` references to the base set.
    fn base_refs(&mut self, e: &mut Emitter, rng: &mut Pcg64, n: u64) -> Flow {
        for _ in 0..n {
            let page = if self.jump.sample(rng) {
                self.base_page.sample(rng)
            } else {
                let page = self.base + self.cursor;
                self.cursor = if self.cursor + 1 == self.base_pages { 0 } else { self.cursor + 1 };
                page
            };
            let kind = self.kind(rng);
            e.touch(page, kind)?;
        }
        Ok(())
    }
}
