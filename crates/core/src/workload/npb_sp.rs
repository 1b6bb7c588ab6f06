//! The memory access structure of NPB2 SP: the scalar pentadiagonal ADI solver on an
//! n x n x n grid. Only addresses are simulated, no floating-point work. Arrays, in
//! layout order: u, rhs and forcing (5 doubles a point) and lhs (15 doubles a point: the
//! five diagonals of NPB's three scalar systems, for components 1-3, 4 and 5).
//!
//! Each iteration, points in k, j, i order (i fastest), the components of a point read or
//! written together:
//! 1. compute_rhs: for every point read u at the point and its i-1, i+1, j-1, j+1, k-1,
//!    k+1 neighbours, read forcing, write rhs.
//! 2. x-solve, y-solve, z-solve: for every line along i (then j, then k; the lines in the
//!    loop order of NPB's x_solve, y_solve, z_solve), forward elimination up the line
//!    (read rhs at l-1 and l-2, read and write lhs and rhs at l), then back substitution
//!    down it (read rhs at l+1 and l+2, read lhs, read and write rhs at l). Neighbours
//!    along a y line are n*5 elements of rhs apart, along a z line n*n*5.
//! 3. add: for every point read rhs, read u, write u.
//!
//! Simplified: the lhs set-up (lhsx etc.) and the txinvr/tzetar block multiplies are
//! folded into the solves; elimination pulls from the rows before l instead of pushing
//! into the rows after it (same arrays and lines).

use super::emitter::{Emitter, Flow};
use super::layout::{Grid, Layout};
use super::npb_lu::{each, initialize, read, step, write, Pt, STENCIL};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "NPB SP access pattern: rhs stencil, then ADI pentadiagonal line solves along i, j and k of an n^3 grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "36", "grid points per dimension (NPB class W = 36, A = 64); at least 3"),
    param("iterations", "5", "time steps"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 3, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let a = Arrays { u: layout.grid(n, 5)?, rhs: layout.grid(n, 5)?, forcing: layout.grid(n, 5)?, lhs: layout.grid(n, 15)? };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        initialize(e, &[a.u, a.rhs, a.forcing, a.lhs])?;
        for _ in 0..iterations {
            run(e, &a)?;
        }
        Ok(())
    }))
}

struct Arrays {
    u: Grid,
    rhs: Grid,
    forcing: Grid,
    lhs: Grid,
}

fn run(e: &mut Emitter, a: &Arrays) -> Flow {
    let n = a.u.n();
    each(n, 0..n, false, |p| {
        for q in STENCIL.iter().filter_map(|&s| step(p, s, n)) {
            read(e, a.u, q)?;
        }
        read(e, a.forcing, p)?;
        write(e, a.rhs, p)
    })?;
    for axis in [2, 1, 0] {
        solve(e, a, axis)?;
    }
    each(n, 0..n, false, |p| {
        read(e, a.rhs, p)?;
        read(e, a.u, p)?;
        write(e, a.u, p)
    })
}

/// The line solves along `axis` (0 = k, 1 = j, 2 = i), for every line.
fn solve(e: &mut Emitter, a: &Arrays, axis: usize) -> Flow {
    let n = a.u.n();
    for o in 0..n {
        for q in 0..n {
            let at = |l: u64| -> Pt {
                match axis {
                    0 => [l, o, q],
                    1 => [o, l, q],
                    _ => [o, q, l],
                }
            };
            for l in 0..n {
                for back in [1, 2] {
                    if l >= back {
                        read(e, a.rhs, at(l - back))?;
                    }
                }
                for g in [a.lhs, a.rhs] {
                    read(e, g, at(l))?;
                    write(e, g, at(l))?;
                }
            }
            for l in (0..n).rev() {
                for ahead in [1, 2] {
                    if l + ahead < n {
                        read(e, a.rhs, at(l + ahead))?;
                    }
                }
                read(e, a.lhs, at(l))?;
                read(e, a.rhs, at(l))?;
                write(e, a.rhs, at(l))?;
            }
        }
    }
    Ok(())
}
