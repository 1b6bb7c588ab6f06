//! Shared plumbing of the trace readers: opening files (plain or whole-file zstd),
//! chunked binary reading with byte positions, folding of consecutive references,
//! page-size resolution and regrouping.
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{check_page_size, AccessKind, Densifier, RefBatch, RefSource, Reference, SourceMeta, BATCH_RECORDS};
use crate::error::Position;
use crate::{Error, Result};

pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Opens a file for reading; a missing or unreadable file is an [`Error::Io`].
pub(crate) fn open_file(path: &Path) -> Result<File> {
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    match f.metadata() {
        Ok(m) if m.is_dir() => Err(Error::io(path, io::Error::new(io::ErrorKind::InvalidInput, "is a directory"))),
        _ => Ok(f),
    }
}

/// Reads up to `n` bytes from the start of `path` (decompressed when `decompress` and the
/// file is zstd). Decompression errors just end the prefix early.
pub(crate) fn read_prefix(path: &Path, n: usize) -> Result<(Vec<u8>, bool)> {
    let mut f = open_file(path)?;
    let mut raw = Vec::with_capacity(n.min(1 << 16));
    (&mut f).take(n as u64).read_to_end(&mut raw).map_err(|e| Error::io(path, e))?;
    if raw.len() >= 4 && raw[..4] == ZSTD_MAGIC {
        let f = open_file(path)?;
        let mut out = Vec::new();
        if let Ok(dec) = zstd::stream::read::Decoder::new(f) {
            let mut take = dec.take(n as u64);
            let mut chunk = [0u8; 8192];
            loop {
                match take.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => out.extend_from_slice(&chunk[..k]),
                }
            }
        }
        return Ok((out, true));
    }
    Ok((raw, false))
}

/// A text or binary stream over a file, decompressing it when it is a zstd file.
/// `compressed` tells the error mappers whether an I/O error is really corrupt data.
pub(crate) fn open_stream(path: &Path) -> Result<(Box<dyn Read + Send>, bool)> {
    let mut f = open_file(path)?;
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match f.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    use std::io::Seek;
    f.seek(io::SeekFrom::Start(0)).map_err(|e| Error::io(path, e))?;
    if got == 4 && magic == ZSTD_MAGIC {
        let dec = zstd::stream::read::Decoder::new(f).map_err(|e| Error::io(path, e))?;
        Ok((Box::new(dec), true))
    } else {
        Ok((Box::new(f), false))
    }
}

/// Maps an error met while reading a stream: a block of a pagelab body that fails its
/// checksum is a format error at the block; in a zstd stream an error means corrupt or
/// truncated compressed data (a format error), else an operating-system I/O error.
pub(crate) fn read_error(path: &Path, compressed: bool, position: Position, e: io::Error) -> Error {
    if let Some(m) = e.get_ref().and_then(|x| x.downcast_ref::<super::block_crc::ChecksumMismatch>()) {
        return Error::format(path, Position::Byte(m.offset), m.message.clone());
    }
    if compressed {
        Error::format(path, position, format!("corrupt or truncated zstd data: {e}"))
    } else {
        Error::io(path, e)
    }
}

/// Buffered binary reading in large chunks, parsing from a slice. Tracks the logical
/// byte offset (in the decompressed stream) of every buffered byte.
pub(crate) struct Chunks {
    pub r: Box<dyn Read + Send>,
    pub buf: Vec<u8>,
    pub pos: usize,
    pub end: usize,
    /// Logical offset of `buf[0]`.
    pub base: u64,
    pub eof: bool,
    pub compressed: bool,
}

impl Chunks {
    pub fn new(r: Box<dyn Read + Send>, base: u64, compressed: bool, capacity: usize) -> Self {
        Chunks { r, buf: vec![0; capacity], pos: 0, end: 0, base, eof: false, compressed }
    }

    #[inline]
    pub fn avail(&self) -> usize {
        self.end - self.pos
    }

