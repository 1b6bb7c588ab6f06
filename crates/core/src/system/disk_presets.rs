//! Presets of real drives for `[disk] preset = "..."`: the papers' swap disks from their
//! published specifications, and the engine's drive before issue 15. Keys given beside
//! a preset override it. Every value's source is in the comment beside it and in
//! docs/system-config.md; where no datasheet could be found the value says so.
//!
//! The seek curve (see [`HddParams::seek_ms`]) goes through the datasheet's
//! track-to-track, average and full-stroke times. Only requests to the swap area are
//! simulated, so where the swap partition lies on the drive does not change a seek
//! distance (the distance between two swap slots is the same wherever the partition
//! starts); it would change the media rate of a zoned drive, of which a preset gives the
//! rate of the zone the swap partition of the paper's installer lies in.

use super::disk::{HddParams, QueueKind, SequentialKind};

/// A preset: the drive, and the request queue when the preset fixes it (`legacy`).
pub struct Preset {
    pub params: HddParams,
    pub queue: Option<QueueKind>,
}

/// The preset names, for messages and docs.
pub const NAMES: [&str; 3] = ["legacy", "hercules-1999", "barracuda-2011"];

/// The preset called `name`, if any.
pub fn preset(name: &str) -> Option<Preset> {
    match name {
        "legacy" => Some(Preset { params: HddParams::legacy(), queue: Some(QueueKind::Fifo) }),
        "hercules-1999" => Some(Preset { params: ibm_deskstar_8_dhea_38451(), queue: None }),
        "barracuda-2011" => Some(Preset { params: seagate_barracuda_7200_12_st3160318as(), queue: None }),
        _ => None,
    }
}

/// token-ordered-lru.txt section 3.2: "The disk is an IBM Hercules with its capacity of
/// 8450 MB" (Linux 2.2.14, Pentium II 400 MHz). IBM's model numbers carry the capacity
/// in MB and the drive's code name in their letters: the 8,451 MB model of the
/// "Hercules" family is the Deskstar 8, DHEA-38451 (5400 rpm, 1997-98; its 1998 successor
/// Deskstar 16GP, DTTA-350840, has nearly the same capacity and the same rotation,
/// average seek and buffer, so either reading gives this preset).
///
/// Sources. No datasheet of the DHEA-38451 could be found through the search tool; the
/// values are the closest published ones:
/// - capacity: 8450 MB (the paper);
/// - 5400 rpm, 9.5 ms average seek, 512 KB buffer: the Deskstar 16GP's published figures
///   (Red Hill hard drive history, "IBM Deskstar 16GP": 5400 RPM, seek 9.5 ms, buffer
///   512k, data rate 161.9 Mbit/s), the same as IBM gave for the Deskstar 8 family;
/// - full stroke 16.7 ms: IBM's "Deskstar 40GV & 75GXP hard disk drive specifications"
///   (DTLA-305xxx, the 5400 rpm Deskstar two generations on), section 4.4.2.2 "Full
///   stroke seek (without command overhead, including settling)", read, typical (write
///   18.3 ms); the same section defines the average seek as the weighted average of all
///   seek combinations, the mean the seek curve is fitted to; no earlier IBM
///   5400 rpm specification was found;
/// - track-to-track 2.2 ms: our value for IBM's desktop drives of 1997-99 (not found);
/// - sustained transfer 12 MB/s: the 16GP's 161.9 Mbit/s media rate at the outer zone
///   (20.2 MB/s of raw bits) less ECC, servo and format overhead and averaged over the
///   zones of an older, less dense drive: an estimate, not a datasheet value;
/// - command overhead 0.3 ms: an estimate for an ATA-33 drive of 1997-99 (not found).
///
/// With an average 9.5 ms between 2.2 and 16.7 ms the square-root law alone does not fit
/// (it would give 2.2 + 8/15 x 14.5 = 9.93 ms): the curve has a linear term.
pub fn ibm_deskstar_8_dhea_38451() -> HddParams {
    HddParams {
        seek_min_ms: 2.2,
        seek_avg_ms: Some(9.5),
        seek_max_ms: 16.7,
        rpm: 5400.0,
        transfer_mb_s: 12.0,
        overhead_ms: 0.3,
        disk_mb: Some(8450.0),
        sequential: SequentialKind::SameKind,
    }
}

