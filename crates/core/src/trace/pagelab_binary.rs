//! The pagelab binary trace format (`.plt`): fixed header, a body of tagged records that
//! carry their dense ids (first touches carry the pid and page), and a process table.
//! The exact layout is documented in docs/trace-format.md.
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::block_crc::{blocks_of, mismatch, BlockCheck, BlockCrcWriter, BLOCK};
use super::input::{le32, le64, open_file, read_error, resolve_page_size, Chunks, PidSet, Regroup, ZSTD_MAGIC};
use super::writer::{Sink, TraceWriter};
use super::{check_page_size, AccessKind, RefBatch, RefSource, SourceMeta};
use crate::error::Position;
use crate::{Error, Result};

pub(crate) const MAGIC: [u8; 8] = *b"PAGELAB\0";
/// Version written: 2 adds the checksums (a CRC-32 per 64 KiB block of the body and one
/// of the header and trailer). Version 1 files are still read.
pub(crate) const VERSION: u16 = 2;
/// Version 3 adds free records (kind 3, no repeat count: a page given back). The writer
/// writes it only for a stream that has a free, so that other files stay readable by
/// readers of version 2; versions 1 and 2 are still read (a kind 3 there is an error).
pub(crate) const VERSION_FREES: u16 = 3;
pub(crate) const HEADER_LEN: usize = 56;

pub(crate) const FLAG_ZSTD: u16 = 1;
pub(crate) const FLAG_GAPS: u16 = 2;

pub(crate) const TAG_KIND: u8 = 0x03;
pub(crate) const TAG_NEW: u8 = 0x04;
pub(crate) const TAG_REPEAT: u8 = 0x08;
pub(crate) const TAG_GAP: u8 = 0x10;
const TAG_UNUSED: u8 = 0xE0;

/// Longest record: tag, pid, page, repeat, gap.
const MAX_REC: usize = 1 + 4 + 8 + 4 + 4;

const CHUNK: usize = 1 << 20;

/// Processes the table may name beyond one per distinct page (processes a source named
/// but never referenced): bounds the table a compressed stream can make the reader build.
const EXTRA_PROCESSES: u64 = 1 << 16;

#[derive(Debug, Clone, Copy)]
struct Header {
    version: u16,
    flags: u16,
    page_size: u64,
    records: u64,
    references: u64,
    distinct_pages: u64,
    trailer_offset: u64,
}

fn parse_header(path: &Path, b: &[u8]) -> Result<Header> {
    let err = |at: u64, m: String| Error::format(path, Position::Byte(at), m);
    let n = b.len().min(8);
    if b[..n] != MAGIC[..n] || b.len() < 8 {
        if b[..n] == MAGIC[..n] {
            return Err(err(b.len() as u64, "expected the pagelab trace magic \"PAGELAB\\0\", found end of file".into()));
        }
        return Err(err(0, format!("expected the pagelab trace magic \"PAGELAB\\0\", found {:02x?} (not a pagelab trace)", &b[..n])));
    }
    if b.len() < HEADER_LEN {
        return Err(err(
            b.len() as u64,
            format!("expected the {HEADER_LEN}-byte pagelab header, found end of file after {} bytes", b.len()),
        ));
    }
    let version = u16::from_le_bytes([b[8], b[9]]);
    if !(1..=VERSION_FREES).contains(&version) {
        return Err(err(8, format!("expected pagelab trace version 1 to {VERSION_FREES}, found version {version} (unsupported)")));
    }
    let flags = u16::from_le_bytes([b[10], b[11]]);
    if flags & !(FLAG_ZSTD | FLAG_GAPS) != 0 {
        return Err(err(10, format!("expected header flags with only bits 0-1 in use, found {flags:#06x}")));
    }
    let reserved = le32(b, 12);
    if reserved != 0 {
        return Err(err(12, format!("expected the reserved header field to be 0, found {reserved}")));
    }
    let page_size = le64(b, 16);
    if check_page_size(page_size).is_err() {
        return Err(err(16, format!("expected a page size that is a power of two from 64 to 1073741824, found {page_size}")));
    }
    let records = le64(b, 24);
    if records == u64::MAX {
        return Err(err(24, "expected a record count, found the placeholder of an unfinished file (the writer never finished)".into()));
    }
    let references = le64(b, 32);
    let distinct_pages = le64(b, 40);
    if distinct_pages > u32::MAX as u64 + 1 || distinct_pages > records {
        return Err(err(40, format!("expected at most min({records} records, 2^32) distinct pages, found {distinct_pages}")));
    }
    // a free record stands for no reference, so from version 3 on there may be fewer
    if references < records && version < VERSION_FREES {
        return Err(err(32, format!("expected at least as many references as records ({records}), found {references}")));
    }
    let trailer_offset = le64(b, 48);
    if trailer_offset < HEADER_LEN as u64 {
        return Err(err(48, format!("expected a process-table offset of at least {HEADER_LEN}, found {trailer_offset}")));
    }
    Ok(Header { version, flags, page_size, records, references, distinct_pages, trailer_offset })
}

