//! A parallel job's data split over the nodes (gang-adaptive-paging.txt section 4.2:
//! the parallel NPB runs solve one problem on 2 or 4 machines, so that each machine
//! holds a part of it, and CG on 4 machines "its memory size and working set size
//! reduce to such an extent that ... paging does not occur").
//!
//! Every node of a job runs the job's serial reference stream, filtered to what that
//! node does:
//! - the pages are split in first-touch order (the source's dense ids): node k owns the
//!   k-th share of them, as a block decomposition of the first sweep over the data
//!   (shares from `gang.node_shares`, equal by default);
//! - barriers fall where the serial stream crosses a multiple of the job's
//!   `superstep_refs`, so that every node has the same barriers whatever its share;
//! - a node holds a copy of every page of another node it references (a ghost copy: a
//!   page of its own memory) and receives it at the barrier that ends each superstep in
//!   which it used it, once per superstep however often it used it.
//!
//! Which references a node keeps is the split's rule ([`SplitRule`]).
//!
//! [`SplitRule::Owner`] (`gang.partition = "split"`), owner computes: every reference is
//! done by exactly one node, the one that owns its page, except references to *shared*
//! pages. A shared page is one that the work on every part of the data reads: the
//! vector CG's matrix multiplies (each row gathers from all of it), IS's busy buckets
//! (each key, wherever it lies, increments one). The parallel codes replicate such data
//! on every node and combine it between supersteps (CG's exchange of the vector, IS's of
//! the bucket counts), so a reference to a shared page is done by the node whose work it
//! sits in (the owner of the last unshared page referenced before it), on its own copy.
//! A page is shared when its records outnumber `gang.shared_ratio` ([`HOT_RATIO`] by
//! default) times the mean over the job's pages: a counting pass over the serial stream, once per job ([`HotPages`]). So
//! a node's footprint is at most its share plus the shared pages, the references of the
//! job are done once in all, and what a node receives at barriers is the shared pages
//! its work used.
//!
//! [`SplitRule::Neighbours`] (`gang.partition = "split_neighbours"`, the rule of issue
//! 16): a node keeps every reference to a page it owns, and a reference to another
//! node's page when it is next to one of its own in the serial stream (the record just
//! before or just after, within a batch of records), the values its work reads or
//! writes beside its own. It fails on pages that are next to everything: CG's vector
//! lies between every two matrix records, so the node owning the vector keeps nearly
//! every matrix record too, and CG's and IS's largest node holds nearly the whole instance on 2 and
//! 4 nodes; and a reference next to records of two nodes is done by both.
//!
//! Decisions left open by the paper: the decomposition (first-touch blocks); what is
//! shared (four times the mean number of records: at most a quarter of the pages can
//! be, as the records average to the mean); a shared reference goes with the work
//! before it (the work that computed the index it uses: CG's column, IS's key). Under
//! owner computes the reads of a neighbour's boundary (a stencil's halo) are done by
//! the neighbour, and exchange nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::serial_tee::{SerialTee, TeeBatch};
use crate::trace::{AccessKind, RefBatch, RefSource, SourceMeta};
use crate::Result;

/// The default of `gang.shared_ratio`: a page is shared (hot) when its records outnumber
/// this many times the mean over the job's pages. At the gang experiment's full sizes CG's gathered vectors have 4.96
/// times the mean records and IS's central buckets up to 13.5 times; the busiest pages
/// of LU, SP and MG 2.65, 3.55 and 2.25 times (docs/kernel-model-findings.md, gang). As
/// the records average to the mean, at most a quarter of the pages can be shared. A
/// misjudged page pulls no other: unshared, its references are its owner's; shared, it
/// adds itself to the footprint of the nodes that use it.
pub const HOT_RATIO: f64 = 4.0;

/// Which references of the serial stream a node keeps (`gang.partition`; see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitRule {
    /// Owner computes, shared pages replicated (`"split"`).
    Owner,
    /// Own pages and the records next to them (`"split_neighbours"`, issue 16).
    Neighbours,
}

/// The shared pages of a job: a bit per dense id of its serial stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HotPages {
    bits: Vec<u64>,
    /// How many pages are shared.
    pub count: u64,
}

