//! "wave": the two-dimensional surface wave of numa-page-migration.txt sections 4.4 and
//! 5.4.
//!
//! A periodic n x n grid (a torus; default n = 100) of 4-byte floats at three time
//! levels, previous, current and next. At step s the levels s mod 3, (s+1) mod 3 and
//! (s+2) mod 3 are previous, current and next: the levels rotate, nothing is copied.
//! `steps` = 800 (80,000 ms of simulated wave at a time step of 100 ms). The grid is
//! partitioned into sqrt(procs) x sqrt(procs) blocks, as equal as possible when
//! sqrt(procs) does not divide n (default 4 x 4 blocks of 25 x 25 points); processor
//! pr * sqrt(procs) + pc owns block row pr, column pc. Each step, each processor, for
//! each of its points row by row, reads current at the point and at its four periodic
//! neighbours (up, down, left, right, wrapping around the torus), reads previous at the
//! point and writes next at the point: 7 references a point.
//!
//! NO barriers, as in the paper ("assumes periodic boundary conditions and no
//! barriers"): the processors drift apart in time steps, the machine's timing decides by
//! how much, and a processor may read a neighbour block's values of another step (the
//! numerical consequence does not matter for the reference string).
//!
//! Layout (`layout`):
//! - `blocks` (the default): each processor's block, all three levels of it (level by
//!   level, each row-major within the block), is one segment of the address space that
//!   starts at a multiple of `align` bytes (default 4096); the rest of the segment up to
//!   the next processor's is unused. The paper gives no layout for the wave. Section 4:
//!   shared data "are partitioned among the local memories", and a page lives in one
//!   memory; section 4.4: the program is a port of a hypercube code ([5]) in which each
//!   processor holds its own subdomain. So each processor's block is in pages of its own
//!   (with every page size up to `align`), and the only shared references are the
//!   neighbours' edge reads (about 2% of them at the defaults).
//! - `rows`: each level a plain row-major n x n array, level L at byte L * 4n^2 (the
//!   first version; 120,000 bytes at the defaults), where a page of 512 bytes or more
//!   holds rows of several blocks and 71-76% of the references are remote without
//!   migration.
//!
//! Placement: each byte on the node of the block owning its grid point (padding with the
//! segment's processor).
//!
//! Simplified: the random initial values (time 0) and the wave speed only affect the
//! values, not the references, and the initialisation is not in the stream. A reference
//! is one `Op::Ref` with count 1, reads and writes alike.

use super::{block_of, block_start, grid_side, param, MAX_SIDE};
use crate::numa::stream::{PrivateWork, NumaWorkload, Op, ProcStream};
use crate::workload::params::Params;
use crate::workload::ParamInfo;
use crate::Result;

pub(super) const SUMMARY: &str =
    "surface wave (sections 4.4, 5.4): periodic grid, three rotating time levels, block partition, no barriers";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("procs", "16", "number of processors (a perfect square: sqrt(procs) x sqrt(procs) blocks)"),
    param("n", "100", "grid side: n x n points on a torus, 4-byte floats, three time levels"),
    param("steps", "800", "time steps (paper: 80,000 ms / 100 ms)"),
    param("layout", "blocks", "blocks (each processor's block, three levels, in a segment of its own) or rows (row-major levels)"),
    param("align", "4096", "with layout = blocks: each processor's segment starts at a multiple of this many bytes (a power of two from 4)"),
];

/// Where a point of a level lives.
#[derive(Debug, Clone, Copy)]
struct Layout {
    n: u64,
    side: u64,
    /// `blocks`: bytes from one processor's segment to the next; 0: `rows`.
    stride: u64,
}

impl Layout {
    /// `blocks`: each processor's segment holds 3 levels of the largest block, rounded up
    /// to `align` bytes.
    fn new(n: u64, side: u64, blocks: bool, align: u64) -> Layout {
        let big = n.div_ceil(side);
        Layout { n, side, stride: if blocks { (3 * 4 * big * big).div_ceil(align) * align } else { 0 } }
    }

    /// Block (pr, pc)'s rows r0..r1 and columns c0..c1.
    fn block(&self, pr: u64, pc: u64) -> (u64, u64, u64, u64) {
        let (n, side) = (self.n, self.side);
        (block_start(pr, n, side), block_start(pr + 1, n, side), block_start(pc, n, side), block_start(pc + 1, n, side))
    }

