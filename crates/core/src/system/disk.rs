//! The swap device: a disk model (HDD or SSD) behind the kernel's request queue.
//!
//! DESIGN.md "Timed system simulation": the swap device has "a disk model (HDD: seek by
//! distance + rotation + transfer; SSD: latency + bandwidth), with a request queue so that
//! I/O contention shows up as time". The cost of a request depends on its size and on
//! the seek distance from the previous request, so the number and size of page-out writes
//! (mclustering-pageout.txt, Sect. 2 and Fig. 3(c)) and the placement of clusters on swap
//! translate into simulated time.
//!
//! Issue 15 made the drive and the queue those of the papers' machines (each rule a key
//! of `[disk]`, docs/system-config.md):
//! - the seek span is the drive's (`disk_mb`), not the swap area's, so seeks within a
//!   2 GB swap partition of a 160 GB disk are short, and seek time follows the drive's
//!   curve through its datasheet's track-to-track, average and full-stroke times;
//! - a request that continues where the previous one of the same direction ended waits
//!   for neither seek nor rotation (`sequential`): the drive's read look-ahead and
//!   write cache stream it;
//! - the kernel's request queue ([`super::elevator`]) merges and sorts queued requests
//!   (`queue`); then the completion of a request is known only when the drive starts it,
//!   and the machine is told by events (see [`Disk::enqueue`]);
//! - presets of the papers' drives ([`super::disk_presets`]).
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

use super::config::ReclaimKind;
use super::elevator::{Discipline, Request, RequestQueue};
use crate::error::{Error, Result};

/// The `[disk]` table: the drive ([`DiskModel`]) and the kernel's request queue in front
/// of it ([`QueueKind`]).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
#[serde(try_from = "DiskTable")]
pub struct DiskConfig {
    pub model: DiskModel,
    pub queue: QueueKind,
}

/// Which disk model serves the swap area (DESIGN.md "Timed system simulation").
/// Configured as `model = "hdd"` or `model = "ssd"` plus that model's parameters, or as
/// a `preset` of a real drive; without either the disk is an HDD (docs/system-config.md).
#[derive(Debug, Clone, PartialEq)]
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

/// The kernel's request queue in front of the swap disk (`[disk] queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    /// The queue of the kernel the configuration models: FreeBSD 8.2's with `reclaim =
    /// "bsd"` (the BSD VM), Linux 2.2's otherwise.
    #[default]
    Kernel,
    /// Submission order, nothing merged: the engine before issue 15.
    Fifo,
    /// Linux 2.2 `make_request`: merging, one-way elevator, plugging.
    Linux22,
    /// FreeBSD 8.2 `ata_sort_queue`: one-way elevator, no merging.
    Freebsd82,
}

impl QueueKind {
    /// The discipline this queue follows in a system whose reclaim is `reclaim`.
    pub fn discipline(self, reclaim: ReclaimKind, page_size: u64) -> Discipline {
        match self {
            QueueKind::Fifo => Discipline::Fifo,
            QueueKind::Linux22 => Discipline::linux22(page_size),
            QueueKind::Freebsd82 => Discipline::Freebsd82,
            QueueKind::Kernel if matches!(reclaim, ReclaimKind::Bsd | ReclaimKind::Freebsd8) => Discipline::Freebsd82,
            QueueKind::Kernel => Discipline::linux22(page_size),
        }
    }
}

/// When a request that starts exactly where the previous one ended is spared the
/// rotational latency (`[disk] sequential`). It is always spared the seek.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub enum SequentialKind {
    /// Never: every request waits for its sector to come round (`stream_sequential =
    /// false`, the engine's default before issue 15).
    #[serde(rename = "never")]
    Never,
    /// Only when it was queued behind the previous request, whatever its direction
    /// (`stream_sequential = true` before issue 15).
    #[serde(rename = "queued")]
    Queued,
    /// When it goes the same way as the previous request (read after read, write after
    /// write), queued behind it or not: a read continues into the drive's read look-ahead
    /// (read on past the last request into the buffer), a write into its write cache,
    /// which streams it to the track the head is on. Both drives of the papers have read
    /// look-ahead and write caching on by default.
    #[default]
    #[serde(rename = "same-kind")]
    SameKind,
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
    model: Option<ModelName>,
    preset: Option<String>,
    queue: Option<QueueKind>,
    seek_min_ms: Option<f64>,
    seek_avg_ms: Option<f64>,
    seek_max_ms: Option<f64>,
    rpm: Option<f64>,
    transfer_mb_s: Option<f64>,
    overhead_ms: Option<f64>,
    disk_mb: Option<f64>,
    sequential: Option<SequentialKind>,
    stream_sequential: Option<bool>,
    latency_us: Option<f64>,
    bandwidth_mb_s: Option<f64>,
}

impl TryFrom<DiskTable> for DiskConfig {
    type Error = String;

