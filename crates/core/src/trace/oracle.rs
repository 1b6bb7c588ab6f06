//! libCacheSim oracleGeneral traces: packed little-endian 24-byte records
//! (u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime).
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::input::{le64, open_file, open_stream, resolve_page_size, Chunks, Folder};
use super::writer::{Sink, TraceWriter};
use super::{AccessKind, RefBatch, RefSource, SourceMeta, BATCH_RECORDS, MOST_TIMED_REFERENCES};
use crate::error::Position;
use crate::{Error, Result};

pub(crate) const RECORD: usize = 24;
/// Object ids are read as page numbers of this size.
pub(crate) const NATIVE_PAGE_SIZE: u64 = 4096;

pub(crate) struct OracleSource {
    meta: SourceMeta,
    path: PathBuf,
    chunks: Chunks,
    folder: Folder,
    shift: u32,
    done: bool,
    /// References in the file, when it is not compressed (its size over 24).
    references: Option<u64>,
}

pub(crate) fn open(path: &Path, page_size: Option<u64>) -> Result<Box<dyn RefSource>> {
    let (ps, shift) = resolve_page_size(path, page_size, NATIVE_PAGE_SIZE, NATIVE_PAGE_SIZE)?;
    let (r, compressed) = open_stream(path)?;
    let mut references = None;
    if !compressed {
        let len = open_file(path)?.metadata().map_err(|e| Error::io(path, e))?.len();
        let extra = len % RECORD as u64;
        if extra != 0 {
            return Err(Error::format(
                path,
                Position::Byte(len - extra),
                format!("expected a 24-byte oracleGeneral record, found {extra} bytes before the end of the file (file size {len} is not a multiple of 24)"),
            ));
        }
        references = Some(len / RECORD as u64);
    }
    Ok(Box::new(OracleSource {
        meta: SourceMeta { name: path.display().to_string(), page_size: ps, processes: vec![(0, String::new())], records: None },
        path: path.to_path_buf(),
        chunks: Chunks::new(r, 0, compressed, 1 << 20),
        folder: Folder::new(),
        shift,
        done: false,
        references,
    }))
}

impl RefSource for OracleSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        while !self.done && batch.len() < BATCH_RECORDS {
            if self.chunks.avail() < RECORD {
                if let Err(e) = self.chunks.fill(RECORD, &self.path) {
                    self.done = true;
                    return Err(e);
                }
                let avail = self.chunks.avail();
                if avail == 0 {
                    self.done = true;
                    self.folder.flush(batch);
                    break;
                }
                if avail < RECORD {
                    self.done = true;
                    return Err(Error::format(
                        &self.path,
                        Position::Byte(self.chunks.offset()),
                        format!("expected a 24-byte oracleGeneral record, found {avail} bytes before the end of the data"),
                    ));
                }
            }
            let c = &mut self.chunks;
            // at most the records a batch has room for (each at most one batch entry)
            let n = (c.avail() / RECORD).min(BATCH_RECORDS - batch.len());
            let shift = self.shift;
            let records = c.buf[c.pos..c.pos + n * RECORD].chunks_exact(RECORD);
            if self.folder.keeps_next() {
                self.folder.push_reads_with_next(0, records.map(|r| (le64(r, 4), le64(r, 16))), batch);
            } else {
                self.folder.push_reads(0, records.map(|r| le64(r, 4) >> shift), batch);
            }
            c.pos += n * RECORD;
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

    /// The records' `next_access_vtime`, when an object is a page (no shift), the file
    /// is not compressed and it has at most [`MOST_TIMED_REFERENCES`] references.
    fn give_next_access(&mut self) -> Option<u64> {
        let n = self.references.filter(|&n| n <= MOST_TIMED_REFERENCES)?;
        if self.shift != 0 || self.chunks.offset() != 0 {
            return None;
        }
        self.folder.keep_next();
        Some(n)
    }
}

