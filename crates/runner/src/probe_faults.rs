//! Measures what the kernel's fault handling costs (issue 17's calibration): the first
//! touch of an anonymous page (a minor, zero-fill fault), and the touch of a page that
//! `madvise(MADV_PAGEOUT)` sent to swap (a major fault, swap readahead included), in a
//! random order (readahead mostly misses) and in address order (it mostly hits). Wall
//! time, this process's CPU time and its fault counts are read around each phase.

use std::ffi::c_void;

use rustix::mm::{madvise, mmap_anonymous, munmap, Advice, MapFlags, ProtFlags};

use crate::self_stats::{faults, memory};
use crate::spin::{monotonic_ns, process_cpu_ns};

/// One phase of touches: what it cost and which faults it took.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TouchPhase {
    pub pages: u64,
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FaultProbe {
    pub pages: u64,
    pub page_bytes: u64,
    /// First touches (writes) of fresh pages.
    pub first_touch: TouchPhase,
    /// Bytes of the region on swap after paging it out (0 without swap).
    pub swapped_bytes: u64,
    /// Reads of the paged-out region in a random order, then (paged out again) in order.
    pub swap_in_random: Option<TouchPhase>,
    pub swap_in_sequential: Option<TouchPhase>,
}

struct Mapping {
    base: *mut c_void,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in probe_faults, unmapped once
        let _ = unsafe { munmap(self.base, self.len) };
    }
}

fn measure(pages: u64, touch: impl FnOnce()) -> TouchPhase {
    let (minor0, major0) = faults();
    let (t0, c0) = (monotonic_ns(), process_cpu_ns());
    touch();
    let (t1, c1) = (monotonic_ns(), process_cpu_ns());
    let (minor1, major1) = faults();
    TouchPhase { pages, wall_ns: t1 - t0, cpu_ns: c1 - c0, minor_faults: minor1 - minor0, major_faults: major1 - major0 }
}

/// Sends the region to swap and out of memory: MADV_PAGEOUT unmaps the pages and writes
/// them, but a page whose write was in flight stays in the swap cache (and is no longer
/// mapped, so a second MADV_PAGEOUT cannot reach it). Once the writes are done the pages
/// are mapped again from the swap cache (minor faults, no I/O: their swap copies stay
/// valid) and a second MADV_PAGEOUT drops them, clean, without writing. Returns the
/// region's bytes on swap.
fn page_out(m: &Mapping, page: usize) -> u64 {
    let base = m.base as usize;
    // SAFETY: advice on our own mapping
    let _ = unsafe { madvise(m.base, m.len, Advice::LinuxPageOut) };
    // wait for the writes: the swapped share stops growing (at most 10 s)
    let mut last = 0;
    let deadline = monotonic_ns() + 10_000_000_000;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let swap = memory(base, m.len).region_swap_bytes;
        if (swap == last && writeback_idle()) || monotonic_ns() > deadline {
            break;
        }
        last = swap;
    }
    std::hint::black_box(read_pages(m, page, 0..m.len / page));
    // SAFETY: as above
    let _ = unsafe { madvise(m.base, m.len, Advice::LinuxPageOut) };
    memory(base, m.len).region_swap_bytes
}

/// No page of the system is under writeback (/proc/meminfo).
fn writeback_idle() -> bool {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("Writeback:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok()))
        .is_none_or(|kib| kib == 0)
}

/// Reads one byte of each page, in `order`; volatile so that no read is left out.
fn read_pages(m: &Mapping, page: usize, order: impl Iterator<Item = usize>) -> u64 {
    let mut sum = 0u64;
    for i in order {
        // SAFETY: i < pages, inside the mapping
        sum = sum.wrapping_add(unsafe { std::ptr::read_volatile((m.base as *const u8).add(i * page)) } as u64);
    }
    sum
}

/// Probes with a region of `pages` pages of the system's page size.
pub fn probe_faults(pages: u64) -> Result<FaultProbe, String> {
    if !(16..=(1 << 24)).contains(&pages) {
        return Err(format!("--probe-pages: expected 16 to 16777216 pages, got {pages}"));
    }
    let page = rustix::param::page_size();
    let len = pages as usize * page;
    // SAFETY: a fresh private anonymous mapping
    let base = unsafe { mmap_anonymous(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::PRIVATE) }
        .map_err(|e| format!("cannot map {len} bytes for the fault probe: {e}"))?;
    let m = Mapping { base, len };
    // SAFETY: advice on the mapping just made (no transparent huge pages: a fault each page)
    let _ = unsafe { madvise(m.base, m.len, Advice::LinuxNoHugepage) };
    let first_touch = measure(pages, || {
        for i in 0..pages as usize {
            // SAFETY: inside the mapping
            unsafe { std::ptr::write_volatile((m.base as *mut u8).add(i * page), (i as u8) | 1) };
        }
    });
    let swapped_bytes = page_out(&m, page);
    let (mut swap_in_random, mut swap_in_sequential) = (None, None);
    if swapped_bytes > 0 {
        let mut order: Vec<usize> = (0..pages as usize).collect();
        let mut x = 0x243F_6A88_85A3_08D3u64;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        swap_in_random = Some(measure(pages, || {
            std::hint::black_box(read_pages(&m, page, order.iter().copied()));
        }));
        page_out(&m, page);
        swap_in_sequential = Some(measure(pages, || {
            std::hint::black_box(read_pages(&m, page, 0..pages as usize));
        }));
    }
    Ok(FaultProbe { pages, page_bytes: page as u64, first_touch, swapped_bytes, swap_in_random, swap_in_sequential })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_touches_are_minor_faults() {
        let p = probe_faults(2048).unwrap();
        // one zero-fill fault a page (a few more for the probe's own memory)
        assert!(p.first_touch.minor_faults >= 2048 && p.first_touch.minor_faults < 2048 + 256, "{p:?}");
        assert_eq!(p.first_touch.major_faults, 0);
        assert!(p.first_touch.wall_ns > 0);
        // without swap nothing leaves memory and no swap-in is measured
        assert_eq!(p.swap_in_random.is_some(), p.swapped_bytes > 0);
        assert!(probe_faults(1).is_err());
    }
}
