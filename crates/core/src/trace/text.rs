//! CSV / plain-text traces: one reference (or record, with a repeat column) per line.
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::input::{
    open_lines, parse_decimal, parse_number, quote, resolve_page_size, Folder, Lines, PidSet, MAX_LINE,
};
use super::writer::{Sink, TraceWriter};
use super::{check_page_size, AccessKind, RefBatch, RefSource, Reference, SourceMeta, BATCH_RECORDS};
use crate::{Error, Result};

const DEFAULT_PAGE_SIZE: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Pid,
    Page,
    Addr,
    Kind,
    Repeat,
    Gap,
}

fn column(name: &[u8]) -> Option<Col> {
    let n = name.to_ascii_lowercase();
    Some(match n.as_slice() {
        b"pid" => Col::Pid,
        b"page" => Col::Page,
        b"addr" | b"address" => Col::Addr,
        b"kind" | b"op" | b"rw" | b"type" => Col::Kind,
        b"repeat" | b"count" => Col::Repeat,
        b"gap" => Col::Gap,
        _ => return None,
    })
}

/// Access kind from a letter or word (case-insensitive). Called on every line of a trace
/// with a kind column: it allocates nothing (a lowercased copy of each field cost more
/// than the rest of its parsing).
pub(crate) fn parse_kind(s: &[u8]) -> Option<AccessKind> {
    const WORDS: [(&[u8], AccessKind); 9] = [
        (b"read", AccessKind::Read),
        (b"load", AccessKind::Read),
        (b"write", AccessKind::Write),
        (b"store", AccessKind::Write),
        (b"modify", AccessKind::Write),
        (b"instr", AccessKind::Instruction),
        (b"instruction", AccessKind::Instruction),
        (b"ifetch", AccessKind::Instruction),
        (b"free", AccessKind::Free),
    ];
    if let [c] = s {
        return match c.to_ascii_lowercase() {
            b'r' | b'l' => Some(AccessKind::Read),
            b'w' | b's' | b'm' => Some(AccessKind::Write),
            b'i' => Some(AccessKind::Instruction),
            b'f' => Some(AccessKind::Free),
            _ => None,
        };
    }
    WORDS.iter().find(|(w, _)| w.eq_ignore_ascii_case(s)).map(|&(_, k)| k)
}

/// A decimal number of at most 32 bits (a pid, repeat count or gap).
fn decimal_u32(s: &[u8]) -> Option<u32> {
    parse_decimal(s).and_then(|v| u32::try_from(v).ok())
}

/// Most fields of a line kept (a line has a handful; more is an error, reported with
/// their number).
const MAX_FIELDS: usize = 16;

/// The fields of a line, on the stack: a reader allocates nothing per line.
struct Fields<'a> {
    f: [&'a [u8]; MAX_FIELDS],
    /// Fields in the line (may exceed the ones kept).
    n: usize,
}

impl<'a> Fields<'a> {
    fn new() -> Self {
        Fields { f: [&[]; MAX_FIELDS], n: 0 }
    }
    fn push(&mut self, field: &'a [u8]) {
        if self.n < MAX_FIELDS {
            self.f[self.n] = field;
        }
        self.n += 1;
    }
    /// Fields in the line.
    fn count(&self) -> usize {
        self.n
    }
}

impl<'a> std::ops::Deref for Fields<'a> {
    type Target = [&'a [u8]];
    fn deref(&self) -> &Self::Target {
        &self.f[..self.n.min(MAX_FIELDS)]
    }
}

/// Splits a line into fields: by commas if it has any (fields trimmed), else by
/// whitespace. Returns false if a comma-separated field is empty.
fn split<'a>(line: &'a [u8], out: &mut Fields<'a>) -> bool {
    out.n = 0;
    let Some(first) = line.iter().position(|&c| c == b',') else {
        for f in line.split(|c| c.is_ascii_whitespace()).filter(|f| !f.is_empty()) {
            out.push(f);
        }
        return true;
    };
    let mut rest = line;
    let mut comma = Some(first);
    loop {
        let (field, next) = match comma {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &b""[..]),
        };
        let f = field.trim_ascii();
        if f.is_empty() {
            return false;
        }
        out.push(f);
        if comma.is_none() {
            return true;
        }
        rest = next;
        comma = rest.iter().position(|&c| c == b',');
    }
}

