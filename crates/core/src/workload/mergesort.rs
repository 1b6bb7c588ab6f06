//! Top-down merge sort of n 8-byte keys with an auxiliary array of n (Sedgewick &
//! Wayne, *Algorithms*, 4th ed., 2.2 `Merge`): sort(lo, hi) sorts both halves
//! recursively, then merge copies a[lo..hi] to aux (read a[k], write aux[k]) and merges
//! back: while both runs are non-empty it compares aux[j] with aux[i] (two reads) and
//! writes the smaller to a[k]; once a run is exhausted it moves aux[x] to a[k] (read,
//! write). The keys are seeded random `u64`s and are really sorted, so the order of the
//! reads follows the data exactly as the real program's does.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "top-down merge sort of n random 8-byte keys with an n-element auxiliary array";

pub(super) const PARAMS: &[ParamInfo] = &[param("n", "32768", "number of keys (the generator keeps keys and aux, 16 n bytes, in memory)")];

/// Largest n: keys + aux = 16 n bytes in the generator (1 GiB).
const MAX_N: u64 = 1 << 26;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let n = p.count("n", 2, MAX_N)?;
    let mut layout = Layout::new(page_size, p.what());
    let a = layout.array(n)?;
    let aux = layout.array(n)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut sort = MergeSort {
            keys: (0..n).map(|_| rng.gen()).collect(),
            scratch: vec![0; n as usize],
            a,
            aux,
        };
        sort.sort(e, 0, n as usize)
    }))
}

struct MergeSort {
    keys: Vec<u64>,
    scratch: Vec<u64>,
    a: Array,
    aux: Array,
}

impl MergeSort {
    /// Sorts keys[lo..hi].
    fn sort(&mut self, e: &mut Emitter, lo: usize, hi: usize) -> Flow {
        if hi - lo < 2 {
            return Ok(());
        }
        let mid = lo + (hi - lo) / 2;
        self.sort(e, lo, mid)?;
        self.sort(e, mid, hi)?;
        self.merge(e, lo, mid, hi)
    }

    /// Merges the sorted runs keys[lo..mid] and keys[mid..hi].
    fn merge(&mut self, e: &mut Emitter, lo: usize, mid: usize, hi: usize) -> Flow {
        let (a, aux) = (self.a, self.aux);
        for k in lo..hi {
            e.read(a.at(k as u64))?;
            e.write(aux.at(k as u64))?;
            self.scratch[k] = self.keys[k];
        }
        let (mut i, mut j) = (lo, mid);
        for k in lo..hi {
            let take_j = if i >= mid {
                e.read(aux.at(j as u64))?;
                true
            } else if j >= hi {
                e.read(aux.at(i as u64))?;
                false
            } else {
                e.read(aux.at(j as u64))?;
                e.read(aux.at(i as u64))?;
                self.scratch[j] < self.scratch[i]
            };
            e.write(a.at(k as u64))?;
            if take_j {
                self.keys[k] = self.scratch[j];
                j += 1;
            } else {
                self.keys[k] = self.scratch[i];
                i += 1;
            }
        }
        Ok(())
    }
}
