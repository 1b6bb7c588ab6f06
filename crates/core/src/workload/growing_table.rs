//! A database-like program whose table grows in stages: the "gradually acquiring memory"
//! programs (type 2) of token-ordered-lru.txt section 3.3, modelled on *vortex* (an
//! object database, SPEC 2000; its RSS climbs in stairs, Fig. 3, and it accesses its
//! RSS vigorously, so its working set is close to its RSS) and used against gcc and
//! gzip in the interaction experiments of section 4.2.
//!
//! Memory: a table of `pages` pages holding records of `record` 8-byte elements
//! (records = pages * page_size / 8 / record, rounded down), then an index region of
//! `index_pages` pages (default max(1, pages/50)) right after it.
//!
//! The run has `stages` stages. Stage s (1-based) grows the table to
//! len_s = floor(records * s / stages) records:
//!
//! 1. append: writes every element of records len_{s-1}..len_s, in order (fresh memory:
//!    the RSS step);
//! 2. index rebuild: writes every element of the index, in order;
//! 3. `lookups` lookups, each of a record k drawn uniformly (seeded) from the len_s
//!    records present so far: read the index root (index element 0), read the index
//!    entry 1 + k * (index_elements - 1) / len_s (the leaf covering k: a random
//!    position, but the index is small and read on every lookup, so it stays hot), then
//!    read every element of record k; with probability `update_ratio` the lookup is an
//!    update and then also writes every element of record k (after the reads).
//!
//! So after stage s the program has touched about s * pages / stages table pages plus
//! the whole index, and within each stage it references its whole data set uniformly.
//!
//! With `skew` > 0 the lookups are not uniform: the record of popularity rank r
//! (1 = hottest) is drawn with probability proportional to 1 / r^skew (Zipf), and rank r
//! is the r-th most recently appended record: recent data is hot, as in a database that
//! accumulates records. Then the working set is smaller than the allocation, as vortex's
//! NAP curve lies below its MAD curve (section 6, figure 12).

use rand::distributions::{Bernoulli, Distribution, Uniform};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "database-like table growing in stages (vortex, type 2 of token-ordered LRU 3.3): append, then random lookups";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("pages", "4000", "final table size in pages (the RSS climbs to this plus the index in stairs)"),
    param("stages", "8", "growth stages; each appends pages/stages pages of records, then runs the lookups"),
    param("lookups", "15000", "lookups per stage, each of a uniformly random record present so far (defaults: ~3.8M references)"),
    param("update_ratio", "0.2", "fraction of lookups that also write the record they read (0 to 1)"),
    param("index_pages", "auto", "index region size in pages, read on every lookup; auto = max(1, pages/50)"),
    param("record", "8", "record size in 8-byte elements (1 to 4096); a lookup reads all of them"),
    param("skew", "0", "Zipf exponent of record popularity, newest records hottest; 0 = uniform lookups"),
];

/// Largest record, in elements.
const MAX_RECORD: u64 = 4096;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let pages = p.count("pages", 1, u64::MAX)?;
    let stages = p.count("stages", 1, u64::MAX)?;
    let lookups = p.count("lookups", 0, u64::MAX)?;
    let update_ratio = p.real("update_ratio", 0.0, 1.0)?;
    let index_pages = match p.given("index_pages") {
        None => (pages / 50).max(1),
        Some(s) if s.eq_ignore_ascii_case("auto") => (pages / 50).max(1),
        Some(_) => p.count("index_pages", 1, u64::MAX)?,
    };
    let record = p.count("record", 1, MAX_RECORD)?;
    let skew = p.real("skew", 0.0, 10.0)?;
    let per_page = page_size / 8;
    let table_elements = pages.checked_mul(per_page).ok_or_else(|| p.error("parameter 'pages': too large"))?;
    let records = table_elements / record;
    if records == 0 {
        return Err(p.error(format!(
            "parameter 'record': a record of {record} elements does not fit in {pages} pages of {page_size} bytes"
        )));
    }
    if stages > records {
        return Err(p.error(format!(
            "parameter 'stages': expected at most the number of records ({records}), got {stages}"
        )));
    }
    let index_elements =
        index_pages.checked_mul(per_page).ok_or_else(|| p.error("parameter 'index_pages': too large"))?;
    let mut layout = Layout::new(page_size, p.what());
    let table = layout.array(records * record)?;
    let index = layout.array(index_elements)?;
    let t = GrowingTable { table, index, index_elements, records, record, stages, lookups, update_ratio, skew };
    Ok(Plan::new(layout.span_pages(), None, move |e| t.run(e, seed)))
}

struct GrowingTable {
    table: Array,
    index: Array,
    index_elements: u64,
    records: u64,
    /// Elements per record.
    record: u64,
    stages: u64,
    lookups: u64,
    update_ratio: f64,
    /// Zipf exponent of record popularity (0 = uniform), newest records hottest.
    skew: f64,
}

impl GrowingTable {
    /// Records in the table after stage `s` (0..=stages).
    fn len_after(&self, s: u64) -> u64 {
        (self.records as u128 * s as u128 / self.stages as u128) as u64
    }

    fn run(&self, e: &mut Emitter, seed: u64) -> Flow {
        let mut rng = Pcg64::seed_from_u64(seed);
        let update = Bernoulli::new(self.update_ratio).expect("update_ratio checked to be in [0, 1]");
        let r = self.record;
        for s in 1..=self.stages {
            let (old, len) = (self.len_after(s - 1), self.len_after(s));
            // Append the new records.
            for i in old * r..len * r {
                e.write(self.table.at(i))?;
            }
            // Rebuild the index.
            for i in 0..self.index_elements {
                e.write(self.index.at(i))?;
            }
            // Lookups over the table as it is so far.
            let key = Uniform::new(0, len);
            let zipf = (self.skew > 0.0).then(|| rand_distr::Zipf::new(len, self.skew).expect("len >= 1, skew > 0"));
            for _ in 0..self.lookups {
                let k = match &zipf {
                    // rank 1 is the newest record
                    Some(z) => len - (z.sample(&mut rng) as u64).clamp(1, len),
                    None => key.sample(&mut rng),
                };
                e.read(self.index.at(0))?;
                let leaf = 1 + (k as u128 * (self.index_elements - 1) as u128 / len as u128) as u64;
                e.read(self.index.at(leaf.min(self.index_elements - 1)))?;
                for i in k * r..(k + 1) * r {
                    e.read(self.table.at(i))?;
                }
                if update.sample(&mut rng) {
                    for i in k * r..(k + 1) * r {
                        e.write(self.table.at(i))?;
                    }
                }
            }
        }
        Ok(())
    }
}