impl HotPages {
    /// Counts the records of each page over the whole stream (one pass, a counter per
    /// page) and marks those with more than `ratio` ([`HOT_RATIO`] by default) times the
    /// mean. Free records are events, not references: not counted.
    pub fn count(source: &mut dyn RefSource, ratio: f64) -> Result<HotPages> {
        let mut records: Vec<u32> = Vec::new();
        let mut total = 0u64;
        let mut batch = RefBatch::default();
        while source.next_batch(&mut batch)? > 0 {
            for (&id, &kind) in batch.id.iter().zip(&batch.kind) {
                if kind == AccessKind::Free {
                    continue;
                }
                let d = id as usize;
                if d >= records.len() {
                    records.resize(d + 1, 0);
                }
                records[d] = records[d].saturating_add(1);
                total += 1;
            }
        }
        let pages = source.distinct_pages().max(1) as f64;
        let limit = ratio * total as f64 / pages;
        let mut hot = HotPages { bits: vec![0; records.len().div_ceil(64)], count: 0 };
        for (d, &r) in records.iter().enumerate() {
            if r as f64 > limit {
                hot.bits[d / 64] |= 1 << (d % 64);
                hot.count += 1;
            }
        }
        Ok(hot)
    }

    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.bits.get(id as usize / 64).is_some_and(|w| w >> (id % 64) & 1 != 0)
    }
}

/// What a node's process needs to filter its job's serial stream.
#[derive(Debug, Clone)]
pub struct PartitionPlan {
    pub node: usize,
    /// Every node's share of the data (normalised here).
    pub shares: Vec<f64>,
    /// Distinct pages of the serial stream.
    pub total_pages: u64,
    pub rule: SplitRule,
    /// The job's shared pages (the owner rule on more than one node); None: none.
    pub hot: Option<Arc<HotPages>>,
    /// The job's serial stream, read once for all its nodes (serial_tee.rs); None: the
    /// node opens its own.
    pub serial: Option<Arc<SerialTee>>,
}

/// The first dense id of each node's share (and u64::MAX after the last): node k owns
/// ids `b[k]..b[k + 1]`.
fn share_bounds(shares: &[f64], total_pages: u64) -> Vec<u64> {
    let sum: f64 = shares.iter().sum();
    let mut b: Vec<u64> = (0..shares.len()).map(|k| (total_pages as f64 * shares[..k].iter().sum::<f64>() / sum).round() as u64).collect();
    b.push(u64::MAX);
    b
}

/// A label of [`owner_labeler`]: a free record, which each node judges by itself (it
/// frees a page it owns or holds a copy of).
pub const FREE_LABEL: u16 = u16::MAX;

/// The owner rule worked out once per record for every node of a job (read through a
/// serial tee): the node that does each record. The same as each node's
/// [`PartitionSource::owner_keeps`], which it replaces there.
pub fn owner_labeler(shares: &[f64], total_pages: u64, hot: Option<Arc<HotPages>>) -> super::serial_tee::Labeler {
    let bounds = share_bounds(shares, total_pages);
    let mut work: Option<u16> = None;
    Box::new(move |b: &RefBatch, out: &mut Vec<u16>| {
        out.reserve(b.len());
        for (&id, &kind) in b.id.iter().zip(&b.kind) {
            if kind == AccessKind::Free {
                out.push(FREE_LABEL);
                continue;
            }
            let owner = (bounds.partition_point(|&lo| lo <= id as u64) - 1) as u16;
            if hot.as_ref().is_some_and(|h| h.contains(id)) {
                out.push(work.unwrap_or(owner));
            } else {
                work = Some(owner);
                out.push(owner);
            }
        }
    })
}

/// Where a node's copy of the serial stream comes from.
enum Serial {
    Own(Box<dyn RefSource>, RefBatch),
    /// The job's tee, this node's reader index, and the distinct pages after the last batch.
    Shared(Arc<SerialTee>, usize, u32),
}

/// A batch of the serial stream: the node's own buffer (given back after use) or the
/// tee's shared one, with its owner labels.
enum SerialBatch {
    Own(RefBatch),
    Shared(Arc<TeeBatch>),
}

impl SerialBatch {
    /// The records' owner labels ([`owner_labeler`]), when the tee worked them out.
    fn labels(&self) -> &[u16] {
        match self {
            SerialBatch::Own(_) => &[],
            SerialBatch::Shared(t) => &t.labels,
        }
    }
}

