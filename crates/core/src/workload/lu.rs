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
//! (and hence the row swaps) are those of the real program. Its memory demand is the
//! matrix, fixed for the whole run (`schur = in-place`, the default).
//!
//! `schur = temporary` is the blocked right-looking form of the same elimination
//! (LAPACK's dgetrf, Golub and Van Loan, *Matrix Computations*, "block LU"), written as
//! a program that computes each block step's Schur complement update into a freshly
//! allocated matrix: for each block of `block` columns starting at column k,
//!
//! 1. the panel (rows k..n of those columns) is factored by the loops above, a pivot
//!    search per column, the interchange of the whole rows, the scaling and the update
//!    of the panel's remaining columns;
//! 2. U12 = L11^-1 A12: for each row i of the block, for each earlier row p of the block,
//!    a[i][j] -= a[i][p] * a[p][j] for the columns j right of the block;
//! 3. T = L21 U12 into a new matrix T of (n-k-b) x (n-k-b) (malloc: row by row, T[i][j]
//!    is written on its first product and read and written on the others, the
//!    multiplier a[i][p] read once per p), then A22 -= T (read a, read T, write a), and
//!    T is freed (a free record per page; glibc returns a block this large with munmap).
//!
//! Each step's T is zero-filled memory that the program touches row by row as it
//! computes it and gives back at the end of the step: its resident set climbs a slope
//! above the matrix and drops back, step after step, each hill lower than the one
//! before: the "non-regularly changing memory allotments" of token-ordered-lru.txt
//! section 3.3 (type 3, LU; "frequent climbing slopes of RSS", "RSS jumps", section 4.2,
//! figure 10). Not the default: the paper does not say how its LU allocates, and its
//! figure 5 is not in the text we have, so this is a program with such a demand rather
//! than the paper's program.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout, Matrix, ELEM};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "LU decomposition with partial pivoting of a random n x n matrix (nbench LU); schur=temporary: type 3 demand";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "128", "matrix order (the matrix is n x n doubles, kept in memory by the generator)"),
    param("schur", "in-place", "in-place (the unblocked loops, fixed demand) or temporary (blocked; each step's Schur update goes through a new matrix, freed after it: RSS climbs and drops, type 3)"),
    param("block", "32", "with schur=temporary: columns per block step (at least 1)"),
];

/// Largest n: the generator keeps the n x n matrix (8 n^2 bytes, here <= 1 GiB) in memory.
const MAX_N: u64 = 11_585;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let n = p.count("n", 2, MAX_N)?;
    let schur = p.choice("schur", &["in-place", "temporary"])?;
    let block = p.count("block", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let a = layout.matrix(n, n)?;
    if schur == "in-place" {
        return Ok(Plan::new(layout.span_pages(), None, move |e| run(e, a, n as usize, seed)));
    }
    let block = block.min(n);
    // the largest temporary: the first step's (n - block)^2 elements
    let side = n - block;
    let first = layout.span_pages();
    let t = layout.array(side * side)?;
    let span = layout.span_pages();
    let (n, block) = (n as usize, block as usize);
    Ok(Plan::new(span, None, move |e| run_blocked(e, a, Temporary { t, first, page_size }, n, block, seed)))
}

/// Where the Schur update's temporary lives: the same addresses at every step (the
/// block malloc returns after the previous one was freed).
#[derive(Clone, Copy)]
struct Temporary {
    t: Array,
    /// Its first page.
    first: u64,
    page_size: u64,
}

fn run(e: &mut Emitter, a: Matrix, n: usize, seed: u64) -> Flow {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut m: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let at = |i: usize, j: usize| a.at(i as u64, j as u64);
    for k in 0..n {
        eliminate_column(e, &mut m, &at, n, k, n)?;
    }
    Ok(())
}

/// Step `k` of the elimination: the pivot search down column k, the row interchange, and
/// the elimination below the pivot of the columns up to `cols_end` (n for the whole
/// matrix, the panel's end in the blocked form).
fn eliminate_column(e: &mut Emitter, m: &mut [f64], at: &impl Fn(usize, usize) -> u64, n: usize, k: usize, cols_end: usize) -> Flow {
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
        for j in k + 1..cols_end {
            e.read(at(i, j))?;
            e.read(at(k, j))?;
            e.write(at(i, j))?;
            m[i * n + j] -= factor * m[k * n + j];
        }
    }
    Ok(())
}

/// The blocked elimination with the Schur update through a temporary (module doc).
fn run_blocked(e: &mut Emitter, a: Matrix, tmp: Temporary, n: usize, nb: usize, seed: u64) -> Flow {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut m: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let at = |i: usize, j: usize| a.at(i as u64, j as u64);
    let mut prod = Vec::new();
    for k0 in (0..n).step_by(nb) {
        let end = (k0 + nb).min(n);
        // 1. the panel
        for k in k0..end {
            eliminate_column(e, &mut m, &at, n, k, end)?;
        }
        if end == n {
            break;
        }
        // 2. U12 = L11^-1 A12
        for i in k0 + 1..end {
            for p in k0..i {
                e.read(at(i, p))?;
                let l = m[i * n + p];
                for j in end..n {
                    e.read(at(i, j))?;
                    e.read(at(p, j))?;
                    e.write(at(i, j))?;
                    m[i * n + j] -= l * m[p * n + j];
                }
            }
        }
        // 3. T = L21 U12 in a new matrix, A22 -= T, free T
        let side = n - end;
        let t = |i: usize, j: usize| tmp.t.at((i * side + j) as u64);
        prod.clear();
        prod.resize(side * side, 0.0);
        for i in 0..side {
            for p in k0..end {
                e.read(at(end + i, p))?;
                let l = m[(end + i) * n + p];
                for j in 0..side {
                    e.read(at(p, end + j))?;
                    if p > k0 {
                        e.read(t(i, j))?;
                    }
                    e.write(t(i, j))?;
                    prod[i * side + j] += l * m[p * n + end + j];
                }
            }
        }
        for i in 0..side {
            for j in 0..side {
                e.read(at(end + i, end + j))?;
                e.read(t(i, j))?;
                e.write(at(end + i, end + j))?;
                m[(end + i) * n + end + j] -= prod[i * side + j];
            }
        }
        let bytes = (side * side) as u64 * ELEM;
        e.free_pages(tmp.first..tmp.first + bytes.div_ceil(tmp.page_size))?;
    }
    Ok(())
}