/// The record of a data line under a header, in one pass over the line, when the line
/// has the plain form a writer makes (no spaces, no empty field, not a free, the
/// header's number of fields) and every field is valid; else None, and the line goes
/// through `parse_fields`, which accepts the other forms and words every error. Returns
/// the record (page not yet set) and the value of its page or address column, with
/// whether it is an address. `line` is a line without its end (`next_line`'s).
#[inline]
fn plain_record(cols: &[Col], line: &[u8]) -> Option<(Reference, u64, bool)> {
    plain_fields::<false>(cols, line).map(|(r, value, addr, _)| (r, value, addr))
}

/// `plain_record` of the line at the start of `rest`, a reader's buffer, and the line's
/// length with its "\n" or "\r\n" (None when `rest` holds no whole line).
#[inline(always)]
fn plain_line(cols: &[Col], rest: &[u8]) -> Option<(Reference, u64, bool, usize)> {
    plain_fields::<true>(cols, rest)
}

/// `plain_record` and `plain_line`, in one pass: each field's digits are summed as it is
/// searched for its end. `IN_BUFFER`: the line ends at its "\n", and `rest` without one
/// holds no whole line; else the line is all of `rest`.
#[inline(always)]
fn plain_fields<const IN_BUFFER: bool>(cols: &[Col], rest: &[u8]) -> Option<(Reference, u64, bool, usize)> {
    if rest.first()?.is_ascii_alphabetic() {
        return None; // may be a header line
    }
    let mut r = Reference { pid: 0, page: 0, kind: AccessKind::Read, repeat: 1, gap: 0 };
    let (mut value, mut addr) = (0, false);
    let mut at = 0;
    for (i, c) in cols.iter().enumerate() {
        let start = at;
        let (mut v, mut digits) = (0u64, true);
        let end = loop {
            let b = match rest.get(at) {
                Some(&b) => b,
                None if IN_BUFFER => return None,
                None => break b'\n',
            };
            if b == b',' || b == b'\n' {
                break b;
            }
            let d = b.wrapping_sub(b'0');
            digits &= d < 10;
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            at += 1;
        };
        if (end == b'\n') != (i + 1 == cols.len()) || at > MAX_LINE {
            return None;
        }
        let field = &rest[start..at];
        at += 1;
        // up to 19 digits cannot overflow; longer fields (leading zeros), hex, words and
        // a last field before a "\r\n" line end (its "\r" dropped here, so that the
        // digit loop stays as short as it was without the case) take the slice parsers
        let decimal = (digits && !field.is_empty() && field.len() <= 19).then_some(v);
        let sliced = || if end == b'\n' { field.strip_suffix(b"\r").unwrap_or(field) } else { field };
        let small = || match decimal {
            Some(v) => u32::try_from(v).ok(),
            None => decimal_u32(sliced()),
        };
        match c {
            Col::Pid => r.pid = small()?,
            Col::Page | Col::Addr => {
                value = match decimal {
                    Some(v) => v,
                    None => parse_number(sliced())?.0,
                };
                addr = *c == Col::Addr;
            }
            Col::Kind => r.kind = parse_kind(sliced()).filter(|&k| k != AccessKind::Free)?,
            Col::Repeat => r.repeat = small().filter(|&n| n > 0)?,
            Col::Gap => r.gap = small()?,
        }
    }
    Some((r, value, addr, at))
}

/// The value of a headerless line of one decimal number (a page number), and the line's
/// length with its "\n" or "\r\n"; None for any other line (hex is an address there,
/// and the other forms have more fields), which `parse_fields` reads.
#[inline(always)]
fn plain_number_line(rest: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut at = 0;
    loop {
        let b = *rest.get(at)?;
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        at += 1;
    }
    let end = match &rest[at..] {
        [b'\n', ..] => 1,
        [b'\r', b'\n', ..] => 2,
        _ => return None,
    };
    (1..=19).contains(&at).then_some((v, at + end))
}

