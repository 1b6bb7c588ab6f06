//! Writes any source in any writable format, atomically (temporary file, then rename).
use std::path::Path;

use super::writer::{create_writer, pump, AtomicOut};
use super::{Progress, RefSource, TraceFormat};
use crate::{Error, Result};

/// Returns the number of records written (for oracleGeneral, which has one record per
/// reference, the number of references).
pub fn convert(src: &mut dyn RefSource, out: &Path, format: TraceFormat, compress: bool, progress: Progress) -> Result<u64> {
    if format == TraceFormat::Lackey {
        return Err(Error::invalid(
            "format",
            format!("{}: lackey is a read-only format (write pagelab, csv or oracle instead)", out.display()),
        ));
    }
    // the temporary file is removed on every error path when `tmp` is dropped
    let (tmp, file) = AtomicOut::create(out)?;
    let mut writer = create_writer(format, file, out, src.meta().page_size, compress)?;
    pump(src, writer.as_mut(), progress, |_| {})?;
    let n = writer.finish(src.meta())?;
    tmp.commit()?;
    Ok(n)
}
