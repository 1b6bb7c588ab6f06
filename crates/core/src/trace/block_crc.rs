//! Checksums of the pagelab binary format, version 2 (docs/trace-format.md): a CRC-32
//! (IEEE 802.3, as zlib's `crc32`) of every 64 KiB block of the body as stored in the
//! file, kept in the trailer, so that a flipped byte of a raw body is found; the zstd
//! variant had its frame checksum already, and gets the block table too.
//!
//! Writing, [`BlockCrcWriter`] computes the table while the body streams out. Reading a
//! plain file, the table is read first (the trailer is at a known offset) and
//! [`BlockCheck`] verifies each block before any of its bytes reaches the parser, so a
//! corrupt block is reported as such, at the block's file offset, and never as whatever
//! record its damage happens to resemble. Reading a whole-file zstd stream (which has
//! the trailer last), [`BlockCheck`] records the blocks' CRCs and the reader compares
//! them with the table when it gets there.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};

/// Bytes per checksummed block of the body (the last block may be shorter).
pub(crate) const BLOCK: usize = 1 << 16;

/// Number of blocks of a body of `len` bytes.
pub(crate) fn blocks_of(len: u64) -> u64 {
    len.div_ceil(BLOCK as u64)
}

/// An io::Error payload: a body block whose CRC-32 does not match the trailer's table.
/// The trace readers turn it into a format error at `offset`.
#[derive(Debug)]
pub(crate) struct ChecksumMismatch {
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for ChecksumMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ChecksumMismatch {}

/// The message of a block whose CRC-32 is not the stored one.
pub(crate) fn mismatch(block: u64, start: u64, len: u64, stored: u32, computed: u32) -> ChecksumMismatch {
    ChecksumMismatch {
        offset: start,
        message: format!(
            "expected body block {block} (bytes {start}..{}) to match its CRC-32 {stored:#010x} from the trailer, computed {computed:#010x}: the file is corrupt",
            start + len
        ),
    }
}

/// A writer that passes bytes through and computes the CRC-32 of every [`BLOCK`] bytes.
pub(crate) struct BlockCrcWriter<W: Write> {
    inner: W,
    hasher: crc32fast::Hasher,
    in_block: usize,
    crcs: Vec<u32>,
}

impl<W: Write> BlockCrcWriter<W> {
    pub fn new(inner: W) -> Self {
        BlockCrcWriter { inner, hasher: crc32fast::Hasher::new(), in_block: 0, crcs: Vec::new() }
    }

