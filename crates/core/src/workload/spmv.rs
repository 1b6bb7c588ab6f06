//! Sparse matrix-vector product y = A * x with A in compressed sparse row (CSR) form,
//! the kernel of iterative solvers (e.g. SciMark 2's `SparseCompRow.matmult`, NPB CG):
//!
//! ```text
//! for i in 0..rows:
//!     sum = 0
//!     for k in row_ptr[i]..row_ptr[i+1]: sum += val[k] * x[col_idx[k]]
//!     y[i] = sum
//! ```
//!
//! References per row: read row_ptr[i], read row_ptr[i+1], then per nonzero read
//! col_idx[k], read val[k], read x[col_idx[k]]; finally write y[i]. Arrays, in layout
//! order: val (f64, rows*nnz_per_row), col_idx (stored as 8-byte integers for
//! simplicity, rows*nnz_per_row), row_ptr (rows+1), x (cols), y (rows). Every row has
//! exactly `nnz_per_row` nonzeros at distinct, sorted, seeded-random columns; the
//! pattern is regenerated from the seed on each iteration instead of being stored, so
//! memory stays O(nnz_per_row).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rustc_hash::FxHashSet;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "sparse matrix-vector product y = A*x, A in CSR with random sorted columns";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("rows", "100000", "rows of A (and length of y)"),
    param("cols", "rows", "columns of A (and length of x); default: same as rows"),
    param("nnz_per_row", "8", "nonzeros in every row (distinct random columns)"),
    param("iterations", "1", "number of products y = A*x (same A and x each time)"),
];

/// Largest nnz_per_row: the generator holds one row's column indices.
const MAX_NNZ_PER_ROW: u64 = 1 << 24;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let rows = p.count("rows", 1, u64::MAX)?;
    let cols = match p.given("cols") {
        None => rows,
        Some(_) => p.count("cols", 1, u64::MAX)?,
    };
    let nnz = p.count("nnz_per_row", 1, MAX_NNZ_PER_ROW)?;
    if nnz > cols {
        return Err(p.error(format!("parameter 'nnz_per_row': at most cols ({cols}) nonzeros fit in a row, got {nnz}")));
    }
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let total = rows.checked_mul(nnz).ok_or_else(|| p.error("rows * nnz_per_row is too large"))?;
    let mut layout = Layout::new(page_size, p.what());
    let arrays = Arrays {
        val: layout.array(total)?,
        col_idx: layout.array(total)?,
        row_ptr: layout.array(rows + 1)?,
        x: layout.array(cols)?,
        y: layout.array(rows)?,
    };
    // Records per row: row_ptr[i] and row_ptr[i+1] fold unless they straddle a page
    // boundary; val, col_idx and x are distinct arrays, so each nonzero gives 3 records;
    // the write of y is its own record. row_ptr is page-aligned, so row_ptr[i+1] starts a
    // new page exactly when (i+1) is a multiple of the elements per page.
    let per_page = page_size / 8;
    let crossings = rows / per_page;
    let records = nnz
        .checked_mul(3)
        .and_then(|x| x.checked_add(2))
        .and_then(|x| x.checked_mul(rows))
        .and_then(|x| x.checked_add(crossings))
        .and_then(|x| x.checked_mul(iterations));
    Ok(Plan::new(layout.span_pages(), records, move |e| {
        let mut columns = Columns::new(nnz as usize);
        for _ in 0..iterations {
            let mut rng = Pcg64::seed_from_u64(seed);
            run_once(e, &arrays, rows, cols, &mut columns, &mut rng)?;
        }
        Ok(())
    }))
}

struct Arrays {
    val: Array,
    col_idx: Array,
    row_ptr: Array,
    x: Array,
    y: Array,
}

fn run_once(e: &mut Emitter, a: &Arrays, rows: u64, cols: u64, columns: &mut Columns, rng: &mut Pcg64) -> Flow {
    let nnz = columns.amount as u64;
    for i in 0..rows {
        let row = columns.draw(cols, rng);
        e.read(a.row_ptr.at(i))?;
        e.read(a.row_ptr.at(i + 1))?;
        let start = i * nnz;
        for (t, &col) in row.iter().enumerate() {
            let k = start + t as u64;
            e.read(a.col_idx.at(k))?;
            e.read(a.val.at(k))?;
            e.read(a.x.at(col))?;
        }
        e.write(a.y.at(i))?;
    }
    Ok(())
}

/// Draws `amount` distinct columns, sorted (Floyd's sampling algorithm).
struct Columns {
    amount: usize,
    picked: Vec<u64>,
    seen: FxHashSet<u64>,
}

impl Columns {
    fn new(amount: usize) -> Self {
        Columns { amount, picked: Vec::with_capacity(amount), seen: FxHashSet::default() }
    }

    fn draw(&mut self, cols: u64, rng: &mut Pcg64) -> &[u64] {
        let amount = self.amount as u64;
        self.picked.clear();
        // Small rows: a linear membership test beats hashing.
        let small = self.amount <= 32;
        if !small {
            self.seen.clear();
        }
        for j in cols - amount..cols {
            let t = rng.gen_range(0..=j);
            let dup = if small { self.picked.contains(&t) } else { !self.seen.insert(t) };
            let v = if dup { j } else { t };
            if dup && !small {
                self.seen.insert(j);
            }
            self.picked.push(v);
        }
        self.picked.sort_unstable();
        &self.picked
    }
}
