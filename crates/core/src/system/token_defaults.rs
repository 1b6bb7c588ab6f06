//! The swap token's section 5.3 limits scaled to the run (token-ordered-lru.txt gives no
//! values): the holding-time limit from the processes' dedicated run times, the abuse
//! limit from the page faults the swap disk can serve. docs/system-config.md (`[token]`)
//! gives the reasoning; a value given in the configuration is used as it is.

use super::config::TokenConfig;
use super::disk::{Disk, DiskModel};

/// The limits the token enforces, in simulated nanoseconds and pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLimits {
    /// The holder returns the token after holding it this long (u64::MAX: never).
    pub hold_ns: u64,
    /// A token-unsuitable mark lasts this long.
    pub unsuitable_ns: u64,
    /// More self-takes than this within `window_ns` is abuse.
    pub self_take_limit: u64,
    pub window_ns: u64,
}

fn ns(seconds: f64) -> u64 {
    (seconds * 1e9).round() as u64
}

/// The service time of one single-page read at a random place of the swap area, the
/// cost of a major fault the disk serves alone: for an HDD the overhead, the seek over
/// the mean distance between two random places, half a turn and one page's transfer;
/// for an SSD its latency and one page's transfer. Computed by the disk model itself
/// (disk.rs): between two points drawn uniformly from the area the mean of the square
/// root of their distance (the seek law) is 8/15 of the full stroke's, so a request
/// (8/15)^2 = 64/225 of the area away pays the mean seek.
pub fn random_fault_ns(model: &DiskModel, page_size: u64) -> u64 {
    const SPAN: u64 = 225 << 20;
    let disk = Disk::new(model.clone(), page_size, SPAN);
    disk.service_ns(64 << 20, 1).max(1)
}

/// The limits of `cfg`: those it gives, the others scaled to the run. `dedicated_ns`:
/// each process's run time alone (None when unknown, as for a machine built without
/// `run_system`: then there is no holding limit unless one is given).
pub fn token_limits(cfg: &TokenConfig, dedicated_ns: Option<&[u64]>, disk: &DiskModel, page_size: u64) -> TokenLimits {
    let shortest = dedicated_ns.and_then(|d| d.iter().copied().filter(|&t| t > 0).min());
    let hold_ns = match (cfg.hold_limit_s, shortest) {
        (Some(s), _) => ns(s).max(1),
        (None, Some(t)) => ((t as f64 * cfg.hold_share).round() as u64).max(1),
        (None, None) => u64::MAX,
    };
    let unsuitable_ns = match cfg.unsuitable_s {
        Some(s) => ns(s).max(1),
        None => hold_ns,
    };
    let window_ns = ns(cfg.self_take_window_s).max(1);
    let self_take_limit = cfg.self_take_limit.unwrap_or_else(|| {
        let faults = window_ns as f64 / random_fault_ns(disk, page_size) as f64;
        ((cfg.abuse_share * faults).ceil() as u64).max(1)
    });
    TokenLimits { hold_ns, unsuitable_ns, self_take_limit, window_ns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::disk::{HddParams, SsdParams};

    /// The default HDD (7200 rpm, 1-15 ms seeks, 20 MB/s, 0.1 ms overhead) serves a
    /// random 4 KiB fault in 0.1 + (1 + 14 * 8/15) + 60000/7200/2 + 0.2048 ms = 12.94 ms.
    #[test]
    fn the_default_disk_serves_about_77_random_faults_a_second() {
        let t = random_fault_ns(&DiskModel::Hdd(HddParams::default()), 4096);
        let expected = 0.1e6 + (1.0 + 14.0 * 8.0 / 15.0) * 1e6 + 60e9 / 7200.0 / 2.0 + 4096.0 * 1e3 / 20.0;
        assert!((t as f64 - expected).abs() < 2.0, "{t} vs {expected}");
        let ssd = random_fault_ns(&DiskModel::Ssd(SsdParams::default()), 4096);
        assert_eq!(ssd, 80_000 + 10_240);
    }

    #[test]
    fn limits_scale_with_the_run_unless_given() {
        let disk = DiskModel::Hdd(HddParams::default());
        let cfg = TokenConfig::default();
        let l = token_limits(&cfg, Some(&[300_000_000_000, 120_000_000_000]), &disk, 4096);
        // the shortest dedicated run, 120 s, times hold_share 1
        assert_eq!((l.hold_ns, l.unsuitable_ns), (120_000_000_000, 120_000_000_000));
        // a quarter of the 77.3 faults a second, rounded up
        assert_eq!((l.self_take_limit, l.window_ns), (20, 1_000_000_000));
        // a slower disk serves fewer faults: a lower limit
        let slow = DiskModel::Hdd(HddParams { rpm: 3600.0, ..Default::default() });
        assert!(token_limits(&cfg, None, &slow, 4096).self_take_limit < 20);
        // given values are kept; without dedicated runs no holding limit
        let given = TokenConfig { hold_limit_s: Some(60.0), unsuitable_s: Some(30.0), self_take_limit: Some(1000), ..Default::default() };
        let g = token_limits(&given, Some(&[1]), &disk, 4096);
        assert_eq!((g.hold_ns, g.unsuitable_ns, g.self_take_limit), (60_000_000_000, 30_000_000_000, 1000));
        assert_eq!(token_limits(&cfg, None, &disk, 4096).hold_ns, u64::MAX);
    }
}