impl std::ops::Deref for SerialBatch {
    type Target = RefBatch;
    fn deref(&self) -> &RefBatch {
        match self {
            SerialBatch::Own(b) => b,
            SerialBatch::Shared(t) => &t.batch,
        }
    }
}

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
    serial: Serial,
    node: usize,
    /// Dense ids in lo..hi belong to this node.
    lo: u64,
    hi: u64,
    rule: SplitRule,
    hot: Option<Arc<HotPages>>,
    superstep_refs: u64,
    meta: SourceMeta,
    /// References of the serial stream so far, and where the next barrier falls.
    serial_refs: u64,
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
    /// The neighbours rule: the previous record of the serial stream was the node's own.
    prev_own: bool,
    /// The owner rule: whether the last record of an unshared page was the node's own
    /// (None before the first).
    work_own: Option<bool>,
    marks: Arc<Mutex<PartitionMarks>>,
}

impl PartitionSource {
    /// `plan.node`'s part of the serial stream: the plan's tee, else `open()`'s;
    /// barriers every `superstep_refs` serial references (u64::MAX: none but the last).
    pub fn new(open: impl FnOnce() -> Result<Box<dyn RefSource>>, plan: &PartitionPlan, superstep_refs: u64, marks: Arc<Mutex<PartitionMarks>>) -> Result<PartitionSource> {
        let node = plan.node;
        let bounds = share_bounds(&plan.shares, plan.total_pages);
        let (lo, hi) = (bounds[node], bounds[node + 1]);
        let serial = match &plan.serial {
            Some(tee) => Serial::Shared(tee.clone(), node, 0),
            None => Serial::Own(open()?, RefBatch::default()),
        };
        let mut meta = match &serial {
            Serial::Own(src, _) => src.meta().clone(),
            Serial::Shared(tee, _, _) => tee.meta().clone(),
        };
        meta.records = None;
        Ok(PartitionSource {
            serial,
            node,
            lo,
            hi,
            rule: plan.rule,
            hot: if plan.rule == SplitRule::Owner { plan.hot.clone() } else { None },
            superstep_refs,
            meta,
            serial_refs: 0,
            next_barrier: superstep_refs,
            local: 0,
            received: Vec::new(),
            ghost: Vec::new(),
            ghosts: 0,
            step: 1,
            exchange: 0,
            prev_own: false,
            work_own: None,
            marks,
        })
    }

    /// The next batch of the serial stream; None at its end.
    fn read_serial(&mut self) -> Result<Option<SerialBatch>> {
        match &mut self.serial {
            Serial::Own(src, buf) => {
                if src.next_batch(buf)? == 0 {
                    return Ok(None);
                }
                Ok(Some(SerialBatch::Own(std::mem::take(buf))))
            }
            Serial::Shared(tee, reader, distinct) => Ok(tee.next(*reader)?.map(|t| {
                *distinct = t.distinct;
                SerialBatch::Shared(t)
            })),
        }
    }

    /// Gives the node's own buffer back for the next read.
    fn give_back(&mut self, b: SerialBatch) {
        if let (SerialBatch::Own(b), Serial::Own(_, buf)) = (b, &mut self.serial) {
            *buf = b;
        }
    }

    fn own(&self, id: u32) -> bool {
        (id as u64) >= self.lo && (id as u64) < self.hi
    }

