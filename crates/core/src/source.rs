//! What a run reads: a trace file or a built-in workload, as a value that can be opened
//! any number of times (OPT's pre-pass opens its source twice).

use std::path::PathBuf;

use crate::trace::{open_trace, RefSource, TraceFormat};
use crate::workload::open_workload;
use crate::Result;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// A trace file; format detected when `None`; page size defaults to the format's.
    Trace { path: PathBuf, format: Option<TraceFormat>, page_size: Option<u64> },
    /// A built-in workload with `name=value` parameters.
    Workload { name: String, params: Vec<(String, String)>, page_size: u64, seed: u64 },
}

impl SourceSpec {
    /// Opens a fresh stream from the beginning.
    pub fn open(&self) -> Result<Box<dyn RefSource>> {
        match self {
            SourceSpec::Trace { path, format, page_size } => open_trace(path, *format, *page_size),
            SourceSpec::Workload { name, params, page_size, seed } => {
                open_workload(name, params, *page_size, *seed)
            }
        }
    }
}
