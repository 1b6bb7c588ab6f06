//! The swap device: a disk model (HDD or SSD) behind a FIFO request queue.
//!
//! DESIGN.md "Timed system simulation": the swap device has "a disk model (HDD: seek by
//! distance + rotation + transfer; SSD: latency + bandwidth), with a request queue so that
//! I/O contention shows up as time". The cost of a request depends on its size and on
//! the seek distance from the previous request, so the number and size of page-out writes
//! (mclustering-pageout.txt, Sect. 2 and Fig. 3(c)) and the placement of clusters on swap
//! translate into simulated time.
//!
//! Times are simulated nanoseconds (`u64`). Nothing here is random: the same sequence of
//! requests always gives the same times on any machine (IEEE-754 `f64` arithmetic,
//! including `sqrt`, is exactly rounded, and every component is rounded the same way).
//!
//! Rounding: each component of a service time (overhead, seek, rotational latency,
//! transfer; SSD latency, transfer) is computed in `f64` nanoseconds and rounded to the
//! nearest whole nanosecond on its own (`f64::round`, halves away from zero); the service
//! time is the integer sum of the rounded components. So a sequential HDD request costs
//! exactly `overhead_ns + transfer_ns`, whatever the other parameters are.

use crate::error::{Error, Result};

/// Which disk model serves the swap area (DESIGN.md "Timed system simulation").
/// Configured as `model = "hdd"` or `model = "ssd"` plus that model's parameters; without
/// `model` the disk is an HDD (docs/system-config.md).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(try_from = "DiskTable")]
pub enum DiskModel {
    /// Rotating disk: overhead + seek (by distance) + rotational latency + transfer.
    Hdd(HddParams),
    /// Flash disk: fixed latency + size / bandwidth, no position dependence.
    Ssd(SsdParams),
}

impl Default for DiskModel {
    fn default() -> Self {
        DiskModel::Hdd(HddParams::default())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum ModelName {
    #[default]
    Hdd,
    Ssd,
}

/// The `[disk]` table as written: every key of both models, each optional, so that an
/// absent `model` means `hdd` and a type error names its key (`disk.rpm: ...`).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DiskTable {
    #[serde(default)]
    model: ModelName,
    seek_min_ms: Option<f64>,
    seek_max_ms: Option<f64>,
    rpm: Option<f64>,
    transfer_mb_s: Option<f64>,
    overhead_ms: Option<f64>,
    stream_sequential: Option<bool>,
    latency_us: Option<f64>,
    bandwidth_mb_s: Option<f64>,
}

impl TryFrom<DiskTable> for DiskModel {
    type Error = String;