    /// Logical offset of the next unread byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Moves the unread bytes to the front and reads until at least `need` bytes are
    /// buffered or the stream ends. Returns the number of buffered bytes.
    pub fn fill(&mut self, need: usize, path: &Path) -> Result<usize> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if need > self.buf.len() {
            self.buf.resize(need, 0);
        }
        while !self.eof && self.end < need {
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let at = Position::Byte(self.base + self.end as u64);
                    self.eof = true;
                    return Err(read_error(path, self.compressed, at, e));
                }
            }
        }
        Ok(self.end)
    }

    /// Reads exactly `n` bytes, or returns None (with the bytes available consumed
    /// untouched) when the stream ends first.
    pub fn take(&mut self, n: usize, path: &Path) -> Result<Option<&[u8]>> {
        if self.avail() < n {
            self.fill(n, path)?;
            if self.avail() < n {
                return Ok(None);
            }
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(Some(s))
    }

    /// True when no byte is left in the stream (reads to the end to find out, which also
    /// makes a zstd decoder verify its checksum).
    pub fn at_end(&mut self, path: &Path) -> Result<bool> {
        if self.avail() > 0 {
            return Ok(false);
        }
        self.fill(1, path)?;
        Ok(self.avail() == 0)
    }
}

#[inline]
pub(crate) fn le32(s: &[u8], p: usize) -> u32 {
    u32::from_le_bytes([s[p], s[p + 1], s[p + 2], s[p + 3]])
}

#[inline]
pub(crate) fn le64(s: &[u8], p: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[p..p + 8]);
    u64::from_le_bytes(b)
}

/// Folds consecutive references by the same process to the same page with the same
/// kind into one record, and assigns dense ids in first-touch order. A reference that
/// carries a gap (instructions since the previous record) starts a new record so that
/// the gap survives; a repeat count that would overflow starts a new record too.
#[derive(Default)]
pub(crate) struct Folder {
    pending: Option<Reference>,
    pub densifier: Densifier,
    /// The densifier is out ([`RefSource::detach_ids`]): batches leave without ids.
    detached: bool,
    /// Records carry next-access times ([`Folder::keep_next`]); the record in progress
    /// has `pending_next`, the time after its last reference.
    with_next: bool,
    pending_next: u64,
}

