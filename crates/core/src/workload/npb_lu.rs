//! The memory access structure of NPB2 LU: SSOR on an n x n x n grid of 5-component
//! vectors. Only addresses are simulated, no floating-point work. Arrays, in layout order,
//! each n^3 points of 5 doubles: u (solution), rsd (residual), frct (forcing) and a, b, c,
//! d (the Jacobian blocks of the k-1, j-1, i-1 neighbours and of the diagonal; NPB keeps
//! 5 x 5 blocks of one plane, here 5 doubles a point over the whole grid).
//!
//! Each iteration, points in k, j, i order (i fastest), the 5 components of a point read
//! or written together:
//! 1. rhs: for every point read frct, then u at the point and at its i-1, i+1, j-1, j+1,
//!    k-1, k+1 neighbours, then write rsd.
//! 2. lower-triangular sweep (jacld/blts), forward over k = 1..n-1, j and i ascending:
//!    read a, b, c, d at the point, rsd at k-1, j-1, i-1, then read and write rsd.
//! 3. upper-triangular sweep (jacu/buts), backward over k = n-2..0, j and i descending:
//!    read d, c, b, a, rsd at k+1, j+1, i+1, then read and write rsd.
//! 4. update: for every point read rsd, read u, write u.
//!
//! Simplified: neighbours outside the grid are skipped instead of sweeping the interior
//! only (so every array is touched whole), and rhs runs at the start of an iteration
//! rather than once before the loop and at its end.

use super::emitter::{Emitter, Flow};
use super::layout::{Grid, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str = "NPB LU access pattern: SSOR rhs stencil, lower and upper triangular sweeps on an n^3 grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "33", "grid points per dimension (NPB class W = 33, A = 64); at least 2"),
    param("iterations", "5", "SSOR iterations (time steps)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 2, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let mut grid = || layout.grid(n, 5);
    let grids = [grid()?, grid()?, grid()?, grid()?, grid()?, grid()?, grid()?];
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        initialize(e, &grids)?;
        for _ in 0..iterations {
            run(e, grids)?;
        }
        Ok(())
    }))
}

// Grid helpers, shared with npb_sp and npb_mg.

/// The program's initialisation (NPB's setbv/setiv/erhs, initialize, zero3/zran3): every
/// component of every grid written once, in layout order, so that no page is read
/// before the program wrote it (a page never written would page for free: clean, with
/// nothing on swap).
pub(super) fn initialize(e: &mut Emitter, grids: &[Grid]) -> Flow {
    for &g in grids {
        let n = g.n();
        each(n, 0..n, false, |p| write(e, g, p))?;
    }
    Ok(())
}

/// A grid point `[k, j, i]`.
pub(super) type Pt = [u64; 3];

/// `p` moved by `d`, if still inside the grid.
pub(super) fn step(p: Pt, d: [i64; 3], n: u64) -> Option<Pt> {
    let mut q = [0; 3];
    for a in 0..3 {
        q[a] = p[a].checked_add_signed(d[a]).filter(|&x| x < n)?;
    }
    Some(q)
}

/// Reads every component of point `p` of `g`.
pub(super) fn read(e: &mut Emitter, g: Grid, p: Pt) -> Flow {
    g.point(p).try_for_each(|a| e.read(a))
}

/// Writes every component of point `p` of `g`.
pub(super) fn write(e: &mut Emitter, g: Grid, p: Pt) -> Flow {
    g.point(p).try_for_each(|a| e.write(a))
}

/// The 7-point stencil in read order: the point, then i-1, i+1, j-1, j+1, k-1, k+1.
pub(super) const STENCIL: [[i64; 3]; 7] = [[0, 0, 0], [0, 0, -1], [0, 0, 1], [0, -1, 0], [0, 1, 0], [-1, 0, 0], [1, 0, 0]];

/// Calls `f` for every point with k in `ks`, in k, j, i order, or in reverse order.
pub(super) fn each(n: u64, ks: std::ops::Range<u64>, backward: bool, mut f: impl FnMut(Pt) -> Flow) -> Flow {
    let turn = |x: u64, len: u64| if backward { len - 1 - x } else { x };
    for k in 0..ks.end - ks.start {
        let k = ks.start + turn(k, ks.end - ks.start);
        for j in 0..n {
            for i in 0..n {
                f([k, turn(j, n), turn(i, n)])?;
            }
        }
    }
    Ok(())
}

/// One SSOR iteration.
fn run(e: &mut Emitter, [u, rsd, frct, a, b, c, d]: [Grid; 7]) -> Flow {
    let n = u.n();
    each(n, 0..n, false, |p| {
        read(e, frct, p)?;
        for q in STENCIL.iter().filter_map(|&s| step(p, s, n)) {
            read(e, u, q)?;
        }
        write(e, rsd, p)
    })?;
    // One triangular sweep step at p: blocks, the three upwind neighbours, then p itself.
    let mut solve = |p: Pt, blocks: [Grid; 4], s: i64| -> Flow {
        for g in blocks {
            read(e, g, p)?;
        }
        for q in [[s, 0, 0], [0, s, 0], [0, 0, s]].iter().filter_map(|&d| step(p, d, n)) {
            read(e, rsd, q)?;
        }
        read(e, rsd, p)?;
        write(e, rsd, p)
    };
    each(n, 1..n, false, |p| solve(p, [a, b, c, d], -1))?;
    each(n, 0..n - 1, true, |p| solve(p, [d, c, b, a], 1))?;
    each(n, 0..n, false, |p| {
        read(e, rsd, p)?;
        read(e, u, p)?;
        write(e, u, p)
    })
}
