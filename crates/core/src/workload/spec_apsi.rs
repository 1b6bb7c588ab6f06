//! The memory access structure of SPEC CPU2000 301.apsi (predictive-replacement.txt,
//! Table 1): a mesoscale model of weather and pollutant dispersion on an nx x ny x nz
//! grid. Only addresses are simulated, no floating-point work. Arrays, in layout order,
//! 8 fields of one double a point, x fastest, then y, then z (a z step is nx*ny*8 bytes,
//! across pages): the winds u, v, w, the potential temperature theta, the pollutant
//! concentration c, the geopotential phi and the tendencies dtheta and dc.
//!
//! First every field is written. Each time step:
//! 1. advection and diffusion, for every point (z, y, x order): read theta and c at the
//!    point and its x-1, x+1, y-1, y+1, z-1, z+1 neighbours (inside the grid), read u, v,
//!    w at the point, write dtheta and dc;
//! 2. vertical diffusion, an implicit tridiagonal solve per column (y, x order): forward
//!    up the column read w, dtheta and dc one level down, then read and write dtheta and
//!    dc; back down it read both one level up, then read and write both;
//! 3. update: for every point read dtheta, read and write theta; read dc, read and write c;
//! 4. the pressure: for every horizontal level read theta and write phi, then FFT-like
//!    butterfly passes over phi, along x for every row, then along y for every column
//!    (read both points of a pair, write both);
//! 5. winds: for every point read phi at x-1, x+1, y-1, y+1, read and write u, then v.
//!
//! Simplified: apsi's many physics routines are reduced to these five sweeps over the
//! fields they share, its mixed-radix FFTs to radix-2 passes (skipping pairs past the end
//! of a line), and the solves' coefficient columns (small, always hot) are not emitted.

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::npb_ft::butterflies;
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "SPEC apsi access pattern: 3-D advection stencils, vertical tridiagonal column solves and horizontal FFT passes over 8 fields";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("nx", "64", "grid points along x (fastest), at least 2 (the paper: 112)"),
    param("ny", "64", "grid points along y, at least 2 (the paper: 112)"),
    param("nz", "16", "grid points along z (vertical levels), at least 2 (the paper: 112)"),
    param("iterations", "4", "time steps (the paper: 70)"),
];

/// The fields, in layout order.
const FIELDS: usize = 8;
const U: usize = 0;
const V: usize = 1;
const W: usize = 2;
const THETA: usize = 3;
const C: usize = 4;
const PHI: usize = 5;
const DTHETA: usize = 6;
const DC: usize = 7;

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let (nx, ny, nz) = (p.count("nx", 2, u64::MAX)?, p.count("ny", 2, u64::MAX)?, p.count("nz", 2, u64::MAX)?);
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let points = nx.checked_mul(ny).and_then(|x| x.checked_mul(nz));
    let points = points.ok_or_else(|| p.error("the grid nx x ny x nz has too many points"))?;
    let mut layout = Layout::new(page_size, p.what());
    let mut f = Vec::with_capacity(FIELDS);
    for _ in 0..FIELDS {
        f.push(layout.array(points)?);
    }
    let a = Apsi { f, dims: [nx, ny, nz] };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        for field in 0..FIELDS {
            for x in 0..points {
                e.write(a.f[field].at(x))?;
            }
        }
        for _ in 0..iterations {
            a.step(e)?;
        }
        Ok(())
    }))
}

struct Apsi {
    f: Vec<Array>,
    dims: [u64; 3],
}

/// A grid point [z, y, x].
type Pt = [u64; 3];

impl Apsi {
    fn at(&self, field: usize, [z, y, x]: Pt) -> u64 {
        let [nx, ny, _] = self.dims;
        self.f[field].at((z * ny + y) * nx + x)
    }

    fn read(&self, e: &mut Emitter, field: usize, p: Pt) -> Flow {
        e.read(self.at(field, p))
    }