impl Folder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a reference; pushes at most one finished record onto `out`.
    #[inline(always)]
    pub fn push(&mut self, r: Reference, out: &mut RefBatch) {
        if let Some(p) = &mut self.pending {
            if p.pid == r.pid && p.page == r.page && p.kind == r.kind && r.gap == 0 {
                if let Some(sum) = p.repeat.checked_add(r.repeat) {
                    p.repeat = sum;
                    return;
                }
            }
            // its id comes in `assign_ids`, for the whole batch at once
            out.push(0, &*p);
            debug_assert!(!self.with_next, "records with next-access times are pushed by push_reads_with_next");
        }
        self.pending = Some(r);
    }

    /// `push` of a read of `pid` at each page of `pages`, in one loop (formats whose
    /// records are all reads of one process, such as oracleGeneral, spend most of their
    /// decoding here). The finished records' pages and repeats gather in arrays on the
    /// stack, indexed by a counter in a register, and go to the batch a block at a time
    /// with the fields they share: pushing each record into the batch's six vectors
    /// reloaded every vector's length and capacity from memory at every push.
    #[inline(always)]
    pub fn push_reads(&mut self, pid: u32, pages: impl Iterator<Item = u64>, out: &mut RefBatch) {
        self.reads::<false>(pid, pages.map(|page| (page, 0)), out);
    }

    /// From the first record on, records carry next-access times: every record then
    /// comes through `push_reads_with_next`.
    pub fn keep_next(&mut self) {
        debug_assert!(self.pending.is_none(), "the times start with the stream");
        self.with_next = true;
    }

    /// Whether records carry next-access times ([`Folder::keep_next`]).
    pub fn keeps_next(&self) -> bool {
        self.with_next
    }

    /// `push_reads` of (page, next-access time) pairs, after `keep_next`: a record's time
    /// is its last reference's, and goes to the batch's `next_access`.
    #[inline(always)]
    pub fn push_reads_with_next(&mut self, pid: u32, reads: impl Iterator<Item = (u64, u64)>, out: &mut RefBatch) {
        debug_assert!(self.with_next);
        self.reads::<true>(pid, reads, out);
    }

    #[inline(always)]
    fn reads<const NEXT: bool>(&mut self, pid: u32, reads: impl Iterator<Item = (u64, u64)>, out: &mut RefBatch) {
        const BLOCK: usize = 256;
        let (mut page_of, mut repeat_of, mut next_of) = ([0u64; BLOCK], [0u32; BLOCK], [0u64; BLOCK]);
        let mut k = 0;
        let flush = |out: &mut RefBatch, page_of: &[u64], repeat_of: &[u32], next_of: &[u64]| {
            let n = out.len() + page_of.len();
            out.page.extend_from_slice(page_of);
            out.repeat.extend_from_slice(repeat_of);
            if NEXT {
                out.next_access.extend_from_slice(next_of);
            }
            out.id.resize(n, 0);
            out.pid.resize(n, pid);
            out.kind.resize(n, AccessKind::Read);
            out.gap.resize(n, 0);
        };
        let read = |page| Reference { pid, page, kind: AccessKind::Read, repeat: 1, gap: 0 };
        let plain = |p: &Reference| p.pid == pid && p.kind == AccessKind::Read && p.gap == 0;
        let mut reads = reads.peekable();
        // a record in progress of another form (another process or kind, or a gap it
        // keeps) takes the general rule until it is finished (never with times: their
        // records are all of this form)
        while self.pending.as_ref().is_some_and(|p| !plain(p)) {
            debug_assert!(!NEXT);
            match reads.next() {
                Some((page, _)) => self.push(read(page), out),
                None => return,
            }
        }
        // the record in progress: (page, repeat, next-access time)
        let mut pending = self.pending.take().map(|p| (p.page, p.repeat, self.pending_next));
        for (page, next) in reads {
            if let Some((p, repeat, at)) = &mut pending {
                if *p == page && *repeat < u32::MAX {
                    *repeat += 1;
                    *at = next;
                    continue;
                }
                page_of[k] = *p;
                repeat_of[k] = *repeat;
                next_of[k] = *at;
                k += 1;
                if k == BLOCK {
                    flush(out, &page_of, &repeat_of, &next_of);
                    k = 0;
                }
            }
            pending = Some((page, 1, next));
        }
        flush(out, &page_of[..k], &repeat_of[..k], &next_of[..k]);
        self.pending = pending.map(|(page, repeat, next)| {
            self.pending_next = next;
            Reference { repeat, ..read(page) }
        });
    }

    /// Pushes the record in progress, if any.
    pub fn flush(&mut self, out: &mut RefBatch) {
        if let Some(p) = self.pending.take() {
            out.push(0, &p);
            if self.with_next {
                out.next_access.push(self.pending_next);
            }
        }
    }

    /// Gives every record of `out` its dense id; returns the number of records. A source
    /// ends each batch with it.
    pub fn assign_ids(&mut self, out: &mut RefBatch) -> usize {
        if !self.detached {
            self.densifier.ids(&out.pid, &out.page, &mut out.id);
        }
        out.len()
    }

    /// The densifier, for the caller to assign the ids ([`RefSource::detach_ids`]).
    pub fn detach(&mut self) -> Option<Densifier> {
        if self.detached {
            return None;
        }
        self.detached = true;
        Some(std::mem::take(&mut self.densifier))
    }

    /// Takes back what `detach` gave, with the ids assigned since.
    pub fn attach(&mut self, densifier: Densifier) {
        self.densifier = densifier;
        self.detached = false;
    }
}

/// The page size to read a trace at: `requested` (or the default) must be a valid page
/// size and a multiple of `native` (the unit of the file's page numbers; 1 for byte
/// addresses). Returns (page size, right shift from native units to output pages).
pub(crate) fn resolve_page_size(path: &Path, requested: Option<u64>, native: u64, default: u64) -> Result<(u64, u32)> {
    let ps = requested.unwrap_or(default);
    check_page_size(ps).map_err(|e| match e {
        Error::Invalid { message, .. } => Error::invalid("page size", format!("{}: {message}", path.display())),
        other => other,
    })?;
    if ps < native || !ps.is_multiple_of(native) {
        return Err(Error::invalid(
            "page size",
            format!(
                "{}: page size {ps} cannot be used: the trace holds page numbers of {native}-byte pages, so the page size must be a multiple of {native}",
                path.display()
            ),
        ));
    }
    Ok((ps, (ps / native).trailing_zeros()))
}