/// The page of a page-number (`is_addr` false) or address value, None when a page
/// number of `native`-byte pages cannot be read at `page_size` (`page_of` words it).
#[inline(always)]
fn page_number(v: u64, is_addr: bool, native: u64, log_page: u32, page_size: u64) -> Option<u64> {
    if is_addr {
        Some(v >> log_page)
    } else if page_size >= native {
        Some(v >> (log_page - native.trailing_zeros()))
    } else {
        None
    }
}

/// Parses a header line; None if the line is not one (some field is not a column name).
fn parse_header_line(fields: &[&[u8]]) -> Option<Vec<Col>> {
    if fields.is_empty() {
        return None;
    }
    fields.iter().map(|f| column(f)).collect()
}

enum Layout {
    Headerless,
    Header(Vec<Col>),
}

/// The records of the lines `parse` takes in place (`Lines::take_buffered`), into
/// the batch until it is full, their processes noted; one function per line form, so that
/// the loop does not ask which form at every line (a match per line cost 3-4%).
fn take_records<R: std::io::BufRead>(
    lines: &mut Lines<R>,
    (folder, pids, processes, batch): (&mut Folder, &mut PidSet, &mut Vec<(u32, String)>, &mut RefBatch),
    parse: impl Fn(&[u8]) -> Option<(Reference, usize)>,
) -> Result<u64> {
    lines.take_buffered(|rest| {
        if batch.len() >= BATCH_RECORDS {
            return None;
        }
        let (r, n) = parse(rest)?;
        if pids.insert(r.pid) {
            processes.push((r.pid, String::new()));
        }
        folder.push(r, batch);
        Some(n)
    })
}

/// Lines the line reader reads after `take_plain_lines` took none, doubled at each such
/// try in a row up to `SLOW_RUN_MOST`: where a file's lines are not plain (spaces after
/// the commas, say), a try per line cost a third more; where one line is not (a
/// comment, a line across the buffer's end), 64 lines are nothing.
const SLOW_RUN: u32 = 64;
const SLOW_RUN_MOST: u32 = 1 << 16;

/// Streaming reader of CSV / text traces.
pub(crate) struct CsvSource {
    meta: SourceMeta,
    lines: Lines<BufReader<Box<dyn Read + Send>>>,
    layout: Layout,
    folder: Folder,
    /// Unit of page-number values.
    native: u64,
    log_page: u32,
    /// The first data line is already in `lines.buf`.
    stashed: bool,
    /// Lines left to the line reader before `take_plain_lines` is tried again, after it
    /// took none, and the length of the next such run ([`SLOW_RUN`]).
    slow: u32,
    slow_run: u32,
    done: bool,
    pids: PidSet,
}

impl CsvSource {
    pub fn open(path: &Path, page_size: Option<u64>) -> Result<CsvSource> {
        let mut lines = open_lines(path)?;
        let mut native = None;
        let mut layout = Layout::Headerless;
        let mut stashed = false;
        while lines.next_line()? {
            let l = lines.buf.trim_ascii();
            if l.is_empty() {
                continue;
            }
            if l[0] == b'#' {
                if lines.line_no == 1 {
                    let c = l[1..].trim_ascii();
                    if let Some(rest) = c.strip_prefix(b"page_size") {
                        let rest = rest.trim_ascii();
                        let v = rest.strip_prefix(b"=").map(|r| r.trim_ascii()).and_then(parse_decimal);
                        match v {
                            Some(v) if check_page_size(v).is_ok() => native = Some(v),
                            _ => {
                                return Err(lines.error(format!(
                                    "expected '# page_size=N' with N a power of two from 64 to 1073741824, got '{}'",
                                    quote(l)
                                )))
                            }
                        }
                    }
                }
                continue;
            }
            let mut fields = Fields::new();
            if !split(l, &mut fields) {
                stashed = true; // reported as a data line error
                break;
            }
            if l[0].is_ascii_alphabetic() {
                if let Some(cols) = parse_header_line(&fields) {
                    check_columns(&lines, &cols)?;
                    layout = Layout::Header(cols);
                    break;
                }
            }
            stashed = true;
            break;
        }
        let has_pages = native.is_some() || matches!(&layout, Layout::Header(c) if c.contains(&Col::Page));
        let native = native.unwrap_or(DEFAULT_PAGE_SIZE);
        let ps = if has_pages {
            resolve_page_size(path, page_size, native, native)?.0
        } else {
            // only byte addresses so far: any valid page size (page numbers met later are checked)
            resolve_page_size(path, page_size, 1, native)?.0
        };
        Ok(CsvSource {
            meta: SourceMeta { name: path.display().to_string(), page_size: ps, processes: Vec::new(), records: None },
            lines,
            layout,
            folder: Folder::new(),
            native,
            log_page: ps.trailing_zeros(),
            stashed,
            slow: 0,
            slow_run: SLOW_RUN,
            done: false,
            pids: PidSet::default(),
        })
    }

