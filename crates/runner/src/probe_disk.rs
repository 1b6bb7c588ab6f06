//! Measures the device under a directory as the swap path uses it (issue 17's
//! calibration): 4 KiB random reads one at a time (a swap-in that misses readahead), and
//! sequential writes one at a time, 4 KiB each (page-outs of consecutive slots) and
//! 1 MiB each (the block layer's merged requests), all with O_DIRECT so that the page
//! cache is not what is measured. The file is created (never an existing one), filled,
//! measured and removed, also when a step fails.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{fdatasync, open, unlink, Mode, OFlags};
use rustix::io::{pread, pwrite};

use crate::spin::monotonic_ns;

const SMALL: usize = 4096;
const LARGE: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{path}: {what}: {source}")]
    Io { path: String, what: &'static str, source: std::io::Error },
    #[error("{0}")]
    Invalid(String),
}

/// What the disk probe measured. Times in microseconds, rates in MB/s (10^6 bytes).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DiskProbe {
    pub path: String,
    pub file_bytes: u64,
    /// 4 KiB random reads, one at a time: each one's time, sorted.
    pub random_read_4k_us: Vec<f64>,
    /// 4 KiB sequential writes, one at a time (the last one waits for the data to be
    /// on the device): the mean per write.
    pub seq_write_4k_us: f64,
    /// 1 MiB sequential writes then fdatasync: bytes per second.
    pub seq_write_mb_s: f64,
    /// 1 MiB sequential reads: bytes per second.
    pub seq_read_mb_s: f64,
}

impl DiskProbe {
    pub fn median_read_us(&self) -> f64 {
        quantile(&self.random_read_4k_us, 0.5)
    }
}

/// The q-quantile of sorted values (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// A buffer aligned for O_DIRECT.
struct Aligned {
    ptr: *mut u8,
    layout: Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, SMALL).expect("a valid layout");
        // SAFETY: a non-zero size with a power-of-two alignment
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for a {len}-byte probe buffer");
        // a pattern that no file system can compress or skip
        for i in 0..len {
            // SAFETY: within the allocation
            unsafe { *ptr.add(i) = (i as u32).wrapping_mul(2654435761).to_le_bytes()[3] };
        }
        Aligned { ptr, layout }
    }

    fn slice(&self, len: usize) -> &[u8] {
        // SAFETY: len <= the allocation, initialised above
        unsafe { std::slice::from_raw_parts(self.ptr, len) }
    }

    fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: as above, and &mut self is the only access
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Removes the probe file when dropped, whatever happened.
struct ProbeFile {
    path: PathBuf,
    fd: OwnedFd,
}

impl Drop for ProbeFile {
    fn drop(&mut self) {
        let _ = unlink(&self.path);
    }
}

/// A small deterministic generator for the random offsets (xorshift64*).
struct Offsets(u64);

impl Offsets {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D) % below
    }
}

