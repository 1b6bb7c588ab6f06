//! A simulated process: its reference stream, its page table (local dense id -> global
//! page), its CPU cost model, scheduling state and counters.

use super::memory::{Gid, NO_GID};
use super::results::ProcessCounters;
use crate::source::SourceSpec;
use crate::trace::{has_frees, RefBatch, RefSource};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    NotStarted,
    Ready,
    Running,
    /// Waiting for a page-in read.
    BlockedIo,
    /// Waiting for a free frame (all reclaimable frames are being written out).
    BlockedFrame,
    /// Waiting at a barrier for the job's processes on the other nodes (gang runs).
    BlockedBarrier,
    Done,
}

/// Per-interval samples of one process (token-ordered-lru.txt section 3.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessSeries {
    /// Memory allocation demand: pages touched and not freed.
    pub mad: Vec<u64>,
    /// Resident set size.
    pub rss: Vec<u64>,
    /// Distinct pages referenced in the interval.
    pub nap: Vec<u64>,
    /// Major faults in the interval.
    pub npf: Vec<u64>,
}

/// Page states by bucket of virtual pages, one row per sample (figure 11).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpaceTime {
    pub pages_per_bucket: u64,
    pub visited: Vec<Vec<u32>>,
    pub resident: Vec<Vec<u32>>,
    pub swapped: Vec<Vec<u32>>,
}

pub struct Process {
    pub name: String,
    pub index: u16,
    pub spec: SourceSpec,
    source: Option<Box<dyn RefSource>>,
    pub batch: RefBatch,
    pub pos: usize,
    /// The current batch holds a free record (the hot loop then looks for them).
    pub batch_frees: bool,
    /// Global page of each local dense id (NO_GID until first touch).
    pub gid_of: Vec<Gid>,
    /// Global page of each virtual page touched so far (for clustering and read-around,
    /// which look up neighbours in virtual space; not used on the hit path).
    pub by_vpage: rustc_hash::FxHashMap<u64, Gid>,
    pub cpu_ns_per_ref: f64,
    pub cpu_ns_per_instruction: f64,
    pub use_gaps: bool,
    /// Fraction of a nanosecond of CPU time not yet added to the clock.
    pub carry: f64,
    pub state: RunState,
    /// Section 5.2: on while the process has unresolved page faults.
    pub swapping: bool,
    /// Section 5.3: others wait on this process.
    pub priority: bool,
    pub suspended: bool,
    pub suspended_since: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Where the next Linux 2.2 reclaim walk of this process starts (index into gid_of).
    pub walk_cursor: usize,
    pub rss: u64,
    pub mad: u64,
    pub counters: ProcessCounters,
    /// Counters of the current sample interval.
    pub interval_nap: u64,
    pub interval_npf: u64,
    pub series: ProcessSeries,
    pub space_time: Option<SpaceTime>,
    /// A process of a job over several nodes: it waits at barriers (gang runs).
    pub barriers: bool,
    /// References between barriers (u64::MAX: only the last one).
    pub superstep_refs: u64,
    /// Its next barrier is when its references reach this count.
    pub barrier_at: u64,
    /// It waits at the barrier that ends the job.
    pub at_final_barrier: bool,
    /// With the job's data split over the nodes (`gang.partition = "split"` or
    /// `"split_neighbours"`): this node's part of the serial stream, applied when the
    /// source opens, and the barriers its filtered stream has passed (partition.rs).
    pub partition: Option<super::partition::PartitionPlan>,
    pub marks: Option<std::sync::Arc<std::sync::Mutex<super::partition::PartitionMarks>>>,
    /// Its next barrier is not known yet (the source has not reached it).
    pub barrier_unknown: bool,
    /// Pages it receives at the barrier it goes to next (split data).
    pub exchange_pages: u64,
    /// The page whose read in flight it waits for (NO_GID: none).
    pub waiting_on: Gid,
}

impl Process {
    pub fn new(name: String, index: u16, spec: SourceSpec, cpu_ns_per_ref: f64, cpu_ns_per_instruction: f64, use_gaps: bool, priority: bool, start_ns: u64) -> Self {
        Process {
            name,
            index,
            spec,
            source: None,
            batch: RefBatch::default(),
            pos: 0,
            batch_frees: false,
            gid_of: Vec::new(),
            by_vpage: Default::default(),
            cpu_ns_per_ref,
            cpu_ns_per_instruction,
            use_gaps,
            carry: 0.0,
            state: RunState::NotStarted,
            swapping: false,
            priority,
            suspended: false,
            suspended_since: 0,
            start_ns,
            end_ns: 0,
            walk_cursor: 0,
            rss: 0,
            mad: 0,
            counters: ProcessCounters::default(),
            interval_nap: 0,
            interval_npf: 0,
            series: ProcessSeries::default(),
            space_time: None,
            barriers: false,
            superstep_refs: u64::MAX,
            barrier_at: u64::MAX,
            at_final_barrier: false,
            partition: None,
            marks: None,
            barrier_unknown: false,
            exchange_pages: 0,
            waiting_on: NO_GID,
        }
    }

    pub fn open(&mut self) -> Result<()> {
        self.source = Some(match &self.partition {
            Some(plan) => {
                let marks = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
                self.marks = Some(marks.clone());
                let step = if self.barriers { self.superstep_refs } else { u64::MAX };
                if self.barriers {
                    self.barrier_at = u64::MAX;
                    self.barrier_unknown = true;
                }
                let spec = &self.spec;
                Box::new(super::partition::PartitionSource::new(|| spec.open(), plan, step, marks)?)
            }
            None => self.spec.open()?,
        });
        Ok(())
    }

    /// With split data: takes the next barrier from the source's marks once it is known.
    pub fn sync_barrier(&mut self) {
        if !self.barrier_unknown {
            return;
        }
        let Some(marks) = &self.marks else { return };
        if let Some((at, exchange)) = marks.lock().expect("partition marks").marks.pop_front() {
            self.barrier_at = at;
            self.exchange_pages = exchange;
            self.barrier_unknown = false;
        }
    }

    /// Makes the current batch non-empty; false at the end of the stream.
    pub fn refill(&mut self) -> Result<bool> {
        if self.pos < self.batch.len() {
            return Ok(true);
        }
        let src = self.source.as_mut().expect("process opened");
        let n = src.next_batch(&mut self.batch)?;
        self.pos = 0;
        self.batch_frees = has_frees(&self.batch.kind);
        let pages = src.distinct_pages() as usize;
        if pages > self.gid_of.len() {
            self.gid_of.resize(pages, NO_GID);
        }
        Ok(n > 0)
    }

    /// Drops the source (the stream is done).
    pub fn close(&mut self) {
        self.source = None;
        self.batch = RefBatch::default();
    }

    pub fn is_runnable(&self) -> bool {
        self.state == RunState::Ready && !self.suspended
    }
}
