//! LU decomposition with partial pivoting, in place on an n x n row-major matrix: the
//! right-looking Doolittle elimination of nbench's LU benchmark (and of textbook
//! `ludcmp`), written as the plain loops below.
//!
//! For each column k: scan rows k..n of column k for the largest |a[i][k]| (reads); if
//! the pivot row p differs from k, swap rows k and p element by element (read a[k][j],
//! read a[p][j], write a[k][j], write a[p][j]); then for every row i > k:
//! a[i][k] /= a[k][k] (read a[k][k], read a[i][k], write a[i][k]) and for j > k
//! a[i][j] -= a[i][k] * a[k][j] (read a[i][j], read a[k][j], write a[i][j]; the
//! multiplier a[i][k] stays in a register). The matrix holds seeded random values in
//! [-1, 1) and the arithmetic is really done on an in-memory copy, so the pivot choices
//! (and hence the row swaps) are those of the real program.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Layout, Matrix};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "LU decomposition with partial pivoting of a random n x n matrix (nbench LU)";

pub(super) const PARAMS: &[ParamInfo] = &[param("n", "128", "matrix order (the matrix is n x n doubles, kept in memory by the generator)")];

/// Largest n: the generator keeps the n x n matrix (8 n^2 bytes, here <= 1 GiB) in memory.
const MAX_N: u64 = 11_585;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let n = p.count("n", 2, MAX_N)?;
    let mut layout = Layout::new(page_size, p.what());
    let a = layout.matrix(n, n)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| run(e, a, n as usize, seed)))
}

fn run(e: &mut Emitter, a: Matrix, n: usize, seed: u64) -> Flow {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut m: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let at = |i: usize, j: usize| a.at(i as u64, j as u64);
    for k in 0..n {
        // Pivot search down column k.
        let mut pivot = k;
        let mut best = -1.0f64;
        for i in k..n {
            e.read(at(i, k))?;
            let v = m[i * n + k].abs();
            if v > best {
                best = v;
                pivot = i;
            }
        }
        // Row interchange.
        if pivot != k {
            for j in 0..n {
                e.read(at(k, j))?;
                e.read(at(pivot, j))?;
                e.write(at(k, j))?;
                e.write(at(pivot, j))?;
                m.swap(k * n + j, pivot * n + j);
            }
        }
        // Elimination below the pivot.
        let diag = m[k * n + k];
        for i in k + 1..n {
            e.read(at(k, k))?;
            e.read(at(i, k))?;
            e.write(at(i, k))?;
            let factor = if diag != 0.0 { m[i * n + k] / diag } else { 0.0 };
            m[i * n + k] = factor;
            for j in k + 1..n {
                e.read(at(i, j))?;
                e.read(at(k, j))?;
                e.write(at(i, j))?;
                m[i * n + j] -= factor * m[k * n + j];
            }
        }
    }
    Ok(())
}
