//! The memory access structure of NPB2 BT (predictive-replacement.txt, Table 1): the
//! block-tridiagonal ADI solver on an n x n x n grid, 5 x 5 blocks per point. Only
//! addresses are simulated, no floating-point work. Arrays, in layout order: u, rhs and
//! forcing (5 doubles a point), then the block work arrays fjac and njac (one 5 x 5 block,
//! 25 doubles) and lhs (the three blocks aa, bb, cc of a point's row, 75 doubles).
//!
//! Where the work arrays live is a parameter: over the whole grid, as in NPB 2.3 (the
//! version the paper ran: its "5x5x65x65x65 matrices", 400 MB), or over one line, reused
//! for every line, as in NPB 3.
//!
//! Each time step, points in k, j, i order (i fastest), a point's components read or
//! written together:
//! 1. compute_rhs: for every point read u at the point and its i-1, i+1, j-1, j+1, k-1,
//!    k+1 neighbours, read forcing, write rhs;
//! 2. x_solve, y_solve, z_solve: for every line along i (then j, then k), in the loop
//!    order of npb-sp:
//!    - lhs set-up (lhsx/lhsy/lhsz): at every point of the line read u, write fjac and
//!      njac; then at every point write lhs aa, bb, cc from fjac and njac at l-1, l, l+1
//!      (the two end points only write, like lhsinit);
//!    - forward elimination (x_solve_cell): at l > 0, matvec_sub (read aa(l), rhs(l-1),
//!      rhs(l), write rhs(l)) and matmul_sub (read aa(l), cc(l-1), bb(l), write bb(l));
//!      then binvcrhs (read bb, cc, rhs at l, write them; binvrhs at the last point);
//!    - back substitution, l = n-2 down to 0: read cc(l), rhs(l+1), rhs(l), write rhs(l).
//! 3. add: for every point read rhs, read u, write u.
//!
//! Simplified: the auxiliary arrays of compute_rhs (us, vs, ws, qs, rho_i, square) and
//! its fourth-order dissipation terms (i +- 2) are left out; a 5 x 5 block is read or
//! written as a whole (25 doubles in a row), not element by element as the elimination
//! inside binvcrhs does.

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Grid, Layout};
use super::npb_lu::{each, initialize, read, step, write, Pt, STENCIL};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "NPB BT access pattern: rhs stencil, then ADI block-tridiagonal (5x5) line solves along i, j and k of an n^3 grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "16", "grid points per dimension, at least 3 (NPB class S = 12, W = 24, A = 64; the paper's 65 is class A padded)"),
    param("iterations", "60", "time steps (NPB class S: 60, W and A: 200)"),
    param(
        "work",
        "grid",
        "where the 5x5 block arrays fjac, njac, lhs live: grid (NPB 2.3, as in the paper: every point) or line (NPB 3: one line)",
    ),
];

/// Doubles in a 5 x 5 block.
const BLOCK: u64 = 25;

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 3, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let per_line = p.choice("work", &["grid", "line"])? == "line";
    let mut layout = Layout::new(page_size, p.what());
    let (u, rhs, forcing) = (layout.grid(n, 5)?, layout.grid(n, 5)?, layout.grid(n, 5)?);
    let mut work = |blocks: u64| -> Result<Work> {
        Ok(if per_line {
            Work::Line { base: layout.array(n * blocks * BLOCK)?, comps: blocks * BLOCK }
        } else {
            Work::Grid(layout.grid(n, blocks * BLOCK)?)
        })
    };
    let a = Arrays { u, rhs, forcing, fjac: work(1)?, njac: work(1)?, lhs: work(3)? };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        initialize(e, &[a.u, a.rhs, a.forcing])?;
        for w in [a.fjac, a.njac, a.lhs] {
            w.initialize(e, n)?;
        }
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
    fjac: Work,
    njac: Work,
    lhs: Work,
}

/// A block work array: `comps` doubles at every grid point, or at every point of one
/// line (reused by all lines).
#[derive(Clone, Copy)]
enum Work {
    Grid(Grid),
    Line { base: Array, comps: u64 },
}

