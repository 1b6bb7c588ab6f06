//! Output side shared by `convert` and `capture`: atomic output files and the writer
//! trait every writable format implements.
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{RefBatch, SourceMeta, TraceFormat};
use crate::{Error, Result};

/// A format writer. Batches arrive in stream order; `finish` completes the file (the
/// caller then renames it into place) and returns the number of records written.
pub(crate) trait TraceWriter {
    fn write_batch(&mut self, b: &RefBatch) -> Result<()>;
    /// `meta` is the source's final metadata (process names may be known only at the end).
    fn finish(self: Box<Self>, meta: &SourceMeta) -> Result<u64>;
}

/// Creates the writer of `format` over `file`. `out` names the final path in errors.
pub(crate) fn create_writer(
    format: TraceFormat,
    file: File,
    out: &Path,
    page_size: u64,
    compress: bool,
) -> Result<Box<dyn TraceWriter>> {
    match format {
        TraceFormat::Pagelab => Ok(Box::new(super::pagelab_binary::PagelabWriter::new(file, out, page_size, compress)?)),
        TraceFormat::Csv => Ok(Box::new(super::text::CsvWriter::new(file, out, page_size, compress)?)),
        TraceFormat::Oracle => Ok(Box::new(super::oracle::OracleWriter::new(file, out, page_size, compress))),
        TraceFormat::Lackey => Err(Error::invalid(
            "format",
            format!("{}: lackey is a read-only format (write pagelab, csv or oracle instead)", out.display()),
        )),
    }
}

/// An output written to a temporary file beside its destination and renamed onto it at
/// the end; dropped without [`AtomicOut::commit`], it removes the temporary file.
pub(crate) struct AtomicOut {
    tmp: PathBuf,
    out: PathBuf,
    committed: bool,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl AtomicOut {
    pub fn create(out: &Path) -> Result<(AtomicOut, File)> {
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = out
            .file_name()
            .ok_or_else(|| Error::invalid("output", format!("{}: not a file name", out.display())))?
            .to_string_lossy()
            .into_owned();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
            match OpenOptions::new().read(true).write(true).create_new(true).open(&tmp) {
                Ok(f) => return Ok((AtomicOut { tmp, out: out.to_path_buf(), committed: false }, f)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(out, e)),
            }
        }
    }

    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.out).map_err(|e| Error::io(&self.out, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicOut {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A byte sink that is either the plain writer or a zstd stream (with checksum) over it.
pub(crate) enum Sink<W: Write = io::BufWriter<File>> {
    Raw(W),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl Sink {
    pub fn new(file: File, compress: bool) -> io::Result<Sink> {
        Sink::over(io::BufWriter::with_capacity(1 << 20, file), compress)
    }

    /// Ends the zstd frame if any, flushes, and returns the file.
    pub fn finish(self) -> io::Result<File> {
        self.finish_inner()?.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write> Sink<W> {
    pub fn over(w: W, compress: bool) -> io::Result<Sink<W>> {
        if compress {
            let mut enc = zstd::stream::write::Encoder::new(w, 3)?;
            enc.include_checksum(true)?;
            Ok(Sink::Zstd(enc))
        } else {
            Ok(Sink::Raw(w))
        }
    }

    pub fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Raw(w) => w.write_all(b),
            Sink::Zstd(w) => w.write_all(b),
        }
    }

    /// Ends the zstd frame if any and returns the writer underneath.
    pub fn finish_inner(self) -> io::Result<W> {
        match self {
            Sink::Raw(w) => Ok(w),
            Sink::Zstd(enc) => enc.finish(),
        }
    }
}

/// Runs `src` through `writer` with progress reporting; shared by convert and capture.
pub(crate) fn pump(
    src: &mut dyn super::RefSource,
    writer: &mut dyn TraceWriter,
    progress: super::Progress,
    mut on_batch: impl FnMut(&RefBatch),
) -> Result<()> {
    let mut batch = RefBatch::with_capacity(super::BATCH_RECORDS);
    let mut done: u64 = 0;
    loop {
        let n = src.next_batch(&mut batch)?;
        if n == 0 {
            break;
        }
        writer.write_batch(&batch)?;
        on_batch(&batch);
        done += n as u64;
        if !progress(done) {
            return Err(Error::Interrupted);
        }
    }
    Ok(())
}
