//! The memory access structure of SPEC CPU2000 171.swim (predictive-replacement.txt,
//! Table 1): the shallow water model of Sadourny on an n x n periodic grid. Only
//! addresses are simulated, no floating-point work. Arrays, in layout order, 13 n x n
//! matrices of doubles: u, v, p, unew, vnew, pnew, uold, vold, pold, cu, cv, z, h.
//!
//! SWIM's arrays are Fortran `A(N1, N2)`, I fastest; here `(I, J)` is row J, column I of a
//! row-major matrix, so "+1 in J" is the next row. With M = N = n - 1 and I, J over
//! 1..M, 1..N (0-based here), rows J outer, I inner, each time step is:
//! 1. calc1: read p, u, v at (I..I+1, J..J+1), write cu(I+1,J), cv(I,J+1), z(I+1,J+1),
//!    h(I,J); then the periodic copies of cu, cv, z, h (first or last column from the
//!    other end, strided down the rows; then first or last row; then a corner);
//! 2. calc2: read uold, vold, pold at the point, z, cu, cv, h around it, write unew(I+1,J),
//!    vnew(I,J+1), pnew(I,J); periodic copies of unew, vnew, pnew;
//! 3. calc3 (time smoothing): read u, v, p, unew, vnew, pnew, uold, vold, pold at (I,J),
//!    write uold, vold, pold, u, v, p there; periodic copies of those six.
//!
//! First INITAL writes all 13 arrays (SWIM sets u, v, p and the old values; the others
//! stand for their zeroed COMMON storage).
//!
//! Simplified: the distinct operands of a point's statements are each read once, grouped
//! by array (as registers would hold them), reads before writes; the first step's calc3
//! smooths like the others (SWIM copies instead); calc2's periodic copies follow the
//! staggering of calc1's (unew like cu, vnew like cv, pnew like h).

use super::emitter::{Emitter, Flow};
use super::layout::{Layout, Matrix};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "SPEC swim access pattern: shallow water finite differences over 13 periodic n x n arrays (calc1, calc2, calc3)";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n", "192", "grid points per side (N1 = N2), at least 3 (SPEC 171.swim reference input and the paper: 1335)"),
    param("iterations", "10", "time steps (the paper: 200)"),
];

/// The arrays, in layout order: u, v, p, unew, vnew, pnew, uold, vold, pold, cu, cv, z, h.
const ARRAYS: usize = 13;
const U: usize = 0;
const V: usize = 1;
const P: usize = 2;
const UNEW: usize = 3;
const VNEW: usize = 4;
const PNEW: usize = 5;
const UOLD: usize = 6;
const VOLD: usize = 7;
const POLD: usize = 8;
const CU: usize = 9;
const CV: usize = 10;
const Z: usize = 11;
const H: usize = 12;

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let n = p.count("n", 3, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let mut a = Vec::with_capacity(ARRAYS);
    for _ in 0..ARRAYS {
        a.push(layout.matrix(n, n)?);
    }
    let s = Swim { a, n };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        for &a in &s.a {
            for row in 0..n {
                for col in 0..n {
                    e.write(a.at(row, col))?;
                }
            }
        }
        for _ in 0..iterations {
            s.calc1(e)?;
            s.calc2(e)?;
            s.calc3(e)?;
        }
        Ok(())
    }))
}

struct Swim {
    a: Vec<Matrix>,
    n: u64,
}

/// An operand: array, I offset, J offset.
type Operand = (usize, u64, u64);

impl Swim {
    /// Reads the operands `reads` and then writes `writes`, at point (i, j).
    fn statement(&self, e: &mut Emitter, i: u64, j: u64, reads: &[Operand], writes: &[Operand]) -> Flow {
        for &(a, di, dj) in reads {
            e.read(self.a[a].at(j + dj, i + di))?;
        }
        for &(a, di, dj) in writes {
            e.write(self.a[a].at(j + dj, i + di))?;
        }
        Ok(())
    }

    /// Every interior point, rows J outer, I inner.
    fn sweep(&self, e: &mut Emitter, reads: &[Operand], writes: &[Operand]) -> Flow {
        let m = self.n - 1;
        for j in 0..m {
            for i in 0..m {
                self.statement(e, i, j, reads, writes)?;
            }
        }
        Ok(())
    }