    /// The owner rule: the node keeps a record of its own unshared page; a record of a
    /// shared page when the last unshared record was its own (before any, when the page
    /// is its own); a free of a page it owns or holds a copy of.
    fn owner_keeps(&mut self, id: u32, kind: AccessKind, own: bool) -> bool {
        if kind == AccessKind::Free {
            return own || self.ghost.get(id as usize).copied().unwrap_or(false);
        }
        if self.hot.as_ref().is_some_and(|h| h.contains(id)) {
            return self.work_own.unwrap_or(own);
        }
        self.work_own = Some(own);
        own
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
            let Some(buf) = self.read_serial()? else { break };
            let n = buf.len();
            let labels = buf.labels();
            let node = self.node as u16;
            let mut i = 0;
            while i < n {
                if !labels.is_empty() {
                    // with the tee's owner labels: other nodes' records are skipped in one
                    // tight loop, up to the first record before which a barrier falls (that
                    // one goes the long way below, which puts the barrier's mark)
                    let (mut j, mut run) = (i, 0u64);
                    while j < n && labels[j] != node && labels[j] != FREE_LABEL && self.serial_refs + run < self.next_barrier {
                        run += buf.repeat[j] as u64;
                        j += 1;
                    }
                    if j > i {
                        self.serial_refs += run;
                        i = j;
                        continue;
                    }
                }
                if self.serial_refs >= self.next_barrier {
                    marks.push((self.local, self.exchange));
                    self.exchange = 0;
                    self.step += 1;
                    while self.next_barrier <= self.serial_refs {
                        self.next_barrier = self.next_barrier.saturating_add(self.superstep_refs);
                    }
                }
                let id = buf.id[i];
                let own = self.own(id);
                let kind = buf.kind[i];
                let keep = match self.rule {
                    SplitRule::Owner if !labels.is_empty() => match labels[i] {
                        FREE_LABEL => self.owner_keeps(id, kind, own),
                        label => label == node,
                    },
                    SplitRule::Owner => self.owner_keeps(id, kind, own),
                    SplitRule::Neighbours => {
                        let next_own = i + 1 < n && self.own(buf.id[i + 1]);
                        let keep = own || self.prev_own || next_own;
                        self.prev_own = own;
                        keep
                    }
                };
                self.serial_refs += buf.repeat[i] as u64;
                i += 1;
                if !keep {
                    continue;
                }
                let i = i - 1;
                // a free is not a page received (the neighbours rule counts it, as before)
                if !own && !(self.rule == SplitRule::Owner && kind == AccessKind::Free) {
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
                self.local += buf.repeat[i] as u64;
                batch.push(id, &buf.get(i));
            }
            self.give_back(buf);
        }
        let mut m = self.marks.lock().expect("partition marks");
        m.marks.extend(marks);
        m.tail_exchange = self.exchange;
        m.ghost_pages = self.ghosts;
        Ok(batch.len())
    }