impl Header {
    /// Bytes of the body as stored (compressed or not).
    fn body_len(&self) -> u64 {
        self.trailer_offset - HEADER_LEN as u64
    }
}

fn header_bytes(h: &Header) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[..8].copy_from_slice(&MAGIC);
    b[8..10].copy_from_slice(&h.version.to_le_bytes());
    b[10..12].copy_from_slice(&h.flags.to_le_bytes());
    b[16..24].copy_from_slice(&h.page_size.to_le_bytes());
    b[24..32].copy_from_slice(&h.records.to_le_bytes());
    b[32..40].copy_from_slice(&h.references.to_le_bytes());
    b[40..48].copy_from_slice(&h.distinct_pages.to_le_bytes());
    b[48..56].copy_from_slice(&h.trailer_offset.to_le_bytes());
    b
}

/// Records per block of `PagelabSource::parse`'s stack arrays.
const COMMON_BLOCK: usize = 256;

/// Appends common records (a known page, one reference, no gap) to the batch: their ids
/// and kinds, and the repeat and gap they share.
#[inline]
fn push_common(batch: &mut RefBatch, ids: &[u32], kinds: &[AccessKind]) {
    let n = batch.id.len() + ids.len();
    batch.id.extend_from_slice(ids);
    batch.kind.extend_from_slice(kinds);
    batch.repeat.resize(n, 1);
    batch.gap.resize(n, 0);
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// What the trailer holds: the process table and (version 2) the body's block checksums.
struct Trailer {
    processes: Vec<(u32, String)>,
    block_crcs: Vec<u32>,
}

/// Parses the trailer from the chunk stream (which must be at its start): the process
/// table, then in version 2 the body's block checksums and the CRC-32 of the header
/// (`header_raw`, as read) and the trailer, which is checked. `recorded`: the CRCs of the
/// body's blocks as they streamed by, compared with the table (whole-file zstd).
fn parse_trailer(path: &Path, c: &mut Chunks, h: &Header, header_raw: &[u8; HEADER_LEN], recorded: Option<&[u32]>) -> Result<Trailer> {
    let eof = |at: u64, what: &str| {
        Error::format(path, Position::Byte(at), format!("expected {what} of the trailer, found end of file"))
    };
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(header_raw);
    let at_count = c.offset();
    let count = match c.take(4, path)? {
        Some(s) => {
            hasher.update(s);
            le32(s, 0)
        }
        None => return Err(eof(c.base + c.end as u64, "the process count")),
    };
    let most = h.distinct_pages + EXTRA_PROCESSES;
    if count as u64 > most {
        return Err(Error::format(
            path,
            Position::Byte(at_count),
            format!("expected at most {most} processes in the process table (one per distinct page, plus {EXTRA_PROCESSES}), found a count of {count}"),
        ));
    }
    let mut procs = Vec::with_capacity((count as usize).min(1024));
    for i in 0..count {
        let at_p = c.offset();
        let (pid, len) = match c.take(6, path)? {
            Some(s) => {
                hasher.update(s);
                (le32(s, 0), u16::from_le_bytes([s[4], s[5]]) as usize)
            }
            None => return Err(eof(c.base + c.end as u64, &format!("process table entry {i} of {count}"))),
        };
        let name = match c.take(len, path)? {
            Some(s) => {
                hasher.update(s);
                s.to_vec()
            }
            None => return Err(eof(c.base + c.end as u64, &format!("the {len}-byte name of process table entry {i} of {count}"))),
        };
        let name = String::from_utf8(name).map_err(|_| {
            Error::format(path, Position::Byte(at_p + 6), format!("expected a UTF-8 process name for pid {pid}, found invalid bytes"))
        })?;
        procs.push((pid, name));
    }
    let mut block_crcs = Vec::new();
    if h.version >= 2 {
        let at_blocks = c.offset();
        let blocks = match c.take(4, path)? {
            Some(s) => {
                hasher.update(s);
                le32(s, 0) as u64
            }
            None => return Err(eof(c.base + c.end as u64, "the number of body checksums")),
        };
        let want = blocks_of(h.body_len());
        if blocks != want {
            return Err(Error::format(
                path,
                Position::Byte(at_blocks),
                format!("expected {want} body checksums (one per {BLOCK}-byte block of the {}-byte body), found a count of {blocks}", h.body_len()),
            ));
        }
        block_crcs.reserve(blocks.min(1 << 16) as usize);
        for i in 0..blocks {
            match c.take(4, path)? {
                Some(s) => {
                    hasher.update(s);
                    block_crcs.push(le32(s, 0));
                }
                None => return Err(eof(c.base + c.end as u64, &format!("body checksum {i} of {blocks}"))),
            }
        }
        let at_crc = c.offset();
        let stored = match c.take(4, path)? {
            Some(s) => le32(s, 0),
            None => return Err(eof(c.base + c.end as u64, "the CRC-32 of the header and trailer at the end")),
        };
        let computed = hasher.finalize();
        if stored != computed {
            return Err(Error::format(
                path,
                Position::Byte(at_crc),
                format!("expected the header and the trailer to match their CRC-32 {stored:#010x} stored at the end of the file, computed {computed:#010x}: the file is corrupt"),
            ));
        }
        if let Some(rec) = recorded {
            for (i, (&stored, &computed)) in block_crcs.iter().zip(rec).enumerate() {
                if stored != computed {
                    let start = HEADER_LEN as u64 + i as u64 * BLOCK as u64;
                    let len = (h.trailer_offset - start).min(BLOCK as u64);
                    let m = mismatch(i as u64, start, len, stored, computed);
                    return Err(Error::format(path, Position::Byte(m.offset), m.message));
                }
            }
            if rec.len() != block_crcs.len() {
                return Err(Error::format(
                    path,
                    Position::Byte(h.trailer_offset),
                    format!("expected a body of {} bytes ({} checksummed blocks), read {} blocks", h.body_len(), block_crcs.len(), rec.len()),
                ));
            }
        }
    }
    if !c.at_end(path)? {
        return Err(Error::format(path, Position::Byte(c.offset()), "expected the end of the file after the trailer, found more data"));
    }
    Ok(Trailer { processes: procs, block_crcs })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Body,
    Done,
    Failed,
}

/// Streaming reader of a pagelab binary trace at its own page size.
pub(crate) struct PagelabSource {
    meta: SourceMeta,
    path: PathBuf,
    header: Header,
    chunks: Chunks,
    /// pid and page of every dense id assigned so far.
    table: Table,
    record: u64,
    references: u64,
    state: State,
    /// Whole-file zstd with a raw body: the process table follows the body in the stream.
    trailer_in_stream: bool,
    /// Process table not known up front: collect pids from first touches.
    pids: Option<PidSet>,
    /// Whole-file zstd around a compressed body: the outer stream, for the process table.
    outer: Option<Shared>,
    /// The header as read (version 2 checksums it with the trailer).
    header_raw: [u8; HEADER_LEN],
    /// Whole-file zstd, version 2: the CRCs of the body's blocks as they streamed by.
    recorded: Option<Arc<Mutex<Vec<u32>>>>,
}

/// A reader shared between the body's decoder and the process-table reader.
#[derive(Clone)]
struct Shared(Arc<Mutex<Box<dyn Read + Send>>>);

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.lock() {
            Ok(mut r) => r.read(buf),
            Err(_) => Err(io::Error::other("poisoned reader")),
        }
    }
}

