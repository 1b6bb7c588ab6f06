//! A part of a source: its records `first..end` (record indices, 0-based) as a source of
//! their own, ids assigned again in first-touch order from 0. `pagelab suite build` cuts
//! the hpcc capture into its benchmark sections with it (python/pagelab/suite.py).
use super::densify::Densifier;
use super::{RefBatch, RefSource, SourceMeta, BATCH_RECORDS};
use crate::{Error, Result};

pub struct RecordRange {
    inner: Box<dyn RefSource>,
    meta: SourceMeta,
    /// Records of the inner source read so far.
    pos: u64,
    first: u64,
    end: u64,
    buf: RefBatch,
    densifier: Densifier,
}

impl RecordRange {
    /// Records `first..end` of `inner`; `first < end` is required.
    pub fn new(inner: Box<dyn RefSource>, first: u64, end: u64) -> Result<Self> {
        if first >= end {
            return Err(Error::invalid("records", format!("expected a record range first < end, got {first}..{end}")));
        }
        let mut meta = inner.meta().clone();
        meta.records = None;
        meta.name = format!("{} (records {first}..{end})", meta.name);
        Ok(RecordRange { inner, meta, pos: 0, first, end, buf: RefBatch::with_capacity(BATCH_RECORDS), densifier: Densifier::new() })
    }
}

impl RefSource for RecordRange {
    fn meta(&self) -> &SourceMeta {
        &self.meta
    }

    fn next_batch(&mut self, batch: &mut RefBatch) -> Result<usize> {
        batch.clear();
        while batch.is_empty() && self.pos < self.end {
            let n = self.inner.next_batch(&mut self.buf)? as u64;
            if n == 0 {
                break;
            }
            let start = self.pos;
            self.pos += n;
            let lo = self.first.saturating_sub(start).min(n) as usize;
            let hi = (self.end - start).min(n) as usize;
            for i in lo..hi {
                let r = self.buf.get(i);
                let id = self.densifier.id(r.pid, r.page);
                batch.push(id, &r);
            }
        }
        Ok(batch.len())
    }

    fn distinct_pages(&self) -> u32 {
        self.densifier.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{AccessKind, Reference, VecSource};

    fn refs(pages: &[u64]) -> Vec<Reference> {
        pages.iter().map(|&page| Reference { pid: 0, page, kind: AccessKind::Read, repeat: 1, gap: 0 }).collect()
    }

    #[test]
    fn a_range_keeps_its_records_and_assigns_ids_again() {
        let src = VecSource::new("t", 4096, refs(&[5, 6, 7, 6, 8, 5]));
        let mut r = RecordRange::new(Box::new(src), 2, 5).unwrap();
        let mut b = RefBatch::with_capacity(8);
        assert_eq!(r.next_batch(&mut b).unwrap(), 3);
        assert_eq!(b.page, vec![7, 6, 8]);
        assert_eq!(b.id, vec![0, 1, 2]);
        assert_eq!(r.next_batch(&mut b).unwrap(), 0);
        assert_eq!(r.distinct_pages(), 3);
    }

    #[test]
    fn an_empty_range_is_an_error() {
        let src = VecSource::new("t", 4096, refs(&[1]));
        assert!(RecordRange::new(Box::new(src), 3, 3).is_err());
    }
}
