//! The memory access structure of SPEC CPU2000 168.wupwise (predictive-replacement.txt,
//! Table 1): lattice QCD, a BiCGStab solve of the Wilson-Dirac equation on a periodic
//! L x L x L x L lattice. Only addresses are simulated, no floating-point work. Arrays,
//! in layout order: the gauge field (per site 4 links of 3 x 3 complex numbers, 72
//! doubles) and 8 spinor fields (per site 4 spins x 3 colours complex, 24 doubles): b
//! (the source), x, r, r0, p, v, s, t. Sites are in x, y, z, t order (x fastest), a
//! site's doubles adjacent, so the neighbours along t are L^3 sites away.
//!
//! First the program writes the gauge field and every spinor field (b is the source,
//! the others start at zero), then r = b - A x, r0 = r, p = r. Each BiCGStab iteration:
//! v = A p; (r0, v); s = r - alpha v; t = A s; (t, s); |t|; x += alpha p; x += omega s;
//! r = s - omega t; (r0, r); p -= omega v; p *= beta; p += r. A = 1 - kappa D applied to
//! a field: for every site read the input spinor at the site, then for each direction
//! mu the site's link mu and the spinor at site + mu, and the link mu of site - mu and
//! the spinor at site - mu (periodic), then write the output spinor at the site. The
//! BLAS-like calls (zdotc, dznrm2, zaxpy, zcopy, zscal) each sweep their fields site
//! by site: read the inputs' spinors at the site, then write the output's.
//!
//! Simplified: wupwise's even-odd preconditioning (muldeo/muldoe on half lattices) is a
//! plain full-lattice operator, a site's 24 (or 18) doubles are read or written together,
//! and the two-step zcopy + zaxpy of s and r are kept as BLAS calls, not fused.

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "SPEC wupwise access pattern: BiCGStab with the Wilson-Dirac operator (8 neighbours in 4-D) on an L^4 lattice";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("l", "7", "lattice sites per dimension, at least 2 (about 17 fill the paper's 176 MB)"),
    param("iterations", "75", "BiCGStab iterations (the paper's NITER: 75)"),
];

/// Doubles in a spinor and in one link.
const SPINOR: u64 = 24;
const LINK: u64 = 18;
/// Spinor fields, in layout order.
const FIELDS: usize = 8;
const B: usize = 0;
const X: usize = 1;
const R: usize = 2;
const R0: usize = 3;
const P: usize = 4;
const V: usize = 5;
const S: usize = 6;
const T: usize = 7;

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let l = p.count("l", 2, u64::MAX)?;
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let sites = l.checked_pow(4).ok_or_else(|| p.error("parameter 'l': the lattice has too many sites"))?;
    let mut layout = Layout::new(page_size, p.what());
    let gauge = layout.array(sites.saturating_mul(4 * LINK))?;
    let mut fields = Vec::with_capacity(FIELDS);
    for _ in 0..FIELDS {
        fields.push(layout.array(sites * SPINOR)?);
    }
    let q = Lattice { l, sites, gauge, f: fields };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        for x in 0..sites * 4 * LINK {
            e.write(gauge.at(x))?;
        }
        for f in 0..FIELDS {
            q.sweep(e, &[], Some(f))?;
        }
        // r = b - A x, r0 = r, p = r
        q.apply(e, X, T)?;
        q.sweep(e, &[B, T], Some(R))?;
        q.sweep(e, &[R], Some(R0))?;
        q.sweep(e, &[R], Some(P))?;
        for _ in 0..iterations {
            q.apply(e, P, V)?;
            q.sweep(e, &[R0, V], None)?;
            q.sweep(e, &[R], Some(S))?;
            q.sweep(e, &[V, S], Some(S))?;
            q.apply(e, S, T)?;
            q.sweep(e, &[T, S], None)?;
            q.sweep(e, &[T], None)?;
            q.sweep(e, &[P, X], Some(X))?;
            q.sweep(e, &[S, X], Some(X))?;
            q.sweep(e, &[S], Some(R))?;
            q.sweep(e, &[T, R], Some(R))?;
            q.sweep(e, &[R0, R], None)?;
            q.sweep(e, &[V, P], Some(P))?;
            q.sweep(e, &[P], Some(P))?;
            q.sweep(e, &[R, P], Some(P))?;
        }
        Ok(())
    }))
}

struct Lattice {
    l: u64,
    sites: u64,
    gauge: Array,
    f: Vec<Array>,
}

impl Lattice {
    fn spinor(&self, e: &mut Emitter, field: usize, site: u64, write: bool) -> Flow {
        let a = self.f[field];
        for m in site * SPINOR..(site + 1) * SPINOR {
            if write {
                e.write(a.at(m))?;
            } else {
                e.read(a.at(m))?;
            }
        }
        Ok(())
    }

    fn link(&self, e: &mut Emitter, site: u64, mu: u64) -> Flow {
        let first = (site * 4 + mu) * LINK;
        (first..first + LINK).try_for_each(|m| e.read(self.gauge.at(m)))
    }

    /// The site one step forward (`+1`) or back (`-1`) along `mu`, periodically.
    fn neighbour(&self, site: u64, mu: u32, forward: bool) -> u64 {
        let stride = self.l.pow(mu);
        let coord = site / stride % self.l;
        let moved = if forward { (coord + 1) % self.l } else { (coord + self.l - 1) % self.l };
        site - coord * stride + moved * stride
    }

    /// A BLAS-like call: for every site read the spinors of `reads`, then write `write`'s.
    fn sweep(&self, e: &mut Emitter, reads: &[usize], write: Option<usize>) -> Flow {
        for site in 0..self.sites {
            for &f in reads {
                self.spinor(e, f, site, false)?;
            }
            if let Some(f) = write {
                self.spinor(e, f, site, true)?;
            }
        }
        Ok(())
    }

    /// out = A in = in - kappa D in.
    fn apply(&self, e: &mut Emitter, input: usize, out: usize) -> Flow {
        for site in 0..self.sites {
            self.spinor(e, input, site, false)?;
            for mu in 0..4u32 {
                self.link(e, site, mu as u64)?;
                self.spinor(e, input, self.neighbour(site, mu, true), false)?;
                let back = self.neighbour(site, mu, false);
                self.link(e, back, mu as u64)?;
                self.spinor(e, input, back, false)?;
            }
            self.spinor(e, out, site, true)?;
        }
        Ok(())
    }
}