    fn try_from(t: DiskTable) -> std::result::Result<Self, String> {
        let misplaced = |keys: &[(&str, bool)], model: &str, other: &str| -> std::result::Result<(), String> {
            match keys.iter().find(|(_, given)| *given) {
                Some((key, _)) => Err(format!("'{key}' is a key of model = \"{other}\", not of this {model} disk (model = \"{model}\")")),
                None => Ok(()),
            }
        };
        match t.model {
            ModelName::Hdd => {
                misplaced(&[("latency_us", t.latency_us.is_some()), ("bandwidth_mb_s", t.bandwidth_mb_s.is_some())], "hdd", "ssd")?;
                let d = HddParams::default();
                Ok(DiskModel::Hdd(HddParams {
                    seek_min_ms: t.seek_min_ms.unwrap_or(d.seek_min_ms),
                    seek_max_ms: t.seek_max_ms.unwrap_or(d.seek_max_ms),
                    rpm: t.rpm.unwrap_or(d.rpm),
                    transfer_mb_s: t.transfer_mb_s.unwrap_or(d.transfer_mb_s),
                    overhead_ms: t.overhead_ms.unwrap_or(d.overhead_ms),
                    stream_sequential: t.stream_sequential.unwrap_or(d.stream_sequential),
                }))
            }
            ModelName::Ssd => {
                misplaced(
                    &[
                        ("seek_min_ms", t.seek_min_ms.is_some()),
                        ("seek_max_ms", t.seek_max_ms.is_some()),
                        ("rpm", t.rpm.is_some()),
                        ("transfer_mb_s", t.transfer_mb_s.is_some()),
                        ("overhead_ms", t.overhead_ms.is_some()),
                        ("stream_sequential", t.stream_sequential.is_some()),
                    ],
                    "ssd",
                    "hdd",
                )?;
                let d = SsdParams::default();
                Ok(DiskModel::Ssd(SsdParams {
                    latency_us: t.latency_us.unwrap_or(d.latency_us),
                    bandwidth_mb_s: t.bandwidth_mb_s.unwrap_or(d.bandwidth_mb_s),
                }))
            }
        }
    }
}

/// Rotating-disk parameters; seek time follows the square-root short-seek law of
/// Ruemmler & Wilkes, "An introduction to disk drive modeling" (IEEE Computer, 1994).
#[derive(Debug, Clone, PartialEq)]
pub struct HddParams {
    /// Track-to-track (shortest non-zero) seek in milliseconds.
    pub seek_min_ms: f64,
    /// Full-stroke seek (across the whole swap area) in milliseconds.
    pub seek_max_ms: f64,
    /// Spindle speed in revolutions per minute (a ~2000 IDE disk such as the IBM Hercules).
    pub rpm: f64,
    /// Media transfer rate in MB/s (MB = 1e6 bytes).
    pub transfer_mb_s: f64,
    /// Controller/command overhead per request in milliseconds.
    pub overhead_ms: f64,
    /// A request queued behind the previous one and continuing exactly where it ended
    /// streams without rotational latency (a drive with a track buffer). Off by default:
    /// each request is a separate command that waits for its sector to come round, so
    /// every request pays seek (by distance), rotation and transfer, and fewer, larger
    /// writes save time (mclustering-pageout.txt).
    pub stream_sequential: bool,
}

impl Default for HddParams {
    fn default() -> Self {
        HddParams { seek_min_ms: 1.0, seek_max_ms: 15.0, rpm: 7200.0, transfer_mb_s: 20.0, overhead_ms: 0.1, stream_sequential: false }
    }
}

/// Flash-disk parameters: per-request latency plus size over bandwidth.
#[derive(Debug, Clone, PartialEq)]
pub struct SsdParams {
    /// Per-request latency in microseconds.
    pub latency_us: f64,
    /// Transfer bandwidth in MB/s (MB = 1e6 bytes).
    pub bandwidth_mb_s: f64,
}

impl Default for SsdParams {
    fn default() -> Self {
        SsdParams { latency_us: 80.0, bandwidth_mb_s: 400.0 }
    }
}

/// The longest a part of one request may take: one simulated day (see
/// [`super::config::MAX_DURATION_NS`]).
const MAX_PART_NS: f64 = super::config::MAX_DURATION_NS;

fn check_positive(field: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!("disk.{field}"), format!("expected a finite number > 0, got {}", super::config::show(value))))
    }
}

/// A part of every request's service time, `ns` nanoseconds for `value` of `field`:
/// at most one simulated day.
fn check_part(field: &str, value: f64, ns: f64, what: &str, bound: String) -> Result<()> {
    if ns.is_finite() && ns <= MAX_PART_NS {
        Ok(())
    } else {
        Err(Error::invalid(format!("disk.{field}"), format!("expected {what} of at most one simulated day ({bound}), got {}", super::config::show(value))))
    }
}

