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
    let format = match format {
        Some(f) => f,
        None => detect(path)?,
    };
    match format {
        TraceFormat::Pagelab => super::pagelab_binary::open(path, page_size),
        TraceFormat::Csv => super::text::open(path, page_size),
        TraceFormat::Lackey => super::lackey::open(path, page_size),
        TraceFormat::Oracle => super::oracle::open(path, page_size),
    }
}

/// How many leading bytes detection looks at.
const SNIFF_BYTES: usize = 64 * 1024;

/// The format of a file by content (magic numbers), then name, then text sniffing.
pub(crate) fn detect(path: &Path) -> Result<TraceFormat> {
    let (prefix, compressed) = super::input::read_prefix(path, SNIFF_BYTES)?;
    if prefix.starts_with(&super::pagelab_binary::MAGIC) {
        return Ok(TraceFormat::Pagelab);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = match name.strip_suffix(".zst") {
        Some(n) if compressed => n.to_string(),
        _ => name,
    };
    if let Some(f) = by_extension(&name) {
        return Ok(f);
    }
    // text sniffing: valid-looking text (no NUL bytes)
    if !prefix.is_empty() && !prefix.contains(&0) {
        // the last line of a cut prefix may be partial
        let text = if prefix.len() == SNIFF_BYTES {
            match prefix.iter().rposition(|&c| c == b'\n') {
                Some(i) => &prefix[..i],
                None => &prefix[..],
            }
        } else {
            &prefix[..]
        };
        return Ok(if super::lackey::looks_like_lackey(text) { TraceFormat::Lackey } else { TraceFormat::Csv });
    }
    Err(Error::invalid(
        "format",
        format!(
            "{}: cannot tell the trace format from the content or the name (formats: pagelab .plt, csv .csv/.txt, lackey .lackey, oracle .oracleGeneral/.bin, each optionally .zst); give it with --format",
            path.display()
        ),
    ))
}

/// Format from a (lowercase, `.zst`-less) file name.
fn by_extension(name: &str) -> Option<TraceFormat> {
    const TABLE: [(&str, TraceFormat); 7] = [
        (".plt", TraceFormat::Pagelab),
        (".lackey", TraceFormat::Lackey),
        (".lackey.txt", TraceFormat::Lackey),
        (".csv", TraceFormat::Csv),
        (".txt", TraceFormat::Csv),
        (".oraclegeneral", TraceFormat::Oracle),
        (".bin", TraceFormat::Oracle),
    ];
    TABLE.iter().find(|(ext, _)| name.ends_with(ext)).map(|&(_, f)| f)
}