    /// The plain lines (`plain_line`; without a header, `plain_number_line`) already
    /// read, parsed where they lie; the first other line stops it, and goes through
    /// `next_line` and `parse_fields`, which give every error its line. After a try that
    /// takes none, the line reader reads the next `slow_run` lines first ([`SLOW_RUN`]).
    fn take_plain_lines(&mut self, batch: &mut RefBatch) -> Result<()> {
        if self.slow > 0 {
            self.slow -= 1;
            return Ok(());
        }
        let (native, log_page, page_size) = (self.native, self.log_page, self.meta.page_size);
        let (lines, into) = (&mut self.lines, (&mut self.folder, &mut self.pids, &mut self.meta.processes, batch));
        let taken = match &self.layout {
            Layout::Header(cols) => take_records(lines, into, |rest| {
                let (mut r, value, addr, n) = plain_line(cols, rest)?;
                r.page = page_number(value, addr, native, log_page, page_size)?;
                Some((r, n))
            }),
            // without a header: lines of one page number, process 0's reads
            Layout::Headerless => take_records(lines, into, |rest| {
                let (value, n) = plain_number_line(rest)?;
                let page = page_number(value, false, native, log_page, page_size)?;
                Some((Reference { pid: 0, page, kind: AccessKind::Read, repeat: 1, gap: 0 }, n))
            }),
        }?;
        if taken == 0 {
            self.slow = self.slow_run;
            self.slow_run = (2 * self.slow_run).min(SLOW_RUN_MOST);
        } else {
            self.slow_run = SLOW_RUN;
        }
        Ok(())
    }

    fn page_of(&self, v: u64, is_addr: bool) -> Result<u64> {
        if let Some(page) = page_number(v, is_addr, self.native, self.log_page, self.meta.page_size) {
            Ok(page)
        } else {
            Err(self.lines.error(format!(
                "a page number of {}-byte pages cannot be read at page size {}; use a page size of at least {} or byte addresses (0x...)",
                self.native, self.meta.page_size, self.native
            )))
        }
    }

    /// Parses the line in `lines.buf` (not blank, not a comment).
    fn parse_line(&mut self) -> Result<Option<Reference>> {
        let line = std::mem::take(&mut self.lines.buf);
        let r = self.parse_fields(&line);
        self.lines.buf = line;
        r
    }