    fn try_from(t: DiskTable) -> std::result::Result<Self, String> {
        let misplaced = |keys: &[(&str, bool)], model: &str, other: &str| -> std::result::Result<(), String> {
            match keys.iter().find(|(_, given)| *given) {
                Some((key, _)) => Err(format!("'{key}' is a key of model = \"{other}\", not of this {model} disk (model = \"{model}\")")),
                None => Ok(()),
            }
        };
        let preset = match &t.preset {
            Some(name) => Some(super::disk_presets::preset(name).ok_or_else(|| {
                format!("preset: unknown preset '{name}', expected one of {}", super::disk_presets::NAMES.join(", "))
            })?),
            None => None,
        };
        match t.model.unwrap_or_default() {
            ModelName::Hdd => {
                misplaced(&[("latency_us", t.latency_us.is_some()), ("bandwidth_mb_s", t.bandwidth_mb_s.is_some())], "hdd", "ssd")?;
                let (d, preset_queue) = match preset {
                    Some(p) => (p.params, p.queue),
                    None => (HddParams::default(), None),
                };
                let sequential = match (t.sequential, t.stream_sequential) {
                    (Some(_), Some(_)) => return Err("stream_sequential: give 'sequential' or the older 'stream_sequential', not both".into()),
                    (Some(s), None) => s,
                    (None, Some(true)) => SequentialKind::Queued,
                    (None, Some(false)) => SequentialKind::Never,
                    (None, None) => d.sequential,
                };
                // a preset's datasheet average belongs to its own track-to-track and
                // full-stroke times: a config that sets either without the average gets
                // the square-root law between them
                let seek_avg_ms = match t.seek_avg_ms {
                    Some(a) => Some(a),
                    None if t.seek_min_ms.is_some() || t.seek_max_ms.is_some() => None,
                    None => d.seek_avg_ms,
                };
                Ok(DiskConfig {
                    model: DiskModel::Hdd(HddParams {
                        seek_min_ms: t.seek_min_ms.unwrap_or(d.seek_min_ms),
                        seek_avg_ms,
                        seek_max_ms: t.seek_max_ms.unwrap_or(d.seek_max_ms),
                        rpm: t.rpm.unwrap_or(d.rpm),
                        transfer_mb_s: t.transfer_mb_s.unwrap_or(d.transfer_mb_s),
                        overhead_ms: t.overhead_ms.unwrap_or(d.overhead_ms),
                        disk_mb: t.disk_mb.or(d.disk_mb),
                        sequential,
                    }),
                    queue: t.queue.or(preset_queue).unwrap_or_default(),
                })
            }
            ModelName::Ssd => {
                if t.preset.is_some() {
                    return Err("preset: the presets are rotating disks, not of model = \"ssd\"".into());
                }
                misplaced(
                    &[
                        ("seek_min_ms", t.seek_min_ms.is_some()),
                        ("seek_avg_ms", t.seek_avg_ms.is_some()),
                        ("seek_max_ms", t.seek_max_ms.is_some()),
                        ("rpm", t.rpm.is_some()),
                        ("transfer_mb_s", t.transfer_mb_s.is_some()),
                        ("overhead_ms", t.overhead_ms.is_some()),
                        ("disk_mb", t.disk_mb.is_some()),
                        ("sequential", t.sequential.is_some()),
                        ("stream_sequential", t.stream_sequential.is_some()),
                    ],
                    "ssd",
                    "hdd",
                )?;
                let d = SsdParams::default();
                Ok(DiskConfig {
                    model: DiskModel::Ssd(SsdParams {
                        latency_us: t.latency_us.unwrap_or(d.latency_us),
                        bandwidth_mb_s: t.bandwidth_mb_s.unwrap_or(d.bandwidth_mb_s),
                    }),
                    queue: t.queue.unwrap_or_default(),
                })
            }
        }
    }
}

/// Rotating-disk parameters. Seek time by distance follows the drive's curve through
/// the datasheet's three points (see [`HddParams::seek_ms`]); without an average, the
/// square-root short-seek law of Ruemmler & Wilkes, "An introduction to disk drive
/// modeling" (IEEE Computer, 1994), between track-to-track and full stroke.
#[derive(Debug, Clone, PartialEq)]
pub struct HddParams {
    /// Track-to-track (shortest non-zero) seek in milliseconds.
    pub seek_min_ms: f64,
    /// The datasheet's average seek in milliseconds (the mean over all pairs of
    /// positions, the "weighted average of all possible seek combinations" of IBM's and
    /// Hitachi's specifications); None: the square-root law alone.
    pub seek_avg_ms: Option<f64>,
    /// Full-stroke seek (across the whole disk, or the swap area without `disk_mb`) in
    /// milliseconds.
    pub seek_max_ms: f64,
    /// Spindle speed in revolutions per minute.
    pub rpm: f64,
    /// Sustained media transfer rate in MB/s (MB = 1e6 bytes).
    pub transfer_mb_s: f64,
    /// Controller/command overhead per request in milliseconds.
    pub overhead_ms: f64,
    /// The drive's capacity in MB (1e6 bytes): seek distances are fractions of it. None:
    /// the swap area is the whole stroke (a dedicated swap disk; the engine before issue
    /// 15, which made a seek across a few MB of swap a full-stroke seek).
    pub disk_mb: Option<f64>,
    /// When a request continuing the previous one is spared the rotation.
    pub sequential: SequentialKind,
}

impl Default for HddParams {
    /// The engine's generic drive (7200 rpm, 1 to 15 ms seeks, 20 MB/s, 0.1 ms), with
    /// the drive behaviour of issue 15: sequential continuation, no capacity given.
    fn default() -> Self {
        HddParams {
            seek_min_ms: 1.0,
            seek_avg_ms: None,
            seek_max_ms: 15.0,
            rpm: 7200.0,
            transfer_mb_s: 20.0,
            overhead_ms: 0.1,
            disk_mb: None,
            sequential: SequentialKind::SameKind,
        }
    }
}