    /// Byte address of point (r, c) of level `level`.
    fn addr(&self, level: u64, r: u64, c: u64) -> u64 {
        let n = self.n;
        if self.stride == 0 {
            return level * 4 * n * n + 4 * (r * n + c);
        }
        let (pr, pc) = (block_of(r, n, self.side), block_of(c, n, self.side));
        let (r0, r1, c0, c1) = self.block(pr, pc);
        let w = c1 - c0;
        (pr * self.side + pc) * self.stride + 4 * (level * (r1 - r0) * w + (r - r0) * w + (c - c0))
    }

    /// The node of the byte at `addr`.
    fn home(&self, addr: u64) -> u16 {
        let n = self.n;
        if self.stride == 0 {
            let q = (addr % (4 * n * n)) / 4;
            return (block_of(q / n, n, self.side) * self.side + block_of(q % n, n, self.side)) as u16;
        }
        (addr / self.stride) as u16
    }
}

/// Private work: the paper's text keeps no cell of Tables 7 and 8, so there is no
/// no-migration row to calibrate from; the wave takes Jacobi's value per reference
/// (113.2 us: both are 5-point stencil updates of 4-byte floats on the same machine).
/// At the defaults (n 100, 800 steps, 1 KiB pages) None then takes 564 s (168 s with
/// shared references alone).
pub(super) const PRIVATE: PrivateWork = PrivateWork { first_ns: 113_225.0, repeat_ns: 0.0 };

pub(super) fn open(p: &Params, _seed: u64) -> Result<NumaWorkload> {
    let side = grid_side(p)?;
    let n = p.count("n", 1, MAX_SIDE)?;
    if n < side {
        return Err(p.error(format!(
            "parameter 'n': expected at least sqrt(procs) = {side} (one row and column per block), got {n}"
        )));
    }
    let steps = p.count("steps", 1, u32::MAX as u64)? as u32;
    let blocks = p.choice("layout", &["blocks", "rows"])? == "blocks";
    let align = p.count("align", 4, 1 << 30)?;
    if !align.is_power_of_two() {
        return Err(p.error(format!("parameter 'align': expected a power of two from 4 bytes, got {align}")));
    }
    let layout = Layout::new(n, side, blocks, align);
    let stride = layout.stride;
    let mut streams: Vec<ProcStream> = Vec::with_capacity((side * side) as usize);
    for pr in 0..side {
        for pc in 0..side {
            let (r0, r1, c0, c1) = layout.block(pr, pc);
            let (own_base, own_level) = (stride * (pr * side + pc), 4 * (r1 - r0) * (c1 - c0));
            streams.push(Box::new(WaveStream { layout, own_base, own_level, r0, r1, c0, c1, steps, step: 0, r: r0, c: c0, phase: 0 }));
        }
    }
    let bytes = if blocks { stride * side * side } else { 3 * 4 * n * n };
    Ok(NumaWorkload { name: "wave".into(), bytes, streams, home: Box::new(move |addr| layout.home(addr.min(bytes - 1))), private: PRIVATE })
}

struct WaveStream {
    layout: Layout,
    /// With `blocks`: its segment's first byte and the bytes of one level of its block.
    own_base: u64,
    own_level: u64,
    /// The block: rows r0..r1, columns c0..c1.
    r0: u64,
    r1: u64,
    c0: u64,
    c1: u64,
    steps: u32,
    step: u32,
    /// The point being computed and its next reference: 0 current at the point, 1-4
    /// current up, down, left, right, 5 previous at the point, 6 the write of next.
    r: u64,
    c: u64,
    phase: u8,
}

impl WaveStream {
    /// Byte address of (r, c) in level (step + shift) mod 3.
    fn at(&self, shift: u32, r: u64, c: u64) -> Op {
        let level = ((self.step % 3 + shift) % 3) as u64;
        let addr = if self.layout.stride > 0 && r >= self.r0 && r < self.r1 && c >= self.c0 && c < self.c1 {
            // fast path: its own block
            self.own_base + level * self.own_level + 4 * ((r - self.r0) * (self.c1 - self.c0) + (c - self.c0))
        } else {
            self.layout.addr(level, r, c)
        };
        Op::Ref { addr, count: 1 }
    }
}

