//! Dense matrix multiply C = A * B of n x n row-major doubles, the textbook triple loop.
//!
//! `order=ijk` (default): for i, for j: sum = 0; for k: sum += A[i][k] * B[k][j]
//! (read A[i][k], read B[k][j]); C[i][j] = sum (write). B is walked down columns, the
//! classic bad case for paging. `order=ikj`: for i, for k: r = A[i][k] (read); for j:
//! C[i][j] += r * B[k][j] (read C[i][j], read B[k][j], write C[i][j]); all rows are
//! walked sequentially. C starts zeroed (calloc), so no initialisation pass is emitted.
//! A, B and C are separate page-aligned arrays, so consecutive accesses to different
//! matrices never fold and the record count has a closed form.

use super::emitter::{Emitter, Flow};
use super::layout::{Layout, Matrix};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "dense matrix multiply C = A*B of n x n doubles, ijk or ikj loop order";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "100", "matrix order: A, B and C are n x n doubles"),
    param("order", "ijk", "loop order: ijk (inner product, B by columns) or ikj (row-wise)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 1, u64::MAX)?;
    let order = p.choice("order", &["ijk", "ikj"])?;
    let mut layout = Layout::new(page_size, p.what());
    let a = layout.matrix(n, n)?;
    let b = layout.matrix(n, n)?;
    let c = layout.matrix(n, n)?;
    // Records: ijk: per (i, j) 2n reads alternating A/B + one write of C;
    // ikj: per (i, k) one read of A + n times (read C, read B, write C).
    let per_pair = if order == "ijk" { n.checked_mul(2).and_then(|x| x.checked_add(1)) } else { n.checked_mul(3).and_then(|x| x.checked_add(1)) };
    let records = per_pair.and_then(|x| x.checked_mul(n)).and_then(|x| x.checked_mul(n));
    let ikj = order == "ikj";
    Ok(Plan::new(layout.span_pages(), records, move |e| if ikj { run_ikj(e, a, b, c, n) } else { run_ijk(e, a, b, c, n) }))
}

fn run_ijk(e: &mut Emitter, a: Matrix, b: Matrix, c: Matrix, n: u64) -> Flow {
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                e.read(a.at(i, k))?;
                e.read(b.at(k, j))?;
            }
            e.write(c.at(i, j))?;
        }
    }
    Ok(())
}

fn run_ikj(e: &mut Emitter, a: Matrix, b: Matrix, c: Matrix, n: u64) -> Flow {
    for i in 0..n {
        for k in 0..n {
            e.read(a.at(i, k))?;
            for j in 0..n {
                e.read(c.at(i, j))?;
                e.read(b.at(k, j))?;
                e.write(c.at(i, j))?;
            }
        }
    }
    Ok(())
}
