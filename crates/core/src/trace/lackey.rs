//! Valgrind lackey output (`valgrind --tool=lackey --trace-mem=yes`): a streaming line
//! parser over any `BufRead`, used by `open_trace` and by `capture`.
use std::io::BufRead;
use std::path::Path;

use super::input::{file_name, open_lines, parse_decimal, parse_hex, quote, resolve_page_size, Folder, Lines};
use super::{AccessKind, RefBatch, RefSource, Reference, SourceMeta, BATCH_RECORDS};
use crate::Result;

/// Largest access size accepted on one line (lackey reports at most a vector register).
const MAX_SIZE: u64 = 1 << 20;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LackeyLine {
    /// Blank lines and Valgrind's own messages (`==pid== ...`, `--pid-- ...`).
    Skip,
    Access(AccessKind, u64, u64),
}

/// Parses one line (without its line end). Errors describe what was expected.
pub(crate) fn parse_line(line: &[u8]) -> std::result::Result<LackeyLine, String> {
    let l = line.trim_ascii_end();
    if l.iter().all(|c| c.is_ascii_whitespace()) || l.starts_with(b"==") || l.starts_with(b"--") {
        return Ok(LackeyLine::Skip);
    }
    let bad = || {
        format!(
            "expected a lackey line like 'I  0401a2b0,3' or ' L 04e2ac40,8' (I/L/S/M, hex address, comma, decimal size), got '{}'",
            quote(l)
        )
    };
    let s = l.trim_ascii_start();
    let kind = match s.first() {
        Some(b'I') => AccessKind::Instruction,
        Some(b'L') => AccessKind::Read,
        Some(b'S') | Some(b'M') => AccessKind::Write,
        _ => return Err(bad()),
    };
    let rest = &s[1..];
    if !rest.first().is_some_and(|c| c.is_ascii_whitespace()) {
        return Err(bad());
    }
    let rest = rest.trim_ascii_start();
    let comma = rest.iter().position(|&c| c == b',').ok_or_else(bad)?;
    let addr = parse_hex(&rest[..comma]).ok_or_else(bad)?;
    let size = parse_decimal(&rest[comma + 1..]).ok_or_else(bad)?;
    if size > MAX_SIZE {
        return Err(format!("expected an access size of at most {MAX_SIZE} bytes, got {size} in '{}'", quote(l)));
    }
    Ok(LackeyLine::Access(kind, addr, size))
}

/// True when the first line of `prefix` that is not blank or a Valgrind message is a
/// lackey access line.
/// An instruction fetch ('I' then a space, as lackey writes them: "I  0401a2b0,3"),
/// recognised from its first two bytes: with data_only, 77% of a capture's lines are
/// dropped without parsing their address.
fn is_instruction_line(line: &[u8]) -> bool {
    line.len() > 1 && line[0] == b'I' && line[1] == b' '
}

pub(crate) fn looks_like_lackey(prefix: &[u8]) -> bool {
    for line in prefix.split(|&c| c == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match parse_line(line) {
            Ok(LackeyLine::Skip) => continue,
            Ok(LackeyLine::Access(..)) => return true,
            Err(_) => return false,
        }
    }
    false
}

/// Streaming lackey reader: each access touches every page it spans, in address order;
/// consecutive touches fold into records. With `data_only`, instruction fetches (`I`
/// lines) are dropped as they are parsed: only loads, stores and modifies remain.
pub(crate) struct LackeySource<R: BufRead> {
    meta: SourceMeta,
    pub(crate) lines: Lines<R>,
    folder: Folder,
    log_page: u32,
    /// Pages of the current access still to emit: (next, last, kind).
    span: Option<(u64, u64, AccessKind)>,
    done: bool,
    data_only: bool,
    /// References (page touches) produced so far.
    pub(crate) references: u64,
}

impl<R: BufRead> LackeySource<R> {
    /// `page_size` must already be checked.
    pub(crate) fn new(lines: Lines<R>, name: &str, process_name: &str, page_size: u64) -> Self {
        LackeySource {
            meta: SourceMeta {
                name: name.to_string(),
                page_size,
                processes: vec![(0, process_name.to_string())],
                records: None,
            },
            lines,
            folder: Folder::new(),
            log_page: page_size.trailing_zeros(),
            span: None,
            done: false,
            data_only: false,
            references: 0,
        }
    }

    /// Drops instruction fetches (`trace capture --data-only`).
    pub(crate) fn data_only(mut self, yes: bool) -> Self {
        self.data_only = yes;
        self
    }
}

impl<R: BufRead + Send> RefSource for LackeySource<R> {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        while batch.len() < BATCH_RECORDS {
            if let Some((next, last, kind)) = self.span {
                self.folder.push(Reference { pid: 0, page: next, kind, repeat: 1, gap: 0 }, batch);
                self.references += 1;
                self.span = if next < last { Some((next + 1, last, kind)) } else { None };
                continue;
            }
            if self.done {
                break;
            }
            if !self.lines.next_line()? {
                self.done = true;
                self.folder.flush(batch);
                break;
            }
            if self.data_only && is_instruction_line(&self.lines.buf) {
                continue;
            }
            match parse_line(&self.lines.buf) {
                Ok(LackeyLine::Skip) => {}
                Ok(LackeyLine::Access(AccessKind::Instruction, ..)) if self.data_only => {}
                Ok(LackeyLine::Access(kind, addr, size)) => {
                    let end = addr.saturating_add(size.max(1) - 1);
                    self.span = Some((addr >> self.log_page, end >> self.log_page, kind));
                }
                Err(m) => {
                    self.done = true;
                    return Err(self.lines.error(m));
                }
            }
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
    let (ps, _) = resolve_page_size(path, page_size, 1, 4096)?;
    let lines = open_lines(path)?;
    let mut pname = file_name(path);
    if let Some(s) = pname.strip_suffix(".zst") {
        pname = s.to_string();
    }
    Ok(Box::new(LackeySource::new(lines, &path.display().to_string(), &pname, ps)))
}
