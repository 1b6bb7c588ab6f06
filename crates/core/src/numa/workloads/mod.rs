//! The workloads of numa-page-migration.txt (sections 4.2-4.4 and 5) as per-processor
//! operation streams over a shared address space in bytes ([`NumaWorkload`]).
//!
//! Addresses are bytes, not pages, so the machine can cut the space into pages of any
//! size (64 B to 4 KiB and beyond). Every element is a 4-byte float or integer, as on the
//! paper's BBN Butterfly. Only shared data is referenced: the paper's private data (the
//! vector of vector x matrix, index variables, flags) lives in each processor's local
//! memory and goes through no address translation, so it is not in the streams.
//!
//! Streams are lazy iterators: a few integers of state, no allocation per operation,
//! deterministic for the seed. Processors that share work at run time (the two
//! processors of a row block in `vecmat` and `spmv-csr`) read and advance shared atomic
//! cursors when they start their next row; the machine calls `next` in simulated-time
//! order, so this models the paper's run-time race.
//!
//! Every workload takes `procs` (number of processors, default 16, the paper's user
//! processes); processor i runs on node i. Parameter errors are one-line
//! [`crate::Error::Invalid`] messages naming the workload and the parameter, as in
//! [`crate::workload`].

use std::sync::atomic::{AtomicU64, Ordering};

use super::stream::NumaWorkload;
use crate::workload::params::Params;
use crate::workload::ParamInfo;
use crate::Result;

mod jacobi;
mod spmv_csr;
mod vecmat;
mod wave;

#[cfg(test)]
mod tests;

/// A NUMA workload's name, one-line summary and parameters (the listing type of the
/// paging workloads).
pub use crate::workload::WorkloadInfo as NumaWorkloadInfo;

/// A registry entry.
struct Entry {
    name: &'static str,
    summary: &'static str,
    params: &'static [ParamInfo],
    /// Validates parameters (already checked for unknown names) and builds the streams.
    open: fn(&Params, u64) -> Result<NumaWorkload>,
}

const fn param(name: &'static str, default: &'static str, help: &'static str) -> ParamInfo {
    ParamInfo { name, default, help }
}

/// Largest number of processors: nodes are `u16`.
const MAX_PROCS: u64 = 1 << 16;

/// Largest grid / matrix side: keeps every address well inside `u64` and row numbers in
/// `u32`.
const MAX_SIDE: u64 = 1 << 20;

macro_rules! entry {
    ($module:ident, $name:literal) => {
        Entry { name: $name, summary: $module::SUMMARY, params: $module::PARAMS, open: $module::open }
    };
}

const WORKLOADS: &[Entry] = &[
    entry!(vecmat, "vecmat"),
    entry!(spmv_csr, "spmv-csr"),
    entry!(jacobi, "jacobi-numa"),
    entry!(wave, "wave"),
];

/// The NUMA workloads, in listing order.
pub fn list() -> Vec<NumaWorkloadInfo> {
    WORKLOADS
        .iter()
        .map(|w| NumaWorkloadInfo { name: w.name, summary: w.summary, params: w.params.to_vec() })
        .collect()
}

/// Builds a workload's streams. Unknown names, unknown parameters and bad values are
/// [`crate::Error::Invalid`] errors naming the workload and the parameter.
pub fn open(name: &str, params: &[(String, String)], seed: u64) -> Result<NumaWorkload> {
    let w = crate::workload::find(WORKLOADS, name, |w| w.name)?;
    let params = Params::new(w.name, w.params, params)?;
    let workload = (w.open)(&params, seed)?;
    debug_assert_eq!(workload.name, w.name);
    Ok(workload)
}

/// The `procs` parameter: a whole number of processors from 1 to 65536.
fn procs(p: &Params) -> Result<u64> {
    p.count("procs", 1, MAX_PROCS)
}

/// `procs` for a square processor grid: returns its side sqrt(procs).
fn grid_side(p: &Params) -> Result<u64> {
    let procs = procs(p)?;
    let side = isqrt(procs);
    if side * side != procs {
        return Err(p.error(format!(
            "parameter 'procs': expected a perfect square (a sqrt(procs) x sqrt(procs) processor grid), got {procs}"
        )));
    }
    Ok(side)
}

/// `procs` for processor pairs: returns the number of pairs procs/2.
fn pairs(p: &Params) -> Result<u64> {
    let procs = procs(p)?;
    if procs % 2 != 0 {
        return Err(p.error(format!(
            "parameter 'procs': expected an even number (pairs of processors share a row block), got {procs}"
        )));
    }
    Ok(procs / 2)
}

fn isqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// First index of block `k` when `len` items are split into `blocks` contiguous blocks
/// as equal as possible (sizes differ by at most one; the larger ones come last).
fn block_start(k: u64, len: u64, blocks: u64) -> u64 {
    k * len / blocks
}

/// The block holding item `i` (`i < len`) under [`block_start`]'s split.
fn block_of(i: u64, len: u64, blocks: u64) -> u64 {
    // i >= floor(k*len/blocks)  <=>  k < (i+1)*blocks/len
    ((i + 1) * blocks - 1) / len
}

/// The two ends of a row block that a processor pair eats toward each other: rows
/// `top..bottom` are left. Both cursors are one atomic word, so taking a row is one
/// compare-and-swap and a row is never taken twice whatever the order of calls.
struct PairCursor(AtomicU64);

impl PairCursor {
    fn new(first: u32, end: u32) -> Self {
        PairCursor(AtomicU64::new(((first as u64) << 32) | end as u64))
    }