#[derive(Default)]
struct Table {
    pids: Vec<u32>,
    pages: Vec<u64>,
}

impl Table {
    #[inline(always)]
    fn len(&self) -> usize {
        self.pages.len()
    }
}

enum RecErr {
    Tag(u8),
    Id(u32),
    Repeat,
    /// A free record (version 3) with the REPEAT flag.
    FreeRepeat,
    /// A first touch beyond the header's distinct_pages.
    TooManyIds,
}

/// Length of a record from its tag.
#[inline(always)]
fn rec_len(tag: u8) -> usize {
    1 + if tag & TAG_NEW != 0 { 12 } else { 4 }
        + if tag & TAG_REPEAT != 0 { 4 } else { 0 }
        + if tag & TAG_GAP != 0 { 4 } else { 0 }
}

/// Decodes one record from `d[p..]` (which holds it entirely) into `batch`.
#[inline(always)]
fn decode(
    d: &[u8],
    mut p: usize,
    table: &mut Table,
    batch: &mut RefBatch,
    pids: &mut Option<PidSet>,
    procs: &mut Vec<(u32, String)>,
    max_ids: u64,
    frees: bool,
) -> std::result::Result<(usize, u32), RecErr> {
    let tag = d[p];
    if tag & TAG_UNUSED != 0 || (tag & TAG_KIND == 3 && !frees) {
        return Err(RecErr::Tag(tag));
    }
    let kind = match tag & TAG_KIND {
        0 => AccessKind::Read,
        1 => AccessKind::Write,
        2 => AccessKind::Instruction,
        _ => AccessKind::Free,
    };
    if kind == AccessKind::Free && tag & TAG_REPEAT != 0 {
        return Err(RecErr::FreeRepeat);
    }
    p += 1;
    let id;
    if tag & TAG_NEW != 0 {
        let pid = le32(d, p);
        let page = le64(d, p + 4);
        p += 12;
        // checked as it is read: a body of first touches beyond the header's count
        // would otherwise grow the table without bound before the end says so
        if table.len() as u64 >= max_ids {
            return Err(RecErr::TooManyIds);
        }
        id = table.len() as u32;
        table.pids.push(pid);
        table.pages.push(page);
        if let Some(set) = pids {
            if set.insert(pid) {
                procs.push((pid, String::new()));
            }
        }
    } else {
        id = le32(d, p);
        p += 4;
        if id as usize >= table.len() {
            return Err(RecErr::Id(id));
        }
    }
    let repeat = if tag & TAG_REPEAT != 0 {
        let r = le32(d, p);
        p += 4;
        if r == 0 {
            return Err(RecErr::Repeat);
        }
        r
    } else if kind == AccessKind::Free {
        0
    } else {
        1
    };
    let gap = if tag & TAG_GAP != 0 {
        let g = le32(d, p);
        p += 4;
        g
    } else {
        0
    };
    // pid and page are gathered from the table afterwards, in a tight loop whose
    // independent loads overlap their cache misses
    batch.id.push(id);
    batch.kind.push(kind);
    batch.repeat.push(repeat);
    batch.gap.push(gap);
    Ok((p, repeat))
}

