//! The time series of a run, bounded in memory (issue 20).
//!
//! A run takes one sample every `system.sample_ms` of simulated time. The number of
//! samples is not known in advance (a slow disk or a tiny interval can make it
//! billions), so every series keeps at most [`SystemConfig::max_samples`] samples: when
//! the series are full, adjacent samples are merged in pairs and the interval doubles
//! for the rest of the run. Merging keeps each series' meaning:
//!
//! - sums over the interval add: `npf`, `pages_in`, `pages_out`, and the busy times
//!   behind `cpu_util` and `disk_util` (kept in nanoseconds, so the utilisations of a
//!   merged interval are exact);
//! - levels at the end of the interval take the later sample: `t_s`, `free`, `mad`,
//!   `rss`, and the space-time record's rows (a thinned record);
//! - `nap` (distinct pages referenced in the interval) takes the larger of the two: a
//!   lower bound of the merged interval's distinct pages, exact when both halves touch
//!   the same pages (a loop); samples taken after the last coarsening are exact.
//!
//! The effective interval is reported in the result (`SystemResult::sample_ns`).

use super::config::SystemConfig;
use super::process::{ProcessSeries, SpaceTime};
use super::results::SystemSeries;
use crate::{Error, Result};

/// Most samples per series.
pub const MAX_SAMPLES: usize = 200_000;

/// Most values the series of one run hold in all (per node of a gang run, times the
/// nodes): 2^26 values, 512 MiB at 8 bytes each. Runs with many processes or many
/// space-time buckets keep fewer than [`MAX_SAMPLES`] samples to stay below it.
pub const MAX_SERIES_VALUES: usize = 1 << 26;

/// Fewest samples a run may be limited to; a configuration that would allow fewer is
/// refused.
pub const MIN_SAMPLES: usize = 64;

impl SystemConfig {
    /// Values one sample adds to the series of the whole run: per node, six system
    /// values, four per process and, with space-time, three per bucket and process.
    pub fn series_values_per_sample(&self) -> usize {
        let per_process = 4 + if self.system.space_time { 3 * self.system.space_time_buckets as usize } else { 0 };
        let nodes = self.gang.as_ref().map_or(1, |g| g.nodes.max(1) as usize);
        nodes.saturating_mul(6usize.saturating_add(self.processes.len().saturating_mul(per_process)))
    }

    /// Samples each series keeps: [`MAX_SAMPLES`], or fewer so that the run's series
    /// hold at most [`MAX_SERIES_VALUES`] values; always even (samples merge in pairs).
    pub fn max_samples(&self) -> usize {
        let by_budget = MAX_SERIES_VALUES / self.series_values_per_sample().max(1);
        by_budget.min(MAX_SAMPLES) & !1
    }

    /// Refuses a configuration whose series could not keep [`MIN_SAMPLES`] samples.
    pub(crate) fn check_series_budget(&self) -> Result<()> {
        if self.max_samples() >= MIN_SAMPLES {
            return Ok(());
        }
        let key = if self.system.space_time {
            "system.space_time_buckets"
        } else if self.gang.as_ref().is_some_and(|g| g.nodes > 1) {
            "gang.nodes"
        } else {
            "processes"
        };
        Err(Error::invalid(
            key,
            format!(
                "the run's time series would hold {} values per sample, too many to keep {MIN_SAMPLES} samples within {MAX_SERIES_VALUES} values: expected fewer processes, nodes or space-time buckets",
                self.series_values_per_sample()
            ),
        ))
    }
}

/// Merges adjacent pairs in place: (v[0], v[1]) -> v[0], (v[2], v[3]) -> v[1], ...; an
/// odd last element stays as it is.
pub(crate) fn merge_pairs<T>(v: &mut Vec<T>, merge: impl Fn(T, T) -> T) {
    let n = v.len();
    let mut out: Vec<T> = Vec::with_capacity(n.div_ceil(2));
    let mut it = std::mem::take(v).into_iter();
    while let Some(a) = it.next() {
        match it.next() {
            Some(b) => out.push(merge(a, b)),
            None => out.push(a),
        }
    }
    *v = out;
}

fn later<T>(_: T, b: T) -> T {
    b
}

/// The system's samples as the machine takes them: end times and busy times in
/// nanoseconds, so that merging is exact; turned into a [`SystemSeries`] at the end.
#[derive(Debug, Default)]
pub(crate) struct SampleLog {
    pub t_ns: Vec<u64>,
    pub free: Vec<u64>,
    pub cpu_busy_ns: Vec<u64>,
    pub disk_busy_ns: Vec<u64>,
    pub pages_in: Vec<u64>,
    pub pages_out: Vec<u64>,
}

