//! libCacheSim oracleGeneral traces: packed little-endian 24-byte records
//! (u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime).
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::input::{le64, open_file, open_stream, resolve_page_size, Chunks, Folder};
use super::writer::{Sink, TraceWriter};
use super::{AccessKind, RefBatch, RefSource, Reference, SourceMeta, BATCH_RECORDS};
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
}

pub(crate) fn open(path: &Path, page_size: Option<u64>) -> Result<Box<dyn RefSource>> {
    let (ps, shift) = resolve_page_size(path, page_size, NATIVE_PAGE_SIZE, NATIVE_PAGE_SIZE)?;
    let (r, compressed) = open_stream(path)?;
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
    }
    Ok(Box::new(OracleSource {
        meta: SourceMeta { name: path.display().to_string(), page_size: ps, processes: vec![(0, String::new())], records: None },
        path: path.to_path_buf(),
        chunks: Chunks::new(r, 0, compressed, 1 << 20),
        folder: Folder::new(),
        shift,
        done: false,
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
            let d = &c.buf[c.pos..c.end];
            let mut p = 0;
            while d.len() - p >= RECORD && batch.len() < BATCH_RECORDS {
                let obj = le64(d, p + 4);
                self.folder.push(Reference { pid: 0, page: obj >> self.shift, kind: AccessKind::Read, repeat: 1, gap: 0 }, batch);
                p += RECORD;
            }
            c.pos += p;
        }
        Ok(batch.len())
    }

    fn distinct_pages(&self) -> u32 {
        self.folder.densifier.len()
    }
}

/// Writes one record per reference. The next-access times need the future, so the whole
/// expanded id sequence is kept in memory until `finish` (see docs/trace-format.md).
pub(crate) struct OracleWriter {
    file: Option<File>,
    path: PathBuf,
    page_size: u64,
    compress: bool,
    /// Dense id of every reference (repeats expanded).
    ids: Vec<u32>,
    /// Page of every dense id.
    pages: Vec<u64>,
    records: u64,
}

impl OracleWriter {
    pub fn new(file: File, out: &Path, page_size: u64, compress: bool) -> OracleWriter {
        OracleWriter { file: Some(file), path: out.to_path_buf(), page_size, compress, ids: Vec::new(), pages: Vec::new(), records: 0 }
    }
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
                    format!("record {} has page id {id} but only {} ids were assigned (ids must be in first-touch order)", self.records, self.pages.len()),
                ));
            }
            let n = self.ids.len();
            self.ids.resize(n + b.repeat[i] as usize, id);
            self.records += 1;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _meta: &SourceMeta) -> Result<u64> {
        let mut me = *self;
        let path = me.path.clone();
        let io = |e| Error::io(&path, e);
        // next use of every reference by a backward pass
        let n = me.ids.len();
        let mut next = vec![-1i64; n];
        let mut last = vec![-1i64; me.pages.len()];
        for i in (0..n).rev() {
            let id = me.ids[i] as usize;
            next[i] = last[id];
            last[id] = i as i64;
        }
        drop(last);
        let file = me.file.take().ok_or_else(|| Error::invalid("output", "writer finished twice"))?;
        let mut sink = Sink::new(file, me.compress).map_err(io)?;
        let size = me.page_size.min(u32::MAX as u64) as u32;
        let mut buf = Vec::with_capacity(RECORD * 8192);
        for (i, (&id, &nx)) in me.ids.iter().zip(next.iter()).enumerate() {
            let clock = u32::try_from(i).unwrap_or(u32::MAX);
            buf.extend_from_slice(&clock.to_le_bytes());
            buf.extend_from_slice(&me.pages[id as usize].to_le_bytes());
            buf.extend_from_slice(&size.to_le_bytes());
            buf.extend_from_slice(&nx.to_le_bytes());
            if buf.len() >= RECORD * 8192 {
                sink.write_all(&buf).map_err(io)?;
                buf.clear();
            }
        }
        sink.write_all(&buf).map_err(io)?;
        let mut f = sink.finish().map_err(io)?;
        f.flush().map_err(io)?;
        Ok(n as u64)
    }
}
