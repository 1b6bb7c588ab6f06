//! The memory access structure of NPB2 FT (predictive-replacement.txt, Table 1): a 3-D
//! FFT time evolution on an n1 x n2 x n3 grid of complex numbers (16 bytes a point, n1
//! fastest, Fortran's `u(n1, n2, n3)`). Only addresses are simulated, no floating-point
//! work. Arrays, in layout order: u0 and u1 (complex, two doubles a point) and twiddle
//! (one double a point).
//!
//! Setup (NPB's compute_indexmap, compute_initial_conditions and the forward fft): write
//! twiddle and u1, a forward 3-D FFT of u1 in place, then copy u1 to u0. Each iteration:
//! 1. evolve: for every point read u0 and twiddle, write u1 (u1 = u0 * twiddle);
//! 2. the inverse 3-D FFT of u1 in place, dimension 3 first, then 2, then 1 (NPB's order
//!    for the inverse): for every line along the dimension, log2(len) radix-2 butterfly
//!    passes; pass s reads the pair of points 2^s apart, then writes both. A line along
//!    dimension 3 has its points n1*n2*16 bytes apart, so its passes stride across pages;
//!    this is what makes FT's page lifetimes irregular in the paper (section 4);
//! 3. checksum: read u1 at NPB's 1024 points (j mod n1, 3j mod n2, 5j mod n3).
//!
//! Simplified: NPB copies blocks of 16 lines into a scratch array (cffts1/2/3) and runs a
//! Stockham FFT (cfftz) there; here the butterflies run on the grid lines themselves, so
//! the slow-dimension strides appear in every pass, not only in the copies. The roots of
//! unity (one page, always hot) and the bit reversal of an in-place FFT are not emitted,
//! and the inverse FFT is in place (NPB writes a third array, u2).

use super::emitter::{Emitter, Flow};
use super::layout::{Array, Layout};
use super::params::Params;
use super::stream::Plan;
use super::{param, ParamInfo};
use crate::Result;

pub(super) const SUMMARY: &str =
    "NPB FT access pattern: evolve, then radix-2 butterfly passes along the three dimensions of an n1 x n2 x n3 complex grid";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("n1", "64", "points along dimension 1 (fastest), a power of two >= 2 (NPB class W: 128, A: 256)"),
    param("n2", "64", "points along dimension 2, a power of two >= 2 (NPB class W: 128, A: 256)"),
    param("n3", "32", "points along dimension 3 (slowest), a power of two >= 2 (NPB class W: 32, A: 128; the paper: 256)"),
    param("iterations", "6", "time steps (NPB classes S, W and A: 6)"),
];

pub(super) fn plan(p: &Params, page_size: u64, _seed: u64) -> Result<Plan> {
    let mut dims = [0; 3];
    for (d, name) in dims.iter_mut().zip(["n1", "n2", "n3"]) {
        *d = p.count(name, 0, u64::MAX)?;
        if *d < 2 || !d.is_power_of_two() {
            return Err(p.error(format!("parameter '{name}': expected a power of two >= 2, got {d}")));
        }
    }
    let iterations = p.count("iterations", 1, u64::MAX)?;
    let mut layout = Layout::new(page_size, p.what());
    let points = dims[0].checked_mul(dims[1]).and_then(|x| x.checked_mul(dims[2])).filter(|&x| x <= u64::MAX / 2);
    let points = points.ok_or_else(|| p.error("the grid n1 x n2 x n3 has too many points"))?;
    let a = Arrays { u0: layout.array(2 * points)?, u1: layout.array(2 * points)?, twiddle: layout.array(points)? };
    Ok(Plan::new(layout.span_pages(), None, move |e| {
        let g = Lines { dims };
        for i in 0..points {
            e.write(a.twiddle.at(i))?;
        }
        for i in 0..points {
            write(e, a.u1, i)?;
        }
        for axis in [0, 1, 2] {
            g.fft(e, a.u1, axis)?;
        }
        for i in 0..points {
            read(e, a.u1, i)?;
            write(e, a.u0, i)?;
        }
        for _ in 0..iterations {
            for i in 0..points {
                read(e, a.u0, i)?;
                e.read(a.twiddle.at(i))?;
                write(e, a.u1, i)?;
            }
            for axis in [2, 1, 0] {
                g.fft(e, a.u1, axis)?;
            }
            for j in 1..=1024 {
                read(e, a.u1, g.index([j % dims[0], 3 * j % dims[1], 5 * j % dims[2]]))?;
            }
        }
        Ok(())
    }))
}

struct Arrays {
    u0: Array,
    u1: Array,
    twiddle: Array,
}

/// Reads complex point `i` (two doubles).
fn read(e: &mut Emitter, a: Array, i: u64) -> Flow {
    e.read(a.at(2 * i))?;
    e.read(a.at(2 * i + 1))
}

/// Writes complex point `i` (two doubles).
fn write(e: &mut Emitter, a: Array, i: u64) -> Flow {
    e.write(a.at(2 * i))?;
    e.write(a.at(2 * i + 1))
}

/// Radix-2 butterfly passes over a line of `len` points: pass s pairs each point with
/// the one 2^s further on, in blocks of 2^(s+1) points. For a `len` that is not a power
/// of two, pairs past the end are skipped (an FFT-like pass; spec_apsi uses this).
pub(super) fn butterflies(len: u64, mut pair: impl FnMut(u64, u64) -> Flow) -> Flow {
    let mut half = 1;
    while half < len {
        for start in (0..len).step_by(2 * half as usize) {
            for a in start..(start + half).min(len - half) {
                pair(a, a + half)?;
            }
        }
        half *= 2;
    }
    Ok(())
}

/// The grid's lines along each dimension.
struct Lines {
    dims: [u64; 3],
}

impl Lines {
    /// Point index of `[i1, i2, i3]` (i1 fastest).
    fn index(&self, [i1, i2, i3]: [u64; 3]) -> u64 {
        (i3 * self.dims[1] + i2) * self.dims[0] + i1
    }

    /// The 1-D FFTs of every line along `axis` (0 = dimension 1), lines in the loop
    /// order of NPB's cffts1 (i3, i2), cffts2 (i3, i1) and cffts3 (i2, i1).
    fn fft(&self, e: &mut Emitter, u: Array, axis: usize) -> Flow {
        let [n1, n2, _] = self.dims;
        let stride = [1, n1, n1 * n2];
        let (outer, inner) = match axis {
            0 => (2, 1),
            1 => (2, 0),
            _ => (1, 0),
        };
        for o in 0..self.dims[outer] {
            for q in 0..self.dims[inner] {
                let start = o * stride[outer] + q * stride[inner];
                let at = |l: u64| start + l * stride[axis];
                butterflies(self.dims[axis], |a, b| {
                    read(e, u, at(a))?;
                    read(e, u, at(b))?;
                    write(e, u, at(a))?;
                    write(e, u, at(b))
                })?;
            }
        }
        Ok(())
    }
}
