//! `trace info`: one pass over a source that counts what it holds.
use super::{Progress, RefSource};
use crate::Result;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
    pub references: u64,
    pub distinct_pages: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceInfo {
    pub name: String,
    pub page_size: u64,
    pub records: u64,
    pub references: u64,
    pub distinct_pages: u64,
    pub footprint_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    pub instructions: u64,
    pub processes: Vec<ProcessInfo>,
}

pub fn trace_info(src: &mut dyn RefSource, progress: Progress) -> Result<TraceInfo> {
    let _ = (src, progress);
    todo!("formats helper")
}
