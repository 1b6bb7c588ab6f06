//! "vecmat": the synthetic vector x matrix workload of numa-page-migration.txt sections
//! 4.2 and 5.1.
//!
//! An n x n matrix of 4-byte floats, row-major (row i at byte i * 4n, so with n a power
//! of two and pages of at most 4n bytes every row starts a page and is a whole number of
//! pages, as in the paper; default n = 512: 2 KiB rows, a 1 MiB address space). The rows
//! are split into procs/2 contiguous blocks (as equal as possible); block k belongs to
//! processors 2k (starting at the block's first row, moving down) and 2k+1 (starting at
//! its last row, moving up). Each takes its next row from a shared cursor of the block
//! when it starts that row, so the pair meets wherever their speeds make it meet.
//!
//! Placement: the first half of a block's rows (the extra row of an odd-sized block
//! included) on node 2k, the second half on node 2k+1. Sparsity: in the first half only
//! the odd-indexed entries are non-zero; the second half is full (75% non-zero overall).
//! Each non-zero entry is one `Op::Ref { count: repeat }` (the paper's repeat references:
//! 1, 10, 20); zero entries are skipped (not referenced).
//!
//! Simplified: the vector, the result and the indices are private (local) and not
//! referenced; the matrix initialisation is not part of the stream (the paper times only
//! the multiplication); there are no barriers and no daemons here (the machine has them).

use std::sync::Arc;

use super::{pairs, param, row_home, PairCursor, RowBlock, MAX_SIDE};
use crate::numa::stream::{PrivateWork, NumaWorkload, Op, ProcStream};
use crate::workload::params::Params;
use crate::workload::ParamInfo;
use crate::Result;

pub(super) const SUMMARY: &str =
    "vector x matrix (sections 4.2, 5.1): processor pairs take rows from both ends of a block; even half sparse";

pub(super) const PARAMS: &[ParamInfo] = &[
    param("procs", "16", "number of processors (even: pairs share a row block)"),
    param("n", "512", "matrix side: n x n 4-byte floats, rows of 4n bytes"),
    param("repeat", "1", "references to each non-zero entry (paper: 1, 10, 20)"),
];

/// Private work, calibrated (numa.tests::calibrate_private_work) from Table 1's None row
/// at the paper's size (n 512, 16 processors, 1 KiB pages, software preset, memory
/// contention on): 6.2 s at 1K(1) and 12.6 s at 1K(10), two equations for two
/// unknowns: 434.9 us after each entry's first reference (the vector element, the
/// product, the sum, the loop: a processor's local code and data) and 0.42 us after each
/// repeat. Shared references alone gave 0.68 s and 6.76 s.
pub(super) const PRIVATE: PrivateWork = PrivateWork { first_ns: 434_890.0, repeat_ns: 423.0 };

pub(super) fn open(p: &Params, _seed: u64) -> Result<NumaWorkload> {
    let blocks = pairs(p)?;
    let n = p.count("n", 1, MAX_SIDE)?;
    if n < blocks {
        return Err(p.error(format!(
            "parameter 'n': expected at least procs/2 = {blocks} rows (one per processor pair), got {n}"
        )));
    }
    let repeat = p.count("repeat", 1, u32::MAX as u64)? as u32;
    let row_bytes = 4 * n;
    let mut streams: Vec<ProcStream> = Vec::with_capacity(2 * blocks as usize);
    for k in 0..blocks {
        let block = RowBlock::new(k, n, blocks);
        let cursor = Arc::new(PairCursor::new(block.first, block.end));
        for from_top in [true, false] {
            streams.push(Box::new(VecmatStream {
                cursor: cursor.clone(),
                from_top,
                sparse_end: block.mid,
                n: n as u32,
                row_base: 0,
                col: n as u32,
                step: 1,
                repeat,
            }));
        }
    }
    Ok(NumaWorkload {
        name: "vecmat".into(),
        bytes: n * row_bytes,
        streams,
        home: Box::new(move |addr| row_home((addr / row_bytes).min(n - 1), n, blocks)),
        private: PRIVATE,
    })
}

/// Non-zero entries of the whole matrix: n per full row, n/2 per sparse row.
#[cfg(test)]
pub(super) fn nonzeros(n: u64, blocks: u64) -> u64 {
    (0..blocks)
        .map(|k| {
            let b = RowBlock::new(k, n, blocks);
            (b.mid - b.first) as u64 * (n / 2) + (b.end - b.mid) as u64 * n
        })
        .sum()
}

struct VecmatStream {
    cursor: Arc<PairCursor>,
    from_top: bool,
    /// Rows of the block below this one are in the sparse (even) half.
    sparse_end: u32,
    n: u32,
    /// Byte address of the current row.
    row_base: u64,
    /// Next column of the current row (>= n: row finished).
    col: u32,
    /// 2 in sparse rows (odd columns only), 1 in full rows.
    step: u32,
    repeat: u32,
}

