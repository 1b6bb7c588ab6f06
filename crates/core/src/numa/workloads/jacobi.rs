//! "jacobi-numa": Jacobi's method of numa-page-migration.txt sections 4.3 and 5.3.
//!
//! Two copies of an n x n grid of 4-byte floats (default n = 512: a 2 MiB address
//! space, copy A at 0, copy B at 4n^2), partitioned by a sqrt(procs) x sqrt(procs)
//! processor grid (default 4 x 4: partitions of 128 x 128 points; processor pr *
//! sqrt(procs) + pc owns partition row pr, column pc). Each of `iterations` (10)
//! iterations: every processor updates each point of its partition of the new copy, row
//! by row: it reads the up, down, left and right neighbours in the old copy (neighbours
//! outside the grid's outer edge are skipped: the boundary is fixed) and writes the point
//! in the new copy; then `Op::Barrier`. Iteration 0 reads A and writes B; the copies swap
//! roles every iteration.
//!
//! `layout` (section 5.3's page placement for pages larger than a 512-byte row segment):
//! `horizontal`: plain row-major addresses, so a page larger than a partition's row
//! segment holds the next segments of the same row, which belong to other partitions;
//! `vertical`: each partition's points are stored contiguously, partition by partition
//! (address = copy base + partition index * partition bytes + local row * segment bytes +
//! local column * 4), so a page holds successive rows of one partition. Placement: a
//! byte lives on the node of the partition owning its grid point, in both copies.
//!
//! When sqrt(procs) does not divide n the partitions are as equal as possible (sizes
//! differ by one) and the vertical layout stores each partition after all those before
//! it (partition rows first, then partitions left to right).
//!
//! Simplified: the paper's 17th processor, which only checks convergence, is left out;
//! so are the reads of the grid's values for the convergence test and the
//! initialisation. A reference is one `Op::Ref` with count 1, reads and writes alike.

use super::{block_start, grid_side, param, Grid, MAX_SIDE};
use crate::numa::stream::{PrivateWork, NumaWorkload, Op, ProcStream};
use crate::workload::params::Params;
use crate::workload::ParamInfo;
use crate::Result;

pub(super) const SUMMARY: &str =
    "Jacobi's method (sections 4.3, 5.3): two grid copies, sqrt(procs)^2 partitions, barrier per iteration";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("procs", "16", "number of processors (a perfect square: a sqrt(procs) x sqrt(procs) processor grid)"),
    param("n", "512", "grid side: two copies of n x n 4-byte floats"),
    param("iterations", "10", "Jacobi iterations (a barrier after each)"),
    param("layout", "horizontal", "horizontal (row-major) or vertical (each partition's rows contiguous)"),
];

/// Private work, calibrated (numa.tests::calibrate_private_work) from Table 5's None row,
/// 512-byte column (n 512, 16 processors, 10 iterations, 129.7 s; shared references
/// alone gave 36.9 s): 113.2 us after each reference (every operation is one
/// reference). The other columns are predictions: 1K(H) is then 273.0 s, 2.10 times
/// 1K(V)'s 129.7 (paper 346.2 and 144.6, 2.39; shared references alone 4.88).
pub(super) const PRIVATE: PrivateWork = PrivateWork { first_ns: 113_225.0, repeat_ns: 0.0 };

pub(super) fn open(p: &Params, _seed: u64) -> Result<NumaWorkload> {
    let side = grid_side(p)?;
    let n = p.count("n", 1, MAX_SIDE)?;
    if n < side {
        return Err(p.error(format!(
            "parameter 'n': expected at least sqrt(procs) = {side} (one row and column per partition), got {n}"
        )));
    }
    let iterations = p.count("iterations", 1, u32::MAX as u64)? as u32;
    let vertical = p.choice("layout", &["horizontal", "vertical"])? == "vertical";
    let grid = Grid { n, side, vertical };
    let copy_bytes = 4 * n * n;
    let mut streams: Vec<ProcStream> = Vec::with_capacity((side * side) as usize);
    for pr in 0..side {
        for pc in 0..side {
            let (r0, r1) = (block_start(pr, n, side), block_start(pr + 1, n, side));
            let (c0, c1) = (block_start(pc, n, side), block_start(pc + 1, n, side));
            streams.push(Box::new(JacobiStream {
                grid,
                copy_bytes,
                r0,
                r1,
                c0,
                c1,
                own_base: grid.partition_base(r0, r1, c0),
                iterations,
                iter: 0,
                r: r0,
                c: c0,
                phase: 0,
            }));
        }
    }
    let bytes = 2 * copy_bytes;
    Ok(NumaWorkload {
        name: "jacobi-numa".into(),
        bytes,
        streams,
        home: Box::new(move |addr| {
            let (r, c) = grid.point(addr.min(bytes - 1) % copy_bytes);
            grid.owner(r, c)
        }),
        private: PRIVATE,
    })
}