impl PagelabSource {
    pub fn open(path: &Path) -> Result<PagelabSource> {
        let mut f = open_file(path)?;
        let file_len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut hb = [0u8; HEADER_LEN];
        let got = read_up_to(&mut f, &mut hb).map_err(|e| Error::io(path, e))?;
        if got >= 4 && hb[..4] == ZSTD_MAGIC {
            return Self::open_whole_zstd(path, f);
        }
        let header = parse_header(path, &hb[..got])?;
        if header.trailer_offset > file_len {
            return Err(Error::format(
                path,
                Position::Byte(48),
                format!("expected a process-table offset within the file ({file_len} bytes), found {} (truncated file?)", header.trailer_offset),
            ));
        }
        // process table
        f.seek(SeekFrom::Start(header.trailer_offset)).map_err(|e| Error::io(path, e))?;
        let tf = f.try_clone().map_err(|e| Error::io(path, e))?;
        let mut tc = Chunks::new(Box::new(tf), header.trailer_offset, false, 4096);
        let trailer = parse_trailer(path, &mut tc, &header, &hb, None)?;
        let processes = trailer.processes;
        // body: in version 2 each block is verified before it is parsed
        f.seek(SeekFrom::Start(HEADER_LEN as u64)).map_err(|e| Error::io(path, e))?;
        let take = f.take(header.body_len());
        let body: Box<dyn Read + Send> = if header.version >= 2 {
            Box::new(BlockCheck::verifying(take, HEADER_LEN as u64, header.body_len(), trailer.block_crcs))
        } else {
            Box::new(take)
        };
        let compressed = header.flags & FLAG_ZSTD != 0;
        let r: Box<dyn Read + Send> = if compressed {
            Box::new(zstd::stream::read::Decoder::new(body).map_err(|e| Error::io(path, e))?)
        } else {
            body
        };
        let chunks = Chunks::new(r, HEADER_LEN as u64, compressed, CHUNK);
        let body_len = header.trailer_offset - HEADER_LEN as u64;
        // a raw body holds at least 5 bytes per id; do not trust the header for sizes
        let cap = if compressed { header.distinct_pages.min(1 << 20) } else { header.distinct_pages.min(body_len / 13 + 1) };
        Ok(Self::new(path, header, hb, chunks, processes, cap as usize, false, None))
    }

