//! Independent references with Zipf-distributed popularity (the skewed independent
//! reference model used throughout the caching literature): the page of rank r
//! (1-based) is drawn with probability proportional to 1 / r^alpha, `refs` times, each
//! reference a write with probability `write_ratio`.
//!
//! Ranks are mapped to pages by a seeded permutation, the affine bijection
//! rank -> (a * rank + b) mod pages with a near pages * 0.618 (golden-ratio spacing,
//! jittered by the seed) and coprime to pages, and b random: hot pages are scattered
//! over the address range rather than packed at its start, so spatial policies
//! (clustering, read-ahead) see no artificial locality.
//!
//! Sampling is exact. Up to 2^22 pages it uses two alias tables (O(1) per draw): one
//! for the 16384 most popular ranks plus a "tail" outcome, one for the tail, so most
//! draws touch only a small, cached table; draws go through a short software pipeline
//! with prefetches. Above 2^22 pages it uses `rand_distr::Zipf` (rejection-inversion).

use rand::distributions::{Bernoulli, Distribution};
use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64;

use crate::trace::AccessKind;

use super::alias::AliasTable;
use super::emitter::{Emitter, Flow};
use super::layout::Layout;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "independent references with Zipf(alpha) page popularity, hot pages scattered";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("refs", "2000000", "number of references"),
    param("pages", "100000", "number of distinct pages drawn from"),
    param("alpha", "1.0", "Zipf exponent: rank r has weight 1/r^alpha (> 0)"),
    param("write_ratio", "0.3", "fraction of references that are writes (0 to 1)"),
];

/// Most pages for which alias tables (12 bytes a page) are built.
const ALIAS_PAGES: u64 = 1 << 22;
/// Ranks in the head table.
const HEAD_RANKS: usize = 1 << 14;
/// The head table's outcome that means "draw again from the tail table".
const TAIL: u32 = u32::MAX;
/// References per pipeline block (see [`run_alias`]).
const BLOCK: usize = 64;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let refs = p.count("refs", 1, u64::MAX)?;
    let pages = p.count("pages", 1, u64::MAX)?;
    let alpha = p.real_above("alpha", 0.0)?;
    let write_ratio = p.real("write_ratio", 0.0, 1.0)?;
    let mut layout = Layout::new(page_size, p.what());
    let first = layout.pages(pages)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let write = Bernoulli::new(write_ratio).expect("write_ratio checked to be in [0, 1]");
        let map = RankMap::new(pages, &mut rng);
        if pages <= ALIAS_PAGES {
            run_alias(e, refs, pages as usize, alpha, first, &map, &write, &mut rng)
        } else {
            let zipf = rand_distr::Zipf::new(pages, alpha).expect("pages >= 1 and alpha > 0 checked");
            for _ in 0..refs {
                let rank = (zipf.sample(&mut rng) as u64).clamp(1, pages) - 1;
                let kind = kind(write.sample(&mut rng));
                e.touch_keyed(first + map.page(rank), rank, kind)?;
            }
            Ok(())
        }
    }))
}

/// A block of draws on its way through the pipeline of [`run_alias`].
#[derive(Clone, Copy)]
struct Block {
    len: usize,
    tail_words: [u64; BLOCK],
    ranks: [u32; BLOCK],
    writes: [bool; BLOCK],
}