    /// The writer underneath and the CRC-32 of each block written (the last one partial).
    pub fn finish(mut self) -> (W, Vec<u32>) {
        if self.in_block > 0 {
            self.crcs.push(std::mem::take(&mut self.hasher).finalize());
        }
        (self.inner, self.crcs)
    }
}

impl<W: Write> Write for BlockCrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let take = rest.len().min(BLOCK - self.in_block);
            self.hasher.update(&rest[..take]);
            self.in_block += take;
            rest = &rest[take..];
            if self.in_block == BLOCK {
                self.crcs.push(std::mem::take(&mut self.hasher).finalize());
                self.in_block = 0;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader of a body of `len` bytes starting at file offset `base`: with the expected
/// table, each block is read whole and verified before it is served; without it, the
/// blocks' CRCs are recorded (shared, for the trailer check at the end) as bytes pass.
/// Bytes after the body (a trailer in the same stream) pass through unchecked.
pub(crate) struct BlockCheck<R: Read> {
    inner: R,
    expected: Option<Vec<u32>>,
    recorded: Arc<Mutex<Vec<u32>>>,
    base: u64,
    len: u64,
    /// Body bytes read from `inner` so far.
    done: u64,
    buf: Vec<u8>,
    pos: usize,
    hasher: crc32fast::Hasher,
}

impl<R: Read> BlockCheck<R> {
    /// Verifies every block against `expected` (which must hold `blocks_of(len)` values).
    pub fn verifying(inner: R, base: u64, len: u64, expected: Vec<u32>) -> Self {
        BlockCheck { inner, expected: Some(expected), recorded: Default::default(), base, len, done: 0, buf: Vec::new(), pos: 0, hasher: Default::default() }
    }

    /// Records the blocks' CRCs into the returned vector as the body streams by.
    pub fn recording(inner: R, base: u64, len: u64) -> (Self, Arc<Mutex<Vec<u32>>>) {
        let recorded: Arc<Mutex<Vec<u32>>> = Default::default();
        let me = BlockCheck { inner, expected: None, recorded: recorded.clone(), base, len, done: 0, buf: Vec::new(), pos: 0, hasher: Default::default() };
        (me, recorded)
    }

    /// Reads and verifies the next block into `buf`; false at the end of the body.
    fn next_block(&mut self) -> io::Result<bool> {
        let want = (self.len - self.done).min(BLOCK as u64) as usize;
        if want == 0 {
            return Ok(false);
        }
        self.buf.resize(want, 0);
        let mut got = 0;
        while got < want {
            match self.inner.read(&mut self.buf[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.buf.truncate(got);
        self.pos = 0;
        let block = self.done / BLOCK as u64;
        let start = self.base + self.done;
        self.done += got as u64;
        if got < want {
            // the file ended inside its body: the parser reports where
            self.len = self.done;
            return Ok(got > 0);
        }
        let computed = crc32fast::hash(&self.buf);
        let stored = self.expected.as_ref().and_then(|t| t.get(block as usize)).copied().unwrap_or(!computed);
        if stored != computed {
            return Err(io::Error::new(io::ErrorKind::InvalidData, mismatch(block, start, got as u64, stored, computed)));
        }
        Ok(true)
    }

    /// Hashes the body bytes among `data` (the first ones, while the body lasts).
    fn record(&mut self, data: &[u8]) {
        let mut rest = &data[..(self.len - self.done).min(data.len() as u64) as usize];
        while !rest.is_empty() {
            let in_block = (self.done % BLOCK as u64) as usize;
            let take = rest.len().min(BLOCK - in_block);
            self.hasher.update(&rest[..take]);
            self.done += take as u64;
            rest = &rest[take..];
            if self.done % BLOCK as u64 == 0 || self.done == self.len {
                let crc = std::mem::take(&mut self.hasher).finalize();
                if let Ok(mut v) = self.recorded.lock() {
                    v.push(crc);
                }
            }
        }
    }
}

impl<R: Read> Read for BlockCheck<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.expected.is_none() {
            let n = self.inner.read(out)?;
            self.record(&out[..n]);
            return Ok(n);
        }
        // verifying: serve verified blocks only, as many as fit
        let mut n = 0;
        while n < out.len() {
            if self.pos == self.buf.len() && !self.next_block()? {
                break;
            }
            let k = (self.buf.len() - self.pos).min(out.len() - n);
            out[n..n + k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
            self.pos += k;
            n += k;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn written_blocks_verify_and_a_flipped_byte_is_found_in_its_block() {
        let data = body(3 * BLOCK + 100);
        let mut w = BlockCrcWriter::new(Vec::new());
        for piece in data.chunks(7000) {
            w.write_all(piece).unwrap();
        }
        let (out, crcs) = w.finish();
        assert_eq!(out, data);
        assert_eq!(crcs.len() as u64, blocks_of(data.len() as u64));
        assert_eq!(crcs[3], crc32fast::hash(&data[3 * BLOCK..]));
        let mut back = Vec::new();
        BlockCheck::verifying(&data[..], 56, data.len() as u64, crcs.clone()).read_to_end(&mut back).unwrap();
        assert_eq!(back, data);
        let mut bad = data.clone();
        bad[2 * BLOCK + 5] ^= 1;
        let e = BlockCheck::verifying(&bad[..], 56, bad.len() as u64, crcs.clone()).read_to_end(&mut Vec::new()).unwrap_err();
        let m = e.get_ref().and_then(|x| x.downcast_ref::<ChecksumMismatch>()).unwrap();
        assert_eq!(m.offset, 56 + 2 * BLOCK as u64);
        assert!(m.message.starts_with("expected body block 2 (bytes 131128..196664) to match its CRC-32"), "{}", m.message);
        // recording mode: the same table, bytes after the body pass
        let mut with_trailer = data.clone();
        with_trailer.extend_from_slice(b"trailer");
        let (mut r, rec) = BlockCheck::recording(&with_trailer[..], 56, data.len() as u64);
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap();
        assert_eq!(back, with_trailer);
        assert_eq!(*rec.lock().unwrap(), crcs);
    }
}
