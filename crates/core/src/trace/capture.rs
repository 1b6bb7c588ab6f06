//! `trace capture`: Valgrind lackey output streamed into a pagelab trace.
use std::io::Read;
use std::path::Path;

use super::Progress;
use crate::Result;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureStats {
    pub lines: u64,
    pub references: u64,
    pub records: u64,
    pub distinct_pages: u64,
}

pub fn capture_lackey<R: Read + Send>(input: R, input_name: &str, out: &Path, page_size: u64, compress: bool, progress: Progress) -> Result<CaptureStats> {
    let _ = (input, input_name, out, page_size, compress, progress);
    todo!("formats helper")
}
