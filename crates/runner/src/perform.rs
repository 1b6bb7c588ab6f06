//! The run: every record of the stream, in order, on the region.

use std::io::{Read, Write};

use pagelab_core::source::SourceSpec;
use pagelab_core::trace::{AccessKind, RefBatch, RefSource, BATCH_RECORDS};

use crate::region::{Region, RegionError};
#[cfg(test)]
use pagelab_core::stream::for_each_batch;
use crate::self_stats::{self, MemoryNumbers};
use crate::spin::{monotonic_ns, process_cpu_ns, CpuSpinner};
use crate::wire::{WireError, WireReader, WIRE_RECORDS};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Engine(#[from] pagelab_core::Error),
    #[error("{0}")]
    Region(#[from] RegionError),
    #[error("{0}")]
    Wire(#[from] WireError),
}

/// Where the records come from: the stream opened here, or records another process
/// generates and sends over a pipe (`--touch`, wire.rs).
pub enum Records<'a> {
    Stream(&'a SourceSpec),
    Wire(Box<dyn Read + 'a>),
}

enum Opened<'a> {
    Stream(Box<dyn RefSource>),
    Wire(WireReader<Box<dyn Read + 'a>>),
}

impl Opened<'_> {
    fn next_batch(&mut self, b: &mut RefBatch) -> Result<usize, RunError> {
        Ok(match self {
            Opened::Stream(src) => src.next_batch(b)?,
            Opened::Wire(r) => r.next_batch(b)?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct RunnerOptions {
    pub page_size: u64,
    /// CPU time per reference (a record stands for `repeat` references).
    pub cpu_ns_per_ref: f64,
    /// With `use_gaps`: CPU time per instruction of the record's gap.
    pub cpu_ns_per_instruction: f64,
    pub use_gaps: bool,
    /// Write a progress line (JSON) to `progress` every this many ms; 0: never.
    pub progress_ms: u64,
}

/// What the runner did: printed as JSON at the end of a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    /// Records performed (free records included).
    pub records: u64,
    /// References: the sum of the records' repeat counts.
    pub references: u64,
    pub reads: u64,
    pub writes: u64,
    pub frees: u64,
    /// Distinct pages of the stream (the region's pages that were used).
    pub pages: u64,
    pub page_size: u64,
    pub wall_ns: u64,
    /// CPU time of the whole runner process (user + system, all threads).
    pub cpu_ns: u64,
    /// CPU time spent spinning for the configured per-reference cost.
    pub spun_ns: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub memory: MemoryNumbers,
    /// Memory numbers at the progress samples with the largest own_rss_bytes.
    pub peak_own_rss_bytes: u64,
    /// The largest own_anon_bytes seen at the progress samples and at the end.
    pub peak_own_anon_bytes: u64,
    /// Byte sum of what the reads saw (keeps them from being optimised away).
    pub checksum: u64,
}

/// Performs the stream of `spec` on a fresh region; `progress` receives a JSON line
/// (records, references, wall_ns) every `progress_ms`.
pub fn perform(records: Records, opts: &RunnerOptions, progress: &mut dyn Write) -> Result<RunReport, RunError> {
    let region = Region::reserve(opts.page_size as usize)?;
    let (mut src, batch_records) = match records {
        Records::Stream(spec) => (Opened::Stream(spec.open()?), BATCH_RECORDS),
        Records::Wire(input) => (Opened::Wire(WireReader::new(input)), WIRE_RECORDS),
    };
    let (minor0, major0) = self_stats::faults();
    let start = monotonic_ns();
    let cpu0 = process_cpu_ns();
    let mut spinner = CpuSpinner::default();
    let mut r = RunReport {
        records: 0,
        references: 0,
        reads: 0,
        writes: 0,
        frees: 0,
        pages: 0,
        page_size: opts.page_size,
        wall_ns: 0,
        cpu_ns: 0,
        spun_ns: 0,
        minor_faults: 0,
        major_faults: 0,
        memory: MemoryNumbers::default(),
        peak_own_rss_bytes: 0,
        peak_own_anon_bytes: 0,
        checksum: 0,
    };
    let progress_ns = opts.progress_ms.saturating_mul(1_000_000);
    let mut next_progress = start + progress_ns;
    // Pages holding memory: a page's first touch (and its first touch after a free)
    // must allocate it, as in the simulator. A read alone would map the kernel's
    // shared zero page, which takes no memory, so such a read writes the page first.
    let mut present: Vec<bool> = Vec::new();
    // One batch, read on this thread: the runner's own memory counts against the run's
    // limit, so no read-ahead buffers (stream::for_each_batch keeps four batches, 6 MB);
    // from the wire a small one
    let mut b = RefBatch::with_capacity(batch_records);
    while src.next_batch(&mut b)? > 0 {
        for i in 0..b.id.len() {
            let id = b.id[i] as u64;
            let repeat = b.repeat[i];
            if present.len() <= id as usize {
                present.resize(id as usize + 1, false);
            }
            match b.kind[i] {
                AccessKind::Free => {
                    r.frees += 1;
                    present[id as usize] = false;
                    region.free(id)?;
                }
                kind => {
                    let write = kind == AccessKind::Write;
                    if !present[id as usize] {
                        present[id as usize] = true;
                        if !write {
                            region.touch(id, true, 1)?;
                        }
                    }
                    if write {
                        r.writes += 1;
                    } else {
                        r.reads += 1;
                    }
                    r.checksum = r.checksum.wrapping_add(region.touch(id, write, repeat)?);
                }
            }
            r.records += 1;
            r.references += repeat as u64;
            let mut cost = opts.cpu_ns_per_ref * repeat as f64;
            if opts.use_gaps {
                cost += opts.cpu_ns_per_instruction * b.gap[i] as f64;
            }
            spinner.add(cost);
        }
        if progress_ns > 0 {
            let now = monotonic_ns();
            if now >= next_progress {
                next_progress = now + progress_ns;
                let m = self_stats::memory(region.base_address(), region.len());
                r.peak_own_rss_bytes = r.peak_own_rss_bytes.max(m.own_rss_bytes);
                r.peak_own_anon_bytes = r.peak_own_anon_bytes.max(m.own_anon_bytes);
                let line = serde_json::json!({"records": r.records, "references": r.references,
                    "wall_ns": now - start, "own_rss_bytes": m.own_rss_bytes, "own_anon_bytes": m.own_anon_bytes, "region_rss_bytes": m.region_rss_bytes});
                let _ = writeln!(progress, "{line}");
                let _ = progress.flush();
            }
        }
    }
    spinner.pay();
    // dense ids in order of first appearance: the distinct pages are the highest id + 1
    r.pages = present.len() as u64;
    r.spun_ns = spinner.spun_ns;
    r.wall_ns = monotonic_ns() - start;
    r.cpu_ns = process_cpu_ns() - cpu0;
    let (minor1, major1) = self_stats::faults();
    r.minor_faults = minor1 - minor0;
    r.major_faults = major1 - major0;
    r.memory = self_stats::memory(region.base_address(), region.len());
    r.peak_own_rss_bytes = r.peak_own_rss_bytes.max(r.memory.own_rss_bytes);
    r.peak_own_anon_bytes = r.peak_own_anon_bytes.max(r.memory.own_anon_bytes);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests' regions are alike: run one at a time, so that the kernel cannot merge
    /// two of them into one mapping.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn opts(cpu: f64) -> RunnerOptions {
        RunnerOptions { page_size: 4096, cpu_ns_per_ref: cpu, cpu_ns_per_instruction: 1.0, use_gaps: false, progress_ms: 0 }
    }

    fn workload(name: &str, params: &[(&str, &str)], seed: u64) -> SourceSpec {
        SourceSpec::Workload {
            name: name.into(),
            params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            page_size: 4096,
            seed,
        }
    }

    /// The runner performs exactly the stream's records: the same count, references,
    /// kinds and distinct pages as reading the stream directly.
    #[test]
    fn performs_exactly_the_streams_records() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let spec = workload("sor", &[("n", "64"), ("iterations", "3")], 1);
        let mut src = spec.open().unwrap();
        let (mut records, mut refs, mut writes, mut distinct) = (0u64, 0u64, 0u64, 0u32);
        for_each_batch(src.as_mut(), &mut |_| true, |b, d| {
            records += b.id.len() as u64;
            refs += b.repeat.iter().map(|&x| x as u64).sum::<u64>();
            writes += b.kind.iter().filter(|k| k.is_write()).count() as u64;
            distinct = d as u32;
            Ok(())
        })
        .unwrap();
        let r = perform(Records::Stream(&spec), &opts(0.0), &mut std::io::sink()).unwrap();
        assert!(records > 1000);
        assert_eq!((r.records, r.references, r.writes, r.pages), (records, refs, writes, distinct as u64));
        // every distinct page was touched at least once and holds memory (a first read
        // too): it is resident (no limit here), after one zero-fill fault
        assert!(r.memory.region_rss_bytes >= distinct as u64 * 4096);
        assert!(r.minor_faults >= distinct as u64);
    }

    /// Records that crossed the wire (--emit | --touch) are performed as the stream's
    /// own: the same records, references, kinds, frees and pages.
    #[test]
    fn the_wire_performs_what_the_stream_does() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        for spec in [workload("sor", &[("n", "48"), ("iterations", "2")], 1), workload("spikes", &[("refs", "60000"), ("base_pages", "60"), ("spike_pages", "150"), ("free_spikes", "true")], 3)] {
            let mut bytes = Vec::new();
            let mut src = spec.open().unwrap();
            let mut b = RefBatch::with_capacity(BATCH_RECORDS);
            while src.next_batch(&mut b).unwrap() > 0 {
                crate::wire::write_batch(&mut bytes, &b).unwrap();
            }
            let direct = perform(Records::Stream(&spec), &opts(0.0), &mut std::io::sink()).unwrap();
            let wired = perform(Records::Wire(Box::new(&bytes[..])), &opts(0.0), &mut std::io::sink()).unwrap();
            let key = |r: &RunReport| (r.records, r.references, r.reads, r.writes, r.frees, r.pages, r.checksum);
            assert_eq!(key(&direct), key(&wired));
            assert!(direct.records > 1000);
        }
    }

    /// The configured CPU time is spent: 20,000 references at 5 us each take >= 0.1 s
    /// of CPU.
    #[test]
    fn spins_the_configured_cpu_time() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let spec = workload("sor", &[("n", "32"), ("iterations", "1")], 1);
        let r0 = perform(Records::Stream(&spec), &opts(0.0), &mut std::io::sink()).unwrap();
        let r = perform(Records::Stream(&spec), &opts(5_000.0), &mut std::io::sink()).unwrap();
        let want = r.references * 5_000;
        assert!(r.spun_ns >= want, "spun {} < {}", r.spun_ns, want);
        assert!(r.cpu_ns >= want && r0.spun_ns == 0);
    }
}
