//! `trace capture`: Valgrind lackey output streamed into a pagelab trace.
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    let lines = Lines::new(BufReader::with_capacity(READ_PIECE, PatientReader::new(input)), PathBuf::from(input_name), false);
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

/// The most one read takes from the pipe.
const READ_PIECE: usize = 1 << 20;
/// A read shorter than this means the reader is ahead of the writer.
const SHORT_READ: usize = 64 << 10;
/// How long the reader then waits before the next read.
const SHORT_READ_WAIT: Duration = Duration::from_millis(2);

/// A pipe read in large pieces. Valgrind writes lackey's text a few hundred bytes at a
/// time; a reader that is faster than valgrind (ours is: it parses about four times as
/// fast as lackey writes) would otherwise be woken, and would wake valgrind, for nearly
/// every write: in a capture of gzip this doubled our CPU time and added a third to
/// valgrind's. After a short read it waits 2 ms, in which valgrind (tens of MB/s) fills
/// the pipe with about 100 KB without blocking (the pipe is widened to 1 MiB where the
/// system allows, python/pagelab/capture.py), so one wakeup carries a thousand lines.
struct PatientReader<R> {
    inner: R,
    short: bool,
}

impl<R> PatientReader<R> {
    fn new(inner: R) -> Self {
        PatientReader { inner, short: false }
    }
}

impl<R: Read> Read for PatientReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.short {
            std::thread::sleep(SHORT_READ_WAIT);
        }
        let n = self.inner.read(buf)?;
        self.short = n > 0 && n < SHORT_READ.min(buf.len());
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader handing out at most `piece` bytes a read, as a pipe does.
    struct Trickle<'a> {
        data: &'a [u8],
        piece: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.piece.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_patient_reader_passes_every_byte_in_order() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut r = PatientReader::new(Trickle { data: &data, piece: 7000 });
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn a_capture_from_a_trickling_pipe_equals_one_from_a_file() {
        let text: String = (0..5000u64).map(|i| format!("I  {:08x},3\n L {:08x},8\n", 0x400000 + i, 0x10000 + (i * 512) % 40960)).collect();
        let dir = std::env::temp_dir().join(format!("pagelab-capture-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.plt"), dir.join("b.plt"));
        let sa = capture_lackey(Trickle { data: text.as_bytes(), piece: 333 }, "lackey", &a, 4096, false, true, &mut |_| true).unwrap();
        let sb = capture_lackey(text.as_bytes(), "lackey", &b, 4096, false, true, &mut |_| true).unwrap();
        assert_eq!(sa, sb);
        assert_eq!(sa.references, 5000);
        assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "the two traces differ");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