    fn write(&self, e: &mut Emitter, field: usize, p: Pt) -> Flow {
        e.write(self.at(field, p))
    }

    /// `p` moved by `d` along `axis` (0 = z, 1 = y, 2 = x), if still inside the grid.
    fn moved(&self, p: Pt, axis: usize, d: i64) -> Option<Pt> {
        let n = [self.dims[2], self.dims[1], self.dims[0]][axis];
        let mut q = p;
        q[axis] = p[axis].checked_add_signed(d).filter(|&c| c < n)?;
        Some(q)
    }

    /// Calls `f` for every point in z, y, x order.
    fn each(&self, mut f: impl FnMut(Pt) -> Flow) -> Flow {
        let [nx, ny, nz] = self.dims;
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    f([z, y, x])?;
                }
            }
        }
        Ok(())
    }

    fn step(&self, e: &mut Emitter) -> Flow {
        let [nx, ny, nz] = self.dims;
        // 1. advection and diffusion
        self.each(|p| {
            for field in [THETA, C] {
                self.read(e, field, p)?;
                for (axis, d) in [(2, -1), (2, 1), (1, -1), (1, 1), (0, -1), (0, 1)] {
                    if let Some(q) = self.moved(p, axis, d) {
                        self.read(e, field, q)?;
                    }
                }
            }
            for field in [U, V, W] {
                self.read(e, field, p)?;
            }
            self.write(e, DTHETA, p)?;
            self.write(e, DC, p)
        })?;
        // 2. vertical tridiagonal solves, one per column
        for y in 0..ny {
            for x in 0..nx {
                for z in 0..nz {
                    self.read(e, W, [z, y, x])?;
                    self.level(e, [z, y, x], z.checked_sub(1))?;
                }
                for z in (0..nz - 1).rev() {
                    self.level(e, [z, y, x], Some(z + 1))?;
                }
            }
        }
        // 3. update
        self.each(|p| {
            for (tendency, field) in [(DTHETA, THETA), (DC, C)] {
                self.read(e, tendency, p)?;
                self.read(e, field, p)?;
                self.write(e, field, p)?;
            }
            Ok(())
        })?;
        // 4. the pressure: source, then butterflies along x and along y on every level
        self.each(|p| {
            self.read(e, THETA, p)?;
            self.write(e, PHI, p)
        })?;
        for z in 0..nz {
            for y in 0..ny {
                self.butterflies(e, nx, |l| [z, y, l])?;
            }
            for x in 0..nx {
                self.butterflies(e, ny, |l| [z, l, x])?;
            }
        }
        // 5. winds from the geopotential gradient
        self.each(|p| {
            for (axis, d) in [(2, -1), (2, 1), (1, -1), (1, 1)] {
                if let Some(q) = self.moved(p, axis, d) {
                    self.read(e, PHI, q)?;
                }
            }
            for field in [U, V] {
                self.read(e, field, p)?;
                self.write(e, field, p)?;
            }
            Ok(())
        })
    }

    /// One level of both column solves at `p`: read dtheta and dc at level `other` (the
    /// one below on the way up, above on the way down), then read and write both at `p`.
    fn level(&self, e: &mut Emitter, p: Pt, other: Option<u64>) -> Flow {
        if let Some(z) = other {
            for field in [DTHETA, DC] {
                self.read(e, field, [z, p[1], p[2]])?;
            }
        }
        for field in [DTHETA, DC] {
            self.read(e, field, p)?;
            self.write(e, field, p)?;
        }
        Ok(())
    }

    /// Butterfly passes over phi along the line of `len` points `at(0..len)`.
    fn butterflies(&self, e: &mut Emitter, len: u64, at: impl Fn(u64) -> Pt) -> Flow {
        butterflies(len, |a, b| {
            self.read(e, PHI, at(a))?;
            self.read(e, PHI, at(b))?;
            self.write(e, PHI, at(a))?;
            self.write(e, PHI, at(b))
        })
    }
}