impl HddParams {
    /// The engine's drive before issue 15 (`preset = "legacy"`): every request pays the
    /// rotation, and the swap area is the full stroke.
    pub fn legacy() -> Self {
        HddParams { sequential: SequentialKind::Never, ..HddParams::default() }
    }

    /// Seek time in ms for a seek over `fraction` (0 < fraction <= 1) of the full stroke:
    /// `min + b sqrt(f) + c f`, the square-root law of short seeks plus a linear term for
    /// long ones (Ruemmler & Wilkes 1994), through seek(0+) = track-to-track, seek(1) =
    /// full stroke and, when the datasheet's average is given, a mean over uniformly
    /// random start and end positions equal to it: E[sqrt|x-y|] = 8/15 and E|x-y| = 1/3
    /// give b = 5A - 5F/3, c = F - b with F = full - min, A = avg - min. Without an
    /// average c = 0: the square-root law, whose average is min + 8/15 (max - min).
    pub fn seek_ms(&self, fraction: f64) -> f64 {
        let f = fraction.clamp(0.0, 1.0);
        let (b, c) = self.seek_coefficients();
        self.seek_min_ms + b * f.sqrt() + c * f
    }

    fn seek_coefficients(&self) -> (f64, f64) {
        let span = self.seek_max_ms - self.seek_min_ms;
        match self.seek_avg_ms {
            None => (span, 0.0),
            Some(avg) => {
                let b = 5.0 * (avg - self.seek_min_ms) - 5.0 * span / 3.0;
                (b, span - b)
            }
        }
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

impl DiskConfig {
    /// See [`DiskModel::validate`].
    pub fn validate(&self, page_size: u64) -> Result<()> {
        self.model.validate(page_size)
    }
}

impl DiskModel {
    /// Checks that every parameter is finite and > 0, that `seek_max_ms >= seek_min_ms`,
    /// that an average seek lies where the seek curve stays increasing and concave
    /// (between a third and 8/15 of the way from track-to-track to full stroke), and
    /// that no part of a request's service time (overhead, full seek, half a turn, the
    /// transfer of one page of `page_size` bytes; latency) exceeds one simulated day, so
    /// that every service time is a representable number of nanoseconds. The error
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
                if let Some(avg) = p.seek_avg_ms {
                    let span = p.seek_max_ms - p.seek_min_ms;
                    let (lo, hi) = (p.seek_min_ms + span / 3.0, p.seek_min_ms + span * 8.0 / 15.0);
                    // a hair of slack for a value written to the rounding of the bounds
                    if !(avg.is_finite() && avg >= lo - 1e-9 && avg <= hi + 1e-9) {
                        return Err(Error::invalid(
                            "disk.seek_avg_ms",
                            format!(
                                "expected an average seek from {lo:.4} to {hi:.4} ms (a third to 8/15 of the way from seek_min_ms to seek_max_ms, where the seek curve rises and bends down), got {}",
                                super::config::show(avg)
                            ),
                        ));
                    }
                }
                if let Some(mb) = p.disk_mb {
                    check_positive("disk_mb", mb)?;
                    if mb * 1e6 < page {
                        return Err(Error::invalid("disk.disk_mb", format!("expected a disk of at least one {page_size}-byte page, got {}", super::config::show(mb))));
                    }
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

    /// The swap area of `slots` pages must fit on a disk whose capacity is given.
    pub fn check_swap_fits(&self, page_size: u64, slots: u64) -> Result<()> {
        if let DiskModel::Hdd(HddParams { disk_mb: Some(mb), .. }) = self {
            let need = slots as f64 * page_size as f64 / 1e6;
            if need > *mb {
                return Err(Error::invalid(
                    "disk.disk_mb",
                    format!("the swap area ({slots} slots, {need:.1} MB) does not fit on a disk of {} MB", super::config::show(*mb)),
                ));
            }
        }
        Ok(())
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
/// With an elevator a request is counted when the drive starts it (merged requests
/// count once); with the FIFO queue when it is submitted (the same order). Pages are
/// counted when submitted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Pages read over all read requests (counted when submitted).
    pub pages_read: u64,
    /// Pages written over all write requests (counted when submitted).
    pub pages_written: u64,
    /// Sum of service times of all counted requests (including parts still in the future).
    pub busy_ns: u64,
    /// Write requests by size in pages: index = pages (0 unused), grown as needed.
    pub write_sizes: Vec<u64>,
    /// Read requests by size in pages: index = pages (0 unused), grown as needed.
    pub read_sizes: Vec<u64>,
    /// Sum over requests of (start - submit time of its oldest part): time spent queued.
    pub queue_wait_ns: u64,
    /// Submissions merged into a queued request (Linux 2.2's elevator).
    pub merged: u64,
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

/// What [`Disk::enqueue`] did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// The drive was idle and started it: it completes at this time (the caller
    /// schedules [`Disk::complete`] then).
    Started(u64),
    /// The drive was idle and the queue plugged (Linux 2.2): the caller calls
    /// [`Disk::unplug`] once the current instant's submissions are in.
    Plugged,
    /// It waits in the queue (or joined a queued request).
    Queued,
}

/// The request the drive is serving.
#[derive(Debug, Clone)]
struct Active {
    req: Request,
    done: u64,
}

/// The swap device: a [`DiskModel`] behind the kernel's request queue (DESIGN.md "Timed
/// system simulation": "a request queue so that I/O contention shows up as time").
///
/// Two ways of use. With the FIFO queue, [`Disk::submit`]: requests are served one at a
/// time in submission order, back to back, so a request's completion is known when it
/// is submitted (it starts at `max(now, busy_until)`). With an elevator, [`Disk::enqueue`],
/// [`Disk::unplug`] and [`Disk::complete`]: queued requests are reordered and merged, so
/// a request's completion is known when the drive starts it. The head position is the
/// slot just after the last page of the last request started (or submitted, FIFO).
#[derive(Debug, Clone)]
pub struct Disk {
    model: DiskModel,
    page_size: u64,
    discipline: Discipline,
    /// Bytes of the full stroke: the drive's capacity, or the swap area (>= 1 page).
    span_bytes: f64,
    /// Slot just after the previous request's last page.
    head: u64,
    /// Direction of the previous request (None before the first).
    last_kind: Option<IoKind>,
    /// Completion time of the last started request (the disk is busy before it).
    busy_until: u64,
    /// Start of the current busy period (a run of back-to-back requests ending at `busy_until`).
    period_start: u64,
    /// Total busy time of all earlier busy periods (each ended before `period_start`).
    closed_busy_ns: u64,
    /// End of the most recent closed busy period (0 if none).
    last_closed_end: u64,
    /// Elevator: the requests waiting, the one being served, and whether the queue is
    /// plugged (requests gather; nothing is started until `unplug`).
    queue: RequestQueue,
    active: Option<Active>,
    plugged: bool,
    stats: DiskStats,
}

impl Disk {
    /// A FIFO disk with the head at slot 0, idle at time 0. `span_slots` is the swap area
    /// size in slots (the full-stroke seek distance when the model gives no capacity;
    /// 0 is treated as 1). The model should have passed [`DiskModel::validate`]; invalid
    /// numbers do not panic but give meaningless times.
    pub fn new(model: DiskModel, page_size: u64, span_slots: u64) -> Disk {
        Disk::with_discipline(model, page_size, span_slots, Discipline::Fifo)
    }

    /// A disk behind the queue `discipline`.
    pub fn with_discipline(model: DiskModel, page_size: u64, span_slots: u64, discipline: Discipline) -> Disk {
        let span_bytes = match &model {
            DiskModel::Hdd(HddParams { disk_mb: Some(mb), .. }) => (mb * 1e6).max(page_size as f64),
            _ => span_slots.max(1) as f64 * page_size as f64,
        };
        Disk {
            model,
            page_size,
            discipline,
            span_bytes,
            head: 0,
            last_kind: None,
            busy_until: 0,
            period_start: 0,
            closed_busy_ns: 0,
            last_closed_end: 0,
            queue: RequestQueue::default(),
            active: None,
            plugged: false,
            stats: DiskStats::default(),
        }
    }

    /// The disk model in use.
    pub fn model(&self) -> &DiskModel {
        &self.model
    }

    /// The queue discipline in use.
    pub fn discipline(&self) -> Discipline {
        self.discipline
    }

    /// True when requests go through [`Disk::enqueue`] (an elevator), false for the FIFO
    /// queue's [`Disk::submit`].
    pub fn is_elevator(&self) -> bool {
        self.discipline != Discipline::Fifo
    }

    /// Current head position: the slot just after the previous request's last page.
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Pure: the service time of a request queued behind the current one (the disk still
    /// busy), with the current head, as a write (see `submit` for a request that finds
    /// it idle).
    ///
    /// HDD: overhead + seek(distance) + rotational latency + transfer, where distance =
    /// |slot - head| pages, as a fraction of the full stroke (the drive's capacity, or
    /// the swap area). Distance 0 (the request continues exactly where the previous one
    /// ended) is sequential: no seek, and no rotational latency when `sequential` spares
    /// it. Otherwise seek = [`HddParams::seek_ms`] and rotational latency = half a
    /// revolution: the expected value, used deterministically on purpose (no random
    /// angular position). SSD: latency + pages * page_size / bandwidth, independent of
    /// position.
    pub fn service_ns(&self, slot: u64, pages: u32) -> u64 {
        self.cost(slot, pages, IoKind::Write, true)
    }

    /// [`Disk::service_ns`] for a request of direction `kind`.
    pub fn service_ns_of(&self, kind: IoKind, slot: u64, pages: u32) -> u64 {
        self.cost(slot, pages, kind, true)
    }

    /// The service time of a request at `slot`; `queued`: it was queued behind the
    /// previous request.
    fn cost(&self, slot: u64, pages: u32, kind: IoKind, queued: bool) -> u64 {
        let bytes = pages as f64 * self.page_size as f64;
        match &self.model {
            DiskModel::Hdd(p) => {
                let overhead = round_ns(p.overhead_ms * 1e6);
                // bytes / (MB/s * 1e6) seconds = bytes * 1e3 / (MB/s) nanoseconds.
                let transfer = round_ns(bytes * 1e3 / p.transfer_mb_s);
                let distance = slot.abs_diff(self.head);
                let rotation = round_ns(60e9 / p.rpm / 2.0);
                if distance == 0 {
                    let streams = match p.sequential {
                        SequentialKind::Never => false,
                        // streaming continues only while requests follow each other back
                        // to back; after an idle gap the sector has turned away
                        SequentialKind::Queued => queued,
                        SequentialKind::SameKind => self.last_kind == Some(kind),
                    };
                    return if streams { overhead.saturating_add(transfer) } else { overhead.saturating_add(rotation).saturating_add(transfer) };
                }
                let fraction = distance as f64 * self.page_size as f64 / self.span_bytes;
                let seek = round_ns(p.seek_ms(fraction) * 1e6);
                overhead.saturating_add(seek).saturating_add(rotation).saturating_add(transfer)
            }
            DiskModel::Ssd(p) => {
                let latency = round_ns(p.latency_us * 1e3);
                let transfer = round_ns(bytes * 1e3 / p.bandwidth_mb_s);
                latency.saturating_add(transfer)
            }
        }
    }

    /// The drive starts a request of `service` ns at `now`: busy periods, head, counters.
    /// Returns its completion time.
    fn start(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32, submitted: u64, service: u64) -> u64 {
        debug_assert!(pages > 0, "disk request of 0 pages");
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
        self.last_kind = Some(kind);
        let s = &mut self.stats;
        match kind {
            IoKind::Read => {
                s.reads += 1;
                count_size(&mut s.read_sizes, pages);
            }
            IoKind::Write => {
                s.writes += 1;
                count_size(&mut s.write_sizes, pages);
            }
        }
        s.busy_ns = s.busy_ns.saturating_add(service);
        s.queue_wait_ns = s.queue_wait_ns.saturating_add(start - submitted.min(start));
        done
    }

    fn count_pages(&mut self, kind: IoKind, pages: u32) {
        match kind {
            IoKind::Read => self.stats.pages_read += pages as u64,
            IoKind::Write => self.stats.pages_written += pages as u64,
        }
    }

    /// FIFO queue: the request starts when the disk is free (max(now, busy_until)),
    /// moves the head to slot + pages, and the completion time is returned (the caller
    /// schedules its own completion event). Counts it in the statistics.
    ///
    /// `now` must not go backwards between calls (simulated time is monotonic).
    pub fn submit(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32) -> u64 {
        debug_assert!(pages > 0, "disk request of 0 pages");
        debug_assert!(!self.is_elevator(), "an elevator's requests go through enqueue");
        // a request queued behind a busy disk streams on from the previous one
        let service = self.cost(slot, pages, kind, now < self.busy_until);
        self.count_pages(kind, pages);
        self.start(now, kind, slot, pages, now, service)
    }

    /// Low priority (background writing): submitted only if the disk is idle at `now`;
    /// otherwise None and nothing changes. FIFO queue only.
    pub fn submit_if_idle(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32) -> Option<u64> {
        if self.is_idle(now) {
            Some(self.submit(now, kind, slot, pages))
        } else {
            None
        }
    }

    /// Elevator: a request, with the caller's `tag` for its completion, joins the queue
    /// (merged into a queued request where the discipline merges). See [`Enqueued`].
    pub fn enqueue(&mut self, now: u64, kind: IoKind, slot: u64, pages: u32, tag: u32) -> Enqueued {
        debug_assert!(pages > 0, "disk request of 0 pages");
        self.count_pages(kind, pages);
        let req = Request { kind, slot, pages, submitted: now, tags: vec![tag] };
        let idle = self.active.is_none() && self.queue.is_empty();
        let serving = self.active.as_ref().map(|a| a.req.slot);
        if self.queue.add(self.discipline, req, serving) {
            self.stats.merged += 1;
        }
        if !idle {
            return Enqueued::Queued;
        }
        match self.discipline {
            Discipline::Linux22 { .. } => {
                // plug_device: the first request of an empty queue waits for the unplug
                self.plugged = true;
                Enqueued::Plugged
            }
            _ => Enqueued::Started(self.start_next(now).expect("a request was just queued")),
        }
    }

    /// Elevator: the plug is pulled (`unplug_device`): the first queued request starts.
    /// Returns its completion time, or None when nothing was plugged.
    pub fn unplug(&mut self, now: u64) -> Option<u64> {
        if !self.plugged || self.active.is_some() {
            return None;
        }
        self.plugged = false;
        self.start_next(now)
    }

    /// Elevator: the request being served completed at `now`. Returns the tags merged
    /// into it, and the completion time of the next request, which the drive starts at
    /// once if one is queued.
    pub fn complete(&mut self, now: u64) -> (Vec<u32>, Option<u64>) {
        let Some(done) = self.active.take() else { return (Vec::new(), None) };
        debug_assert!(done.done <= now, "completion at {now} before its time {}", done.done);
        (done.req.tags, self.start_next(now))
    }

    fn start_next(&mut self, now: u64) -> Option<u64> {
        let req = self.queue.pop_front()?;
        // queued behind the previous request when that one is still being served now
        let service = self.cost(req.slot, req.pages, req.kind, now < self.busy_until || req.submitted < now);
        let done = self.start(now, req.kind, req.slot, req.pages, req.submitted, service);
        self.active = Some(Active { req, done });
        Some(done)
    }

    /// Completion time of the last started request; the disk is busy before it.
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// True when every submitted request has completed by `now` (nothing queued).
    pub fn is_idle(&self, now: u64) -> bool {
        self.busy_until <= now && self.active.is_none() && self.queue.is_empty()
    }

    /// Everything the disk has served so far.
    pub fn stats(&self) -> &DiskStats {
        &self.stats
    }

    /// Busy time of the device within [0, until] (requests may extend past `until`; count only the part before it).
    ///
    /// Method: requests are served back to back, so busy time is a sequence of disjoint
    /// busy periods. We keep the total of the closed periods (all of which ended before
    /// the current period started) and the current period `[period_start, busy_until)`;
    /// the answer is that total plus the part of the current period before `until`.
    /// O(1), no history kept. Exact whenever `until` is not before the end of the last
    /// closed period, which always holds when `until` is at least the `now` of the latest
    /// start (e.g. a per-second series sampled as time advances).
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

    /// The engine's drive before issue 15 (every request pays the rotation).
    fn hdd() -> Disk {
        Disk::new(DiskModel::Hdd(HddParams::legacy()), PAGE, SPAN)
    }
    fn hdd_streaming() -> Disk {
        Disk::new(DiskModel::Hdd(HddParams { sequential: SequentialKind::Queued, ..HddParams::legacy() }), PAGE, SPAN)
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

    fn parse(json: &str) -> std::result::Result<DiskConfig, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            format!("{path}: {}", e.into_inner())
        })
    }
    fn hdd_of(c: DiskConfig) -> HddParams {
        match c.model {
            DiskModel::Hdd(p) => p,
            other => panic!("not an hdd: {other:?}"),
        }
    }

    /// `[disk]` without `model` is an HDD, as docs/system-config.md says (issue 20); keys
    /// of the other model and type errors name their key.
    #[test]
    fn the_disk_table_defaults_to_hdd() {
        assert_eq!(parse("{}").unwrap(), DiskConfig::default());
        assert_eq!(parse("{}").unwrap().queue, QueueKind::Kernel);
        assert_eq!(parse(r#"{"rpm": 5400}"#).unwrap().model, DiskModel::Hdd(HddParams { rpm: 5400.0, ..HddParams::default() }));
        assert_eq!(parse(r#"{"model": "hdd", "rpm": 5400}"#).unwrap(), parse(r#"{"rpm": 5400}"#).unwrap());
        assert_eq!(
            parse(r#"{"model": "ssd", "latency_us": 50}"#).unwrap().model,
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

    /// Issue 15: the seek span is the drive's. On the 160 GB Barracuda a seek from one
    /// end of a 2 GB swap partition to the other is a short seek, far below the
    /// full-stroke seek the engine used to charge when the swap area was the span.
    #[test]
    fn a_seek_across_the_swap_area_is_short_on_a_big_disk() {
        let drive = super::super::disk_presets::seagate_barracuda_7200_12_st3160318as();
        let swap_slots = 2_000_000_000 / PAGE; // the paper's 2 GB swap partition
        let big = Disk::new(DiskModel::Hdd(drive.clone()), PAGE, swap_slots);
        let span_only = Disk::new(DiskModel::Hdd(HddParams { disk_mb: None, ..drive.clone() }), PAGE, swap_slots);
        let fixed = round_ns(drive.overhead_ms * 1e6) + round_ns(30e9 / drive.rpm) + round_ns(4096.0 * 1e3 / drive.transfer_mb_s);
        let across = big.service_ns(swap_slots - 1, 1) - fixed;
        let full = round_ns(drive.seek_max_ms * 1e6);
        assert_eq!(span_only.service_ns(swap_slots, 1) - fixed, full, "without disk_mb the swap area is the full stroke");
        // 2/160 of the stroke: 1 + 14.06 x sqrt(0.0125) = 2.57 ms against 15.06 ms
        assert!((across as f64 / 1e6 - 2.572).abs() < 0.01, "{across}");
        assert!(across * 5 < full, "{across} vs {full}");
        // and the swap area must fit on the disk
        let model = DiskModel::Hdd(HddParams { disk_mb: Some(1.0), ..drive });
        let e = model.check_swap_fits(PAGE, 1000).unwrap_err().to_string();
        assert!(e.starts_with("disk.disk_mb: the swap area (1000 slots, 4.1 MB) does not fit on a disk of 1 MB"), "{e}");
        assert!(model.check_swap_fits(PAGE, 200).is_ok());
    }

    /// Issue 15: a request continuing the previous one of the same direction costs no
    /// rotation (read look-ahead, write cache), queued behind it or after an idle gap;
    /// one of the other direction, or one slot off, pays it.
    #[test]
    fn a_sequential_continuation_costs_no_rotation() {
        let mut d = Disk::new(DiskModel::Hdd(HddParams::default()), PAGE, SPAN);
        let first = d.submit(0, IoKind::Write, 1000, 1);
        let later = first + 50_000_000;
        assert_eq!(d.submit(later, IoKind::Write, 1001, 2) - later, OVERHEAD + 2 * XFER_PAGE, "after an idle gap");
        let t = later + 50_000_000;
        assert_eq!(d.submit(t, IoKind::Read, 1003, 1) - t, OVERHEAD + ROTATION + XFER_PAGE, "a read after a write");
        let t = t + 50_000_000;
        assert_eq!(d.submit(t, IoKind::Read, 1004, 4) - t, OVERHEAD + 4 * XFER_PAGE, "a read after a read");
        let t = t + 50_000_000;
        assert!(d.submit(t, IoKind::Read, 1009, 1) - t > OVERHEAD + ROTATION + XFER_PAGE, "one slot off: seek and rotation");
        // the legacy drive pays the rotation every time
        let mut d = hdd();
        let first = d.submit(0, IoKind::Write, 1000, 1);
        assert_eq!(d.submit(first, IoKind::Write, 1001, 1) - first, OVERHEAD + ROTATION + XFER_PAGE);
    }

    fn elevator(discipline: Discipline) -> Disk {
        Disk::with_discipline(DiskModel::Hdd(HddParams::legacy()), PAGE, SPAN, discipline)
    }

    /// Linux 2.2: two adjacent writes queued behind the request being served reach the
    /// drive as one request; two that do not touch as two. The served request is never
    /// merged into.
    #[test]
    fn two_adjacent_queued_writes_become_one_request() {
        let linux = Discipline::linux22(PAGE);
        let mut d = elevator(linux);
        assert_eq!(d.enqueue(0, IoKind::Write, 500, 1, 0), Enqueued::Plugged);
        let done = d.unplug(0).expect("the plug is pulled");
        assert_eq!(d.enqueue(0, IoKind::Write, 501, 1, 1), Enqueued::Queued, "queued behind the one being served");
        assert_eq!(d.enqueue(0, IoKind::Write, 502, 1, 2), Enqueued::Queued);
        assert_eq!(d.stats().merged, 1, "502 joined 501, not the request being served");
        let (tags, next) = d.complete(done);
        assert_eq!(tags, vec![0]);
        let next = next.expect("the merged request starts");
        assert_eq!(next - done, OVERHEAD + ROTATION + 2 * XFER_PAGE, "one request of two pages");
        assert_eq!(d.complete(next), (vec![1, 2], None));
        assert_eq!((d.stats().writes, d.stats().pages_written), (2, 3));
        assert_eq!(d.stats().write_sizes, vec![0, 1, 1]);
        // non-adjacent: three requests
        let mut d = elevator(linux);
        d.enqueue(0, IoKind::Write, 500, 1, 0);
        let mut t = d.unplug(0).unwrap();
        d.enqueue(0, IoKind::Write, 510, 1, 1);
        d.enqueue(0, IoKind::Write, 512, 1, 2);
        assert_eq!(d.stats().merged, 0);
        while let (_, Some(n)) = d.complete(t) {
            t = n;
        }
        assert_eq!(d.stats().writes, 3);
        assert!(d.is_idle(t));
    }

    /// Linux 2.2 plugs an empty queue: what arrives before the unplug is merged and
    /// sorted, and only then does the first request start. FreeBSD 8.2's ata queue
    /// starts at once and merges nothing.
    #[test]
    fn linux22_plugs_and_freebsd82_starts_at_once() {
        let mut d = elevator(Discipline::linux22(PAGE));
        assert_eq!(d.enqueue(7, IoKind::Write, 100, 1, 0), Enqueued::Plugged);
        assert!(!d.is_idle(7));
        assert_eq!(d.enqueue(7, IoKind::Write, 101, 1, 1), Enqueued::Queued);
        let done = d.unplug(7).unwrap();
        assert_eq!(d.unplug(7), None, "already unplugged");
        assert_eq!(done - 7, OVERHEAD + seek_from_zero(100) + ROTATION + 2 * XFER_PAGE);
        assert_eq!(d.complete(done), (vec![0, 1], None));
        let mut d = elevator(Discipline::Freebsd82);
        let Enqueued::Started(done) = d.enqueue(7, IoKind::Write, 100, 1, 0) else { panic!("starts at once") };
        assert_eq!(d.enqueue(7, IoKind::Write, 101, 1, 1), Enqueued::Queued);
        assert_eq!(d.complete(done).0, vec![0]);
        assert_eq!(d.stats().merged, 0);
    }

    /// The legacy seek of `slot` pages from slot 0 on the test disk.
    fn seek_from_zero(slot: u64) -> u64 {
        round_ns((1.0 + 14.0 * (slot as f64 / SPAN as f64).sqrt()) * 1e6)
    }

    /// The seek curve: the square-root law without an average; through the average when
    /// given; an average outside the curve's range is refused, naming the key.
    #[test]
    fn the_seek_curve_and_its_average() {
        let p = HddParams { seek_min_ms: 2.0, seek_max_ms: 17.0, ..HddParams::default() };
        assert_eq!(p.seek_ms(0.25), 2.0 + 15.0 * 0.5);
        let with_avg = HddParams { seek_avg_ms: Some(2.0 + 8.0), ..p.clone() };
        // b = 5 x 8 - 5 x 15 / 3 = 15, c = 0: the square-root law again
        assert!((with_avg.seek_ms(0.25) - p.seek_ms(0.25)).abs() < 1e-12);
        let lower = HddParams { seek_avg_ms: Some(8.0), ..p.clone() };
        assert!(lower.seek_ms(0.25) < p.seek_ms(0.25) && (lower.seek_ms(1.0) - 17.0).abs() < 1e-12);
        for bad in [6.9, 10.1, f64::NAN] {
            let e = DiskModel::Hdd(HddParams { seek_avg_ms: Some(bad), ..p.clone() }).validate(PAGE).unwrap_err().to_string();
            assert!(e.starts_with("disk.seek_avg_ms: expected an average seek from 7.0000 to 10.0000 ms"), "{e}");
        }
        assert!(DiskModel::Hdd(HddParams { seek_avg_ms: Some(7.0), ..p.clone() }).validate(PAGE).is_ok());
        let e = DiskModel::Hdd(HddParams { disk_mb: Some(0.0), ..p }).validate(PAGE).unwrap_err().to_string();
        assert!(e.starts_with("disk.disk_mb: expected a finite number > 0"), "{e}");
    }

    /// `preset` sets the drive's keys, which keys beside it override; `stream_sequential`
    /// still reads as before; the queue and errors name their key.
    #[test]
    fn presets_and_keys_beside_them() {
        let c = parse(r#"{"preset": "barracuda-2011"}"#).unwrap();
        assert_eq!(c.queue, QueueKind::Kernel);
        assert_eq!(hdd_of(c), super::super::disk_presets::seagate_barracuda_7200_12_st3160318as());
        let p = hdd_of(parse(r#"{"preset": "hercules-1999", "rpm": 7200, "disk_mb": 9000}"#).unwrap());
        assert_eq!((p.rpm, p.disk_mb, p.seek_avg_ms), (7200.0, Some(9000.0), Some(9.5)));
        // a new track-to-track or full stroke without an average: the square-root law
        let p = hdd_of(parse(r#"{"preset": "hercules-1999", "seek_max_ms": 20}"#).unwrap());
        assert_eq!((p.seek_min_ms, p.seek_avg_ms, p.seek_max_ms), (2.2, None, 20.0));
        let legacy = parse(r#"{"preset": "legacy"}"#).unwrap();
        assert_eq!(legacy.queue, QueueKind::Fifo);
        assert_eq!(hdd_of(legacy), HddParams::legacy());
        assert_eq!(parse(r#"{"preset": "legacy", "queue": "linux22"}"#).unwrap().queue, QueueKind::Linux22);
        assert_eq!(hdd_of(parse(r#"{"stream_sequential": true}"#).unwrap()).sequential, SequentialKind::Queued);
        assert_eq!(hdd_of(parse(r#"{"stream_sequential": false}"#).unwrap()).sequential, SequentialKind::Never);
        assert_eq!(hdd_of(parse(r#"{"sequential": "never"}"#).unwrap()).sequential, SequentialKind::Never);
        assert_eq!(hdd_of(parse(r#"{"preset": "legacy", "sequential": "same-kind"}"#).unwrap()).sequential, SequentialKind::SameKind);
        let e = parse(r#"{"sequential": "never", "stream_sequential": true}"#).unwrap_err();
        assert!(e.contains("stream_sequential: give 'sequential' or the older 'stream_sequential', not both"), "{e}");
        let e = parse(r#"{"preset": "ibm"}"#).unwrap_err();
        assert!(e.contains("preset: unknown preset 'ibm', expected one of legacy, hercules-1999, barracuda-2011"), "{e}");
        let e = parse(r#"{"model": "ssd", "preset": "legacy"}"#).unwrap_err();
        assert!(e.contains("preset: the presets are rotating disks"), "{e}");
        let e = parse(r#"{"model": "ssd", "disk_mb": 5}"#).unwrap_err();
        assert!(e.contains("'disk_mb' is a key of model = \"hdd\""), "{e}");
        let e = parse(r#"{"queue": "cfq"}"#).unwrap_err();
        assert!(e.starts_with("queue: unknown variant `cfq`"), "{e}");
        let e = parse(r#"{"sequential": "always"}"#).unwrap_err();
        assert!(e.starts_with("sequential: unknown variant `always`"), "{e}");
        assert_eq!(parse(r#"{"model": "ssd", "queue": "fifo"}"#).unwrap().queue, QueueKind::Fifo);
    }

    /// "kernel" follows the modelled kernel: FreeBSD 8.2's queue under the BSD VM, Linux
    /// 2.2's otherwise.
    #[test]
    fn the_kernel_queue_follows_the_reclaim() {
        assert_eq!(QueueKind::Kernel.discipline(ReclaimKind::Bsd, PAGE), Discipline::Freebsd82);
        assert_eq!(QueueKind::Kernel.discipline(ReclaimKind::Freebsd8, PAGE), Discipline::Freebsd82);
        for r in [ReclaimKind::Linux22, ReclaimKind::Clock, ReclaimKind::Lru, ReclaimKind::Policy] {
            assert_eq!(QueueKind::Kernel.discipline(r, PAGE), Discipline::Linux22 { max_pages: 30 });
        }
        assert_eq!(QueueKind::Fifo.discipline(ReclaimKind::Bsd, PAGE), Discipline::Fifo);
        assert_eq!(QueueKind::Linux22.discipline(ReclaimKind::Bsd, PAGE), Discipline::Linux22 { max_pages: 30 });
        assert_eq!(QueueKind::Freebsd82.discipline(ReclaimKind::Linux22, PAGE), Discipline::Freebsd82);
    }
}