#[allow(clippy::too_many_arguments)]
fn run_alias(
    e: &mut Emitter,
    refs: u64,
    pages: usize,
    alpha: f64,
    first: u64,
    map: &RankMap,
    write: &Bernoulli,
    rng: &mut Pcg64,
) -> Flow {
    let (head, tail) = tables(pages, alpha);
    let head_pages: Vec<u32> = (0..pages.min(HEAD_RANKS) as u64).map(|r| map.page(r) as u32).collect();
    // A three-stage software pipeline over blocks of draws, so that the cache misses of
    // the tail table and of the id table overlap with other work: block n is drawn (and
    // its tail buckets prefetched) while block n-1 is resolved (and its ids prefetched)
    // and block n-2 is emitted. Per reference the random stream is: one u64 for the
    // head table, one more for the tail table if the head said "tail", then the write
    // draw; the pipeline does not change it.
    let mut blocks = [Block { len: 0, tail_words: [0; BLOCK], ranks: [0; BLOCK], writes: [false; BLOCK] }; 3];
    let nblocks = refs.div_ceil(BLOCK as u64);
    for step in 0..nblocks + 2 {
        if step < nblocks {
            let b = &mut blocks[(step % 3) as usize];
            b.len = (refs - step * BLOCK as u64).min(BLOCK as u64) as usize;
            for k in 0..b.len {
                b.ranks[k] = head.sample(rng);
                if b.ranks[k] == TAIL {
                    b.tail_words[k] = rng.next_u64();
                    if let Some(t) = &tail {
                        t.prefetch(b.tail_words[k]);
                    }
                }
                b.writes[k] = write.sample(rng);
            }
        }
        if step >= 1 && step - 1 < nblocks {
            let b = &mut blocks[((step - 1) % 3) as usize];
            for k in 0..b.len {
                if b.ranks[k] == TAIL {
                    b.ranks[k] = tail.as_ref().expect("a tail outcome implies a tail table").resolve(b.tail_words[k]);
                }
                e.prefetch_key(b.ranks[k] as u64);
            }
        }
        if step >= 2 {
            let b = &blocks[((step - 2) % 3) as usize];
            for k in 0..b.len {
                let rank = b.ranks[k] as u64;
                let page = match head_pages.get(rank as usize) {
                    Some(&p) => p as u64,
                    None => map.page(rank),
                };
                // Ids are kept by rank: the hot pages' ids share a few cache lines.
                e.touch_keyed(first + page, rank, kind(b.writes[k]))?;
            }
        }
    }
    Ok(())
}

/// Alias tables over ranks 0..pages (weight 1/(rank+1)^alpha): the head table holds the
/// first HEAD_RANKS ranks plus, if there are more, the [`TAIL`] outcome weighted with
/// the rest's total; the tail table holds the rest.
fn tables(pages: usize, alpha: f64) -> (AliasTable, Option<AliasTable>) {
    let weight = |rank: usize| ((rank + 1) as f64).powf(-alpha);
    let h = pages.min(HEAD_RANKS);
    let mut head_weights: Vec<f64> = (0..h).map(weight).collect();
    let mut head_labels: Vec<u32> = (0..h as u32).collect();
    if pages == h {
        return (AliasTable::new(&head_weights, &head_labels), None);
    }
    let tail_weights: Vec<f64> = (h..pages).map(weight).collect();
    let tail_labels: Vec<u32> = (h as u32..pages as u32).collect();
    head_weights.push(tail_weights.iter().sum());
    head_labels.push(TAIL);
    (AliasTable::new(&head_weights, &head_labels), Some(AliasTable::new(&tail_weights, &tail_labels)))
}

/// The seeded bijection rank -> page offset: (a * rank + b) mod pages.
struct RankMap {
    pages: u64,
    a: u64,
    b: u64,
}

impl RankMap {
    fn new(pages: u64, rng: &mut Pcg64) -> Self {
        let jitter = rng.gen_range(0..=pages / 64);
        let mut a = ((pages as f64 * 0.618_033_988_749_894_9) as u64 + jitter) % pages.max(1);
        while gcd(a, pages) != 1 {
            a += 1;
        }
        let b = rng.gen_range(0..pages);
        RankMap { pages, a, b }
    }

    /// `rank < pages <= 2^32` (the layout's limit), so the arithmetic fits in a u64.
    #[inline(always)]
    fn page(&self, rank: u64) -> u64 {
        (self.a * rank + self.b) % self.pages
    }
}

#[inline(always)]
fn kind(write: bool) -> AccessKind {
    if write {
        AccessKind::Write
    } else {
        AccessKind::Read
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_zipf_rank_map_is_a_bijection() {
        for pages in [1u64, 2, 3, 7, 64, 1000, 1024, 999_983] {
            let mut rng = Pcg64::seed_from_u64(pages);
            let map = RankMap::new(pages, &mut rng);
            let mut seen = vec![false; pages as usize];
            for rank in 0..pages {
                let p = map.page(rank) as usize;
                assert!(!seen[p], "pages={pages}: page {p} twice");
                seen[p] = true;
            }
        }
    }
}