/// mclustering-pageout.txt section 3.1: "Seagate 160GB 7200RPM disk", FreeBSD 8.2, a 2 GB
/// swap partition. Seagate's 160 GB 7200 rpm drive of 2010-11 is the Barracuda 7200.12
/// ST3160318AS (one platter, SATA 3 Gb/s, 8 MB cache).
///
/// Sources:
/// - capacity 160,041,885,696 bytes, 7200 rpm, read look-ahead and write cache enabled
///   by default: smartctl's report of an ST3160318AS ("Model Family: Seagate Barracuda
///   7200.12", "User Capacity: 160 041 885 696 bytes", "Rotation Rate: 7200 rpm",
///   "Rd look-ahead is: Enabled", "Write cache is: Enabled");
/// - average seek 8.5 ms (read; write 9.5 ms), track-to-track 1.0 ms (read; write 1.2),
///   125 MB/s maximum sustained data rate at the outer diameter, 8 MB cache: Seagate's
///   Barracuda 7200.12 product manual and data sheet as we remember them; the manual
///   itself could not be retrieved through the search tool. Read figures are used (one
///   curve for both directions);
/// - full stroke: not in the data sheet; 15.06 ms makes the square-root law pass through
///   the track-to-track and average times (1.0 + 15/8 x 7.5), so for this drive the
///   curve is the engine's square-root law;
/// - transfer: the outer-zone rate, since FreeBSD 8.2's installer (sysinstall's automatic
///   layout) puts the swap partition right after the root file system, at the outer edge;
/// - command overhead 0.1 ms: an estimate for a SATA drive of 2010 (not in the manual).
pub fn seagate_barracuda_7200_12_st3160318as() -> HddParams {
    HddParams {
        seek_min_ms: 1.0,
        seek_avg_ms: Some(8.5),
        seek_max_ms: 1.0 + 7.5 * 15.0 / 8.0,
        rpm: 7200.0,
        transfer_mb_s: 125.0,
        overhead_ms: 0.1,
        disk_mb: Some(160_041.885_696),
        sequential: SequentialKind::SameKind,
    }
}

#[cfg(test)]
mod tests {
    use super::super::disk::{Disk, DiskModel, IoKind};
    use super::*;

    const PAGE: u64 = 4096;

    /// The mean service time of a one-page read over head and target positions spread
    /// evenly over the whole drive (a random read, as a datasheet's average assumes).
    fn mean_random_read_ns(p: &HddParams) -> f64 {
        let slots = (p.disk_mb.unwrap() * 1e6 / PAGE as f64) as u64;
        let n = 200u64;
        let mut sum = 0.0;
        let mut count = 0.0;
        for i in 0..n {
            // the head after a one-page request ending at slot h
            let h = (i * slots + slots / 2) / n;
            let mut d = Disk::new(DiskModel::Hdd(p.clone()), PAGE, slots);
            d.submit(0, IoKind::Write, h.saturating_sub(1), 1);
            for j in 0..n {
                let t = (j * slots + slots / 3) / n;
                if t != d.head() {
                    sum += d.service_ns_of(IoKind::Read, t, 1) as f64;
                    count += 1.0;
                }
            }
        }
        sum / count
    }

    /// Datasheet arithmetic of a 4 KiB random read: overhead + average seek + half a
    /// turn + 4096 bytes at the sustained rate.
    fn datasheet_random_read_ns(p: &HddParams) -> f64 {
        (p.overhead_ms + p.seek_avg_ms.unwrap() + 30_000.0 / p.rpm) * 1e6 + 4096.0 * 1e3 / p.transfer_mb_s
    }

