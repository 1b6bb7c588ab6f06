//! The memory access structure of NPB2 CG: conjugate gradient with a random sparse
//! symmetric-pattern matrix. Only addresses are simulated, no floating-point work.
//! Arrays, in layout order: values and colidx (one 8-byte element per nonzero), rowptr
//! (n+1), then the vectors x, z, p, q, r (n each).
//!
//! The pattern: row i draws nonzeros_per_row/2 uniform random partners j (seeded) and
//! holds (i, j) and (j, i); rows also hold the diagonal when nonzeros_per_row is odd. So
//! the matrix has exactly n * nonzeros_per_row entries, rows have that many on average,
//! columns within a row are sorted, and duplicate entries are kept (as in COO assembly).
//!
//! First the matrix is assembled (makea: rowptr, colidx and values written row by row)
//! and x set to 1, so that no page is read before the program wrote it.
//! Each outer iteration is NPB's conj_grad plus the normalisation of x:
//! q = 0, z = 0, r = x, p = r (one loop); rho = r.r; then cg_iterations steps of
//! q = A p (per row: read rowptr[i], rowptr[i+1], per nonzero colidx[k], values[k],
//! p[colidx[k]], then write q[i]), d = p.q, z += alpha p with r -= alpha q (one loop),
//! rho = r.r, p = r + beta p; then r = A z, ||x - r||, x.z with z.z, x = c z. Each
//! vector loop emits, per element j, the accesses of its statement(s) in order.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "NPB CG access pattern: conjugate gradient steps (sparse A*p gathers, dot products, axpys)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "14000", "rows of the matrix and length of the vectors (NPB class A = 14000)"),
    param("nonzeros_per_row", "11", "average nonzeros per row (random symmetric pattern)"),
    param("iterations", "3", "outer iterations (each a full conj_grad)"),
    param("cg_iterations", "25", "CG steps per outer iteration (NPB: 25)"),
];

/// Most matrix entries: the generator keeps the pattern (8 bytes an entry) in memory.
const MAX_ENTRIES: u64 = 1 << 27;

pub(super) fn plan(p: &Params, page_size: u64, seed: u64) -> Result<Plan> {
    let n = p.count("n", 1, u32::MAX as u64)?;
    let per_row = p.count("nonzeros_per_row", 1, MAX_ENTRIES)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let steps = p.count("cg_iterations", 1, u64::MAX)?;
    let entries = n.checked_mul(per_row).filter(|&t| t <= MAX_ENTRIES).ok_or_else(|| {
        p.error(format!("parameter 'nonzeros_per_row': n * nonzeros_per_row must be at most {MAX_ENTRIES}"))
    })?;
    let mut layout = Layout::new(page_size, p.what());
    let (values, colidx, rowptr) = (layout.array(entries)?, layout.array(entries)?, layout.array(n + 1)?);
    let mut vector = || layout.array(n);
    let v = [vector()?, vector()?, vector()?, vector()?, vector()?];
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let m = Matrix { values, colidx, rowptr, pattern: pattern(n, per_row, seed) };
        let [x, z, p, q, r] = v;
        // makea and the initial x = 1: the program writes its data before it reads it
        m.assemble(e)?;
        each(e, n, &[(x, W)])?;
        for _ in 0..iterations {
            each(e, n, &[(q, W), (z, W), (x, R), (r, W), (p, W)])?;
            each(e, n, &[(r, R)])?;
            for _ in 0..steps {
                m.multiply(e, p, q)?;
                each(e, n, &[(p, R), (q, R)])?;
                each(e, n, &[(z, R), (p, R), (z, W), (r, R), (q, R), (r, W)])?;
                each(e, n, &[(r, R)])?;
                each(e, n, &[(r, R), (p, R), (p, W)])?;
            }
            m.multiply(e, z, r)?;
            each(e, n, &[(x, R), (r, R)])?;
            each(e, n, &[(x, R), (z, R)])?;
            each(e, n, &[(z, R), (x, W)])?;
        }
        Ok(())
    }))
}

const R: bool = false;
const W: bool = true;

/// For j in 0..n, the accesses `ops` (array, is-write) to element j, in order.
fn each(e: &mut Emitter, n: u64, ops: &[(Array, bool)]) -> Flow {
    for j in 0..n {
        for &(a, write) in ops {
            if write {
                e.write(a.at(j))?;
            } else {
                e.read(a.at(j))?;
            }
        }
    }
    Ok(())
}

/// The CSR row starts and column indices.
fn pattern(n: u64, per_row: u64, seed: u64) -> (Vec<u64>, Vec<u32>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut entries: Vec<u64> = Vec::with_capacity((n * per_row) as usize);
    for i in 0..n {
        if per_row % 2 == 1 {
            entries.push(i << 32 | i);
        }
        for _ in 0..per_row / 2 {
            let j = rng.gen_range(0..n);
            entries.extend([i << 32 | j, j << 32 | i]);
        }
    }
    entries.sort_unstable();
    let mut rowptr = vec![0u64; n as usize + 1];
    for &t in &entries {
        rowptr[(t >> 32) as usize + 1] += 1;
    }
    for i in 0..n as usize {
        rowptr[i + 1] += rowptr[i];
    }
    (rowptr, entries.into_iter().map(|t| t as u32).collect())
}

struct Matrix {
    values: Array,
    colidx: Array,
    rowptr: Array,
    pattern: (Vec<u64>, Vec<u32>),
}

impl Matrix {
    /// NPB's makea: the CSR arrays written row by row (rowptr[i], then the row's
    /// colidx and values), then rowptr[n].
    fn assemble(&self, e: &mut Emitter) -> Flow {
        let (rowptr, _) = &self.pattern;
        for i in 0..rowptr.len() - 1 {
            e.write(self.rowptr.at(i as u64))?;
            for k in rowptr[i]..rowptr[i + 1] {
                e.write(self.colidx.at(k))?;
                e.write(self.values.at(k))?;
            }
        }
        e.write(self.rowptr.at(rowptr.len() as u64 - 1))
    }

    /// dst = A src.
    fn multiply(&self, e: &mut Emitter, src: Array, dst: Array) -> Flow {
        let (rowptr, cols) = &self.pattern;
        for i in 0..rowptr.len() - 1 {
            e.read(self.rowptr.at(i as u64))?;
            e.read(self.rowptr.at(i as u64 + 1))?;
            for k in rowptr[i]..rowptr[i + 1] {
                e.read(self.colidx.at(k))?;
                e.read(self.values.at(k))?;
                e.read(src.at(cols[k as usize] as u64))?;
            }
            e.write(dst.at(i as u64))?;
        }
        Ok(())
    }
}