    fn open_whole_zstd(path: &Path, f: File) -> Result<PagelabSource> {
        let mut f = f;
        f.seek(SeekFrom::Start(0)).map_err(|e| Error::io(path, e))?;
        let mut dec = zstd::stream::read::Decoder::new(f).map_err(|e| Error::io(path, e))?;
        let mut hb = [0u8; HEADER_LEN];
        let got = read_up_to(&mut dec, &mut hb).map_err(|e| read_error(path, true, Position::Byte(0), e))?;
        let header = parse_header(path, &hb[..got])?;
        let mut outer = None;
        let mut recorded = None;
        // version 2: the body's block CRCs are recorded as it streams, and compared with
        // the trailer's table at the end (the zstd frame's own checksum covers it too)
        let body_len = header.body_len();
        let v2 = header.version >= 2;
        let (r, trailer_in_stream): (Box<dyn Read + Send>, bool) = if header.flags & FLAG_ZSTD != 0 {
            // zstd around a compressed body: the body's decoder reads from the shared outer
            // stream, which then goes on with the process table
            let shared = Shared(Arc::new(Mutex::new(Box::new(dec))));
            outer = Some(shared.clone());
            let inner = shared.take(body_len);
            let inner: Box<dyn Read + Send> = if v2 {
                let (check, rec) = BlockCheck::recording(inner, HEADER_LEN as u64, body_len);
                recorded = Some(rec);
                Box::new(check)
            } else {
                Box::new(inner)
            };
            (Box::new(zstd::stream::read::Decoder::new(inner).map_err(|e| Error::io(path, e))?), false)
        } else if v2 {
            let (check, rec) = BlockCheck::recording(dec, HEADER_LEN as u64, body_len);
            recorded = Some(rec);
            (Box::new(check), true)
        } else {
            (Box::new(dec), true)
        };
        let chunks = Chunks::new(r, HEADER_LEN as u64, true, CHUNK);
        let cap = header.distinct_pages.min(1 << 20) as usize;
        let mut src = Self::new(path, header, hb, chunks, Vec::new(), cap, trailer_in_stream, Some(PidSet::default()));
        src.outer = outer;
        src.recorded = recorded;
        Ok(src)
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        path: &Path,
        header: Header,
        header_raw: [u8; HEADER_LEN],
        chunks: Chunks,
        processes: Vec<(u32, String)>,
        cap: usize,
        trailer_in_stream: bool,
        pids: Option<PidSet>,
    ) -> PagelabSource {
        PagelabSource {
            meta: SourceMeta {
                name: path.display().to_string(),
                page_size: header.page_size,
                processes,
                records: Some(header.records),
            },
            path: path.to_path_buf(),
            header,
            chunks,
            table: Table { pids: Vec::with_capacity(cap), pages: Vec::with_capacity(cap) },
            record: 0,
            references: 0,
            state: State::Body,
            trailer_in_stream,
            pids,
            outer: None,
            header_raw,
            recorded: None,
        }
    }

    fn rec_error(&self, at: u64, e: RecErr) -> Error {
        let k = self.record;
        let m = self.header.records;
        let msg = match e {
            RecErr::Tag(t) => format!(
                "expected a record tag (kind 0-{} in bits 0-1, flags in bits 2-4) for record {k} of {m}, found {t:#04x}",
                if self.header.version >= VERSION_FREES { 3 } else { 2 }
            ),
            RecErr::Id(id) => format!(
                "expected a page id below {} (ids assigned so far) in record {k} of {m}, found {id}",
                self.table.len()
            ),
            RecErr::Repeat => format!("expected a repeat count of at least 1 in record {k} of {m}, found 0"),
            RecErr::FreeRepeat => format!("expected a free record (kind 3) without a repeat count in record {k} of {m}, found the REPEAT flag"),
            RecErr::TooManyIds => format!(
                "expected at most {} distinct pages as the header says, found a first touch of one more in record {k} of {m}",
                self.header.distinct_pages
            ),
        };
        Error::format(&self.path, Position::Byte(at), msg)
    }

