//! Successive over-relaxation on an n x n grid, SciMark 2.0's `SOR.execute`
//! (Pozo & Miller, NIST): for each iteration, for i in 1..n-1, for j in 1..n-1,
//!
//! ```text
//! G[i][j] = omega/4 * (G[i-1][j] + G[i+1][j] + G[i][j-1] + G[i][j+1]) + (1-omega) * G[i][j]
//! ```
//!
//! emitted in expression order: read G[i-1][j], G[i+1][j], G[i][j-1], G[i][j+1], G[i][j],
//! then write G[i][j]. SciMark's Java grid is an array of row arrays; here it is one
//! contiguous row-major n x n array (rows are adjacent, as in a C port).

use super::emitter::{Emitter, Flow};
use super::layout::{Layout, Matrix};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "SciMark 2 SOR: 5-point over-relaxation sweeps over an n x n grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "100", "grid is n x n doubles (SciMark small = 100, large = 1000); at least 3"),
    param("iterations", "50", "number of sweeps over the grid"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 3, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let g = layout.matrix(n, n)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| run(e, g, n, iterations)))
}

fn run(e: &mut Emitter, g: Matrix, n: u64, iterations: u64) -> Flow {
    for _ in 0..iterations {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                e.read(g.at(i - 1, j))?;
                e.read(g.at(i + 1, j))?;
                e.read(g.at(i, j - 1))?;
                e.read(g.at(i, j + 1))?;
                e.read(g.at(i, j))?;
                e.write(g.at(i, j))?;
            }
        }
    }
    Ok(())
}
