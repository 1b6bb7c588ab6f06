//! The records as they cross a pipe from the process that generates the stream
//! (`pagelab-runner --emit`, outside the run's memory cgroup) to the one that performs it
//! (`--touch`, inside): so that the cgroup holds the stream's pages and the performer's
//! few kilobytes, not the generator's batches (a workload's generator keeps megabytes
//! of them in flight, a trace reader its decoding buffers). A record is 13 bytes,
//! little-endian: dense page id (u32), kind (u8: 0 read, 1 write, 2 instruction,
//! 3 free), repeat (u32), instruction gap (u32).

use std::io::{self, Read, Write};

use pagelab_core::trace::{AccessKind, RefBatch, Reference};

pub const RECORD_BYTES: usize = 13;
/// Records the performer reads at a time: its whole buffer is 53 KB.
pub const WIRE_RECORDS: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("reading the records: {0}")]
    Io(#[from] io::Error),
    #[error("record {record}: kind code {code}, expected 0 to 3")]
    Kind { record: u64, code: u8 },
    #[error("the record stream ended inside record {record} ({bytes} of {RECORD_BYTES} bytes)")]
    Truncated { record: u64, bytes: usize },
}

/// Writes every record of `b`.
pub fn write_batch(w: &mut impl Write, b: &RefBatch) -> io::Result<()> {
    let mut rec = [0u8; RECORD_BYTES];
    for i in 0..b.len() {
        rec[0..4].copy_from_slice(&b.id[i].to_le_bytes());
        rec[4] = b.kind[i] as u8;
        rec[5..9].copy_from_slice(&b.repeat[i].to_le_bytes());
        rec[9..13].copy_from_slice(&b.gap[i].to_le_bytes());
        w.write_all(&rec)?;
    }
    Ok(())
}

/// Reads records in batches of at most [`WIRE_RECORDS`].
pub struct WireReader<R: Read> {
    input: R,
    buf: Vec<u8>,
    /// Bytes of `buf` holding data not yet decoded, from its start.
    filled: usize,
    records: u64,
}

impl<R: Read> WireReader<R> {
    pub fn new(input: R) -> WireReader<R> {
        WireReader { input, buf: vec![0; RECORD_BYTES * WIRE_RECORDS], filled: 0, records: 0 }
    }

    /// Clears `b` and fills it with the next records (at least one, unless the stream
    /// has ended: then 0).
    pub fn next_batch(&mut self, b: &mut RefBatch) -> Result<usize, WireError> {
        b.clear();
        // read until at least one whole record is here, or the end
        while self.filled < RECORD_BYTES {
            let n = read_some(&mut self.input, &mut self.buf[self.filled..])?;
            if n == 0 {
                if self.filled > 0 {
                    return Err(WireError::Truncated { record: self.records, bytes: self.filled });
                }
                return Ok(0);
            }
            self.filled += n;
        }
        let whole = self.filled / RECORD_BYTES;
        for k in 0..whole {
            let rec = &self.buf[k * RECORD_BYTES..(k + 1) * RECORD_BYTES];
            let word = |at: usize| u32::from_le_bytes(rec[at..at + 4].try_into().expect("4 bytes"));
            let kind = AccessKind::from_code(rec[4]).ok_or(WireError::Kind { record: self.records, code: rec[4] })?;
            let id = word(0);
            b.push(id, &Reference { pid: 0, page: id as u64, kind, repeat: word(5), gap: word(9) });
            self.records += 1;
        }
        let used = whole * RECORD_BYTES;
        self.buf.copy_within(used..self.filled, 0);
        self.filled -= used;
        Ok(whole)
    }
}

fn read_some(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(records: &[(u32, AccessKind, u32, u32)]) -> RefBatch {
        let mut b = RefBatch::with_capacity(records.len());
        for &(id, kind, repeat, gap) in records {
            b.push(id, &Reference { pid: 0, page: id as u64, kind, repeat, gap });
        }
        b
    }

    #[test]
    fn records_cross_the_wire_unchanged_in_any_chunking() {
        let recs: Vec<(u32, AccessKind, u32, u32)> = (0..10_000u32)
            .map(|i| (i % 777, AccessKind::from_code((i % 4) as u8).unwrap(), 1 + i % 5, i.wrapping_mul(31)))
            .collect();
        let mut bytes = Vec::new();
        write_batch(&mut bytes, &batch(&recs)).unwrap();
        assert_eq!(bytes.len(), recs.len() * RECORD_BYTES);
        // a reader that hands out odd-sized pieces
        struct Dribble<'a>(&'a [u8], usize);
        impl Read for Dribble<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = out.len().min(self.1).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                self.1 = self.1 % 29 + 7;
                Ok(n)
            }
        }
        let mut r = WireReader::new(Dribble(&bytes, 5));
        let mut b = RefBatch::with_capacity(WIRE_RECORDS);
        let mut got = Vec::new();
        while r.next_batch(&mut b).unwrap() > 0 {
            assert!(b.len() <= WIRE_RECORDS);
            for i in 0..b.len() {
                got.push((b.id[i], b.kind[i], b.repeat[i], b.gap[i]));
            }
        }
        assert_eq!(got, recs);
    }

    #[test]
    fn a_cut_record_or_a_bad_kind_is_an_error() {
        let mut bytes = Vec::new();
        write_batch(&mut bytes, &batch(&[(1, AccessKind::Read, 1, 0), (2, AccessKind::Write, 1, 0)])).unwrap();
        let cut = &bytes[..RECORD_BYTES + 5];
        let mut r = WireReader::new(cut);
        let mut b = RefBatch::with_capacity(WIRE_RECORDS);
        assert_eq!(r.next_batch(&mut b).unwrap(), 1);
        let e = r.next_batch(&mut b).unwrap_err().to_string();
        assert!(e.contains("ended inside record 1 (5 of 13 bytes)"), "{e}");
        let mut bad = bytes.clone();
        bad[RECORD_BYTES + 4] = 9;
        let e = WireReader::new(&bad[..]).next_batch(&mut b).unwrap_err().to_string();
        assert!(e.contains("record 1: kind code 9"), "{e}");
    }
}