    fn parse(&mut self, batch: &mut RefBatch, want: usize) -> Result<()> {
        let mut n = 0usize;
        let frees = self.header.version >= VERSION_FREES;
        while n < want {
            if self.chunks.avail() < MAX_REC && !self.chunks.eof {
                self.chunks.fill(MAX_REC, &self.path)?;
            }
            let avail = self.chunks.avail();
            if avail >= MAX_REC {
                let c = &mut self.chunks;
                let d = &c.buf[c.pos..c.end];
                let mut p = 0usize;
                let mut refs = 0u64;
                let mut failure = None;
                let start = n;
                let limit = d.len() - MAX_REC;
                let mut assigned = self.table.len() as u64;
                // the common records gather in stack arrays indexed by a counter in a
                // register and reach the batch a block at a time (pushing each into the
                // batch's vectors reloaded their lengths from memory at every record);
                // flushed before any other record, which decode pushes itself
                let (mut ids, mut kinds) = ([0u32; COMMON_BLOCK], [AccessKind::Read; COMMON_BLOCK]);
                let mut k = 0usize;
                while n < want && p <= limit {
                    let tag = d[p];
                    if tag < 3 {
                        // the common case: a known page, one reference, no gap
                        let id = le32(d, p + 1);
                        if (id as u64) < assigned {
                            ids[k] = id;
                            kinds[k] = match tag {
                                0 => AccessKind::Read,
                                1 => AccessKind::Write,
                                _ => AccessKind::Instruction,
                            };
                            k += 1;
                            if k == COMMON_BLOCK {
                                push_common(batch, &ids, &kinds);
                                k = 0;
                            }
                            p += 5;
                            refs += 1;
                            n += 1;
                            continue;
                        }
                    }
                    push_common(batch, &ids[..k], &kinds[..k]);
                    k = 0;
                    match decode(d, p, &mut self.table, batch, &mut self.pids, &mut self.meta.processes, self.header.distinct_pages, frees) {
                        Ok((q, r)) => {
                            p = q;
                            refs += r as u64;
                            n += 1;
                            // a new id may have been assigned: refresh the fast path's bound
                            assigned = self.table.len() as u64;
                        }
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                }
                push_common(batch, &ids[..k], &kinds[..k]);
                self.record += (n - start) as u64;
                c.pos += p;
                self.references += refs;
                if let Some(e) = failure {
                    return Err(self.rec_error(self.chunks.offset(), e));
                }
            } else {
                // the end of the stream is near: check lengths before decoding
                let at = self.chunks.offset();
                if avail == 0 {
                    return Err(Error::format(
                        &self.path,
                        Position::Byte(at),
                        format!("expected record {} of {}, found end of file", self.record, self.header.records),
                    ));
                }
                let tag = self.chunks.buf[self.chunks.pos];
                let len = rec_len(tag);
                if tag & TAG_UNUSED == 0 && (tag & TAG_KIND != 3 || frees) && avail < len {
                    return Err(Error::format(
                        &self.path,
                        Position::Byte(at + avail as u64),
                        format!(
                            "expected {} more bytes of record {} of {} (which starts at byte {at}), found end of file",
                            len - avail,
                            self.record,
                            self.header.records
                        ),
                    ));
                }
                let c = &mut self.chunks;
                let d = &c.buf[c.pos..c.end];
                match decode(d, 0, &mut self.table, batch, &mut self.pids, &mut self.meta.processes, self.header.distinct_pages, frees) {
                    Ok((q, r)) => {
                        c.pos += q;
                        self.references += r as u64;
                        n += 1;
                        self.record += 1;
                    }
                    Err(e) => return Err(self.rec_error(at, e)),
                }
            }
        }
        Ok(())
    }

    /// The CRCs of the body's blocks recorded while it streamed (whole-file zstd).
    fn recorded_crcs(&self) -> Option<Vec<u32>> {
        self.recorded.as_ref().map(|r| r.lock().map(|v| v.clone()).unwrap_or_default())
    }

    /// Keeps the order of first appearance, takes the names from the process table.
    fn merge_names(&mut self, procs: Vec<(u32, String)>) {
        let mut index: rustc_hash::FxHashMap<u32, usize> =
            self.meta.processes.iter().enumerate().map(|(i, (p, _))| (*p, i)).collect();
        for (pid, name) in procs {
            match index.get(&pid) {
                Some(&i) => self.meta.processes[i].1 = name,
                None => {
                    index.insert(pid, self.meta.processes.len());
                    self.meta.processes.push((pid, name));
                }
            }
        }
    }

    fn finish_body(&mut self) -> Result<()> {
        let path = self.path.clone();
        let h = self.header;
        let end = self.chunks.offset();
        if self.trailer_in_stream {
            if end != h.trailer_offset {
                return Err(Error::format(
                    &path,
                    Position::Byte(end),
                    format!("expected the process table at byte {} after {} records, found more data", h.trailer_offset, h.records),
                ));
            }
            let recorded = self.recorded_crcs();
            let trailer = parse_trailer(&path, &mut self.chunks, &h, &self.header_raw, recorded.as_deref())?;
            self.merge_names(trailer.processes);
        } else if !self.chunks.at_end(&path)? {
            return Err(Error::format(
                &path,
                Position::Byte(self.chunks.offset()),
                format!("expected the end of the trace body after {} records, found more data", h.records),
            ));
        } else if let Some(outer) = self.outer.take() {
            let mut c = Chunks::new(Box::new(outer), h.trailer_offset, true, 4096);
            let recorded = self.recorded_crcs();
            let trailer = parse_trailer(&path, &mut c, &h, &self.header_raw, recorded.as_deref())?;
            self.merge_names(trailer.processes);
        }
        if self.references != h.references {
            return Err(Error::format(
                &path,
                Position::Byte(end),
                format!("expected {} references as the header says, the body holds {}", h.references, self.references),
            ));
        }
        if self.table.len() as u64 != h.distinct_pages {
            return Err(Error::format(
                &path,
                Position::Byte(end),
                format!("expected {} distinct pages as the header says, the body holds {}", h.distinct_pages, self.table.len()),
            ));
        }
        Ok(())
    }
}

impl RefSource for PagelabSource {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        if self.state != State::Body {
            return Ok(0);
        }
        let want = (self.header.records - self.record).min(super::BATCH_RECORDS as u64) as usize;
        let mut r = self.parse(batch, want);
        let table = &self.table;
        batch.pid.extend(batch.id.iter().map(|&id| table.pids[id as usize]));
        batch.page.extend(batch.id.iter().map(|&id| table.pages[id as usize]));
        if r.is_ok() && self.record == self.header.records {
            r = self.finish_body();
            if r.is_ok() {
                self.state = State::Done;
            }
        }
        if let Err(e) = r {
            self.state = State::Failed;
            batch.clear();
            return Err(e);
        }
        Ok(batch.len())
    }

