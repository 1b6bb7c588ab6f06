//! "wave": the two-dimensional surface wave of numa-page-migration.txt sections 4.4 and
//! 5.4.
//!
//! A periodic n x n grid (a torus; default n = 100) of 4-byte floats at three time
//! levels, previous, current and next, each a plain row-major n x n array (level L at
//! byte L * 4n^2; default address space 3 * 40,000 = 120,000 bytes). At step s the
//! levels s mod 3, (s+1) mod 3 and (s+2) mod 3 are previous, current and next: the
//! levels rotate, nothing is copied. `steps` = 800 (80,000 ms of simulated wave at a time
//! step of 100 ms). The grid is partitioned into sqrt(procs) x sqrt(procs) blocks, as
//! equal as possible when sqrt(procs) does not divide n (default 4 x 4 blocks of 25 x 25
//! points); processor pr * sqrt(procs) + pc owns block row pr, column pc. Each step, each
//! processor, for each of its points row by row, reads current at the point and at its
//! four periodic neighbours (up, down, left, right, wrapping around the torus), reads
//! previous at the point and writes next at the point: 7 references a point.
//!
//! NO barriers, as in the paper ("assumes periodic boundary conditions and no
//! barriers"): the processors drift apart in time steps, the machine's timing decides by
//! how much, and a processor may read a neighbour block's values of another step (the
//! numerical consequence does not matter for the reference string).
//!
//! Placement: each byte on the node of the block owning its grid point, in all three
//! levels.
//!
//! Simplified: the random initial values (time 0) and the wave speed only affect the
//! values, not the references, and the initialisation is not in the stream. A reference
//! is one `Op::Ref` with count 1, reads and writes alike.

use super::{block_of, block_start, grid_side, param, MAX_SIDE};
use crate::numa::stream::{NumaWorkload, Op, ProcStream};
use crate::workload::params::Params;
use crate::workload::ParamInfo;
use crate::Result;

pub(super) const SUMMARY: &str =
    "surface wave (sections 4.4, 5.4): periodic grid, three rotating time levels, block partition, no barriers";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("procs", "16", "number of processors (a perfect square: sqrt(procs) x sqrt(procs) blocks)"),
    param("n", "100", "grid side: n x n points on a torus, 4-byte floats, three time levels"),
    param("steps", "800", "time steps (paper: 80,000 ms / 100 ms)"),
];

pub(super) fn open(p: &Params, _seed: u64) -> Result<NumaWorkload> {
    let side = grid_side(p)?;
    let n = p.count("n", 1, MAX_SIDE)?;
    if n < side {
        return Err(p.error(format!(
            "parameter 'n': expected at least sqrt(procs) = {side} (one row and column per block), got {n}"
        )));
    }
    let steps = p.count("steps", 1, u32::MAX as u64)? as u32;
    let level_bytes = 4 * n * n;
    let mut streams: Vec<ProcStream> = Vec::with_capacity((side * side) as usize);
    for pr in 0..side {
        for pc in 0..side {
            let (r0, r1) = (block_start(pr, n, side), block_start(pr + 1, n, side));
            let (c0, c1) = (block_start(pc, n, side), block_start(pc + 1, n, side));
            streams.push(Box::new(WaveStream { n, level_bytes, r0, r1, c0, c1, steps, step: 0, r: r0, c: c0, phase: 0 }));
        }
    }
    let bytes = 3 * level_bytes;
    Ok(NumaWorkload {
        name: "wave".into(),
        bytes,
        streams,
        home: Box::new(move |addr| {
            let q = (addr.min(bytes - 1) % level_bytes) / 4;
            (block_of(q / n, n, side) * side + block_of(q % n, n, side)) as u16
        }),
    })
}

struct WaveStream {
    n: u64,
    level_bytes: u64,
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
        Op::Ref { addr: level * self.level_bytes + 4 * (r * self.n + c), count: 1 }
    }
}

impl Iterator for WaveStream {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.step >= self.steps {
            return None;
        }
        let (n, r, c) = (self.n, self.r, self.c);
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
    use crate::numa::stream::Op;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn operation_counts_at_defaults() {
        let mut w = open("wave", &[], 1).unwrap();
        assert_eq!(w.bytes, 120_000);
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

    #[test]
    fn uneven_blocks_cover_the_torus_every_step() {
        // n = 10 on a 3 x 3 processor grid: blocks of 3, 3 and 4 rows/columns.
        let (n, steps) = (10u64, 4usize);
        let mut w = open("wave", &kv(&[("procs", "9"), ("n", "10"), ("steps", "4")]), 1).unwrap();
        let level = 4 * n * n;
        assert_eq!(w.bytes, 3 * level);
        let sizes = [3u64, 3, 4];
        let points = |p: usize| sizes[p / 3] * sizes[p % 3];
        let mut writes = vec![vec![0u32; (n * n) as usize]; steps];
        let mut current_reads = vec![vec![0u32; (n * n) as usize]; steps];
        let home = &w.home;
        let mut ops = [0u64; 9];
        round_robin(&mut w.streams, |p, op| {
            let Op::Ref { addr, count: 1 } = op else { panic!("one reference, no barriers") };
            // The step and the reference of the point this processor is at.
            let (s, phase) = ((ops[p] / (7 * points(p))) as usize, ops[p] % 7);
            ops[p] += 1;
            let (lvl, q) = ((addr / level) as usize, ((addr % level) / 4) as usize);
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

    #[test]
    fn reads_wrap_around_the_torus() {
        let mut w = open("wave", &kv(&[("steps", "2")]), 1).unwrap();
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
