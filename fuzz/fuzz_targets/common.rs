//! Shared by the trace-reader targets: the fuzz input is written to a file (the readers
//! open paths; /dev/shm when there is one, so no disk I/O) and read to the end at a page
//! size chosen by the input's first byte. Any error is fine; a panic, an abort, a hang
//! or memory beyond libFuzzer's -rss_limit_mb is a bug.

use std::path::PathBuf;
use std::sync::OnceLock;

use pagelab_core::trace::{open_trace, RefBatch, TraceFormat};

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let d = base.join(format!("pagelab-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a directory for the fuzz inputs");
        d
    })
}

/// Writes `bytes` to a file named `name` and reads it as `format` (None: detected).
pub fn read_all(name: &str, bytes: &[u8], format: Option<TraceFormat>, page_size: Option<u64>) {
    let path = dir().join(name);
    std::fs::write(&path, bytes).expect("writing the fuzz input");
    let Ok(mut src) = open_trace(&path, format, page_size) else { return };
    let mut batch = RefBatch::default();
    // bounded work per input: a few million records at most
    for _ in 0..64 {
        match src.next_batch(&mut batch) {
            Ok(0) | Err(_) => return,
            Ok(n) => assert_eq!(n, batch.len()),
        }
        let distinct = src.distinct_pages();
        assert!(batch.id.iter().all(|&id| id < distinct), "an id beyond the distinct pages");
    }
}

/// The page size selected by a byte: the trace's own, or a few larger ones.
pub fn page_size(selector: u8) -> Option<u64> {
    match selector % 4 {
        0 => None,
        1 => Some(4096),
        2 => Some(8192),
        _ => Some(1 << 20),
    }
}
