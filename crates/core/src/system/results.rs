//! What a timed-system run returns: plain structs, turned into dicts by the bindings.

use super::process::{ProcessSeries, SpaceTime};

/// What a process did, counted while it runs and reported as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessCounters {
    pub references: u64,
    pub records: u64,
    pub major_faults: u64,
    pub minor_faults: u64,
    /// Pages it touched (each counted once, however often it was freed and touched again).
    pub distinct_pages: u64,
    /// Pages it gave back (free records of pages it had touched).
    pub pages_freed: u64,
    /// Pages read for it: by its major faults, and by adaptive page-in in a gang run.
    pub page_ins: u64,
    /// Its pages written out.
    pub page_outs: u64,
    pub token_grabs: u64,
    pub token_held_ns: u64,
    pub suspended_ns: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProcessResult {
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The same process alone with all the memory it wants (no major faults).
    pub dedicated_ns: u64,
    pub counters: ProcessCounters,
    pub series: ProcessSeries,
    pub space_time: Option<SpaceTime>,
}

impl ProcessResult {
    pub fn runtime_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// Runtime over dedicated runtime (token-ordered-lru.txt section 4.1).
    pub fn slowdown(&self) -> f64 {
        if self.dedicated_ns == 0 {
            1.0
        } else {
            self.runtime_ns() as f64 / self.dedicated_ns as f64
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SystemSeries {
    pub t_s: Vec<f64>,
    pub free: Vec<u64>,
    pub cpu_util: Vec<f64>,
    pub disk_util: Vec<f64>,
    /// Pages read and written by the swap disk in each interval (paging activity,
    /// gang-adaptive-paging.txt figure 6).
    pub pages_in: Vec<u64>,
    pub pages_out: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TokenRecord {
    pub t_ns: u64,
    pub event: &'static str,
    pub process: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SystemResult {
    pub end_ns: u64,
    pub cpu_busy_ns: u64,
    pub disk_busy_ns: u64,
    pub disk_reads: u64,
    pub disk_writes: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Disk writes by size in pages (index 0 unused).
    pub write_sizes: Vec<u64>,
    /// Disk reads by size in pages (index 0 unused).
    pub read_sizes: Vec<u64>,
    /// Pages brought in by read-around, and those referenced before eviction.
    pub prefetched: u64,
    pub prefetch_hits: u64,
    pub processes: Vec<ProcessResult>,
    pub series: SystemSeries,
    /// The interval of the series at the end of the run: `system.sample_ms`, doubled
    /// each time the series were full and their samples merged in pairs (samples.rs).
    pub sample_ns: u64,
    pub token_events: Vec<TokenRecord>,
    /// Counts of `reclaim = "policy"`'s policy and of the Dead-List, if any.
    pub reclaim_counters: Vec<(String, u64)>,
    /// Counts of the swap disk's request queue and of the bound on asynchronous
    /// page-out writes (issue 15; disk_io.rs): `disk_merged`, `write_waits`, `write_peak`.
    pub disk_counters: Vec<(String, u64)>,
}