struct JacobiStream {
    grid: Grid,
    copy_bytes: u64,
    /// The partition: rows r0..r1, columns c0..c1.
    r0: u64,
    r1: u64,
    c0: u64,
    c1: u64,
    /// Its offset in a copy under the vertical layout.
    own_base: u64,
    iterations: u32,
    iter: u32,
    /// The point being updated and the next of its steps: 0 up, 1 down, 2 left, 3 right
    /// (reads of the old copy), 4 the write of the new copy.
    r: u64,
    c: u64,
    phase: u8,
}

impl JacobiStream {
    /// Byte offset within a copy of (r, c), fast for the processor's own partition.
    fn offset(&self, r: u64, c: u64) -> u64 {
        if self.grid.vertical && r >= self.r0 && r < self.r1 && c >= self.c0 && c < self.c1 {
            self.own_base + 4 * ((r - self.r0) * (self.c1 - self.c0) + (c - self.c0))
        } else {
            self.grid.offset(r, c)
        }
    }

    fn read(&self, r: u64, c: u64) -> Option<Op> {
        let old = if self.iter.is_multiple_of(2) { 0 } else { self.copy_bytes };
        Some(Op::Ref { addr: old + self.offset(r, c), count: 1 })
    }
}

impl Iterator for JacobiStream {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        let n = self.grid.n;
        loop {
            if self.iter >= self.iterations {
                return None;
            }
            if self.r == self.r1 {
                // Partition done: wait for the others; the copies swap roles.
                self.iter += 1;
                self.r = self.r0;
                self.c = self.c0;
                self.phase = 0;
                return Some(Op::Barrier);
            }
            let (r, c) = (self.r, self.c);
            let phase = self.phase;
            self.phase += 1;
            match phase {
                0 if r > 0 => return self.read(r - 1, c),
                1 if r + 1 < n => return self.read(r + 1, c),
                2 if c > 0 => return self.read(r, c - 1),
                3 if c + 1 < n => return self.read(r, c + 1),
                4 => {
                    let new = if self.iter.is_multiple_of(2) { self.copy_bytes } else { 0 };
                    let addr = new + self.offset(r, c);
                    self.phase = 0;
                    self.c += 1;
                    if self.c == self.c1 {
                        self.c = self.c0;
                        self.r += 1;
                    }
                    return Some(Op::Ref { addr, count: 1 });
                }
                _ => {} // a neighbour outside the grid
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open, round_robin};
    use crate::numa::stream::Op;
    use std::collections::BTreeSet;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// References one processor makes per iteration: a write per point plus its
    /// neighbours inside the grid.
    fn refs_per_iteration(n: u64, r0: u64, r1: u64, c0: u64, c1: u64) -> u64 {
        let (h, w) = (r1 - r0, c1 - c0);
        let mut reads = 4 * h * w;
        reads -= if r0 == 0 { w } else { 0 } + if r1 == n { w } else { 0 };
        reads -= if c0 == 0 { h } else { 0 } + if c1 == n { h } else { 0 };
        h * w + reads
    }

    #[test]
    fn operation_counts_at_defaults() {
        for layout in ["horizontal", "vertical"] {
            let mut w = open("jacobi-numa", &kv(&[("layout", layout)]), 1).unwrap();
            assert_eq!(w.bytes, 2 << 20);
            assert_eq!(w.streams.len(), 16);
            for (p, s) in w.streams.iter_mut().enumerate() {
                let (pr, pc) = (p as u64 / 4, p as u64 % 4);
                let (mut refs, mut barriers) = (0u64, 0u64);
                for op in s {
                    match op {
                        Op::Ref { count, .. } => refs += count as u64,
                        Op::Barrier => barriers += 1,
                    }
                }
                assert_eq!(barriers, 10, "processor {p}");
                let expected = refs_per_iteration(512, 128 * pr, 128 * pr + 128, 128 * pc, 128 * pc + 128);
                assert_eq!(refs, 10 * expected, "processor {p}");
            }
        }
        // Whole grid: n^2 writes + 4n(n-1) neighbour reads per iteration.
        let total: u64 = (0..16u64)
            .map(|p| refs_per_iteration(512, 128 * (p / 4), 128 * (p / 4) + 128, 128 * (p % 4), 128 * (p % 4) + 128))
            .sum();
        assert_eq!(total, 5 * 512 * 512 - 4 * 512);
    }

    /// Every point of the new copy written once per iteration by its owner, every point of
    /// the old copy read once per grid neighbour, barriers = iterations; for uneven
    /// partitions too.
    #[test]
    fn every_point_written_once_per_iteration() {
        for layout in ["horizontal", "vertical"] {
            for (procs, n) in [(9u64, 10u64), (16, 512), (4, 7), (1, 3)] {
                let iterations = 3u32;
                let params = kv(&[
                    ("procs", &procs.to_string()),
                    ("n", &n.to_string()),
                    ("iterations", &iterations.to_string()),
                    ("layout", layout),
                ]);
                let mut w = open("jacobi-numa", &params, 1).unwrap();
                let copy = 4 * n * n;
                assert_eq!(w.bytes, 2 * copy);
                // Writes and reads per address, for the iteration each processor is in.
                let mut iter = vec![0usize; procs as usize];
                let mut writes = vec![vec![0u32; (n * n) as usize]; iterations as usize];
                let mut reads = vec![vec![0u32; (n * n) as usize]; iterations as usize];
                let home = &w.home;
                round_robin(&mut w.streams, |p, op| match op {
                    Op::Barrier => iter[p] += 1,
                    Op::Ref { addr, count } => {
                        assert_eq!(count, 1);
                        let t = iter[p];
                        let new = if t.is_multiple_of(2) { copy } else { 0 };
                        let q = ((addr % copy) / 4) as usize;
                        if addr / copy == new / copy {
                            assert_eq!(home(addr) as usize, p, "a processor writes its own partition");
                            writes[t][q] += 1;
                        } else {
                            reads[t][q] += 1;
                        }
                    }
                });
                assert!(iter.iter().all(|&b| b == iterations as usize), "one barrier per iteration");
                // In the row-major layout address q is point (q / n, q % n); check reads
                // against the neighbour count there, and in both layouts that every
                // address of the new copy is written once (the layout is a bijection).
                for t in 0..iterations as usize {
                    assert!(writes[t].iter().all(|&x| x == 1), "{layout} procs {procs} n {n}");
                    let total_reads: u64 = reads[t].iter().map(|&x| x as u64).sum();
                    assert_eq!(total_reads, 4 * n * (n - 1));
                    if layout == "horizontal" {
                        for (q, &x) in reads[t].iter().enumerate() {
                            let (r, c) = (q as u64 / n, q as u64 % n);
                            let degree = u32::from(r > 0) + u32::from(r + 1 < n) + u32::from(c > 0) + u32::from(c + 1 < n);
                            assert_eq!(x, degree, "point ({r}, {c})");
                        }
                    }
                }
            }
        }
    }

    fn nodes_of_page(home: &dyn Fn(u64) -> u16, start: u64, size: u64) -> BTreeSet<u16> {
        (start..start + size).step_by(4).map(home).collect()
    }

    #[test]
    fn vertical_pages_stay_in_one_partition_horizontal_ones_span_four() {
        let v = open("jacobi-numa", &kv(&[("layout", "vertical")]), 1).unwrap();
        let h = open("jacobi-numa", &kv(&[("layout", "horizontal")]), 1).unwrap();
        for page in 0..(2u64 << 20) / 2048 {
            assert_eq!(nodes_of_page(&*v.home, page * 2048, 2048).len(), 1, "vertical page {page}");
            assert_eq!(nodes_of_page(&*h.home, page * 2048, 2048).len(), 4, "horizontal page {page}");
        }
        for page in 0..(2u64 << 20) / 512 {
            assert_eq!(nodes_of_page(&*v.home, page * 512, 512).len(), 1);
            assert_eq!(nodes_of_page(&*h.home, page * 512, 512).len(), 1);
        }
        // Vertical: partition p of copy A fills bytes [p * 64 KiB, (p+1) * 64 KiB), and
        // copy B repeats it.
        for p in 0..16u64 {
            assert_eq!((v.home)(p * 65536), p as u16);
            assert_eq!((v.home)((1 << 20) + p * 65536 + 65535), p as u16);
        }
        // Horizontal: a 2 KiB page is one grid row, over the four partitions of its
        // partition row.
        assert_eq!(nodes_of_page(&*h.home, 130 * 2048, 2048), [4, 5, 6, 7].into());
    }

    #[test]
    fn first_operations_of_a_corner_processor() {
        let mut w = open("jacobi-numa", &kv(&[("procs", "4"), ("n", "4"), ("iterations", "2")]), 1).unwrap();
        let ops: Vec<Op> = w.streams[0].by_ref().collect();
        let r = |addr: u64| Op::Ref { addr, count: 1 };
        // Point (0, 0): down (1, 0), right (0, 1) in copy A, write (0, 0) in copy B.
        assert_eq!(&ops[..3], &[r(16), r(4), r(64)]);
        // Point (0, 1): down, left, right, write.
        assert_eq!(&ops[3..7], &[r(20), r(0), r(8), r(64 + 4)]);
        // 4 points with 2 + 3 + 3 + 4 reads: 16 refs, barrier, then copies swapped.
        assert_eq!(ops[16], Op::Barrier);
        assert_eq!(ops[17], r(64 + 16));
        assert_eq!(ops[19], r(0));
        assert_eq!(ops.len(), 34);
        assert_eq!(ops[33], Op::Barrier);
    }
}