/// The lhs blocks of a row: sub-diagonal, diagonal, super-diagonal.
const AA: u64 = 0;
const BB: u64 = 1;
const CC: u64 = 2;

impl Work {
    /// Writes every element once (NPB's initialisation; the whole array in layout order).
    fn initialize(self, e: &mut Emitter, n: u64) -> Flow {
        match self {
            Work::Grid(g) => initialize(e, &[g]),
            Work::Line { base, comps } => (0..n * comps).try_for_each(|x| e.write(base.at(x))),
        }
    }

    /// Reads (or writes) block `b` of the entry for grid point `p`, line position `l`.
    fn block(self, e: &mut Emitter, p: Pt, l: u64, b: u64, is_write: bool) -> Flow {
        let mut touch = |addr: u64| if is_write { e.write(addr) } else { e.read(addr) };
        match self {
            Work::Grid(g) => g.point(p).skip((b * BLOCK) as usize).take(BLOCK as usize).try_for_each(touch),
            Work::Line { base, comps } => (0..BLOCK).try_for_each(|m| touch(base.at(l * comps + b * BLOCK + m))),
        }
    }
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
        for o in 0..n {
            for q in 0..n {
                let at = |l: u64| -> Pt {
                    match axis {
                        0 => [l, o, q],
                        1 => [o, l, q],
                        _ => [o, q, l],
                    }
                };
                solve_line(e, a, n, at)?;
            }
        }
    }
    each(n, 0..n, false, |p| {
        read(e, a.rhs, p)?;
        read(e, a.u, p)?;
        write(e, a.u, p)
    })
}

/// Set-up, forward elimination and back substitution of one line; `at(l)` is the grid
/// point at line position `l`.
fn solve_line(e: &mut Emitter, a: &Arrays, n: u64, at: impl Fn(u64) -> Pt) -> Flow {
    const R: bool = false;
    const W: bool = true;
    let (fjac, njac, lhs) = (a.fjac, a.njac, a.lhs);
    for l in 0..n {
        read(e, a.u, at(l))?;
        fjac.block(e, at(l), l, 0, W)?;
        njac.block(e, at(l), l, 0, W)?;
    }
    for l in 0..n {
        let p = at(l);
        if l > 0 && l < n - 1 {
            fjac.block(e, at(l - 1), l - 1, 0, R)?;
            njac.block(e, at(l - 1), l - 1, 0, R)?;
            lhs.block(e, p, l, AA, W)?;
            njac.block(e, p, l, 0, R)?;
            lhs.block(e, p, l, BB, W)?;
            fjac.block(e, at(l + 1), l + 1, 0, R)?;
            njac.block(e, at(l + 1), l + 1, 0, R)?;
            lhs.block(e, p, l, CC, W)?;
        } else {
            for b in [AA, BB, CC] {
                lhs.block(e, p, l, b, W)?;
            }
        }
    }
    for l in 0..n {
        let p = at(l);
        if l > 0 {
            // matvec_sub(aa(l), rhs(l-1), rhs(l)), then matmul_sub(aa(l), cc(l-1), bb(l))
            lhs.block(e, p, l, AA, R)?;
            read(e, a.rhs, at(l - 1))?;
            read(e, a.rhs, p)?;
            write(e, a.rhs, p)?;
            lhs.block(e, p, l, AA, R)?;
            lhs.block(e, at(l - 1), l - 1, CC, R)?;
            lhs.block(e, p, l, BB, R)?;
            lhs.block(e, p, l, BB, W)?;
        }
        // binvcrhs(bb(l), cc(l), rhs(l)); binvrhs at the last point has no cc
        let blocks: &[u64] = if l < n - 1 { &[BB, CC] } else { &[BB] };
        for &b in blocks {
            lhs.block(e, p, l, b, R)?;
        }
        read(e, a.rhs, p)?;
        for &b in blocks {
            lhs.block(e, p, l, b, W)?;
        }
        write(e, a.rhs, p)?;
    }
    for l in (0..n - 1).rev() {
        let p = at(l);
        lhs.block(e, p, l, CC, R)?;
        read(e, a.rhs, at(l + 1))?;
        read(e, a.rhs, p)?;
        write(e, a.rhs, p)?;
    }
    Ok(())
}
