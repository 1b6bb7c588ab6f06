//! The memory access structure of NPB2 MG: V-cycle multigrid on a periodic n x n x n
//! grid (n a power of two). Only addresses are simulated, no floating-point work.
//! Arrays, in layout order, one double a point: v (right-hand side, n^3), then u for each
//! level (n^3, (n/2)^3, ..., 4^3), then r for each level, like NPB's level hierarchy.
//!
//! One resid on the finest level, then each iteration is NPB's mg3P followed by resid:
//! - down: rprj3 from each level to the next coarser one, for every coarse point read
//!   fine r at the matching fine point and its 6 neighbours, write coarse r;
//! - psinv at the coarsest level;
//! - up, for each finer level: interp (for every fine point read coarse u at the point
//!   it lies in, read and write fine u), resid (r = v - A u at the finest level, r = r - A u
//!   on the others), psinv (u = u + C r);
//! - resid on the finest level.
//!
//! resid and psinv: for every point (k, j, i order, i fastest) read the stencil array at
//! the point and at its i-1, i+1, j-1, j+1, k-1, k+1 neighbours (periodic), read the
//! second input at the point, write the output there. Simplified: NPB's 27-point
//! stencils are reduced to these 7 points, the trilinear interpolation to one coarse
//! point, and u on the coarser levels is not zeroed before interp.

use super::emitter::{Emitter, Flow};
use super::layout::{Grid, Layout};
use super::npb_lu::{each, initialize, read, write, STENCIL};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "NPB MG access pattern: multigrid V-cycles (restrict, smooth, interpolate) on a periodic n^3 grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "64", "finest grid points per dimension, a power of two >= 8 (NPB class W = 64, A = 256)"),
    param("iterations", "4", "V-cycles (NPB class A: 4)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 0, u64::MAX)?;
    if n < 8 || !n.is_power_of_two() {
        return Err(p.error(format!("parameter 'n': expected a power of two >= 8, got {n}")));
    }
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let sizes: Vec<u64> = std::iter::successors(Some(n), |&m| (m > 4).then_some(m / 2)).collect();
    let v = layout.grid(n, 1)?;
    let u = sizes.iter().map(|&m| layout.grid(m, 1)).collect::<Result<Vec<_>>>()?;
    let r = sizes.iter().map(|&m| layout.grid(m, 1)).collect::<Result<Vec<_>>>()?;
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let all: Vec<Grid> = std::iter::once(v).chain(u.iter().copied()).chain(r.iter().copied()).collect();
        initialize(e, &all)?;
        let bottom = sizes.len() - 1;
        sweep(e, u[0], v, r[0])?;
        for _ in 0..iterations {
            for l in 0..bottom {
                restrict(e, r[l], r[l + 1])?;
            }
            sweep(e, r[bottom], u[bottom], u[bottom])?;
            for l in (0..bottom).rev() {
                interpolate(e, u[l + 1], u[l])?;
                sweep(e, u[l], if l == 0 { v } else { r[l] }, r[l])?;
                sweep(e, r[l], u[l], u[l])?;
            }
            sweep(e, u[0], v, r[0])?;
        }
        Ok(())
    }))
}

/// `p` moved by `d` around the periodic grid of `n` points a side.
fn wrap(p: [u64; 3], d: [i64; 3], n: u64) -> [u64; 3] {
    [0, 1, 2].map(|a| (p[a] + n).wrapping_add_signed(d[a]) % n)
}

/// For every point: read `stencil` at the 7 stencil points, read `other`, write `out`
/// (resid: u, v or r, r; psinv: r, u, u).
fn sweep(e: &mut Emitter, stencil: Grid, other: Grid, out: Grid) -> Flow {
    let n = stencil.n();
    each(n, 0..n, false, |p| {
        for d in STENCIL {
            read(e, stencil, wrap(p, d, n))?;
        }
        read(e, other, p)?;
        write(e, out, p)
    })
}

/// rprj3: coarse r from fine r.
fn restrict(e: &mut Emitter, fine: Grid, coarse: Grid) -> Flow {
    let n = coarse.n();
    each(n, 0..n, false, |p| {
        for d in STENCIL {
            read(e, fine, wrap(p.map(|x| 2 * x), d, 2 * n))?;
        }
        write(e, coarse, p)
    })
}

/// interp: fine u += coarse u.
fn interpolate(e: &mut Emitter, coarse: Grid, fine: Grid) -> Flow {
    let n = fine.n();
    each(n, 0..n, false, |p| {
        read(e, coarse, p.map(|x| x / 2))?;
        read(e, fine, p)?;
        write(e, fine, p)
    })
}