/// A source read at a larger page size than its own: page numbers are shifted, then
/// references folded again and re-densified.
pub(crate) struct Regroup {
    inner: Box<dyn RefSource>,
    meta: SourceMeta,
    shift: u32,
    buf: RefBatch,
    pos: usize,
    folder: Folder,
    done: bool,
}

impl Regroup {
    pub fn new(inner: Box<dyn RefSource>, page_size: u64, shift: u32) -> Self {
        let mut meta = inner.meta().clone();
        meta.page_size = page_size;
        meta.records = None;
        Regroup { inner, meta, shift, buf: RefBatch::with_capacity(BATCH_RECORDS), pos: 0, folder: Folder::new(), done: false }
    }
}

impl RefSource for Regroup {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }
    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        while !self.done && batch.len() < BATCH_RECORDS {
            if self.pos == self.buf.len() {
                self.pos = 0;
                if self.inner.next_batch(&mut self.buf)? == 0 {
                    self.done = true;
                    self.folder.flush(batch);
                    break;
                }
                // process names may be discovered while reading
                if self.inner.meta().processes.len() != self.meta.processes.len() {
                    self.meta.processes = self.inner.meta().processes.clone();
                }
            }
            let mut r = self.buf.get(self.pos);
            self.pos += 1;
            if r.kind == super::AccessKind::Free && self.shift > 0 {
                // a free of part of a larger page: the page itself stays allocated
                continue;
            }
            r.page >>= self.shift;
            self.folder.push(r, batch);
        }
        Ok(self.folder.assign_ids(batch))
    }
    fn distinct_pages(&self) -> u32 {
        self.folder.densifier.len()
    }
}

/// Remembers processes in order of first appearance (cheap for runs of one pid).
#[derive(Default)]
pub(crate) struct PidSet {
    last: Option<u32>,
    seen: rustc_hash::FxHashSet<u32>,
}

impl PidSet {
    /// True when `pid` was not seen before.
    #[inline]
    pub fn insert(&mut self, pid: u32) -> bool {
        if self.last == Some(pid) {
            return false;
        }
        self.last = Some(pid);
        self.seen.insert(pid)
    }
}

/// Longest line the text readers (csv, lackey, capture) accept, without its line end.
/// A trace line is a few dozen bytes; the cap keeps a malformed input (a zstd file
/// holding one line of gigabytes) from taking memory without bound.
pub(crate) const MAX_LINE: usize = 4096;

/// A line reader over a byte stream that counts lines, strips the line end and maps
/// read errors (corrupt zstd data included) to errors at the line being read. Lines
/// longer than [`MAX_LINE`] bytes are errors at their line, found after reading at most
/// [`MAX_LINE`] + 2 bytes of them.
pub(crate) struct Lines<R: BufRead> {
    r: R,
    pub path: PathBuf,
    pub compressed: bool,
    pub line_no: u64,
    pub buf: Vec<u8>,
    /// The last line ended without a newline.
    pub unterminated: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(r: R, path: PathBuf, compressed: bool) -> Self {
        Lines { r, path, compressed, line_no: 0, buf: Vec::with_capacity(256), unterminated: false }
    }

    /// Reads the next line into `self.buf` (without "\n" or "\r\n"); false at the end.
    pub fn next_line(&mut self) -> Result<bool> {
        self.buf.clear();
        // content, "\r\n": a line not ended within this limit is too long
        let limit = MAX_LINE + 2;
        // the reader's buffer is searched in place and the line copied once (a
        // `read_until` through a `take` adapter per line cost a tenth of reading a CSV)
        loop {
            let avail = match self.r.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(&self.path, self.compressed, Position::Line(self.line_no + 1), e)),
            };
            if avail.is_empty() {
                if self.buf.is_empty() {
                    return Ok(false);
                }
                break;
            }
            let room = limit - self.buf.len();
            let scan = &avail[..avail.len().min(room)];
            if let Some(i) = scan.iter().position(|&c| c == b'\n') {
                self.buf.extend_from_slice(&scan[..=i]);
                self.r.consume(i + 1);
                break;
            }
            let n = scan.len();
            self.buf.extend_from_slice(scan);
            self.r.consume(n);
            if self.buf.len() == limit {
                break;
            }
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            self.unterminated = false;
        } else {
            self.unterminated = true;
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > MAX_LINE {
            return Err(self.error(format!(
                "expected a line of at most {MAX_LINE} bytes, found a longer one (starting '{}')",
                quote(&self.buf[..self.buf.len().min(40)])
            )));
        }
        Ok(true)
    }

    /// Hands `take` what the reader's buffer holds, for it to take whole lines from the
    /// start, in place: it returns the length of the one line it took, line end
    /// included (a line of at most [`MAX_LINE`] bytes before it), or None to stop;
    /// returns how many lines it took. What it leaves goes through `next_line`. Copying
    /// each line out and the call per line cost a third of reading a CSV of one request
    /// a line.
    pub fn take_buffered(&mut self, mut take: impl FnMut(&[u8]) -> Option<usize>) -> Result<u64> {
        let avail = loop {
            match self.r.fill_buf() {
                Ok(a) => break a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(&self.path, self.compressed, Position::Line(self.line_no + 1), e)),
            }
        };
        let (mut at, mut taken) = (0, 0u64);
        while let Some(n) = take(&avail[at..]) {
            debug_assert!(n <= MAX_LINE + 2 && avail[at + n - 1] == b'\n', "a whole line taken");
            at += n;
            taken += 1;
        }
        self.r.consume(at);
        if taken > 0 {
            self.line_no += taken;
            self.unterminated = false;
        }
        Ok(taken)
    }

    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::format(&self.path, Position::Line(self.line_no), message)
    }
}