    /// Each preset's 4 KiB random read costs what its datasheet's numbers add up to
    /// (within 1%: the grid's mean of the seek curve), and its 64 KiB sequential write
    /// exactly overhead + transfer: no seek, no rotation.
    #[test]
    fn presets_match_the_datasheet_arithmetic() {
        for (name, expect_read_ms, expect_seq_write_ns) in [
            // 0.3 + 9.5 + 5.5556 ms + 4096 B / 12 MB/s (0.3413 ms)
            ("hercules-1999", 15.6969, 300_000 + 5_461_333),
            // 0.1 + 8.5 + 4.1667 ms + 4096 B / 125 MB/s (0.0328 ms)
            ("barracuda-2011", 12.7994, 100_000 + 524_288),
        ] {
            let p = preset(name).unwrap().params;
            let datasheet = datasheet_random_read_ns(&p);
            assert!((datasheet / 1e6 - expect_read_ms).abs() < 1e-3, "{name}: {datasheet}");
            let model = mean_random_read_ns(&p);
            assert!((model - datasheet).abs() / datasheet < 0.01, "{name}: model {model} ns, datasheet {datasheet} ns");
            // a 64 KiB write continuing the previous write
            let mut d = Disk::new(DiskModel::Hdd(p.clone()), PAGE, 1 << 20);
            let first = d.submit(0, IoKind::Write, 5000, 16);
            let second = d.submit(first, IoKind::Write, 5016, 16);
            assert_eq!(second - first, expect_seq_write_ns, "{name}");
            // the first, from the head at slot 0 far away, paid a seek and half a turn
            assert!(first > expect_seq_write_ns + (30_000.0 / p.rpm * 1e6) as u64, "{name}");
        }
    }

    /// The seek curve passes through the datasheet's three points: track-to-track at the
    /// shortest distance, full stroke across the drive, and the average over all pairs.
    #[test]
    fn preset_seek_curves_pass_through_the_datasheet_points() {
        for name in ["hercules-1999", "barracuda-2011"] {
            let p = preset(name).unwrap().params;
            assert!((p.seek_ms(1e-12) - p.seek_min_ms).abs() < 1e-4, "{name}");
            assert!((p.seek_ms(1.0) - p.seek_max_ms).abs() < 1e-9, "{name}");
            // E over x, y uniform on [0, 1] of seek(|x - y|), by a fine midpoint rule
            let n = 2000;
            let mut sum = 0.0;
            for i in 0..n {
                for j in 0..n {
                    let (x, y) = ((i as f64 + 0.5) / n as f64, (j as f64 + 0.5) / n as f64);
                    sum += p.seek_ms((x - y).abs());
                }
            }
            let avg = sum / (n * n) as f64;
            assert!((avg - p.seek_avg_ms.unwrap()).abs() < 0.01, "{name}: {avg}");
            // increasing and concave
            let mut last = 0.0;
            for k in 1..=100 {
                let s = p.seek_ms(k as f64 / 100.0);
                assert!(s > last, "{name}");
                last = s;
            }
        }
        // the Barracuda's full stroke was chosen so that the square-root law fits
        let b = seagate_barracuda_7200_12_st3160318as();
        let sqrt_law = HddParams { seek_avg_ms: None, ..b.clone() };
        for f in [0.001, 0.1, 0.5, 1.0] {
            assert!((b.seek_ms(f) - sqrt_law.seek_ms(f)).abs() < 1e-12);
        }
        // the Deskstar's does not: its average is below the square-root law's
        let h = ibm_deskstar_8_dhea_38451();
        assert!(h.seek_min_ms + 8.0 / 15.0 * (h.seek_max_ms - h.seek_min_ms) > h.seek_avg_ms.unwrap() + 0.4);
    }

    #[test]
    fn every_preset_is_valid_and_legacy_is_the_old_engine() {
        for name in NAMES {
            let p = preset(name).unwrap();
            DiskModel::Hdd(p.params).validate(PAGE).unwrap();
        }
        let legacy = preset("legacy").unwrap();
        assert_eq!(legacy.queue, Some(QueueKind::Fifo));
        assert_eq!(legacy.params.sequential, SequentialKind::Never);
        assert_eq!(legacy.params.disk_mb, None);
        assert_eq!((legacy.params.seek_min_ms, legacy.params.seek_max_ms, legacy.params.rpm), (1.0, 15.0, 7200.0));
        assert_eq!((legacy.params.transfer_mb_s, legacy.params.overhead_ms), (20.0, 0.1));
        assert!(preset("hercules").is_none());
    }
}