impl Iterator for WaveStream {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.step >= self.steps {
            return None;
        }
        let (n, r, c) = (self.layout.n, self.r, self.c);
        const PREVIOUS: u32 = 0;
        const CURRENT: u32 = 1;
        const NEXT: u32 = 2;
        let op = match self.phase {
            0 => self.at(CURRENT, r, c),
            1 => self.at(CURRENT, if r == 0 { n - 1 } else { r - 1 }, c),
            2 => self.at(CURRENT, if r + 1 == n { 0 } else { r + 1 }, c),
            3 => self.at(CURRENT, r, if c == 0 { n - 1 } else { c - 1 }),
            4 => self.at(CURRENT, r, if c + 1 == n { 0 } else { c + 1 }),
            5 => self.at(PREVIOUS, r, c),
            _ => {
                let op = self.at(NEXT, r, c);
                self.phase = 0;
                self.c += 1;
                if self.c == self.c1 {
                    self.c = self.c0;
                    self.r += 1;
                    if self.r == self.r1 {
                        self.r = self.r0;
                        self.step += 1;
                    }
                }
                return Some(op);
            }
        };
        self.phase += 1;
        Some(op)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open, round_robin};
    use super::Layout;
    use crate::numa::stream::Op;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn operation_counts_at_defaults() {
        let mut w = open("wave", &[], 1).unwrap();
        assert_eq!(w.bytes, 16 * 8192, "16 segments of 3 x 2,500 bytes, 4 KiB-aligned");
        assert_eq!(w.streams.len(), 16);
        let mut total = 0u64;
        for s in w.streams.iter_mut() {
            let mut ops = 0u64;
            for op in s {
                assert!(matches!(op, Op::Ref { count: 1, .. }), "no barriers");
                ops += 1;
            }
            // 25 x 25 points, 7 references each, 800 steps.
            assert_eq!(ops, 7 * 25 * 25 * 800);
            total += ops;
        }
        assert_eq!(total, 56_000_000);
    }

    /// Every address of the layout's points: (level, row-major point index).
    fn decoder(layout: &Layout) -> std::collections::HashMap<u64, (usize, usize)> {
        let n = layout.n;
        let mut map = std::collections::HashMap::new();
        for level in 0..3 {
            for r in 0..n {
                for c in 0..n {
                    let old = map.insert(layout.addr(level, r, c), (level as usize, (r * n + c) as usize));
                    assert!(old.is_none(), "two points at one address");
                }
            }
        }
        map
    }

    #[test]
    fn uneven_blocks_cover_the_torus_every_step() {
        // n = 10 on a 3 x 3 processor grid: blocks of 3, 3 and 4 rows/columns.
        let (n, steps) = (10u64, 4usize);
        for (layout, align) in [("rows", 4096u64), ("blocks", 4096), ("blocks", 4)] {
            let params = kv(&[("procs", "9"), ("n", "10"), ("steps", "4"), ("layout", layout), ("align", &align.to_string())]);
            let mut w = open("wave", &params, 1).unwrap();
            let lay = Layout::new(n, 3, layout == "blocks", align);
            let decode = decoder(&lay);
            assert_eq!(w.bytes, if layout == "rows" { 3 * 4 * n * n } else { 9 * lay.stride }, "{layout}");
            if layout == "blocks" {
                // 3 levels of the largest block (4 x 4 points, 192 bytes), aligned
                assert_eq!(lay.stride, if align == 4 { 192 } else { 4096 });
            }
            let sizes = [3u64, 3, 4];
            let points = |p: usize| sizes[p / 3] * sizes[p % 3];
            let mut writes = vec![vec![0u32; (n * n) as usize]; steps];
            let mut current_reads = vec![vec![0u32; (n * n) as usize]; steps];
            let home = &w.home;
            let mut ops = [0u64; 9];
            round_robin(&mut w.streams, |p, op| {
                let Op::Ref { addr, count: 1 } = op else { panic!("one reference, no barriers") };
                assert!(addr < w.bytes);
                // The step and the reference of the point this processor is at.
                let (s, phase) = ((ops[p] / (7 * points(p))) as usize, ops[p] % 7);
                ops[p] += 1;
                let (lvl, q) = decode[&addr];
                // the byte's node is the owner of the point, in every level
                assert_eq!(home(addr), lay_owner(q as u64, n), "{layout}: point {q}");
                match phase {
                    0..=4 => {
                        assert_eq!(lvl, (s + 1) % 3, "current");
                        current_reads[s][q] += 1;
                    }
                    5 => assert_eq!(lvl, s % 3, "previous"),
                    _ => {
                        assert_eq!(lvl, (s + 2) % 3, "next");
                        assert_eq!(home(addr) as usize, p, "a processor writes its own block");
                        writes[s][q] += 1;
                    }
                }
            });
            for (p, &count) in ops.iter().enumerate() {
                assert_eq!(count, 7 * points(p) * steps as u64, "processor {p}");
            }
            for s in 0..steps {
                assert!(writes[s].iter().all(|&x| x == 1), "step {s}: every point written once");
                // Each point's current value is read by itself and its 4 torus neighbours.
                assert!(current_reads[s].iter().all(|&x| x == 5), "step {s}");
            }
        }
    }

    /// The owner of point q of a 10 x 10 grid in 3 x 3 blocks of 3, 3, 4 rows/columns.
    fn lay_owner(q: u64, n: u64) -> u16 {
        let b = |i: u64| if i < 3 { 0 } else if i < 6 { 1 } else { 2 };
        (b(q / n) * 3 + b(q % n)) as u16
    }

    #[test]
    fn blocks_give_each_processor_pages_of_its_own() {
        // the defaults: 16 segments of 8 KiB (3 levels of 25 x 25 points = 7,500 bytes)
        let w = open("wave", &[], 1).unwrap();
        assert_eq!(w.bytes, 16 * 8192);
        for page_size in [512u64, 1024, 2048, 4096] {
            for page in 0..w.bytes / page_size {
                let nodes: std::collections::BTreeSet<u16> =
                    (page * page_size..(page + 1) * page_size).step_by(4).map(|a| (w.home)(a)).collect();
                assert_eq!(nodes.len(), 1, "page {page} of {page_size} bytes");
            }
        }
        // the first version's rows: a 512-byte page holds rows of several blocks
        let rows = open("wave", &kv(&[("layout", "rows")]), 1).unwrap();
        assert_eq!(rows.bytes, 120_000);
        let nodes: std::collections::BTreeSet<u16> = (0..512).step_by(4).map(|a| (rows.home)(a)).collect();
        assert_eq!(nodes, [0, 1, 2, 3].into());
        // processor 5's own block is at its segment: level 1, point (25, 25) is its first
        let mut w = open("wave", &kv(&[("steps", "1")]), 1).unwrap();
        assert_eq!(w.streams[5].next(), Some(Op::Ref { addr: 5 * 8192 + 2500, count: 1 }));
        assert!(open("wave", &kv(&[("align", "3000")]), 1).is_err());
    }

    #[test]
    fn reads_wrap_around_the_torus() {
        let mut w = open("wave", &kv(&[("steps", "2"), ("layout", "rows")]), 1).unwrap();
        let (n, level) = (100u64, 40_000u64);
        let at = |lvl: u64, r: u64, c: u64| Op::Ref { addr: lvl * level + 4 * (r * n + c), count: 1 };
        // Processor 0 owns the top-left block; its first point (0, 0) wraps up and left.
        let first: Vec<Op> = w.streams[0].by_ref().take(7).collect();
        assert_eq!(first, [at(1, 0, 0), at(1, 99, 0), at(1, 1, 0), at(1, 0, 99), at(1, 0, 1), at(0, 0, 0), at(2, 0, 0)]);
        // Processor 15 owns the bottom-right block; its last point (99, 99) wraps down
        // and right. Step 1 (its last): previous = level 1, current = 2, next = 0.
        let last: Vec<Op> = w.streams[15].by_ref().collect();
        assert_eq!(last.len(), 7 * 625 * 2);
        assert_eq!(
            &last[last.len() - 7..],
            &[at(2, 99, 99), at(2, 98, 99), at(2, 0, 99), at(2, 99, 98), at(2, 99, 0), at(1, 99, 99), at(0, 99, 99)]
        );
        // Placement: the point (50, 30) is in block (2, 1), processor 9, in every level.
        for lvl in 0..3 {
            assert_eq!((w.home)(lvl * level + 4 * (50 * n + 30)), 9);
        }
    }
}