    fn parse_fields(&mut self, line: &[u8]) -> Result<Option<Reference>> {
        let l = line.trim_ascii();
        let mut f = Fields::new();
        if !split(l, &mut f) {
            return Err(self.lines.error(format!("expected no empty fields, got '{}'", quote(l))));
        }
        if l[0].is_ascii_alphabetic() {
            if let Some(cols) = parse_header_line(&f) {
                check_columns(&self.lines, &cols)?;
                self.layout = Layout::Header(cols);
                return Ok(None);
            }
        }
        let mut r = Reference { pid: 0, page: 0, kind: AccessKind::Read, repeat: 1, gap: 0 };
        match &self.layout {
            Layout::Headerless => {
                let (pid, value, kind) = match f.count() {
                    1 => (None, f[0], None),
                    2 if parse_kind(f[1]).is_some() => (None, f[0], Some(f[1])),
                    2 => (Some(f[0]), f[1], None),
                    3 => (Some(f[0]), f[1], Some(f[2])),
                    _ => (None, &b""[..], None),
                };
                let bad = || {
                    if f.count() == 1 {
                        format!("expected a page number or address (decimal or 0x hex), got '{}'", quote(l))
                    } else {
                        format!(
                            "expected 'value', 'value,kind', 'pid,value' or 'pid,value,kind' (value: decimal page number or 0x address; kind: r/w/i/f), got '{}'",
                            quote(l)
                        )
                    }
                };
                let (v, hex) = parse_number(value).ok_or_else(|| self.lines.error(bad()))?;
                if let Some(p) = pid {
                    r.pid = decimal_u32(p).ok_or_else(|| self.lines.error(bad()))?;
                }
                if let Some(k) = kind {
                    r.kind = parse_kind(k).ok_or_else(|| self.lines.error(bad()))?;
                }
                r.page = self.page_of(v, hex)?;
                if r.kind == AccessKind::Free {
                    r.repeat = 0;
                    if !hex && self.meta.page_size > self.native {
                        // part of a larger page: the page itself stays allocated
                        return Ok(None);
                    }
                }
            }
            Layout::Header(cols) => {
                if f.count() != cols.len() {
                    return Err(self.lines.error(format!(
                        "expected {} fields ({}), got {} in '{}'",
                        cols.len(),
                        cols.iter().map(|c| format!("{c:?}").to_lowercase()).collect::<Vec<_>>().join(","),
                        f.count(),
                        quote(l)
                    )));
                }
                let mut value = (0u64, false);
                for (c, s) in cols.iter().zip(f.iter()) {
                    let err = |what: &str| self.lines.error(format!("column '{}': expected {what}, got '{}'", format!("{c:?}").to_lowercase(), quote(s)));
                    match c {
                        Col::Pid => {
                            r.pid = decimal_u32(s).ok_or_else(|| err("a pid (decimal, 32 bits)"))?
                        }
                        Col::Page => value = (parse_number(s).ok_or_else(|| err("a page number (decimal or 0x hex)"))?.0, false),
                        Col::Addr => value = (parse_number(s).ok_or_else(|| err("a byte address (decimal or 0x hex)"))?.0, true),
                        Col::Kind => r.kind = parse_kind(s).ok_or_else(|| err("a kind (r/w/i/f, read/write/instruction/free, l/s/m)"))?,
                        Col::Repeat => {
                            r.repeat = decimal_u32(s).ok_or_else(|| err("a repeat count from 1 to 4294967295 (0 or 1 for a free)"))?
                        }
                        Col::Gap => {
                            r.gap = decimal_u32(s).ok_or_else(|| err("a gap (decimal, 32 bits)"))?
                        }
                    }
                }
                r.page = self.page_of(value.0, value.1)?;
                if r.kind == AccessKind::Free {
                    // a free stands for no reference: repeat 0 (as written) or 1
                    if r.repeat > 1 {
                        return Err(self.lines.error(format!(
                            "column 'repeat': expected 0 or 1 for a free (f), got {} in '{}'",
                            r.repeat,
                            quote(l)
                        )));
                    }
                    r.repeat = 0;
                    if !value.1 && self.meta.page_size > self.native {
                        // part of a larger page: the page itself stays allocated
                        return Ok(None);
                    }
                } else if r.repeat == 0 {
                    return Err(self.lines.error(format!(
                        "column 'repeat': expected a repeat count from 1 to 4294967295 (0 or 1 for a free), got '0' in '{}'",
                        quote(l)
                    )));
                }
            }
        }
        Ok(Some(r))
    }
}