    fn distinct_pages(&self) -> u32 {
        match &self.serial {
            Serial::Own(src, _) => src.distinct_pages(),
            Serial::Shared(_, _, distinct) => *distinct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::open_workload;

    fn open(name: &str, params: &[(&str, &str)]) -> Box<dyn RefSource> {
        let p: Vec<(String, String)> = params.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        open_workload(name, &p, 4096, 0).unwrap()
    }

    /// One node's part of a stream: its distinct pages, references, ghost pages and the
    /// pages it receives at barriers in all.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Part {
        pages: u64,
        refs: u64,
        ghosts: u64,
        received: u64,
    }

    /// Every node's part of the stream `open()` gives, split over `nodes` equal shares
    /// by `rule`, barriers every `superstep` references.
    fn split(open: &dyn Fn() -> Box<dyn RefSource>, nodes: usize, rule: SplitRule, superstep: u64) -> Vec<Part> {
        let mut serial = open();
        let hot = Arc::new(HotPages::count(&mut *serial, HOT_RATIO).unwrap());
        let total_pages = serial.distinct_pages() as u64;
        (0..nodes)
            .map(|node| {
                let plan = PartitionPlan { node, shares: vec![1.0; nodes], total_pages, rule, hot: Some(hot.clone()), serial: None };
                let marks = Arc::new(Mutex::new(PartitionMarks::default()));
                let mut src = PartitionSource::new(|| Ok(open()), &plan, superstep, marks.clone()).unwrap();
                let mut seen = vec![false; total_pages as usize];
                let (mut pages, mut refs) = (0, 0);
                let mut batch = RefBatch::default();
                while src.next_batch(&mut batch).unwrap() > 0 {
                    for (&id, &r) in batch.id.iter().zip(&batch.repeat) {
                        refs += r as u64;
                        if !seen[id as usize] {
                            seen[id as usize] = true;
                            pages += 1;
                        }
                    }
                }
                let m = marks.lock().unwrap();
                let received = m.marks.iter().map(|x| x.1).sum::<u64>() + m.tail_exchange;
                Part { pages, refs, ghosts: m.ghost_pages, received }
            })
            .collect()
    }

    fn from_pages(pages: &[u64]) -> Box<dyn RefSource> {
        Box::new(crate::trace::VecSource::from_pages(pages))
    }

    /// A sparse product in miniature: rows m0..m7 each read twice, the vector page x read
    /// after each (16 of the 32 records: more than four times the mean of 32 / 9). Owner
    /// computes: x is shared, each node reads its rows and the x after them (its copy);
    /// every record is done once. Issue 16's rule: the node owning x keeps every row,
    /// and the x between m3 and m4 is done by both.
    #[test]
    fn a_page_next_to_everything_is_shared_not_a_pull() {
        let rows: Vec<u64> = (0..8u64).flat_map(|r| [10 + r, 99, 10 + r, 99]).collect();
        let open = || from_pages(&rows);
        let hot = HotPages::count(&mut *open(), HOT_RATIO).unwrap();
        // dense ids in first-touch order: m0 = 0, x = 1, m1 = 2, ..., m7 = 8
        assert_eq!(hot.count, 1);
        assert!(hot.contains(1) && !hot.contains(0));
        // x's 16 records are 4.5 times the mean: shared below that ratio, not above
        assert_eq!(HotPages::count(&mut *open(), 4.4).unwrap().count, 1);
        assert_eq!(HotPages::count(&mut *open(), 4.6).unwrap().count, 0);
        // shares of 9 pages: ids 0..5 (m0, x, m1, m2, m3) and 5..9 (m4..m7)
        let owner = split(&open, 2, SplitRule::Owner, u64::MAX);
        assert_eq!(owner.iter().map(|p| (p.pages, p.refs, p.ghosts)).collect::<Vec<_>>(), vec![(5, 16, 0), (5, 16, 1)]);
        let neighbours = split(&open, 2, SplitRule::Neighbours, u64::MAX);
        assert_eq!(neighbours.iter().map(|p| (p.pages, p.refs, p.ghosts)).collect::<Vec<_>>(), vec![(9, 32, 4), (5, 17, 1)]);
    }

    /// Without shared pages owner computes is a partition of the references: each node
    /// does exactly the references to its pages, and one node does the whole stream.
    #[test]
    fn owner_computes_splits_the_references_by_page() {
        let pages: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 97).collect();
        let open = || from_pages(&pages);
        assert_eq!(HotPages::count(&mut *open(), HOT_RATIO).unwrap().count, 0);
        let one = split(&open, 1, SplitRule::Owner, u64::MAX);
        assert_eq!((one[0].pages, one[0].refs, one[0].ghosts), (97, 5000, 0));
        for nodes in [2, 3, 4] {
            let parts = split(&open, nodes, SplitRule::Owner, 100);
            assert_eq!(parts.iter().map(|p| p.refs).sum::<u64>(), 5000);
            assert_eq!(parts.iter().map(|p| p.pages).sum::<u64>(), 97);
            assert!(parts.iter().all(|p| p.ghosts == 0 && p.received == 0), "{parts:?}");
        }
    }

    /// Strong scaling (section 4.2) of the stream `open()` gives, of `total` pages of which
    /// at most `shared` can be shared: on 2 and 4 nodes owner computes gives the largest
    /// node at most its share plus the shared pages, does every reference once and
    /// receives only shared pages (once a superstep, 2 here); issue 16's rule gives one
    /// node nearly the whole instance.
    fn assert_shares_plus_shared(open: &dyn Fn() -> Box<dyn RefSource>, total: u64, shared: u64) {
        let mut serial = open();
        let hot = HotPages::count(&mut *serial, HOT_RATIO).unwrap();
        assert_eq!(serial.distinct_pages() as u64, total);
        assert!(hot.count > 0 && hot.count <= shared, "{} shared", hot.count);
        let refs = split(open, 1, SplitRule::Owner, u64::MAX)[0].refs;
        for nodes in [2u64, 4] {
            let bound = total.div_ceil(nodes) + shared;
            let owner = split(open, nodes as usize, SplitRule::Owner, refs / 2);
            let largest = owner.iter().map(|p| p.pages).max().unwrap();
            assert!(largest <= bound, "{nodes} nodes: {owner:?} above {bound}");
            assert_eq!(owner.iter().map(|p| p.refs).sum::<u64>(), refs);
            assert!(owner.iter().all(|p| p.ghosts <= hot.count && p.received <= 2 * hot.count), "{owner:?}");
            let neighbours = split(open, nodes as usize, SplitRule::Neighbours, refs / 2);
            assert!(neighbours.iter().any(|p| p.pages * 10 >= total * 9), "{nodes} nodes: {neighbours:?}");
        }
    }