/// Most references an oracleGeneral output may have: 2^30, 24 GiB of output (the format
/// has one 24-byte record per reference; a record of pagelab with a repeat count of
/// 4294967295 alone would make 96 GiB). Larger sources are refused as soon as their
/// references pass it, before anything is written.
pub(crate) const MAX_REFERENCES: u64 = 1 << 30;

/// Writes one record per reference. The next-access times need the future, so the
/// records (not the references: a record's repeats are consecutive requests of one page)
/// are kept until `finish`: 12 bytes per record (docs/trace-format.md).
pub(crate) struct OracleWriter {
    file: Option<File>,
    path: PathBuf,
    page_size: u64,
    compress: bool,
    /// Dense id of every record.
    ids: Vec<u32>,
    /// Repeat count of every record.
    repeats: Vec<u32>,
    /// Page of every dense id.
    pages: Vec<u64>,
    references: u64,
}

impl OracleWriter {
    pub fn new(file: File, out: &Path, page_size: u64, compress: bool) -> OracleWriter {
        OracleWriter { file: Some(file), path: out.to_path_buf(), page_size, compress, ids: Vec::new(), repeats: Vec::new(), pages: Vec::new(), references: 0 }
    }
}

/// Index of the first reference of every record's next record of the same page, or
/// `u32::MAX` when it has none (a backward pass; references start at 0).
/// References fit in u32: at most [`MAX_REFERENCES`].
fn next_record_starts(ids: &[u32], repeats: &[u32], pages: usize) -> Vec<u32> {
    let mut start: u64 = repeats.iter().map(|&r| r as u64).sum();
    let mut last = vec![u32::MAX; pages];
    let mut next = vec![u32::MAX; ids.len()];
    for i in (0..ids.len()).rev() {
        start -= repeats[i] as u64;
        let id = ids[i] as usize;
        next[i] = last[id];
        last[id] = start as u32;
    }
    next
}