fn check_columns<R: std::io::BufRead>(lines: &Lines<R>, cols: &[Col]) -> Result<()> {
    for (i, c) in cols.iter().enumerate() {
        if cols[..i].contains(c) || (*c == Col::Addr && cols.contains(&Col::Page)) {
            return Err(lines.error("expected each column once and only one of 'page' and 'addr' in the header line"));
        }
    }
    if !cols.contains(&Col::Page) && !cols.contains(&Col::Addr) {
        return Err(lines.error("expected a 'page' or 'addr' column in the header line"));
    }
    Ok(())
}

impl RefSource for CsvSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        while !self.done && batch.len() < BATCH_RECORDS {
            if !self.stashed {
                self.take_plain_lines(batch)?;
                if batch.len() >= BATCH_RECORDS {
                    break;
                }
            }
            if self.stashed {
                self.stashed = false;
            } else if !self.lines.next_line()? {
                self.done = true;
                self.folder.flush(batch);
                break;
            }
            let l = self.lines.buf.trim_ascii();
            if l.is_empty() || l[0] == b'#' {
                continue;
            }
            let plain = match &self.layout {
                Layout::Header(cols) => plain_record(cols, l),
                Layout::Headerless => None,
            };
            let parsed = match plain {
                Some((mut r, value, addr)) => self.page_of(value, addr).map(|page| {
                    r.page = page;
                    Some(r)
                }),
                None => self.parse_line(),
            };
            let r = match parsed {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            if self.pids.insert(r.pid) {
                self.meta.processes.push((r.pid, String::new()));
            }
            self.folder.push(r, batch);
        }
        Ok(self.folder.assign_ids(batch))
    }

    fn distinct_pages(&self) -> u32 {
        self.folder.densifier.len()
    }

    fn detach_ids(&mut self) -> Option<super::Densifier> {
        self.folder.detach()
    }

    fn attach_ids(&mut self, ids: super::Densifier) {
        self.folder.attach(ids)
    }
}

pub(crate) fn open(path: &Path, page_size: Option<u64>) -> Result<Box<dyn RefSource>> {
    Ok(Box::new(CsvSource::open(path, page_size)?))
}

/// Writer of CSV traces: `# page_size=N`, a header, one line per record.
pub(crate) struct CsvWriter {
    sink: Sink,
    path: PathBuf,
    buf: Vec<u8>,
    page_size: u64,
    started: bool,
    gap_col: bool,
    records: u64,
}

impl CsvWriter {
    pub fn new(file: File, out: &Path, page_size: u64, compress: bool) -> Result<CsvWriter> {
        let sink = Sink::new(file, compress).map_err(|e| Error::io(out, e))?;
        Ok(CsvWriter { sink, path: out.to_path_buf(), buf: Vec::with_capacity(1 << 20), page_size, started: false, gap_col: false, records: 0 })
    }

    fn header(&mut self) {
        self.buf.extend_from_slice(if self.gap_col { b"pid,page,kind,repeat,gap\n" } else { b"pid,page,kind,repeat\n" });
    }

    fn start(&mut self, gaps: bool) {
        let _ = writeln!(self.buf, "# page_size={}", self.page_size);
        self.gap_col = gaps;
        self.header();
        self.started = true;
    }
}