    /// Read through a serial tee with the owner labels (how a gang run reads a split
    /// job), every node keeps exactly what it keeps reading the stream on its own: the
    /// same records, barriers and received pages.
    #[test]
    fn the_tee_with_owner_labels_keeps_what_each_node_keeps_alone() {
        let open = || open("npb-is", &[("n_keys", "32768"), ("max_key", "8192"), ("iterations", "3")]);
        let mut serial = open();
        let hot = Arc::new(HotPages::count(&mut *serial, HOT_RATIO).unwrap());
        let total_pages = serial.distinct_pages() as u64;
        assert!(hot.count > 0);
        let read_all = |src: &mut PartitionSource| {
            let mut out = Vec::new();
            let mut b = RefBatch::default();
            while src.next_batch(&mut b).unwrap() > 0 {
                out.push((b.id.clone(), b.kind.clone(), b.repeat.clone()));
            }
            out
        };
        for (nodes, shares) in [(2usize, vec![1.0, 1.0]), (4, vec![1.0, 2.0, 1.0, 3.0])] {
            let plan = |node, serial| PartitionPlan { node, shares: shares.clone(), total_pages, rule: SplitRule::Owner, hot: Some(hot.clone()), serial };
            let labeler = owner_labeler(&shares, total_pages, Some(hot.clone()));
            let tee = SerialTee::new(open(), nodes, Some(labeler));
            let mut teed: Vec<PartitionSource> = (0..nodes)
                .map(|k| PartitionSource::new(|| unreachable!(), &plan(k, Some(tee.clone())), 20_000, Arc::default()).unwrap())
                .collect();
            // interleaved reads, as the gang driver makes them
            let mut got = vec![Vec::new(); nodes];
            let mut b = RefBatch::default();
            let mut live = nodes;
            while live > 0 {
                live = 0;
                for (k, src) in teed.iter_mut().enumerate() {
                    if src.next_batch(&mut b).unwrap() > 0 {
                        got[k].push((b.id.clone(), b.kind.clone(), b.repeat.clone()));
                        live += 1;
                    }
                }
            }
            for k in 0..nodes {
                let marks = Arc::new(Mutex::new(PartitionMarks::default()));
                let mut alone = PartitionSource::new(|| Ok(open()), &plan(k, None), 20_000, marks.clone()).unwrap();
                assert_eq!(got[k].concat_records(), read_all(&mut alone).concat_records(), "node {k} of {nodes}");
                let tm = teed[k].marks.lock().unwrap();
                let am = marks.lock().unwrap();
                assert!(am.marks.len() > 3);
                assert_eq!((&tm.marks, tm.tail_exchange, tm.ghost_pages), (&am.marks, am.tail_exchange, am.ghost_pages));
            }
        }
    }

    /// Batches of records flattened (the tee and a node's own source may cut a node's
    /// kept records into different batches).
    trait Concat {
        fn concat_records(&self) -> Vec<(u32, AccessKind, u32)>;
    }

    impl Concat for Vec<(Vec<u32>, Vec<AccessKind>, Vec<u32>)> {
        fn concat_records(&self) -> Vec<(u32, AccessKind, u32)> {
            self.iter().flat_map(|(i, k, r)| i.iter().zip(k).zip(r).map(|((&i, &k), &r)| (i, k, r))).collect()
        }
    }

    fn pages(bytes: u64) -> u64 {
        bytes.div_ceil(4096)
    }

    /// CG: its pages are the matrix's values and column indices (8 bytes a nonzero
    /// each), the row starts and five vectors of n elements; the matrix gathers from p
    /// and z only, so at most their pages are shared.
    #[test]
    fn cg_splits_into_shares_plus_the_gathered_vectors() {
        let (n, per_row) = (6000u64, 11u64);
        let open = || open("npb-cg", &[("n", "6000"), ("nonzeros_per_row", "11"), ("iterations", "2"), ("cg_iterations", "1")]);
        let vector = pages(8 * n);
        assert_shares_plus_shared(&open, 2 * pages(8 * n * per_row) + pages(8 * (n + 1)) + 5 * vector, 2 * vector);
    }