impl DiskModel {
    /// Checks that every parameter is finite and > 0, that `seek_max_ms >= seek_min_ms`,
    /// and that no part of a request's service time (overhead, full seek, half a turn,
    /// the transfer of one page of `page_size` bytes; latency) exceeds one simulated day,
    /// so that every service time is a representable number of nanoseconds. The error
    /// names the offending key (`disk.rpm`).
    pub fn validate(&self, page_size: u64) -> Result<()> {
        let page = page_size as f64;
        match self {
            DiskModel::Hdd(p) => {
                check_positive("seek_min_ms", p.seek_min_ms)?;
                check_positive("seek_max_ms", p.seek_max_ms)?;
                check_positive("rpm", p.rpm)?;
                check_positive("transfer_mb_s", p.transfer_mb_s)?;
                check_positive("overhead_ms", p.overhead_ms)?;
                if p.seek_max_ms < p.seek_min_ms {
                    return Err(Error::invalid(
                        "disk.seek_max_ms",
                        format!("expected seek_max_ms ({}) >= seek_min_ms ({})", p.seek_max_ms, p.seek_min_ms),
                    ));
                }
                let day_ms = MAX_PART_NS / 1e6;
                check_part("overhead_ms", p.overhead_ms, p.overhead_ms * 1e6, "an overhead", format!("{day_ms} ms"))?;
                check_part("seek_max_ms", p.seek_max_ms, p.seek_max_ms * 1e6, "a full seek", format!("{day_ms} ms"))?;
                check_part("rpm", p.rpm, 60e9 / p.rpm / 2.0, "a half turn (every request's rotational latency)", format!("rpm >= {:.6}", 30e9 / MAX_PART_NS))?;
                check_part(
                    "transfer_mb_s",
                    p.transfer_mb_s,
                    page * 1e3 / p.transfer_mb_s,
                    &format!("a transfer of one {page_size}-byte page"),
                    format!(">= {:.3e} MB/s", page * 1e3 / MAX_PART_NS),
                )?;
                Ok(())
            }
            DiskModel::Ssd(p) => {
                check_positive("latency_us", p.latency_us)?;
                check_positive("bandwidth_mb_s", p.bandwidth_mb_s)?;
                check_part("latency_us", p.latency_us, p.latency_us * 1e3, "a latency", format!("{} us", MAX_PART_NS / 1e3))?;
                check_part(
                    "bandwidth_mb_s",
                    p.bandwidth_mb_s,
                    page * 1e3 / p.bandwidth_mb_s,
                    &format!("a transfer of one {page_size}-byte page"),
                    format!(">= {:.3e} MB/s", page * 1e3 / MAX_PART_NS),
                )?;
                Ok(())
            }
        }
    }
}

/// Direction of a request: page-in (read) or page-out (write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    Read,
    Write,
}

/// Counters of everything the disk served, for the results (DESIGN.md: "disk requests
/// and their size histogram"; mclustering-pageout.txt Fig. 3(c) plots writes by size).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Read requests submitted.
    pub reads: u64,
    /// Write requests submitted.
    pub writes: u64,
    /// Pages read over all read requests.
    pub pages_read: u64,
    /// Pages written over all write requests.
    pub pages_written: u64,
    /// Sum of service times of all submitted requests (including parts still in the future).
    pub busy_ns: u64,
    /// Write requests by size in pages: index = pages (0 unused), grown as needed.
    pub write_sizes: Vec<u64>,
    /// Read requests by size in pages: index = pages (0 unused), grown as needed.
    pub read_sizes: Vec<u64>,
    /// Sum over requests of (start - submit time): time spent waiting in the FIFO queue.
    pub queue_wait_ns: u64,
}

fn count_size(histogram: &mut Vec<u64>, pages: u32) {
    let i = pages as usize;
    if histogram.len() <= i {
        histogram.resize(i + 1, 0);
    }
    histogram[i] += 1;
}

/// Nearest whole nanosecond (halves away from zero); negatives and NaN give 0, huge values saturate.
fn round_ns(ns: f64) -> u64 {
    ns.round() as u64
}

/// The swap device: a [`DiskModel`] behind a single FIFO queue (DESIGN.md "Timed system
/// simulation": "a request queue so that I/O contention shows up as time").
///
/// Requests are served one at a time in submission order, back to back: a request starts
/// at `max(now, busy_until)`. The head position is the slot just after the last page of
/// the last submitted request (the one that will have been served most recently when the
/// next request starts), so queued requests see the head where their predecessor left it.
#[derive(Debug, Clone)]
pub struct Disk {
    model: DiskModel,
    page_size: u64,
    /// Swap area size in slots (>= 1) used to normalise seek distances.
    span_slots: u64,
    /// Slot just after the previous request's last page.
    head: u64,
    /// Completion time of the last submitted request (the disk is busy before it).
    busy_until: u64,
    /// Start of the current busy period (a run of back-to-back requests ending at `busy_until`).
    period_start: u64,
    /// Total busy time of all earlier busy periods (each ended before `period_start`).
    closed_busy_ns: u64,
    /// End of the most recent closed busy period (0 if none).
    last_closed_end: u64,
    stats: DiskStats,
}

impl Disk {
    /// A disk with the head at slot 0, idle at time 0. `span_slots` is the swap area size
    /// in slots (the full-stroke seek distance; 0 is treated as 1). The model should have
    /// passed [`DiskModel::validate`]; invalid numbers do not panic but give meaningless times.
    pub fn new(model: DiskModel, page_size: u64, span_slots: u64) -> Disk {
        Disk {
            model,
            page_size,
            span_slots: span_slots.max(1),
            head: 0,
            busy_until: 0,
            period_start: 0,
            closed_busy_ns: 0,
            last_closed_end: 0,
            stats: DiskStats::default(),
        }
    }