    fn distinct_pages(&self) -> u32 {
        self.table.len() as u32
    }
}

/// Opens a pagelab trace at `page_size` (default: the file's own).
pub(crate) fn open(path: &Path, page_size: Option<u64>) -> Result<Box<dyn RefSource>> {
    let src = PagelabSource::open(path)?;
    let native = src.meta.page_size;
    let (ps, shift) = resolve_page_size(path, page_size, native, native)?;
    if shift == 0 {
        Ok(Box::new(src))
    } else {
        Ok(Box::new(Regroup::new(Box::new(src), ps, shift)))
    }
}

/// Writer of pagelab binary traces (version 2: with the body's block checksums; version
/// 3 when the stream has a free record).
pub(crate) struct PagelabWriter {
    sink: Sink<BlockCrcWriter<io::BufWriter<File>>>,
    path: PathBuf,
    buf: Vec<u8>,
    header: Header,
    assigned: u64,
    pids: PidSet,
    order: Vec<u32>,
}

impl PagelabWriter {
    pub fn new(mut file: File, out: &Path, page_size: u64, compress: bool) -> Result<PagelabWriter> {
        let header = Header {
            version: VERSION,
            flags: if compress { FLAG_ZSTD } else { 0 },
            page_size,
            records: u64::MAX,
            references: 0,
            distinct_pages: 0,
            trailer_offset: 0,
        };
        file.write_all(&header_bytes(&header)).map_err(|e| Error::io(out, e))?;
        let body = BlockCrcWriter::new(io::BufWriter::with_capacity(1 << 20, file));
        let sink = Sink::over(body, compress).map_err(|e| Error::io(out, e))?;
        Ok(PagelabWriter {
            sink,
            path: out.to_path_buf(),
            buf: Vec::with_capacity(CHUNK + 64),
            header: Header { records: 0, ..header },
            assigned: 0,
            pids: PidSet::default(),
            order: Vec::new(),
        })
    }
}