    /// IS: the keys, the sorted keys and the bucket counts (max_key of them); the counts
    /// are what every key's work increments, so at most their pages are shared. (Under
    /// issue 16's rule every key page lies next to every sorted-key page: the scattered
    /// writes.)
    #[test]
    fn is_splits_into_shares_plus_the_buckets() {
        let (keys, max_key) = (32768u64, 8192u64);
        let open = || open("npb-is", &[("n_keys", "32768"), ("max_key", "8192"), ("iterations", "2")]);
        assert_shares_plus_shared(&open, 2 * pages(8 * keys) + pages(8 * max_key), pages(8 * max_key));
    }

    /// The footprints of the gang experiment's workloads (python/pagelab/experiments/
    /// gang.toml, seed 0, a barrier per iteration) per node, serial and on 2 and 4 nodes,
    /// under both rules: the table in docs/kernel-model-findings.md. QUICK=1: the quick
    /// sizes. `cargo test --release -p pagelab-core split_footprints -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn split_footprints() {
        let quick = std::env::var("QUICK").is_ok();
        let cases: Vec<(&str, &str, Vec<(&str, &str)>, u64)> = if quick {
            vec![
                ("LU", "npb-lu", vec![("n", "16"), ("iterations", "16")], 16),
                ("SP", "npb-sp", vec![("n", "16"), ("iterations", "16")], 16),
                ("CG", "npb-cg", vec![("n", "6000"), ("nonzeros_per_row", "11"), ("iterations", "16"), ("cg_iterations", "1")], 16),
                ("IS", "npb-is", vec![("n_keys", "32768"), ("max_key", "8192"), ("iterations", "16")], 16),
                ("MG", "npb-mg", vec![("n", "32"), ("iterations", "8")], 8),
            ]
        } else {
            vec![
                ("LU", "npb-lu", vec![("n", "33"), ("iterations", "40")], 40),
                ("SP", "npb-sp", vec![("n", "36"), ("iterations", "40")], 40),
                ("CG", "npb-cg", vec![("n", "30000"), ("nonzeros_per_row", "11"), ("iterations", "40"), ("cg_iterations", "1")], 40),
                ("IS", "npb-is", vec![("n_keys", "262144"), ("max_key", "65536"), ("iterations", "40")], 40),
                ("MG", "npb-mg", vec![("n", "64"), ("iterations", "10")], 10),
            ]
        };
        for (name, workload, params, iterations) in cases {
            let opener = || open(workload, &params);
            let mut serial = opener();
            let hot = HotPages::count(&mut *serial, HOT_RATIO).unwrap();
            let pages = serial.distinct_pages() as u64;
            let one = split(&opener, 1, SplitRule::Owner, u64::MAX);
            let refs = one[0].refs;
            let step = (refs / iterations).max(1);
            // the busiest page's records against the mean
            let mut records = vec![0u64; pages as usize];
            let (mut src, mut batch) = (opener(), RefBatch::default());
            while src.next_batch(&mut batch).unwrap() > 0 {
                batch.id.iter().for_each(|&d| records[d as usize] += 1);
            }
            let mean = records.iter().sum::<u64>() as f64 / pages as f64;
            let busiest = *records.iter().max().unwrap() as f64 / mean;
            println!("{name}: {pages} pages, {refs} references, {} shared, busiest page {busiest:.2} x the mean", hot.count);
            for rule in [SplitRule::Neighbours, SplitRule::Owner] {
                for nodes in [2, 4] {
                    let parts = split(&opener, nodes, rule, step);
                    let show = |f: &dyn Fn(&Part) -> String| parts.iter().map(f).collect::<Vec<_>>().join(" ");
                    let work: u64 = parts.iter().map(|p| p.refs).sum();
                    println!(
                        "  {rule:?} x{nodes}: pages [{}] ghosts [{}] refs% [{}] work {:.3} received/superstep [{}]",
                        show(&|p| p.pages.to_string()),
                        show(&|p| p.ghosts.to_string()),
                        show(&|p| format!("{:.0}", 100.0 * p.refs as f64 / refs as f64)),
                        work as f64 / refs as f64,
                        show(&|p| format!("{:.0}", p.received as f64 / iterations as f64)),
                    );
                }
            }
        }
    }
}