/// A line for an error message: lossy UTF-8, trimmed, at most 80 characters.
pub(crate) fn quote(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s.to_string()
    }
}

/// Parses a decimal or 0x-hex unsigned number. Returns (value, was hex).
pub(crate) fn parse_number(s: &[u8]) -> Option<(u64, bool)> {
    if s.len() > 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') {
        let mut v: u64 = 0;
        for &c in &s[2..] {
            let d = (c as char).to_digit(16)? as u64;
            v = v.checked_mul(16)?.checked_add(d)?;
        }
        Some((v, true))
    } else {
        parse_decimal(s).map(|v| (v, false))
    }
}

pub(crate) fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = (c as char).to_digit(16)? as u64;
        v = (v << 4) | d;
    }
    Some(v)
}

/// The file name of `path` for use as a process name.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Buffered text reader of a (possibly zstd-compressed) file.
pub(crate) fn open_lines(path: &Path) -> Result<Lines<BufReader<Box<dyn Read + Send>>>> {
    let (r, compressed) = open_stream(path)?;
    Ok(Lines::new(BufReader::with_capacity(1 << 18, r), path.to_path_buf(), compressed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn records(b: &RefBatch) -> Vec<Reference> {
        (0..b.len()).map(|i| b.get(i)).collect()
    }

    proptest! {
        /// `push_reads` is `push` of each read: the same records, split into batches at
        /// any point, after a record in progress of any kind and gap, and past a block of
        /// the stack arrays (pages drawn from a few, so that runs fold).
        #[test]
        fn push_reads_is_push_of_each_read(
            pages in prop::collection::vec(0u64..4, 0..700),
            cuts in prop::collection::vec(0usize..700, 0..4),
            first in prop::option::of((0u32..2, 0u64..4, 0u8..2, prop_oneof![Just(1u32), Just(u32::MAX - 1)], 0u32..2)),
        ) {
            let start = first.map(|(pid, page, k, repeat, gap)| {
                Reference { pid, page, kind: if k == 0 { AccessKind::Read } else { AccessKind::Write }, repeat, gap }
            });
            let (mut one, mut many) = (Folder::new(), Folder::new());
            let (mut want, mut got) = (RefBatch::default(), RefBatch::default());
            if let Some(r) = start {
                one.push(r, &mut want);
                many.push(r, &mut got);
            }
            for &page in &pages {
                one.push(Reference { pid: 0, page, kind: AccessKind::Read, repeat: 1, gap: 0 }, &mut want);
            }
            one.flush(&mut want);
            let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c.min(pages.len())).collect();
            bounds.push(0);
            bounds.push(pages.len());
            bounds.sort();
            for w in bounds.windows(2) {
                many.push_reads(0, pages[w[0]..w[1]].iter().copied(), &mut got);
            }
            many.flush(&mut got);
            prop_assert_eq!(records(&got), records(&want));
            prop_assert!(got.id.len() == got.len() && got.pid.len() == got.len() && got.gap.len() == got.len());
        }
    }
}