    /// The disk model in use.
    pub fn model(&self) -> &DiskModel {
        &self.model
    }

    /// Current head position: the slot just after the previous request's last page.
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Pure: the service time of a request queued behind the current one (the disk still
    /// busy), with the current head (see `submit` for a request that finds it idle).
    ///
    /// HDD: overhead + seek(distance) + rotational latency + transfer, where distance =
    /// |slot - head|. Distance 0 (the request continues exactly where the previous one
    /// ended) is sequential: no seek, but the rotational latency all the same, unless
    /// `stream_sequential` is set and the request was queued back to back. Otherwise seek =
    /// seek_min + (seek_max - seek_min) * sqrt(min(distance / span, 1)) (Ruemmler & Wilkes
    /// 1994 square-root law) and rotational latency = half a revolution: the expected
    /// value, used deterministically on purpose (no random angular position).
    /// SSD: latency + pages * page_size / bandwidth, independent of position.
    pub fn service_ns(&self, slot: u64, pages: u32) -> u64 {
        self.cost(slot, pages, true)
    }

    /// The service time of a request at `slot`; `streaming`: it was queued behind the
    /// previous request, so a sequential continuation pays no rotational latency.
    fn cost(&self, slot: u64, pages: u32, streaming: bool) -> u64 {
        let bytes = pages as f64 * self.page_size as f64;
        match &self.model {
            DiskModel::Hdd(p) => {
                let overhead = round_ns(p.overhead_ms * 1e6);
                // bytes / (MB/s * 1e6) seconds = bytes * 1e3 / (MB/s) nanoseconds.
                let transfer = round_ns(bytes * 1e3 / p.transfer_mb_s);
                let distance = slot.abs_diff(self.head);
                let rotation = round_ns(60e9 / p.rpm / 2.0);
                if distance == 0 {
                    // Streaming continues only while requests follow each other back to
                    // back; after an idle gap the sector has turned away and the next
                    // request waits for it, half a revolution on average.
                    return if streaming && p.stream_sequential { overhead.saturating_add(transfer) } else { overhead.saturating_add(rotation).saturating_add(transfer) };
                }
                let fraction = (distance as f64 / self.span_slots as f64).min(1.0);
                let seek = round_ns((p.seek_min_ms + (p.seek_max_ms - p.seek_min_ms) * fraction.sqrt()) * 1e6);
                overhead.saturating_add(seek).saturating_add(rotation).saturating_add(transfer)
            }
            DiskModel::Ssd(p) => {
                let latency = round_ns(p.latency_us * 1e3);
                let transfer = round_ns(bytes * 1e3 / p.bandwidth_mb_s);
                latency.saturating_add(transfer)
            }
        }
    }

    /// FIFO queue: the request starts when the disk is free (max(now, busy_until)),
    /// moves the head to slot + pages, and the completion time is returned (the caller
    /// schedules its own completion event). Counts it in the statistics.
    ///
    /// `now` must not go backwards between calls (simulated time is monotonic).
    pub fn submit(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32) -> u64 {
        debug_assert!(pages > 0, "disk request of 0 pages");
        // a request queued behind a busy disk streams on from the previous one
        let service = self.cost(slot, pages, now < self.busy_until);
        let start = if now >= self.busy_until {
            // The disk is idle: the previous busy period is over; a new one begins.
            self.closed_busy_ns = self.closed_busy_ns.saturating_add(self.busy_until - self.period_start);
            self.last_closed_end = self.busy_until;
            self.period_start = now;
            now
        } else {
            self.busy_until
        };
        // saturating: a queue past the clock's limit is reported by the machine
        // (machine::MAX_SIM_NS) instead of wrapping to an early time
        let done = start.saturating_add(service);
        self.busy_until = done;
        self.head = slot + pages as u64;

        let s = &mut self.stats;
        match kind {
            IoKind::Read => {
                s.reads += 1;
                s.pages_read += pages as u64;
                count_size(&mut s.read_sizes, pages);
            }
            IoKind::Write => {
                s.writes += 1;
                s.pages_written += pages as u64;
                count_size(&mut s.write_sizes, pages);
            }
        }
        s.busy_ns = s.busy_ns.saturating_add(service);
        s.queue_wait_ns = s.queue_wait_ns.saturating_add(start - now);
        done
    }

    /// Low priority (for background writing in a later issue): submitted only if the
    /// disk is idle at `now` (busy_until <= now); otherwise None and nothing changes.
    pub fn submit_if_idle(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32) -> Option<u64> {
        if self.is_idle(now) {
            Some(self.submit(now, kind, slot, pages))
        } else {
            None
        }
    }

    /// Completion time of the last submitted request; the disk is busy before it.
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// True when every submitted request has completed by `now`.
    pub fn is_idle(&self, now: u64) -> bool {
        self.busy_until <= now
    }

    /// Everything the disk has served so far.
    pub fn stats(&self) -> &DiskStats {
        &self.stats
    }

    /// Busy time of the device within [0, until] (requests may extend past `until`; count only the part before it).
    ///
    /// Method: requests are served back to back in FIFO order, so busy time is a sequence
    /// of disjoint busy periods. We keep the total of the closed periods (all of which
    /// ended before the current period started) and the current period
    /// `[period_start, busy_until)`; the answer is that total plus the part of the current
    /// period before `until`. O(1), no history kept. Exact whenever `until` is not before
    /// the end of the last closed period, which always holds when `until` is at least the
    /// `now` of the latest submit (e.g. a per-second series sampled as time advances).
    pub fn busy_ns_until(&self, until: u64) -> u64 {
        debug_assert!(
            until >= self.last_closed_end,
            "busy_ns_until({until}) asked about time before the end of the last closed busy period ({})",
            self.last_closed_end
        );
        let in_progress = until.min(self.busy_until).saturating_sub(self.period_start);
        self.closed_busy_ns + in_progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;
    const SPAN: u64 = 65536;

    fn hdd() -> Disk {
        Disk::new(DiskModel::default(), PAGE, SPAN)
    }
    fn hdd_streaming() -> Disk {
        Disk::new(DiskModel::Hdd(HddParams { stream_sequential: true, ..HddParams::default() }), PAGE, SPAN)
    }
    fn ssd() -> Disk {
        Disk::new(DiskModel::Ssd(SsdParams::default()), PAGE, SPAN)
    }

    // Default HDD components, 4096-byte pages: overhead 0.1 ms; transfer 4096 B at 20e6 B/s
    // = 204.8 us per page; half a revolution at 7200 rpm = 4_166_666.67 ns -> 4_166_667.
    const OVERHEAD: u64 = 100_000;
    const XFER_PAGE: u64 = 204_800;
    const ROTATION: u64 = 4_166_667;

    /// Every request pays the rotation by default, even one continuing at the head, so
    /// the number of page-out writes costs time (mclustering-pageout.txt). With
    /// `stream_sequential`, a request queued back to back streams; one that finds the
    /// disk idle still waits for its sector.
    #[test]
    fn sequential_requests_and_the_rotation() {
        let mut d = hdd();
        let first = d.submit(0, IoKind::Write, 1000, 1);
        let queued = d.submit(0, IoKind::Write, 1001, 1);
        assert_eq!(queued - first, OVERHEAD + ROTATION + XFER_PAGE);
        let mut d = hdd_streaming();
        let first = d.submit(0, IoKind::Write, 1000, 1);
        let later = first + 1_000_000;
        let done = d.submit(later, IoKind::Write, 1001, 1);
        assert_eq!(done - later, OVERHEAD + ROTATION + XFER_PAGE);
        let queued = d.submit(later, IoKind::Write, 1002, 1);
        assert_eq!(queued - done, OVERHEAD + XFER_PAGE);
    }

    #[test]
    fn hdd_sequential_costs_only_overhead_and_transfer() {
        let mut d = hdd_streaming();
        d.submit(0, IoKind::Write, 1000, 4);
        assert_eq!(d.head(), 1004);
        assert_eq!(d.service_ns(1004, 16), OVERHEAD + 16 * XFER_PAGE);
        assert_eq!(d.service_ns(1004, 16), 3_376_800);
        // One slot off is not sequential: seek + rotation are paid.
        assert!(d.service_ns(1005, 16) > OVERHEAD + 16 * XFER_PAGE + ROTATION);
        assert!(d.service_ns(1003, 16) > OVERHEAD + 16 * XFER_PAGE + ROTATION);
    }

    #[test]
    fn hdd_far_seek_costs_more_than_near() {
        let d = hdd(); // head at 0
        let near = d.service_ns(1, 1);
        let mid = d.service_ns(SPAN / 4, 1);
        let far = d.service_ns(SPAN - 1, 1);
        assert!(near < mid && mid < far, "{near} {mid} {far}");
        // Shortest seek ~ seek_min, full stroke (and beyond, clamped) = seek_max.
        assert_eq!(d.service_ns(SPAN, 1), OVERHEAD + 15_000_000 + ROTATION + XFER_PAGE);
        assert_eq!(d.service_ns(10 * SPAN, 1), d.service_ns(SPAN, 1));
        // Quarter span: sqrt(1/4) = 0.5 -> 1 + 14 * 0.5 = 8 ms.
        assert_eq!(mid, OVERHEAD + 8_000_000 + ROTATION + XFER_PAGE);
        // Distance is symmetric.
        let mut d2 = hdd();
        d2.submit(0, IoKind::Read, SPAN / 2 - 1, 1); // head -> SPAN/2
        assert_eq!(d2.service_ns(SPAN / 2 + SPAN / 4, 1), d2.service_ns(SPAN / 4, 1));
    }

    #[test]
    fn ssd_is_independent_of_position() {
        let mut d = ssd();
        // 80 us + 4096 B / 400e6 B/s = 80_000 + 10_240 ns.
        assert_eq!(d.service_ns(0, 1), 90_240);
        assert_eq!(d.service_ns(SPAN - 1, 1), 90_240);
        d.submit(0, IoKind::Read, 12345, 3);
        assert_eq!(d.service_ns(12348, 16), 80_000 + 16 * 10_240);
        assert_eq!(d.service_ns(7, 16), 80_000 + 16 * 10_240);
    }

    #[test]
    fn fifo_requests_complete_back_to_back() {
        let mut d = hdd();
        let now = 1_000;
        let s1 = d.service_ns(5000, 2);
        let c1 = d.submit(now, IoKind::Write, 5000, 2);
        assert_eq!(c1, now + s1);
        let s2 = d.service_ns(9000, 1); // with the head where the first request left it
        let c2 = d.submit(now, IoKind::Read, 9000, 1);
        assert_eq!(c2, c1 + s2);
        assert_eq!(d.busy_until(), c2);
        assert_eq!(d.stats().queue_wait_ns, c1 - now);
        assert_eq!(d.stats().busy_ns, s1 + s2);
        // A request after the queue drained starts at its own submit time.
        let c3 = d.submit(c2 + 500, IoKind::Read, 9001, 1);
        assert_eq!(c3, c2 + 500 + OVERHEAD + ROTATION + XFER_PAGE);
        assert_eq!(d.stats().queue_wait_ns, c1 - now);
    }

    #[test]
    fn submit_if_idle_refuses_when_busy() {
        let mut d = ssd();
        let c1 = d.submit(0, IoKind::Read, 10, 1);
        let before_stats = d.stats().clone();
        assert!(!d.is_idle(c1 - 1));
        assert_eq!(d.submit_if_idle(c1 - 1, IoKind::Write, 500, 8), None);
        assert_eq!(d.stats(), &before_stats);
        assert_eq!(d.busy_until(), c1);
        assert_eq!(d.head(), 11);
        assert!(d.is_idle(c1));
        let c2 = d.submit_if_idle(c1, IoKind::Write, 500, 8).expect("idle at busy_until");
        assert_eq!(c2, c1 + 80_000 + 8 * 10_240);
        assert_eq!(d.stats().writes, 1);
        assert_eq!(d.stats().queue_wait_ns, 0);
    }

    #[test]
    fn busy_ns_until_counts_only_the_part_before_until() {
        let mut d = ssd();
        const S: u64 = 90_240; // one 1-page SSD request
        assert_eq!(d.busy_ns_until(1_000), 0);
        d.submit(0, IoKind::Read, 0, 1); // busy [0, S)
        assert_eq!(d.busy_ns_until(0), 0);
        assert_eq!(d.busy_ns_until(50_000), 50_000);
        assert_eq!(d.busy_ns_until(S), S);
        assert_eq!(d.busy_ns_until(150_000), S);
        d.submit(200_000, IoKind::Read, 0, 1); // busy [200_000, 200_000 + S)
        assert_eq!(d.busy_ns_until(200_000), S);
        assert_eq!(d.busy_ns_until(250_000), S + 50_000);
        assert_eq!(d.busy_ns_until(1_000_000), 2 * S);
        // Two queued requests at once: [1_000_000, 1_000_000 + 2S) as one busy period.
        d.submit(1_000_000, IoKind::Write, 0, 1);
        d.submit(1_000_000, IoKind::Write, 0, 1);
        assert_eq!(d.busy_ns_until(1_000_000 + S + 10), 3 * S + 10);
        assert_eq!(d.busy_ns_until(5_000_000), 4 * S);
        assert_eq!(d.stats().busy_ns, 4 * S);
        // Increasing `until` as a per-second series would call it, across an idle gap.
        d.submit(6_000_000, IoKind::Read, 0, 1);
        let series: Vec<u64> = [5_500_000, 6_000_000, 6_000_001, 7_000_000].iter().map(|&t| d.busy_ns_until(t)).collect();
        assert_eq!(series, vec![4 * S, 4 * S, 4 * S + 1, 5 * S]);
    }

    #[test]
    fn stats_and_size_histograms() {
        let mut d = hdd();
        let mut t = 0;
        for (kind, slot, pages) in [
            (IoKind::Write, 0, 16),
            (IoKind::Write, 16, 1),
            (IoKind::Write, 100, 16),
            (IoKind::Read, 3, 8),
            (IoKind::Read, 40, 1),
        ] {
            t = d.submit(t, kind, slot, pages);
        }
        let s = d.stats();
        assert_eq!((s.reads, s.writes), (2, 3));
        assert_eq!((s.pages_read, s.pages_written), (9, 33));
        let mut w = vec![0; 17];
        w[1] = 1;
        w[16] = 2;
        assert_eq!(s.write_sizes, w);
        let mut r = vec![0; 9];
        r[1] = 1;
        r[8] = 1;
        assert_eq!(s.read_sizes, r);
        assert_eq!(s.busy_ns, t); // submitted back to back from time 0 with no gaps
        assert_eq!(s.queue_wait_ns, 0);
        assert_eq!(d.busy_ns_until(t), t);
    }

    #[test]
    fn validate_names_the_bad_field() {
        assert!(DiskModel::default().validate(PAGE).is_ok());
        assert!(DiskModel::Ssd(SsdParams::default()).validate(PAGE).is_ok());
        let bad_hdd = |f: fn(&mut HddParams)| {
            let mut p = HddParams::default();
            f(&mut p);
            DiskModel::Hdd(p).validate(PAGE).unwrap_err().to_string()
        };
        let e = bad_hdd(|p| p.seek_min_ms = 0.0);
        assert!(e.starts_with("disk.seek_min_ms: expected a finite number > 0"), "{e}");
        assert!(bad_hdd(|p| p.seek_max_ms = f64::NAN).starts_with("disk.seek_max_ms:"));
        assert!(bad_hdd(|p| p.rpm = -7200.0).starts_with("disk.rpm:"));
        assert!(bad_hdd(|p| p.transfer_mb_s = f64::INFINITY).starts_with("disk.transfer_mb_s:"));
        assert!(bad_hdd(|p| p.overhead_ms = 0.0).starts_with("disk.overhead_ms:"));
        let e = bad_hdd(|p| {
            p.seek_min_ms = 5.0;
            p.seek_max_ms = 4.0;
        });
        assert!(e.contains("seek_max_ms (4) >= seek_min_ms (5)"), "{e}");
        let e = DiskModel::Ssd(SsdParams { latency_us: 0.0, ..SsdParams::default() }).validate(PAGE).unwrap_err();
        assert!(e.to_string().starts_with("disk.latency_us:"), "{e}");
        let e = DiskModel::Ssd(SsdParams { bandwidth_mb_s: -1.0, ..SsdParams::default() }).validate(PAGE).unwrap_err();
        assert!(matches!(&e, Error::Invalid { what, .. } if what == "disk.bandwidth_mb_s"), "{e}");
    }

    /// No part of a request may take more than one simulated day, so that service times
    /// are representable (issue 20: rpm = 1e-12 and bandwidth_mb_s = 1e-300 gave wrong
    /// times with no error).
    #[test]
    fn validate_bounds_every_part_of_a_request_by_a_day() {
        let hdd = |f: fn(&mut HddParams)| {
            let mut p = HddParams::default();
            f(&mut p);
            DiskModel::Hdd(p).validate(PAGE).map_err(|e| e.to_string())
        };
        let e = hdd(|p| p.rpm = 1e-12).unwrap_err();
        assert!(e.starts_with("disk.rpm: expected a half turn") && e.contains("one simulated day") && e.ends_with("got 1e-12"), "{e}");
        // half a turn at 0.001 rpm is 8.3 hours: slow but representable
        assert!(hdd(|p| p.rpm = 0.001).is_ok());
        assert!(hdd(|p| p.transfer_mb_s = 1e-300).unwrap_err().starts_with("disk.transfer_mb_s:"));
        assert!(hdd(|p| p.overhead_ms = 1e12).unwrap_err().starts_with("disk.overhead_ms:"));
        assert!(hdd(|p| p.seek_max_ms = 1e12).unwrap_err().starts_with("disk.seek_max_ms:"));
        let e = DiskModel::Ssd(SsdParams { bandwidth_mb_s: 1e-300, ..SsdParams::default() }).validate(PAGE).unwrap_err().to_string();
        assert!(e.starts_with("disk.bandwidth_mb_s: expected a transfer of one 4096-byte page of at most one simulated day"), "{e}");
        let e = DiskModel::Ssd(SsdParams { latency_us: 1e300, ..SsdParams::default() }).validate(PAGE).unwrap_err().to_string();
        assert!(e.starts_with("disk.latency_us:"), "{e}");
        // the per-page bound depends on the page size
        let slow = DiskModel::Ssd(SsdParams { bandwidth_mb_s: 1e-7, ..SsdParams::default() });
        assert!(slow.validate(4096).is_ok());
        assert!(slow.validate(1 << 30).is_err());
    }

    /// `[disk]` without `model` is an HDD, as docs/system-config.md says (issue 20); keys
    /// of the other model and type errors name their key.
    #[test]
    fn the_disk_table_defaults_to_hdd() {
        let parse = |json: &str| -> std::result::Result<DiskModel, String> {
            let de = &mut serde_json::Deserializer::from_str(json);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let path = e.path().to_string();
                format!("{path}: {}", e.into_inner())
            })
        };
        assert_eq!(parse("{}").unwrap(), DiskModel::default());
        assert_eq!(parse(r#"{"rpm": 5400}"#).unwrap(), DiskModel::Hdd(HddParams { rpm: 5400.0, ..HddParams::default() }));
        assert_eq!(parse(r#"{"model": "hdd", "rpm": 5400}"#).unwrap(), parse(r#"{"rpm": 5400}"#).unwrap());
        assert_eq!(
            parse(r#"{"model": "ssd", "latency_us": 50}"#).unwrap(),
            DiskModel::Ssd(SsdParams { latency_us: 50.0, ..SsdParams::default() })
        );
        let e = parse(r#"{"latency_us": 50}"#).unwrap_err();
        assert!(e.contains("'latency_us' is a key of model = \"ssd\""), "{e}");
        let e = parse(r#"{"model": "ssd", "rpm": 50}"#).unwrap_err();
        assert!(e.contains("'rpm' is a key of model = \"hdd\""), "{e}");
        let e = parse(r#"{"model": "tape"}"#).unwrap_err();
        assert!(e.starts_with("model: unknown variant `tape`"), "{e}");
        let e = parse(r#"{"rpm": "fast"}"#).unwrap_err();
        assert!(e.starts_with("rpm: invalid type"), "{e}");
        let e = parse(r#"{"bogus": 1}"#).unwrap_err();
        assert!(e.starts_with("bogus: unknown field"), "{e}");
    }

    #[test]
    fn rounding_is_per_component_to_nearest_ns() {
        // Half a revolution at 7000 rpm is not a whole ns: 60e9/7000/2 = 4_285_714.29 -> 4_285_714.
        let p = HddParams { rpm: 7000.0, seek_min_ms: 2.0, seek_max_ms: 2.0, ..HddParams::default() };
        let d = Disk::new(DiskModel::Hdd(p), 1000, 100);
        // transfer 1000 B at 20e6 B/s = 50_000 ns; seek 2 ms at any distance.
        assert_eq!(d.service_ns(50, 1), 100_000 + 2_000_000 + 4_285_714 + 50_000);
    }
}