    /// Takes the next row from the top (the even processor) or the bottom (the odd one);
    /// `None` once the two have met.
    fn take(&self, from_top: bool) -> Option<u32> {
        let mut row = 0;
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                let (top, bottom) = ((s >> 32) as u32, s as u32);
                if top >= bottom {
                    return None;
                }
                if from_top {
                    row = top;
                    Some(s + (1 << 32))
                } else {
                    row = bottom - 1;
                    Some(s - 1)
                }
            })
            .ok()
            .map(|_| row)
    }
}

/// How a block of rows is split between its pair at the start: rows `first..mid` are
/// the even processor's half (placed on its node), `mid..end` the odd one's. With an odd
/// number of rows the even half has the extra row.
#[derive(Debug, Clone, Copy)]
struct RowBlock {
    first: u32,
    mid: u32,
    end: u32,
}

impl RowBlock {
    /// Block `k` of `rows` rows split among `blocks` pairs.
    fn new(k: u64, rows: u64, blocks: u64) -> Self {
        let first = block_start(k, rows, blocks);
        let end = block_start(k + 1, rows, blocks);
        let mid = first + (end - first).div_ceil(2);
        RowBlock { first: first as u32, mid: mid as u32, end: end as u32 }
    }

    /// The initial owner (and home node) of `row` of block `k`.
    fn owner(k: u64, row: u64, rows: u64, blocks: u64) -> u16 {
        let b = RowBlock::new(k, rows, blocks);
        (2 * k + u64::from(row >= b.mid as u64)) as u16
    }
}

/// The node of row `row` when `rows` rows are split among `blocks` processor pairs.
fn row_home(row: u64, rows: u64, blocks: u64) -> u16 {
    RowBlock::owner(block_of(row, rows, blocks), row, rows, blocks)
}

/// Each workload's calibrated private work (its `PRIVATE`, documented there).
pub const PRIVATE_WORK: &[(&str, crate::numa::stream::PrivateWork)] = &[
    ("vecmat", vecmat::PRIVATE),
    ("spmv-csr", spmv_csr::PRIVATE),
    ("jacobi-numa", jacobi::PRIVATE),
    ("wave", wave::PRIVATE),
];

/// An n x n grid of 4-byte points partitioned into sqrt(procs) x sqrt(procs) blocks
/// (`jacobi-numa`'s copies, `wave`'s time levels), and its layout in memory: where a
/// point of one copy lives. Row-major (`vertical = false`), or each partition's points
/// contiguous, partition rows first, then partitions left to right (`vertical`:
/// section 5.3's vertical placement, "the next one or more segments in this grid
/// partition (which is in the next one or more rows) are mapped onto the page").
#[derive(Debug, Clone, Copy)]
pub(super) struct Grid {
    pub n: u64,
    /// sqrt(procs): partitions per side.
    pub side: u64,
    pub vertical: bool,
}

impl Grid {
    /// Byte offset within a copy of the vertical layout's partition with rows `r0..r1`
    /// starting at column `c0`: all partition rows above, then the partitions to the left.
    pub fn partition_base(&self, r0: u64, r1: u64, c0: u64) -> u64 {
        4 * (r0 * self.n + (r1 - r0) * c0)
    }

    /// Byte offset within a copy of point (r, c).
    pub fn offset(&self, r: u64, c: u64) -> u64 {
        let n = self.n;
        if !self.vertical {
            return 4 * (r * n + c);
        }
        let pr = block_of(r, n, self.side);
        let pc = block_of(c, n, self.side);
        let (r0, r1) = (block_start(pr, n, self.side), block_start(pr + 1, n, self.side));
        let (c0, c1) = (block_start(pc, n, self.side), block_start(pc + 1, n, self.side));
        self.partition_base(r0, r1, c0) + 4 * ((r - r0) * (c1 - c0) + (c - c0))
    }

    /// The point at byte offset `off` (< 4n^2) within a copy.
    pub fn point(&self, off: u64) -> (u64, u64) {
        let (n, side) = (self.n, self.side);
        let q = off / 4;
        if !self.vertical {
            return (q / n, q % n);
        }
        // Partition row: the grid rows above it fill q < r0 * n.
        let pr = block_of(q / n, n, side);
        let (r0, r1) = (block_start(pr, n, side), block_start(pr + 1, n, side));
        let h = r1 - r0;
        let q = q - r0 * n;
        // Partition column: the partitions to its left fill q < h * c0.
        let pc = block_of(q / h, n, side);
        let (c0, c1) = (block_start(pc, n, side), block_start(pc + 1, n, side));
        let q = q - h * c0;
        (r0 + q / (c1 - c0), c0 + q % (c1 - c0))
    }

    /// The processor (node) whose partition holds point (r, c).
    pub fn owner(&self, r: u64, c: u64) -> u16 {
        (block_of(r, self.n, self.side) * self.side + block_of(c, self.n, self.side)) as u16
    }
}

/// Drains every stream one operation at a time in round-robin order (a processor whose
/// stream has ended drops out), calling `f(processor, op)`.
#[cfg(test)]
fn round_robin(streams: &mut [super::stream::ProcStream], mut f: impl FnMut(usize, super::stream::Op)) {
    let mut live: Vec<usize> = (0..streams.len()).collect();
    while !live.is_empty() {
        live.retain(|&p| match streams[p].next() {
            Some(op) => {
                f(p, op);
                true
            }
            None => false,
        });
    }
}