impl SampleLog {
    pub fn len(&self) -> usize {
        self.t_ns.len()
    }

    /// Merges adjacent samples in pairs (see the module documentation).
    pub fn coarsen(&mut self) {
        merge_pairs(&mut self.t_ns, later);
        merge_pairs(&mut self.free, later);
        merge_pairs(&mut self.cpu_busy_ns, |a, b| a + b);
        merge_pairs(&mut self.disk_busy_ns, |a, b| a + b);
        merge_pairs(&mut self.pages_in, |a, b| a + b);
        merge_pairs(&mut self.pages_out, |a, b| a + b);
    }

    /// The public series: times in seconds, busy times as fractions of their interval.
    pub fn into_series(self) -> SystemSeries {
        let mut previous = 0u64;
        let mut cpu_util = Vec::with_capacity(self.t_ns.len());
        let mut disk_util = Vec::with_capacity(self.t_ns.len());
        for (i, &t) in self.t_ns.iter().enumerate() {
            let interval = t.saturating_sub(previous).max(1) as f64;
            cpu_util.push(self.cpu_busy_ns[i] as f64 / interval);
            disk_util.push(self.disk_busy_ns[i] as f64 / interval);
            previous = t;
        }
        SystemSeries {
            t_s: self.t_ns.iter().map(|&t| t as f64 / 1e9).collect(),
            free: self.free,
            cpu_util,
            disk_util,
            pages_in: self.pages_in,
            pages_out: self.pages_out,
        }
    }
}

/// Merges a process's samples in pairs, as [`SampleLog::coarsen`].
pub(crate) fn coarsen_process(series: &mut ProcessSeries, space_time: Option<&mut SpaceTime>) {
    merge_pairs(&mut series.mad, later);
    merge_pairs(&mut series.rss, later);
    merge_pairs(&mut series.nap, u64::max);
    merge_pairs(&mut series.npf, |a, b| a + b);
    if let Some(st) = space_time {
        merge_pairs(&mut st.visited, later);
        merge_pairs(&mut st.resident, later);
        merge_pairs(&mut st.swapped, later);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_merge_and_an_odd_tail_stays() {
        let mut v = vec![1u64, 2, 3, 4, 5];
        merge_pairs(&mut v, |a, b| a + b);
        assert_eq!(v, vec![3, 7, 5]);
        let mut e: Vec<u64> = Vec::new();
        merge_pairs(&mut e, |a, b| a + b);
        assert!(e.is_empty());
    }

    /// Sums add, levels keep the later value, utilisations are exact over the merged
    /// interval, NAP keeps the larger count.
    #[test]
    fn coarsening_keeps_the_meaning_of_every_series() {
        let mut log = SampleLog {
            t_ns: vec![100, 200, 300, 450],
            free: vec![10, 11, 12, 13],
            cpu_busy_ns: vec![100, 50, 0, 150],
            disk_busy_ns: vec![0, 100, 100, 30],
            pages_in: vec![1, 2, 3, 4],
            pages_out: vec![0, 5, 0, 6],
        };
        log.coarsen();
        assert_eq!(log.t_ns, vec![200, 450]);
        assert_eq!(log.free, vec![11, 13]);
        assert_eq!((log.pages_in.clone(), log.pages_out.clone()), (vec![3, 7], vec![5, 6]));
        let s = log.into_series();
        assert_eq!(s.t_s, vec![200e-9, 450e-9]);
        assert_eq!(s.cpu_util, vec![0.75, 0.6]);
        assert_eq!(s.disk_util, vec![0.5, 130.0 / 250.0]);
        let mut p = ProcessSeries { mad: vec![1, 2, 3, 4], rss: vec![1, 1, 2, 2], nap: vec![5, 3, 2, 7], npf: vec![1, 0, 2, 2] };
        let mut st = SpaceTime { pages_per_bucket: 1, visited: vec![vec![1], vec![2], vec![3], vec![4]], resident: vec![vec![0]; 4], swapped: vec![vec![9]; 4] };
        coarsen_process(&mut p, Some(&mut st));
        assert_eq!(p, ProcessSeries { mad: vec![2, 4], rss: vec![1, 2], nap: vec![5, 7], npf: vec![1, 4] });
        assert_eq!(st.visited, vec![vec![2], vec![4]]);
    }
}
