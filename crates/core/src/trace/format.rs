//! Format names, detection and the one entry point that opens any trace file.
use std::path::Path;

use super::RefSource;
use crate::{Error, Result};

/// The trace formats pagelab reads (all) and writes (all but lackey).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    Pagelab,
    Csv,
    Lackey,
    Oracle,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 4] =
        [TraceFormat::Pagelab, TraceFormat::Csv, TraceFormat::Lackey, TraceFormat::Oracle];

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Pagelab => "pagelab",
            TraceFormat::Csv => "csv",
            TraceFormat::Lackey => "lackey",
            TraceFormat::Oracle => "oracle",
        }
    }

    pub fn from_name(name: &str) -> Result<TraceFormat> {
        TraceFormat::ALL.iter().copied().find(|f| f.name() == name).ok_or_else(|| {
            Error::invalid("format", format!("unknown trace format '{name}' (expected one of: pagelab, csv, lackey, oracle)"))
        })
    }
}

/// Page sizes pagelab accepts: powers of two from 64 B (numa-page-migration.txt) to 1 GiB.
pub fn check_page_size(page_size: u64) -> Result<()> {
    if page_size.is_power_of_two() && (64..=1 << 30).contains(&page_size) {
        Ok(())
    } else {
        Err(Error::invalid("page size", format!("expected a power of two from 64 to 1073741824 bytes, got {page_size}")))
    }
}

/// Opens a trace file as a stream. `format: None` detects it from the content and name.
pub fn open_trace(path: &Path, format: Option<TraceFormat>, page_size: Option<u64>) -> Result<Box<dyn RefSource>> {
    let _ = (path, format, page_size);
    todo!("formats helper")
}
