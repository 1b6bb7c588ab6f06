//! The runner's own numbers from /proc/self: faults, resident size, and the region's
//! share of it, so that its memory beyond the region can be reported.

use std::fs;

#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct MemoryNumbers {
    /// VmRSS of the whole runner.
    pub rss_bytes: u64,
    /// VmHWM: peak resident size of the whole runner.
    pub peak_rss_bytes: u64,
    /// Resident bytes of the region.
    pub region_rss_bytes: u64,
    /// Swapped-out bytes of the region.
    pub region_swap_bytes: u64,
    /// rss_bytes - region_rss_bytes: the runner itself (code, heap, stream buffers).
    pub own_rss_bytes: u64,
    /// Its anonymous part (RssAnon less the region's): heap, stacks, stream buffers,
    /// which its memory cgroup is charged for; its code and libraries are file pages,
    /// mostly in the page cache already and charged to whoever read them first.
    pub own_anon_bytes: u64,
}

fn kib_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l[key.len()..].split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// Memory numbers; the region is the mappings inside `[region_base, region_base +
/// region_len)` (madvise can split it into several).
pub fn memory(region_base: usize, region_len: usize) -> MemoryNumbers {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = kib_field(&status, "VmRSS:").unwrap_or(0);
    let hwm = kib_field(&status, "VmHWM:").unwrap_or(0);
    let anon = kib_field(&status, "RssAnon:").unwrap_or(0);
    let smaps = fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let region_end = region_base + region_len;
    let mut region_rss = 0;
    let mut region_swap = 0;
    let mut region_anon = 0;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            let (a, b) = (usize::from_str_radix(a, 16).unwrap_or(0), usize::from_str_radix(b, 16).unwrap_or(0));
            inside = a >= region_base && b <= region_end;
            continue;
        }
        if inside {
            if let Some(v) = kib_field(line, "Rss:") {
                region_rss += v;
            } else if let Some(v) = kib_field(line, "Swap:") {
                region_swap += v;
            } else if let Some(v) = kib_field(line, "Anonymous:") {
                region_anon += v;
            }
        }
    }
    MemoryNumbers {
        rss_bytes: rss,
        peak_rss_bytes: hwm,
        region_rss_bytes: region_rss,
        region_swap_bytes: region_swap,
        own_rss_bytes: rss.saturating_sub(region_rss),
        own_anon_bytes: anon.saturating_sub(region_anon),
    }
}

/// (minor faults, major faults) of this process from /proc/self/stat.
pub fn faults() -> (u64, u64) {
    let stat = fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the command name (which may hold spaces) start after the last ')'
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); minflt is field 10, majflt field 12
    let get = |field: usize| f.get(field - 3).and_then(|v| v.parse().ok()).unwrap_or(0);
    (get(10), get(12))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_numbers_are_read() {
        let (minor, _) = faults();
        assert!(minor > 0);
        let m = memory(0, 0);
        assert!(m.rss_bytes > 0 && m.own_rss_bytes == m.rss_bytes);
    }
}