impl TraceWriter for CsvWriter {
    fn write_batch(&mut self, b: &RefBatch) -> Result<()> {
        if !self.started {
            self.start(b.gap.iter().any(|&g| g != 0));
        }
        for i in 0..b.len() {
            if b.gap[i] != 0 && !self.gap_col {
                // a gap first seen after the header: repeat the header with a gap column
                self.gap_col = true;
                self.header();
            }
            let k = match b.kind[i] {
                AccessKind::Read => 'r',
                AccessKind::Write => 'w',
                AccessKind::Instruction => 'i',
                AccessKind::Free => 'f',
            };
            let _ = if self.gap_col {
                writeln!(self.buf, "{},{},{},{},{}", b.pid[i], b.page[i], k, b.repeat[i], b.gap[i])
            } else {
                writeln!(self.buf, "{},{},{},{}", b.pid[i], b.page[i], k, b.repeat[i])
            };
            self.records += 1;
            if self.buf.len() >= 1 << 20 {
                self.sink.write_all(&self.buf).map_err(|e| Error::io(&self.path, e))?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _meta: &SourceMeta) -> Result<u64> {
        let mut me = *self;
        if !me.started {
            me.start(false);
        }
        let path = me.path.clone();
        me.sink.write_all(&me.buf).map_err(|e| Error::io(&path, e))?;
        let mut f = me.sink.finish().map_err(|e| Error::io(&path, e))?;
        f.flush().map_err(|e| Error::io(&path, e))?;
        Ok(me.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A field as a writer makes it, or one of the forms only `parse_fields` reads (or
    /// rejects): spaces, hex, words, out-of-range numbers, empty.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0u64..5000).prop_map(|v| v.to_string()),
            1 => prop_oneof![Just("r"), Just("W"), Just("i"), Just("f"), Just("read"), Just("Store"), Just("free"), Just("x")].prop_map(String::from),
            1 => prop_oneof![Just(" 7"), Just("0x1f"), Just("0"), Just("4294967296"), Just(""), Just("1 2"), Just("-3")].prop_map(String::from),
        ]
    }

    proptest! {
        /// Where the one-pass reading of a data line gives a record, it is the record
        /// `parse_fields` gives; the lines a writer makes always take the one pass.
        #[test]
        fn plain_record_agrees_with_parse_fields(
            header in prop::sample::select(vec!["pid,page,kind,repeat", "pid,page,kind,repeat,gap", "addr,kind", "page", "kind,page,pid"]),
            raw in prop::collection::vec(prop::collection::vec(field(), 1..6), 1..40),
            plain in (0u32..3, 0u64..1 << 40, prop::sample::select(vec!['r', 'w', 'i']), 1u32..5),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("t.csv");
            std::fs::write(&p, format!("# page_size=4096\n{header}\n")).unwrap();
            let mut src = CsvSource::open(&p, Some(8192)).unwrap();
            let Layout::Header(cols) = &src.layout else { panic!("no header") };
            let cols = cols.clone();
            for fields in raw {
                let line = fields.join(",");
                let l = line.as_bytes().trim_ascii();
                if l.is_empty() {
                    continue;
                }
                let one = plain_record(&cols, l);
                if let Some((mut r, value, addr)) = one {
                    r.page = src.page_of(value, addr).unwrap();
                    prop_assert_eq!(src.parse_fields(l).ok().flatten(), Some(r), "line '{}'", line);
                }
                // in place, with its line end: the same record, or the line left to the
                // line reader
                let in_place = plain_line(&cols, format!("{line}\n").as_bytes());
                if let Some((r, value, addr, n)) = in_place {
                    prop_assert_eq!(Some((r, value, addr)), one, "line '{}'", line);
                    prop_assert_eq!(n, line.len() + 1);
                    let crlf = plain_line(&cols, format!("{line}\r\n").as_bytes());
                    prop_assert_eq!(crlf, Some((r, value, addr, line.len() + 2)));
                } else if line.as_bytes() == l {
                    prop_assert!(one.is_none(), "'{}' not read in place", line);
                }
                prop_assert!(plain_line(&cols, line.as_bytes()).is_none(), "'{}' read without its line end", line);
            }
            if header == "pid,page,kind,repeat" {
                let (pid, page, kind, repeat) = plain;
                let line = format!("{pid},{page},{kind},{repeat}");
                let one = plain_record(&cols, line.as_bytes());
                prop_assert!(one.is_some(), "'{}' not read in one pass", line);
                let in_place = plain_line(&cols, format!("{line}\n").as_bytes());
                prop_assert_eq!(in_place, one.map(|(r, value, addr)| (r, value, addr, line.len() + 1)));
                let (mut r, value, addr) = one.unwrap();
                r.page = src.page_of(value, addr).unwrap();
                prop_assert_eq!(src.parse_fields(line.as_bytes()).unwrap(), Some(r));
            }
        }
    }
}
