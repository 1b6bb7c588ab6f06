//! `trace capture`: Valgrind lackey output streamed into a pagelab trace.
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::input::Lines;
use super::lackey::LackeySource;
use super::writer::{create_writer, pump, AtomicOut};
use super::{check_page_size, Progress, RefSource, TraceFormat};
use crate::Result;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureStats {
    pub lines: u64,
    pub references: u64,
    pub records: u64,
    pub distinct_pages: u64,
}

/// Parses lackey output from `input` as it arrives (the text is never stored), folds it
/// into records and writes a pagelab trace to `out` atomically. With `data_only`,
/// instruction fetches are dropped while parsing (loads, stores and modifies remain).
/// Errors name `input_name` and the line; a line cut short (a killed program) is an
/// error.
pub fn capture_lackey<R: Read + Send>(input: R, input_name: &str, out: &Path, page_size: u64, compress: bool, data_only: bool, progress: Progress) -> Result<CaptureStats> {
    check_page_size(page_size)?;
    let lines = Lines::new(BufReader::with_capacity(1 << 18, input), PathBuf::from(input_name), false);
    let mut src = LackeySource::new(lines, input_name, input_name, page_size).data_only(data_only);
    let (tmp, file) = AtomicOut::create(out)?;
    let mut writer = create_writer(TraceFormat::Pagelab, file, out, page_size, compress)?;
    pump(&mut src, writer.as_mut(), progress, |_| {})?;
    let records = writer.finish(src.meta())?;
    tmp.commit()?;
    Ok(CaptureStats {
        lines: src.lines.line_no,
        references: src.references,
        records,
        distinct_pages: src.distinct_pages() as u64,
    })
}