    fn calc1(&self, e: &mut Emitter) -> Flow {
        let reads = [(P, 0, 0), (P, 1, 0), (P, 0, 1), (P, 1, 1), (U, 0, 0), (U, 1, 0), (U, 1, 1), (V, 0, 0), (V, 0, 1), (V, 1, 1)];
        self.sweep(e, &reads, &[(CU, 1, 0), (CV, 0, 1), (Z, 1, 1), (H, 0, 0)])?;
        self.boundaries(e, &[(CU, Stagger::Cu), (CV, Stagger::Cv), (Z, Stagger::Z), (H, Stagger::H)])
    }

    fn calc2(&self, e: &mut Emitter) -> Flow {
        let reads = [
            (UOLD, 1, 0),
            (VOLD, 0, 1),
            (POLD, 0, 0),
            (Z, 1, 0),
            (Z, 0, 1),
            (Z, 1, 1),
            (CU, 0, 0),
            (CU, 1, 0),
            (CU, 0, 1),
            (CU, 1, 1),
            (CV, 0, 0),
            (CV, 1, 0),
            (CV, 0, 1),
            (CV, 1, 1),
            (H, 0, 0),
            (H, 1, 0),
            (H, 0, 1),
        ];
        self.sweep(e, &reads, &[(UNEW, 1, 0), (VNEW, 0, 1), (PNEW, 0, 0)])?;
        self.boundaries(e, &[(UNEW, Stagger::Cu), (VNEW, Stagger::Cv), (PNEW, Stagger::H)])
    }

    /// SWIM's periodic boundary copies of `arrays`, each with its staggering: first the
    /// column copies (J = 0..M, strided down the rows), then the row copies (I = 0..M,
    /// along a row), then one corner.
    fn boundaries(&self, e: &mut Emitter, arrays: &[(usize, Stagger)]) -> Flow {
        let m = self.n - 1;
        let copy = |e: &mut Emitter, a: usize, (di, dj): (u64, u64), (si, sj): (u64, u64)| -> Flow {
            e.read(self.a[a].at(sj, si))?;
            e.write(self.a[a].at(dj, di))
        };
        for x in 0..m {
            for &(a, s) in arrays {
                match s {
                    Stagger::Cu | Stagger::Z => copy(e, a, (0, x + 1), (m, x + 1))?,
                    Stagger::Cv | Stagger::H => copy(e, a, (m, x), (0, x))?,
                }
            }
        }
        for x in 0..m {
            for &(a, s) in arrays {
                match s {
                    Stagger::Cu | Stagger::Z => copy(e, a, (x + 1, 0), (x + 1, m))?,
                    Stagger::Cv => copy(e, a, (x, 0), (x, m))?,
                    Stagger::H => copy(e, a, (x, m), (x, 0))?,
                }
            }
        }
        for &(a, s) in arrays {
            match s {
                Stagger::Cu | Stagger::Z => copy(e, a, (0, 0), (m, m))?,
                Stagger::Cv | Stagger::H => copy(e, a, (m, m), (0, 0))?,
            }
        }
        Ok(())
    }

    fn calc3(&self, e: &mut Emitter) -> Flow {
        let smoothed = [U, V, P, UNEW, VNEW, PNEW, UOLD, VOLD, POLD];
        let reads: Vec<Operand> = smoothed.iter().map(|&a| (a, 0, 0)).collect();
        self.sweep(e, &reads, &[(UOLD, 0, 0), (VOLD, 0, 0), (POLD, 0, 0), (U, 0, 0), (V, 0, 0), (P, 0, 0)])?;
        self.boundaries(e, &[UOLD, VOLD, POLD, U, V, P].map(|a| (a, Stagger::H)))
    }
}

/// Where an array's values sit in SWIM's staggered grid, which decides its periodic
/// copies: like cu (I+1, J), cv (I, J+1), z (I+1, J+1) or h (I, J).
#[derive(Clone, Copy)]
enum Stagger {
    Cu,
    Cv,
    Z,
    H,
}