impl TraceWriter for OracleWriter {
    fn write_batch(&mut self, b: &RefBatch) -> Result<()> {
        for i in 0..b.len() {
            let id = b.id[i];
            if id as usize == self.pages.len() {
                self.pages.push(b.page[i]);
            } else if id as usize > self.pages.len() {
                return Err(Error::invalid(
                    "source",
                    format!("record {} has page id {id} but only {} ids were assigned (ids must be in first-touch order)", self.ids.len(), self.pages.len()),
                ));
            }
            if b.kind[i] == AccessKind::Free {
                // the format has no frees (nor kinds): dropped, the page's next touch is
                // a request of the same object
                continue;
            }
            let repeat = b.repeat[i];
            self.references += repeat as u64;
            if self.references > MAX_REFERENCES {
                return Err(Error::invalid(
                    self.path.display().to_string(),
                    format!(
                        "expected at most {MAX_REFERENCES} references for an oracleGeneral output (24 bytes each: 24 GiB), the source has more (its record {} repeats {repeat} times)",
                        self.ids.len()
                    ),
                ));
            }
            self.ids.push(id);
            self.repeats.push(repeat);
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _meta: &SourceMeta) -> Result<u64> {
        let mut me = *self;
        let path = me.path.clone();
        let io = |e| Error::io(&path, e);
        let next = next_record_starts(&me.ids, &me.repeats, me.pages.len());
        let file = me.file.take().ok_or_else(|| Error::invalid("output", "writer finished twice"))?;
        let mut sink = Sink::new(file, me.compress).map_err(io)?;
        let size = me.page_size.min(u32::MAX as u64) as u32;
        let mut buf = Vec::with_capacity(RECORD * 8192);
        let mut clock = 0u64;
        for (i, (&id, &repeat)) in me.ids.iter().zip(&me.repeats).enumerate() {
            let page = me.pages[id as usize].to_le_bytes();
            let last = if next[i] == u32::MAX { -1 } else { next[i] as i64 };
            for k in 0..repeat {
                // the repeats of one record are consecutive requests of its page
                let nx = if k + 1 < repeat { clock as i64 + 1 } else { last };
                buf.extend_from_slice(&(clock as u32).to_le_bytes());
                buf.extend_from_slice(&page);
                buf.extend_from_slice(&size.to_le_bytes());
                buf.extend_from_slice(&nx.to_le_bytes());
                clock += 1;
                if buf.len() >= RECORD * 8192 {
                    sink.write_all(&buf).map_err(io)?;
                    buf.clear();
                }
            }
        }
        sink.write_all(&buf).map_err(io)?;
        let mut f = sink.finish().map_err(io)?;
        f.flush().map_err(io)?;
        Ok(clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{convert, open_trace, Reference, TraceFormat, VecSource};

    /// The oracleGeneral records of `refs` expanded one reference at a time, the
    /// next-access time found by a search of the future: the writer must match it.
    fn by_expansion(refs: &[Reference]) -> Vec<(u32, u64, i64)> {
        let mut pages = Vec::new();
        for r in refs {
            for _ in 0..r.repeat {
                pages.push((r.pid, r.page));
            }
        }
        (0..pages.len())
            .map(|i| {
                let next = (i + 1..pages.len()).find(|&j| pages[j] == pages[i]).map_or(-1, |j| j as i64);
                (i as u32, pages[i].1, next)
            })
            .collect()
    }

    fn parse(bytes: &[u8]) -> Vec<(u32, u64, i64)> {
        bytes
            .chunks(RECORD)
            .map(|c| (u32::from_le_bytes(c[0..4].try_into().unwrap()), u64::from_le_bytes(c[4..12].try_into().unwrap()), i64::from_le_bytes(c[16..24].try_into().unwrap())))
            .collect()
    }

    #[test]
    fn next_access_times_match_the_expanded_stream() {
        let r = |page: u64, repeat: u32| Reference { pid: 0, page, kind: AccessKind::Read, repeat, gap: 0 };
        let cases = vec![
            vec![r(1, 1)],
            vec![r(1, 4)],
            vec![r(1, 3), r(2, 2), r(1, 1), r(3, 5), r(2, 1), r(1, 2)],
            (0..200u64).map(|i| r((i * 7) % 13, 1 + (i % 4) as u32)).collect(),
        ];
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.oracleGeneral");
        for refs in cases {
            let mut src = VecSource::new("mem", 4096, refs.clone());
            let n = convert(&mut src, &out, TraceFormat::Oracle, false, &mut |_| true).unwrap();
            let got = parse(&std::fs::read(&out).unwrap());
            assert_eq!(n as usize, got.len());
            assert_eq!(got, by_expansion(&refs), "{refs:?}");
        }
    }

    /// Issue 20: a record repeated 4294967295 times (a 38-byte CSV) tried to allocate
    /// 16 GiB and left a temporary file behind; now it is refused before writing, with
    /// no file left, and memory is per record, not per reference.
    #[test]
    fn a_huge_repeat_is_refused_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("rep.csv");
        std::fs::write(&csv, "pid,page,kind,repeat\n0,1,r,4294967295\n").unwrap();
        let out = dir.path().join("out.oracleGeneral");
        let mut src = open_trace(&csv, None, None).unwrap();
        let e = convert(src.as_mut(), &out, TraceFormat::Oracle, false, &mut |_| true).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: expected at most 1073741824 references", out.display())), "{e}");
        assert!(e.contains("record 0 repeats 4294967295 times"), "{e}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("rep.csv")]);
        // a large repeat within the limit converts from one record
        std::fs::write(&csv, "pid,page,kind,repeat\n0,1,r,100000\n0,2,r,1\n0,1,w,1\n").unwrap();
        let mut src = open_trace(&csv, None, None).unwrap();
        assert_eq!(convert(src.as_mut(), &out, TraceFormat::Oracle, false, &mut |_| true).unwrap(), 100_002);
        let got = parse(&std::fs::read(&out).unwrap());
        assert_eq!(got[0], (0, 1, 1));
        assert_eq!(got[99_999], (99_999, 1, 100_001));
        assert_eq!(got[100_000], (100_000, 2, -1));
        assert_eq!(got[100_001], (100_001, 1, -1));
    }
}