impl TraceWriter for PagelabWriter {
    fn write_batch(&mut self, b: &RefBatch) -> Result<()> {
        for i in 0..b.len() {
            let id = b.id[i] as u64;
            let repeat = b.repeat[i];
            let gap = b.gap[i];
            let free = b.kind[i] == AccessKind::Free;
            if repeat == 0 && !free {
                return Err(Error::invalid("source", format!("record {} has a repeat count of 0", self.header.records)));
            }
            let mut tag = b.kind[i] as u8;
            // a free stands for no reference: it carries no repeat count
            let repeat = if free { 0 } else { repeat };
            if free {
                self.header.version = VERSION_FREES;
            } else if repeat != 1 {
                tag |= TAG_REPEAT;
            }
            if gap != 0 {
                tag |= TAG_GAP;
                self.header.flags |= FLAG_GAPS;
            }
            if id == self.assigned {
                let pid = b.pid[i];
                self.buf.push(tag | TAG_NEW);
                self.buf.extend_from_slice(&pid.to_le_bytes());
                self.buf.extend_from_slice(&b.page[i].to_le_bytes());
                self.assigned += 1;
                if self.pids.insert(pid) {
                    self.order.push(pid);
                }
            } else if id < self.assigned {
                self.buf.push(tag);
                self.buf.extend_from_slice(&(id as u32).to_le_bytes());
            } else {
                return Err(Error::invalid(
                    "source",
                    format!("record {} has page id {id} but only {} ids were assigned (ids must be in first-touch order)", self.header.records, self.assigned),
                ));
            }
            if tag & TAG_REPEAT != 0 {
                self.buf.extend_from_slice(&repeat.to_le_bytes());
            }
            if gap != 0 {
                self.buf.extend_from_slice(&gap.to_le_bytes());
            }
            self.header.records += 1;
            self.header.references += repeat as u64;
            if self.buf.len() >= CHUNK {
                self.sink.write_all(&self.buf).map_err(|e| Error::io(&self.path, e))?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, meta: &SourceMeta) -> Result<u64> {
        let mut me = *self;
        let path = me.path.clone();
        let io = |e| Error::io(&path, e);
        me.sink.write_all(&me.buf).map_err(io)?;
        let (body, block_crcs) = me.sink.finish_inner().map_err(io)?.finish();
        let mut file = body.into_inner().map_err(|e| io(e.into_error()))?;
        let mut h = me.header;
        h.distinct_pages = me.assigned;
        h.trailer_offset = file.stream_position().map_err(io)?;
        // process table: pids in order of first appearance, then any others the source names
        let mut procs: Vec<(u32, String)> = me
            .order
            .iter()
            .map(|&pid| (pid, meta.processes.iter().find(|(p, _)| *p == pid).map(|(_, n)| n.clone()).unwrap_or_default()))
            .collect();
        for (pid, name) in &meta.processes {
            if !procs.iter().any(|(p, _)| p == pid) {
                procs.push((*pid, name.clone()));
            }
        }
        let mut t = Vec::new();
        t.extend_from_slice(&(procs.len() as u32).to_le_bytes());
        for (pid, name) in &procs {
            let mut end = name.len().min(u16::MAX as usize);
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            t.extend_from_slice(&pid.to_le_bytes());
            t.extend_from_slice(&(end as u16).to_le_bytes());
            t.extend_from_slice(&name.as_bytes()[..end]);
        }
        // version 2: the body's block checksums, then the CRC-32 of header and trailer
        debug_assert_eq!(block_crcs.len() as u64, blocks_of(h.trailer_offset - HEADER_LEN as u64));
        let blocks = u32::try_from(block_crcs.len())
            .map_err(|_| Error::invalid("output", format!("{}: a body of more than 2^32 blocks of {BLOCK} bytes", path.display())))?;
        t.extend_from_slice(&blocks.to_le_bytes());
        for crc in &block_crcs {
            t.extend_from_slice(&crc.to_le_bytes());
        }
        let hb = header_bytes(&h);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&hb);
        hasher.update(&t);
        t.extend_from_slice(&hasher.finalize().to_le_bytes());
        file.write_all(&t).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&hb).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(h.records)
    }
}
