//! A parallel job's data split over the nodes (gang-adaptive-paging.txt section 4.2:
//! the parallel NPB runs solve one problem on 2 or 4 machines, so that each machine
//! holds a part of it, and CG on 4 machines "its memory size and working set size
//! reduce to such an extent that ... paging does not occur").
//!
//! Every node of a job runs the job's serial reference stream, filtered to what that
//! node does (owner computes):
//! - the pages are split in first-touch order (the source's dense ids): node k owns the
//!   k-th share of them, as a block decomposition of the first sweep over the data
//!   (shares from `gang.node_shares`, equal by default);
//! - a node keeps every reference to a page it owns, and a reference to another node's
//!   page when it is next to one of its own in the serial stream: the values its work
//!   reads from or writes to beside its own (a stencil's boundary, LU's pivot row, CG's
//!   vector). It holds a copy of those pages (a ghost copy: a page of its own memory)
//!   and receives them at the barrier that ends the superstep, once per superstep
//!   however often it uses them;
//! - barriers fall where the serial stream crosses a multiple of the job's
//!   `superstep_refs`, so that every node has the same barriers whatever its share.
//!
//! Decision left open by the paper: "next to" is the record just before or just after
//! in the serial stream (within a batch of records).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::trace::{RefBatch, RefSource, SourceMeta};
use crate::Result;

/// The barriers a node's filtered stream has passed, as the process will reach them.
#[derive(Debug, Default)]
pub struct PartitionMarks {
    /// (the node's references before the barrier, pages it receives at it), in order.
    pub marks: VecDeque<(u64, u64)>,
    /// Pages it receives at the barrier that ends the job (the last superstep's).
    pub tail_exchange: u64,
    /// Pages of other nodes referenced, in all (the node's ghost copies, counted once each).
    pub ghost_pages: u64,
}

/// Node `node`'s part of one process's serial stream.
pub struct PartitionSource {
    inner: Box<dyn RefSource>,
    /// Dense ids below bounds[k] (and at or above bounds[k - 1]) belong to node k.
    lo: u64,
    hi: u64,
    superstep_refs: u64,
    meta: SourceMeta,
    buf: RefBatch,
    /// References of the serial stream so far, and where the next barrier falls.
    serial: u64,
    next_barrier: u64,
    /// References the node kept so far.
    local: u64,
    /// Superstep (from 1) in which each foreign page was last counted as received.
    received: Vec<u32>,
    /// Foreign pages seen at all (ghost copies), and how many.
    ghost: Vec<bool>,
    ghosts: u64,
    step: u32,
    exchange: u64,
    /// The previous record of the serial stream was the node's own.
    prev_own: bool,
    marks: Arc<Mutex<PartitionMarks>>,
}

impl PartitionSource {
    /// Node `node` of shares `shares` (cumulative bounds computed here) of a stream
    /// touching `total_pages` distinct pages; barriers every `superstep_refs` serial
    /// references (u64::MAX: none but the last).
    pub fn new(inner: Box<dyn RefSource>, node: usize, shares: &[f64], total_pages: u64, superstep_refs: u64, marks: Arc<Mutex<PartitionMarks>>) -> PartitionSource {
        let sum: f64 = shares.iter().sum();
        let bound = |k: usize| -> u64 { (total_pages as f64 * shares[..k].iter().sum::<f64>() / sum).round() as u64 };
        let (lo, hi) = (bound(node), if node + 1 == shares.len() { u64::MAX } else { bound(node + 1) });
        let mut meta = inner.meta().clone();
        meta.records = None;
        PartitionSource {
            inner,
            lo,
            hi,
            superstep_refs,
            meta,
            buf: RefBatch::default(),
            serial: 0,
            next_barrier: superstep_refs,
            local: 0,
            received: Vec::new(),
            ghost: Vec::new(),
            ghosts: 0,
            step: 1,
            exchange: 0,
            prev_own: false,
            marks,
        }
    }

    fn own(&self, id: u32) -> bool {
        (id as u64) >= self.lo && (id as u64) < self.hi
    }
}

impl RefSource for PartitionSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        let mut marks = Vec::new();
        // a batch of the serial stream may keep nothing for this node: read on
        while batch.is_empty() {
            let n = self.inner.next_batch(&mut self.buf)?;
            if n == 0 {
                break;
            }
            for i in 0..n {
                if self.serial >= self.next_barrier {
                    marks.push((self.local, self.exchange));
                    self.exchange = 0;
                    self.step += 1;
                    while self.next_barrier <= self.serial {
                        self.next_barrier = self.next_barrier.saturating_add(self.superstep_refs);
                    }
                }
                let id = self.buf.id[i];
                let own = self.own(id);
                let next_own = i + 1 < n && self.own(self.buf.id[i + 1]);
                let keep = own || self.prev_own || next_own;
                self.prev_own = own;
                self.serial += self.buf.repeat[i] as u64;
                if !keep {
                    continue;
                }
                if !own {
                    let d = id as usize;
                    if d >= self.received.len() {
                        self.received.resize(d + 1, 0);
                        self.ghost.resize(d + 1, false);
                    }
                    if self.received[d] != self.step {
                        self.received[d] = self.step;
                        self.exchange += 1;
                    }
                    if !self.ghost[d] {
                        self.ghost[d] = true;
                        self.ghosts += 1;
                    }
                }
                self.local += self.buf.repeat[i] as u64;
                batch.push(id, &self.buf.get(i));
            }
        }
        let mut m = self.marks.lock().expect("partition marks");
        m.marks.extend(marks);
        m.tail_exchange = self.exchange;
        m.ghost_pages = self.ghosts;
        Ok(batch.len())
    }

    fn distinct_pages(&self) -> u32 {
        self.inner.distinct_pages()
    }
}
