//! Writes any source in any writable format, atomically (temporary file, then rename).
use std::path::Path;

use super::{Progress, RefSource, TraceFormat};
use crate::Result;

/// Returns the number of records written.
pub fn convert(src: &mut dyn RefSource, out: &Path, format: TraceFormat, compress: bool, progress: Progress) -> Result<u64> {
    let _ = (src, out, format, compress, progress);
    todo!("formats helper")
}