/// Probes the device holding `dir` with a file of `mb` MiB and `reads` random reads.
pub fn probe_disk(dir: &Path, mb: u64, reads: usize) -> Result<DiskProbe, ProbeError> {
    if !(1..=65536).contains(&mb) {
        return Err(ProbeError::Invalid(format!("--probe-mb: expected 1 to 65536 MiB, got {mb}")));
    }
    if reads == 0 || reads > 1_000_000 {
        return Err(ProbeError::Invalid(format!("--probe-reads: expected 1 to 1000000 reads, got {reads}")));
    }
    let path = dir.join(format!(".pagelab-probe-{}", std::process::id()));
    let shown = path.display().to_string();
    let io = |what: &'static str| {
        let shown = shown.clone();
        move |e: rustix::io::Errno| ProbeError::Io { path: shown, what, source: e.into() }
    };
    let fd = open(&path, OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::DIRECT, Mode::from_raw_mode(0o600))
        .map_err(io("cannot create the probe file (O_DIRECT)"))?;
    let file = ProbeFile { path: path.clone(), fd };
    let bytes = mb << 20;
    let mut buf = Aligned::new(LARGE);

    // 1 MiB sequential writes, then the data on the device: the write bandwidth
    let t0 = monotonic_ns();
    let mut off = 0;
    while off < bytes {
        write_all(&file, buf.slice(LARGE), off).map_err(io("write"))?;
        off += LARGE as u64;
    }
    fdatasync(&file.fd).map_err(io("fdatasync"))?;
    let seq_write_mb_s = bytes as f64 / ((monotonic_ns() - t0) as f64 / 1e9) / 1e6;

    // 4 KiB sequential writes one at a time, over the first 16 MiB (or the file)
    let small_writes = (bytes.min(16 << 20) / SMALL as u64) as usize;
    let t0 = monotonic_ns();
    for i in 0..small_writes {
        write_all(&file, buf.slice(SMALL), (i * SMALL) as u64).map_err(io("write"))?;
    }
    fdatasync(&file.fd).map_err(io("fdatasync"))?;
    let seq_write_4k_us = (monotonic_ns() - t0) as f64 / 1e3 / small_writes as f64;

    // 1 MiB sequential reads: the read bandwidth
    let t0 = monotonic_ns();
    let mut off = 0;
    while off < bytes {
        read_all(&file, buf.slice_mut(LARGE), off).map_err(io("read"))?;
        off += LARGE as u64;
    }
    let seq_read_mb_s = bytes as f64 / ((monotonic_ns() - t0) as f64 / 1e9) / 1e6;

    // 4 KiB random reads, one at a time
    let blocks = bytes / SMALL as u64;
    let mut rng = Offsets(0x9E37_79B9_7F4A_7C15);
    let mut random_read_4k_us = Vec::with_capacity(reads);
    for _ in 0..reads {
        let at = rng.next(blocks) * SMALL as u64;
        let t = monotonic_ns();
        read_all(&file, buf.slice_mut(SMALL), at).map_err(io("read"))?;
        random_read_4k_us.push((monotonic_ns() - t) as f64 / 1e3);
    }
    random_read_4k_us.sort_by(f64::total_cmp);
    drop(file);
    Ok(DiskProbe { path: shown, file_bytes: bytes, random_read_4k_us, seq_write_4k_us, seq_write_mb_s, seq_read_mb_s })
}

fn write_all(f: &ProbeFile, buf: &[u8], mut off: u64) -> Result<(), rustix::io::Errno> {
    let mut done = 0;
    while done < buf.len() {
        let n = pwrite(&f.fd, &buf[done..], off)?;
        if n == 0 {
            return Err(rustix::io::Errno::NOSPC);
        }
        done += n;
        off += n as u64;
    }
    Ok(())
}

fn read_all(f: &ProbeFile, buf: &mut [u8], mut off: u64) -> Result<(), rustix::io::Errno> {
    let mut done = 0;
    while done < buf.len() {
        let n = pread(&f.fd, &mut buf[done..], off)?;
        if n == 0 {
            return Err(rustix::io::Errno::IO);
        }
        done += n;
        off += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_removes_its_file() {
        let dir = std::env::temp_dir();
        let p = match probe_disk(&dir, 2, 50) {
            Ok(p) => p,
            // tmpfs takes no O_DIRECT: nothing to measure there, and nothing left behind
            Err(ProbeError::Io { what, .. }) if what.starts_with("cannot create") => {
                eprintln!("skipped: {} takes no O_DIRECT", dir.display());
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!(p.random_read_4k_us.len(), 50);
        assert!(p.random_read_4k_us.windows(2).all(|w| w[0] <= w[1]));
        assert!(p.median_read_us() > 0.0 && p.seq_write_mb_s > 0.0 && p.seq_read_mb_s > 0.0 && p.seq_write_4k_us > 0.0);
        assert!(!Path::new(&p.path).exists());
        assert!(probe_disk(&dir, 0, 10).is_err() && probe_disk(&dir, 1, 0).is_err());
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.0);
        assert_eq!(quantile(&v, 0.9), 4.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
