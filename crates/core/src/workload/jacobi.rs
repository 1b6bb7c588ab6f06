//! Jacobi iteration with the 5-point stencil on two n x m grids (the standard Poisson /
//! Laplace relaxation kernel): each iteration computes, for the interior points
//! (1..n-1) x (1..m-1), new[i][j] = 0.25 * (old[i-1][j] + old[i+1][j] + old[i][j-1] +
//! old[i][j+1]) (four reads of old, in that order, one write of new), then the two
//! grids swap roles. The fixed boundary values are not re-written.

use super::emitter::{Emitter, Flow};
use super::layout::{Layout, Matrix};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "Jacobi 5-point stencil sweeps on two n x m grids that swap roles each iteration";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "256", "grid rows (at least 3)"),
    param("m", "256", "grid columns (at least 3)"),
    param("iterations", "10", "number of sweeps"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 3, u64::MAX)?;
    let m = p.count("m", 3, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let g0 = layout.matrix(n, m)?;
    let g1 = layout.matrix(n, m)?;
    Ok(Plan::new(layout.span_pages(), None, move |e| run(e, [g0, g1], n, m, iterations)))
}

fn run(e: &mut Emitter, grids: [Matrix; 2], n: u64, m: u64, iterations: u64) -> Flow {
    for it in 0..iterations {
        let old = grids[(it % 2) as usize];
        let new = grids[((it + 1) % 2) as usize];
        for i in 1..n - 1 {
            for j in 1..m - 1 {
                e.read(old.at(i - 1, j))?;
                e.read(old.at(i + 1, j))?;
                e.read(old.at(i, j - 1))?;
                e.read(old.at(i, j + 1))?;
                e.write(new.at(i, j))?;
            }
        }
    }
    Ok(())
}