impl Iterator for VecmatStream {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        loop {
            if self.col < self.n {
                let addr = self.row_base + 4 * self.col as u64;
                self.col += self.step;
                return Some(Op::Ref { addr, count: self.repeat });
            }
            // Start the next row: claim it now, in simulated time.
            let row = self.cursor.take(self.from_top)?;
            self.row_base = row as u64 * 4 * self.n as u64;
            if row < self.sparse_end {
                self.col = 1;
                self.step = 2;
            } else {
                self.col = 0;
                self.step = 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open, round_robin};
    use super::nonzeros;
    use crate::numa::stream::Op;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Rows taken by each processor (in order) and the total references, draining
    /// round-robin; checks that a row's references all come from one processor, in one
    /// run, and that it has the row's number of non-zero entries.
    fn drain(params: &[(&str, &str)]) -> (Vec<Vec<u64>>, u64, u64) {
        let mut w = open("vecmat", &kv(params), 1).unwrap();
        let procs = w.streams.len();
        let n = params.iter().find(|(k, _)| *k == "n").map_or(512, |(_, v)| v.parse().unwrap());
        let row_bytes = 4 * n;
        assert_eq!(w.bytes, n * row_bytes);
        let mut rows: Vec<Vec<u64>> = vec![Vec::new(); procs];
        let mut ops_in_row = vec![0u64; n as usize];
        let mut refs = 0u64;
        round_robin(&mut w.streams, |p, op| {
            let Op::Ref { addr, count } = op else { panic!("vecmat has no barriers") };
            assert!(addr < w.bytes && addr % 4 == 0);
            refs += count as u64;
            let row = addr / row_bytes;
            if rows[p].last() != Some(&row) {
                rows[p].push(row);
            }
            ops_in_row[row as usize] += 1;
        });
        // Every row exactly once, by one processor (a row with no non-zero entry, the
        // sparse row of n = 1, leaves no trace).
        let mut seen = vec![0u32; n as usize];
        for r in rows.iter().flatten() {
            seen[*r as usize] += 1;
        }
        for (row, &ops) in ops_in_row.iter().enumerate() {
            let sparse = (w.home)(row as u64 * row_bytes).is_multiple_of(2);
            let expected = if sparse { n / 2 } else { n };
            assert_eq!(ops, expected, "row {row}");
            assert_eq!(seen[row], u32::from(expected > 0), "row {row} processed exactly once");
        }
        (rows, refs, n)
    }

    #[test]
    fn references_are_repeat_times_nonzeros() {
        for (procs, n, repeat) in [("16", "512", "1"), ("16", "512", "10"), ("4", "37", "3"), ("6", "7", "2"), ("2", "1", "5")] {
            let (_, refs, n) = drain(&[("procs", procs), ("n", n), ("repeat", repeat)]);
            let blocks = procs.parse::<u64>().unwrap() / 2;
            let repeat: u64 = repeat.parse().unwrap();
            assert_eq!(refs, repeat * nonzeros(n, blocks), "procs {procs} n {n}");
        }
        // Defaults: 8 blocks of 64 rows, 32 sparse (256 entries) + 32 full (512 entries).
        assert_eq!(nonzeros(512, 8), 8 * (32 * 256 + 32 * 512));
        assert_eq!(nonzeros(512, 8), 512 * 512 * 3 / 4);
    }

    #[test]
    fn pairs_meet_and_the_even_processor_crosses_the_middle() {
        let (rows, _, _) = drain(&[]);
        for k in 0..8u64 {
            let (even, odd) = (&rows[2 * k as usize], &rows[2 * k as usize + 1]);
            let first = 64 * k;
            // Even moves down from the first row, odd up from the last; together they
            // cover the block with no gap: they meet.
            let down: Vec<u64> = (first..first + even.len() as u64).collect();
            let up: Vec<u64> = (first + even.len() as u64..first + 64).rev().collect();
            assert_eq!(even, &down);
            assert_eq!(odd, &up);
            // Round-robin: the even processor does its 32 sparse rows (256 ops each) while
            // the odd one does 16 full rows (512 ops); the 16 rows left are shared.
            assert_eq!(even.len(), 40, "block {k}");
            assert_eq!(odd.len(), 24, "block {k}");
        }
    }

    #[test]
    fn even_processor_drained_alone_takes_the_whole_block() {
        let mut w = open("vecmat", &kv(&[("procs", "4"), ("n", "64"), ("repeat", "10")]), 1).unwrap();
        let row_bytes = 256;
        let even_rows: std::collections::BTreeSet<u64> = w.streams[0]
            .by_ref()
            .map(|op| match op {
                Op::Ref { addr, count } => {
                    assert_eq!(count, 10);
                    addr / row_bytes
                }
                Op::Barrier => panic!("no barriers"),
            })
            .collect();
        assert_eq!(even_rows, (0..32).collect());
        assert_eq!(w.streams[1].next(), None, "the odd processor finds its block done");
        // Half way through processor 3's block: processor 2 takes its half and part of
        // the odd half while 3 does a few rows.
        let mut taken2 = std::collections::BTreeSet::new();
        let mut taken3 = std::collections::BTreeSet::new();
        for _ in 0..4 * 64 {
            if let Some(Op::Ref { addr, .. }) = w.streams[3].next() {
                taken3.insert(addr / row_bytes);
            }
        }
        for op in w.streams[2].by_ref() {
            if let Op::Ref { addr, .. } = op {
                taken2.insert(addr / row_bytes);
            }
        }
        for op in w.streams[3].by_ref() {
            if let Op::Ref { addr, .. } = op {
                taken3.insert(addr / row_bytes);
            }
        }
        // 4 full rows by processor 3 (the 4th is claimed and finished at op 256), then
        // processor 2 takes everything else: its 16 sparse rows and 12 full ones.
        assert_eq!(taken3, (60..64).collect());
        assert_eq!(taken2, (32..60).collect());
    }

    #[test]
    fn placement_splits_each_block_in_halves() {
        let w = open("vecmat", &[], 1).unwrap();
        assert_eq!(w.bytes, 1 << 20);
        assert_eq!(w.streams.len(), 16);
        for row in 0..512u64 {
            let node = (w.home)(row * 2048);
            let (k, local) = (row / 64, row % 64);
            assert_eq!(node as u64, 2 * k + u64::from(local >= 32), "row {row}");
            assert_eq!((w.home)(row * 2048 + 2047), node);
        }
    }
}
